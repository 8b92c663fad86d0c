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
	insert(swap.RegistryRun{ID: "srr_2", Environment: "test", RegistryVersion: 1, RegistryHash: "h1", Unreadable: true,
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
	if got, err := read.SwapRegistryRunLatest(ctx, access.Live, 1); err != nil || got.ID != "srr_4" {
		t.Fatalf("live latest = %s, %v", got.ID, err)
	}
}

// exerciseSwapOperations covers swap operations and quotes: a sealed
// quote round-trips with its hash intact (CheckIntegrity passes on the
// stored copy), both are read only by their owner, and ids are unique.
func exerciseSwapOperations(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	owner := swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test}
	var k1, k2 [32]byte
	k1[0], k2[0] = 1, 2
	now := clock.Now()
	q := swap.Quote{ID: "swq_1", OperationID: "swp_1", Owner: owner, Terms: swap.Terms{Provider: "jupiter", Network: "solana:abc", Wallet: k1,
		RoutingMode: swap.ExactIn, InputMint: k1, InputTokenProgram: k2, InputDecimals: 9, OutputMint: k2, OutputTokenProgram: k2,
		OutputDecimals: 6, GrossInputAtomic: 1_000_000_000, ServiceFeeAtomic: 20_000_000, ExecutableInputAtomic: 980_000_000,
		ExpectedOutputAtomic: 1_950_000, MinimumOutputAtomic: 1_940_250, SlippageBps: 50, PriceImpactBps: 12,
		Route:        []swap.RouteStep{{Venue: "Pool", Pool: k2, InputMint: k1, OutputMint: k2, InAtomic: 980_000_000, OutAtomic: 1_950_000, ShareBps: 10000}},
		FeeBreakdown: swap.FeeBreakdown{ServiceFeeBps: 200, ServiceFeeMint: k1, NetworkFeeLamports: 5000, PriorityFeeLamports: 14000}},
		FeePolicyVersion: "1", RegistryVersion: "3", ProviderQuote: []byte(`{"inAmount":"980000000","x":{"y":"<&>"}}`),
		CreatedAt: now, ExpiresAt: now.Add(30 * time.Second)}.Seal()
	o := swap.Operation{ID: "swp_1", Owner: owner, State: swap.StateQuoted, QuoteID: q.ID, Version: 1, CreatedAt: now.UTC().Truncate(time.Microsecond),
		UpdatedAt: now.UTC().Truncate(time.Microsecond)}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SwapOperationInsert(ctx, o); err != nil {
			return err
		}
		return tx.SwapQuoteInsert(ctx, q)
	}); err != nil {
		t.Fatal(err)
	}
	read := db.Read()
	got, err := read.SwapQuote(ctx, owner, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(q, got); d != "" {
		t.Fatalf("stored quote (-want +got):\n%s", d)
	}
	if err := got.CheckIntegrity(); err != nil {
		t.Fatalf("the stored quote fails its own hash: %v", err)
	}
	gotOp, err := read.SwapOperation(ctx, owner, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o, gotOp); d != "" {
		t.Fatalf("stored operation (-want +got):\n%s", d)
	}
	for _, other := range []swap.Owner{
		{TenantID: "ten_2", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_2", UserID: "usr_1", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_2", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Live},
	} {
		if _, err := read.SwapQuote(ctx, other, q.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("quote read as %+v: %v, want NOT_FOUND", other, err)
		}
		if _, err := read.SwapOperation(ctx, other, o.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("operation read as %+v: %v, want NOT_FOUND", other, err)
		}
	}
	err = db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapOperationInsert(ctx, o) })
	if !fault.Is(err, fault.Conflict) {
		t.Fatalf("second insert of an operation: %v, want CONFLICT", err)
	}
}
