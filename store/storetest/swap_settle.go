package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/swap"
)

// exerciseSwapSettlements covers what follows a swap's submission: a
// signature names the intent of the operation it is bound to (any
// owner's), and nothing else; a verification, a settlement (with the
// largest atomic amounts and a missing block time) and a reconciliation
// round-trip whole; each is read only by its owner; one of each per
// operation, and one settlement per signature.
func exerciseSwapSettlements(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	owner := swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test}
	now := clock.Now().UTC().Truncate(time.Millisecond)
	var k [6]chain.Address
	for i := range k {
		k[i][0], k[i][31] = byte(i+1), 0x5A
	}
	seed := func(n int, sig string) swap.Intent {
		t.Helper()
		id := func(prefix string) string { return prefix + string(rune('0'+n)) }
		q := swap.Quote{ID: id("swq_"), OperationID: id("swp_"), Owner: owner, Terms: swap.Terms{Provider: "jupiter", Network: "solana:abc", Wallet: k[0],
			RoutingMode: swap.ExactIn, InputMint: k[1], InputTokenProgram: k[2], InputDecimals: 9, OutputMint: k[3],
			OutputTokenProgram: k[2], OutputDecimals: 6, GrossInputAtomic: 1_000_000_000, ServiceFeeAtomic: 20_000_000,
			ExecutableInputAtomic: 980_000_000, ExpectedOutputAtomic: 1_950_000, MinimumOutputAtomic: 1_940_250, SlippageBps: 50,
			FeeBreakdown: swap.FeeBreakdown{ServiceFeeBps: 200, ServiceFeeMint: k[1]}}, FeePolicyVersion: "1", RegistryVersion: "1",
			ProviderQuote: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(30 * time.Second)}.Seal()
		it, err := swap.NewIntent(q, swap.Binding{ID: id("swi_"), Owner: owner, Wallet: k[0], FeePolicyVersion: "1", RegistryVersion: "1",
			FeeRecipient: k[4], FeeAccount: k[5], FeeRecipientVerified: true, Message: []byte{1, 2, 3}, RecentBlockhash: "bh",
			LastValidBlockHeight: 10}, now)
		if err != nil {
			t.Fatal(err)
		}
		o := swap.Operation{ID: q.OperationID, Owner: owner, State: swap.StateSubmitted, QuoteID: q.ID, IntentID: it.ID, Signature: sig,
			Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SwapOperationInsert(ctx, o); err != nil {
				return err
			}
			if err := tx.SwapQuoteInsert(ctx, q); err != nil {
				return err
			}
			return tx.SwapIntentInsert(ctx, it, swap.Prepared{Message: []byte{1, 2, 3}, LastValidBlockHeight: 10, ExpiresAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		return it
	}
	it1, it2 := seed(1, "sig1"), seed(2, "sig2")
	read := db.Read()
	for sig, want := range map[string]string{"sig1": it1.ID, "sig2": it2.ID, "sig3": "", "": ""} {
		if got, err := read.SwapSignatureIntent(ctx, sig); err != nil || got != want {
			t.Fatalf("intent of signature %q = %q, %v; want %q", sig, got, err, want)
		}
	}
	sums := cmp.Comparer(func(a, b money.Sum) bool { return a.Cmp(b) == 0 })

	bt := now.Add(-time.Second)
	v := swap.Verification{IntentID: it1.ID, OperationID: it1.OperationID, Signature: "sig1", Network: "solana:abc", Slot: 77,
		BlockTime: &bt, ObservedAt: now, Success: true, Signers: []chain.Address{k[0]}, Programs: []chain.Address{k[2]},
		InputMint: k[1], OutputMint: k[3], InputDebited: money.SumOf(1_000_000_000), ExecutableInput: money.SumOf(980_000_000),
		FeeRecipient: k[4], FeeAccount: k[5], FeeReceived: money.SumOf(19_600_000), OutputReceived: money.SumOf(1_950_000),
		RequiredOutput: 1_940_250, LamportsSpent: money.SumOf(5000), LamportBalances: true,
		Checks: []swap.Check{{Name: swap.CheckNetwork, Passed: true, Expected: "solana:abc", Actual: "solana:abc"},
			{Name: swap.CheckServiceFee, Passed: false, Expected: "19600000", Actual: "19599999"}}}
	vr := swap.VerificationRecord{ID: "swv_1", Owner: owner, Verification: v, CreatedAt: now}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapVerificationInsert(ctx, vr) }); err != nil {
		t.Fatal(err)
	}
	gotV, err := read.SwapVerification(ctx, owner, it1.OperationID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(vr, gotV, sums); d != "" {
		t.Fatalf("stored verification (-want +got):\n%s", d)
	}
	again := vr
	again.ID = "swv_2"
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapVerificationInsert(ctx, again) }); !fault.Is(err, fault.Conflict) {
		t.Fatalf("a second verification of an operation: %v, want CONFLICT", err)
	}

	set := swap.Settlement{ID: "sws_1", OperationID: it1.OperationID, IntentID: it1.ID, QuoteID: it1.QuoteID, Owner: owner, Signature: "sig1",
		FeeMint: k[1], FeeDecimals: 9, FeeRecipient: k[4], FeeAccount: k[5], ServiceFeeAtomic: 20_000_000, FeeReceivedAtomic: 19_600_000,
		ActualInputAtomic: money.MaxAtomic, ActualOutputAtomic: 0, Slot: 77, ObservedAt: now, MovementID: "mov_1", CreatedAt: now}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSettlementInsert(ctx, set) }); err != nil {
		t.Fatal(err)
	}
	gotS, err := read.SwapSettlement(ctx, owner, it1.OperationID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(set, gotS); d != "" {
		t.Fatalf("stored settlement (-want +got):\n%s", d)
	}
	for name, s := range map[string]swap.Settlement{
		"a second settlement of the operation":          {ID: "sws_2", OperationID: it1.OperationID, Signature: "sig9"},
		"a settlement of another operation's signature": {ID: "sws_3", OperationID: it2.OperationID, Signature: "sig1"},
		"a taken id": {ID: "sws_1", OperationID: it2.OperationID, Signature: "sig2"},
	} {
		s.IntentID, s.QuoteID, s.Owner, s.FeeMint, s.FeeRecipient, s.FeeAccount, s.ObservedAt, s.CreatedAt =
			it2.ID, it2.QuoteID, owner, k[1], k[4], k[5], now, now
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSettlementInsert(ctx, s) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("%s: %v, want CONFLICT", name, err)
		}
	}
	withTime := set
	withTime.ID, withTime.OperationID, withTime.IntentID, withTime.QuoteID, withTime.Signature, withTime.BlockTime =
		"sws_4", it2.OperationID, it2.ID, it2.QuoteID, "sig2", &bt
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSettlementInsert(ctx, withTime) }); err != nil {
		t.Fatal(err)
	}
	if got, err := read.SwapSettlement(ctx, owner, it2.OperationID); err != nil || got.BlockTime == nil || !got.BlockTime.Equal(bt) {
		t.Fatalf("a settlement's block time: %v, %v", got.BlockTime, err)
	}

	rec := swap.ReconciliationRecord{ID: "swr_1", Owner: owner, CreatedAt: now, Reconciliation: swap.Reconciliation{
		OperationID: it1.OperationID, QuoteID: it1.QuoteID, IntentID: it1.ID, Signature: "sig1", Outcome: swap.OutcomeDriftDetected,
		Findings: []swap.Finding{{Rule: swap.RuleOutputAboveBand, Outcome: swap.OutcomeDriftDetected, Expected: "1", Actual: "2"}},
		Evidence: swap.Evidence{QuoteHash: "qh", ExpectedFee: 20_000_000, ActualFee: money.SumOf(19_600_000),
			FeeDelta: money.SumOf(0), InputDelta: money.SumOf(0)},
		Checks: v.Checks}}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapReconciliationInsert(ctx, rec) }); err != nil {
		t.Fatal(err)
	}
	gotR, err := read.SwapReconciliation(ctx, owner, it1.OperationID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rec, gotR, sums); d != "" {
		t.Fatalf("stored reconciliation (-want +got):\n%s", d)
	}
	second := rec
	second.ID = "swr_2"
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SwapReconciliationInsert(ctx, second) }); !fault.Is(err, fault.Conflict) {
		t.Fatalf("a second reconciliation of an operation: %v, want CONFLICT", err)
	}

	if _, err := read.SwapVerification(ctx, owner, it2.OperationID); !fault.Is(err, fault.NotFound) {
		t.Fatalf("an operation without a verification: %v, want NOT_FOUND", err)
	}
	for _, other := range []swap.Owner{
		{TenantID: "ten_2", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_2", UserID: "usr_1", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_2", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Live},
	} {
		if _, err := read.SwapVerification(ctx, other, it1.OperationID); !fault.Is(err, fault.NotFound) {
			t.Errorf("verification read as %+v: %v, want NOT_FOUND", other, err)
		}
		if _, err := read.SwapSettlement(ctx, other, it1.OperationID); !fault.Is(err, fault.NotFound) {
			t.Errorf("settlement read as %+v: %v, want NOT_FOUND", other, err)
		}
		if _, err := read.SwapReconciliation(ctx, other, it1.OperationID); !fault.Is(err, fault.NotFound) {
			t.Errorf("reconciliation read as %+v: %v, want NOT_FOUND", other, err)
		}
	}
}
