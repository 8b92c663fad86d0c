package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAccounts runs the contract cases of the account adapter: password
// credentials, single-use codes (one consumer under concurrency), the
// failed-login counters and session listing and revocation.
func exerciseAccounts(t *testing.T, open Opener) {
	t.Run("Credentials", func(t *testing.T) { accountCredentials(t, open) })
	t.Run("CodeSingleUse", func(t *testing.T) { accountCodeSingleUse(t, open) })
	t.Run("Throttle", func(t *testing.T) { accountThrottle(t, open) })
	t.Run("Sessions", func(t *testing.T) { accountSessions(t, open) })
}

func accountCredentials(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.CredentialGet(ctx, "usr_1"); !fault.Is(err, fault.NotFound) {
			t.Errorf("CredentialGet without one = %v", err)
		}
		if err := tx.CredentialEmailVerified(ctx, "usr_1", tx.Now()); !fault.Is(err, fault.NotFound) {
			t.Errorf("CredentialEmailVerified without one = %v", err)
		}
		return tx.CredentialInsert(ctx, account.PasswordCredential{UserID: "usr_1", PasswordHash: "h1", PasswordChangedAt: tx.Now()})
	})
	first := clock.Now().UTC().Truncate(time.Microsecond)
	clock.Advance(time.Minute)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.CredentialInsert(ctx, account.PasswordCredential{UserID: "usr_1", PasswordHash: "h2"}); !fault.Is(err, fault.Conflict) {
			t.Errorf("second CredentialInsert = %v", err)
		}
		if err := tx.CredentialEmailVerified(ctx, "usr_1", first); err != nil {
			return err
		}
		if err := tx.CredentialEmailVerified(ctx, "usr_1", tx.Now()); err != nil { // keeps the first time
			return err
		}
		return tx.CredentialPasswordSet(ctx, "usr_1", "h3", tx.Now())
	})
	c, err := db.Read().CredentialGet(ctx, "usr_1")
	if err != nil || c.PasswordHash != "h3" || c.EmailVerifiedAt == nil || !c.EmailVerifiedAt.Equal(first) || !c.PasswordChangedAt.After(first) {
		t.Fatalf("credential = %+v, %v", c, err)
	}
}

func accountCodeSingleUse(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	now := clock.Now().UTC().Truncate(time.Microsecond)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for _, c := range []account.Code{
			{Digest: "d_live", Purpose: account.PurposeHandoff, UserID: "usr_1", SessionID: "ses_1", CreatedAt: now, ExpiresAt: now.Add(time.Minute)},
			{Digest: "d_short", Purpose: account.PurposeHandoff, CreatedAt: now, ExpiresAt: now.Add(time.Second)},
		} {
			if err := tx.CodeInsert(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	// Concurrent consumers: exactly one wins.
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.InTx(ctx, func(tx *store.Tx) error {
				c, consumed, err := tx.CodeConsume(ctx, account.PurposeHandoff, "d_live", tx.Now())
				if err != nil {
					return err
				}
				if consumed {
					if c.SessionID != "ses_1" || c.UsedAt == nil {
						t.Errorf("consumed code = %+v", c)
					}
					mu.Lock()
					wins++
					mu.Unlock()
				} else if c.UsedAt == nil {
					t.Errorf("a refused code is not marked used: %+v", c)
				}
				return nil
			})
			if err != nil {
				t.Errorf("consume: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d consumers won", wins)
	}
	clock.Advance(2 * time.Second)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if c, consumed, err := tx.CodeConsume(ctx, account.PurposeHandoff, "d_short", tx.Now()); err != nil || consumed || c.UsedAt != nil {
			t.Errorf("expired code: %+v %v %v", c, consumed, err)
		}
		if _, _, err := tx.CodeConsume(ctx, account.PurposePasswordReset, "d_short", tx.Now()); !fault.Is(err, fault.NotFound) {
			t.Errorf("code of another purpose: %v", err)
		}
		if _, _, err := tx.CodeConsume(ctx, account.PurposeHandoff, "d_none", tx.Now()); !fault.Is(err, fault.NotFound) {
			t.Errorf("unknown code: %v", err)
		}
		return nil
	})
}

func accountThrottle(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	read := func(subjects ...string) []account.Throttle {
		var got []account.Throttle
		if err := db.Read().ThrottleUpdate(ctx, subjects, func(_ time.Time, cur []account.Throttle) ([]account.Throttle, error) {
			got = cur
			return cur, nil
		}); err != nil {
			t.Fatalf("ThrottleUpdate(read): %v", err)
		}
		return got
	}
	rows := func() int {
		var n int
		if err := db.Read().IDB().NewRaw(`SELECT COUNT(*) FROM login_throttle`).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := read("pair:b", "acct:x"); len(got) != 2 || got[0] != (account.Throttle{Subject: "pair:b"}) || got[1] != (account.Throttle{Subject: "acct:x"}) {
		t.Fatalf("new counters = %+v", got)
	}
	if n := rows(); n != 0 {
		t.Fatalf("reading new counters left %d rows", n)
	}
	start := clock.Now().UTC().Truncate(time.Microsecond)
	until := start.Add(time.Hour)
	if err := db.Read().ThrottleUpdate(ctx, []string{"acct:x"}, func(now time.Time, cur []account.Throttle) ([]account.Throttle, error) {
		if !now.Equal(start) {
			t.Errorf("now = %v, want the clock's %v", now, start)
		}
		cur[0].Failures, cur[0].WindowStartedAt, cur[0].LockedUntil = 3, now, &until
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := read("acct:x")[0]; got.Failures != 3 || !got.WindowStartedAt.Equal(start) || got.LockedUntil == nil || !got.LockedUntil.Equal(until) {
		t.Fatalf("written counter = %+v", got)
	}
	// A failing fn writes nothing, and its error comes back as is.
	stop := errors.New("refused")
	err := db.Read().ThrottleUpdate(ctx, []string{"acct:x", "addr:new"}, func(_ time.Time, cur []account.Throttle) ([]account.Throttle, error) {
		cur[0].Failures = 99
		return nil, stop
	})
	if !errors.Is(err, stop) || read("acct:x")[0].Failures != 3 || rows() != 1 {
		t.Fatalf("failed update: %v, %+v, %d rows", err, read("acct:x"), rows())
	}
	// A counter back at zero without a lock leaves no row.
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.ThrottleUpdate(ctx, []string{"acct:x"}, func(_ time.Time, cur []account.Throttle) ([]account.Throttle, error) {
			return []account.Throttle{{Subject: "acct:x"}}, nil
		})
	})
	if n := rows(); n != 0 {
		t.Fatalf("zero counter left %d rows", n)
	}
	// Concurrent read-modify-writes of shared subjects, named in either
	// order, all count: each reads the one before it.
	var wg sync.WaitGroup
	const n = 20
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			subjects := []string{"addr:y", "acct:z"}
			if i%2 == 1 {
				subjects = []string{"acct:z", "addr:y"}
			}
			if err := db.Read().ThrottleUpdate(ctx, subjects, func(now time.Time, cur []account.Throttle) ([]account.Throttle, error) {
				for j := range cur {
					cur[j].Failures++
					cur[j].WindowStartedAt = now
				}
				return cur, nil
			}); err != nil {
				t.Errorf("ThrottleUpdate: %v", err)
			}
		}()
	}
	wg.Wait()
	if got := read("addr:y", "acct:z"); got[0].Failures != n || got[1].Failures != n {
		t.Fatalf("concurrent updates counted %+v", got)
	}
	// Pruning removes counters that started before the cut and hold no
	// lock past it; a lock that still runs keeps its counter.
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		return tx.ThrottleUpdate(ctx, []string{"acct:locked"}, func(now time.Time, cur []account.Throttle) ([]account.Throttle, error) {
			until := now.Add(48 * time.Hour)
			cur[0].Failures, cur[0].WindowStartedAt, cur[0].LockedUntil = 1, now, &until
			return cur, nil
		})
	})
	clock.Advance(25 * time.Hour)
	var pruned int
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) (err error) {
		pruned, err = tx.ThrottlePrune(ctx, tx.Now().Add(-24*time.Hour), 10)
		return err
	})
	if got := read("acct:locked")[0]; pruned != 2 || rows() != 1 || got.Failures != 1 {
		t.Fatalf("prune deleted %d, left %d rows, locked counter %+v", pruned, rows(), got)
	}
}

func accountSessions(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	accessSeed(t, db)
	now := clock.Now().UTC().Truncate(time.Microsecond)
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		for i, id := range []string{"ses_a", "ses_b", "ses_c", "ses_old"} {
			s := account.Session{ID: id, UserID: "usr_1", TenantID: "ten_1", Kind: account.KindWeb, CookieDigest: "c_" + id,
				UserAgent: "ua", ClientIP: "127.0.0.1", CreatedAt: now.Add(time.Duration(i) * time.Second), LastSeenAt: now,
				AuthenticatedAt: now, ExpiresAt: now.Add(time.Hour)}
			if id == "ses_old" {
				s.ExpiresAt = now.Add(time.Second)
			}
			if err := tx.SessionInsert(ctx, s); err != nil {
				return err
			}
		}
		return tx.SessionInsert(ctx, account.Session{ID: "ses_other", UserID: "usr_2", TenantID: "ten_1", Kind: account.KindWeb,
			CookieDigest: "c_other", CreatedAt: now, LastSeenAt: now, AuthenticatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	clock.Advance(2 * time.Second)
	list := func() []string {
		ss, err := db.Read().SessionListActive(ctx, "usr_1", clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		return ids
	}
	if got := list(); len(got) != 3 || got[0] != "ses_c" || got[2] != "ses_a" {
		t.Fatalf("active sessions = %v", got)
	}
	accessTx(t, db, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.SessionRevoke(ctx, "ses_a", tx.Now()); err != nil {
			return err
		}
		if err := tx.SessionRevoke(ctx, "ses_none", tx.Now()); !fault.Is(err, fault.NotFound) {
			t.Errorf("revoke unknown = %v", err)
		}
		if err := tx.SessionWorkspaceSet(ctx, "ses_b", "ws_1"); err != nil {
			return err
		}
		n, err := tx.SessionRevokeOthers(ctx, "usr_1", "ses_b", tx.Now())
		if n != 1 {
			t.Errorf("revoke others revoked %d", n)
		}
		return err
	})
	if got := list(); len(got) != 1 || got[0] != "ses_b" {
		t.Fatalf("after revocations = %v", got)
	}
	s, err := db.Read().SessionGet(ctx, "ses_b")
	if err != nil || s.WorkspaceID != "ws_1" {
		t.Fatalf("ses_b = %+v, %v", s, err)
	}
	if s, _ := db.Read().SessionGet(ctx, "ses_a"); s.RevokedAt == nil {
		t.Fatal("ses_a is not revoked")
	}
	if s, _ := db.Read().SessionGet(ctx, "ses_other"); s.RevokedAt != nil {
		t.Fatal("another user's session was revoked")
	}
	ws, err := db.Read().UserDefaultWorkspace(ctx, "usr_1")
	if err != nil || ws != "ws_1" {
		t.Fatalf("default workspace = %q, %v", ws, err)
	}
	if ws, err := db.Read().UserDefaultWorkspace(ctx, "usr_2"); err != nil || ws != "" {
		t.Fatalf("default workspace without membership = %q, %v", ws, err)
	}
}
