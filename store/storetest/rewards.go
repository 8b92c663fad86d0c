package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/store"
)

// exerciseRewards covers rewards.TreasuryReader: an environment's newest
// funding evidence is the challenge whose reading is newest, whichever
// workspace it belongs to and whatever its id; a challenge never read does
// not count, another environment's readings are not this one's, and an
// environment without a reading is NOT_FOUND.
func exerciseRewards(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	seedWorkspaces(t, db)
	var mint chain.Address
	mint[0] = 9
	account := func(b byte) chain.Address {
		var a chain.Address
		a[0], a[1] = 3, b
		return a
	}
	// insert stores a challenge of ws in env, read by a reconciliation at
	// checked (never read when zero).
	insert := func(ws string, env access.Environment, checked time.Time, acct byte) rewards.Challenge {
		t.Helper()
		var c rewards.Challenge
		err := db.InTx(ctx, func(tx *store.Tx) error {
			now := tx.Now()
			c = rewards.Challenge{ID: tx.NewID(rewards.ChallengePrefix), Version: 1,
				Scope: access.Scope{TenantID: "ten_1", WorkspaceID: ws, Environment: env}, ProjectID: "prj_1", Title: "Remix",
				Window: rewards.Window{OpensAt: now, ClosesAt: now.Add(time.Hour)}, Status: rewards.StatusDraft,
				Pool:            rewards.Pool{AmountAtomic: 1000, Mint: mint, Decimals: 6, Funding: rewards.FundingAnnounced},
				CreatedByUserID: "usr_1", CreatedAt: now, UpdatedAt: now}
			if !checked.IsZero() {
				c.Pool.Evidence = rewards.Evidence{TreasuryAccount: account(acct), Slot: 7, BalanceAtomic: 5, RequiredAtomic: 1000,
					CheckedAt: checked}
			}
			return tx.ChallengeInsert(ctx, c)
		})
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond)
		return c
	}
	if _, err := db.Read().ChallengeNewestEvidence(ctx, access.Test); !fault.Is(err, fault.NotFound) {
		t.Fatalf("no challenge: %v, want NOT_FOUND", err)
	}
	insert("ws_1", access.Test, time.Time{}, 0)
	if _, err := db.Read().ChallengeNewestEvidence(ctx, access.Test); !fault.Is(err, fault.NotFound) {
		t.Fatalf("no challenge read: %v, want NOT_FOUND", err)
	}
	newest := insert("ws_2", access.Test, Epoch.Add(2*time.Hour), 2)
	insert("ws_1", access.Test, Epoch.Add(time.Hour), 1)   // newer id, older reading
	insert("ws_1", access.Live, Epoch.Add(3*time.Hour), 3) // another environment
	got, err := db.Read().ChallengeNewestEvidence(ctx, access.Test)
	if err != nil || got.ID != newest.ID || got.Pool.Evidence.TreasuryAccount != account(2) ||
		!got.Pool.Evidence.CheckedAt.Equal(newest.Pool.Evidence.CheckedAt) {
		t.Fatalf("newest test evidence = %+v, %v; want %s read by account 2", got, err, newest.ID)
	}
	live, err := db.Read().ChallengeNewestEvidence(ctx, access.Live)
	if err != nil || live.Pool.Evidence.TreasuryAccount != account(3) {
		t.Fatalf("live evidence = %+v, %v", live, err)
	}

	// A newer reading of another challenge takes its place.
	older := insert("ws_1", access.Test, Epoch.Add(time.Minute), 4)
	err = db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.ChallengeLock(ctx, access.Test, older.ID)
		if err != nil {
			return err
		}
		prev := c.Version
		c.Version, c.UpdatedAt = c.Version+1, tx.Now()
		c.Pool.Evidence.CheckedAt = Epoch.Add(4 * time.Hour)
		return tx.ChallengeUpdate(ctx, c, prev)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.Read().ChallengeNewestEvidence(ctx, access.Test); err != nil || got.ID != older.ID ||
		got.Pool.Evidence.TreasuryAccount != account(4) {
		t.Fatalf("after a newer reading: %+v, %v; want %s", got, err, older.ID)
	}
}
