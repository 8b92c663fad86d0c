package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/token"
)

// exerciseToken covers the token registry's runs: a run round-trips whole
// (checks, evidence, a supply beyond int64), the newest run is found per
// environment, and the decisive read skips ERROR runs and other
// configurations.
func exerciseToken(t *testing.T, open Opener) {
	db, clock := fresh(t, open)
	ctx := context.Background()
	insert := func(r token.Run) token.Run {
		t.Helper()
		var out token.Run
		if err := db.InTx(ctx, func(tx *store.Tx) (err error) {
			out, err = tx.TokenRunInsert(ctx, r)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		return out
	}
	slot := uint64(312_000_123)
	supply := uint64(18_446_000_000_000_000_000) // above int64's range
	bt := clock.Now().Add(-2 * time.Second).UTC().Truncate(time.Second)
	at := func() time.Time { return clock.Now().UTC().Truncate(time.Microsecond) }
	passed := insert(token.Run{Environment: access.Test, ConfigHash: "h1", Mint: "Mint1", Network: "solana:abc", Cluster: chain.Localnet,
		Outcome: token.Passed, Checks: []token.Check{{Code: "DECIMALS", Passed: true, Required: true, Actual: float64(9), Expected: float64(9)},
			{Code: "AUTHORITY_STATE", Passed: true, Required: true, Actual: map[string]any{"mintAuthority": nil}}},
		Slot: &slot, BlockTime: &bt, Supply: &supply, StartedAt: at(), FinishedAt: at()})
	if passed.ID == "" {
		t.Fatal("no id assigned")
	}
	insert(token.Run{Environment: access.Test, ConfigHash: "h1", Mint: "Mint1", Outcome: token.Errored,
		ErrorCode: token.ErrorNodeBehind, ErrorMessage: "the node is behind", StartedAt: at(), FinishedAt: at()})
	other := insert(token.Run{Environment: access.Test, ConfigHash: "h2", Mint: "Mint2", Outcome: token.Failed,
		Checks: []token.Check{{Code: "MINT_EXISTS", Required: true, Actual: false}}, StartedAt: at(), FinishedAt: at()})
	insert(token.Run{Environment: access.Live, ConfigHash: "h1", Mint: "Mint1", Outcome: token.Errored, StartedAt: at(), FinishedAt: at()})

	read := db.Read()
	latest, ok, err := read.TokenRunLatest(ctx, access.Test)
	if err != nil || !ok || latest.ID != other.ID {
		t.Fatalf("latest test run = %+v, %v, %v; want %s", latest, ok, err, other.ID)
	}
	got, ok, err := read.TokenRunLatestDecisive(ctx, access.Test, "h1")
	if err != nil || !ok {
		t.Fatalf("decisive: %v %v", ok, err)
	}
	if diff := cmp.Diff(passed, got); diff != "" {
		t.Fatalf("round trip (-stored +read):\n%s", diff)
	}
	if e, _, _ := read.TokenRunLatest(ctx, access.Live); e.Outcome != token.Errored || e.Checks == nil {
		t.Fatalf("live run = %+v (an ERROR run reads back with an empty, non-nil check list)", e)
	}
	if _, ok, err := read.TokenRunLatestDecisive(ctx, access.Live, "h1"); ok || err != nil {
		t.Fatalf("an ERROR run counted as decisive: %v %v", ok, err)
	}
}
