package x402_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/web3/x402"
)

// fixedClock is a clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// unsupported is a facilitator that serves no kind on the cluster.
type unsupported struct{ x402.Facilitator }

func (unsupported) Name() string { return "https://facilitator.example" }
func (unsupported) Supported(context.Context) (x402.Supported, error) {
	return x402.Supported{Kinds: []x402.SupportedKind{{X402Version: 2, Scheme: "exact", Network: "solana:other",
		Extra: &x402.Extra{FeePayer: "x"}}}}, nil
}

// down is a facilitator that does not answer.
type down struct{ x402.Facilitator }

func (down) Name() string { return "https://down.example" }
func (down) Supported(context.Context) (x402.Supported, error) {
	return x402.Supported{}, errors.New("connection refused")
}

// TestCheckVerifiesTheConfiguration: each part of an environment's
// configuration the check reads, broken alone, fails it with its reason;
// the whole passes with the cluster's network and the fee payer.
func TestCheckVerifiesTheConfiguration(t *testing.T) {
	l := newLoopback(t)
	ctx := context.Background()
	svc, err := x402.New(x402.Config{Clock: fixedClock{time.Unix(1, 0)}, MemoKey: []byte(strings.Repeat("k", 32)),
		Run: func(context.Context, func(x402.Store) error) error { return nil }, ReadFunc: func() x402.Store { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	res := []x402.Resource{{ID: "sound-analysis", Kind: x402.KindSoundAnalysis, Description: "One analysis.", Amount: money.Atomic(250_000)}}
	valid := func() x402.Environment {
		return x402.Environment{Chain: l.rpc, Facilitator: l.local, PayTo: l.d.PayTo, Asset: l.d.Mint, Decimals: 6, Resources: res}
	}
	_, stranger := chaintest.NewKeypair()
	cases := []struct {
		name   string
		change func(e *x402.Environment)
		setup  func() func()
		reason string
	}{
		{name: "valid"},
		{name: "a facilitator that does not answer", change: func(e *x402.Environment) { e.Facilitator = down{} },
			reason: x402.CheckFacilitatorUnavailable},
		{name: "a facilitator without exact on the network", change: func(e *x402.Environment) { e.Facilitator = unsupported{} },
			reason: x402.CheckFacilitatorUnsupported},
		{name: "no mint", change: func(e *x402.Environment) { e.Asset = stranger }, reason: x402.CheckMintMissing},
		{name: "other decimals", change: func(e *x402.Environment) { e.Decimals = 9 }, reason: x402.CheckDecimalsMismatch},
		{name: "payTo without a token account", change: func(e *x402.Environment) { e.PayTo = stranger },
			reason: x402.CheckPayToAccountMissing},
		{name: "an unfunded fee payer", setup: func() func() {
			a, _ := l.cl.Account(l.d.FeePayerAddress)
			l.cl.DeleteAccount(l.d.FeePayerAddress)
			return func() { l.cl.SetAccount(l.d.FeePayerAddress, a) }
		}, reason: x402.CheckFeePayerUnfunded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := valid()
			if c.change != nil {
				c.change(&e)
			}
			if c.setup != nil {
				defer c.setup()()
			}
			got := svc.Check(ctx, access.Test, e)
			if c.reason == "" {
				if !got.Passed || got.Network != l.network || got.FeePayer != l.d.FeePayerAddress.String() ||
					got.TokenProgram != l.d.TokenProgram.String() || got.ConfigHash == "" {
					t.Fatalf("check %+v", got)
				}
				return
			}
			if got.Passed || got.Reason != c.reason {
				t.Fatalf("check %+v, want %s", got, c.reason)
			}
		})
	}
	other := valid()
	other.PayTo = chain.Address{1}
	if svc.Check(ctx, access.Test, other).ConfigHash == svc.Check(ctx, access.Test, valid()).ConfigHash {
		t.Fatal("another payTo is the same configuration")
	}
}
