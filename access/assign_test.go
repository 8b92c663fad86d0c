package access

import "testing"

// project is project id of ws_1 owned by owner, as the project itself.
func project(id, owner string) *Resource {
	return &Resource{OwnerUserID: owner, ProjectID: id, IsProject: true, WorkspaceID: "ws_1"}
}

// assigned returns a with a project-scoped assignment of t to project id.
func assigned(a *Authority, t Template, id string) *Authority {
	return with(a, func(a *Authority) { a.Assignments = append(a.Assignments, Assignment{Template: t, ProjectID: id}) })
}

// TestProjectReachesItsAssignees: a project-scoped assignment makes its
// holder assigned to the project itself, so assigned grants (the
// collaborator's, a MEMBER's) reach it; not another project, not a
// resource inside the project that is someone else's, and not without
// the assignment.
func TestProjectReachesItsAssignees(t *testing.T) {
	p := session()
	inside := &Resource{OwnerUserID: "usr_9", ProjectID: "prj_1", WorkspaceID: "ws_1"}
	cases := []struct {
		name string
		a    *Authority
		perm Permission
		r    *Resource
		want bool
	}{
		{"collaborator reads its project", assigned(member(), TemplateCollaborator, "prj_1"), ProjectRead, project("prj_1", "usr_9"), true},
		{"collaborator updates its project", assigned(member(), TemplateCollaborator, "prj_1"), ProjectUpdate, project("prj_1", "usr_9"), true},
		{"collaborator cannot publish", assigned(member(), TemplateCollaborator, "prj_1"), ProjectPublish, project("prj_1", "usr_9"), false},
		{"collaborator of another project", assigned(member(), TemplateCollaborator, "prj_2"), ProjectRead, project("prj_1", "usr_9"), false},
		{"another's resource inside the project", assigned(member(), TemplateCollaborator, "prj_1"), ProjectUpdate, inside, false},
		{"the project not marked as itself", assigned(member(), TemplateCollaborator, "prj_1"), ProjectUpdate,
			&Resource{OwnerUserID: "usr_9", ProjectID: "prj_1", WorkspaceID: "ws_1"}, false},
		{"a MEMBER's assigned grant reaches it", assigned(member(RoleMember), TemplateCreator, "prj_1"), ProjectUpdate, project("prj_1", "usr_9"), true},
		{"a MEMBER without an assignment", member(RoleMember), ProjectUpdate, project("prj_1", "usr_9"), false},
		{"creator template reads the project", assigned(member(), TemplateCreator, "prj_1"), ProjectRead, project("prj_1", "usr_9"), true},
		{"project lead publishes its project", assigned(member(), TemplateProjectLead, "prj_1"), ProjectPublish, project("prj_1", "usr_9"), true},
		{"project lead publishes no other", assigned(member(), TemplateProjectLead, "prj_1"), ProjectPublish, project("prj_2", "usr_9"), false},
		{"a suspended collaborator", with(assigned(member(), TemplateCollaborator, "prj_1"), func(a *Authority) { a.MembershipStatus = MembershipSuspended }),
			ProjectRead, project("prj_1", "usr_9"), false},
		{"a deny beats the assignment", with(assigned(member(), TemplateCollaborator, "prj_1"), func(a *Authority) { a.Denies = []Permission{ProjectUpdate} }),
			ProjectUpdate, project("prj_1", "usr_9"), false},
	}
	for _, c := range cases {
		if got := c.a.Reaches(p, c.perm, c.r); got != c.want {
			t.Errorf("%s: Reaches(%s) = %v, want %v", c.name, c.perm, got, c.want)
		}
	}
}

// TestCanAssign pins who may give which project template: no one hands
// out a permission it does not hold on the project.
func TestCanAssign(t *testing.T) {
	mine, others := project("prj_1", "usr_1"), project("prj_1", "usr_9")
	elsewhere := &Resource{OwnerUserID: "usr_1", ProjectID: "prj_1", IsProject: true, WorkspaceID: "ws_2"}
	cases := []struct {
		name    string
		p       *Principal
		a       *Authority
		t       Template
		r       *Resource
		ok      bool
		missing Permission
	}{
		{"creator owner gives collaborator", session(), member(RoleCreator), TemplateCollaborator, mine, true, ""},
		{"creator owner gives creator", session(), member(RoleCreator), TemplateCreator, mine, true, ""},
		{"creator owner cannot give project lead", session(), member(RoleCreator), TemplateProjectLead, mine, false, RewardAllocate},
		{"creator on another's project", session(), member(RoleCreator), TemplateCollaborator, others, false, ProjectUpdate},
		{"member lead gives collaborator", session(), assigned(member(RoleMember), TemplateProjectLead, "prj_1"), TemplateCollaborator, others, true, ""},
		{"member lead gives project lead", session(), assigned(member(RoleMember), TemplateProjectLead, "prj_1"), TemplateProjectLead, others, true, ""},
		{"lead of another project", session(), assigned(member(RoleMember), TemplateProjectLead, "prj_2"), TemplateCollaborator, others, false, ProjectRead},
		{"viewer lead holds no reward.claim", session(), assigned(member(RoleViewer), TemplateProjectLead, "prj_1"), TemplateCollaborator, others, false, RewardClaim},
		{"admin gives project lead", session(), member(RoleAdmin), TemplateProjectLead, others, true, ""},
		{"owner with a deny", session(), with(member(RoleOwner), func(a *Authority) { a.Denies = []Permission{RewardAllocate} }),
			TemplateProjectLead, others, false, RewardAllocate},
		{"a key narrows the owner", key(ScopeProjectsWrite), member(RoleOwner), TemplateCollaborator, others, false, ProjectRead},
		{"another workspace", session(), member(RoleOwner), TemplateCollaborator, elsewhere, false, ProjectRead},
		{"unknown template", session(), member(RoleOwner), "root", others, false, ""},
		{"no authority", session(), nil, TemplateCollaborator, others, false, ""},
	}
	for _, c := range cases {
		missing, ok := c.a.CanAssign(c.p, c.t, c.r)
		if ok != c.ok || missing != c.missing {
			t.Errorf("%s: CanAssign = %q, %v; want %q, %v", c.name, missing, ok, c.missing, c.ok)
		}
	}
}
