package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseWallet covers wallet challenges: a challenge round-trips whole
// and is visible only to its user and tenant; of concurrent consumers
// exactly one wins; failed attempts are counted and the last allowed one
// exhausts the challenge; links are read back.
func exerciseWallet(t *testing.T, open Opener) {
	ctx := context.Background()
	setup := func(t *testing.T) (*store.DB, *Clock) {
		t.Helper()
		db, clock := fresh(t, open)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, ten := range []string{"ten_1", "ten_2"} {
				if err := tx.TenantInsert(ctx, ten, ten); err != nil {
					return err
				}
			}
			for _, u := range []struct{ id, tenant string }{{"usr_1", "ten_1"}, {"usr_2", "ten_1"}, {"usr_3", "ten_2"}} {
				if err := tx.UserInsert(ctx, u.id, u.tenant, u.id+"@example.com", u.id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		return db, clock
	}
	insert := func(t *testing.T, db *store.DB, c wallet.Challenge) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WalletChallengeInsert(ctx, c) }); err != nil {
			t.Fatal(err)
		}
	}
	challenge := func(clock *Clock, id, nonce string) wallet.Challenge {
		now := clock.Now().UTC().Truncate(time.Millisecond)
		return wallet.Challenge{ID: id, TenantID: "ten_1", UserID: "usr_1", SessionID: "ses_1", Environment: access.Test,
			Address: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", Purpose: wallet.PurposeLinkWallet,
			Message: "app.example.com wants you to sign in with your Solana account:\n4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T\n\nNonce: " + nonce,
			Nonce:   nonce, IssuedAt: now, ExpiresAt: now.Add(5 * time.Minute), Status: wallet.StatusPending}
	}

	t.Run("RoundTripAndScope", func(t *testing.T) {
		db, clock := setup(t)
		c := challenge(clock, "wch_1", "NONCE0001AAAAAAAA")
		insert(t, db, c)
		got, err := db.Read().WalletChallengeGet(ctx, "ten_1", "usr_1", "wch_1")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != c.ID || got.TenantID != "ten_1" || got.UserID != "usr_1" || got.SessionID != "ses_1" || got.Environment != access.Test ||
			got.Address != c.Address || got.Purpose != c.Purpose || got.Message != c.Message || got.Nonce != c.Nonce ||
			!got.IssuedAt.Equal(c.IssuedAt) || !got.ExpiresAt.Equal(c.ExpiresAt) || got.Attempts != 0 ||
			got.Status != wallet.StatusPending || got.ConsumedAt != nil || got.IssuedAt.Location() != time.UTC {
			t.Fatalf("challenge = %+v, want %+v", got, c)
		}
		for _, q := range []struct{ tenant, user, id string }{
			{"ten_1", "usr_2", "wch_1"}, {"ten_2", "usr_1", "wch_1"}, {"ten_2", "usr_3", "wch_1"}, {"ten_1", "usr_1", "wch_2"},
		} {
			if _, err := db.Read().WalletChallengeGet(ctx, q.tenant, q.user, q.id); !fault.Is(err, fault.NotFound) {
				t.Errorf("get %v = %v, want NOT_FOUND", q, err)
			}
		}
		// A nonce is never reused.
		dup := challenge(clock, "wch_2", c.Nonce)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WalletChallengeInsert(ctx, dup) }); err == nil {
			t.Error("a duplicate nonce was stored")
		}
	})

	t.Run("ConsumeOnce", func(t *testing.T) {
		db, clock := setup(t)
		insert(t, db, challenge(clock, "wch_1", "NONCE0002AAAAAAAA"))
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			wins      int
			conflicts int
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					if err := tx.WalletChallengeConsume(ctx, "wch_1", tx.Now()); err != nil {
						return err
					}
					return tx.WalletLinkInsert(ctx, tx.NewID(wallet.LinkIDPrefix), "ten_1", "usr_1", wallet.Network,
						"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case fault.Is(err, fault.Conflict):
					conflicts++
				default:
					t.Errorf("consume: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || conflicts != 7 {
			t.Fatalf("%d won, %d conflicted; want 1 and 7", wins, conflicts)
		}
		got, err := db.Read().WalletChallengeGet(ctx, "ten_1", "usr_1", "wch_1")
		if err != nil || got.Status != wallet.StatusVerified || got.ConsumedAt == nil || !got.ConsumedAt.Equal(clock.Now()) {
			t.Fatalf("consumed challenge = %+v, %v", got, err)
		}
		l, err := db.Read().WalletLinkGet(ctx, "ten_1", wallet.Network, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
		if err != nil || l.UserID != "usr_1" || l.TenantID != "ten_1" || l.Network != wallet.Network || len(l.ID) < 4 ||
			!l.VerifiedAt.Equal(clock.Now()) {
			t.Fatalf("link = %+v, %v", l, err)
		}
		if _, err := db.Read().WalletLinkGet(ctx, "ten_2", wallet.Network, l.Address); !fault.Is(err, fault.NotFound) {
			t.Errorf("link in another tenant = %v, want NOT_FOUND", err)
		}
		if ls, err := db.Read().WalletLinksOfUser(ctx, "ten_1", wallet.Network, "usr_1"); err != nil || len(ls) != 1 || ls[0] != l {
			t.Errorf("the user's links = %+v, %v; want the one link", ls, err)
		}
		for _, who := range [][2]string{{"ten_1", "usr_2"}, {"ten_2", "usr_1"}} {
			if ls, err := db.Read().WalletLinksOfUser(ctx, who[0], wallet.Network, who[1]); err != nil || len(ls) != 0 {
				t.Errorf("links of %v = %+v, %v; want none", who, ls, err)
			}
		}
		// A consumed challenge counts no failure.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.WalletChallengeFail(ctx, "wch_1", tx.Now(), 5)
			return err
		})
		if !fault.Is(err, fault.Conflict) {
			t.Errorf("fail after consume = %v, want CONFLICT", err)
		}
	})

	t.Run("AttemptsExhaust", func(t *testing.T) {
		db, clock := setup(t)
		insert(t, db, challenge(clock, "wch_1", "NONCE0003AAAAAAAA"))
		const limit = 3
		fail := func() (wallet.Challenge, error) {
			var c wallet.Challenge
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				c, err = tx.WalletChallengeFail(ctx, "wch_1", tx.Now(), limit)
				return err
			})
			return c, err
		}
		for i := 1; i < limit; i++ {
			c, err := fail()
			if err != nil || c.Attempts != i || c.Status != wallet.StatusPending || c.ConsumedAt != nil {
				t.Fatalf("attempt %d: %+v, %v", i, c, err)
			}
			clock.Advance(time.Second)
		}
		// Concurrent last attempts: one exhausts, the others conflict.
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			exhausted int
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := fail()
				if err != nil && !fault.Is(err, fault.Conflict) {
					t.Errorf("fail: %v", err)
				}
				if err == nil {
					mu.Lock()
					exhausted++
					mu.Unlock()
					if c.Status != wallet.StatusExhausted || c.Attempts != limit || c.ConsumedAt == nil || !c.ConsumedAt.Equal(clock.Now()) {
						t.Errorf("exhausted = %+v", c)
					}
				}
			}()
		}
		wg.Wait()
		if exhausted != 1 {
			t.Fatalf("%d attempts exhausted the challenge, want 1", exhausted)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.WalletChallengeConsume(ctx, "wch_1", tx.Now()) })
		if !fault.Is(err, fault.Conflict) {
			t.Errorf("consume after exhaustion = %v, want CONFLICT", err)
		}
	})
}
