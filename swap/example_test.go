package swap_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/swap/swaptest"
	"github.com/creatormusic/platform/urlguard"
)

// fixedClock is a clock that stays where it is set.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// verifiedWallets is the service's answer to "is this a verified wallet of
// this user?": here one user's one wallet, verified elsewhere.
type verifiedWallets struct {
	userID string
	wallet chain.Address
}

func (w verifiedWallets) Verified(_ context.Context, _, userID string, address chain.Address) (bool, error) {
	return userID == w.userID && address == w.wallet, nil
}

// A Go service embeds the swap domain on its own: a cluster client, a
// route provider, a store and a clock make a swap.Service, with no HTTP
// layer and no database. Here the cluster is chain/chaintest's loopback
// simulator, reached over JSON-RPC through the solana-go adapter, the
// route provider is the Jupiter adapter talking to jupitertest's loopback
// aggregator, and the store is swaptest's in-memory one. A wallet sells
// 1.5 CMT (Token-2022, 2% transfer fee) for TUSD (no fee) through a
// constant-product pool, from the quote to the confirmed transaction, its
// settlement with the service fee on the financial ledger, and its
// reconciliation once the cluster has finalized it.
func Example() {
	ctx := context.Background()
	check := func(err error) {
		if err != nil {
			panic(err)
		}
	}

	// The cluster: two mints and a pool of 1,000,000 CMT against
	// 2,000,000 TUSD with a 30 bps venue fee, whose accounts the swap
	// loads from an address lookup table.
	cluster, err := chaintest.New(chaintest.Config{})
	check(err)
	defer cluster.Close()
	_, cmt := chaintest.NewKeypair()
	_, tusd := chaintest.NewKeypair()
	fee := token2022.TransferFee{BasisPoints: 200, MaximumFee: 1 << 62}
	check(cluster.CreateMint(cmt, token2022.Mint{Decimals: 9, IsInitialized: true,
		Extensions: []token2022.Extension{token2022.TransferFeeConfig{Older: fee, Newer: fee}}}))
	check(cluster.CreateMint(tusd, token2022.Mint{Decimals: 6, IsInitialized: true}))
	pool, table, err := jupitertest.SeedPool(cluster, chaintest.PoolConfig{MintA: cmt, MintB: tusd,
		ReserveA: 1_000_000_000_000_000, ReserveB: 2_000_000_000_000, FeeBps: 30})
	check(err)
	aggregator, err := jupitertest.New(cluster, jupitertest.Config{})
	check(err)
	defer aggregator.Close()
	check(aggregator.AddPool(pool.Address, table))
	cluster.AdvanceSlots(1) // the table's addresses are usable from the next slot

	// The wallet holds 10 CMT and 1 SOL for fees and rent; the platform's
	// fee recipient has its account of CMT, where the service fee goes.
	walletKey, wallet := chaintest.NewKeypair()
	cluster.Airdrop(wallet, 1_000_000_000)
	_, err = cluster.MintTo(wallet, cmt, 10_000_000_000)
	check(err)
	_, feeRecipient := chaintest.NewKeypair()
	_, err = cluster.MintTo(feeRecipient, cmt, 0)
	check(err)

	// The adapters refuse loopback and plain http (urlguard); a guard that
	// allows http and exactly the two simulators' addresses reaches them.
	var sims []netip.AddrPort
	for _, u := range []string{cluster.URL(), aggregator.URL()} {
		ap, err := urlguard.LoopbackOf(u)
		check(err)
		sims = append(sims, ap)
	}
	guard, err := urlguard.New(urlguard.Config{AllowHTTP: true, AllowLoopback: sims})
	check(err)
	defer guard.CloseIdleConnections()
	rpc, err := solanarpc.New(solanarpc.Config{URL: cluster.URL(), HTTPClient: guard.Client()})
	check(err)
	routes, err := jupiter.New(jupiter.Config{BaseURL: aggregator.URL(), HTTPClient: guard.Client()})
	check(err)

	// The service: the test environment swaps on that cluster through
	// that provider, among the two trusted tokens; the pool's program is
	// the one swap program a settled transaction may call beside the
	// base programs.
	clock := fixedClock{t: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)}
	mem := swaptest.NewStore(clock)
	user := &access.Principal{Kind: access.CredentialSession, TenantID: "ten_example", WorkspaceID: "ws_example",
		UserID: "usr_example", SessionID: "ses_example", Environment: access.Test}
	svc, err := swap.New(swap.Config{
		Environments: map[access.Environment]swap.Environment{access.Test: {Chain: rpc, Routes: routes,
			SwapPrograms: []chain.Address{chaintest.PoolProgramID()},
			FeeRecipient: feeRecipient.String(), Registry: &swap.Registry{Tokens: []swap.Token{
				{Mint: cmt.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 9, Symbol: "CMT", Name: "Creator Music Token"},
				{Mint: tusd.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 6, Symbol: "TUSD", Name: "Test Dollar"},
			}}}},
		Wallets:        verifiedWallets{userID: user.UserID, wallet: wallet},
		Clock:          clock,
		Run:            mem.Run,
		ReadFunc:       mem.Read,
		SubmitRun:      mem.SubmitRun,
		SubmitReadFunc: mem.SubmitRead,
	})
	check(err)

	// Publish the registry, settings and fee policies, then read every
	// registry mint from the cluster: only a matched mint is swapped.
	check(svc.Publish(ctx))
	run, _, err := svc.VerifyRegistry(ctx, access.Test)
	check(err)
	for _, c := range run.Checks {
		fmt.Println("registry:", c.Status, "decimals", c.Decimals)
	}

	// Quote, then save the quote and its operation in one unit of work.
	res, err := svc.Quote(ctx, mem.Read(), user, swap.QuoteInput{InputMint: cmt.String(), OutputMint: tusd.String(),
		Amount: "1.5", Wallet: wallet.String()})
	check(err)
	var op swap.Operation
	check(mem.Run(ctx, func(st swap.Store) error {
		op, err = svc.SaveQuote(ctx, st, res)
		return err
	}))
	// The amounts follow from the pool's reserves: the pool receives the
	// executable input less CMT's 2% transfer fee and prices it as a
	// constant-product pool does; the minimum is the default 50 bps below.
	q := res.Quote
	fmt.Printf("gross input: %s CMT (%d atomic)\n", money.Format(q.GrossInputAtomic, 9), q.GrossInputAtomic)
	fmt.Printf("service fee: %s CMT (%d bps)\n", money.Format(q.ServiceFeeAtomic, 9), q.FeeBreakdown.ServiceFeeBps)
	fmt.Printf("executable input: %s CMT\n", money.Format(q.ExecutableInputAtomic, 9))
	fmt.Printf("expected output: %s TUSD\n", money.Format(q.ExpectedOutputAtomic, 6))
	fmt.Printf("minimum output: %s TUSD (%d bps slippage)\n", money.Format(q.MinimumOutputAtomic, 6), q.SlippageBps)
	fmt.Println("operation:", op.State)

	// Bind the quote to an intent with the transaction the wallet signs.
	prep, err := svc.PrepareIntent(ctx, mem.Read(), user, swap.IntentInput{QuoteID: q.ID, Wallet: wallet.String()})
	check(err)
	check(mem.Run(ctx, func(st swap.Store) error {
		op, err = svc.SaveIntent(ctx, st, prep)
		return err
	}))
	fmt.Println("operation:", op.State)

	// The wallet signs the prepared message as it is; the signed
	// transaction is the unsigned one with the signature in its slot.
	sig := ed25519.Sign(walletKey, prep.Prepared.Message)
	signed := slices.Clone(prep.Prepared.Unsigned)
	copy(signed[1:], sig) // after the one-byte signature count
	var sub swap.Submitted
	check(mem.SubmitRun(ctx, func(st swap.SubmitStore) error {
		sub, err = svc.Submit(ctx, st, user, prep.Intent.ID, swap.SubmitInput{Signature: token2022.EncodeBase58(sig),
			SignedTransactionBase64: base64.StdEncoding.EncodeToString(signed)})
		return err
	}))
	fmt.Println("operation:", sub.Operation.State, "network:", sub.Submission.State)
	for _, j := range mem.Jobs() {
		fmt.Println("job enqueued:", j.Kind)
	}

	// The watch job's work, run by hand: each step inspects the chain,
	// sends the stored bytes while the chain does not know them, and
	// applies what it reports. The cluster's slots move between steps:
	// the first step sends, and a slot later the next finds the
	// transaction confirmed, reads it back from the cluster, verifies it
	// against the intent and settles it.
	for again := true; again; {
		again, err = svc.Watch(ctx, sub.Operation.ID)
		check(err)
		_, op, err = svc.Status(ctx, mem.Read(), user, prep.Intent.ID)
		check(err)
		fmt.Println("watch:", op.State)
		cluster.AdvanceSlots(1)
	}
	for _, e := range mem.Events() {
		fmt.Println("event:", e.Type)
	}

	// The wallet paid the gross input, 5,000 lamports for its signature
	// and the rent of its new TUSD account, and received the expected
	// output; the fee recipient received the service fee less CMT's
	// transfer fee, withheld on its account.
	balance := func(owner, mint chain.Address) uint64 {
		b, err := rpc.GetTokenAccountBalance(ctx, token2022.AssociatedTokenAddressFor(owner, mint, token2022.ProgramID()), chain.Confirmed)
		check(err)
		return b.Amount
	}
	lamports, _, err := rpc.GetBalance(ctx, wallet, chain.Confirmed)
	check(err)
	fmt.Println("wallet CMT:", money.Format(money.Atomic(balance(wallet, cmt)), 9))
	fmt.Println("wallet TUSD:", money.Format(money.Atomic(balance(wallet, tusd)), 6))
	fmt.Println("wallet lamports:", lamports)
	fmt.Println("fee recipient CMT:", money.Format(money.Atomic(balance(feeRecipient, cmt)), 9))

	// The settlement records what the chain shows: the fee recipient
	// received the service fee less the transfer fee, and that is the
	// platform's revenue, one movement on the owner's financial ledger.
	// Its accounts are per mint; here they are labeled.
	owner := swap.OwnerOf(user)
	records := mem.Read().SettleStore()
	set, err := records.SwapSettlement(ctx, owner, op.ID)
	check(err)
	fmt.Printf("settlement: fee received %s of %s CMT\n", money.Format(set.FeeReceivedAtomic, int(set.FeeDecimals)),
		money.Format(set.ServiceFeeAtomic, int(set.FeeDecimals)))
	mv, err := records.LedgerMovementGet(ctx, user.Scope(), swap.FeeReference(op.ID))
	check(err)
	label := map[string]string{swap.FeeRevenueAccount(cmt): "swap fee revenue",
		swap.FeeRecipientAccount(feeRecipient, cmt): "fee recipient's CMT"}
	for _, p := range mv.Postings {
		fmt.Printf("%s ledger: %s %s %s CMT\n", mv.Ledger, p.Direction, label[p.Account], money.Format(p.Amount, mv.Decimals))
	}
	// The settlement enqueued the reconciliation in its unit of work.
	var job jobs.Job
	for _, j := range mem.Jobs() {
		if j.Kind == swap.JobReconcile {
			fmt.Println("job enqueued:", j.Kind)
			job = j.Job
		}
	}

	// The reconciliation job's work, run by hand as the job workers would
	// run it: it reads the transaction again at finalized commitment, so
	// until the cluster finalizes it (32 slots after it landed) an
	// attempt fails with RESULT_NOT_READY and is retried later. Once
	// final, the transaction is verified again and compared with the
	// quote, the intent, the settlement and the fee's movement.
	var reconcile jobs.Handler
	for _, k := range svc.Jobs() {
		if k.Name == swap.JobReconcile {
			reconcile = k.HandlerFunc
		}
	}
	seen := len(mem.Events())
	for job.Attempts = 1; ; job.Attempts++ {
		err := reconcile(ctx, job)
		if err == nil {
			break
		}
		if !fault.Is(err, fault.ResultNotReady) {
			panic(err)
		}
		fmt.Printf("reconcile attempt %d: %s\n", job.Attempts, fault.CodeOf(err))
		cluster.AdvanceSlots(16)
	}
	_, op, err = svc.Status(ctx, mem.Read(), user, prep.Intent.ID)
	check(err)
	rec, err := records.SwapReconciliation(ctx, owner, op.ID)
	check(err)
	fmt.Printf("reconcile attempt %d: %s, outcome %s\n", job.Attempts, op.State, rec.Reconciliation.Outcome)
	for _, e := range mem.Events()[seen:] {
		fmt.Println("event:", e.Type)
	}
	// Output:
	// registry: MATCHED decimals 9
	// registry: MATCHED decimals 6
	// gross input: 1.5 CMT (1500000000 atomic)
	// service fee: 0.03 CMT (200 bps)
	// executable input: 1.47 CMT
	// expected output: 2.872552 TUSD
	// minimum output: 2.858189 TUSD (50 bps slippage)
	// operation: QUOTED
	// operation: AWAITING_SIGNATURE
	// operation: SUBMITTED network: submitted
	// job enqueued: swap.watch
	// watch: SUBMITTED
	// watch: SETTLED
	// event: swap_operation.quoted
	// event: swap_operation.awaiting_signature
	// event: swap_operation.submitted
	// event: swap_operation.confirmed
	// event: swap_operation.verifying
	// event: swap_operation.verified
	// event: swap_operation.settling
	// event: ledger.movement.posted
	// event: swap_operation.settled
	// wallet CMT: 8.5
	// wallet TUSD: 2.872552
	// wallet lamports: 997920920
	// fee recipient CMT: 0.0294
	// settlement: fee received 0.0294 of 0.03 CMT
	// financial ledger: debit swap fee revenue 0.0294 CMT
	// financial ledger: credit fee recipient's CMT 0.0294 CMT
	// job enqueued: swap.reconcile
	// reconcile attempt 1: RESULT_NOT_READY
	// reconcile attempt 2: RESULT_NOT_READY
	// reconcile attempt 3: RECONCILED, outcome MATCH
	// event: swap_operation.reconciling
	// event: swap_operation.reconciled
}
