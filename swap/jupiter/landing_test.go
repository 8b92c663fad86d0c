package jupiter_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// The landing tests take a route from the aggregator simulator over
// loopback HTTP through the adapter's swap.RouteProvider methods, compile
// it as a v0 message against the lookup tables the route names, sign it
// with a wallet's own ed25519 key and land it on the loopback cluster over
// HTTP through chain/solanarpc, as the platform's wallet flow will.

// walletLamports is what each test wallet is airdropped.
const walletLamports = 1_000_000_000

// lander is a funded wallet holding an input token, with a JSON-RPC
// client of the rig's cluster.
type lander struct {
	r      *rig
	rpc    *solanarpc.Client
	priv   ed25519.PrivateKey
	wallet chain.Address
	source chain.Address // the wallet's token account of the input mint
}

// newLander funds a new wallet with walletLamports and minted of input.
func newLander(r *rig, input chain.Address, minted uint64) *lander {
	r.t.Helper()
	rpc, err := solanarpc.New(solanarpc.Config{URL: r.c.URL(), HTTPClient: urlguardtest.Client(r.t, r.c.URL()), Timeout: 5 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	priv, wallet := chaintest.NewKeypair()
	r.c.Airdrop(wallet, walletLamports)
	source, err := r.c.MintTo(wallet, input, minted)
	if err != nil {
		r.t.Fatal(err)
	}
	return &lander{r: r, rpc: rpc, priv: priv, wallet: wallet, source: source}
}

// route asks the adapter for a route and the instructions executing it for
// the wallet, through the swap.RouteProvider port.
func (l *lander) route(in, out chain.Address, amount uint64, slippage uint16) (swap.ProviderRoute, swap.RouteInstructions) {
	l.r.t.Helper()
	var provider swap.RouteProvider = l.r.client
	ctx := context.Background()
	route, err := provider.Route(ctx, swap.RouteRequest{InputMint: in, OutputMint: out, Amount: money.Atomic(amount), SlippageBps: slippage})
	if err != nil {
		l.r.t.Fatalf("Route: %v", err)
	}
	ins, err := provider.Instructions(ctx, route, l.wallet)
	if err != nil {
		l.r.t.Fatalf("Instructions: %v", err)
	}
	return route, ins
}

// sign compiles ins as a v0 message paid by the wallet, against the lookup
// tables read from the cluster, and returns the signed transaction.
func (l *lander) sign(ins swap.RouteInstructions) []byte {
	l.r.t.Helper()
	ctx := context.Background()
	var tables []message.LookupTable
	for _, addr := range ins.LookupTables {
		acct, err := l.rpc.GetAccountInfo(ctx, addr, chain.Confirmed)
		if err != nil {
			l.r.t.Fatalf("lookup table %s: %v", addr, err)
		}
		if acct.Owner != chaintest.LookupTableProgramID() {
			l.r.t.Fatalf("lookup table %s is owned by %s", addr, acct.Owner)
		}
		lt, err := message.DecodeLookupTable(addr, acct.Data)
		if err != nil {
			l.r.t.Fatal(err)
		}
		tables = append(tables, lt)
	}
	bh, err := l.rpc.GetLatestBlockhash(ctx, chain.Confirmed)
	if err != nil {
		l.r.t.Fatal(err)
	}
	msg, err := message.CompileV0(l.wallet, bh.Hash, ins.Instructions, tables)
	if err != nil {
		l.r.t.Fatalf("CompileV0: %v", err)
	}
	raw := append(message.AppendCompactU16(nil, 1), ed25519.Sign(l.priv, msg)...)
	return append(raw, msg...)
}

// lamports is the wallet's balance.
func (l *lander) lamports() uint64 {
	l.r.t.Helper()
	v, _, err := l.rpc.GetBalance(context.Background(), l.wallet, chain.Processed)
	if err != nil {
		l.r.t.Fatalf("GetBalance: %v", err)
	}
	return v
}

// tokens is the balance of a token account.
func (l *lander) tokens(acct chain.Address) uint64 {
	l.r.t.Helper()
	b, err := l.rpc.GetTokenAccountBalance(context.Background(), acct, chain.Processed)
	if err != nil {
		l.r.t.Fatalf("balance of %s: %v", acct, err)
	}
	return b.Amount
}

// landed advances the cluster past confirmation and reads the
// transaction.
func (l *lander) landed(sig string) chain.Transaction {
	l.r.t.Helper()
	l.r.c.AdvanceSlots(1)
	tx, err := l.rpc.GetTransaction(context.Background(), sig, chain.Confirmed)
	if err != nil {
		l.r.t.Fatalf("GetTransaction: %v", err)
	}
	return tx
}

// tokenBalance finds acct's entry in a transaction's token balances.
func tokenBalance(bals []chain.TokenBalance, acct chain.Address) (chain.TokenBalance, bool) {
	for _, b := range bals {
		if b.Account == acct {
			return b, true
		}
	}
	return chain.TokenBalance{}, false
}

func TestRouteLandsThroughItsLookupTable(t *testing.T) {
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	r.c.AdvanceSlots(1) // the pools' tables are usable from the slot after they were filled
	t22 := token2022.ProgramID()
	for _, tc := range []struct {
		name       string
		pool       chaintest.Pool
		table      chain.Address
		in, out    chain.Address
		outProgram chain.Address
		amount     uint64
		quotedOut  uint64 // the pool sends this
		outputFee  uint64 // the output mint withholds this of it
	}{
		// out = 5e11 × 2e9 × 9970 / (1e12 × 10000 + 2e9 × 9970); coin has no fee.
		{"classic SPL in, Token-2022 out", r.pool, r.table, r.plain, r.coin, t22, 2_000_000_000, 995_015_938, 0},
		// out = 1e12 × 1e9 × 9970 / (5e11 × 10000 + 1e9 × 9970); the fee
		// mint withholds ceil(2% of it) on the wallet's new account.
		{"Token-2022 in, 2% transfer-fee mint out", r.feePool, r.feeTab, r.coin, r.feeMint, t22, 1_000_000_000, 1_990_031_876, 39_800_638},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := newLander(r, tc.in, 5_000_000_000)
			dest := chaintest.AssociatedTokenAddress(l.wallet, tc.out, tc.outProgram)
			if _, err := l.rpc.GetAccountInfo(ctx, dest, chain.Processed); !errors.Is(err, chain.ErrAccountNotFound) {
				t.Fatalf("the output account exists before the swap: %v", err)
			}

			route, ins := l.route(tc.in, tc.out, tc.amount, 50)
			if route.InAtomic != money.Atomic(tc.amount) || route.OutAtomic != money.Atomic(tc.quotedOut) ||
				len(route.Steps) != 1 || route.Steps[0].Pool != tc.pool.Address {
				t.Fatalf("route: %+v", route)
			}
			if !slices.Equal(ins.LookupTables, []chain.Address{tc.table}) || ins.Instructions[ins.SwapIndex].ProgramID != chaintest.PoolProgramID() {
				t.Fatalf("instructions: %+v", ins)
			}
			sig, err := l.rpc.SendTransaction(ctx, l.sign(ins), chain.SendOptions{PreflightCommitment: chain.Processed})
			if err != nil {
				t.Fatalf("SendTransaction: %v", err)
			}
			tx := l.landed(sig)
			if tx.Err != "" || tx.Signature != sig || tx.AccountKeys[0] != l.wallet {
				t.Fatalf("err %q, signature %s, payer %s; logs %q", tx.Err, tx.Signature, tx.AccountKeys[0], tx.LogMessages)
			}

			// The pool's accounts came from the table, the user's stayed static.
			if len(tx.LoadedWritable) == 0 || len(tx.LoadedReadonly) == 0 {
				t.Fatalf("loaded writable %v, read-only %v", tx.LoadedWritable, tx.LoadedReadonly)
			}
			held := jupitertest.PoolAccounts(tc.pool)
			for _, a := range append(slices.Clone(tx.LoadedWritable), tx.LoadedReadonly...) {
				if !slices.Contains(held, a) {
					t.Errorf("loaded %s, which the pool's table does not hold", a)
				}
			}
			if !slices.Contains(tx.LoadedWritable, tc.pool.Address) || !slices.Contains(tx.AccountKeys, l.source) || !slices.Contains(tx.AccountKeys, dest) {
				t.Errorf("static keys %v, loaded writable %v", tx.AccountKeys, tx.LoadedWritable)
			}

			// The input fell by exactly the amount; the output account,
			// created by the setup instruction, got the quote's outAmount
			// less the output mint's fee.
			pre, ok1 := tokenBalance(tx.PreTokenBalances, l.source)
			post, ok2 := tokenBalance(tx.PostTokenBalances, l.source)
			if !ok1 || !ok2 || pre.Amount-post.Amount != tc.amount || post.Owner != l.wallet || post.Mint != tc.in {
				t.Errorf("source balances %+v -> %+v", pre, post)
			}
			if _, ok := tokenBalance(tx.PreTokenBalances, dest); ok {
				t.Errorf("the output account has a balance before the transaction that created it")
			}
			got, ok := tokenBalance(tx.PostTokenBalances, dest)
			want := tc.quotedOut - tc.outputFee
			if !ok || got.Amount != want || got.Owner != l.wallet || got.Mint != tc.out || got.ProgramID != tc.outProgram {
				t.Errorf("output balance %+v, want %d of %s", got, want, tc.out)
			}
			if in := l.tokens(l.source); in != 5_000_000_000-tc.amount {
				t.Errorf("input balance on chain %d, want %d", in, 5_000_000_000-tc.amount)
			}
			if out := l.tokens(dest); out != want {
				t.Errorf("output balance on chain %d, want %d", out, want)
			}

			// Lamports: the fee and the new account's rent.
			rent, err := l.rpc.GetAccountInfo(ctx, dest, chain.Processed)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.lamports(); tx.Fee == 0 || got != walletLamports-tx.Fee-rent.Lamports || tx.PreBalances[0]-tx.PostBalances[0] != tx.Fee+rent.Lamports {
				t.Errorf("wallet lamports %d after fee %d and rent %d", got, tx.Fee, rent.Lamports)
			}
		})
	}
}

// TestPriceMovedBetweenQuoteAndExecution moves the pool after the quote so
// that the swap would send less than the quote's threshold: with
// preflight the node refuses the transaction with the simulation's error,
// and without it the transaction lands failed with the program's
// SlippageToleranceExceeded, having moved nothing but its fee.
func TestPriceMovedBetweenQuoteAndExecution(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, jupitertest.Config{}, jupiter.Config{})
	r.c.AdvanceSlots(1)
	const minted, amount = 5_000_000_000, 2_000_000_000
	l := newLander(r, r.plain, minted)
	dest := chaintest.AssociatedTokenAddress(l.wallet, r.coin, token2022.ProgramID())
	route, ins := l.route(r.plain, r.coin, amount, 50)

	// The coin side loses 2% of its depth after the quote.
	const reservePlain, reserveCoin = 1_000_000_000_000, 490_000_000_000
	if err := r.c.SetPoolReserves(r.pool.Address, reservePlain, reserveCoin); err != nil {
		t.Fatal(err)
	}
	if now := chaintest.PoolAmountOut(reservePlain, reserveCoin, amount, r.pool.FeeBps); money.Atomic(now) >= route.ThresholdAtomic {
		t.Fatalf("the move leaves %d, not below the threshold %d", now, route.ThresholdAtomic)
	}
	raw := l.sign(ins)
	failure := fmt.Sprintf(`{"InstructionError":[%d,{"Custom":%d}]}`, ins.SwapIndex, chaintest.PoolErrSlippageToleranceExceeded)

	unmoved := func(lamports uint64) {
		t.Helper()
		if got := l.lamports(); got != lamports {
			t.Errorf("wallet lamports %d, want %d", got, lamports)
		}
		if in := l.tokens(l.source); in != minted {
			t.Errorf("input balance %d, want %d", in, minted)
		}
		if _, err := l.rpc.GetAccountInfo(ctx, dest, chain.Processed); !errors.Is(err, chain.ErrAccountNotFound) {
			t.Errorf("the output account exists: %v", err)
		}
		if a, b, err := r.c.PoolReserves(r.pool.Address); err != nil || a != reservePlain || b != reserveCoin {
			t.Errorf("reserves %d / %d (%v)", a, b, err)
		}
	}

	// With preflight: refused with the simulation's error; nothing lands.
	_, err := l.rpc.SendTransaction(ctx, raw, chain.SendOptions{PreflightCommitment: chain.Processed})
	var re *chain.RPCError
	if !errors.As(err, &re) || re.Code != chain.CodePreflightFailure {
		t.Fatalf("preflight: %v", err)
	}
	var sim struct {
		Err  json.RawMessage `json:"err"`
		Logs []string        `json:"logs"`
	}
	if err := json.Unmarshal([]byte(re.Data), &sim); err != nil || string(sim.Err) != failure ||
		!strings.Contains(strings.Join(sim.Logs, "\n"), "SlippageToleranceExceeded") {
		t.Fatalf("simulation result %s (%v), want err %s", re.Data, err, failure)
	}
	unmoved(walletLamports)

	// Without preflight: lands failed and keeps only the fee.
	sig, err := l.rpc.SendTransaction(ctx, raw, chain.SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatalf("SendTransaction with skipPreflight: %v", err)
	}
	tx := l.landed(sig)
	if tx.Err != failure || tx.Fee == 0 {
		t.Fatalf("err %s fee %d, want %s; logs %q", tx.Err, tx.Fee, failure, tx.LogMessages)
	}
	if len(tx.LoadedWritable) == 0 || len(tx.LoadedReadonly) == 0 {
		t.Errorf("loaded writable %v, read-only %v", tx.LoadedWritable, tx.LoadedReadonly)
	}
	pre, ok1 := tokenBalance(tx.PreTokenBalances, l.source)
	post, ok2 := tokenBalance(tx.PostTokenBalances, l.source)
	if !ok1 || !ok2 || pre.Amount != minted || post.Amount != minted {
		t.Errorf("source balances %+v -> %+v", pre, post)
	}
	unmoved(walletLamports - tx.Fee)
}
