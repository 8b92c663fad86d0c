package intent

import (
	"bytes"
	"context"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/fault"
)

// land makes the fake chain report it as landed at commitment c with the
// given net reaching the treasury.
func (h *harness) land(it Intent, c chain.Commitment, net uint64) {
	h.chain.setStatus(it.Signature, c, "")
	h.chain.mu.Lock()
	h.chain.txs[it.Signature] = landed(it, it.Signature, net)
	h.chain.mu.Unlock()
}

func TestRelayHappyPathSettlesOnce(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	o, err := h.svc.Relay(ctx, it.ID)
	if err != nil || !o.Sent || o.Intent.SendAttempts != 1 || o.Intent.State != StateSubmitted {
		t.Fatalf("relay: %v %+v", err, o)
	}
	if !bytes.Equal(h.chain.sent[0], it.SignedTransaction) {
		t.Fatal("relay must send the stored signed bytes")
	}
	// Processed: CONFIRMING, nothing verified yet.
	h.chain.setStatus(it.Signature, chain.Processed, "")
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateConfirming || o.Intent.NetworkState != NetworkProcessed {
		t.Fatalf("processed: %s/%s", o.Intent.State, o.Intent.NetworkState)
	}
	// Confirmed: verified and, at credit_purchase's threshold, settled.
	h.land(it, chain.Confirmed, it.NetAtomic)
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateSettled || o.Intent.NetworkState != NetworkConfirmed || o.Intent.VerifiedAt.IsZero() || o.Intent.SettledAt.IsZero() {
		t.Fatalf("confirmed: %s/%s %+v", o.Intent.State, o.Intent.NetworkState, o.Intent.Evidence)
	}
	// Finalization moves only the network state of the settled intent;
	// repeated reconciliation never settles twice.
	h.land(it, chain.Finalized, it.NetAtomic)
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if !o.Changed || o.Intent.State != StateSettled || o.Intent.NetworkState != NetworkFinalized || Following(o.Intent) {
		t.Fatalf("finalized: changed %v %s/%s", o.Changed, o.Intent.State, o.Intent.NetworkState)
	}
	for range 3 {
		o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
		if o.Changed {
			t.Fatal("a settled, finalized intent changed")
		}
	}
	if _, err := h.svc.ReconcileDue(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if len(h.settled) != 1 || h.settled[0] != "credit_purchase:"+it.ID {
		t.Fatalf("settled %v", h.settled)
	}
	if h.chain.count("sendTransaction") != 1 {
		t.Fatalf("sent %d times", h.chain.count("sendTransaction"))
	}
}

func TestRelayTimeoutThenInspectionWithoutSecondSend(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	// The node accepts the transaction but the answer is lost.
	h.chain.sendErrs = []error{errTimeout()}
	o, err := h.svc.Relay(ctx, it.ID)
	wantCode(t, err, fault.SubmissionUncertain)
	got := h.store.intent(it.ID)
	if got.State != StateSubmitted || got.LastError != fault.SubmissionUncertain || got.SendAttempts != 1 || !o.Sent {
		t.Fatalf("after timeout: %s %s %d", got.State, got.LastError, got.SendAttempts)
	}
	h.land(it, chain.Confirmed, it.NetAtomic)
	o, err = h.svc.Relay(ctx, it.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.Sent || h.chain.count("sendTransaction") != 1 {
		t.Fatal("a transaction the chain knows must not be sent again")
	}
	if o.Intent.State != StateSettled || o.Intent.LastError != "" {
		t.Fatalf("resolved: %s %s", o.Intent.State, o.Intent.LastError)
	}
}

func TestRelayTimeoutThenResendIdenticalBytes(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.sendErrs = []error{errTimeout()}
	_, err := h.svc.Relay(ctx, it.ID)
	wantCode(t, err, fault.SubmissionUncertain)
	// Unknown to the chain and the blockhash still valid: the same bytes again.
	o, err := h.svc.Relay(ctx, it.ID)
	if err != nil || !o.Sent {
		t.Fatalf("resend: %v", err)
	}
	if len(h.chain.sent) != 2 || !bytes.Equal(h.chain.sent[0], h.chain.sent[1]) || !bytes.Equal(h.chain.sent[1], it.SignedTransaction) {
		t.Fatal("the resend must carry the identical signed bytes")
	}
	if o.Intent.SendAttempts != 2 || o.Intent.LastError != "" {
		t.Fatalf("%d %s", o.Intent.SendAttempts, o.Intent.LastError)
	}
	// Inspection happened before each send.
	if h.chain.count("getSignatureStatuses") < 2 {
		t.Fatal("status not inspected first")
	}
}

func TestDroppedTransactionExpires(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	must[Outcome](t)(h.svc.Relay(ctx, it.ID))
	// Still within the blockhash's life: nothing changes.
	h.chain.valid = false
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Changed || o.Intent.State != StateSubmitted {
		t.Fatal("a lapsing blockhash is not yet a drop")
	}
	// The finalized height passed lastValidBlockHeight, no status: dropped.
	h.chain.height = it.Transaction.LastValidBlockHeight + 1
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateExpired || o.Intent.NetworkState != NetworkDropped {
		t.Fatalf("%s/%s", o.Intent.State, o.Intent.NetworkState)
	}
	if h.chain.count("sendTransaction") != 1 || len(h.settled) != 0 {
		t.Fatal("no resend after expiry, nothing settled")
	}
	// A relay of the expired intent does nothing.
	o = must[Outcome](t)(h.svc.Relay(ctx, it.ID))
	if o.Changed || o.Sent {
		t.Fatal("expired intent relayed")
	}
}

func TestDroppedButPaidUnderAnotherSignatureNeedsReview(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.height = it.Transaction.LastValidBlockHeight + 1
	h.chain.refs[it.Reference] = []chain.SignatureInfo{{Signature: "OtherSig"}}
	o := must[Outcome](t)(h.svc.Relay(ctx, it.ID))
	if o.Intent.State != StateRequiresReview || o.Intent.Evidence[0].Actual != "OtherSig" {
		t.Fatalf("%s %+v", o.Intent.State, o.Intent.Evidence)
	}
}

func TestWalletBroadcastDropWaitsForGrace(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	sig, _ := h.sign(it)
	must[Intent](t)(h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig}))
	h.chain.height = it.Transaction.LastValidBlockHeight + 1
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Changed || h.chain.count("sendTransaction") != 0 {
		t.Fatal("a wallet-broadcast signature is never sent by the platform, and waits out the grace")
	}
	h.clock.Add(DefaultDropGrace)
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateExpired {
		t.Fatalf("%s", o.Intent.State)
	}
}

func TestSendAnswers(t *testing.T) {
	ctx := context.Background()
	preflight := func(data string) error {
		return &chain.RPCError{Method: "sendTransaction", Code: chain.CodePreflightFailure, Message: "Transaction simulation failed", Data: data}
	}
	cases := []struct {
		name      string
		err       error
		code      fault.Code
		state     State
		lastError fault.Code
	}{
		{"already processed", preflight(`{"err":"AlreadyProcessed","logs":[]}`), "", StateSubmitted, ""},
		{"blockhash not found", preflight(`{"err":"BlockhashNotFound","accounts":null}`), "", StateSubmitted, fault.SubmissionUncertain},
		{"insufficient funds", preflight(`{"err":{"InstructionError":[1,{"Custom":1}]}}`), fault.TransactionFailed, StateFailed, fault.TransactionFailed},
		{"bad signature", &chain.RPCError{Code: chain.CodeSignatureFailure, Message: "Transaction signature verification failure"}, fault.SignatureRejected, StateFailed, fault.SignatureRejected},
		{"node unhealthy", &chain.RPCError{Code: chain.CodeNodeUnhealthy, Message: "Node is unhealthy"}, fault.SubmissionUncertain, StateSubmitted, fault.SubmissionUncertain},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, feeMint(6, 200, 5_000_000))
			it := h.submitSigned(h.create())
			h.chain.sendErrs = []error{c.err}
			o, err := h.svc.Relay(ctx, it.ID)
			if c.code == "" && err != nil || c.code != "" && !fault.Is(err, c.code) {
				t.Fatalf("error %v, want %q", err, c.code)
			}
			if o.Intent.State != c.state || o.Intent.LastError != c.lastError {
				t.Fatalf("%s %s", o.Intent.State, o.Intent.LastError)
			}
		})
	}
}

func TestFailedOnChain(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.setStatus(it.Signature, chain.Confirmed, `{"InstructionError":[1,{"Custom":1}]}`)
	o := must[Outcome](t)(h.svc.Relay(ctx, it.ID))
	if o.Intent.State != StateFailed || o.Intent.NetworkState != NetworkFailed || o.Intent.ChainError == "" || o.Sent {
		t.Fatalf("%+v", o.Intent)
	}
}

func TestObservationNeverMovesBackwards(t *testing.T) {
	ctx := context.Background()
	// A finalized-threshold purpose keeps the intent VERIFIED at confirmed.
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	var settled int
	if err := h.registry.Register(Purpose{Name: "reward_funding", Threshold: chain.Finalized,
		Price:  h.registryPrice(t),
		Settle: func(context.Context, Store, Intent) error { settled++; return nil }, Settlement: h.settlement}); err != nil {
		t.Fatal(err)
	}
	it, err := h.svc.Create(ctx, h.user, Request{Purpose: "reward_funding", Credits: "100", Mint: h.mint.String(), Wallet: h.payer.String()})
	if err != nil {
		t.Fatal(err)
	}
	it = h.submitSigned(it)
	h.land(it, chain.Confirmed, it.NetAtomic)
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateVerified || o.Intent.NetworkState != NetworkConfirmed || settled != 0 {
		t.Fatalf("%s/%s settled %d", o.Intent.State, o.Intent.NetworkState, settled)
	}
	// A lagging node reports processed: ignored, reported stale.
	h.chain.setStatus(it.Signature, chain.Processed, "")
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Changed || !o.Stale || o.Intent.NetworkState != NetworkConfirmed || o.Observed != NetworkProcessed {
		t.Fatalf("backward observation applied: %+v", o)
	}
	// A node that does not know the signature at all: ignored too.
	h.chain.mu.Lock()
	delete(h.chain.statuses, it.Signature)
	h.chain.mu.Unlock()
	o = must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Changed || !o.Stale {
		t.Fatal("unknown status regressed a confirmed intent")
	}
	// Finalized: settles once.
	h.land(it, chain.Finalized, it.NetAtomic)
	for range 3 {
		must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	}
	if got := h.store.intent(it.ID); got.State != StateSettled || got.NetworkState != NetworkFinalized || settled != 1 {
		t.Fatalf("%s/%s settled %d", got.State, got.NetworkState, settled)
	}
}

// registryPrice prices like credit_purchase, for a second purpose.
func (h *harness) registryPrice(t *testing.T) PriceFunc {
	p, err := h.registry.Lookup(PurposeCreditPurchase)
	if err != nil {
		t.Fatal(err)
	}
	return p.Price
}

func TestEffectMismatchesNeedReview(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		mutate func(it Intent, tx *chain.Transaction)
		fields []string
	}{
		{"wrong amount", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[1].Data = transferData(it.GrossAtomic-1, it.Decimals, true, it.FeeAtomic)
			tx.PostTokenBalances[0].Amount--
		}, []string{"amount", "net"}},
		{"wrong recipient", func(it Intent, tx *chain.Transaction) {
			tx.PostTokenBalances[0].Owner = key("thief")
		}, []string{"recipient"}},
		{"short by the transfer fee", func(it Intent, tx *chain.Transaction) {
			tx.PostTokenBalances[0].Amount -= it.FeeAtomic
		}, []string{"net"}},
		{"wrong mint", func(it Intent, tx *chain.Transaction) {
			tx.PostTokenBalances[0].Mint = key("fake-mint")
			tx.Instructions[1].Accounts[1] = key("fake-mint")
		}, []string{"mint", "recipientMint"}},
		{"wrong payer", func(it Intent, tx *chain.Transaction) {
			tx.AccountKeys[0] = key("someone")
		}, []string{"payer", "signer"}},
		{"no reference", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[1].Accounts = tx.Instructions[1].Accounts[:4]
		}, []string{"reference"}},
		{"wrong memo", func(it Intent, tx *chain.Transaction) {
			tx.Instructions[0].Data = []byte("txi_other")
		}, []string{"memo"}},
		{"transfer not last", func(it Intent, tx *chain.Transaction) {
			tx.Instructions = append(tx.Instructions, chain.Instruction{ProgramID: message.MemoProgramID(), Data: []byte("x")})
		}, []string{"program", "instruction"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, feeMint(6, 200, 5_000_000))
			it := h.submitSigned(h.create())
			h.land(it, chain.Confirmed, it.NetAtomic)
			tx := h.chain.txs[it.Signature]
			c.mutate(it, &tx)
			h.chain.txs[it.Signature] = tx
			o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
			if o.Intent.State != StateRequiresReview || len(h.settled) != 0 {
				t.Fatalf("%s settled %v", o.Intent.State, h.settled)
			}
			got := map[string]bool{}
			for _, m := range o.Intent.Evidence {
				got[m.Field] = true
				if m.Expected == m.Actual {
					t.Fatalf("evidence without a difference: %+v", m)
				}
			}
			for _, f := range c.fields {
				if !got[f] {
					t.Fatalf("evidence %+v lacks %s", o.Intent.Evidence, f)
				}
			}
			// Review is terminal for the machine: nothing more happens.
			if o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID)); o.Changed {
				t.Fatal("reviewed intent moved")
			}
		})
	}
}

func TestNetworkMismatchChangesNothing(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.genesis = chain.MainnetGenesisHash
	_, err := h.svc.Relay(ctx, it.ID)
	wantCode(t, err, fault.NetworkMismatch)
	_, err = h.svc.Reconcile(ctx, it.ID)
	wantCode(t, err, fault.NetworkMismatch)
	if h.chain.count("sendTransaction") != 0 || h.store.intent(it.ID).Version != it.Version {
		t.Fatal("a mismatched cluster must not be used")
	}
}

func TestUnavailableChainChangesNothing(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.submitSigned(h.create())
	h.chain.failRead = errTimeout()
	_, err := h.svc.Reconcile(ctx, it.ID)
	wantCode(t, err, fault.ProviderUnavailable)
	if h.store.intent(it.ID).Version != it.Version {
		t.Fatal("state moved on an unreadable chain")
	}
}

func TestSettleHookFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	fail := true
	if err := h.registry.Register(Purpose{Name: "flaky", Threshold: chain.Confirmed, Price: h.registryPrice(t), Settlement: h.settlement,
		Settle: func(context.Context, Store, Intent) error {
			if fail {
				return fault.E("ledger", "", "db down")
			}
			return nil
		}}); err != nil {
		t.Fatal(err)
	}
	it := must[Intent](t)(h.svc.Create(ctx, h.user, Request{Purpose: "flaky", Credits: "100", Mint: h.mint.String(), Wallet: h.payer.String()}))
	it = h.submitSigned(it)
	h.land(it, chain.Confirmed, it.NetAtomic)
	_, err := h.svc.Reconcile(ctx, it.ID)
	wantCode(t, err, fault.SettlementFailed)
	if got := h.store.intent(it.ID); got.State != StateSubmitted {
		t.Fatalf("partial move committed: %s", got.State)
	}
	fail = false
	if o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID)); o.Intent.State != StateSettled {
		t.Fatalf("%s", o.Intent.State)
	}
}

func TestCreatedIntentExpires(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	if o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID)); o.Changed {
		t.Fatal("changed before expiry")
	}
	h.clock.Add(DefaultTTL)
	o := must[Outcome](t)(h.svc.Reconcile(ctx, it.ID))
	if o.Intent.State != StateExpired {
		t.Fatalf("%s", o.Intent.State)
	}
}
