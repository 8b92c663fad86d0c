package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

// KeyView is an API key as the API shows it: never the plaintext.
type KeyView struct {
	// ID is the key's id.
	ID string `json:"id" example:"key_01jd0000000000000000000000"`
	// Object is always "api_key".
	Object string `json:"object" example:"api_key"`
	// Name labels the key (1 to 100 characters).
	Name string `json:"name" example:"CI pipeline"`
	// Environment is the key's environment: test keys see only test objects, live keys only live
	// ones.
	Environment string `json:"environment" example:"test"`
	// Prefix is the key's first characters (platform_test_ or platform_live_ and a few more), to
	// recognize it.
	Prefix string `json:"prefix" example:"platform_test_abcd"`
	// Last4 is the key's last four characters, to recognize it.
	Last4 string `json:"last4" example:"wxyz"`
	// Scopes are the scopes the key holds; each stands for permissions (see API key scopes in the
	// document's description).
	Scopes []string `json:"scopes" example:"keys:read"`
	// Metadata is up to 20 string pairs for the caller's own use.
	Metadata map[string]string `json:"metadata"`
	// Status is active, revoked or deleted.
	Status string `json:"status" example:"active"`
	// Limits are the key's request limits.
	Limits apikey.Limits `json:"limits"`
	// CreatedBy is who created the key.
	CreatedBy KeyCreator `json:"createdBy"`
	// CreatedAt is when the key was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the key last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// LastUsedAt is when the key last authenticated a request, as of the last flush of
	// usage counts (every second by default); null when never used.
	LastUsedAt *time.Time `json:"lastUsedAt"`
	// RevokedAt is when the key was revoked; null while active.
	RevokedAt *time.Time `json:"revokedAt"`
}

// KeyCreator names who made a key.
type KeyCreator struct {
	// UserID is the user who created the key, or on whose behalf a key did.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// KeyID is the key that made it, when a key did ("" for a session).
	KeyID string `json:"keyId" example:""`
}

// KeySecret is a key with its plaintext, answered once by create and rotate.
type KeySecret struct {
	// Key is the key.
	Key KeyView `json:"key"`
	// Secret is the plaintext key. It is shown only in this response (and
	// its idempotent replay, to the same principal) and never again.
	Secret string `json:"secret" example:"platform_test_REPLACE_WITH_YOUR_KEY"`
}

// KeyPage is one page of keys, newest first.
type KeyPage struct {
	// Items are the page's keys, newest first.
	Items []KeyView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmtleV8wMWpk"`
}

func keyView(k apikey.Key) KeyView {
	md := k.Metadata
	if md == nil {
		md = map[string]string{}
	}
	return KeyView{
		ID: k.ID, Object: "api_key", Name: k.Name, Environment: string(k.Environment), Prefix: k.Prefix, Last4: k.Last4,
		Scopes: k.Scopes, Metadata: md, Status: string(k.Status), Limits: k.Limits,
		CreatedBy: KeyCreator{UserID: k.CreatedByUserID, KeyID: k.CreatedByKeyID},
		CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt,
	}
}

func exampleKey() KeyView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return KeyView{
		ID: "key_01jd0000000000000000000000", Object: "api_key", Name: "CI pipeline", Environment: "test",
		Prefix: "platform_test_abcd", Last4: "wxyz", Scopes: []string{access.ScopeKeysRead}, Metadata: map[string]string{"team": "audio"},
		Status: "active", Limits: apikey.Limits{RequestsPerMinute: 600, MaxConcurrentRequests: 16, MonthlyRequestBudget: 1000000},
		CreatedBy: KeyCreator{UserID: "usr_01jd0000000000000000000000"}, CreatedAt: t, UpdatedAt: t,
	}
}

// caller returns the call's principal as a key manager (apikey.CallerOf).
func caller(c *Call) apikey.Caller { return apikey.CallerOf(c.Principal, c.Authority) }

// keyEnvironment is the environment a key creation names in its body, for
// the fresh sign-in rule (a test-mode session creating a live key acts in
// live); "" when it names none or the body is unreadable.
func keyEnvironment(c *Call) access.Environment {
	var in struct {
		Environment access.Environment `json:"environment"`
	}
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return ""
	}
	return in.Environment
}

// keyWorkflow checks that ev is a move of the key's state table from the
// addressed key's state (the workflow step).
func keyWorkflow(keys *apikey.Service, ev apikey.Event) func(ctx context.Context, c *Call) error {
	return func(ctx context.Context, c *Call) error {
		k, err := keys.Get(ctx, c.Tx, c.Principal, c.PathValue("keyId"))
		if err != nil {
			return err
		}
		_, err = apikey.Transition(k.Status, ev)
		return err
	}
}

// keyRoutes are the nine /api/v1/api-keys routes. Every one needs the
// DEVELOPER role; reads need developer.api_key.read (scope keys:read),
// mutations developer.api_key.manage (scope keys:write). Creating,
// rotating and revoking a live key from a session need a recent sign-in
// (Policy.Fresh FreshLive); rotation is checked against the key's state
// table (Policy.Transition). Which keys a caller may manage is the key
// service's rule (apikey, management decisions).
func keyRoutes(keys *apikey.Service) []Route {
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Roles, r.Private = transport.TagDeveloper, transport.AuthSessionOrKey, []access.Role{access.RoleDeveloper}, true
		r.Permission, r.Scope, r.Idempotency = access.DeveloperAPIKeyRead, access.ScopeKeysRead, transport.IdempotencyNone
		return r
	}
	write := func(r Route) Route {
		r = read(r)
		r.Permission, r.Scope, r.Idempotency = access.DeveloperAPIKeyManage, access.ScopeKeysWrite, transport.IdempotencyOptional
		return r
	}
	secret := KeySecret{Key: exampleKey(), Secret: "platform_test_REPLACE_WITH_YOUR_KEY"}
	limits := apikey.Limits{RequestsPerMinute: 600, MaxConcurrentRequests: 16, MonthlyRequestBudget: 1000000}
	name := "CI pipeline (renamed)"
	overlap := int64(3600)
	return []Route{
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/api-keys", OperationID: "listApiKeys",
			Summary: "List API keys", Description: "Keys of the caller's workspace and environment, newest first, with cursor pagination. Plaintext keys are never returned.",
			Query: []transport.Param{{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"},
				{Name: "cursor", Description: "The nextCursor of the previous page.", Example: "Y3Vyc29yOmtleV8wMWpk"}},
			Response: KeyPage{Items: []KeyView{exampleKey()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, "key_")
				if err != nil {
					return nil, err
				}
				ks, more, err := keys.List(ctx, c.Tx, c.Principal, before, limit)
				if err != nil {
					return nil, err
				}
				page := KeyPage{Items: make([]KeyView, len(ks)), HasMore: more}
				for i, k := range ks {
					page.Items[i] = keyView(k)
				}
				if more {
					page.NextCursor = transport.EncodeCursor(ks[len(ks)-1].ID)
				}
				return page, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/api-keys", OperationID: "createApiKey", Status: http.StatusCreated, Errors: []string{string(fault.ReauthenticationRequired)},
			Summary: "Create an API key", SealResponse: true,
			Description: "Creates a test or live key (a key can only create keys of its own environment) whose scopes are within the caller's authority. The plaintext is in this response only; an idempotent replay returns it again to the same principal, sealed at rest. From a signed-in session, a live key needs a sign-in within the fresh-authentication window (10 minutes unless configured), else 401 REAUTHENTICATION_REQUIRED; API keys are not subject to it.",
			Request:     apikey.CreateInput{Name: "CI pipeline", Environment: access.Test, Scopes: []string{access.ScopeKeysRead}, Metadata: map[string]string{"team": "audio"}, Limits: &limits},
			Response:    secret,
			Policy:      Policy{Fresh: transport.FreshLive, FreshEnvironmentFunc: keyEnvironment},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in apikey.CreateInput
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				cr, err := keys.Create(ctx, c.Tx, caller(c), in)
				if err != nil {
					return nil, err
				}
				return KeySecret{Key: keyView(cr.Key), Secret: cr.Secret}, nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/api-keys/{keyId}", OperationID: "getApiKey",
			Summary: "Get an API key", Description: "A key of the caller's workspace and environment; any other key is 404.",
			Response: exampleKey(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				k, err := keys.Get(ctx, c.Tx, c.Principal, c.PathValue("keyId"))
				if err != nil {
					return nil, err
				}
				return keyView(k), nil
			}}),
		write(Route{Method: http.MethodPatch, Pattern: "/api/v1/api-keys/{keyId}", OperationID: "updateApiKey",
			Summary: "Update an API key", Description: "Changes name, scopes (within the caller's authority) or metadata; absent fields are unchanged. The caller may manage only a key whose scopes are all within what it may grant now, else 403 ACCESS_DENIED (details.reason key_exceeds_caller) and nothing changes.",
			Request:  apikey.UpdateInput{Name: &name, Scopes: []string{access.ScopeKeysRead}},
			Response: exampleKey(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in apikey.UpdateInput
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				k, err := keys.Update(ctx, c.Tx, caller(c), c.PathValue("keyId"), in)
				if err != nil {
					return nil, err
				}
				return keyView(k), nil
			}}),
		write(Route{Method: http.MethodDelete, Pattern: "/api/v1/api-keys/{keyId}", OperationID: "deleteApiKey",
			Summary: "Delete an API key", Description: "The key stops authenticating on the next request and disappears from reads. The caller may manage only a key whose scopes are all within what it may grant now (a key may also revoke or delete itself, and a signed-in user the keys made on their own authority), else 403 ACCESS_DENIED (details.reason key_exceeds_caller) and nothing changes.",
			Response: exampleKey(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				k, err := keys.Delete(ctx, c.Tx, caller(c), c.PathValue("keyId"))
				if err != nil {
					return nil, err
				}
				return keyView(k), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/api-keys/{keyId}/rotate", OperationID: "rotateApiKey", Errors: []string{string(fault.ReauthenticationRequired)},
			Summary: "Rotate an API key", SealResponse: true,
			Description: "Issues a new plaintext under the same key id and keeps the current one working for expireCurrentAfterSeconds (default 24 hours, at most 7 days), then expires it. The new secret carries the key creator's authority, so the caller may rotate only a key whose scopes it may grant and that was made on its own authority (by its user's sessions or keys), or, as OWNER or ADMIN, a key whose creator's authority it holds in full (super_admin, the DEVELOPER role, and each scope's permissions workspace-wide); else 403 ACCESS_DENIED with details.reason key_exceeds_caller, not_key_creator or creator_authority_exceeds_caller. From a signed-in session, a live key needs a sign-in within the fresh-authentication window (10 minutes unless configured), else 401 REAUTHENTICATION_REQUIRED; API keys are not subject to it.",
			Request:     apikey.RotateInput{ExpireCurrentAfterSeconds: &overlap},
			Response:    secret,
			Policy:      Policy{Fresh: transport.FreshLive, TransitionFunc: keyWorkflow(keys, apikey.EventRotate)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in apikey.RotateInput
				if len(c.Body()) > 0 {
					if err := c.Decode(&in); err != nil {
						return nil, err
					}
				}
				cr, err := keys.Rotate(ctx, c.Tx, caller(c), c.PathValue("keyId"), in)
				if err != nil {
					return nil, err
				}
				return KeySecret{Key: keyView(cr.Key), Secret: cr.Secret}, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/api-keys/{keyId}/revoke", OperationID: "revokeApiKey", Errors: []string{string(fault.ReauthenticationRequired)},
			Summary: "Revoke an API key", Description: "Every secret of the key stops authenticating on the next request. Revoking a revoked key is a no-op. The caller may manage only a key whose scopes are all within what it may grant now (a key may also revoke or delete itself, and a signed-in user the keys made on their own authority), else 403 ACCESS_DENIED (details.reason key_exceeds_caller) and nothing changes. From a signed-in session, a live key needs a sign-in within the fresh-authentication window (10 minutes unless configured), else 401 REAUTHENTICATION_REQUIRED; API keys are not subject to it.",
			Response: exampleKey(),
			Policy:   Policy{Fresh: transport.FreshLive},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				k, err := keys.Revoke(ctx, c.Tx, caller(c), c.PathValue("keyId"))
				if err != nil {
					return nil, err
				}
				return keyView(k), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/api-keys/{keyId}/limits", OperationID: "getApiKeyLimits",
			Summary: "Get an API key's limits", Description: "Requests per minute and concurrent requests are enforced per host; the monthly budget is counted in the database across hosts.",
			Response: limits,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				k, err := keys.Get(ctx, c.Tx, c.Principal, c.PathValue("keyId"))
				if err != nil {
					return nil, err
				}
				return k.Limits, nil
			}}),
		write(Route{Method: http.MethodPut, Pattern: "/api/v1/api-keys/{keyId}/limits", OperationID: "setApiKeyLimits",
			Summary: "Replace an API key's limits", Description: "Every field is required; each is bounded by the platform's maximums. The caller may manage only a key whose scopes are all within what it may grant now, else 403 ACCESS_DENIED (details.reason key_exceeds_caller) and nothing changes.",
			Request: limits, Response: limits,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in apikey.Limits
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				k, err := keys.SetLimits(ctx, c.Tx, caller(c), c.PathValue("keyId"), in)
				if err != nil {
					return nil, err
				}
				return k.Limits, nil
			}}),
	}
}
