package access

import (
	"slices"
	"strconv"

	"github.com/creatormusic/platform/fault"
)

// API key scopes. A key's authority is its scopes: each scope stands for the
// permissions listed in the scope table, and a key may call a route only if
// it holds the route's scope. Scope strings other than providers:select are
// the platform's own (the spec leaves them open, Authentication 13).
const (
	// ScopeRead reads the workspace and its projects.
	ScopeRead = "read"
	// ScopeKeysRead reads API keys, usage and request logs.
	ScopeKeysRead = "keys:read"
	// ScopeKeysWrite creates, updates, rotates and revokes API keys.
	ScopeKeysWrite = "keys:write"
	// ScopeWebhooksRead reads webhook registrations.
	ScopeWebhooksRead = "webhooks:read"
	// ScopeWebhooksWrite changes webhook registrations.
	ScopeWebhooksWrite = "webhooks:write"
	// ScopeProvidersRead reads provider connections.
	ScopeProvidersRead = "providers:read"
	// ScopeProvidersWrite changes provider connections and credentials.
	ScopeProvidersWrite = "providers:write"
	// ScopeProvidersSelect chooses a music provider explicitly on a
	// generation (spec, Authentication 8).
	ScopeProvidersSelect = "providers:select"
	// ScopeMusicGenerate starts music generation.
	ScopeMusicGenerate = "music:generate"
	// ScopeSoundRead reads sound operations and their results.
	ScopeSoundRead = "sound:read"
	// ScopeSoundWrite starts sound operations.
	ScopeSoundWrite = "sound:write"
	// ScopeAI asks the AI control plane for chat and task completions,
	// which spend credits, and reads their operations and usage.
	ScopeAI = "ai:use"
	// ScopeProjectsWrite edits projects, tracks and submissions.
	ScopeProjectsWrite = "projects:write"
	// ScopeLedgerRead reads the financial and provider-cost ledgers.
	ScopeLedgerRead = "ledger:read"
	// ScopeRewardsRead reads the rewards ledger for reconciliation.
	ScopeRewardsRead = "rewards:read"
	// ScopeAuditRead reads the whole workspace's activity and audit trail,
	// not only the caller's own.
	ScopeAuditRead = "audit:read"
	// ScopeInternal calls the internal routes (outbox publication). It is
	// issued only by the host's operator and is never grantable through the
	// API: ScopesFor never returns it.
	ScopeInternal = "internal"
)

// ScopeSpec is one row of the scope table: a scope and the permissions it
// stands for.
type ScopeSpec struct {
	Scope       string
	Permissions []Permission
}

// scopeTable maps every scope to its permissions, built on each call.
func scopeTable() []ScopeSpec {
	return []ScopeSpec{
		{ScopeRead, []Permission{WorkspaceRead, ProjectRead}},
		{ScopeKeysRead, []Permission{DeveloperAPIKeyRead, DeveloperUsageRead, DeveloperLogsRead}},
		{ScopeKeysWrite, []Permission{DeveloperAPIKeyManage}},
		{ScopeWebhooksRead, []Permission{DeveloperWebhookRead}},
		{ScopeWebhooksWrite, []Permission{DeveloperWebhookManage}},
		{ScopeProvidersRead, []Permission{DeveloperProviderRead}},
		{ScopeProvidersWrite, []Permission{DeveloperProviderManage}},
		{ScopeProvidersSelect, []Permission{TrackGenerate, DeveloperProviderRead}},
		{ScopeMusicGenerate, []Permission{TrackGenerate}},
		{ScopeSoundRead, []Permission{ProjectRead}},
		{ScopeSoundWrite, []Permission{TrackGenerate}},
		{ScopeAI, []Permission{TrackGenerate}},
		{ScopeProjectsWrite, []Permission{ProjectUpdate}},
		{ScopeLedgerRead, []Permission{TreasuryRead}},
		{ScopeRewardsRead, []Permission{RewardReconcile}},
		{ScopeAuditRead, []Permission{AuditRead}},
		{ScopeInternal, []Permission{InternalEvents}},
	}
}

// Scopes returns the scope table, as data.
func Scopes() []ScopeSpec { return scopeTable() }

// scopeIndex maps each scope to its permissions. It is built once from
// scopeTable and never modified, so the per-request path does not rebuild
// the table.
var scopeIndex = func() map[string][]Permission {
	m := map[string][]Permission{}
	for _, s := range scopeTable() {
		m[s.Scope] = s.Permissions
	}
	return m
}()

// ScopePermissions returns the permissions scope stands for, and whether the
// scope is known. Callers must not modify the returned slice.
func ScopePermissions(scope string) ([]Permission, bool) {
	ps, ok := scopeIndex[scope]
	return ps, ok
}

// ScopesFor returns the scopes a principal with authority a may put on a new
// key: those whose every permission a holds now (Effective, so denies count).
// ScopeInternal is never among them. A nil authority grants nothing.
func ScopesFor(a *Authority) []string {
	if a == nil {
		return nil
	}
	eff := a.Effective()
	var out []string
	for _, s := range scopeTable() {
		if s.Scope == ScopeInternal {
			continue
		}
		ok := true
		for _, p := range s.Permissions {
			if !slices.Contains(eff, p) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s.Scope)
		}
	}
	return out
}

// ValidateScopes checks the scopes requested for a key against the scopes
// its creator may grant (ScopesFor). It returns INVALID_INPUT with
// details.field "scopes[i]" for an unknown scope or a duplicate, "scopes"
// for an empty list, and ACCESS_DENIED (details.field "scopes[i]") for a
// known scope beyond grantable, ScopeInternal included.
func ValidateScopes(requested []string, grantable []string) error {
	const op = "access.ValidateScopes"
	if len(requested) == 0 {
		return fault.Invalid(op, "scopes", "At least one scope is required.")
	}
	for i, s := range requested {
		field := "scopes[" + strconv.Itoa(i) + "]"
		if _, ok := ScopePermissions(s); !ok {
			return fault.Invalid(op, field, "Unknown scope.")
		}
		if slices.Contains(requested[:i], s) {
			return fault.Invalid(op, field, "Duplicate scope.")
		}
	}
	for i, s := range requested {
		if s == ScopeInternal || !slices.Contains(grantable, s) {
			return fault.E(op, fault.AccessDenied, "The scope exceeds the creator's authority.").
				With("field", "scopes["+strconv.Itoa(i)+"]")
		}
	}
	return nil
}

// keyAllows reports whether an API key with scopes holds permission p
// through one of them.
func keyAllows(scopes []string, p Permission) bool {
	for _, s := range scopes {
		ps, _ := ScopePermissions(s)
		if slices.Contains(ps, p) {
			return true
		}
	}
	return false
}
