package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
)

// exerciseSwap covers the swap registry's runs: a run round-trips whole,
// the latest readable run of a version skips unreadable runs and other
// versions and environments, and the newest run includes them.
func exerciseSwap(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	insert := func(r swap.RegistryRun) swap.RegistryRun {
		t.Helper()
		r.CheckedAt = clock.Now().UTC().Truncate(time.Microsecond)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapRegistryRunInsert(ctx, r) }); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		return r
	}
	read := db.Read()
	if _, err := read.SwapRegistryRunLatest(ctx, access.Test, 1); !fault.Is(err, fault.NotFound) {
		t.Fatalf("latest of an empty table: %v, want NOT_FOUND", err)
	}
	fee := uint16(200)
	matched := insert(swap.RegistryRun{ID: "srr_1", Environment: "test", RegistryVersion: 1, RegistryHash: "h1", Network: "solana:abc",
		Checks: []swap.MintCheck{{Mint: "M1", Status: swap.MintMatched, TokenProgram: "P", Decimals: 9, TransferFeeBps: &fee, Slot: 12},
			{Mint: "M2", Status: swap.MintMismatched, Reason: swap.ReasonDecimalsMismatch, Detail: "the mint has 9 decimals", Freezable: true}}})
	unread := insert(swap.RegistryRun{ID: "srr_2", Environment: "test", RegistryVersion: 1, RegistryHash: "h1", Unreadable: true,
		Error: "read the genesis hash: unavailable", Checks: []swap.MintCheck{{Mint: "M1", Status: swap.MintUnread, Reason: swap.ReasonClusterUnreadable}}})
	insert(swap.RegistryRun{ID: "srr_3", Environment: "test", RegistryVersion: 2, RegistryHash: "h2", Network: "solana:abc"})
	insert(swap.RegistryRun{ID: "srr_4", Environment: "live", RegistryVersion: 1, RegistryHash: "h1", Network: "solana:def"})

	got, err := read.SwapRegistryRunLatest(ctx, access.Test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(matched, got); d != "" {
		t.Fatalf("latest readable run (-want +got):\n%s", d)
	}
	got, err = read.SwapRegistryRunNewest(ctx, access.Test, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(unread, got); d != "" {
		t.Fatalf("newest run (-want +got):\n%s", d)
	}
	if got, err := read.SwapRegistryRunLatest(ctx, access.Live, 1); err != nil || got.ID != "srr_4" {
		t.Fatalf("live latest = %s, %v", got.ID, err)
	}
}
