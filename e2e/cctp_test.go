package e2e_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmrpc"
	"github.com/creatormusic/platform/web3/cctp/evmtest"
	"github.com/creatormusic/platform/web3/cctp/iris"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// cctpSims are the simulators a test system's cross-chain transfers read,
// and the Solana accounts they set up on its cluster.
type cctpSims struct {
	evm  *evmtest.Server
	iris *iristest.Server
	// usdc is the destination mint; recipient a token account of it and
	// feeAcc the fee recipient's.
	usdc, recipient, feeAcc chain.Address
	// payer relays mints.
	payer     ed25519.PrivateKey
	payerAddr chain.Address
}

// cctpWorlds maps a test system's cluster to its simulators.
var cctpWorlds sync.Map

// cctpEnv starts the EVM node and the attestation service, installs the
// CCTP receive side on the cluster with a USDC mint (SPL Token, 6
// decimals) and a recipient's and a fee recipient's token accounts, and
// returns the test environment's configuration reaching the simulators
// through the adapters.
func cctpEnv(t testing.TB, c *chaintest.Cluster) *cctp.Environment {
	t.Helper()
	evm, err := evmtest.New(evmtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { evm.Close() })
	att, err := iristest.New(iristest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { att.Close() })
	w := &cctpSims{evm: evm, iris: att}
	_, w.usdc = chaintest.NewKeypair()
	c.SetAccount(w.usdc, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	if err := c.InstallCCTP(chaintest.CCTPConfig{Mint: w.usdc, VerifyAttestationFunc: att.Verify}); err != nil {
		t.Fatal(err)
	}
	_, owner := chaintest.NewKeypair()
	if w.recipient, err = c.MintTo(owner, w.usdc, 0); err != nil {
		t.Fatal(err)
	}
	_, feeOwner := chaintest.NewKeypair()
	if w.feeAcc, err = c.MintTo(feeOwner, w.usdc, 0); err != nil {
		t.Fatal(err)
	}
	w.payer, w.payerAddr = chaintest.NewKeypair()
	c.Airdrop(w.payerAddr, 5_000_000_000)
	client, err := evmrpc.New(evmrpc.Config{URL: evm.URL(), HTTPClient: urlguardtest.Client(t, evm.URL())})
	if err != nil {
		t.Fatal(err)
	}
	attestations, err := iris.New(iris.Config{BaseURL: att.URL(), HTTPClient: urlguardtest.Client(t, att.URL())})
	if err != nil {
		t.Fatal(err)
	}
	cctpWorlds.Store(c, w)
	cfg := evm.Config()
	return &cctp.Environment{Sources: []cctp.EVMChain{{Domain: cfg.Domain, ChainID: cfg.ChainID, Client: client,
		TokenMessenger: cfg.TokenMessenger, MessageTransmitter: cfg.MessageTransmitter, USDC: cfg.USDC}},
		Attestations: attestations, USDCMint: w.usdc, Attesters: att.Attesters(), SignatureThreshold: att.Threshold()}
}

// cctpOptions is a system whose test environment has cross-chain
// transfers over the simulators.
func cctpOptions() platformtest.Options {
	return platformtest.Options{Chain: true, CCTPFunc: cctpEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}}
}

// cctpOf returns the simulators of s.
func cctpOf(t testing.TB, s *platformtest.System) *cctpSims {
	t.Helper()
	w, ok := cctpWorlds.Load(s.Cluster)
	if !ok {
		t.Fatal("no CCTP simulators for this system")
	}
	return w.(*cctpSims)
}

// cctpCall posts body to a transfer route as p in test mode, with an
// Idempotency-Key when key is set.
func cctpCall(s *platformtest.System, p person, path, key string, body any) *platformtest.Response {
	h := map[string]string{}
	for k, v := range testMode {
		h[k] = v
	}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Cookie: p.cookie, Header: h, Body: body})
}

// cctpTransfer decodes a transfer answer, failing unless its status is
// want.
func cctpTransfer(t testing.TB, r *platformtest.Response, want int) api.CCTPTransferView {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Body)
	}
	var v api.CCTPTransferView
	r.Data(t, &v)
	return v
}

// cctpCreate creates a transfer of amount atomic USDC to the recipient.
func cctpCreate(t testing.TB, s *platformtest.System, p person, amount uint64) api.CCTPTransferView {
	t.Helper()
	w := cctpOf(t, s)
	return cctpTransfer(t, cctpCall(s, p, "/api/v1/cctp/transfers", fmt.Sprintf("create-%d-%d", amount, time.Now().UnixNano()),
		map[string]any{"amount": fmt.Sprint(amount), "sourceDomain": 6, "destinationDomain": 5, "mintRecipient": w.recipient.String()}),
		http.StatusCreated)
}

// cctpBurn mines a burn on the EVM simulator (the recipient and a
// depositor filled in when unset) and shows it to the attestation
// service, not indexed yet.
func cctpBurn(t testing.TB, s *platformtest.System, b evmtest.Burn) evmtest.Burned {
	t.Helper()
	w := cctpOf(t, s)
	if b.Depositor.IsZero() {
		b.Depositor = cctp.EVMAddress{0xde, 0xad, 0xbe, 0xef}
	}
	if b.MintRecipient.IsZero() {
		b.MintRecipient = cctp.WordOfAddress(w.recipient)
	}
	burned, err := w.evm.Burn(b)
	if err != nil {
		t.Fatal(err)
	}
	w.iris.Observe(cctp.DomainBase, burned.TxHash, burned.Messages...)
	return burned
}

// cctpMint relays the attested message on the cluster and returns the
// transaction's signature; it lands even when it fails.
func cctpMint(t testing.TB, s *platformtest.System, v api.CCTPTransferView) string {
	t.Helper()
	w := cctpOf(t, s)
	msg, _ := cctp.ParseHexBytes(v.Attestation.Message)
	att, _ := cctp.ParseHexBytes(v.Attestation.Attestation)
	ix, err := chaintest.ReceiveMessageInstruction(w.payerAddr, w.recipient, w.feeAcc, w.usdc, msg, att)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := s.Cluster.LatestBlockhash()
	wire, err := chaintest.SignedTransaction(w.payerAddr, hash.String(), []message.Instruction{ix}, w.payer)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.RPC.SendTransaction(context.Background(), wire, chain.SendOptions{SkipPreflight: true})
	if err != nil {
		t.Fatalf("send the mint: %v", err)
	}
	s.Cluster.AdvanceSlots(2) // confirmed
	return sig
}

// errDetail returns a detail of an error answer.
func errDetail(r *platformtest.Response, key string) any {
	e, _ := r.JSON()["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d[key]
}

// cctpAttested runs a transfer of amount through the attestation: created,
// burned, source verified, attested with fee.
func cctpAttested(t testing.TB, s *platformtest.System, p person, amount, fee uint64) (api.CCTPTransferView, evmtest.Burned) {
	t.Helper()
	w := cctpOf(t, s)
	tr := cctpCreate(t, s, p, amount)
	burned := cctpBurn(t, s, evmtest.Burn{Amount: amount, MaxFee: amount / 1000})
	base := "/api/v1/cctp/transfers/" + tr.ID
	tr = cctpTransfer(t, cctpCall(s, p, base+"/source-submitted", "", map[string]any{"txHash": burned.TxHash.String()}), http.StatusOK)
	if _, err := w.iris.Complete(cctp.DomainBase, burned.TxHash, 0, iristest.Attest{FeeExecuted: fee}); err != nil {
		t.Fatal(err)
	}
	tr = cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
	if tr.State != "ATTESTED" {
		t.Fatalf("not attested: %+v", tr)
	}
	return tr, burned
}

// TestCCTPTransferEndToEnd moves USDC from the EVM simulator to the
// loopback cluster through every route on both databases: the capability
// reports the verified configuration; creation is idempotent; the burn's
// receipt is read and verified; the attestation is not indexed, then
// pending, then complete; the mint is read from the cluster; reconcile,
// the operator's, waits for finality on both sides and completes. Every
// step's evidence, outbox event and audit record is written.
func TestCCTPTransferEndToEnd(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, cctpOptions(), func(t *testing.T, s *platformtest.System) {
		w := cctpOf(t, s)
		p := testSession(t, s, "bridge@example.com")
		caps, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", s.Boot.TestKey)
		line := cctpFeatureLine(t, caps)
		if !line.Configured || !line.Verified || !line.Enabled || line.Reason != nil {
			t.Fatalf("capability = %+v", line)
		}

		body := map[string]any{"amount": "25000000", "sourceDomain": 6, "destinationDomain": 5, "mintRecipient": w.recipient.String()}
		tr := cctpTransfer(t, cctpCall(s, p, "/api/v1/cctp/transfers", "bridge-1", body), http.StatusCreated)
		if tr.State != "CREATED" || tr.Amount != "25000000" || tr.SourceNetwork == nil || *tr.SourceNetwork != "eip155:84532" ||
			tr.MintRecipient != w.recipient.String() || tr.Burn != nil || len(tr.Evidence) != 0 {
			t.Fatalf("created: %+v", tr)
		}
		again := cctpCall(s, p, "/api/v1/cctp/transfers", "bridge-1", body)
		if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" || cctpTransfer(t, again, 201).ID != tr.ID {
			t.Fatalf("the same key again: %d %s", again.Status, again.Body)
		}
		body["amount"] = "26000000"
		if r := cctpCall(s, p, "/api/v1/cctp/transfers", "bridge-1", body); r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("the same key, another amount: %d %s", r.Status, r.Body)
		}
		if r := cctpCall(s, p, "/api/v1/cctp/transfers", "", body); r.Status != http.StatusBadRequest || r.Code() != "IDEMPOTENCY_KEY_REQUIRED" {
			t.Fatalf("no key: %d %s", r.Status, r.Body)
		}

		base := "/api/v1/cctp/transfers/" + tr.ID
		burned := cctpBurn(t, s, evmtest.Burn{Amount: 25_000_000, MaxFee: 25_000})
		tr = cctpTransfer(t, cctpCall(s, p, base+"/source-submitted", "", map[string]any{"txHash": burned.TxHash.String()}), http.StatusOK)
		if tr.State != "SOURCE_VERIFIED" || tr.Burn == nil || tr.Burn.TxHash != burned.TxHash.String() || tr.Burn.MaxFee != "25000" ||
			len(tr.Evidence) != 1 || tr.Evidence[0].Step != "source" || tr.Evidence[0].Outcome != "verified" {
			t.Fatalf("source verified: %+v", tr)
		}

		tr = cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
		if tr.State != "SOURCE_VERIFIED" || tr.Observed == nil || *tr.Observed != "not_indexed" || len(tr.Evidence) != 1 {
			t.Fatalf("not indexed: %+v", tr)
		}
		if err := w.iris.Index(cctp.DomainBase, burned.TxHash); err != nil {
			t.Fatal(err)
		}
		tr = cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
		if tr.State != "ATTESTATION_PENDING" || *tr.Observed != "pending" || tr.Attestation != nil {
			t.Fatalf("pending: %+v", tr)
		}
		if _, err := w.iris.Complete(cctp.DomainBase, burned.TxHash, 0, iristest.Attest{FeeExecuted: 2_500}); err != nil {
			t.Fatal(err)
		}
		tr = cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
		if tr.State != "ATTESTED" || *tr.Observed != "complete" || tr.Attestation == nil || tr.Attestation.FeeExecuted != "2500" {
			t.Fatalf("attested: %+v", tr)
		}

		sig := cctpMint(t, s, tr)
		tr = cctpTransfer(t, cctpCall(s, p, base+"/destination-submitted", "", map[string]any{"signature": sig}), http.StatusOK)
		if tr.State != "DESTINATION_VERIFIED" || tr.Mint == nil || tr.Mint.Signature != sig || tr.Mint.Received != "24997500" {
			t.Fatalf("destination verified: %+v", tr)
		}
		bal, err := s.RPC.GetTokenAccountBalance(context.Background(), w.recipient, chain.Confirmed)
		if err != nil || bal.Amount != 24_997_500 {
			t.Fatalf("recipient balance %d, %v", bal.Amount, err)
		}

		// Reconcile is the operator's: a session is refused.
		if r := cctpCall(s, p, base+"/reconcile", "", nil); r.Status != http.StatusForbidden {
			t.Fatalf("reconcile as the user: %d %s", r.Status, r.Body)
		}
		op := internalKey(t, s)
		reconcile := func() *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPost, Path: base + "/reconcile", Key: op})
		}
		if r := reconcile(); r.Status != http.StatusConflict || r.Code() != "RESULT_NOT_READY" || errDetail(r, "reason") != "source_not_final" {
			t.Fatalf("reconcile before the burn is final: %d %s", r.Status, r.Body)
		}
		w.evm.Finalize()
		if r := reconcile(); r.Code() != "RESULT_NOT_READY" || errDetail(r, "reason") != "destination_not_final" {
			t.Fatalf("reconcile before the mint is final: %d %s", r.Status, r.Body)
		}
		s.Cluster.AdvanceSlots(40)
		tr = cctpTransfer(t, reconcile(), http.StatusOK)
		if tr.State != "COMPLETED" || !tr.Terminal || len(tr.Evidence) != 5 || tr.Evidence[4].Step != "reconcile" ||
			tr.Evidence[4].Outcome != "completed" {
			t.Fatalf("reconciled: %+v", tr)
		}
		for _, e := range tr.Evidence {
			for _, c := range e.Checks {
				if !c.Passed {
					t.Errorf("evidence %s: failed check %+v", e.Step, c)
				}
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ?`, tr.ID); n != 6 {
			t.Errorf("outbox events = %d, want created and five moves", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE target_id = ?`, tr.ID); n != 6 {
			t.Errorf("audit records = %d, want 6", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM cctp_evidence WHERE transfer_id = ?`, tr.ID); n != 5 {
			t.Errorf("evidence rows = %d", n)
		}
	})
}

// cctpFeatureLine returns the cross-chain line of a capabilities answer.
func cctpFeatureLine(t testing.TB, caps api.Web3CapabilitiesView) api.Web3FeatureView {
	t.Helper()
	for _, f := range caps.Features {
		if f.Feature == "cross_chain_transfers" {
			return f
		}
	}
	t.Fatalf("no cross_chain_transfers in %+v", caps.Features)
	return api.Web3FeatureView{}
}

// TestCCTPBurnRefusals submits burns that are not the transfer's: another
// recipient, another amount, another destination domain. Each is 422
// VERIFICATION_FAILED naming its check and records nothing; the transfer
// then takes its own burn.
func TestCCTPBurnRefusals(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, cctpOptions(), func(t *testing.T, s *platformtest.System) {
		p := testSession(t, s, "refused@example.com")
		tr := cctpCreate(t, s, p, 3_000_000)
		path := "/api/v1/cctp/transfers/" + tr.ID + "/source-submitted"
		var elsewhere cctp.Word
		elsewhere[5] = 1
		for check, b := range map[string]evmtest.Burn{
			"mint_recipient":     {Amount: 3_000_000, MintRecipient: elsewhere},
			"amount":             {Amount: 3_000_001},
			"destination_domain": {Amount: 3_000_000, DestinationDomain: cctp.DomainBase},
		} {
			burned := cctpBurn(t, s, b)
			r := cctpCall(s, p, path, "", map[string]any{"txHash": burned.TxHash.String()})
			if r.Status != http.StatusUnprocessableEntity || r.Code() != "VERIFICATION_FAILED" || errDetail(r, "check") != check {
				t.Errorf("%s: %d %s", check, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM cctp_evidence WHERE transfer_id = ?`, tr.ID); n != 0 {
			t.Fatalf("evidence after refusals = %d", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM cctp_transfers WHERE id = ? AND state = 'CREATED' AND version = 1`, tr.ID); n != 1 {
			t.Fatal("the transfer moved after refusals")
		}
		r := cctpCall(s, p, path, "", map[string]any{"txHash": "0x" + strings.Repeat("ab", 32)})
		if r.Status != http.StatusConflict || r.Code() != "RESULT_NOT_READY" {
			t.Fatalf("an unknown transaction: %d %s", r.Status, r.Body)
		}
		cctpOf(t, s).evm.Inject("eth_getTransactionReceipt", evmtest.Fault{Code: -32000, Message: "backend down"}, 1)
		good := cctpBurn(t, s, evmtest.Burn{Amount: 3_000_000})
		r = cctpCall(s, p, path, "", map[string]any{"txHash": good.TxHash.String()})
		if r.Status != http.StatusServiceUnavailable || r.Code() != "PROVIDER_UNAVAILABLE" || errDetail(r, "reason") != "source_chain_unavailable" {
			t.Fatalf("a node error: %d %s", r.Status, r.Body)
		}
		got := cctpTransfer(t, cctpCall(s, p, path, "", map[string]any{"txHash": good.TxHash.String()}), http.StatusOK)
		if got.State != "SOURCE_VERIFIED" {
			t.Fatalf("the transfer's own burn: %+v", got)
		}
		// Another user cannot touch the transfer.
		other := testSession(t, s, "stranger@example.com")
		if r := cctpCall(s, other, "/api/v1/cctp/transfers/"+tr.ID+"/attestation", "", nil); r.Status != http.StatusNotFound {
			t.Fatalf("another user's transfer: %d %s", r.Status, r.Body)
		}
	})
}

// TestCCTPAttestationBackOff: the attestation service's 429 makes the
// platform back off: the attestation route answers PROVIDER_UNAVAILABLE
// with rate_limited and retryAfterSeconds without asking the service
// again.
func TestCCTPAttestationBackOff(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, cctpOptions(), func(t *testing.T, s *platformtest.System) {
		w := cctpOf(t, s)
		p := testSession(t, s, "backoff@example.com")
		tr := cctpCreate(t, s, p, 4_000_000)
		base := "/api/v1/cctp/transfers/" + tr.ID
		burned := cctpBurn(t, s, evmtest.Burn{Amount: 4_000_000})
		cctpTransfer(t, cctpCall(s, p, base+"/source-submitted", "", map[string]any{"txHash": burned.TxHash.String()}), http.StatusOK)

		w.iris.RateLimit(iristest.RouteMessages, 1, time.Hour)
		for range 2 {
			r := cctpCall(s, p, base+"/attestation", "", nil)
			if r.Status != http.StatusServiceUnavailable || errDetail(r, "reason") != "rate_limited" || errDetail(r, "retryAfterSeconds") == nil {
				t.Fatalf("back-off: %d %s", r.Status, r.Body)
			}
		}
		if n := w.iris.Requests(iristest.RouteMessages); n != 1 {
			t.Fatalf("the service was asked %d times during the back-off", n)
		}
	})
}

// TestCCTPAttestationForAnotherMessage: the attestation service answers,
// for the burn's transaction, a complete attestation of another message.
// The server never takes it: the transfer goes to REQUIRES_REVIEW with
// the evidence, and later steps answer it as it is.
func TestCCTPAttestationForAnotherMessage(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, cctpOptions(), func(t *testing.T, s *platformtest.System) {
		w := cctpOf(t, s)
		p := testSession(t, s, "review@example.com")
		tr := cctpCreate(t, s, p, 4_000_000)
		base := "/api/v1/cctp/transfers/" + tr.ID
		burned := cctpBurn(t, s, evmtest.Burn{Amount: 4_000_000})
		cctpTransfer(t, cctpCall(s, p, base+"/source-submitted", "", map[string]any{"txHash": burned.TxHash.String()}), http.StatusOK)
		other := cctp.Message{Version: cctp.MessageVersion, SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana,
			Nonce: cctp.WordOf(42), Recipient: cctp.WordOfAddress(cctp.MinterProgramID()),
			Body: cctp.BurnBody{Version: cctp.BurnMessageVersion, MintRecipient: cctp.WordOfAddress(w.recipient),
				Amount: cctp.WordOf(400_000_000)}}.Encode()
		if err := w.iris.Replace(cctp.DomainBase, burned.TxHash, 0, other, true); err != nil {
			t.Fatal(err)
		}
		tr = cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
		if tr.State != "REQUIRES_REVIEW" || tr.ReviewReason == nil || *tr.ReviewReason != "attestation_message_mismatch" ||
			tr.Attestation != nil || len(tr.Evidence) != 2 || tr.Evidence[1].Outcome != "review" {
			t.Fatalf("another message: %+v", tr)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'cctp_transfer.requires_review'`, tr.ID); n != 1 {
			t.Fatalf("review events = %d", n)
		}
		again := cctpTransfer(t, cctpCall(s, p, base+"/attestation", "", nil), http.StatusOK)
		if again.State != "REQUIRES_REVIEW" || again.Version != tr.Version {
			t.Fatalf("after review: %+v", again)
		}
		if r := cctpCall(s, p, base+"/destination-submitted", "", map[string]any{"signature": strings.Repeat("1", 64)}); r.Code() != "INVALID_STATE_TRANSITION" {
			t.Fatalf("a mint after review: %d %s", r.Status, r.Body)
		}
	})
}

// TestCCTPMintReplay: the message was minted once; the transaction
// submitted is a repeat that failed on chain because the nonce was used.
// The platform checks the used-nonce account, finds and verifies the
// first mint, and records the repeat as replayed: the transfer is
// DESTINATION_VERIFIED with the first mint's signature.
func TestCCTPMintReplay(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, cctpOptions(), func(t *testing.T, s *platformtest.System) {
		p := testSession(t, s, "replay@example.com")
		tr, _ := cctpAttested(t, s, p, 5_000_000, 500)
		base := "/api/v1/cctp/transfers/" + tr.ID
		first := cctpMint(t, s, tr)
		repeat := cctpMint(t, s, tr)
		got := cctpTransfer(t, cctpCall(s, p, base+"/destination-submitted", "", map[string]any{"signature": repeat}), http.StatusOK)
		last := got.Evidence[len(got.Evidence)-1]
		if got.State != "DESTINATION_VERIFIED" || got.Mint == nil || got.Mint.Signature != first || got.Mint.Received != "4999500" ||
			last.Step != "destination" || last.Outcome != "replayed" {
			t.Fatalf("replay: %+v", got)
		}
		names := map[string]bool{}
		for _, c := range last.Checks {
			names[c.Name] = c.Passed
		}
		if !names["repeated_mint"] || !names["used_nonce"] || !names["original_mint"] || !names["recipient_received"] {
			t.Fatalf("replayed evidence checks: %+v", last.Checks)
		}
		again := cctpTransfer(t, cctpCall(s, p, base+"/destination-submitted", "", map[string]any{"signature": first}), http.StatusOK)
		if again.Version != got.Version || len(again.Evidence) != len(got.Evidence) {
			t.Fatalf("the first mint again: %+v", again)
		}
	})
}

// TestCCTPCapabilityHonest: a host without cross-chain configuration
// reports it not configured and answers its routes 503; a configuration
// whose readiness run failed (the node answers another chain id) is
// configured, not verified and not enabled, and creation fails closed.
func TestCCTPCapabilityHonest(t *testing.T) {
	t.Parallel()
	t.Run("not configured", func(t *testing.T) { cctpNotConfigured(t) })
	t.Run("readiness failed", func(t *testing.T) { cctpReadinessFailed(t) })
}

// cctpNotConfigured is TestCCTPCapabilityHonest without configuration.
func cctpNotConfigured(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{Chain: true}, func(t *testing.T, s *platformtest.System) {
		caps, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", s.Boot.TestKey)
		line := cctpFeatureLine(t, caps)
		if line.Configured || line.Verified || line.Enabled || line.Reason == nil || *line.Reason != cctp.ReasonNotConfigured {
			t.Fatalf("no configuration: %+v", line)
		}
		p := testSession(t, s, "nocfg@example.com")
		r := cctpCall(s, p, "/api/v1/cctp/transfers", "k1", map[string]any{"amount": "1", "sourceDomain": 6, "destinationDomain": 5,
			"mintRecipient": s.Token.Mint.String()})
		if r.Status != http.StatusServiceUnavailable || r.Code() != "SERVICE_UNAVAILABLE" || errDetail(r, "reason") != "not_configured" {
			t.Fatalf("create without configuration: %d %s", r.Status, r.Body)
		}
	})
}

// cctpReadinessFailed is TestCCTPCapabilityHonest with a readiness run
// that failed.
func cctpReadinessFailed(t *testing.T) {
	wrongChain := cctpOptions()
	wrongChain.CCTPFunc = func(t testing.TB, c *chaintest.Cluster) *cctp.Environment {
		e := cctpEnv(t, c)
		e.Sources[0].ChainID = 1 // the node answers 84532
		return e
	}
	platformtest.Dialects(t, wrongChain, func(t *testing.T, s *platformtest.System) {
		w := cctpOf(t, s)
		caps, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", s.Boot.TestKey)
		line := cctpFeatureLine(t, caps)
		if !line.Configured || line.Verified || line.Enabled || line.Reason == nil || *line.Reason != cctp.ReasonVerificationFailed {
			t.Fatalf("a failed readiness run: %+v", line)
		}
		live, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", "")
		if l := cctpFeatureLine(t, live); l.Configured || *l.Reason != cctp.ReasonNotConfigured {
			t.Fatalf("live: %+v", l)
		}
		p := testSession(t, s, "failed@example.com")
		r := cctpCall(s, p, "/api/v1/cctp/transfers", "k1", map[string]any{"amount": "1", "sourceDomain": 6, "destinationDomain": 5,
			"mintRecipient": w.recipient.String()})
		if r.Status != http.StatusServiceUnavailable || errDetail(r, "reason") != cctp.ReasonVerificationFailed {
			t.Fatalf("create after a failed run: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM cctp_readiness WHERE environment = ? AND passed = ?`, string(access.Test), false); n < 1 {
			t.Fatalf("failed readiness runs stored = %d", n)
		}
	})
}
