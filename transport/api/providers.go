package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation/credential"
)

// ProviderView is a provider route's configured state in the caller's
// environment. It never carries a secret.
type ProviderView struct {
	// ID is the provider route's id.
	ID string `json:"id" example:"MUSIC_PROVIDER_B" enum:"MUSIC_PROVIDER_A,MUSIC_PROVIDER_B"`
	// Object is always "provider".
	Object string `json:"object" example:"provider"`
	// Environment is the environment (test or live) the state is for.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Status is only what was observed: not_configured without an adapter
	// in this environment; configured when no call has reached the
	// provider yet; otherwise the newest call's outcome, available (the
	// provider answered) or unreachable (no answer: a transport failure, a
	// timeout, a 5xx), as of observedAt.
	Status string `json:"status" example:"available" enum:"not_configured,configured,available,unreachable"`
	// ObservedAt is when the recorded call to the provider in this
	// environment (a dispatch or poll of any workspace's operation) ended;
	// null when none has. A change of outcome is recorded at once, an
	// unchanged one at most once a second per host.
	ObservedAt *time.Time `json:"observedAt"`
	// PlatformManagedConfigured reports a platform-managed credential.
	PlatformManagedConfigured bool `json:"platformManagedConfigured" example:"false"`
	// BillingModes are the billing modes usable now.
	BillingModes []string `json:"billingModes" example:"BYOK"`
	// SupportedBillingModes are every billing mode of the platform.
	SupportedBillingModes []string `json:"supportedBillingModes" example:"PLATFORM_MANAGED"`
	// CredentialOwnership are the ownership values usable now.
	CredentialOwnership []string `json:"credentialOwnership" example:"CUSTOMER_BYOK"`
}

// ProviderList lists both provider routes.
type ProviderList struct {
	// Items are both provider routes, in id order.
	Items []ProviderView `json:"items"`
}

// ProviderBalanceSnapshot is a provider account's own credit balance as
// observed through a credential. It is never a platform credit balance.
type ProviderBalanceSnapshot struct {
	// ID is the snapshot's id.
	ID string `json:"id" example:"pbal_01jd0000000000000000000000"`
	// Object is always "provider_balance_snapshot".
	Object string `json:"object" example:"provider_balance_snapshot"`
	// CredentialID is the credential the balance was read with.
	CredentialID string `json:"credentialId" example:"pcred_01jd0000000000000000000000"`
	// Provider is the provider route.
	Provider string `json:"provider" example:"MUSIC_PROVIDER_B"`
	// Unit says whose credits these are: always provider_credits.
	Unit string `json:"unit" example:"provider_credits" enum:"provider_credits"`
	// Credits and ExtraCredits are the provider's balance, integer strings.
	Credits string `json:"credits" example:"1000"`
	// ExtraCredits is the provider account's extra credits, as the provider reports
	// them apart from credits, an integer string.
	ExtraCredits string `json:"extraCredits" example:"0"`
	// ObservedAt is when the platform read the balance from the provider.
	ObservedAt time.Time `json:"observedAt"`
}

// CredentialHealth is the outcome of a credential's last check.
type CredentialHealth struct {
	// Status is valid when the provider accepted the key at checkedAt, invalid when it rejected it.
	Status string `json:"status" example:"valid" enum:"valid,invalid"`
	// CheckedAt is when the key was last checked against the provider.
	CheckedAt time.Time `json:"checkedAt"`
}

// ProviderCredentialView is a customer provider key, redacted: a
// fingerprint and a display suffix, never the key.
type ProviderCredentialView struct {
	// ID is the credential's id.
	ID string `json:"id" example:"pcred_01jd0000000000000000000000"`
	// Object is always "provider_credential".
	Object string `json:"object" example:"provider_credential"`
	// Provider is the provider route the key authenticates with.
	Provider string `json:"provider" example:"MUSIC_PROVIDER_B" enum:"MUSIC_PROVIDER_A,MUSIC_PROVIDER_B"`
	// Environment is the environment (test or live) the key is used in.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Ownership is always CUSTOMER_BYOK for a stored key.
	Ownership string `json:"ownership" example:"CUSTOMER_BYOK" enum:"PLATFORM_MANAGED,CUSTOMER_BYOK"`
	// Label is the customer's name for the key.
	Label string `json:"label" example:"Studio account"`
	// Fingerprint is a non-secret prefix of the key's keyed digest.
	Fingerprint string `json:"fingerprint" example:"3f9a0c1d2b4e"`
	// DisplaySuffix is the key's last four characters.
	DisplaySuffix string `json:"displaySuffix" example:"wxyz"`
	// HasCallbackKey is true when a callback-signing key was stored with the key (sealed, never
	// shown).
	HasCallbackKey bool `json:"hasCallbackKey" example:"false"`
	// Health is the outcome of the key's last check.
	Health CredentialHealth `json:"health"`
	// LatestBalance is the newest balance snapshot, null before any.
	LatestBalance *ProviderBalanceSnapshot `json:"latestBalance"`
	// CreatedBy is who submitted the key.
	CreatedBy KeyCreator `json:"createdBy"`
	// CreatedAt is when the key was submitted.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the credential last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// DeletedAt is set only in the answer of the delete.
	DeletedAt *time.Time `json:"deletedAt"`
}

// ProviderCredentialPage is one page of credentials, newest first.
type ProviderCredentialPage struct {
	// Items are the page's credentials, newest first.
	Items []ProviderCredentialView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnBjcmVkXzAx"`
}

func providerView(p credential.Provider) ProviderView {
	v := ProviderView{ID: string(p.ID), Object: "provider", Environment: string(p.Environment), Status: "not_configured",
		PlatformManagedConfigured: p.PlatformManaged, BillingModes: []string{}, CredentialOwnership: []string{}}
	if p.Configured {
		v.Status = "configured"
	}
	if o := p.Observed; o != nil {
		at := o.ObservedAt
		v.Status, v.ObservedAt = string(o.Reach), &at
	}
	for _, m := range p.Modes {
		v.BillingModes = append(v.BillingModes, string(m))
	}
	for _, m := range credential.BillingModes() {
		v.SupportedBillingModes = append(v.SupportedBillingModes, string(m))
	}
	for _, o := range p.Ownerships {
		v.CredentialOwnership = append(v.CredentialOwnership, string(o))
	}
	return v
}

func balanceView(s credential.Snapshot) ProviderBalanceSnapshot {
	return ProviderBalanceSnapshot{ID: s.ID, Object: "provider_balance_snapshot", CredentialID: s.CredentialID,
		Provider: string(s.Provider), Unit: "provider_credits", Credits: strconv.FormatInt(s.Credits, 10),
		ExtraCredits: strconv.FormatInt(s.ExtraCredits, 10), ObservedAt: s.ObservedAt}
}

func credentialView(c credential.Credential) ProviderCredentialView {
	v := ProviderCredentialView{ID: c.ID, Object: "provider_credential", Provider: string(c.Provider),
		Environment: string(c.Scope.Environment), Ownership: string(c.Ownership), Label: c.Label, Fingerprint: c.Fingerprint,
		DisplaySuffix: c.Last4, HasCallbackKey: c.HasCallbackKey(),
		Health:    CredentialHealth{Status: string(c.Health), CheckedAt: c.CheckedAt},
		CreatedBy: KeyCreator{UserID: c.CreatedByUserID, KeyID: c.CreatedByKeyID}, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		DeletedAt: c.DeletedAt}
	if c.Balance != nil {
		b := balanceView(*c.Balance)
		v.LatestBalance = &b
	}
	return v
}

func exampleBalance() ProviderBalanceSnapshot {
	return ProviderBalanceSnapshot{ID: "pbal_01jd0000000000000000000000", Object: "provider_balance_snapshot",
		CredentialID: "pcred_01jd0000000000000000000000", Provider: "MUSIC_PROVIDER_B", Unit: "provider_credits",
		Credits: "1000", ExtraCredits: "0", ObservedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func exampleCredential() ProviderCredentialView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := exampleBalance()
	return ProviderCredentialView{ID: "pcred_01jd0000000000000000000000", Object: "provider_credential",
		Provider: "MUSIC_PROVIDER_B", Environment: "test", Ownership: "CUSTOMER_BYOK", Label: "Studio account",
		Fingerprint: "3f9a0c1d2b4e", DisplaySuffix: "wxyz", Health: CredentialHealth{Status: "valid", CheckedAt: t},
		LatestBalance: &b, CreatedBy: KeyCreator{UserID: "usr_01jd0000000000000000000000"}, CreatedAt: t, UpdatedAt: t}
}

// providerRoutes are the seven provider connection routes (spec, Provider
// connections). Every one needs the DEVELOPER role; reads need
// developer.provider.read (scope providers:read), mutations
// developer.provider.manage (scope providers:write) and, from a session, a
// recent sign-in (Policy.Fresh FreshSession). Routes that ask a provider (create, validate,
// balance) do so outside any transaction and then commit their own unit of
// work (OwnUnitOfWork), so a rejected key or an unreachable provider stores
// nothing.
func providerRoutes(svc *credential.Service) []Route {
	if svc == nil {
		return nil
	}
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Roles, r.Private = transport.TagDeveloper, transport.AuthSessionOrKey, []access.Role{access.RoleDeveloper}, true
		r.Permission, r.Scope, r.Idempotency = access.DeveloperProviderRead, access.ScopeProvidersRead, transport.IdempotencyNone
		return r
	}
	write := func(r Route) Route {
		r = read(r)
		r.Permission, r.Scope = access.DeveloperProviderManage, access.ScopeProvidersWrite
		r.Idempotency = transport.IdempotencyOptional
		r.Policy.Fresh = transport.FreshSession
		return r
	}
	providerErrors := []string{string(fault.NotFound), string(fault.ProviderCredentialInvalid), string(fault.ProviderUnavailable),
		string(fault.ProviderTimeout), string(fault.RateLimited), string(fault.ProviderCreditsExhausted)}
	const freshNote = " From a signed-in session it needs a sign-in within the fresh-authentication window (10 minutes unless configured), else 401 REAUTHENTICATION_REQUIRED; API keys are not subject to it."
	return []Route{
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/providers", OperationID: "listProviders",
			Summary: "List music providers",
			Description: "Both provider routes (MUSIC_PROVIDER_A, MUSIC_PROVIDER_B) in the caller's environment: whether the provider is configured " +
				"(not_configured, or configured until a call reaches it) and, once the platform has called it in this environment, whether it " +
				"answered (available) or not (unreachable) as of observedAt; whether a platform-managed credential is configured, the billing " +
				"modes and credential ownership values usable now, and every supported billing mode. Never a secret.",
			Response: ProviderList{Items: []ProviderView{providerView(credential.Provider{ID: "MUSIC_PROVIDER_B", Environment: access.Test,
				Configured: true, Modes: []credential.BillingMode{credential.ModeBYOK}, Ownerships: []credential.Ownership{credential.CustomerBYOK}})}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ps, err := svc.Catalog(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				out := ProviderList{Items: make([]ProviderView, len(ps))}
				for i, p := range ps {
					out.Items[i] = providerView(p)
				}
				return out, nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/providers/credentials", OperationID: "listProviderCredentials",
			Summary:     "List provider credentials",
			Description: "Customer provider keys of the caller's workspace and environment, newest first, with cursor pagination; redacted to a fingerprint and display suffix.",
			Query:       pageQuery("Y3Vyc29yOnBjcmVkXzAx"), Response: ProviderCredentialPage{Items: []ProviderCredentialView{exampleCredential()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, credential.IDPrefix)
				if err != nil {
					return nil, err
				}
				cs, more, err := svc.List(ctx, c.Tx, c.Principal, before, limit)
				if err != nil {
					return nil, err
				}
				page := ProviderCredentialPage{Items: make([]ProviderCredentialView, len(cs)), HasMore: more}
				for i, cr := range cs {
					page.Items[i] = credentialView(cr)
				}
				if more {
					page.NextCursor = transport.EncodeCursor(cs[len(cs)-1].ID)
				}
				return page, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/providers/credentials", OperationID: "createProviderCredential",
			Status: http.StatusCreated, OwnUnitOfWork: true, Errors: providerErrors,
			Summary: "Submit a provider key (BYOK)",
			Description: "Validates the key by querying the provider's credit balance with it, in the caller's environment, then stores it sealed " +
				"(AES-256-GCM) with an optional callback-signing key sealed separately, and the observed balance as the first snapshot. The answer " +
				"shows only a fingerprint and display suffix, never the key. A key the provider rejects is 422 PROVIDER_CREDENTIAL_INVALID; an " +
				"unreachable or unconfigured provider is 503 PROVIDER_UNAVAILABLE; in both cases nothing is stored." + freshNote,
			Request:  credential.CreateInput{Provider: "MUSIC_PROVIDER_B", APIKey: "REPLACE_WITH_YOUR_PROVIDER_KEY", Label: "Studio account"},
			Response: exampleCredential(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in credential.CreateInput
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				ck, err := svc.Check(ctx, c.Principal, in)
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					cr, err := svc.Insert(ctx, tx, c.Principal, ck)
					if err != nil {
						return nil, err
					}
					return credentialView(cr), nil
				})
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/providers/credentials/{credentialId}", OperationID: "getProviderCredential",
			Summary: "Get a provider credential", Description: "A credential of the caller's workspace and environment, redacted; any other is 404.",
			Response: exampleCredential(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				cr, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("credentialId"))
				if err != nil {
					return nil, err
				}
				return credentialView(cr), nil
			}}),
		write(Route{Method: http.MethodDelete, Pattern: "/api/v1/providers/credentials/{credentialId}", OperationID: "deleteProviderCredential",
			Summary: "Delete a provider credential", Errors: []string{string(fault.NotFound)},
			Description: "The credential is never used again and is gone from reads on the next request (404)." + freshNote,
			Response:    exampleCredential(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				cr, err := svc.Delete(ctx, c.Tx, c.Principal, c.PathValue("credentialId"))
				if err != nil {
					return nil, err
				}
				return credentialView(cr), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/providers/credentials/{credentialId}/validate", OperationID: "validateProviderCredential",
			OwnUnitOfWork: true, Errors: providerErrors,
			Summary: "Validate a provider credential",
			Description: "Checks the stored key against its provider again and records the health (valid or invalid) with checkedAt. A key the " +
				"provider now rejects is answered with health invalid (200). An unreachable provider is 503 PROVIDER_UNAVAILABLE and changes " +
				"nothing." + freshNote,
			Response: exampleCredential(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				rc, err := svc.Recheck(ctx, c.Tx, c.Principal, c.PathValue("credentialId"))
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					cr, err := svc.RecordHealth(ctx, tx, rc)
					if err != nil {
						return nil, err
					}
					return credentialView(cr), nil
				})
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/providers/credentials/{credentialId}/balance", OperationID: "getProviderCredentialBalance",
			OwnUnitOfWork: true, Errors: providerErrors,
			Summary: "Read a provider account's balance",
			Description: "Queries the provider's credit balance with the stored key and persists it as a ProviderBalanceSnapshot: the provider " +
				"account's own credits, never platform credits. An unreachable provider is 503 PROVIDER_UNAVAILABLE, never a zero balance; a key " +
				"the provider rejects is 422 PROVIDER_CREDENTIAL_INVALID (validate records that health)." + freshNote,
			Response: exampleBalance(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				rc, err := svc.Recheck(ctx, c.Tx, c.Principal, c.PathValue("credentialId"))
				if err != nil {
					return nil, err
				}
				if rc.Health != credential.Valid {
					return nil, fault.E("transport.providerBalance", fault.ProviderCredentialInvalid, "The provider rejected the stored key; validate it to record its health.")
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					snap, err := svc.RecordBalance(ctx, tx, rc)
					if err != nil {
						return nil, err
					}
					return balanceView(snap), nil
				})
			}}),
	}
}
