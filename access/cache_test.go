package access

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// fakeStore is an in-memory Store that counts loads. Changing a membership
// bumps the workspace's version, as the real store does in the same
// transaction.
type fakeStore struct {
	mu       sync.Mutex
	versions map[string]int64
	roles    map[string][]Role
	loads    int
	fail     error
}

var _ Store = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{versions: map[string]int64{}, roles: map[string][]Role{}}
}

func (f *fakeStore) setRoles(workspaceID, userID string, roles ...Role) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roles[workspaceID+"/"+userID] = roles
	f.versions[workspaceID]++
}

func (f *fakeStore) bumpGlobal() {
	f.mu.Lock()
	f.versions["global"]++
	f.mu.Unlock()
}

func (f *fakeStore) AuthzVersion(_ context.Context, workspaceID string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return 0, f.fail
	}
	return f.versions[workspaceID] + f.versions["global"], nil
}

func (f *fakeStore) AuthorityLoad(_ context.Context, tenantID, workspaceID, userID string, env Environment) (Authority, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	a := Authority{TenantID: tenantID, WorkspaceID: workspaceID, UserID: userID, Environment: env, WorkspaceState: WorkspaceActive,
		Version: f.versions[workspaceID] + f.versions["global"]}
	if r, ok := f.roles[workspaceID+"/"+userID]; ok {
		a.MembershipStatus = MembershipActive
		a.Roles = slices.Clone(r)
	}
	return a, nil
}

func (f *fakeStore) loadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

func TestCacheInvalidation(t *testing.T) {
	ctx := context.Background()
	s := newFakeStore()
	s.setRoles("ws_1", "usr_1", RoleOwner)
	c := NewCache(0)
	get := func() Authority {
		t.Helper()
		a, err := c.Get(ctx, s, "ten_1", "ws_1", "usr_1", Live)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	if a := get(); !a.HasRole(RoleOwner) {
		t.Fatalf("roles = %v", a.Roles)
	}
	get()
	if n := s.loadCount(); n != 1 {
		t.Errorf("loads after two Gets = %d, want 1", n)
	}

	// A role change is seen by the very next Get.
	s.setRoles("ws_1", "usr_1", RoleViewer)
	if a := get(); a.HasRole(RoleOwner) || !a.HasRole(RoleViewer) {
		t.Errorf("after change roles = %v", a.Roles)
	}
	if n := s.loadCount(); n != 2 {
		t.Errorf("loads = %d, want 2", n)
	}

	// A change of another workspace does not reload; a global one does.
	s.setRoles("ws_2", "usr_1", RoleOwner)
	get()
	if n := s.loadCount(); n != 2 {
		t.Errorf("loads after other workspace's change = %d, want 2", n)
	}
	s.bumpGlobal()
	get()
	if n := s.loadCount(); n != 3 {
		t.Errorf("loads after global change = %d, want 3", n)
	}
}

// TestCacheEnvironment: test and live snapshots of one user are distinct
// entries, each loaded for its environment.
func TestCacheEnvironment(t *testing.T) {
	ctx := context.Background()
	s := newFakeStore()
	s.setRoles("ws_1", "usr_1", RoleOwner)
	c := NewCache(0)
	for _, env := range []Environment{Test, Live, Test, Live} {
		a, err := c.Get(ctx, s, "ten_1", "ws_1", "usr_1", env)
		if err != nil {
			t.Fatal(err)
		}
		if a.Environment != env {
			t.Errorf("snapshot environment = %q, want %q", a.Environment, env)
		}
	}
	if n := s.loadCount(); n != 2 {
		t.Errorf("loads = %d, want 2 (one per environment)", n)
	}
}

func TestCacheError(t *testing.T) {
	s := newFakeStore()
	s.fail = fault.E("test", fault.ServiceUnavailable, "")
	_, err := NewCache(0).Get(context.Background(), s, "ten_1", "ws_1", "usr_1", Live)
	if got := fault.CodeOf(err); got != fault.ServiceUnavailable {
		t.Errorf("code = %q, want SERVICE_UNAVAILABLE", got)
	}
}

func TestCacheBounded(t *testing.T) {
	ctx := context.Background()
	s := newFakeStore()
	var c Cache
	c.Size = 8
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(ctx, s, "ten_1", "ws_1", fmt.Sprintf("usr_%d", i), Live); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := c.Len(); n > 8 || n == 0 {
		t.Errorf("Len = %d, want 1..8", n)
	}
}
