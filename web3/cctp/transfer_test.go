package cctp_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmtest"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// TestTransferAcrossBothChains runs a transfer through every step: the
// burn on the EVM simulator, the attestation not indexed, then pending,
// then complete, the mint on the loopback cluster, and reconciliation,
// which waits for finality on both sides before it completes. Every move
// records its evidence, an outbox event and an audit record; a repeated
// step answers the transfer as it is.
func TestTransferAcrossBothChains(t *testing.T) {
	w := newWorld(t, true)
	ctx := context.Background()
	tr := w.create(10_000_000)
	if tr.State != cctp.StateCreated || tr.DestinationDomain != cctp.DomainSolana || tr.MintRecipient != w.recipient {
		t.Fatalf("created: %+v", tr)
	}
	burned := w.burn(10_000_000, 10_000)
	tr = w.apply(w.source(tr, burned))
	if tr.State != cctp.StateSourceVerified || tr.BurnTxHash != burned.TxHash || tr.BurnLogIndex != burned.LogIndexes[0] ||
		tr.MaxFee != 10_000 || !bytes.Equal(tr.SourceMessage, burned.Messages[0]) {
		t.Fatalf("source verified: %+v", tr)
	}
	if r, err := w.source(tr, burned); err != nil || !r.Replay {
		t.Fatalf("the same burn again: %+v, %v", r, err)
	}

	r, err := w.attest(tr)
	if err != nil || r.Observed != cctp.ObservedNotIndexed || r.Event != "" {
		t.Fatalf("not indexed: %+v, %v", r, err)
	}
	if err := w.iris.Index(cctp.DomainBase, burned.TxHash); err != nil {
		t.Fatal(err)
	}
	tr = w.apply(w.attest(tr))
	if tr.State != cctp.StateAttestationPending {
		t.Fatalf("pending: %s", tr.State)
	}
	if r, err := w.attest(tr); err != nil || r.Observed != cctp.ObservedPending || r.Event != "" {
		t.Fatalf("pending again: %+v, %v", r, err)
	}
	msg, att := w.attested(burned, 5_000)
	tr = w.apply(w.attest(tr))
	if tr.State != cctp.StateAttested || !bytes.Equal(tr.Message, msg) || !bytes.Equal(tr.Attestation, att) || tr.FeeExecuted != 5_000 ||
		tr.Nonce.IsZero() || tr.MessageHash != cctp.Keccak256(msg) {
		t.Fatalf("attested: %+v", tr)
	}

	sig := w.mint(tr.Message, tr.Attestation, nil)
	tr = w.apply(w.destination(tr, sig))
	if tr.State != cctp.StateDestinationVerified || tr.MintSignature != sig {
		t.Fatalf("destination verified: %+v", tr)
	}
	if b, err := w.sol.GetTokenAccountBalance(ctx, w.recipient, chain.Processed); err != nil || b.Amount != 9_995_000 {
		t.Fatalf("recipient balance %d, %v; want the amount minus the fee", b.Amount, err)
	}

	_, err = w.svc.Reconcile(ctx, w.st, access.Test, tr.ID)
	if code(err) != fault.ResultNotReady || detail(err, "reason") != "source_not_final" {
		t.Fatalf("reconcile before the source is final: %v", err)
	}
	w.evm.Finalize()
	_, err = w.svc.Reconcile(ctx, w.st, access.Test, tr.ID)
	if code(err) != fault.ResultNotReady || detail(err, "reason") != "destination_not_final" {
		t.Fatalf("reconcile before the mint is final: %v", err)
	}
	w.sol.AdvanceSlots(40)
	tr = w.apply(w.svc.Reconcile(ctx, w.st, access.Test, tr.ID))
	if tr.State != cctp.StateCompleted {
		t.Fatalf("reconciled: %s %s", tr.State, tr.ReviewReason)
	}
	ev, _ := w.st.CCTPEvidence(ctx, tr.ID)
	var steps []string
	for _, e := range ev {
		steps = append(steps, string(e.Step)+":"+e.Outcome)
		if c, failed := e.Failed(); failed {
			t.Errorf("evidence %s has a failed check %+v", e.ID, c)
		}
	}
	want := []string{"source:verified", "attestation:pending", "attestation:attested", "destination:verified", "reconcile:completed"}
	if !slices.Equal(steps, want) {
		t.Fatalf("evidence = %v, want %v", steps, want)
	}
	var types []string
	for _, e := range w.st.events {
		types = append(types, e.Type)
	}
	wantTypes := []string{"cctp_transfer.created", "cctp_transfer.source_verified", "cctp_transfer.attestation_pending",
		"cctp_transfer.attested", "cctp_transfer.destination_verified", "cctp_transfer.completed"}
	if !slices.Equal(types, wantTypes) || len(w.st.audits) != len(wantTypes) {
		t.Fatalf("events = %v, audits %d", types, len(w.st.audits))
	}
	if r, err := w.svc.Reconcile(ctx, w.st, access.Test, tr.ID); err != nil || !r.Replay {
		t.Fatalf("reconcile again: %+v, %v", r, err)
	}
}

// TestSourceRefusesAnotherBurn breaks one thing of a burn at a time: each
// is refused with VERIFICATION_FAILED naming its check, and the transfer
// stays CREATED with no evidence.
func TestSourceRefusesAnotherBurn(t *testing.T) {
	w := newWorld(t, true)
	other := cctp.EVMAddress{0x11}
	var elsewhere cctp.Word
	elsewhere[0] = 9
	cases := []struct {
		name  string
		burn  evmtest.Burn
		check string
	}{
		{"another recipient", evmtest.Burn{Amount: 1_000_000, MintRecipient: elsewhere}, "mint_recipient"},
		{"another amount", evmtest.Burn{Amount: 999_999}, "amount"},
		{"another domain", evmtest.Burn{Amount: 1_000_000, DestinationDomain: 3}, "destination_domain"},
		{"another token", evmtest.Burn{Amount: 1_000_000, BurnToken: other}, "burn_token"},
		{"a fee over the bound", evmtest.Burn{Amount: 1_000_000, MaxFee: 10_001}, "max_fee"},
		{"a hook", evmtest.Burn{Amount: 1_000_000, HookData: []byte{1}}, "hook_data"},
		{"another destination messenger", evmtest.Burn{Amount: 1_000_000, DestinationTokenMessenger: elsewhere}, "destination_token_messenger"},
		{"a finality below 1000", evmtest.Burn{Amount: 1_000_000, MinFinalityThreshold: 500}, "min_finality_threshold"},
		{"another emitter", evmtest.Burn{Amount: 1_000_000, TokenMessenger: other}, "deposit_for_burn"},
		{"a message of another burn", evmtest.Burn{Amount: 1_000_000, Message: cctp.Message{Version: cctp.MessageVersion,
			SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana,
			Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, Amount: cctp.WordOf(2)}}.Encode()}, "message_sent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := w.create(1_000_000)
			_, err := w.source(tr, w.burnWith(c.burn))
			if code(err) != fault.VerificationFailed || detail(err, "check") != c.check {
				t.Fatalf("%v, want VERIFICATION_FAILED on %s", err, c.check)
			}
			got, ev, _ := w.svc.Get(context.Background(), w.st, w.p, tr.ID)
			if got.State != cctp.StateCreated || len(ev) != 0 {
				t.Fatalf("after the refusal: %s with %d evidence", got.State, len(ev))
			}
		})
	}
}

// TestSourceOutcomes: a reverted burn, an unknown hash, a node error, a
// transaction with two burns (which needs the log index), another burn
// after one was verified, and a burn already bound to another transfer.
func TestSourceOutcomes(t *testing.T) {
	w := newWorld(t, true)
	ctx := context.Background()
	tr := w.create(1_000_000)
	rev, err := w.evm.Revert()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.source(tr, rev); code(err) != fault.TransactionFailed {
		t.Fatalf("reverted: %v", err)
	}
	if _, err := w.source(tr, evmtest.Burned{TxHash: cctp.Keccak256([]byte("unknown"))}); code(err) != fault.ResultNotReady {
		t.Fatalf("unknown hash: %v", err)
	}
	if _, err := w.svc.VerifySource(ctx, w.st, w.p, tr.ID, cctp.SourceInput{TxHash: "0x12"}); code(err) != fault.InvalidInput {
		t.Fatalf("short hash: %v", err)
	}
	ok := w.burn(1_000_000, 0)
	w.evm.Inject("eth_getTransactionReceipt", evmtest.Fault{Code: -32000, Message: "internal"}, 1)
	if _, err := w.source(tr, ok); code(err) != fault.ProviderUnavailable || detail(err, "reason") != "source_chain_unavailable" {
		t.Fatalf("node error: %v", err)
	}
	two, err := w.evm.BurnAll(false, evmtest.Burn{Amount: 5, MintRecipient: cctp.WordOfAddress(w.recipient)},
		evmtest.Burn{Amount: 1_000_000, MintRecipient: cctp.WordOfAddress(w.recipient)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.source(tr, two); code(err) != fault.InvalidInput || detail(err, "field") != "logIndex" {
		t.Fatalf("two burns without a log index: %v", err)
	}
	idx := two.LogIndexes[1]
	tr = w.apply(w.svc.VerifySource(ctx, w.st, w.p, tr.ID, cctp.SourceInput{TxHash: two.TxHash.String(), LogIndex: &idx}))
	if tr.State != cctp.StateSourceVerified || tr.BurnLogIndex != idx {
		t.Fatalf("the second burn by its log index: %+v", tr)
	}
	if _, err := w.source(tr, ok); code(err) != fault.InvalidState {
		t.Fatalf("another burn after one was verified: %v", err)
	}
	// A second transfer cannot bind a burn another one holds.
	second := w.create(1_000_000)
	r, err := w.svc.VerifySource(ctx, w.st, w.p, second.ID, cctp.SourceInput{TxHash: two.TxHash.String(), LogIndex: &idx})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Apply(ctx, w.st, w.p, r, "req"); code(err) != fault.Conflict {
		t.Fatalf("a burn bound twice: %v", err)
	}
}

// verifiedSource returns a transfer whose burn of 2 USDC was verified.
func verifiedSource(w *world) (cctp.Transfer, evmtest.Burned) {
	tr := w.create(2_000_000)
	burned := w.burn(2_000_000, 2_000)
	return w.apply(w.source(tr, burned)), burned
}

// TestAttestationUnexplainedGoesToReview: the service answering another
// message for the burn's transaction, signatures of strangers, and a fee
// executed above maxFee each move the transfer to REQUIRES_REVIEW with
// the evidence naming the check; the service's back-off leaves the
// transfer where it is.
func TestAttestationUnexplainedGoesToReview(t *testing.T) {
	w := newWorld(t, true)
	t.Run("another message", func(t *testing.T) {
		tr, burned := verifiedSource(w)
		other := cctp.Message{Version: cctp.MessageVersion, SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana,
			Nonce: cctp.WordOf(77), Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, Amount: cctp.WordOf(2_000_000)}}.Encode()
		if err := w.iris.Replace(cctp.DomainBase, burned.TxHash, 0, other, true); err != nil {
			t.Fatal(err)
		}
		tr = w.apply(w.attest(tr))
		if tr.State != cctp.StateRequiresReview || tr.ReviewReason != "attestation_message_mismatch" || tr.Message != nil {
			t.Fatalf("%s %q", tr.State, tr.ReviewReason)
		}
		if r, err := w.attest(tr); err != nil || !r.Replay {
			t.Fatalf("after review: %+v, %v", r, err)
		}
	})
	t.Run("strangers' signatures", func(t *testing.T) {
		tr, burned := verifiedSource(w)
		var keys []*ecdsa.PrivateKey
		for range w.iris.Threshold() {
			k, err := crypto.GenerateKey()
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		w.iris.SignWith(keys...)
		defer w.iris.SignWith()
		w.attested(burned, 0)
		tr = w.apply(w.attest(tr))
		if tr.State != cctp.StateRequiresReview || tr.ReviewReason != "attestation_signatures" {
			t.Fatalf("%s %q", tr.State, tr.ReviewReason)
		}
	})
	t.Run("fee above maxFee", func(t *testing.T) {
		tr, burned := verifiedSource(w)
		w.attested(burned, 2_001)
		tr = w.apply(w.attest(tr))
		if tr.State != cctp.StateRequiresReview || tr.ReviewReason != "attestation_fee_executed" {
			t.Fatalf("%s %q", tr.State, tr.ReviewReason)
		}
	})
	t.Run("back-off", func(t *testing.T) {
		tr, _ := verifiedSource(w)
		w.iris.RateLimit(iristest.RouteMessages, 1, 0)
		_, err := w.attest(tr)
		if code(err) != fault.ProviderUnavailable || detail(err, "reason") != "rate_limited" {
			t.Fatalf("429: %v", err)
		}
		if _, err := w.attest(tr); detail(err, "reason") != "rate_limited" {
			t.Fatalf("inside the back-off: %v", err)
		}
		got, _, _ := w.svc.Get(context.Background(), w.st, w.p, tr.ID)
		if got.State != cctp.StateSourceVerified {
			t.Fatalf("state %s after the back-off", got.State)
		}
	})
}

// attestedTransfer returns a transfer of 3 USDC attested with fee 1000,
// its burn and its attested message.
func attestedTransfer(w *world) (cctp.Transfer, evmtest.Burned) {
	tr := w.create(3_000_000)
	burned := w.burn(3_000_000, 3_000)
	tr = w.apply(w.source(tr, burned))
	w.attested(burned, 1_000)
	return w.apply(w.attest(tr)), burned
}

// TestMintReplayCountsOnceTheNonceIsChecked: a relayer minted the
// message; the transaction submitted is a repeat that failed because the
// nonce was used. After reading the used-nonce account, the platform
// finds and verifies the first mint and records the repeat as replayed
// evidence.
func TestMintReplayCountsOnceTheNonceIsChecked(t *testing.T) {
	w := newWorld(t, true)
	tr, _ := attestedTransfer(w)
	first := w.mint(tr.Message, tr.Attestation, nil)
	repeat := w.mint(tr.Message, tr.Attestation, nil)
	tx, err := w.rpc.GetTransaction(context.Background(), repeat, chain.Confirmed)
	if err != nil || tx.Err == "" {
		t.Fatalf("the repeat landed without error: %v", err)
	}
	r, err := w.destination(tr, repeat)
	if err != nil || r.Evidence == nil || r.Evidence.Outcome != cctp.OutcomeReplayed {
		t.Fatalf("replay: %+v, %v", r, err)
	}
	tr = w.apply(r, nil)
	if tr.State != cctp.StateDestinationVerified || tr.MintSignature != first {
		t.Fatalf("after the replay: %s, mint %s (first %s)", tr.State, tr.MintSignature, first)
	}
	if r, err := w.destination(tr, first); err != nil || !r.Replay {
		t.Fatalf("the first mint again: %+v, %v", r, err)
	}
	if _, err := w.destination(tr, repeat); code(err) != fault.InvalidState {
		t.Fatalf("the repeat again: %v", err)
	}
}

// TestMintOutcomes: a transaction that is not a mint of the attested
// message is refused and records nothing; a failed mint whose nonce is
// unused is TRANSACTION_FAILED; a mint that delivered less than the
// amount minus the fee goes to REQUIRES_REVIEW; an unknown signature is
// not ready.
func TestMintOutcomes(t *testing.T) {
	w := newWorld(t, true)
	a, _ := attestedTransfer(w)
	b, _ := attestedTransfer(w)
	// b's mint is not a's.
	sigB := w.mint(b.Message, b.Attestation, nil)
	if _, err := w.destination(a, sigB); code(err) != fault.VerificationFailed || detail(err, "check") != "receive_message" {
		t.Fatalf("another transfer's mint: %v", err)
	}
	// A mint of a's message with a bad attestation fails on chain.
	bad := bytes.Clone(a.Attestation)
	bad[3] ^= 0xff
	failed := w.mint(a.Message, bad, nil)
	if _, err := w.destination(a, failed); code(err) != fault.TransactionFailed {
		t.Fatalf("a failed mint with the nonce unused: %v", err)
	}
	// The recipient's owner moves one unit out in the same transaction:
	// the recipient gains less than the message says.
	out := message.TransferChecked(message.SPLTokenProgramID(), w.recipient, w.usdc, w.feeAcc, w.owner.addr, 1, 6)
	short := w.mint(a.Message, a.Attestation, []message.Instruction{out}, w.owner.priv)
	got := w.apply(w.destination(a, short))
	if got.State != cctp.StateRequiresReview || got.ReviewReason != "mint_recipient_received" {
		t.Fatalf("a short mint: %s %q", got.State, got.ReviewReason)
	}
	if _, err := w.destination(b, "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"); code(err) != fault.ResultNotReady {
		t.Fatalf("an unknown signature: %v", err)
	}
	if _, err := w.destination(b, "not base58!"); code(err) != fault.InvalidInput {
		t.Fatalf("a malformed signature: %v", err)
	}
}

// TestCreateRefusals: creation fails closed until the configuration is
// verified and in an unconfigured environment, and refuses each bad
// field by name, the recipient read from the cluster.
func TestCreateRefusals(t *testing.T) {
	w := newWorld(t, false)
	ctx := context.Background()
	in := cctp.CreateInput{Amount: "1000000", SourceDomain: int64(cctp.DomainBase), DestinationDomain: 5, MintRecipient: w.recipient.String()}
	_, err := w.svc.PrepareCreate(ctx, w.st, w.p, in)
	if code(err) != fault.ServiceUnavailable || detail(err, "reason") != cctp.ReasonNotVerified {
		t.Fatalf("before the readiness run: %v", err)
	}
	live := *w.p
	live.Environment = access.Live
	if _, err := w.svc.PrepareCreate(ctx, w.st, &live, in); code(err) != fault.ServiceUnavailable || detail(err, "reason") != cctp.ReasonNotConfigured {
		t.Fatalf("live: %v", err)
	}
	if r, _, err := w.svc.Verify(ctx, access.Test); err != nil || !r.Passed {
		t.Fatalf("readiness: %+v, %v", r, err)
	}
	wallet := w.owner.addr
	_, nobody := chaintest.NewKeypair()
	otherMint, otherAcct := w.otherMintAccount()
	for name, c := range map[string]struct {
		mod   func(*cctp.CreateInput)
		code  fault.Code
		field string
	}{
		"unknown source":  {func(i *cctp.CreateInput) { i.SourceDomain = 0 }, fault.InvalidInput, "sourceDomain"},
		"EVM destination": {func(i *cctp.CreateInput) { i.DestinationDomain = 0 }, fault.InvalidInput, "destinationDomain"},
		"zero amount":     {func(i *cctp.CreateInput) { i.Amount = "0" }, fault.InvalidAmount, "amount"},
		"over 10M USDC":   {func(i *cctp.CreateInput) { i.Amount = "10000000000001" }, fault.InvalidAmount, "amount"},
		"decimal amount":  {func(i *cctp.CreateInput) { i.Amount = "1.5" }, fault.InvalidAmount, "amount"},
		"a wallet":        {func(i *cctp.CreateInput) { i.MintRecipient = wallet.String() }, fault.InvalidInput, "mintRecipient"},
		"another mint":    {func(i *cctp.CreateInput) { i.MintRecipient = otherAcct.String() }, fault.InvalidInput, "mintRecipient"},
		"a mint":          {func(i *cctp.CreateInput) { i.MintRecipient = otherMint.String() }, fault.InvalidInput, "mintRecipient"},
		"the mint itself": {func(i *cctp.CreateInput) { i.MintRecipient = w.usdc.String() }, fault.InvalidInput, "mintRecipient"},
		"not a key":       {func(i *cctp.CreateInput) { i.MintRecipient = "0xabc" }, fault.InvalidInput, "mintRecipient"},
		"missing account": {func(i *cctp.CreateInput) { i.MintRecipient = nobody.String() }, fault.InvalidInput, "mintRecipient"},
	} {
		in := in
		c.mod(&in)
		_, err := w.svc.PrepareCreate(ctx, w.st, w.p, in)
		if code(err) != c.code || detail(err, "field") != c.field {
			t.Errorf("%s: %v, want %s on %s", name, err, c.code, c.field)
		}
	}
	if _, err := w.svc.PrepareCreate(ctx, w.st, w.p, in); err != nil {
		t.Fatalf("a good request after the run: %v", err)
	}
}

// TestReadinessRuns: a run that read everything passes; a contract
// without code fails the run on that check; a node that cannot be read
// leaves the run unreadable, which proves nothing and takes nothing back.
func TestReadinessRuns(t *testing.T) {
	w := newWorld(t, false)
	ctx := context.Background()
	c, err := w.svc.Capability(ctx, w.st, access.Test)
	if err != nil || !c.Configured || c.Verified || c.Reason != cctp.ReasonNotVerified || c.Enabled() {
		t.Fatalf("before any run: %+v, %v", c, err)
	}
	w.evm.Inject("eth_chainId", evmtest.Fault{HTTPStatus: 503}, 1)
	r, _, err := w.svc.Verify(ctx, access.Test)
	if err != nil || !r.Unreadable || r.Passed {
		t.Fatalf("unreadable run: %+v, %v", r, err)
	}
	if c, _ := w.svc.Capability(ctx, w.st, access.Test); c.Verified || c.Reason != cctp.ReasonNotVerified {
		t.Fatalf("after an unreadable run: %+v", c)
	}
	w.evm.SetCode(w.evm.Config().TokenMessenger, nil)
	r, _, _ = w.svc.Verify(ctx, access.Test)
	if r.Passed || r.Unreadable || !slices.ContainsFunc(r.Checks, func(c cctp.Check) bool { return !c.Passed && strings.HasPrefix(c.Name, "token_messenger") }) {
		t.Fatalf("no TokenMessenger code: %+v", r)
	}
	if c, _ := w.svc.Capability(ctx, w.st, access.Test); c.Verified || c.Reason != cctp.ReasonVerificationFailed {
		t.Fatalf("after a failed run: %+v", c)
	}
	w.evm.SetCode(w.evm.Config().TokenMessenger, []byte{1})
	if r, _, _ = w.svc.Verify(ctx, access.Test); !r.Passed {
		t.Fatalf("passing run: %+v", r)
	}
	// An unreadable run proves nothing, so it takes nothing back.
	w.evm.Inject("eth_chainId", evmtest.Fault{HTTPStatus: 503}, 1)
	if r, _, _ = w.svc.Verify(ctx, access.Test); !r.Unreadable {
		t.Fatalf("unreadable run: %+v", r)
	}
	if c, _ := w.svc.Capability(ctx, w.st, access.Test); !c.Verified || !c.Enabled() || c.Reason != "" {
		t.Fatalf("after an unreadable run that followed a passing one: %+v", c)
	}
	if c, _ := w.svc.Capability(ctx, w.st, access.Live); c.Configured || c.Reason != cctp.ReasonNotConfigured {
		t.Fatalf("live: %+v", c)
	}
}

// TestTransitionTable: the table is a function of state and event, the
// domain moves exactly by it, and only reconciliation completes.
func TestTransitionTable(t *testing.T) {
	table := fsm.New("cctp.Transition", "A cross-chain transfer", cctp.Moves())
	if err := table.Check(); err != nil {
		t.Fatal(err)
	}
	if err := table.Enforced(cctp.Transition); err != nil {
		t.Fatal(err)
	}
	for _, m := range cctp.Moves() {
		if m.To == cctp.StateCompleted && (m.From != cctp.StateDestinationVerified || m.Event != cctp.EventComplete) {
			t.Errorf("%+v completes", m)
		}
		if m.From.Terminal() && m.To != m.From {
			t.Errorf("%+v leaves a terminal state", m)
		}
	}
	if _, err := cctp.Transition(cctp.StateCreated, cctp.EventReview); code(err) != fault.InvalidState {
		t.Fatalf("CREATED on review: %v", err)
	}
}

// TestMessageCodec: a message round-trips; its source form zeroes exactly
// the attester's fields; short or non-V2 bytes are refused.
func TestMessageCodec(t *testing.T) {
	m := cctp.Message{Version: 1, SourceDomain: 6, DestinationDomain: 5, Nonce: cctp.WordOf(9), Sender: cctp.WordOf(1),
		Recipient: cctp.WordOf(2), MinFinalityThreshold: 1000, FinalityThresholdExecuted: 2000,
		Body: cctp.BurnBody{Version: 1, BurnToken: cctp.WordOf(3), MintRecipient: cctp.WordOf(4), Amount: cctp.WordOf(5),
			MessageSender: cctp.WordOf(6), MaxFee: cctp.WordOf(7), FeeExecuted: cctp.WordOf(8), ExpirationBlock: cctp.WordOf(10),
			HookData: []byte("hook")}}
	b := m.Encode()
	if len(b) != cctp.MinMessageSize+4 {
		t.Fatalf("length %d", len(b))
	}
	got, err := cctp.DecodeMessage(b)
	if err != nil || !bytes.Equal(got.Encode(), b) || got.Nonce != m.Nonce || got.Body.Amount != m.Body.Amount {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	src := got.SourceForm()
	if !src.Nonce.IsZero() || src.FinalityThresholdExecuted != 0 || !src.Body.FeeExecuted.IsZero() || !src.Body.ExpirationBlock.IsZero() ||
		src.Body.Amount != m.Body.Amount || src.MinFinalityThreshold != 1000 {
		t.Fatalf("source form: %+v", src)
	}
	if _, err := cctp.DecodeMessage(b[:cctp.MinMessageSize-1]); code(err) != fault.InvalidInput {
		t.Fatalf("short: %v", err)
	}
	v1 := bytes.Clone(b)
	v1[3] = 0
	if _, err := cctp.DecodeMessage(v1); code(err) != fault.InvalidInput {
		t.Fatalf("version 0: %v", err)
	}
}
