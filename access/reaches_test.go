package access

import "testing"

// TestReaches pins Authority.Reaches, which a domain asks for the
// permission of one move: the grant's scope decides which resources it
// covers, a deny beats every grant, and an API key also needs a scope
// that stands for the permission.
func TestReaches(t *testing.T) {
	session := &Principal{Kind: CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: Test}
	own := &Resource{OwnerUserID: "usr_1", ProjectID: "prj_1", WorkspaceID: "ws_1"}
	other := &Resource{OwnerUserID: "usr_2", ProjectID: "prj_2", WorkspaceID: "ws_1"}
	elsewhere := &Resource{OwnerUserID: "usr_1", ProjectID: "prj_3", WorkspaceID: "ws_2"}
	cases := []struct {
		name string
		p    *Principal
		a    *Authority
		perm Permission
		r    *Resource
		want bool
	}{
		{"creator publishes its own", session, member(RoleCreator), ProjectPublish, own, true},
		{"creator publishes another's", session, member(RoleCreator), ProjectPublish, other, false},
		{"moderator updates another's", session, member(RoleModerator), ProjectUpdate, other, true},
		{"moderator publishes nothing", session, member(RoleModerator), ProjectPublish, own, false},
		{"member updates its own", session, member(RoleMember), ProjectUpdate, own, true},
		{"member updates another's", session, member(RoleMember), ProjectUpdate, other, false},
		{"viewer updates nothing", session, member(RoleViewer), ProjectUpdate, own, false},
		{"owner reaches no other workspace", session, member(RoleOwner), ProjectUpdate, elsewhere, false},
		{"a deny beats the owner", session, with(member(RoleOwner), func(a *Authority) { a.Denies = []Permission{ProjectPublish} }),
			ProjectPublish, own, false},
		{"a key with projects:write updates", key(ScopeProjectsWrite), member(RoleOwner), ProjectUpdate, other, true},
		{"no key scope stands for publish", key(ScopeProjectsWrite, ScopeRead), member(RoleOwner), ProjectPublish, own, false},
		{"a key without projects:write", key(ScopeRead), member(RoleOwner), ProjectUpdate, own, false},
		{"no authority", session, nil, ProjectRead, own, false},
	}
	for _, c := range cases {
		if got := c.a.Reaches(c.p, c.perm, c.r); got != c.want {
			t.Errorf("%s: Reaches = %v, want %v", c.name, got, c.want)
		}
	}
}
