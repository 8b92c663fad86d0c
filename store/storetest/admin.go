package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAdmin runs the contract cases of administration: the audit log,
// member listing, owner counts, onboarding records and moving a user into
// another tenant.
func exerciseAdmin(t *testing.T, open Opener) {
	t.Run("Audit", func(t *testing.T) { adminAudit(t, open) })
	t.Run("Members", func(t *testing.T) { adminMembers(t, open) })
	t.Run("Onboarding", func(t *testing.T) { adminOnboarding(t, open) })
	t.Run("TenantMove", func(t *testing.T) { adminTenantMove(t, open) })
}

func adminAudit(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	actor := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test,
		UserID: "usr_1", KeyID: "key_1"}
	testScope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	var ids []string
	for i, action := range []string{"a.one", "a.two", "a.three"} {
		accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
			e := account.AuditEntry{Action: action, TargetType: account.TargetUser, TargetID: "usr_2", RequestID: "req_" + action}
			if i > 0 {
				e.Before, e.After = account.RolesState{Roles: []access.Role{access.RoleViewer}}, account.RolesState{Roles: []access.Role{access.RoleAdmin}}
			}
			return account.Audit(ctx, tx, actor, e)
		})
		clock.Advance(time.Second)
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return account.Audit(ctx, tx, nil, account.AuditEntry{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test,
			Action: "other", TargetType: "user", TargetID: "usr_1"})
	})
	// The same workspace's live events: a live principal's, and the
	// platform's own work on a live record.
	liveActor := *actor
	liveActor.Environment, liveActor.KeyID = access.Live, "key_live"
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return account.Audit(ctx, tx, &liveActor, account.AuditEntry{Action: "live.one", TargetType: "user", TargetID: "usr_2"})
	})
	clock.Advance(time.Second)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return account.Audit(ctx, tx, nil, account.AuditEntry{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live,
			Action: "live.two", TargetType: "subscription", TargetID: "sub_1"})
	})
	page, err := db.Read().AuditList(ctx, testScope, "", 2)
	if err != nil || len(page) != 2 {
		t.Fatalf("AuditList = %d events, %v", len(page), err)
	}
	if page[0].Action != "a.three" || page[1].Action != "a.two" {
		t.Fatalf("not newest first: %s, %s", page[0].Action, page[1].Action)
	}
	e := page[0]
	if e.ActorUserID != "usr_1" || e.ActorKeyID != "key_1" || e.RequestID != "req_a.three" || e.TargetID != "usr_2" || e.CreatedAt.IsZero() ||
		e.Environment != access.Test {
		t.Fatalf("event = %+v", e)
	}
	var before, after account.RolesState
	if json.Unmarshal(e.Before, &before) != nil || json.Unmarshal(e.After, &after) != nil ||
		!slices.Equal(before.Roles, []access.Role{access.RoleViewer}) || !slices.Equal(after.Roles, []access.Role{access.RoleAdmin}) {
		t.Fatalf("before %s after %s", e.Before, e.After)
	}
	ids = append(ids, page[0].ID, page[1].ID)
	rest, err := db.Read().AuditList(ctx, testScope, ids[1], 10)
	if err != nil || len(rest) != 1 || rest[0].Action != "a.one" || rest[0].Before != nil || rest[0].After != nil {
		t.Fatalf("second page = %+v, %v", rest, err)
	}
	if other, err := db.Read().AuditList(ctx, access.Scope{TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test}, "", 10); err != nil || len(other) != 0 {
		t.Fatalf("another tenant reads %d events, %v", len(other), err)
	}
	if other, err := db.Read().AuditList(ctx, access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}, "", 10); err != nil ||
		len(other) != 1 || other[0].ActorUserID != "" {
		t.Fatalf("ws_2 = %+v, %v", other, err)
	}
	// Each environment reads its own events only.
	all, err := db.Read().AuditList(ctx, testScope, "", 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("test events = %+v, %v", all, err)
	}
	for _, e := range all {
		if e.Environment != access.Test {
			t.Fatalf("the test scope reads %s (%s)", e.Action, e.Environment)
		}
	}
	live, err := db.Read().AuditList(ctx, access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}, "", 10)
	if err != nil || len(live) != 2 || live[0].Action != "live.two" || live[1].Action != "live.one" ||
		live[0].Environment != access.Live || live[1].ActorKeyID != "key_live" {
		t.Fatalf("live events = %+v, %v", live, err)
	}
}

func adminMembers(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.UserInsert(ctx, "usr_3", "ten_1", "three@example.com", "Three"); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, "ws_1", "usr_2", []access.Role{access.RoleViewer, access.RoleCreator}); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, "ws_1", "usr_3", []access.Role{access.RoleOwner}); err != nil {
			return err
		}
		return tx.MembershipInsert(ctx, "ws_2", "usr_3", []access.Role{access.RoleViewer})
	})
	rd := db.Read()
	ms, err := rd.MemberList(ctx, "ws_1", "", 2)
	if err != nil || len(ms) != 2 || ms[0].UserID != "usr_1" || ms[1].UserID != "usr_2" {
		t.Fatalf("MemberList = %+v, %v", ms, err)
	}
	if !slices.Equal(ms[1].Roles, []access.Role{access.RoleCreator, access.RoleViewer}) || ms[1].Email != "two@example.com" ||
		ms[1].Status != access.MembershipActive || ms[1].JoinedAt.IsZero() {
		t.Fatalf("member = %+v", ms[1])
	}
	if ms, err := rd.MemberList(ctx, "ws_1", "usr_2", 10); err != nil || len(ms) != 1 || ms[0].UserID != "usr_3" {
		t.Fatalf("after usr_2 = %+v, %v", ms, err)
	}
	if m, err := rd.MemberGet(ctx, "ws_2", "usr_3"); err != nil || !slices.Equal(m.Roles, []access.Role{access.RoleViewer}) {
		t.Fatalf("MemberGet ws_2 = %+v, %v", m, err)
	}
	if _, err := rd.MemberGet(ctx, "ws_2", "usr_1"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("MemberGet of another workspace's member = %v, want NOT_FOUND", err)
	}
	for _, c := range []struct {
		except string
		want   int
	}{{"", 2}, {"usr_1", 1}, {"usr_2", 2}} {
		if n, err := rd.MemberOwnerCount(ctx, "ws_1", c.except); err != nil || n != c.want {
			t.Fatalf("MemberOwnerCount(except %q) = %d, %v; want %d", c.except, n, err, c.want)
		}
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.MembershipStatusSet(ctx, "ws_1", "usr_3", access.MembershipSuspended)
	})
	if n, err := db.Read().MemberOwnerCount(ctx, "ws_1", "usr_1"); err != nil || n != 0 {
		t.Fatalf("a suspended owner counts: %d, %v", n, err)
	}
}

func adminOnboarding(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	if _, err := db.Read().OnboardingByUser(ctx, "usr_1"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("OnboardingByUser before = %v", err)
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.OnboardingInsert(ctx, account.Onboarding{WorkspaceID: "ws_1", UserID: "usr_1", Goal: account.GoalLabel,
			SelectedPlan: "pro", CreatedAt: tx.Now()})
	})
	o, err := db.Read().OnboardingByUser(ctx, "usr_1")
	if err != nil || o.WorkspaceID != "ws_1" || o.WorkspaceName != "One" || o.Goal != account.GoalLabel || o.SelectedPlan != "pro" {
		t.Fatalf("OnboardingByUser = %+v, %v", o, err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		return tx.OnboardingInsert(ctx, account.Onboarding{WorkspaceID: "ws_1", UserID: "usr_2", Goal: account.GoalTeam,
			SelectedPlan: "free", CreatedAt: tx.Now()})
	})
	if err == nil {
		t.Fatal("a second onboarding record of one workspace was stored")
	}
}

func adminTenantMove(t *testing.T, open Opener) {
	db, _ := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_2", "Personal"); err != nil {
			return err
		}
		if err := tx.UserInsert(ctx, "usr_9", "ten_2", "nine@example.com", "Nine"); err != nil {
			return err
		}
		now := tx.Now()
		return tx.SessionInsert(ctx, account.Session{ID: "ses_9", UserID: "usr_9", TenantID: "ten_2", Kind: account.KindWeb,
			CookieDigest: "cookie-9", CreatedAt: now, LastSeenAt: now, AuthenticatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if n, err := db.Read().UserMembershipCount(ctx, "usr_9"); err != nil || n != 0 {
		t.Fatalf("UserMembershipCount = %d, %v", n, err)
	}
	if n, err := db.Read().UserMembershipCount(ctx, "usr_1"); err != nil || n != 1 {
		t.Fatalf("UserMembershipCount(usr_1) = %d, %v", n, err)
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error { return tx.UserTenantSet(ctx, "usr_9", "ten_1") })
	if u, err := db.Read().UserGet(ctx, "ten_1", "usr_9"); err != nil || u.TenantID != "ten_1" {
		t.Fatalf("moved user = %+v, %v", u, err)
	}
	if sa, err := db.Read().SessionByCookie(ctx, "cookie-9"); err != nil || sa.Session.TenantID != "ten_1" {
		t.Fatalf("moved session = %+v, %v", sa.Session, err)
	}
	err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UserTenantSet(ctx, "usr_nobody", "ten_1") })
	if !fault.Is(err, fault.NotFound) {
		t.Fatalf("UserTenantSet of nobody = %v", err)
	}
}
