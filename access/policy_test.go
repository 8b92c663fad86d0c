package access

import (
	"testing"

	"github.com/creatormusic/platform/fault"
)

// catalog is an Offers with a free plan and two paid ones.
type catalog map[string][]string

func (c catalog) Paid(id string) bool { _, ok := c[id]; return ok && id != "free" }
func (c catalog) Granting(e string) []string {
	var out []string
	for _, id := range []string{"pro", "studio"} {
		for _, x := range c[id] {
			if x == e {
				out = append(out, id)
			}
		}
	}
	return out
}

func offers() catalog {
	return catalog{"free": {"ai.basic"}, "pro": {"ai.basic", "ai.pro_models"}, "studio": {"ai.basic", "ai.pro_models", "audio.hires"}}
}

func onPlan(a *Authority, plan string) *Authority { a.Plan = plan; return a }

func TestEntitlementStepSaysWhatWouldHelp(t *testing.T) {
	cases := []struct {
		name      string
		plan      string
		ent       string
		offers    Offers
		wantCode  fault.Code
		wantPlans []string
	}{
		{"free workspace, a paid plan grants it", "free", "audio.hires", offers(), fault.SubscriptionRequired, []string{"studio"}},
		{"no plan at all, a paid plan grants it", "", "ai.pro_models", offers(), fault.SubscriptionRequired, []string{"pro", "studio"}},
		{"paid plan lacking it", "pro", "audio.hires", offers(), fault.EntitlementRequired, []string{"studio"}},
		{"no plan grants it", "free", "marketplace.sell", offers(), fault.EntitlementRequired, nil},
		{"no catalog", "free", "audio.hires", nil, fault.EntitlementRequired, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Principal: session(), Authority: onPlan(member(RoleOwner), c.plan), Permission: TrackGenerate,
				Entitlement: c.ent, Offers: c.offers}
			d := Evaluate(&in)
			if d.Allowed || d.Step != StepEntitlement || d.Err.Code != c.wantCode {
				t.Fatalf("decision = %+v, want %s at the entitlement step", d, c.wantCode)
			}
			if d.Err.Details["entitlement"] != c.ent {
				t.Errorf("details = %v", d.Err.Details)
			}
			got, _ := d.Err.Details["plans"].([]string)
			if len(got) != len(c.wantPlans) || (len(got) > 0 && got[0] != c.wantPlans[0]) {
				t.Errorf("plans = %v, want %v", got, c.wantPlans)
			}
		})
	}
	// The tie rule holds for SUBSCRIPTION_REQUIRED too: a VIEWER is told
	// it lacks the permission, not sent to subscribe.
	in := Input{Principal: session(), Authority: onPlan(member(RoleViewer), "free"), Permission: TrackGenerate,
		Entitlement: "audio.hires", Offers: offers()}
	if d := Evaluate(&in); d.Step != StepPermission || d.Err.Code != fault.AccessDenied {
		t.Fatalf("viewer = %+v", d)
	}
}

func TestExtraScopes(t *testing.T) {
	cases := []struct {
		name     string
		p        *Principal
		a        *Authority
		wantStep string
	}{
		{"key without providers:select", key(ScopeMusicGenerate), member(RoleCreator), StepPermission},
		{"key with providers:select", key(ScopeMusicGenerate, ScopeProvidersSelect), member(RoleCreator, RoleDeveloper), StepAllow},
		{"key with the scope whose creator lost its permissions", key(ScopeMusicGenerate, ScopeProvidersSelect), member(RoleCreator), StepPermission},
		{"session holding the scope's permissions", session(), member(RoleOwner), StepAllow},
		{"session lacking developer.provider.read", session(), member(RoleCreator), StepPermission},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Principal: c.p, Authority: c.a, Permission: TrackGenerate, ExtraScopes: []string{ScopeProvidersSelect}}
			if c.p.Kind == CredentialAPIKey {
				in.Scope = ScopeMusicGenerate
			}
			d := Evaluate(&in)
			if d.Step != c.wantStep {
				t.Fatalf("step = %s (%v), want %s", d.Step, d.Err, c.wantStep)
			}
		})
	}
}

func TestResourceFuncRunsOnceAndOnlyWhenReached(t *testing.T) {
	calls := 0
	load := func() (*Resource, error) { calls++; return &Resource{OwnerUserID: "usr_2", WorkspaceID: "ws_1"}, nil }
	// An earlier failing step never loads the resource.
	in := Input{Principal: session(), Authority: member(RoleViewer), Permission: TrackGenerate, ResourceFunc: load}
	if d := Evaluate(&in); d.Step != StepPermission || calls != 0 {
		t.Fatalf("step %s, %d loads", d.Step, calls)
	}
	// A CREATOR's own-scope grant does not reach another member's resource;
	// the tie rule runs the step again without a second load.
	in = Input{Principal: session(), Authority: member(RoleCreator), Permission: TrackGenerate, ResourceFunc: load,
		Entitlement: "audio.hires", Offers: offers()}
	if d := Evaluate(&in); d.Step != StepResourceScope || d.Err.Code != fault.AccessDenied || calls != 1 {
		t.Fatalf("decision %+v, %d loads", d, calls)
	}
	// A resource the caller cannot see stays NOT_FOUND, also under the tie rule.
	gone := func() (*Resource, error) { return nil, fault.E("test.load", fault.NotFound, "") }
	for _, ent := range []string{"", "audio.hires"} {
		in = Input{Principal: session(), Authority: member(RoleOwner), Permission: TrackGenerate, ResourceFunc: gone, Entitlement: ent}
		if d := Evaluate(&in); d.Err == nil || d.Err.Code != fault.NotFound {
			t.Fatalf("entitlement %q: %+v", ent, d)
		}
	}
	// OWNER's workspace grant reaches it.
	in = Input{Principal: session(), Authority: member(RoleOwner), Permission: TrackGenerate, ResourceFunc: load}
	if d := Evaluate(&in); !d.Allowed {
		t.Fatalf("owner: %+v", d)
	}
}

func TestRoutesMayRequireOnlyGatingRoles(t *testing.T) {
	for _, r := range Roles() {
		in := Input{Principal: session(), Authority: member(Roles()...), RequiredRoles: []Role{r}}
		d := Evaluate(&in)
		gating := r == RoleDeveloper
		if gating != d.Allowed || !gating && d.Step != StepRoutePolicy {
			t.Errorf("route requiring %s: %+v", r, d)
		}
	}
}

func TestCovers(t *testing.T) {
	owner := member(RoleOwner, RoleDeveloper)
	owner.UserID = "usr_owner"
	admin := member(RoleAdmin, RoleDeveloper)
	admin.UserID = "usr_admin"
	adminNoDev := member(RoleAdmin)
	adminNoDev.UserID = "usr_admin2"
	creator := member(RoleCreator)
	creator.UserID = "usr_creator"
	superOwner := with(member(RoleOwner, RoleDeveloper), func(a *Authority) { a.UserID = "usr_super"; a.SuperAdmin = true })
	left := with(member(RoleOwner), func(a *Authority) { a.UserID = "usr_left"; a.MembershipStatus = "" })
	denied := with(member(RoleAdmin, RoleDeveloper), func(a *Authority) { a.UserID = "usr_d"; a.Denies = []Permission{AuditRead} })
	cases := []struct {
		name    string
		a, of   *Authority
		scopes  []string
		covered bool
	}{
		{"admin holds the owner's ledger and audit reads", admin, owner, []string{ScopeLedgerRead, ScopeAuditRead}, true},
		{"the same user", owner, with(member(RoleOwner, RoleDeveloper), func(x *Authority) { x.UserID = "usr_owner" }), []string{ScopeLedgerRead}, true},
		{"a super_admin's key", admin, superOwner, []string{ScopeKeysRead}, false},
		{"a developer's key without the DEVELOPER role", adminNoDev, owner, []string{ScopeRead}, false},
		{"an own-scope grant of another user", admin, creator, []string{ScopeMusicGenerate}, true},
		{"a creator does not cover an owner", creator, owner, []string{ScopeMusicGenerate}, false},
		{"a denied permission", denied, owner, []string{ScopeAuditRead}, false},
		{"a creator who left holds nothing", creator, left, []string{ScopeLedgerRead}, true},
		{"nobody covers from no authority", nil, owner, []string{ScopeRead}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Covers(c.of, c.scopes); got != c.covered {
				t.Fatalf("Covers = %v, want %v", got, c.covered)
			}
		})
	}
}

func TestPathPoliciesCloseUnknownPaths(t *testing.T) {
	owner := member(RoleOwner, RoleDeveloper)
	decide := func(path string) Decision {
		in := &Input{Principal: session(), Authority: owner}
		if pol, ok := PolicyFor(path); ok {
			in.Permission, in.RequiredRoles, in.Entitlement, in.AnyMember = pol.Permission, pol.RequiredRoles, pol.Entitlement, pol.AnyMember
		}
		return Evaluate(in)
	}
	for _, p := range []string{"/", "/developer", "/developer/keys", "/developer/keys/new", "/admin/audit", "/studio"} {
		if err := NormalizedPath(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d := decide(p); !d.Allowed {
			t.Errorf("%s: %+v", p, d)
		}
	}
	// Unknown paths and near misses of listed ones fail the route-policy
	// step: nothing lends them a policy.
	for _, p := range []string{"/nowhere", "/developerx", "/developer-keys", "/admins", "/studio2", "/billingx/x", "/x/developer"} {
		if err := NormalizedPath(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d := decide(p); d.Allowed || d.Step != StepRoutePolicy || d.Err.Code != fault.AccessDenied {
			t.Errorf("%s: %+v", p, d)
		}
	}
	// Traversal and other spellings are not normalized paths at all.
	for _, p := range []string{"/developer/../admin", "/developer/./keys", "//admin", "/admin/", "/%2e%2e/admin", "\\admin",
		"/admin%2faudit", "admin", "", "/admin?x=1", "/admin#x", "http://host/admin", "/ad min", "/développeur"} {
		if err := NormalizedPath(p); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("%q: %v", p, err)
		}
	}
}
