package access

import (
	"slices"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestScopeTable(t *testing.T) {
	for _, s := range Scopes() {
		if len(s.Permissions) == 0 {
			t.Errorf("scope %q stands for nothing", s.Scope)
		}
		for _, p := range s.Permissions {
			if !p.Valid() {
				t.Errorf("scope %q: unknown permission %q", s.Scope, p)
			}
		}
	}
	if ps, ok := ScopePermissions(ScopeProvidersSelect); !ok || !slices.Contains(ps, TrackGenerate) {
		t.Errorf("providers:select = %v, %v", ps, ok)
	}
}

func TestScopesFor(t *testing.T) {
	owner := ScopesFor(member(RoleOwner))
	if slices.Contains(owner, ScopeInternal) {
		t.Error("internal scope grantable")
	}
	if len(owner) != len(Scopes())-1 {
		t.Errorf("OWNER may grant %v", owner)
	}
	dev := ScopesFor(member(RoleDeveloper))
	for _, s := range []string{ScopeKeysRead, ScopeKeysWrite, ScopeProvidersRead, ScopeProvidersWrite, ScopeWebhooksRead, ScopeWebhooksWrite} {
		if !slices.Contains(dev, s) {
			t.Errorf("DEVELOPER cannot grant %s", s)
		}
	}
	for _, s := range []string{ScopeMusicGenerate, ScopeProjectsWrite, ScopeSoundWrite, ScopeProvidersSelect} {
		if slices.Contains(dev, s) {
			t.Errorf("DEVELOPER may grant %s", s)
		}
	}
	denied := with(member(RoleOwner), func(a *Authority) { a.Denies = []Permission{DeveloperAPIKeyManage} })
	if slices.Contains(ScopesFor(denied), ScopeKeysWrite) {
		t.Error("denied permission still grantable")
	}
	if ScopesFor(nil) != nil {
		t.Error("nil authority grants scopes")
	}
}

func TestValidateScopes(t *testing.T) {
	grantable := ScopesFor(member(RoleDeveloper))
	cases := []struct {
		name      string
		requested []string
		code      fault.Code
		field     string
	}{
		{"within authority", []string{ScopeKeysRead, ScopeKeysWrite}, "", ""},
		{"empty", nil, fault.InvalidInput, "scopes"},
		{"unknown", []string{ScopeKeysRead, "root"}, fault.InvalidInput, "scopes[1]"},
		{"duplicate", []string{ScopeKeysRead, ScopeKeysRead}, fault.InvalidInput, "scopes[1]"},
		{"beyond authority", []string{ScopeKeysRead, ScopeMusicGenerate}, fault.AccessDenied, "scopes[1]"},
		{"internal", []string{ScopeInternal}, fault.AccessDenied, "scopes[0]"},
		{"unknown before beyond", []string{ScopeMusicGenerate, "root"}, fault.InvalidInput, "scopes[1]"},
	}
	for _, c := range cases {
		err := ValidateScopes(c.requested, grantable)
		if got := fault.CodeOf(err); got != c.code {
			t.Errorf("%s: code %q, want %q", c.name, got, c.code)
			continue
		}
		if c.code == "" {
			continue
		}
		_, _, details := fault.Public(err)
		if details["field"] != c.field {
			t.Errorf("%s: field %v, want %q", c.name, details["field"], c.field)
		}
	}
	if err := ValidateScopes([]string{ScopeInternal}, []string{ScopeInternal}); fault.CodeOf(err) != fault.AccessDenied {
		t.Errorf("internal with itself grantable: %v", err)
	}
}
