package access

import (
	"slices"
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestRoleTable(t *testing.T) {
	table := RoleTable()
	if len(table) != len(Roles()) {
		t.Fatalf("%d rows, want one per role", len(table))
	}
	for _, row := range table {
		if !row.Role.Valid() || len(row.Grants) == 0 {
			t.Errorf("role %q: invalid or no grants", row.Role)
		}
		for _, g := range row.Grants {
			if !g.Permission.Valid() || !g.Scope.Valid() {
				t.Errorf("role %s: invalid grant %+v", row.Role, g)
			}
			if g.Scope == GrantAny || g.Permission == InternalEvents {
				t.Errorf("role %s: privileged grant %+v", row.Role, g)
			}
		}
	}
}

func TestOwnerHoldsAllButInternal(t *testing.T) {
	a := member(RoleOwner)
	for _, p := range Permissions() {
		_, ok := a.Has(p)
		if ok != (p != InternalEvents) {
			t.Errorf("OWNER Has(%s) = %v", p, ok)
		}
	}
}

func TestAdminLacksOwnerOnly(t *testing.T) {
	a := member(RoleAdmin)
	for _, p := range []Permission{TreasuryManage, BillingManage, InternalEvents} {
		if _, ok := a.Has(p); ok {
			t.Errorf("ADMIN holds %s", p)
		}
	}
	if s, ok := a.Has(MemberManage); !ok || s != GrantWorkspace {
		t.Errorf("ADMIN member.manage = %q, %v", s, ok)
	}
}

func TestDeveloperRole(t *testing.T) {
	a := member(RoleDeveloper)
	forbidden := []Permission{TreasuryRead, TreasuryManage, BillingRead, BillingManage, MemberInvite,
		MemberManage, WalletSign, AuditRead, FeePolicyRead, RewardAllocate, RewardReconcile, InternalEvents}
	for _, p := range forbidden {
		if _, ok := a.Has(p); ok {
			t.Errorf("DEVELOPER holds %s", p)
		}
	}
	want := append(developerPermissions(), WorkspaceRead, ProjectRead)
	slices.Sort(want)
	if got := a.Effective(); !slices.Equal(got, want) {
		t.Errorf("DEVELOPER effective = %v, want %v", got, want)
	}
	if s, _ := a.Has(ProjectRead); s != GrantOwn {
		t.Errorf("DEVELOPER project.read scope = %q, want own", s)
	}
}

func TestFinanceRole(t *testing.T) {
	a := member(RoleFinance)
	for _, p := range []Permission{TreasuryRead, BillingRead, AuditRead} {
		if _, ok := a.Has(p); !ok {
			t.Errorf("FINANCE lacks %s", p)
		}
	}
	for _, p := range []Permission{TreasuryManage, BillingManage, WalletSign} {
		if _, ok := a.Has(p); ok {
			t.Errorf("FINANCE holds %s", p)
		}
	}
}

func TestTemplates(t *testing.T) {
	ts := Templates()
	if len(ts) != 9 {
		t.Fatalf("%d templates, want 9", len(ts))
	}
	for _, s := range ts {
		if s.Title == "" || len(s.Grants) == 0 || (s.DefaultScope != AssignWorkspace && s.DefaultScope != AssignProject) {
			t.Errorf("template %q incomplete", s.Name)
		}
		for _, g := range s.Grants {
			if !g.Permission.Valid() || !g.Scope.Valid() || g.Scope == GrantAny || g.Permission == InternalEvents {
				t.Errorf("template %s: bad grant %+v", s.Name, g)
			}
		}
	}
	if err := ValidateAssignment(TemplateOwner, "prj_1"); fault.CodeOf(err) != fault.InvalidInput {
		t.Errorf("owner on a project: %v", err)
	}
	if err := ValidateAssignment("root", ""); fault.CodeOf(err) != fault.InvalidInput {
		t.Errorf("unknown template: %v", err)
	}
	if err := ValidateAssignment(TemplateCollaborator, "prj_1"); err != nil {
		t.Errorf("collaborator on a project: %v", err)
	}
}

func TestAuthorityProjectAssignment(t *testing.T) {
	// A project-scoped Analyst assignment caps workspace grants at project.
	a := with(member(RoleMember), func(a *Authority) { a.Assignments = []Assignment{{TemplateAnalyst, "prj_1"}} })
	if s, ok := a.Has(DeveloperUsageRead); !ok || s != GrantProject {
		t.Errorf("usage.read = %q, %v; want project", s, ok)
	}
	if !a.reaches(DeveloperUsageRead, &Resource{ProjectID: "prj_1"}) || a.reaches(DeveloperUsageRead, &Resource{ProjectID: "prj_2"}) {
		t.Error("project-bound grant reaches the wrong projects")
	}
}

func TestEffectiveAndSafe(t *testing.T) {
	a := with(member(RoleViewer, RoleFinance), func(a *Authority) {
		a.Denies = []Permission{AuditRead}
		a.Assignments = []Assignment{{TemplateSupport, ""}}
	})
	eff := a.Effective()
	if !slices.IsSorted(eff) || slices.Contains(eff, AuditRead) || !slices.Contains(eff, DeveloperLogsRead) {
		t.Errorf("effective = %v", eff)
	}
	if len(a.SafePermissions()) != len(eff) {
		t.Errorf("safe = %v", a.SafePermissions())
	}
	// A suspended member holds nothing.
	a.MembershipStatus = MembershipSuspended
	if len(a.Effective()) != 0 || a.HasRole(RoleViewer) {
		t.Errorf("suspended member holds %v", a.Effective())
	}
}
