package solanarpc_test

import (
	"context"
	"crypto/ed25519"
	"slices"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// TestV0SwapThroughLookupTable compiles a swap with chain/message as a v0
// message whose pool, vaults, mints, token programs and destination load
// from a lookup table, signs it, sends it to the loopback cluster over
// HTTP and reads its effects back with GetTransaction.
func TestV0SwapThroughLookupTable(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t)
	cl.SetEpoch(2)
	c := newClient(t, cl.URL(), 5*time.Second)
	user := newSigner(cl, 1_000_000_000)

	// The platform token: Token-2022 with a 2% transfer fee; the other
	// side a classic SPL Token mint.
	_, platform := chaintest.NewKeypair()
	fee := token2022.TransferFee{BasisPoints: 200, MaximumFee: 1_000_000_000_000}
	if err := cl.CreateMint(platform, token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{
		token2022.TransferFeeConfig{Older: fee, Newer: fee},
	}}); err != nil {
		t.Fatal(err)
	}
	_, usd := chaintest.NewKeypair()
	cl.SetAccount(usd, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	pool, err := cl.CreatePool(chaintest.PoolConfig{MintA: usd, MintB: platform, ReserveA: 1_000_000_000_000, ReserveB: 2_000_000_000_000, FeeBps: 30})
	if err != nil {
		t.Fatal(err)
	}
	src, err := cl.MintTo(user.addr, platform, 5_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := cl.MintTo(user.addr, usd, 0)
	if err != nil {
		t.Fatal(err)
	}
	table, err := cl.CreateLookupTable(user.addr, []chain.Address{
		pool.Address, pool.VaultA, pool.VaultB, pool.MintA, pool.MintB, pool.TokenProgramA, pool.TokenProgramB, dst,
	})
	if err != nil {
		t.Fatal(err)
	}
	cl.AdvanceSlots(1) // the table's addresses are usable from the next slot
	lt, err := cl.LookupTable(table)
	if err != nil {
		t.Fatal(err)
	}

	// Sell 1e9 platform tokens: 2e7 is withheld on the vault, the pool
	// receives 9.8e8 and sends 1e12 × 9.8e8 × 9970 / (2e12 × 10000 + 9.8e8 × 9970).
	const in, out = 1_000_000_000, 488_291_454
	swap, err := chaintest.PoolSwapInstruction(chaintest.PoolSwap{Pool: pool, InputMint: platform, Authority: user.addr,
		Source: src, Destination: dst, InAmount: in, QuotedOutAmount: out, SlippageBps: 50})
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := message.Compile(message.V0, user.addr, latest(t, c), []message.Instruction{swap}, []message.LookupTable{lt})
	if err != nil {
		t.Fatal(err)
	}
	if len(compiled.Lookups) != 1 || len(compiled.StaticKeys) != 3 { // user, source, pool program
		t.Fatalf("static keys %v lookups %+v", compiled.StaticKeys, compiled.Lookups)
	}
	raw := append(message.AppendCompactU16(nil, 1), ed25519.Sign(user.priv, compiled.Bytes)...)
	raw = append(raw, compiled.Bytes...)
	sig := send(t, c, raw)
	cl.AdvanceSlots(1)

	tx, err := c.GetTransaction(ctx, sig, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTransaction: %v", err)
	}
	if tx.Err != "" || tx.Fee != 5000 || tx.NumSigners != 1 {
		t.Fatalf("err %q fee %d signers %d; logs %q", tx.Err, tx.Fee, tx.NumSigners, tx.LogMessages)
	}
	if !sameAddrs(tx.AccountKeys, compiled.StaticKeys) || !sameAddrs(tx.LoadedWritable, compiled.LoadedWritable) ||
		!sameAddrs(tx.LoadedReadonly, compiled.LoadedReadonly) || !sameAddrs(tx.Keys(), compiled.Keys()) {
		t.Fatalf("keys %v + %v + %v, want %v", tx.AccountKeys, tx.LoadedWritable, tx.LoadedReadonly, compiled.Keys())
	}
	wantW := []chain.Address{pool.Address, dst, pool.VaultB, pool.VaultA}
	if !sameAddrs(tx.LoadedWritable, wantW) {
		t.Errorf("loaded writable %v, want %v", tx.LoadedWritable, wantW)
	}
	keys := tx.Keys()
	if len(tx.PreBalances) != len(keys) || len(tx.PostBalances) != len(keys) {
		t.Fatalf("balances over %d and %d keys, want %d", len(tx.PreBalances), len(tx.PostBalances), len(keys))
	}
	if tx.PreBalances[0] != 1_000_000_000 || tx.PostBalances[0] != 1_000_000_000-5000 {
		t.Errorf("payer lamports %d -> %d", tx.PreBalances[0], tx.PostBalances[0])
	}
	pi := slices.Index(keys, pool.Address)
	if pi < len(tx.AccountKeys) || tx.PreBalances[pi] != chaintest.RentExemptMinimum(chaintest.PoolAccountSize) || tx.PostBalances[pi] != tx.PreBalances[pi] {
		t.Errorf("pool at %d: lamports %d -> %d", pi, tx.PreBalances[pi], tx.PostBalances[pi])
	}
	if len(tx.Instructions) != 1 || tx.Instructions[0].ProgramID != chaintest.PoolProgramID() {
		t.Fatalf("instructions %+v", tx.Instructions)
	}
	for i, a := range swap.Accounts {
		if tx.Instructions[0].Accounts[i] != a.Key {
			t.Errorf("instruction account %d is %s, want %s", i, tx.Instructions[0].Accounts[i], a.Key)
		}
	}

	// Token balances resolve over the full key list, the loaded vaults
	// and destination included.
	for _, w := range []struct {
		name        string
		acct, owner chain.Address
		pre, post   uint64
	}{
		{"source", src, user.addr, 5_000_000_000, 4_000_000_000},
		{"destination", dst, user.addr, 0, out},
		{"platform vault", pool.VaultB, pool.Address, 2_000_000_000_000, 2_000_000_000_000 + in - 20_000_000},
		{"usd vault", pool.VaultA, pool.Address, 1_000_000_000_000, 1_000_000_000_000 - out},
	} {
		pre, ok1 := findBalance(tx.PreTokenBalances, w.acct)
		post, ok2 := findBalance(tx.PostTokenBalances, w.acct)
		if !ok1 || !ok2 {
			t.Errorf("%s: no balance entries", w.name)
			continue
		}
		if pre.Amount != w.pre || post.Amount != w.post || post.Owner != w.owner || keys[post.AccountIndex] != w.acct || keys[pre.AccountIndex] != w.acct {
			t.Errorf("%s: %d -> %d owner %s index %d, want %d -> %d owner %s", w.name, pre.Amount, post.Amount, post.Owner, post.AccountIndex, w.pre, w.post, w.owner)
		}
	}
	// The chain agrees.
	for acct, want := range map[chain.Address]uint64{src: 4_000_000_000, dst: out, pool.VaultB: 2_000_980_000_000, pool.VaultA: 1_000_000_000_000 - out} {
		got, err := c.GetTokenAccountBalance(ctx, acct, chain.Processed)
		if err != nil || got.Amount != want {
			t.Errorf("balance of %s: %d %v, want %d", acct, got.Amount, err, want)
		}
	}
}
