package access

import (
	"errors"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// session returns a session principal of usr_1 in ws_1 of ten_1.
func session() *Principal {
	return &Principal{Kind: CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", SessionID: "ses_1", Environment: Test}
}

// key returns an API key principal created by usr_1 with scopes.
func key(scopes ...string) *Principal {
	return &Principal{Kind: CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", KeyID: "key_1", Scopes: scopes, Environment: Test}
}

// member returns the authority of an active member of ws_1 with roles.
func member(roles ...Role) *Authority {
	return &Authority{
		TenantID: "ten_1", WorkspaceID: "ws_1", WorkspaceState: WorkspaceActive, UserID: "usr_1",
		MembershipStatus: MembershipActive, Roles: roles,
		Entitlements: []string{"ai.basic"}, Flags: map[string]bool{"studio": true},
	}
}

func with(a *Authority, f func(*Authority)) *Authority { f(a); return a }

func TestEvaluate(t *testing.T) {
	errTransition := fault.E("project.Transition", fault.InvalidState, "")
	errFresh := fault.E("session.Fresh", fault.ReauthenticationRequired, "")
	cases := []struct {
		name     string
		in       Input
		wantStep string
		wantCode fault.Code
	}{
		// Each step as the first failure.
		{"unauthenticated", Input{Permission: ProjectRead}, StepAuthenticated, fault.Unauthenticated},
		{"session without user", Input{Principal: &Principal{Kind: CredentialSession}, Permission: ProjectRead}, StepAuthenticated, fault.Unauthenticated},
		{"unknown credential kind", Input{Principal: &Principal{UserID: "usr_1"}, Permission: ProjectRead}, StepAuthenticated, fault.Unauthenticated},
		{"authority not loaded", Input{Principal: session(), Permission: ProjectRead}, StepWorkspace, fault.WorkspaceAccessDenied},
		{"requested workspace not theirs", Input{Principal: session(), Authority: member(RoleOwner), RequestedWorkspaceID: "ws_2", Permission: ProjectRead}, StepWorkspace, fault.WorkspaceAccessDenied},
		{"authority of another tenant", Input{Principal: session(), Authority: with(member(RoleOwner), func(a *Authority) { a.TenantID = "ten_2" }), Permission: ProjectRead}, StepWorkspace, fault.WorkspaceAccessDenied},
		{"unknown workspace", Input{Principal: session(), Authority: with(member(), func(a *Authority) { a.WorkspaceState = ""; a.MembershipStatus = "" }), Permission: ProjectRead}, StepWorkspace, fault.WorkspaceAccessDenied},
		{"suspended workspace", Input{Principal: session(), Authority: with(member(RoleOwner), func(a *Authority) { a.WorkspaceState = WorkspaceSuspended }), Permission: ProjectRead}, StepWorkspace, fault.WorkspaceAccessDenied},
		{"no membership", Input{Principal: session(), Authority: with(member(), func(a *Authority) { a.MembershipStatus = "" }), AnyMember: true}, StepMembership, fault.WorkspaceAccessDenied},
		{"suspended membership", Input{Principal: session(), Authority: with(member(RoleOwner), func(a *Authority) { a.MembershipStatus = MembershipSuspended }), Permission: ProjectRead}, StepMembership, fault.WorkspaceAccessDenied},
		{"no route policy", Input{Principal: session(), Authority: member(RoleOwner)}, StepRoutePolicy, fault.AccessDenied},
		{"unknown route permission", Input{Principal: session(), Authority: member(RoleOwner), Permission: "root.all"}, StepRoutePolicy, fault.AccessDenied},
		{"unknown route scope", Input{Principal: session(), Authority: member(RoleOwner), Scope: "root"}, StepRoutePolicy, fault.AccessDenied},
		{"feature off", Input{Principal: session(), Authority: member(RoleOwner), Permission: ProjectRead, Feature: "swap"}, StepFeature, fault.FeatureDisabled},
		{"entitlement missing", Input{Principal: session(), Authority: member(RoleOwner), Permission: TrackGenerate, Entitlement: "ai.pro_models"}, StepEntitlement, fault.EntitlementRequired},
		{"permission missing", Input{Principal: session(), Authority: member(RoleViewer), Permission: ProjectUpdate}, StepPermission, fault.AccessDenied},
		{"resource not owned", Input{Principal: session(), Authority: member(RoleCreator), Permission: ProjectUpdate, Resource: &Resource{OwnerUserID: "usr_2", WorkspaceID: "ws_1"}}, StepResourceScope, fault.AccessDenied},
		{"resource of another workspace", Input{Principal: session(), Authority: member(RoleOwner), Permission: ProjectRead, Resource: &Resource{WorkspaceID: "ws_2"}}, StepResourceScope, fault.AccessDenied},
		{"workflow invalid", Input{Principal: session(), Authority: member(RoleCreator), Permission: ProjectPublish, Resource: &Resource{OwnerUserID: "usr_1"}, TransitionFunc: func() error { return errTransition }}, StepWorkflow, fault.InvalidState},
		{"verification missing", Input{Principal: session(), Authority: member(RoleOwner), Permission: DeveloperAPIKeyManage, VerifyFunc: func() error { return errFresh }}, StepVerification, fault.ReauthenticationRequired},
		{"allowed", Input{Principal: session(), Authority: member(RoleCreator), Permission: ProjectUpdate, Resource: &Resource{OwnerUserID: "usr_1"}, Feature: "studio", Entitlement: "ai.basic"}, StepAllow, ""},

		// The tie rule.
		{"entitlement and permission missing", Input{Principal: session(), Authority: member(RoleViewer), Permission: TrackGenerate, Entitlement: "ai.pro_models"}, StepPermission, fault.AccessDenied},
		{"feature off and permission missing", Input{Principal: session(), Authority: member(RoleViewer), Permission: TrackGenerate, Feature: "swap"}, StepPermission, fault.AccessDenied},
		{"entitlement missing and resource out of scope", Input{Principal: session(), Authority: member(RoleCreator), Permission: TrackGenerate, Entitlement: "ai.pro_models", Resource: &Resource{OwnerUserID: "usr_2"}}, StepResourceScope, fault.AccessDenied},
		{"entitlement missing, workflow invalid", Input{Principal: session(), Authority: member(RoleOwner), Permission: ProjectPublish, Entitlement: "ai.pro_models", TransitionFunc: func() error { return errTransition }}, StepEntitlement, fault.EntitlementRequired},

		// Explicit deny, broad roles and workflow state.
		{"deny beats OWNER", Input{Principal: session(), Authority: with(member(RoleOwner), func(a *Authority) { a.Denies = []Permission{TreasuryRead} }), Permission: TreasuryRead}, StepPermission, fault.AccessDenied},
		{"deny beats OWNER and super_admin", Input{Principal: session(), Authority: with(member(RoleOwner), func(a *Authority) { a.Denies = []Permission{FeePolicyRead}; a.SuperAdmin = true }), Permission: FeePolicyRead, RequireSuperAdmin: true}, StepPermission, fault.AccessDenied},
		{"OWNER blocked by workflow", Input{Principal: session(), Authority: member(RoleOwner), Permission: ProjectPublish, TransitionFunc: func() error { return errTransition }}, StepWorkflow, fault.InvalidState},
		{"uncoded workflow error is internal", Input{Principal: session(), Authority: member(RoleOwner), Permission: ProjectPublish, TransitionFunc: func() error { return errors.New("boom") }}, StepWorkflow, fault.Internal},

		// Roles.
		{"DEVELOPER denied treasury.read", Input{Principal: session(), Authority: member(RoleDeveloper), Permission: TreasuryRead}, StepPermission, fault.AccessDenied},
		{"DEVELOPER opens the portal", Input{Principal: session(), Authority: member(RoleDeveloper), Permission: DeveloperPortalRead, RequiredRoles: []Role{RoleDeveloper}}, StepAllow, ""},
		{"OWNER without DEVELOPER role kept out of the portal", Input{Principal: session(), Authority: member(RoleOwner), Permission: DeveloperPortalRead, RequiredRoles: []Role{RoleDeveloper}}, StepPermission, fault.AccessDenied},
		{"super_admin required", Input{Principal: session(), Authority: member(RoleOwner), RequireSuperAdmin: true}, StepPermission, fault.AccessDenied},
		{"super_admin present", Input{Principal: session(), Authority: with(member(RoleViewer), func(a *Authority) { a.SuperAdmin = true }), RequireSuperAdmin: true}, StepAllow, ""},
		{"super_admin grants no permission", Input{Principal: session(), Authority: with(member(RoleViewer), func(a *Authority) { a.SuperAdmin = true }), Permission: TreasuryManage}, StepPermission, fault.AccessDenied},
		{"ADMIN lacks treasury.manage", Input{Principal: session(), Authority: member(RoleAdmin), Permission: TreasuryManage}, StepPermission, fault.AccessDenied},
		{"any member", Input{Principal: session(), Authority: member(RoleViewer), AnyMember: true}, StepAllow, ""},

		// Templates and resource scopes.
		{"project lead inside the project", Input{Principal: session(), Authority: with(member(RoleMember), func(a *Authority) { a.Assignments = []Assignment{{TemplateProjectLead, "prj_1"}} }), Permission: ProjectPublish, Resource: &Resource{ProjectID: "prj_1", OwnerUserID: "usr_9"}}, StepAllow, ""},
		{"project lead outside the project", Input{Principal: session(), Authority: with(member(RoleMember), func(a *Authority) { a.Assignments = []Assignment{{TemplateProjectLead, "prj_1"}} }), Permission: ProjectPublish, Resource: &Resource{ProjectID: "prj_2", OwnerUserID: "usr_9"}}, StepResourceScope, fault.AccessDenied},
		{"member on an assigned resource", Input{Principal: session(), Authority: member(RoleMember), Permission: ProjectUpdate, Resource: &Resource{OwnerUserID: "usr_9", AssigneeUserIDs: []string{"usr_1"}}}, StepAllow, ""},
		{"member on another's resource", Input{Principal: session(), Authority: member(RoleMember), Permission: ProjectUpdate, Resource: &Resource{OwnerUserID: "usr_9"}}, StepResourceScope, fault.AccessDenied},

		// API keys.
		{"key with the route scope", Input{Principal: key(ScopeKeysWrite), Authority: member(RoleDeveloper), Permission: DeveloperAPIKeyManage, Scope: ScopeKeysWrite}, StepAllow, ""},
		{"key lacks the route scope", Input{Principal: key(ScopeKeysRead), Authority: member(RoleDeveloper), Permission: DeveloperAPIKeyManage, Scope: ScopeKeysWrite}, StepPermission, fault.AccessDenied},
		{"key whose creator lost the permission", Input{Principal: key(ScopeKeysWrite), Authority: member(RoleViewer), Permission: DeveloperAPIKeyManage, Scope: ScopeKeysWrite}, StepPermission, fault.AccessDenied},
		{"key whose creator was denied", Input{Principal: key(ScopeMusicGenerate), Authority: with(member(RoleCreator), func(a *Authority) { a.Denies = []Permission{TrackGenerate} }), Permission: TrackGenerate, Scope: ScopeMusicGenerate}, StepPermission, fault.AccessDenied},
		{"key whose creator left", Input{Principal: key(ScopeKeysWrite), Authority: with(member(RoleDeveloper), func(a *Authority) { a.MembershipStatus = "" }), Permission: DeveloperAPIKeyManage, Scope: ScopeKeysWrite}, StepMembership, fault.WorkspaceAccessDenied},
		{"key on a route without scope, permission by scope", Input{Principal: key(ScopeRead), Authority: member(RoleOwner), Permission: ProjectRead}, StepAllow, ""},
		{"key on a route without scope, no scope covers it", Input{Principal: key(ScopeRead), Authority: member(RoleOwner), Permission: TreasuryRead}, StepPermission, fault.AccessDenied},
		{"provider selection needs providers:select", Input{Principal: key(ScopeMusicGenerate), Authority: member(RoleCreator), Permission: TrackGenerate, Scope: ScopeProvidersSelect}, StepPermission, fault.AccessDenied},
		{"internal key on an internal route", Input{Principal: key(ScopeInternal), Permission: InternalEvents, Scope: ScopeInternal}, StepAllow, ""},
		{"internal scope is not a session's", Input{Principal: session(), Authority: member(RoleOwner), Permission: InternalEvents}, StepPermission, fault.AccessDenied},
		{"ordinary key on an internal route", Input{Principal: key(ScopeRead), Authority: member(RoleOwner), Permission: InternalEvents, Scope: ScopeInternal}, StepPermission, fault.AccessDenied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Evaluate(&c.in)
			if d.Step != c.wantStep {
				t.Errorf("step = %q, want %q (err %v)", d.Step, c.wantStep, d.Err)
			}
			if c.wantCode == "" {
				if !d.Allowed || d.Err != nil {
					t.Errorf("denied: %v", d.Err)
				}
				return
			}
			if d.Allowed || d.Err == nil {
				t.Fatalf("allowed, want %s", c.wantCode)
			}
			if got := fault.CodeOf(d.Err); got != c.wantCode {
				t.Errorf("code = %q, want %q", got, c.wantCode)
			}
		})
	}
}

func TestSteps(t *testing.T) {
	want := []string{StepAuthenticated, StepWorkspace, StepMembership, StepRoutePolicy, StepFeature,
		StepEntitlement, StepPermission, StepResourceScope, StepWorkflow, StepVerification, StepAllow}
	steps := Steps()
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for i, s := range steps {
		if s.Name != want[i] || s.CheckFunc == nil {
			t.Errorf("step %d = %q, want %q", i, s.Name, want[i])
		}
	}
}
