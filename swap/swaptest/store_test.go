package swaptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/swaptest"
)

// clock is a settable clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func addr(n byte) chain.Address { return chain.Address{0: 0xB0, 1: n, 31: n} }

var (
	alice = swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_alice", Environment: access.Test}
	// Owners that differ from alice in one field each.
	otherUser      = swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_bob", Environment: access.Test}
	otherWorkspace = swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_2", UserID: "usr_alice", Environment: access.Test}
	otherTenant    = swap.Owner{TenantID: "ten_2", WorkspaceID: "ws_1", UserID: "usr_alice", Environment: access.Test}
	otherEnv       = swap.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_alice", Environment: access.Live}
)

// sealedQuote is a consistent quote of operation opID for alice.
func sealedQuote(id, opID string) swap.Quote {
	in, out := addr(6), addr(7)
	return swap.Quote{ID: id, OperationID: opID, Owner: alice, Terms: swap.Terms{Provider: "jupiter", Network: "solana:localnet", Wallet: addr(1),
		RoutingMode: swap.ExactIn, InputMint: in, InputTokenProgram: token2022.ProgramID(), InputDecimals: 9,
		OutputMint: out, OutputTokenProgram: token2022.ProgramID(), OutputDecimals: 6,
		GrossInputAtomic: 1_000_000_000, ServiceFeeAtomic: 20_000_000, ExecutableInputAtomic: 980_000_000,
		ExpectedOutputAtomic: 5_000_000, MinimumOutputAtomic: 4_975_000, SlippageBps: 50, PriceImpactBps: 12,
		Route: []swap.RouteStep{{Venue: "Loopback CP", Pool: addr(10), InputMint: in, OutputMint: out, InAtomic: 980_000_000,
			OutAtomic: 5_000_000, ShareBps: 10000}},
		FeeBreakdown: swap.FeeBreakdown{ServiceFeeBps: 200, ServiceFeeMint: in, NetworkFeeLamports: 5_000, PriorityFeeLamports: 14_000}},
		FeePolicyVersion: "1", RegistryVersion: "1", ProviderQuote: []byte(`{"inAmount":"980000000","outAmount":"5000000"}`),
		CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Second)}.Seal()
}

// preparedMessage is a v0 message the wallet alone signs.
func preparedMessage(t *testing.T, memo string) []byte {
	t.Helper()
	msg, err := message.CompileV0(addr(1), token2022.EncodeBase58(make([]byte, 32)), []message.Instruction{message.Memo(memo, addr(1))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// boundIntent binds q as intent id.
func boundIntent(t *testing.T, q swap.Quote, id string, msg []byte) swap.Intent {
	t.Helper()
	it, err := swap.NewIntent(q, swap.Binding{ID: id, Owner: q.Owner, SessionID: "ses_1", Wallet: q.Wallet,
		FeePolicyVersion: q.FeePolicyVersion, RegistryVersion: q.RegistryVersion, FeeRecipient: addr(4), FeeAccount: addr(5),
		FeeRecipientVerified: true, Message: msg, RecentBlockhash: "blockhash", LastValidBlockHeight: 1000}, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func operation(id string, owner swap.Owner) swap.Operation {
	return swap.Operation{ID: id, Owner: owner, State: swap.StateQuoted, QuoteID: "q_" + id, Version: 1, CreatedAt: t0, UpdatedAt: t0}
}

// unit is a unit of work's handle: the store's handles serve every port,
// the ledger's reads included.
type unit interface {
	swap.Store
	swap.SubmitStore
	ledger.Store
}

// seeded is a store holding, for alice, operation op_1 with quote q_1,
// intent i_1 and a submission of signature sig_1, and operation op_2
// with quote q_2 and signature sig_2 bound, verified (swv_2), settled
// (sws_2) and reconciled (swr_2), with its fee movement on alice's
// financial ledger; a registry run srr_1 of the test registry's version
// 1 and the test fee policy's version 1.
type seeded struct {
	st    *swaptest.Store
	clock *clock
	q1    swap.Quote
	it1   swap.Intent
	msg   []byte
}

func seed(t *testing.T) seeded {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: t0}
	st := swaptest.NewStore(clk)
	s := seeded{st: st, clock: clk, q1: sealedQuote("q_1", "op_1"), msg: preparedMessage(t, "swap:i_1")}
	s.it1 = boundIntent(t, s.q1, "i_1", s.msg)
	err := st.Run(ctx, func(st swap.Store) error {
		tx := st.(unit)
		o2 := operation("op_2", alice)
		o2.Signature = "sig_2"
		for _, o := range []swap.Operation{operation("op_1", alice), o2} {
			if err := tx.SwapOperationInsert(ctx, o); err != nil {
				return err
			}
		}
		if err := tx.SwapQuoteInsert(ctx, s.q1); err != nil {
			return err
		}
		if err := tx.SwapQuoteInsert(ctx, sealedQuote("q_2", "op_2")); err != nil {
			return err
		}
		if err := tx.SwapIntentInsert(ctx, s.it1, swap.Prepared{Message: s.msg, LastValidBlockHeight: 1000, ExpiresAt: t0.Add(20 * time.Second),
			PriorityFeeLamports: 1400, RentLamports: 2_074_080}); err != nil {
			return err
		}
		if err := tx.SwapRegistryRunInsert(ctx, swap.RegistryRun{ID: "srr_1", Environment: "test", RegistryVersion: 1,
			Network: "solana:localnet", CheckedAt: t0}); err != nil {
			return err
		}
		if _, _, err := policy.Publish(ctx, tx, policy.Scope{Environment: access.Test}, swap.PolicyFees,
			swap.FeePolicy{ServiceFeeBps: swap.ServiceFeeBps, FeeRecipient: addr(4).String()}, "test"); err != nil {
			return err
		}
		if err := tx.SwapSubmissionInsert(ctx, "op_1", relay.Submission{Network: "solana:localnet", Signature: "sig_1", Wire: []byte{1, 2, 3},
			Blockhash: "blockhash", LastValidBlockHeight: 1000, State: relay.Submitted}); err != nil {
			return err
		}
		return settleOp2(ctx, tx.SettleStore())
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	return s
}

// refusal is a call the seeded store refuses with code, changing
// nothing.
type refusal struct {
	name string
	code fault.Code
	call func(s seeded, tx unit) error
}

// TestRefusals lists every write the ports refuse and every read they
// answer NOT_FOUND, against the seeded store, and checks that a refused
// write changed nothing.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []refusal{
		// Operations.
		{"an operation id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapOperationInsert(ctx, operation("op_1", otherUser))
		}},
		{"a new operation with a bound signature", fault.Conflict, func(s seeded, tx unit) error {
			o := operation("op_3", alice)
			o.Signature = "sig_2"
			return tx.SwapOperationInsert(ctx, o)
		}},
		{"an update from a stale version", fault.Conflict, func(s seeded, tx unit) error {
			o := operation("op_1", alice)
			o.State, o.Version = swap.StateIntentCreated, 3
			return tx.SwapOperationUpdate(ctx, o, 2)
		}},
		{"an update that skips a version", fault.Conflict, func(s seeded, tx unit) error {
			o := operation("op_1", alice)
			o.Version = 3
			return tx.SwapOperationUpdate(ctx, o, 1)
		}},
		{"an update of a missing operation", fault.Conflict, func(s seeded, tx unit) error {
			o := operation("op_9", alice)
			o.Version = 2
			return tx.SwapOperationUpdate(ctx, o, 1)
		}},
		{"an update binding another operation's signature", fault.Conflict, func(s seeded, tx unit) error {
			o := operation("op_1", alice)
			o.Signature, o.Version = "sig_2", 2
			return tx.SwapOperationUpdate(ctx, o, 1)
		}},
		{"another user's operation", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperation(ctx, otherUser, "op_1")
			return err
		}},
		{"another workspace's operation", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperation(ctx, otherWorkspace, "op_1")
			return err
		}},
		{"another tenant's operation", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperation(ctx, otherTenant, "op_1")
			return err
		}},
		{"the other environment's operation", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperation(ctx, otherEnv, "op_1")
			return err
		}},
		{"a missing operation", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperation(ctx, alice, "op_9")
			return err
		}},
		{"a missing operation by id", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapOperationByID(ctx, "op_9")
			return err
		}},
		// Quotes.
		{"a quote id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapQuoteInsert(ctx, sealedQuote("q_1", "op_3"))
		}},
		{"a second quote of an operation", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapQuoteInsert(ctx, sealedQuote("q_3", "op_1"))
		}},
		{"another user's quote", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapQuote(ctx, otherUser, "q_1")
			return err
		}},
		{"the other environment's quote", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapQuote(ctx, otherEnv, "q_1")
			return err
		}},
		{"a missing quote", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapQuote(ctx, alice, "q_9")
			return err
		}},
		// Intents.
		{"an intent id taken", fault.Conflict, func(s seeded, tx unit) error {
			it := s.it1
			it.QuoteID, it.OperationID = "q_2", "op_2"
			return tx.SwapIntentInsert(ctx, it, swap.Prepared{Message: s.msg})
		}},
		{"a second intent of a quote", fault.Conflict, func(s seeded, tx unit) error {
			it := boundIntent(t, s.q1, "i_2", s.msg)
			it.OperationID = "op_2" // only the quote is shared
			return tx.SwapIntentInsert(ctx, it, swap.Prepared{Message: s.msg})
		}},
		{"a second intent of an operation", fault.Conflict, func(s seeded, tx unit) error {
			it := boundIntent(t, sealedQuote("q_2", "op_1"), "i_2", s.msg)
			return tx.SwapIntentInsert(ctx, it, swap.Prepared{Message: s.msg})
		}},
		{"another user's intent", fault.NotFound, func(s seeded, tx unit) error {
			_, _, err := tx.SwapIntent(ctx, otherUser, "i_1")
			return err
		}},
		{"another workspace's intent", fault.NotFound, func(s seeded, tx unit) error {
			_, _, err := tx.SwapIntent(ctx, otherWorkspace, "i_1")
			return err
		}},
		{"a missing intent", fault.NotFound, func(s seeded, tx unit) error {
			_, _, err := tx.SwapIntent(ctx, alice, "i_9")
			return err
		}},
		// Submissions.
		{"a second submission of an operation", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapSubmissionInsert(ctx, "op_1", relay.Submission{Signature: "sig_9", State: relay.Submitted})
		}},
		{"a second submission of a signature", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapSubmissionInsert(ctx, "op_2", relay.Submission{Signature: "sig_1", State: relay.Submitted})
		}},
		{"a submission update from a stale send count", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapSubmissionUpdate(ctx, "op_1", relay.Submission{Signature: "sig_1", State: relay.Submitted, SendAttempts: 2}, 1, relay.Submitted)
		}},
		{"a submission update from a stale state", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapSubmissionUpdate(ctx, "op_1", relay.Submission{Signature: "sig_1", State: relay.Confirmed}, 0, relay.Processed)
		}},
		{"an update of a missing submission", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapSubmissionUpdate(ctx, "op_2", relay.Submission{Signature: "sig_2", State: relay.Processed}, 0, relay.Submitted)
		}},
		{"a missing submission", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapSubmission(ctx, "op_2")
			return err
		}},
		// Registry runs and policies.
		{"a registry run id taken", fault.Conflict, func(s seeded, tx unit) error {
			return tx.SwapRegistryRunInsert(ctx, swap.RegistryRun{ID: "srr_1", Environment: "test", RegistryVersion: 1, CheckedAt: t0})
		}},
		{"no registry run of the version", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapRegistryRunLatest(ctx, access.Test, 2)
			return err
		}},
		{"no registry run of the environment", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.SwapRegistryRunLatest(ctx, access.Live, 1)
			return err
		}},
		{"no current policy", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.PolicyCurrent(ctx, policy.Scope{Environment: access.Test}, swap.PolicyTokens)
			return err
		}},
		{"no policy of the tenant", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.PolicyCurrent(ctx, policy.Scope{Environment: access.Test, TenantID: "ten_1"}, swap.PolicyFees)
			return err
		}},
		{"a missing policy version", fault.NotFound, func(s seeded, tx unit) error {
			_, err := tx.PolicyGet(ctx, policy.Scope{Environment: access.Test}, swap.PolicyFees, 2)
			return err
		}},
	}
	cases = append(cases, settleRefusals(t)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := seed(t)
			before := snapshot(t, s.st)
			// The call runs in a unit of work that commits whatever it
			// answers: a refused write must have written nothing.
			var got error
			if err := s.st.Run(ctx, func(tx swap.Store) error {
				got = tc.call(s, tx.(unit))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var fe *fault.Error
			if !errors.As(got, &fe) || !fault.Is(got, tc.code) {
				t.Fatalf("got %v (%T), want a *fault.Error %s", got, got, tc.code)
			}
			if after := snapshot(t, s.st); after != before {
				t.Fatalf("a refused call changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot renders everything the seeded store holds.
func snapshot(t *testing.T, st *swaptest.Store) string {
	t.Helper()
	ctx := context.Background()
	var out []any
	for _, id := range []string{"op_1", "op_2", "op_3", "op_9"} {
		o, err := st.SwapOperationByID(ctx, id)
		s, serr := st.SwapSubmission(ctx, id)
		out = append(out, o, fault.CodeOf(err), s, fault.CodeOf(serr))
	}
	for _, id := range []string{"q_1", "q_2", "q_3"} {
		q, err := st.SwapQuote(ctx, alice, id)
		out = append(out, q, fault.CodeOf(err))
	}
	for _, id := range []string{"i_1", "i_2"} {
		it, p, err := st.SwapIntent(ctx, alice, id)
		out = append(out, it, p, fault.CodeOf(err))
	}
	for _, env := range []access.Environment{access.Test, access.Live} {
		r, err := st.SwapRegistryRunLatest(ctx, env, 1)
		out = append(out, r, fault.CodeOf(err))
		for _, id := range []string{swap.PolicyFees, swap.PolicyTokens} {
			h, err := st.PolicyHistory(ctx, policy.Scope{Environment: env}, id, policy.HistoryParams{Limit: policy.MaxHistory})
			out = append(out, h, fault.CodeOf(err))
		}
	}
	out = append(out, settleSnapshot(t, st)...)
	out = append(out, st.Jobs(), st.Events())
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnitsCommitOrDiscard: a unit's writes appear together when it
// returns nil, after which its AfterCommit functions run; an error or a
// panic leaves nothing; a unit's time is fixed when it starts.
func TestUnitsCommitOrDiscard(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: t0}
	st := swaptest.NewStore(clk)
	write := func(tx swap.Store, id string) error {
		if err := tx.SwapOperationInsert(ctx, operation(id, alice)); err != nil {
			return err
		}
		if _, err := tx.OutboxInsert(ctx, outbox.Event{Environment: "test", Type: "swap_operation.quoted", AggregateID: id}); err != nil {
			return err
		}
		_, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: swap.JobWatch})
		return err
	}
	exists := func(id string) bool {
		_, err := st.SwapOperationByID(ctx, id)
		return err == nil
	}

	woke := false
	err := st.Run(ctx, func(tx swap.Store) error {
		tx.AfterCommit(func() { woke = true })
		if err := write(tx, "op_failed"); err != nil {
			return err
		}
		return errors.New("stop")
	})
	if err == nil || exists("op_failed") || len(st.Events()) != 0 || len(st.Jobs()) != 0 || woke {
		t.Fatalf("a failed unit: err %v, operation kept %v, %d events, %d jobs, after-commit ran %v",
			err, exists("op_failed"), len(st.Events()), len(st.Jobs()), woke)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the unit's panic did not reach its caller")
			}
		}()
		_ = st.Run(ctx, func(tx swap.Store) error {
			if err := write(tx, "op_panicked"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if exists("op_panicked") {
		t.Fatal("a unit that panicked kept its write")
	}

	var seenInside, seenAfter bool
	var kept swap.Store
	err = st.Run(ctx, func(tx swap.Store) error {
		kept = tx
		if err := write(tx, "op_1"); err != nil {
			return err
		}
		seenInside = exists("op_1") // the store's own reads see committed data only
		clk.set(t0.Add(time.Hour))
		if !tx.Now().Equal(t0) {
			t.Errorf("the unit's time moved with the clock: %v", tx.Now())
		}
		tx.AfterCommit(func() { seenAfter = exists("op_1") })
		return nil
	})
	if err != nil || seenInside || !seenAfter {
		t.Fatalf("a committed unit: err %v, visible before commit %v, visible to after-commit %v", err, seenInside, seenAfter)
	}
	if ev := st.Events(); len(ev) != 1 || !ev[0].OccurredAt.Equal(t0) || len(st.Jobs()) != 1 || !st.Jobs()[0].RunAt.Equal(t0) {
		t.Fatalf("events %+v, jobs %+v: want one of each at the unit's time", ev, st.Jobs())
	}
	if _, err := kept.SwapOperation(ctx, alice, "op_1"); err == nil {
		t.Fatal("a unit's handle answered after its unit ended")
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	if err := st.Run(canceled, func(swap.Store) error { ran = true; return nil }); err == nil || ran {
		t.Fatalf("a canceled context: err %v, ran %v", err, ran)
	}

	// The store's own writes are units of their own; its AfterCommit
	// runs at once.
	if err := st.SwapOperationInsert(ctx, operation("op_2", alice)); err != nil || !exists("op_2") {
		t.Fatalf("a write outside a unit: %v", err)
	}
	now := false
	st.AfterCommit(func() { now = true })
	if !now || !st.Now().Equal(t0.Add(time.Hour)) {
		t.Fatalf("outside a unit: after-commit ran %v, now %v", now, st.Now())
	}
}

// TestRecordsReadBackAsWritten: quotes and intents keep their hashes and
// prepared transaction; an update writes what moves and keeps what does
// not; nothing a caller holds aliases the store.
func TestRecordsReadBackAsWritten(t *testing.T) {
	ctx := context.Background()
	s := seed(t)
	q, err := s.st.SwapQuote(ctx, alice, "q_1")
	if err != nil || q.CheckIntegrity() != nil || q.Hash != s.q1.Hash || !bytes.Equal(q.ProviderQuote, s.q1.ProviderQuote) {
		t.Fatalf("quote read back: %v, integrity %v", err, q.CheckIntegrity())
	}
	it, p, err := s.st.SwapIntent(ctx, alice, "i_1")
	if err != nil || it.CheckIntegrity() != nil || it.Hash != s.it1.Hash {
		t.Fatalf("intent read back: %v, integrity %v", err, it.CheckIntegrity())
	}
	if !bytes.Equal(p.Message, s.msg) || !bytes.Equal(p.Unsigned, message.Unsigned(s.msg)) || p.LastValidBlockHeight != 1000 ||
		!p.ExpiresAt.Equal(t0.Add(20*time.Second)) || p.PriorityFeeLamports != 1400 || p.RentLamports != 2_074_080 {
		t.Fatalf("prepared read back: %+v", p)
	}
	p.Message[0] ^= 0xFF
	q.ProviderQuote[0] ^= 0xFF
	sub, _ := s.st.SwapSubmission(ctx, "op_1")
	sub.Wire[0] ^= 0xFF
	if _, p2, _ := s.st.SwapIntent(ctx, alice, "i_1"); !bytes.Equal(p2.Message, s.msg) {
		t.Fatal("changing a returned message changed the store")
	}
	if sub2, _ := s.st.SwapSubmission(ctx, "op_1"); !bytes.Equal(sub2.Wire, []byte{1, 2, 3}) {
		t.Fatal("changing a returned wire changed the store")
	}

	// An update moves state, intent, signature, error and version; the
	// owner, quote and creation time stay.
	o := operation("op_1", otherUser)
	o.QuoteID, o.CreatedAt = "q_other", t0.Add(time.Hour)
	o.State, o.IntentID, o.Signature, o.LastError, o.Version, o.UpdatedAt = swap.StateSubmitted, "i_1", "sig_1", "SUBMISSION_UNCERTAIN", 2, t0.Add(time.Minute)
	if err := s.st.SwapOperationUpdate(ctx, o, 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.st.SwapOperation(ctx, alice, "op_1")
	want := swap.Operation{ID: "op_1", Owner: alice, State: swap.StateSubmitted, QuoteID: "q_op_1", IntentID: "i_1", Signature: "sig_1",
		LastError: "SUBMISSION_UNCERTAIN", Version: 2, CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	if err != nil || got != want {
		t.Fatalf("after the update: %+v (%v), want %+v", got, err, want)
	}
	// The signature is op_1's now: op_2 may not take it, op_1 may keep it.
	o2 := operation("op_2", alice)
	o2.Signature, o2.Version = "sig_1", 2
	if err := s.st.SwapOperationUpdate(ctx, o2, 1); !fault.Is(err, fault.Conflict) {
		t.Fatalf("op_2 taking op_1's signature: %v", err)
	}
	want.Version, want.State = 3, swap.StateConfirming
	if err := s.st.SwapOperationUpdate(ctx, want, 2); err != nil {
		t.Fatalf("op_1 keeping its signature: %v", err)
	}

	// A submission update writes the network side and keeps the bytes.
	if err := s.st.SwapSubmissionUpdate(ctx, "op_1", relay.Submission{Signature: "other", Wire: []byte{9}, State: relay.Processed,
		SendAttempts: 1, Slot: 42, ChainError: "x"}, 0, relay.Submitted); err != nil {
		t.Fatal(err)
	}
	sub, _ = s.st.SwapSubmission(ctx, "op_1")
	if sub.State != relay.Processed || sub.SendAttempts != 1 || sub.Slot != 42 || sub.ChainError != "x" || sub.Signature != "sig_1" ||
		!bytes.Equal(sub.Wire, []byte{1, 2, 3}) || sub.Blockhash != "blockhash" {
		t.Fatalf("submission after the update: %+v", sub)
	}
}

// TestPoliciesFollowPublish runs package policy's own rules on the store.
func TestPoliciesFollowPublish(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: t0}
	st := swaptest.NewStore(clk)
	sc := policy.Scope{Environment: access.Test}
	publish := func(content any) (policy.Version, bool) {
		t.Helper()
		var v policy.Version
		var created bool
		if err := st.Run(ctx, func(tx swap.Store) error {
			var err error
			v, created, err = policy.Publish(ctx, tx, sc, swap.PolicySettings, content, "operator")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return v, created
	}
	a, b := swap.DefaultSettings(), swap.DefaultSettings()
	b.SwapEnabled = false
	if v, created := publish(a); v.Version != 1 || !created || !v.CreatedAt.Equal(t0) {
		t.Fatalf("first publication: v%d created %v at %v", v.Version, created, v.CreatedAt)
	}
	if v, created := publish(a); v.Version != 1 || created {
		t.Fatalf("the same content again: v%d created %v", v.Version, created)
	}
	clk.set(t0.Add(time.Minute))
	if v, created := publish(b); v.Version != 2 || !created || !v.CreatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("new content: v%d created %v at %v", v.Version, created, v.CreatedAt)
	}
	if v, created := publish(a); v.Version != 3 || !created {
		t.Fatalf("a revert: v%d created %v", v.Version, created)
	}
	// Version 2 exists: a second insert of it stores nothing.
	if _, inserted, err := st.PolicyInsert(ctx, policy.Version{Scope: sc, ID: swap.PolicySettings, Version: 2, Hash: "x"}); err != nil || inserted {
		t.Fatalf("inserting a taken version: inserted %v, %v", inserted, err)
	}
	versions := func(p policy.HistoryParams) []int {
		vs, err := policy.History(ctx, st, sc, swap.PolicySettings, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, v := range vs {
			out = append(out, v.Version)
		}
		return out
	}
	if got := fmt.Sprint(versions(policy.HistoryParams{Limit: 10}), versions(policy.HistoryParams{Before: 3, Limit: 10}),
		versions(policy.HistoryParams{Limit: 1})); got != "[3 2 1] [2 1] [3]" {
		t.Fatalf("history: %s", got)
	}
	cur, err := policy.Current(ctx, st, sc, swap.PolicySettings)
	var decoded swap.Settings
	if err != nil || cur.Decode(&decoded) != nil || decoded != a {
		t.Fatalf("current: v%d %+v (%v)", cur.Version, decoded, err)
	}
	if _, err := policy.Current(ctx, st, policy.Scope{Environment: access.Live}, swap.PolicySettings); !fault.Is(err, fault.NotFound) {
		t.Fatalf("the live environment's policy: %v", err)
	}
}

// TestRegistryRuns: the latest run is the newest readable one, the newest
// any; newer means a later check time, then a later insertion.
func TestRegistryRuns(t *testing.T) {
	ctx := context.Background()
	st := swaptest.NewStore(&clock{t: t0})
	for _, r := range []swap.RegistryRun{
		{ID: "srr_a", Environment: "test", RegistryVersion: 1, Network: "n", CheckedAt: t0},
		{ID: "srr_b", Environment: "test", RegistryVersion: 1, Network: "n", CheckedAt: t0.Add(time.Minute),
			Checks: []swap.MintCheck{{Mint: "m", Status: swap.MintMatched}}},
		{ID: "srr_c", Environment: "test", RegistryVersion: 1, Unreadable: true, CheckedAt: t0.Add(2 * time.Minute)},
		{ID: "srr_0", Environment: "test", RegistryVersion: 2, CheckedAt: t0},
		{ID: "srr_1", Environment: "test", RegistryVersion: 2, CheckedAt: t0}, // same time, inserted later
		{ID: "srr_d", Environment: "live", RegistryVersion: 1, CheckedAt: t0.Add(time.Hour)},
	} {
		if err := st.SwapRegistryRunInsert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	id := func(r swap.RegistryRun, err error) string {
		if err != nil {
			return string(fault.CodeOf(err))
		}
		return r.ID
	}
	got := []string{id(st.SwapRegistryRunLatest(ctx, access.Test, 1)),
		id(st.SwapRegistryRunLatest(ctx, access.Test, 2)), id(st.SwapRegistryRunLatest(ctx, access.Live, 1)),
		id(st.SwapRegistryRunLatest(ctx, access.Live, 2))}
	if fmt.Sprint(got) != "[srr_b srr_1 srr_d NOT_FOUND]" {
		t.Fatalf("runs: %v", got)
	}
	r, _ := st.SwapRegistryRunLatest(ctx, access.Test, 1)
	if c, ok := r.Check("m"); !ok || c.Status != swap.MintMatched {
		t.Fatalf("the run's checks: %+v", r.Checks)
	}
}

// TestJobsAndEvents: jobs take their defaults and deduplicate by unique
// key; events take their ids and times; both list in order.
func TestJobsAndEvents(t *testing.T) {
	ctx := context.Background()
	st := swaptest.NewStore(&clock{t: t0})
	err := st.Run(ctx, func(tx swap.Store) error {
		for _, p := range []jobs.InsertParams{
			{Kind: swap.JobWatch, Payload: []byte(`{"operationId":"op_1"}`), UniqueKey: "swap.watch:op_1:0"},
			{Kind: swap.JobWatch, Payload: []byte(`{"operationId":"op_1"}`), UniqueKey: "swap.watch:op_1:0"},
			{Kind: swap.JobVerifyRegistry, RunAt: t0.Add(time.Hour), MaxAttempts: 3, Group: "ws_1"},
		} {
			if _, err := tx.JobInsert(ctx, p); err != nil {
				return err
			}
		}
		_, err := tx.JobInsert(ctx, jobs.InsertParams{})
		if !fault.Is(err, fault.InvalidInput) {
			return fmt.Errorf("a job without kind: %v", err)
		}
		for _, e := range []outbox.Event{{Environment: "test", Type: "a"}, {Environment: "live", Type: "b", ID: "evt_mine",
			OccurredAt: t0.Add(time.Second), SchemaVersion: 2, Payload: json.RawMessage(`{"x":1}`)}} {
			if _, err := tx.OutboxInsert(ctx, e); err != nil {
				return err
			}
		}
		if _, err := tx.OutboxInsert(ctx, outbox.Event{Type: "c"}); err == nil {
			return errors.New("an event without environment was stored")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	js := st.Jobs()
	if len(js) != 2 || js[0].Kind != swap.JobWatch || js[0].UniqueKey != "swap.watch:op_1:0" || !js[0].RunAt.Equal(t0) ||
		js[0].MaxAttempts != jobs.DefaultMaxAttempts || js[0].State != jobs.Available || string(js[0].Payload) != `{"operationId":"op_1"}` ||
		js[1].Kind != swap.JobVerifyRegistry || !js[1].RunAt.Equal(t0.Add(time.Hour)) || js[1].MaxAttempts != 3 || js[1].Group != "ws_1" ||
		string(js[1].Payload) != "{}" || js[0].ID == "" || js[0].ID >= js[1].ID {
		t.Fatalf("jobs: %+v", js)
	}
	ev := st.Events()
	if len(ev) != 2 || ev[0].ID == "" || !ev[0].OccurredAt.Equal(t0) || ev[0].SchemaVersion != 1 || string(ev[0].Payload) != "{}" ||
		ev[1].ID != "evt_mine" || !ev[1].OccurredAt.Equal(t0.Add(time.Second)) || ev[1].SchemaVersion != 2 || string(ev[1].Payload) != `{"x":1}` {
		t.Fatalf("events: %+v", ev)
	}
}

// TestConcurrentCompareAndSet: writers racing on one operation's version
// lose nothing: every update that commits advanced it by one, every
// other got CONFLICT and retried.
func TestConcurrentCompareAndSet(t *testing.T) {
	ctx := context.Background()
	st := swaptest.NewStore(&clock{t: t0})
	if err := st.SwapOperationInsert(ctx, operation("op_1", alice)); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				// Read outside the unit, write inside: the compare-and-set
				// is what keeps the count.
				o, err := st.SwapOperationByID(ctx, "op_1")
				if err != nil {
					t.Error(err)
					return
				}
				prev := o.Version
				o.Version++
				err = st.Run(ctx, func(tx swap.Store) error {
					if err := tx.SwapOperationUpdate(ctx, o, prev); err != nil {
						return err
					}
					_, err := tx.OutboxInsert(ctx, outbox.Event{Environment: "test", Type: "t", AggregateID: o.ID, AggregateVersion: o.Version})
					return err
				})
				switch {
				case fault.Is(err, fault.Conflict): // another writer won; read again
				case err != nil:
					t.Error(err)
					return
				default:
					i++
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader alongside
		defer wg.Done()
		for range 200 {
			_ = st.Events()
			_, _ = st.SwapOperation(ctx, alice, "op_1")
		}
	}()
	wg.Wait()
	o, err := st.SwapOperationByID(ctx, "op_1")
	if err != nil || o.Version != 1+writers*each {
		t.Fatalf("version %d (%v), want %d", o.Version, err, 1+writers*each)
	}
	ev := st.Events()
	if len(ev) != writers*each {
		t.Fatalf("%d events, want %d", len(ev), writers*each)
	}
	for i, e := range ev {
		if e.AggregateVersion != int64(i+2) {
			t.Fatalf("event %d carries version %d: a lost or repeated update", i, e.AggregateVersion)
		}
	}
}
