package api

import (
	"context"
	"net/http"
	"sort"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
)

// AuthContext is the sanitized session authority (spec, Identity and access).
type AuthContext struct {
	// Tenant is the tenant the caller acts in.
	Tenant Ref `json:"tenant"`
	// Workspace is the workspace the caller acts in.
	Workspace Ref `json:"workspace"`
	// User is the signed-in user, or the user who created the API key.
	User Ref `json:"user"`
	// Credential is the credential of this request, never its secret.
	Credential Principal `json:"credential"`
	// Environment is the environment (test or live) the request acts in.
	Environment string `json:"environment" example:"test"`
	// Roles are the caller's workspace roles.
	Roles []string `json:"roles" example:"DEVELOPER"`
	// Permissions are safe permission identifiers the caller holds; for a
	// key, narrowed to what its scopes stand for.
	Permissions []string `json:"permissions" example:"developer.api_key.read"`
	// VerifiedWalletCount counts the user's verified wallets in the tenant.
	VerifiedWalletCount int `json:"verifiedWalletCount" example:"0"`
}

// Ref is a reference to a record by id.
type Ref struct {
	// ID is the referenced record's id.
	ID string `json:"id" example:"ws_01jd0000000000000000000000"`
}

// Principal describes the credential of a request, never its secret.
type Principal struct {
	// Kind is api_key, session or access_token.
	Kind string `json:"kind" example:"api_key"`
	// KeyID is the API key's id when Kind is api_key.
	KeyID string `json:"keyId,omitempty" example:"key_01jd0000000000000000000000"`
	// Scopes are the key's scopes.
	Scopes []string `json:"scopes,omitempty" example:"keys:read"`
}

// AccessDecision answers GET /api/v1/access/context for one path only.
type AccessDecision struct {
	// Path is the app surface the decision is for, as the path parameter named it.
	Path string `json:"path" example:"/developer/keys"`
	// Allowed is true when the caller may use the surface.
	Allowed bool `json:"allowed" example:"true"`
	// Step is the evaluation step that decided: "allow", or the first
	// failing step (authenticated, workspace, membership, route_policy,
	// feature, entitlement, permission, resource_scope, workflow,
	// verification).
	Step string `json:"step" example:"allow"`
	// Code is the error code a request to this surface would get; null when allowed.
	Code *string `json:"code" example:"ACCESS_DENIED"`
}

// SaasMe is the workspace and subscription projection.
type SaasMe struct {
	// Workspace is the caller's workspace.
	Workspace WorkspaceView `json:"workspace"`
	// Subscription is the effective subscription of the caller's
	// environment; null on a free workspace, whose free entitlements remain.
	Subscription *SubscriptionView `json:"subscription"`
	// Credits is the workspace's credit balance in the caller's environment
	// (an integer string; "0" when never granted).
	Credits string `json:"credits" example:"2000"`
	// Entitlements are the workspace's entitlement identifiers in the
	// caller's environment (its plan there, plus those held in both).
	Entitlements []string `json:"entitlements" example:"ai.basic"`
	// Permissions are the caller's effective permissions.
	Permissions []string `json:"permissions" example:"project.read"`
	// FeatureFlags are the flags in effect for the workspace.
	FeatureFlags map[string]bool `json:"featureFlags"`
	// Environment is the environment (test or live) the projection describes.
	Environment string `json:"environment" example:"test"`
}

// WorkspaceView is a workspace's identity and state.
type WorkspaceView struct {
	// ID is the workspace's id.
	ID string `json:"id" example:"ws_01jd0000000000000000000000"`
	// TenantID is the tenant the workspace belongs to.
	TenantID string `json:"tenantId" example:"ten_01jd0000000000000000000000"`
	// Name is the workspace's name.
	Name string `json:"name" example:"Demo Studio"`
	// State is the workspace's state (active or suspended).
	State string `json:"state" example:"active"`
}

// narrowed returns the permissions of a that the principal may use: all of
// them for a session, those its scopes stand for when it is a key.
func narrowed(p *access.Principal, a *access.Authority) []string {
	perms := a.SafePermissions()
	if p.Kind != access.CredentialAPIKey {
		return perms
	}
	allowed := map[string]bool{}
	for _, s := range p.Scopes {
		ps, _ := access.ScopePermissions(s)
		for _, x := range ps {
			allowed[string(x)] = true
		}
	}
	out := []string{}
	for _, x := range perms {
		if allowed[x] {
			out = append(out, x)
		}
	}
	return out
}

func roleStrings(a *access.Authority) []string {
	out := make([]string, 0, len(a.Roles))
	for _, r := range a.Roles {
		out = append(out, string(r))
	}
	sort.Strings(out)
	return out
}

func identityRoutes(accounts *account.Service, bills *billing.Service, ledgers *ledger.Service) []Route {
	member := func(r Route) Route {
		r.Tag, r.Auth, r.AnyMember, r.Private, r.Idempotency = transport.TagIdentity, transport.AuthSessionOrKey, true, true, transport.IdempotencyNone
		return r
	}
	code := string(fault.AccessDenied)
	return []Route{
		member(Route{Method: http.MethodGet, Pattern: "/api/v1/auth/context", OperationID: "getAuthContext",
			Summary: "Get the caller's authority", Description: "Tenant, workspace, user, credential kind, roles, safe permission identifiers and the verified-wallet count, resolved on the server on every request.",
			Response: AuthContext{Tenant: Ref{ID: "ten_01jd0000000000000000000000"}, Workspace: Ref{ID: "ws_01jd0000000000000000000000"},
				User: Ref{ID: "usr_01jd0000000000000000000000"}, Credential: Principal{Kind: "api_key", KeyID: "key_01jd0000000000000000000000", Scopes: []string{"keys:read"}},
				Environment: "test", Roles: []string{"DEVELOPER"}, Permissions: []string{"developer.api_key.read"}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, a := c.Principal, c.Authority
				out := AuthContext{Tenant: Ref{ID: p.TenantID}, Workspace: Ref{ID: p.WorkspaceID}, User: Ref{ID: p.UserID},
					Credential: Principal{Kind: string(p.Kind), KeyID: p.KeyID, Scopes: p.Scopes}, Environment: string(p.Environment),
					Roles: roleStrings(a), Permissions: narrowed(p, a), VerifiedWalletCount: a.WalletCount}
				return out, nil
			}}),
		member(Route{Method: http.MethodGet, Pattern: "/api/v1/access/context", OperationID: "getAccessContext",
			Summary:     "Decide access to one application path",
			Description: "Evaluates the eleven access steps for one normalized internal path of the platform's applications (for example /developer/keys) and reports the deciding step. The decision holds for that path only: it is never reusable for other resources or for money movement, and it is never cached.",
			Query:       []transport.Param{{Name: "path", Required: true, Description: "A normalized internal path: absolute, no query, no trailing slash, no dot segments.", Example: "/developer/keys"}},
			Response:    AccessDecision{Path: "/developer/keys", Allowed: false, Step: "permission", Code: &code},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				path := c.Query("path")
				if err := access.NormalizedPath(path); err != nil {
					return nil, err
				}
				in := &access.Input{Principal: c.Principal, Authority: c.Authority}
				if pol, ok := access.PolicyFor(path); ok {
					in.Permission, in.RequiredRoles, in.Entitlement, in.AnyMember = pol.Permission, pol.RequiredRoles, pol.Entitlement, pol.AnyMember
				}
				d := access.Evaluate(in)
				out := AccessDecision{Path: path, Allowed: d.Allowed, Step: d.Step}
				if !d.Allowed {
					code := string(fault.CodeOf(d.Err))
					out.Code = &code
				}
				return out, nil
			}}),
		member(Route{Method: http.MethodGet, Pattern: "/api/v1/saas/me", OperationID: "getSaasMe", Tag: transport.TagAccount,
			Summary: "Get the workspace projection", Description: "Workspace identity and state, the effective subscription of the caller's environment (null on a free workspace), the credit balance of that environment, entitlements, effective permissions and feature flags. An unreadable balance is an error, never zero.",
			Response: SaasMe{Workspace: WorkspaceView{ID: "ws_01jd0000000000000000000000", TenantID: "ten_01jd0000000000000000000000", Name: "Demo Studio", State: "active"},
				Entitlements: []string{"ai.basic"}, Permissions: []string{"project.read"}, FeatureFlags: map[string]bool{"sound.engine": true}, Environment: "test", Credits: "50"},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, a := c.Principal, c.Authority
				ws, err := accounts.Workspace(ctx, c.Tx, p)
				if err != nil {
					return nil, err
				}
				flags := a.Flags
				if flags == nil {
					flags = map[string]bool{}
				}
				ents := append([]string{}, a.Entitlements...)
				sort.Strings(ents)
				out := SaasMe{Workspace: WorkspaceView{ID: ws.ID, TenantID: ws.TenantID, Name: ws.Name, State: ws.State},
					Entitlements: ents, Permissions: narrowed(p, a), FeatureFlags: flags, Environment: string(p.Environment), Credits: "0"}
				if bills != nil {
					sub, err := bills.Current(ctx, c.Tx, billing.ScopeOf(p))
					if err != nil {
						return nil, err
					}
					if sub != nil {
						v := subscriptionView(*sub)
						out.Subscription = &v
					}
				}
				if ledgers != nil {
					acct, err := ledgers.Balance(ctx, c.Tx, ledger.ScopeOf(p), ledger.Credits, ledger.AccountWorkspaceCredits)
					switch {
					case err == nil:
						out.Credits = acct.Balance.String()
					case !fault.Is(err, fault.NotFound): // never posted to is a real zero; a failed read is an error
						return nil, err
					}
				}
				return out, nil
			}}),
	}
}
