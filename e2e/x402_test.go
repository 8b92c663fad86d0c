package e2e_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/x402/facilitator"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// x402Price is the analysis's price in atomic units of the test dollar:
// 0.25.
const x402Price = 250_000

// x402Fixture is a system whose test environment sells one analysis per
// use on its cluster, and a payer holding the asset.
type x402Fixture struct {
	s        *platformtest.System
	dep      x402test.Deployment
	payerKey ed25519.PrivateKey
	payer    chain.Address
	// sim is the remote facilitator simulator, when the system uses one.
	sim *x402test.Server
}

// x402Setup says how a fixture's protocol is configured.
type x402Setup struct {
	// remote settles through a facilitator simulator instead of the local
	// facilitator.
	remote bool
	// unfunded leaves the fee payer without lamports: the check fails.
	unfunded bool
}

// newX402 starts a system (PostgreSQL with pg) with the protocol
// configured as setup says, its cluster advancing a slot every 20ms.
func newX402(t *testing.T, pg bool, setup x402Setup) *x402Fixture {
	t.Helper()
	fx := &x402Fixture{}
	opts := platformtest.Options{Postgres: pg, Chain: true, Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond},
		ChainConfig: platform.ChainConfig{X402: platform.X402Tuning{SettleTimeout: 10 * time.Second, PollInterval: 5 * time.Millisecond,
			WatchEvery: time.Second}}}
	opts.X402Func = func(t testing.TB, c *chaintest.Cluster, d tokentest.Deployment) platform.X402Environment {
		dep, err := x402test.Deploy(c, "usd", d.Treasury)
		if err != nil {
			t.Fatal(err)
		}
		if setup.unfunded {
			c.DeleteAccount(dep.FeePayerAddress)
		}
		fx.dep = dep
		fx.payerKey, fx.payer = chaintest.NewKeypair()
		if _, err := dep.Fund(c, fx.payer, 5_000_000); err != nil {
			t.Fatal(err)
		}
		signer, err := x402.NewKeySigner(dep.FeePayer)
		if err != nil {
			t.Fatal(err)
		}
		env := platform.X402Environment{Asset: dep.Mint.String(), Decimals: x402test.Decimals, FeePayer: signer,
			Resources: []x402.Resource{{ID: "sound-analysis", Kind: x402.KindSoundAnalysis,
				Description: "One analysis of an audio asset by the sound engine.", Amount: x402Price}}}
		if setup.remote {
			env.Facilitator = fx.startSimulator(t, c, signer)
		}
		return env
	}
	fx.s = platformtest.New(t, opts)
	t.Cleanup(fx.s.Cluster.Run(20 * time.Millisecond))
	return fx
}

// startSimulator starts a facilitator simulator settling with signer on
// c, and returns the adapter that reaches it.
func (fx *x402Fixture) startSimulator(t testing.TB, c *chaintest.Cluster, signer x402.Signer) x402.Facilitator {
	rpc, err := solanarpc.New(solanarpc.Config{URL: c.URL(), Timeout: 2 * time.Second, HTTPClient: urlguardtest.Client(t, c.URL())})
	if err != nil {
		t.Fatal(err)
	}
	local, err := x402.NewLocal(x402.LocalConfig{Chain: rpc, Signer: signer, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := x402test.New(x402test.Config{Facilitator: local})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	fx.sim = sim
	client, err := facilitator.New(facilitator.Config{BaseURL: sim.URL(), HTTPClient: urlguardtest.Client(t, sim.URL()),
		Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// requirements reads the analysis's requirements as key ("" for an
// anonymous caller) and returns the answer, its data and what
// PAYMENT-REQUIRED carries (without the header, on a 200 with a grant,
// the same object read from the data).
func (fx *x402Fixture) requirements(t *testing.T, key string) (*platformtest.Response, api.X402PaymentRequiredView, x402.PaymentRequired) {
	t.Helper()
	r := fx.s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/x402/requirements/sound-analysis", Key: key})
	var v api.X402PaymentRequiredView
	var pr x402.PaymentRequired
	if r.Status == http.StatusOK || r.Status == http.StatusPaymentRequired {
		r.Data(t, &v)
	}
	if h := r.Header.Get(x402.HeaderRequired); h != "" {
		if err := x402.DecodeHeader(h, &pr); err != nil {
			t.Fatalf("PAYMENT-REQUIRED: %v", err)
		}
	} else if r.Status == http.StatusOK {
		pr = x402.PaymentRequired{X402Version: v.X402Version, Error: v.Error, Resource: x402.ResourceInfo{URL: v.Resource.URL}}
		for _, a := range v.Accepts {
			pr.Accepts = append(pr.Accepts, x402.Requirements{Scheme: a.Scheme, Network: a.Network, Amount: a.Amount, Asset: a.Asset,
				PayTo: a.PayTo, MaxTimeoutSeconds: a.MaxTimeoutSeconds, Extra: x402.Extra{FeePayer: a.Extra.FeePayer, Memo: a.Extra.Memo}})
		}
	}
	return r, v, pr
}

// blockhash is a recent blockhash of the cluster.
func (fx *x402Fixture) blockhash(t *testing.T) string {
	t.Helper()
	bh, err := fx.s.RPC.GetLatestBlockhash(context.Background(), chain.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	return bh.Hash
}

// pay builds the payer's payment of required, as a client does.
func (fx *x402Fixture) pay(t *testing.T, required x402.PaymentRequired) x402.PaymentPayload {
	t.Helper()
	pp, err := x402.BuildPayment(required, fx.payerKey, fx.dep.TokenProgram, x402test.Decimals, fx.blockhash(t))
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

// header encodes a payment for PAYMENT-SIGNATURE.
func header(t *testing.T, pp x402.PaymentPayload) string {
	t.Helper()
	h, err := x402.EncodeHeader(pp)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// verify posts a payment to the verify route in PAYMENT-SIGNATURE.
func (fx *x402Fixture) verify(key, sig string) *platformtest.Response {
	return fx.s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/x402/verify", Key: key,
		Header: map[string]string{x402.HeaderSignature: sig}})
}

// settle posts a payment to the settle route in PAYMENT-SIGNATURE.
func (fx *x402Fixture) settle(key, idem, sig string) *platformtest.Response {
	return fx.s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/x402/settle", Key: key,
		Header: map[string]string{x402.HeaderSignature: sig, "Idempotency-Key": idem}})
}

// settled decodes a settle answer: its data and its PAYMENT-RESPONSE.
func settled(t *testing.T, r *platformtest.Response) (api.X402SettleView, x402.SettleResponse) {
	t.Helper()
	var v api.X402SettleView
	r.Data(t, &v)
	var sr x402.SettleResponse
	if err := x402.DecodeHeader(r.Header.Get(x402.HeaderResponse), &sr); err != nil {
		t.Fatalf("PAYMENT-RESPONSE of %d %s: %v", r.Status, r.Body, err)
	}
	return v, sr
}

// received is what payTo's token account holds.
func (fx *x402Fixture) received(t *testing.T) uint64 {
	t.Helper()
	a, ok := fx.s.Cluster.Account(fx.dep.PayToAccount)
	if !ok {
		t.Fatal("payTo has no token account")
	}
	ta, err := token2022.DecodeAccount(a.Data)
	if err != nil {
		t.Fatal(err)
	}
	return ta.Amount
}

// dialects runs fn on SQLite and on PostgreSQL.
func dialects(t *testing.T, fn func(t *testing.T, pg bool)) {
	t.Parallel()
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { fn(t, pg) })
	}
}

// TestX402BuyOneAnalysis is the whole cycle on the loopback cluster with a
// real keypair: 402 with the requirements, a payment built and signed by
// the payer, verified, settled (200 with PAYMENT-RESPONSE and one grant,
// the asset on payTo's account), the grant shown, spent by an analysis,
// and refused the second time; the settle replayed under its key, the key
// with another payment (409), and the payment replayed under another key
// (refused, nothing granted twice).
func TestX402BuyOneAnalysis(t *testing.T) {
	dialects(t, func(t *testing.T, pg bool) {
		fx := newX402(t, pg, x402Setup{})
		s, key := fx.s, fx.s.Boot.TestKey

		r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/x402/resources", Key: key})
		var list api.X402ResourcesView
		r.Data(t, &list)
		if r.Status != http.StatusOK || !list.Configured || !list.Verified || list.Reason != nil || len(list.Resources) != 1 ||
			list.Resources[0].AmountAtomic != "250000" || list.Resources[0].Asset != fx.dep.Mint.String() ||
			list.Network == nil || *list.Network != s.Cluster.Network().CAIP2() {
			t.Fatalf("resources: %d %s", r.Status, r.Body)
		}

		r, v, required := fx.requirements(t, key)
		if r.Status != http.StatusPaymentRequired || v.Grant != nil || len(required.Accepts) != 1 {
			t.Fatalf("requirements: %d %s", r.Status, r.Body)
		}
		req := required.Accepts[0]
		if req.Scheme != "exact" || req.Network != s.Cluster.Network().CAIP2() || req.Amount != "250000" ||
			req.Asset != fx.dep.Mint.String() || req.PayTo != s.Token.Treasury.String() ||
			req.Extra.FeePayer != fx.dep.FeePayerAddress.String() || req.Extra.Memo == "" || v.Accepts[0].Extra.Memo != req.Extra.Memo {
			t.Fatalf("requirement %+v (data %+v)", req, v.Accepts[0])
		}
		if _, _, anon := fx.requirements(t, ""); len(anon.Accepts) != 0 {
			t.Fatalf("anonymous callers see the live environment, which sells nothing: %+v", anon)
		}

		pp := fx.pay(t, required)
		sig := header(t, pp)
		r = fx.verify(key, sig)
		var vv api.X402VerifyView
		r.Data(t, &vv)
		if r.Status != http.StatusOK || !vv.IsValid || vv.Payer != fx.payer.String() || vv.ResourceID != "sound-analysis" {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		if got := fx.received(t); got != 0 {
			t.Fatalf("verify moved %d", got)
		}

		_, _, fresh := fx.requirements(t, key) // a second purchase's requirements, read before the first settles
		r = fx.settle(key, "buy-1", sig)
		sv, sr := settled(t, r)
		if r.Status != http.StatusOK || !sr.Success || sr.Transaction == "" || sr.Transaction != sv.Transaction ||
			sr.Payer != fx.payer.String() || sr.Amount != "250000" || sr.Network != req.Network ||
			sv.State == nil || *sv.State != "SETTLED" || sv.Grant == nil || sv.Grant.State != "AVAILABLE" {
			t.Fatalf("settle: %d %s (PAYMENT-RESPONSE %+v)", r.Status, r.Body, sr)
		}
		if got := fx.received(t); got != x402Price {
			t.Fatalf("payTo received %d", got)
		}
		st, err := s.RPC.GetSignatureStatuses(context.Background(), []string{sr.Transaction}, true)
		if err != nil || st[0] == nil || st[0].Err != "" {
			t.Fatalf("the transaction on chain: %+v, %v", st, err)
		}

		// The same key and payment replay the outcome, PAYMENT-RESPONSE too.
		again := fx.settle(key, "buy-1", sig)
		if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" ||
			again.Header.Get(x402.HeaderResponse) != r.Header.Get(x402.HeaderResponse) {
			t.Fatalf("replay: %d %s %v", again.Status, again.Body, again.Header)
		}
		// The same key with another payment is a conflict.
		if c := fx.settle(key, "buy-1", header(t, fx.pay(t, fresh))); c.Status != http.StatusConflict || c.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("another payment under the key: %d %s", c.Status, c.Body)
		}
		// The settled payment under another key is refused: one transaction settles once.
		dup := fx.settle(key, "buy-again", sig)
		dv, dsr := settled(t, dup)
		if dup.Status != http.StatusPaymentRequired || dsr.Success || dsr.ErrorReason != "duplicate_settlement" || dv.Grant != nil ||
			dv.SettlementID != nil || dsr.Transaction != "" {
			t.Fatalf("the payment replayed: %d %s", dup.Status, dup.Body)
		}
		if got := fx.received(t); got != x402Price {
			t.Fatalf("payTo received %d after the replays", got)
		}

		// The grant is the caller's: the requirements answer 200 with it.
		r, v, _ = fx.requirements(t, key)
		if r.Status != http.StatusOK || v.Grant == nil || v.Grant.ID != sv.Grant.ID || r.Header.Get(x402.HeaderRequired) != "" {
			t.Fatalf("requirements with a grant: %d %s", r.Status, r.Body)
		}
		other := s.Bootstrap("Stranger")
		if r, v, _ := fx.requirements(t, other.TestKey); r.Status != http.StatusPaymentRequired || v.Grant != nil {
			t.Fatalf("another tenant sees the grant: %d %s", r.Status, r.Body)
		}

		// The analysis spends it, once.
		asset := uploadWAV(t, s, pcmWAV(48000, 4800, func(i int) float64 { return 0.25 }))
		if a := analyze(s, "paid-1", map[string]any{"input": map[string]string{"assetId": asset}, "x402GrantId": sv.Grant.ID}); a.Status != http.StatusAccepted {
			t.Fatalf("the paid analysis: %d %s", a.Status, a.Body)
		}
		r, v, _ = fx.requirements(t, key)
		if r.Status != http.StatusPaymentRequired || v.Grant != nil {
			t.Fatalf("the grant was spent; requirements: %d %s", r.Status, r.Body)
		}
		spent := analyze(s, "paid-2", map[string]any{"input": map[string]string{"assetId": asset}, "x402GrantId": sv.Grant.ID})
		if spent.Status != http.StatusConflict || spent.Code() != "CONFLICT" || spent.JSON()["error"].(map[string]any)["details"].(map[string]any)["reason"] != "grant_consumed" {
			t.Fatalf("the spent grant again: %d %s", spent.Status, spent.Body)
		}
		if a := analyze(s, "paid-3", map[string]any{"input": map[string]string{"assetId": asset}, "x402GrantId": "x4g_unknown"}); a.Status != http.StatusNotFound {
			t.Fatalf("an unknown grant: %d %s", a.Status, a.Body)
		}
		rows := outboxTypes(t, s, "test")
		for _, want := range []string{"x402_settlement.submitting", "x402_settlement.settled", "x402_grant.consumed"} {
			if rows[want] != 1 {
				t.Errorf("outbox has %d %s events", rows[want], want)
			}
		}
	})
}

// outboxTypes counts env's outbox events by type.
func outboxTypes(t *testing.T, s *platformtest.System, env string) map[string]int {
	t.Helper()
	var rows []struct {
		Type string `bun:"type"`
	}
	if err := s.DB.Read().IDB().NewRaw(`SELECT type FROM outbox_events WHERE environment = ?`, env).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.Type]++
	}
	return out
}

// TestX402SettleFailsOnChain: a payment the chain fails is answered 402
// with PAYMENT-RESPONSE success false, nothing granted, and the failed
// outcome replays under its key.
func TestX402SettleFailsOnChain(t *testing.T) {
	dialects(t, func(t *testing.T, pg bool) {
		fx := newX402(t, pg, x402Setup{})
		key := fx.s.Boot.TestKey
		_, _, required := fx.requirements(t, key)
		sig := header(t, fx.pay(t, required))
		fx.s.Cluster.FailTransactions(1)
		r := fx.settle(key, "fails-1", sig)
		v, sr := settled(t, r)
		if r.Status != http.StatusPaymentRequired || sr.Success || sr.ErrorReason != x402.ReasonTransactionFailed || sr.Transaction != "" ||
			v.State == nil || *v.State != "FAILED" || v.Grant != nil || v.SettlementID == nil {
			t.Fatalf("settle: %d %s (PAYMENT-RESPONSE %+v)", r.Status, r.Body, sr)
		}
		if got := fx.received(t); got != 0 {
			t.Fatalf("payTo received %d", got)
		}
		again := fx.settle(key, "fails-1", sig)
		if again.Status != http.StatusPaymentRequired || again.Header.Get(x402.HeaderResponse) != r.Header.Get(x402.HeaderResponse) ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay of the failure: %d %s", again.Status, again.Body)
		}
		if r, v, _ := fx.requirements(t, key); r.Status != http.StatusPaymentRequired || v.Grant != nil {
			t.Fatalf("a failed payment granted: %d %s", r.Status, r.Body)
		}
	})
}

// capability is the payment-required protocol's line of the chain
// capabilities as key sees them.
func capability(t *testing.T, s *platformtest.System, key string) api.Web3FeatureView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/web3/capabilities", Key: key})
	var v api.Web3CapabilitiesView
	r.Data(t, &v)
	for _, f := range v.Features {
		if f.Feature == "payment_required_protocol" {
			return f
		}
	}
	t.Fatalf("no payment_required_protocol line: %s", r.Body)
	return api.Web3FeatureView{}
}

// TestX402CapabilitiesAreHonest: the capability line and the routes say
// not configured, configured but not verified, and enabled, as each is.
func TestX402CapabilitiesAreHonest(t *testing.T) {
	dialects(t, func(t *testing.T, pg bool) {
		t.Run("not configured", func(t *testing.T) {
			s := platformtest.New(t, platformtest.Options{Postgres: pg, Chain: true})
			f := capability(t, s, s.Boot.TestKey)
			if f.Configured || f.Verified || f.Enabled || f.Reason == nil || *f.Reason != "not_configured" {
				t.Fatalf("capability %+v", f)
			}
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/x402/requirements/sound-analysis", Key: s.Boot.TestKey})
			if r.Status != http.StatusServiceUnavailable || r.Code() != "SERVICE_UNAVAILABLE" {
				t.Fatalf("requirements: %d %s", r.Status, r.Body)
			}
			var list api.X402ResourcesView
			s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/x402/resources", Key: s.Boot.TestKey}).Data(t, &list)
			if list.Configured || len(list.Resources) != 0 || list.Reason == nil || *list.Reason != "not_configured" {
				t.Fatalf("resources %+v", list)
			}
		})
		t.Run("configured, not verified", func(t *testing.T) {
			fx := newX402(t, pg, x402Setup{unfunded: true})
			f := capability(t, fx.s, fx.s.Boot.TestKey)
			if !f.Configured || f.Verified || f.Enabled || f.Reason == nil || *f.Reason != x402.CheckFeePayerUnfunded {
				t.Fatalf("capability %+v", f)
			}
			r, _, _ := fx.requirements(t, fx.s.Boot.TestKey)
			if r.Status != http.StatusServiceUnavailable || r.Code() != "PROVIDER_UNAVAILABLE" {
				t.Fatalf("requirements: %d %s", r.Status, r.Body)
			}
			if r := fx.verify(fx.s.Boot.TestKey, "e30="); r.Status != http.StatusServiceUnavailable {
				t.Fatalf("verify: %d %s", r.Status, r.Body)
			}
		})
		t.Run("enabled", func(t *testing.T) {
			fx := newX402(t, pg, x402Setup{})
			f := capability(t, fx.s, fx.s.Boot.TestKey)
			if !f.Configured || !f.Verified || !f.Enabled || f.Reason != nil {
				t.Fatalf("capability %+v", f)
			}
			// Anonymous callers see live, which has no cluster.
			if f := capability(t, fx.s, ""); f.Configured || f.Enabled {
				t.Fatalf("live capability %+v", f)
			}
		})
	})
}
