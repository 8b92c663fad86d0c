package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/web3/zk/zktest"
)

// zkTestKey is the test circuit's committed verifying key.
func zkTestKey(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../web3/zk/testdata/square_vk.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// zkConfig pins the test circuit as square@1 in test mode.
func zkConfig(t testing.TB, enabled bool) platform.ZKConfig {
	return platform.ZKConfig{Test: zk.Environment{Enabled: enabled, Circuits: []zk.Circuit{{ID: "square", Version: "1",
		VerifyingKey: zkTestKey(t), BindingInput: zktest.SquareBindingInput}}}}
}

// zkBody is a zk-verify body for p and its public signals.
func zkBody(p zk.Proof, public []string) map[string]any {
	return map[string]any{"circuitId": "square", "circuitVersion": "1", "proof": p.JSON(), "publicSignals": public}
}

// zkVerify posts a proof for intent id as the session cookie's user.
func zkVerify(s *platformtest.System, cookie, id string, body any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + id + "/zk-verify", Cookie: cookie,
		Header: testMode, Body: body})
}

// boundProof proves x·x = 9 with the binding of the intent as p sees it:
// the caller's tenant and user, the intent's id and economics hash.
func boundProof(t *testing.T, s *platformtest.System, p buyer, iv api.TransactionIntentView) (zk.Proof, []string) {
	t.Helper()
	ac := authContextIn(t, s, p.cookie)
	b := zk.Binding(ac.Tenant.ID, ac.User.ID, iv.ID, iv.EconomicsHash)
	pk, _ := zktest.SquareKeys()
	w := zktest.SquareWitness(3, b)
	proof, err := zktest.Prove(pk, w, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return proof, zk.Signals(w[1:3])
}

// zkDetails is the error's details.
func zkDetails(t *testing.T, r *platformtest.Response) map[string]any {
	t.Helper()
	e, _ := r.JSON()["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

// featureLine is one feature of a capabilities answer.
func featureLine(t *testing.T, s *platformtest.System, cookie, feature string) api.Web3FeatureView {
	t.Helper()
	h := map[string]string{}
	if cookie != "" {
		h = testMode
	}
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/web3/capabilities", Cookie: cookie, Header: h})
	if r.Status != http.StatusOK {
		t.Fatalf("capabilities: %d %s", r.Status, r.Body)
	}
	var caps api.Web3CapabilitiesView
	r.Data(t, &caps)
	for _, f := range caps.Features {
		if f.Feature == feature {
			return f
		}
	}
	t.Fatalf("capabilities lack %s: %+v", feature, caps)
	return api.Web3FeatureView{}
}

// TestZKVerify runs proof verification on intents of the loopback
// cluster: a proof bound to the caller's intent verifies (201) and is
// recorded with its event; the same proof again and a re-randomized one
// answer that record (200) and record nothing; a corrupted proof, a
// malformed one and one off the curve are refused; the proof presented
// for the same user's other intent or by another user for their own is
// STATEMENT_MISMATCH, and another user's intent is 404; the intent and the
// credits are unchanged throughout; capabilities report the feature
// enabled in test and not configured in live.
func TestZKVerify(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, ZK: zkConfig(t, true), Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			ctx := context.Background()
			p := fundedBuyer(t, s, "prover@example.test", 100_000_000_000)
			var credits int64
			waitFor(t, "the plan grant", func() bool { credits = workspaceCredits(t, s, p); return credits > 0 })
			newIntent := func(who buyer, key string) api.TransactionIntentView {
				r := createIntent(s, who, key, map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": s.Token.Mint.String(),
					"wallet": who.wallet.addr})
				if r.Status != http.StatusCreated {
					t.Fatalf("intent: %d %s", r.Status, r.Body)
				}
				var iv api.TransactionIntentView
				r.Data(t, &iv)
				return iv
			}
			iv := newIntent(p, "zk-intent-1")
			before := intentGet(t, s, p, iv.ID)
			stored, err := s.DB.Read().Intent(ctx, iv.ID)
			if err != nil {
				t.Fatal(err)
			}

			proof, public := boundProof(t, s, p, iv)
			r := zkVerify(s, p.cookie, iv.ID, zkBody(proof, public))
			if r.Status != http.StatusCreated {
				t.Fatalf("verify: %d %s", r.Status, r.Body)
			}
			var v api.ZKVerificationView
			r.Data(t, &v)
			if v.IntentID != iv.ID || v.CircuitID != "square" || v.CircuitVersion != "1" || !v.Verified || v.Binding != public[1] ||
				!cmp.Equal(v.PublicSignals, public) || v.ProofHash != zk.ProofHash(proof) || v.Object != "zk_verification" {
				t.Fatalf("verification = %+v", v)
			}
			ac := authContextIn(t, s, p.cookie)
			rec, err := s.DB.Read().ZKVerificationByStatement(ctx, ac.Tenant.ID, access.Test, v.StatementHash)
			if err != nil || rec.ID != v.ID || rec.UserID != ac.User.ID || rec.IntentID != iv.ID {
				t.Fatalf("stored verification: %+v, %v", rec, err)
			}
			events, err := s.DB.Read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range events {
				if e.Type == zk.EventVerified && e.AggregateID == v.ID {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d zk_verification.verified events for %s, want 1", n, v.ID)
			}

			// The same proof again, and a re-randomized one: the first record.
			_, vk := zktest.SquareKeys()
			rerand, err := zktest.Rerandomize(vk, proof, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			for name, again := range map[string]zk.Proof{"same proof": proof, "re-randomized": rerand} {
				r := zkVerify(s, p.cookie, iv.ID, zkBody(again, public))
				if r.Status != http.StatusOK {
					t.Fatalf("%s: %d %s", name, r.Status, r.Body)
				}
				var got api.ZKVerificationView
				r.Data(t, &got)
				if got.ID != v.ID || got.ProofHash != v.ProofHash || !got.CreatedAt.Equal(v.CreatedAt) {
					t.Fatalf("%s answered %+v, want the first verification %+v", name, got, v)
				}
			}

			// Refused proofs.
			offCurve := proof.JSON()
			y, _ := new(big.Int).SetString(offCurve.PiA[1], 10)
			offCurve.PiA[1] = y.Add(y, big.NewInt(1)).String()
			for _, c := range []struct {
				name, code, field, reason string
				body                      any
			}{
				{"corrupted", "VERIFICATION_FAILED", "", zk.ReasonPairingFailed, zkBody(zktest.Corrupt(rerand), public)},
				{"off the curve", "INVALID_INPUT", "proof.pi_a", zk.ReasonNotOnCurve,
					map[string]any{"circuitId": "square", "circuitVersion": "1", "proof": offCurve, "publicSignals": public}},
				{"a number for a coordinate", "INVALID_INPUT", "", "", json.RawMessage(`{"circuitId":"square","circuitVersion":"1",` +
					`"proof":{"pi_a":[1,2,1],"pi_b":[],"pi_c":[],"protocol":"groth16","curve":"bn128"},"publicSignals":[]}`)},
				{"malformed JSON", "INVALID_INPUT", "", "", `{"circuitId": "square",`},
				{"unknown circuit version", "INVALID_INPUT", "circuitVersion", zk.ReasonUnknownCircuit,
					map[string]any{"circuitId": "square", "circuitVersion": "2", "proof": proof.JSON(), "publicSignals": public}},
				{"a public signal too many", "INVALID_INPUT", "publicSignals", zk.ReasonCount, zkBody(proof, append(public[:2:2], "1"))},
			} {
				r := zkVerify(s, p.cookie, iv.ID, c.body)
				if r.Code() != c.code {
					t.Fatalf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.code)
				}
				d := zkDetails(t, r)
				if c.field != "" && d["field"] != c.field || c.reason != "" && d["reason"] != c.reason {
					t.Errorf("%s: details %v, want field %q reason %q", c.name, d, c.field, c.reason)
				}
			}

			// The proof is bound to this user and intent: not the user's
			// other intent, not another user's own intent.
			other := newIntent(p, "zk-intent-2")
			r = zkVerify(s, p.cookie, other.ID, zkBody(proof, public))
			if r.Code() != "STATEMENT_MISMATCH" || zkDetails(t, r)["field"] != "publicSignals[1]" {
				t.Fatalf("the proof for another intent: %d %s", r.Status, r.Body)
			}
			q := fundedBuyer(t, s, "other-prover@example.test", 100_000_000_000)
			theirs := newIntent(q, "zk-intent-3")
			r = zkVerify(s, q.cookie, theirs.ID, zkBody(proof, public))
			if r.Code() != "STATEMENT_MISMATCH" {
				t.Fatalf("the proof for another user's intent: %d %s", r.Status, r.Body)
			}
			if r := zkVerify(s, q.cookie, iv.ID, zkBody(proof, public)); r.Code() != "NOT_FOUND" {
				t.Fatalf("another user verifying on the first user's intent: %d %s", r.Status, r.Body)
			}
			// Their own bound proof verifies: a record of their own.
			qp, qpub := boundProof(t, s, q, theirs)
			if r := zkVerify(s, q.cookie, theirs.ID, zkBody(qp, qpub)); r.Status != http.StatusCreated {
				t.Fatalf("the other user's own proof: %d %s", r.Status, r.Body)
			}

			// Nothing of the intent moved, and no credit was granted.
			after := intentGet(t, s, p, iv.ID)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the intent changed (-before +after):\n%s", diff)
			}
			now, err := s.DB.Read().Intent(ctx, iv.ID)
			if err != nil || now.Version != stored.Version || now.State != stored.State || !now.UpdatedAt.Equal(stored.UpdatedAt) {
				t.Errorf("stored intent moved: version %d -> %d, state %s -> %s (%v)", stored.Version, now.Version, stored.State, now.State, err)
			}
			if got := workspaceCredits(t, s, p); got != credits {
				t.Errorf("credits %d -> %d", credits, got)
			}

			// Capabilities: enabled in test, not configured in live.
			if f := featureLine(t, s, p.cookie, "zk_verification"); !f.Enabled || !f.Configured || f.Verified || f.Reason != nil {
				t.Errorf("test zk_verification = %+v", f)
			}
			if f := featureLine(t, s, "", "zk_verification"); f.Enabled || f.Configured || f.Reason == nil ||
				*f.Reason != zk.ReasonNotConfigured {
				t.Errorf("live zk_verification = %+v", f)
			}
		})
}

// TestZKVerifyUnavailable: with no verifying key pinned, or pinned but
// not enabled, the route answers 503 PROVIDER_UNAVAILABLE naming why, and
// capabilities report the same.
func TestZKVerifyUnavailable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		cfg        platform.ZKConfig
		reason     string
		configured bool
	}{
		{"no key", platform.ZKConfig{}, zk.ReasonNotConfigured, false},
		{"not enabled", zkConfig(t, false), zk.ReasonNotEnabled, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			platformtest.Dialects(t, platformtest.Options{ZK: c.cfg, Jobs: platform.JobsConfig{Disabled: true}},
				func(t *testing.T, s *platformtest.System) {
					p := testSession(t, s, "prover@example.test")
					pk, _ := zktest.SquareKeys()
					w := zktest.SquareWitness(3, zk.Binding("ten", "usr", "txi", "e"))
					proof, err := zktest.Prove(pk, w, rand.Reader)
					if err != nil {
						t.Fatal(err)
					}
					r := zkVerify(s, p.cookie, "txi_0123456789abcdef0123456789abcdef", zkBody(proof, zk.Signals(w[1:3])))
					if r.Code() != "PROVIDER_UNAVAILABLE" || r.Status != http.StatusServiceUnavailable || zkDetails(t, r)["reason"] != c.reason {
						t.Fatalf("verify: %d %s, want 503 PROVIDER_UNAVAILABLE %s", r.Status, r.Body, c.reason)
					}
					f := featureLine(t, s, p.cookie, "zk_verification")
					if f.Enabled || f.Configured != c.configured || f.Verified || f.Reason == nil || *f.Reason != c.reason {
						t.Errorf("zk_verification = %+v", f)
					}
				})
		})
	}
}
