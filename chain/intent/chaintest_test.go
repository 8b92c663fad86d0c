package intent

import (
	"context"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
)

// TestPreparedTransactionLandsOnChaintest builds an intent from the loopback
// cluster's real state (genesis, epoch, fee mint, blockhash), signs the
// prepared message with crypto/ed25519, sends it over HTTP with solana-go,
// and checks that the cluster executes it: the treasury receives exactly
// the net and the transaction carries the reference.
func TestPreparedTransactionLandsOnChaintest(t *testing.T) {
	ctx := context.Background()
	cl, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })

	h := newHarness(t, feeMint(6, 200, 5_000_000))
	m := feeMint(6, 200, 5_000_000)
	if err := cl.CreateMint(h.mint, m); err != nil {
		t.Fatal(err)
	}
	cl.Airdrop(h.payer, 1_000_000_000)
	if _, err := cl.MintTo(h.payer, h.mint, 10_000_000); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.MintTo(h.treasury, h.mint, 0); err != nil {
		t.Fatal(err)
	}
	// Feed the fake the cluster's real answers.
	acct := must[chain.AccountInfo](t)(cl.GetAccountInfo(ctx, h.mint, chain.Confirmed))
	bh, lvbh := cl.LatestBlockhash()
	ep := must[chain.EpochInfo](t)(cl.GetEpochInfo(ctx, chain.Processed))
	h.chain.genesis = cl.GenesisHash()
	h.chain.accounts[h.mint] = acct
	h.chain.epoch = ep
	h.chain.blockhash = chain.Blockhash{Hash: bh.String(), LastValidBlockHeight: lvbh}

	it := h.create()
	if it.Network != cl.Network().CAIP2() {
		t.Fatalf("network %s", it.Network)
	}
	sig, signed := h.sign(it)
	got, err := rpc.New(cl.URL()).SendRawTransactionWithOpts(ctx, signed, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentProcessed})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != sig {
		t.Fatalf("cluster signature %s, ours %s", got, sig)
	}
	cl.AdvanceSlots(2)
	bal := must[chain.TokenAmount](t)(cl.GetTokenAccountBalance(ctx, token2022.AssociatedTokenAddress(h.treasury, h.mint), chain.Confirmed))
	if bal.Amount != it.NetAtomic {
		t.Fatalf("treasury received %d, want net %d", bal.Amount, it.NetAtomic)
	}
	src := must[chain.TokenAmount](t)(cl.GetTokenAccountBalance(ctx, it.Source, chain.Confirmed))
	if src.Amount != 10_000_000-it.GrossAtomic {
		t.Fatalf("payer kept %d", src.Amount)
	}
	refSigs, err := rpc.New(cl.URL()).GetSignaturesForAddressWithOpts(ctx, solana.PublicKeyFromBytes(it.Reference[:]),
		&rpc.GetSignaturesForAddressOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || len(refSigs) != 1 || refSigs[0].Signature.String() != sig {
		t.Fatalf("reference lookup: %v %v", err, refSigs)
	}
}
