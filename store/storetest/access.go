package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAccess runs the contract cases of the access adapter: authority
// snapshots, version bumps and the writers of tenants, workspaces, users,
// memberships, assignments, denies, entitlements, flags, platform roles and
// wallet links.
func exerciseAccess(t *testing.T, open Opener) {
	t.Run("AuthorityLoad", func(t *testing.T) { accessAuthorityLoad(t, open) })
	t.Run("VersionBumps", func(t *testing.T) { accessVersionBumps(t, open) })
	t.Run("Isolation", func(t *testing.T) { accessIsolation(t, open) })
	t.Run("Records", func(t *testing.T) { accessRecords(t, open) })
	t.Run("Errors", func(t *testing.T) { accessErrors(t, open) })
	t.Run("Cache", func(t *testing.T) { accessCache(t, open) })
}

// accessSeed creates tenant ten_1 with workspaces ws_1 and ws_2, users
// usr_1 and usr_2, and usr_1 a member of ws_1 with OWNER and DEVELOPER.
func accessSeed(t *testing.T, db *store.DB) {
	t.Helper()
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for _, f := range []func() error{
			func() error { return tx.TenantInsert(ctx, "ten_1", "Tenant One") },
			func() error { return tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "One") },
			func() error { return tx.WorkspaceInsert(ctx, "ws_2", "ten_1", "Two") },
			func() error { return tx.UserInsert(ctx, "usr_1", "ten_1", "one@example.com", "One") },
			func() error { return tx.UserInsert(ctx, "usr_2", "ten_1", "two@example.com", "Two") },
			func() error {
				return tx.MembershipInsert(ctx, "ws_1", "usr_1", []access.Role{access.RoleOwner, access.RoleDeveloper})
			},
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
}

// accessTx runs fn in one transaction and fails t on error.
func accessTx(t *testing.T, db *store.DB, fn func(ctx context.Context, tx *store.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx *store.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

// accessLoad returns the authority of userID in workspaceID of ten_1.
func accessLoad(t *testing.T, db *store.DB, workspaceID, userID string) access.Authority {
	t.Helper()
	a, err := db.Read().AuthorityLoad(context.Background(), "ten_1", workspaceID, userID, access.Live)
	if err != nil {
		t.Fatalf("AuthorityLoad: %v", err)
	}
	return a
}

// accessVersion returns the authority version of workspaceID.
func accessVersion(t *testing.T, db *store.DB, workspaceID string) int64 {
	t.Helper()
	v, err := db.Read().AuthzVersion(context.Background(), workspaceID)
	if err != nil {
		t.Fatalf("AuthzVersion: %v", err)
	}
	return v
}

func accessAuthorityLoad(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for _, f := range []func() error{
			func() error {
				return tx.AssignmentInsert(ctx, "ws_1", "usr_1", string(access.TemplateProjectLead), "prj_1")
			},
			func() error { return tx.AssignmentInsert(ctx, "ws_1", "usr_1", string(access.TemplateAnalyst), "") },
			func() error { return tx.DenyInsert(ctx, "ws_1", "usr_1", access.TreasuryManage) },
			func() error { return tx.EntitlementSet(ctx, "ws_1", "ai.basic", "grant", "", true) },
			func() error { return tx.EntitlementSet(ctx, "ws_1", "ai.basic", "plan:free", "test", true) },
			func() error { return tx.EntitlementSet(ctx, "ws_1", "marketplace.sell", "plan:pro", "live", true) },
			func() error { return tx.EntitlementSet(ctx, "ws_1", "ai.pro_models", "plan:pro", "test", true) },
			func() error { return tx.EntitlementSet(ctx, "ws_2", "analytics.advanced", "plan:pro", "live", true) },
			func() error { return tx.FlagSet(ctx, "swap", "", true) },
			func() error { return tx.FlagSet(ctx, "studio", "", true) },
			func() error { return tx.FlagSet(ctx, "studio", "ws_1", false) },
			func() error { return tx.FlagSet(ctx, "beta", "ws_1", true) },
			func() error { return tx.FlagSet(ctx, "other", "ws_2", true) },
			func() error { return tx.PlatformRoleGrant(ctx, "usr_1", access.SuperAdmin) },
			func() error {
				return tx.WalletLinkInsert(ctx, store.NewWalletLinkID(), "ten_1", "usr_1", "solana", "Addr1")
			},
			func() error {
				return tx.WalletLinkInsert(ctx, store.NewWalletLinkID(), "ten_1", "usr_1", "solana", "Addr2")
			},
			func() error {
				return tx.WalletLinkInsert(ctx, store.NewWalletLinkID(), "ten_1", "usr_2", "solana", "Addr3")
			},
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})

	a := accessLoad(t, db, "ws_1", "usr_1")
	if a.TenantID != "ten_1" || a.WorkspaceID != "ws_1" || a.UserID != "usr_1" {
		t.Errorf("identity = %q/%q/%q", a.TenantID, a.WorkspaceID, a.UserID)
	}
	if a.WorkspaceState != access.WorkspaceActive || a.MembershipStatus != access.MembershipActive {
		t.Errorf("state = %q, membership = %q", a.WorkspaceState, a.MembershipStatus)
	}
	if !slices.Equal(a.Roles, []access.Role{access.RoleDeveloper, access.RoleOwner}) {
		t.Errorf("roles = %v", a.Roles)
	}
	wantAs := []access.Assignment{{Template: access.TemplateAnalyst}, {Template: access.TemplateProjectLead, ProjectID: "prj_1"}}
	if !slices.Equal(a.Assignments, wantAs) {
		t.Errorf("assignments = %v, want %v", a.Assignments, wantAs)
	}
	if !slices.Equal(a.Denies, []access.Permission{access.TreasuryManage}) {
		t.Errorf("denies = %v", a.Denies)
	}
	if a.Environment != access.Live || !slices.Equal(a.Entitlements, []string{"ai.basic", "marketplace.sell"}) {
		t.Errorf("live entitlements = %v (environment %q)", a.Entitlements, a.Environment)
	}
	// The test environment holds the rows of both environments and its own.
	ta, err := db.Read().AuthorityLoad(context.Background(), "ten_1", "ws_1", "usr_1", access.Test)
	if err != nil {
		t.Fatalf("AuthorityLoad(test): %v", err)
	}
	if ta.Environment != access.Test || !slices.Equal(ta.Entitlements, []string{"ai.basic", "ai.pro_models"}) {
		t.Errorf("test entitlements = %v (environment %q)", ta.Entitlements, ta.Environment)
	}
	if err := db.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.EntitlementSet(context.Background(), "ws_1", "ai.pro_models", "plan:pro", "staging", true)
	}); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("EntitlementSet(staging) = %v, want INVALID_INPUT", err)
	}
	wantFlags := map[string]bool{"swap": true, "studio": false, "beta": true}
	if len(a.Flags) != len(wantFlags) {
		t.Errorf("flags = %v, want %v", a.Flags, wantFlags)
	}
	for k, v := range wantFlags {
		if got, ok := a.Flags[k]; !ok || got != v {
			t.Errorf("flag %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if !a.SuperAdmin {
		t.Error("SuperAdmin = false")
	}
	if a.WalletCount != 2 {
		t.Errorf("WalletCount = %d, want 2", a.WalletCount)
	}
	if a.Version != accessVersion(t, db, "ws_1") {
		t.Errorf("Version = %d, want %d", a.Version, accessVersion(t, db, "ws_1"))
	}
	if _, ok := a.Has(access.TreasuryManage); ok {
		t.Error("denied treasury.manage is held")
	}
	if _, ok := a.Has(access.TreasuryRead); !ok {
		t.Error("treasury.read not held by OWNER")
	}
}

func accessVersionBumps(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	changes := []struct {
		name    string
		runFunc func(ctx context.Context, tx *store.Tx) error
	}{
		{"membership", func(ctx context.Context, tx *store.Tx) error {
			return tx.MembershipInsert(ctx, "ws_1", "usr_2", []access.Role{access.RoleViewer})
		}},
		{"roles", func(ctx context.Context, tx *store.Tx) error {
			return tx.MembershipRolesSet(ctx, "ws_1", "usr_2", []access.Role{access.RoleFinance})
		}},
		{"status", func(ctx context.Context, tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, "ws_1", "usr_2", access.MembershipSuspended)
		}},
		{"assignment", func(ctx context.Context, tx *store.Tx) error {
			return tx.AssignmentInsert(ctx, "ws_1", "usr_2", string(access.TemplateCreator), "prj_9")
		}},
		{"assignment delete", func(ctx context.Context, tx *store.Tx) error {
			return tx.AssignmentDelete(ctx, "ws_1", "usr_2", string(access.TemplateCreator), "prj_9")
		}},
		{"deny", func(ctx context.Context, tx *store.Tx) error {
			return tx.DenyInsert(ctx, "ws_1", "usr_2", access.AuditRead)
		}},
		{"deny delete", func(ctx context.Context, tx *store.Tx) error {
			return tx.DenyDelete(ctx, "ws_1", "usr_2", access.AuditRead)
		}},
		{"entitlement on", func(ctx context.Context, tx *store.Tx) error {
			return tx.EntitlementSet(ctx, "ws_1", "ai.pro_models", "plan:pro", "test", true)
		}},
		{"entitlement off", func(ctx context.Context, tx *store.Tx) error {
			return tx.EntitlementSet(ctx, "ws_1", "ai.pro_models", "", "test", false)
		}},
		{"workspace flag", func(ctx context.Context, tx *store.Tx) error { return tx.FlagSet(ctx, "swap", "ws_1", true) }},
		{"platform flag", func(ctx context.Context, tx *store.Tx) error { return tx.FlagSet(ctx, "swap", "", false) }},
		{"platform role", func(ctx context.Context, tx *store.Tx) error {
			return tx.PlatformRoleGrant(ctx, "usr_2", access.SuperAdmin)
		}},
		{"platform role revoke", func(ctx context.Context, tx *store.Tx) error {
			return tx.PlatformRoleRevoke(ctx, "usr_2", access.SuperAdmin)
		}},
		{"wallet link", func(ctx context.Context, tx *store.Tx) error {
			return tx.WalletLinkInsert(ctx, store.NewWalletLinkID(), "ten_1", "usr_1", "solana", "AddrX")
		}},
		{"workspace state", func(ctx context.Context, tx *store.Tx) error {
			return tx.WorkspaceStateSet(ctx, "ws_1", access.WorkspaceSuspended)
		}},
		{"explicit bump", func(ctx context.Context, tx *store.Tx) error { return tx.AuthzBump(ctx, "ws_1") }},
	}
	for _, c := range changes {
		before := accessVersion(t, db, "ws_1")
		accessTx(t, db, c.runFunc)
		if after := accessVersion(t, db, "ws_1"); after <= before {
			t.Errorf("%s: version %d -> %d, want an increase", c.name, before, after)
		}
	}

	// A change of ws_2 does not invalidate ws_1; a platform change does.
	before := accessVersion(t, db, "ws_1")
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error { return tx.FlagSet(ctx, "x", "ws_2", true) })
	if after := accessVersion(t, db, "ws_1"); after != before {
		t.Errorf("ws_2 change moved ws_1's version %d -> %d", before, after)
	}

	// A rolled-back change bumps nothing.
	before = accessVersion(t, db, "ws_1")
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		if err := tx.FlagSet(context.Background(), "y", "ws_1", true); err != nil {
			return err
		}
		return fault.E("test", fault.Conflict, "")
	})
	if !fault.Is(err, fault.Conflict) {
		t.Fatalf("rollback err = %v", err)
	}
	if after := accessVersion(t, db, "ws_1"); after != before {
		t.Errorf("rolled-back change moved version %d -> %d", before, after)
	}
}

func accessIsolation(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_2", "Tenant Two"); err != nil {
			return err
		}
		if err := tx.WorkspaceInsert(ctx, "ws_9", "ten_2", "Other tenant"); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, "ws_2", "usr_2", []access.Role{access.RoleAdmin}); err != nil {
			return err
		}
		return tx.DenyInsert(ctx, "ws_2", "usr_1", access.ProjectRead)
	})

	// usr_1's membership of ws_1 is not visible from ws_2, nor ws_2's deny from ws_1.
	a := accessLoad(t, db, "ws_2", "usr_1")
	if a.MembershipStatus != "" || len(a.Roles) != 0 || len(a.Effective()) != 0 {
		t.Errorf("usr_1 in ws_2: membership %q roles %v", a.MembershipStatus, a.Roles)
	}
	if b := accessLoad(t, db, "ws_1", "usr_1"); len(b.Denies) != 0 {
		t.Errorf("ws_2's deny visible in ws_1: %v", b.Denies)
	}
	if b := accessLoad(t, db, "ws_1", "usr_2"); b.MembershipStatus != "" {
		t.Errorf("usr_2 in ws_1: membership %q", b.MembershipStatus)
	}

	// Unknown workspace, or another tenant's: a snapshot without workspace
	// state or membership, not an error.
	for _, ws := range []string{"ws_missing", "ws_9"} {
		u := accessLoad(t, db, ws, "usr_1")
		if u.WorkspaceState != "" || u.MembershipStatus != "" || len(u.Roles) != 0 {
			t.Errorf("%s: state %q membership %q roles %v", ws, u.WorkspaceState, u.MembershipStatus, u.Roles)
		}
	}
}

func accessRecords(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	ctx := context.Background()
	w, err := db.Read().WorkspaceGet(ctx, "ten_1", "ws_1")
	if err != nil {
		t.Fatalf("WorkspaceGet: %v", err)
	}
	if w.ID != "ws_1" || w.TenantID != "ten_1" || w.Name != "One" || w.State != access.WorkspaceActive || !w.CreatedAt.Equal(Epoch) {
		t.Errorf("workspace = %+v", w)
	}
	u, err := db.Read().UserGet(ctx, "ten_1", "usr_1")
	if err != nil {
		t.Fatalf("UserGet: %v", err)
	}
	if u.ID != "usr_1" || u.Email != "one@example.com" || u.DisplayName != "One" || !u.CreatedAt.Equal(Epoch) {
		t.Errorf("user = %+v", u)
	}
	if u2, err := db.Read().UserGetByEmail(ctx, "two@example.com"); err != nil || u2.ID != "usr_2" {
		t.Errorf("UserGetByEmail = %+v, %v", u2, err)
	}
}

func accessErrors(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	ctx := context.Background()
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.WalletLinkInsert(ctx, "wl_a", "ten_1", "usr_1", "solana", "Addr1")
	})
	cases := []struct {
		name    string
		runFunc func(tx *store.Tx) error
		want    fault.Code
	}{
		{"workspace of another tenant", func(tx *store.Tx) error { _, err := tx.WorkspaceGet(ctx, "ten_2", "ws_1"); return err }, fault.NotFound},
		{"unknown workspace", func(tx *store.Tx) error { _, err := tx.WorkspaceGet(ctx, "ten_1", "ws_x"); return err }, fault.NotFound},
		{"unknown user", func(tx *store.Tx) error { _, err := tx.UserGet(ctx, "ten_1", "usr_x"); return err }, fault.NotFound},
		{"unknown email", func(tx *store.Tx) error { _, err := tx.UserGetByEmail(ctx, "x@example.com"); return err }, fault.NotFound},
		{"duplicate email", func(tx *store.Tx) error { return tx.UserInsert(ctx, "usr_3", "ten_1", "one@example.com", "Dup") }, fault.Conflict},
		{"duplicate membership", func(tx *store.Tx) error {
			return tx.MembershipInsert(ctx, "ws_1", "usr_1", []access.Role{access.RoleViewer})
		}, fault.Conflict},
		{"unknown role", func(tx *store.Tx) error { return tx.MembershipInsert(ctx, "ws_2", "usr_1", []access.Role{"ROOT"}) }, fault.InvalidInput},
		{"no roles", func(tx *store.Tx) error { return tx.MembershipInsert(ctx, "ws_2", "usr_1", nil) }, fault.InvalidInput},
		{"roles without membership", func(tx *store.Tx) error {
			return tx.MembershipRolesSet(ctx, "ws_2", "usr_1", []access.Role{access.RoleViewer})
		}, fault.NotFound},
		{"status without membership", func(tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, "ws_2", "usr_1", access.MembershipSuspended)
		}, fault.NotFound},
		{"unknown status", func(tx *store.Tx) error { return tx.MembershipStatusSet(ctx, "ws_1", "usr_1", "gone") }, fault.InvalidInput},
		{"unknown template", func(tx *store.Tx) error { return tx.AssignmentInsert(ctx, "ws_1", "usr_1", "root", "") }, fault.InvalidInput},
		{"owner template on a project", func(tx *store.Tx) error {
			return tx.AssignmentInsert(ctx, "ws_1", "usr_1", string(access.TemplateOwner), "prj_1")
		}, fault.InvalidInput},
		{"assignment without membership", func(tx *store.Tx) error {
			return tx.AssignmentInsert(ctx, "ws_2", "usr_1", string(access.TemplateViewer), "")
		}, fault.NotFound},
		{"unknown deny", func(tx *store.Tx) error { return tx.DenyInsert(ctx, "ws_1", "usr_1", "root.all") }, fault.InvalidInput},
		{"platform role other than super_admin", func(tx *store.Tx) error { return tx.PlatformRoleGrant(ctx, "usr_1", "root") }, fault.InvalidInput},
		{"wallet of another user", func(tx *store.Tx) error {
			return tx.WalletLinkInsert(ctx, "wl_b", "ten_1", "usr_2", "solana", "Addr1")
		}, fault.Conflict},
	}
	for _, c := range cases {
		err := db.InTx(ctx, c.runFunc)
		if got := fault.CodeOf(err); got != c.want {
			t.Errorf("%s: code %q, want %q (err %v)", c.name, got, c.want, err)
		}
	}
	// The same wallet linked again to its user is a no-op.
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.WalletLinkInsert(ctx, "wl_c", "ten_1", "usr_1", "solana", "Addr1")
	})
	if a := accessLoad(t, db, "ws_1", "usr_1"); a.WalletCount != 1 {
		t.Errorf("WalletCount = %d, want 1", a.WalletCount)
	}
}

// accessCache checks that access.Cache over the real store sees a role
// change on the very next Get.
func accessCache(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	accessSeed(t, db)
	ctx := context.Background()
	c := access.NewCache(0)
	a, err := c.Get(ctx, db.Read(), "ten_1", "ws_1", "usr_1", access.Live)
	if err != nil {
		t.Fatal(err)
	}
	if !a.HasRole(access.RoleOwner) {
		t.Fatalf("roles = %v", a.Roles)
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.MembershipRolesSet(ctx, "ws_1", "usr_1", []access.Role{access.RoleViewer})
	})
	a, err = c.Get(ctx, db.Read(), "ten_1", "ws_1", "usr_1", access.Live)
	if err != nil {
		t.Fatal(err)
	}
	if a.HasRole(access.RoleOwner) || !a.HasRole(access.RoleViewer) {
		t.Errorf("after change roles = %v", a.Roles)
	}
}
