package rewards

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// newestEvidence is a TreasuryReader holding one environment's newest
// evidenced challenge (none when zero) or failing with err.
type newestEvidence struct {
	c   Challenge
	err error
}

func (n newestEvidence) ChallengeNewestEvidence(context.Context, access.Environment) (Challenge, error) {
	if n.err != nil {
		return Challenge{}, n.err
	}
	if n.c.ID == "" {
		return Challenge{}, fault.E("test", fault.NotFound, "")
	}
	return n.c, nil
}

// noChain is a cluster client no test calls: Payouts never reads the
// cluster.
type noChain struct{ ChainClient }

// TestPayoutsFromTheTreasurysReadings: an environment without a treasury
// is not configured; a configured one is not verified until a
// reconciliation read its signer's account (a reading of another
// signer's account proves nothing); a store failure is an error, never a
// guess.
func TestPayoutsFromTheTreasurysReadings(t *testing.T) {
	ctx := context.Background()
	signer, err := NewLocalSigner(xorSealer{}, SealKey(xorSealer{}, ed25519Key(make([]byte, 32))))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewLocalSigner(xorSealer{}, SealKey(xorSealer{}, ed25519Key(append(make([]byte, 31), 1))))
	if err != nil {
		t.Fatal(err)
	}
	var mint chain.Address
	mint[0] = 7
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	read := func(s TreasurySigner) Challenge {
		return Challenge{ID: "chl_1", Pool: Pool{Mint: mint, Evidence: Evidence{TreasuryAccount: token2022.AssociatedTokenAddress(s.Address(), mint),
			Slot: 90, CheckedAt: at}}}
	}
	svc := New(Config{Environments: map[access.Environment]Environment{access.Test: {Client: noChain{}, Signer: signer}}})
	for _, c := range []struct {
		name string
		env  access.Environment
		st   newestEvidence
		want Payouts
	}{
		{"no treasury", access.Live, newestEvidence{c: read(signer)}, Payouts{Reason: ReasonNotConfigured}},
		{"never read", access.Test, newestEvidence{}, Payouts{Configured: true, Reason: ReasonNotChecked}},
		{"another signer's account", access.Test, newestEvidence{c: read(other)}, Payouts{Configured: true, Reason: ReasonNotChecked}},
		{"read", access.Test, newestEvidence{c: read(signer)}, Payouts{Configured: true, Verified: true, Enabled: true, CheckedAt: at}},
	} {
		got, err := svc.Payouts(ctx, c.st, c.env)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := svc.Payouts(ctx, newestEvidence{err: fault.E("test", fault.Internal, "")}, access.Test); !fault.Is(err, fault.Internal) {
		t.Errorf("a store failure: %v, want it returned", err)
	}
}
