package zk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/web3/zk/zktest"
)

// fakeIntents serves intents as chain/intent.Service.Get does: NOT_FOUND
// unless the principal is the intent's actor. reads counts the calls.
type fakeIntents struct {
	byID  map[string]intent.Intent
	reads int
}

func (f *fakeIntents) Get(_ context.Context, p *access.Principal, id string) (intent.Intent, error) {
	f.reads++
	it, ok := f.byID[id]
	if !ok || it.Actor != (intent.Actor{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, UserID: p.UserID, Environment: p.Environment}) {
		return intent.Intent{}, fault.E("fake.Get", fault.NotFound, "")
	}
	return it, nil
}

// fakeStore is zk.Store in memory.
type fakeStore struct {
	rows   []zk.Verification
	events []outbox.Event
	audits []account.AuditEvent
	ids    int
}

func (s *fakeStore) Now() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) }
func (s *fakeStore) NewID(prefix string) string {
	s.ids++
	return fmt.Sprintf("%s%d", prefix, s.ids)
}
func (s *fakeStore) AuditInsert(_ context.Context, e account.AuditEvent) error {
	s.audits = append(s.audits, e)
	return nil
}
func (s *fakeStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	s.events = append(s.events, e)
	return e, nil
}
func (s *fakeStore) ZKVerificationInsert(_ context.Context, v zk.Verification) error {
	for _, r := range s.rows {
		if r.ID == v.ID || r.ProofHash == v.ProofHash ||
			r.Scope.TenantID == v.Scope.TenantID && r.Scope.Environment == v.Scope.Environment && r.StatementHash == v.StatementHash {
			return fault.E("fake.Insert", fault.Conflict, "")
		}
	}
	s.rows = append(s.rows, v)
	return nil
}
func (s *fakeStore) ZKVerificationByStatement(_ context.Context, tenant string, env access.Environment, h string) (zk.Verification, error) {
	for _, r := range s.rows {
		if r.Scope.TenantID == tenant && r.Scope.Environment == env && r.StatementHash == h {
			return r, nil
		}
	}
	return zk.Verification{}, fault.E("fake.ByStatement", fault.NotFound, "")
}

// sampleIntent is the intent the committed proofs are bound to; others
// are the same user's other intent, another user's intent and another
// tenant's, each with its own economics.
func intents() *fakeIntents {
	mk := func(tenant, user, id, econ string) intent.Intent {
		return intent.Intent{ID: id, Actor: intent.Actor{TenantID: tenant, WorkspaceID: "ws_" + tenant, UserID: user, Environment: access.Test},
			EconomicsHash: econ}
	}
	f := &fakeIntents{byID: map[string]intent.Intent{}}
	for _, it := range []intent.Intent{
		mk(zktest.SampleTenant, zktest.SampleUser, zktest.SampleIntent, zktest.SampleEconomicsHash()),
		mk(zktest.SampleTenant, zktest.SampleUser, "txi_other_intent", zktest.SampleEconomicsHash()),
		mk(zktest.SampleTenant, "usr_other", "txi_other_user", zktest.SampleEconomicsHash()),
		mk("ten_other", zktest.SampleUser, "txi_other_tenant", zktest.SampleEconomicsHash()),
	} {
		f.byID[it.ID] = it
	}
	return f
}

// principalOf is the session principal of an intent's actor.
func principalOf(f *fakeIntents, id string) *access.Principal {
	a := f.byID[id].Actor
	return &access.Principal{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, UserID: a.UserID, Environment: a.Environment,
		Kind: access.CredentialSession}
}

// newService pins the committed key as square@1 in test, enabled.
func newService(t *testing.T, f *fakeIntents) *zk.Service {
	t.Helper()
	svc, err := zk.New(zk.Config{Intents: f, Environments: map[access.Environment]zk.Environment{access.Test: {Enabled: true,
		Circuits: []zk.Circuit{{ID: "square", Version: "1", VerifyingKey: readTestdata(t, "square_vk.json"),
			BindingInput: zktest.SquareBindingInput}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// request is the committed public signals with the proof file name.
func request(t *testing.T, proof string) zk.Request {
	return zk.Request{CircuitID: "square", CircuitVersion: "1", Proof: testProofJSON(t, proof), PublicSignals: testPublic(t)}
}

// wantCode fails unless err has code and, when given, details.reason and
// details.field.
func wantCode(t *testing.T, err error, code fault.Code, reason, field string) {
	t.Helper()
	got, _, details := fault.Public(err)
	if got != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	if reason != "" && details["reason"] != reason {
		t.Errorf("details.reason = %v, want %s (%v)", details["reason"], reason, err)
	}
	if field != "" && details["field"] != field {
		t.Errorf("details.field = %v, want %s (%v)", details["field"], field, err)
	}
}

// TestVerifyBoundProof: the committed proof verifies for its own intent
// and is recorded once, with its event and audit record; a re-randomized
// proof of the same statement verifies and answers the first record,
// recording nothing; the statement hash is the same, the proof hash not.
func TestVerifyBoundProof(t *testing.T) {
	ctx := context.Background()
	f := intents()
	svc := newService(t, f)
	st := &fakeStore{}
	p := principalOf(f, zktest.SampleIntent)
	c, err := svc.Check(ctx, p, zktest.SampleIntent, request(t, "square_proof.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := svc.Existing(ctx, st, c); ok || err != nil {
		t.Fatalf("existing before any record: %v, %v", ok, err)
	}
	v, err := svc.Record(ctx, st, p, c, "req_1")
	if err != nil {
		t.Fatal(err)
	}
	if v.IntentID != zktest.SampleIntent || v.UserID != zktest.SampleUser || v.Scope.TenantID != zktest.SampleTenant ||
		v.CircuitID != "square" || v.CircuitVersion != "1" || !slices.Equal(v.PublicSignals, testPublic(t)) ||
		v.Binding != testPublic(t)[1] || !strings.HasPrefix(v.ID, zk.IDPrefix) || v.CreatedAt.IsZero() {
		t.Fatalf("verification = %+v", v)
	}
	if len(st.rows) != 1 || len(st.events) != 1 || st.events[0].Type != zk.EventVerified || st.events[0].AggregateID != v.ID ||
		len(st.audits) != 1 || st.audits[0].Action != zk.ActionVerified || st.audits[0].TargetID != v.ID || st.audits[0].RequestID != "req_1" {
		t.Fatalf("rows %d, events %+v, audits %+v", len(st.rows), st.events, st.audits)
	}

	again, err := svc.Check(ctx, p, zktest.SampleIntent, request(t, "square_proof_rerandomized.json"))
	if err != nil {
		t.Fatalf("re-randomized proof: %v", err)
	}
	prior, ok, err := svc.Existing(ctx, st, again)
	if err != nil || !ok || prior.ID != v.ID || prior.ProofHash != v.ProofHash {
		t.Fatalf("existing for the re-randomized proof: %+v, %v, %v; want %s", prior, ok, err, v.ID)
	}
	// A record attempt anyway (two requests racing) is a conflict, not a
	// second row.
	if _, err := svc.Record(ctx, st, p, again, "req_2"); !fault.Is(err, fault.Conflict) {
		t.Fatalf("second record of a statement: %v, want CONFLICT", err)
	}
	if len(st.rows) != 1 {
		t.Fatalf("%d rows, want 1", len(st.rows))
	}
}

// TestStatementBoundToTenantUserIntent: the sample proof presented for
// the same user's other intent, for another user's intent or for another
// tenant's (each by its own user) is STATEMENT_MISMATCH naming the
// binding input; another user's intent asked by the sample user is
// NOT_FOUND.
func TestStatementBoundToTenantUserIntent(t *testing.T) {
	ctx := context.Background()
	f := intents()
	svc := newService(t, f)
	for _, id := range []string{"txi_other_intent", "txi_other_user", "txi_other_tenant"} {
		t.Run(id, func(t *testing.T) {
			_, err := svc.Check(ctx, principalOf(f, id), id, request(t, "square_proof.json"))
			wantCode(t, err, fault.StatementMismatch, "", "publicSignals[1]")
		})
	}
	_, err := svc.Check(ctx, principalOf(f, zktest.SampleIntent), "txi_other_user", request(t, "square_proof.json"))
	wantCode(t, err, fault.NotFound, "", "")
}

// TestCorruptedProof: a well-formed proof that fails the pairing check is
// VERIFICATION_FAILED and records nothing.
func TestCorruptedProof(t *testing.T) {
	f := intents()
	svc := newService(t, f)
	_, err := svc.Check(context.Background(), principalOf(f, zktest.SampleIntent), zktest.SampleIntent,
		request(t, "square_proof_corrupted.json"))
	wantCode(t, err, fault.VerificationFailed, zk.ReasonPairingFailed, "")
}

// offSubgroupG2 is a point on the twist outside the prime-order
// subgroup: x = (k, 0) for the first k where x³ + b' is a square.
func offSubgroupG2(t *testing.T) bn254.G2Affine {
	t.Helper()
	_, _, _, g := bn254.Generators()
	b := g.Y // b' = y² − x³ of the generator
	var x3 bn254.G2Affine
	b.Square(&g.Y)
	x3.X.Square(&g.X).Mul(&x3.X, &g.X)
	b.Sub(&b, &x3.X)
	for k := uint64(1); k < 100; k++ {
		var p bn254.G2Affine
		p.X.A0.SetUint64(k)
		rhs := p.X
		rhs.Square(&p.X).Mul(&rhs, &p.X).Add(&rhs, &b)
		if rhs.Legendre() != 1 {
			continue
		}
		p.Y.Sqrt(&rhs)
		if p.IsOnCurve() && !p.IsInSubGroup() {
			return p
		}
	}
	t.Fatal("no point found")
	return bn254.G2Affine{}
}

// TestMalformedProofs: every malformed value is INVALID_INPUT naming its
// path and reason, before any pairing.
func TestMalformedProofs(t *testing.T) {
	f := intents()
	svc := newService(t, f)
	p := principalOf(f, zktest.SampleIntent)
	valid := request(t, "square_proof.json")
	pPlus := func(s string, d int64) string {
		n, _ := new(big.Int).SetString(s, 10)
		return n.Add(n, big.NewInt(d)).String()
	}
	off := offSubgroupG2(t)
	cases := []struct {
		name, field, reason string
		edit                func(r *zk.Request)
	}{
		{"A off the curve", "proof.pi_a", zk.ReasonNotOnCurve, func(r *zk.Request) { r.Proof.PiA[1] = pPlus(r.Proof.PiA[1], 1) }},
		{"C off the curve", "proof.pi_c", zk.ReasonNotOnCurve, func(r *zk.Request) { r.Proof.PiC[0] = pPlus(r.Proof.PiC[0], 1) }},
		{"B off the curve", "proof.pi_b", zk.ReasonNotOnCurve, func(r *zk.Request) { r.Proof.PiB[1][0] = pPlus(r.Proof.PiB[1][0], 1) }},
		{"B outside the subgroup", "proof.pi_b", zk.ReasonNotInSubgroup, func(r *zk.Request) {
			r.Proof.PiB = [][]string{{off.X.A0.Text(10), off.X.A1.Text(10)}, {off.Y.A0.Text(10), off.Y.A1.Text(10)}, {"1", "0"}}
		}},
		{"A at infinity", "proof.pi_a", zk.ReasonInfinity, func(r *zk.Request) { r.Proof.PiA = []string{"0", "0", "1"} }},
		{"A in snarkjs's infinity form", "proof.pi_a", zk.ReasonShape, func(r *zk.Request) { r.Proof.PiA = []string{"0", "1", "0"} }},
		{"coordinate of p", "proof.pi_a[0]", zk.ReasonOutOfRange, func(r *zk.Request) { r.Proof.PiA[0] = fp.Modulus().String() }},
		{"hex coordinate", "proof.pi_a[0]", zk.ReasonNotDecimal, func(r *zk.Request) { r.Proof.PiA[0] = "0x1" }},
		{"leading zero", "proof.pi_c[1]", zk.ReasonNotDecimal, func(r *zk.Request) { r.Proof.PiC[1] = "0" + r.Proof.PiC[1] }},
		{"negative", "proof.pi_b[0][1]", zk.ReasonNotDecimal, func(r *zk.Request) { r.Proof.PiB[0][1] = "-1" }},
		{"short A", "proof.pi_a", zk.ReasonShape, func(r *zk.Request) { r.Proof.PiA = r.Proof.PiA[:2] }},
		{"projective B", "proof.pi_b", zk.ReasonShape, func(r *zk.Request) { r.Proof.PiB[2] = []string{"2", "0"} }},
		{"plonk", "proof.protocol", zk.ReasonProtocol, func(r *zk.Request) { r.Proof.Protocol = "plonk" }},
		{"bls12-381", "proof.curve", zk.ReasonProtocol, func(r *zk.Request) { r.Proof.Curve = "bls12381" }},
		{"signal of r", "publicSignals[1]", zk.ReasonOutOfRange, func(r *zk.Request) {
			r.PublicSignals[1] = "21888242871839275222246405745257275088548364400416034343698204186575808495617"
		}},
		{"signal not decimal", "publicSignals[0]", zk.ReasonNotDecimal, func(r *zk.Request) { r.PublicSignals[0] = "9.0" }},
		{"one signal", "publicSignals", zk.ReasonCount, func(r *zk.Request) { r.PublicSignals = r.PublicSignals[:1] }},
		{"three signals", "publicSignals", zk.ReasonCount, func(r *zk.Request) { r.PublicSignals = append(r.PublicSignals, "1") }},
		{"unknown circuit", "circuitId", zk.ReasonUnknownCircuit, func(r *zk.Request) { r.CircuitID = "cube" }},
		{"unknown version", "circuitVersion", zk.ReasonUnknownCircuit, func(r *zk.Request) { r.CircuitVersion = "2" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := valid
			r.Proof.PiA, r.Proof.PiC = slices.Clone(valid.Proof.PiA), slices.Clone(valid.Proof.PiC)
			r.Proof.PiB = [][]string{slices.Clone(valid.Proof.PiB[0]), slices.Clone(valid.Proof.PiB[1]), slices.Clone(valid.Proof.PiB[2])}
			r.PublicSignals = slices.Clone(valid.PublicSignals)
			c.edit(&r)
			_, err := svc.Check(context.Background(), p, zktest.SampleIntent, r)
			wantCode(t, err, fault.InvalidInput, c.reason, c.field)
		})
	}
}

// TestUnavailable: without a pinned circuit, or with circuits but not
// enabled, Check is PROVIDER_UNAVAILABLE naming why, before the intent is
// read; Availability says the same.
func TestUnavailable(t *testing.T) {
	key := readTestdata(t, "square_vk.json")
	circuits := []zk.Circuit{{ID: "square", Version: "1", VerifyingKey: key, BindingInput: 1}}
	for _, c := range []struct {
		name   string
		envs   map[access.Environment]zk.Environment
		reason string
		want   zk.Availability
	}{
		{"nothing configured", nil, zk.ReasonNotConfigured, zk.Availability{}},
		{"enabled without a circuit", map[access.Environment]zk.Environment{access.Test: {Enabled: true}}, zk.ReasonNotConfigured, zk.Availability{}},
		{"only live", map[access.Environment]zk.Environment{access.Live: {Enabled: true, Circuits: circuits}}, zk.ReasonNotConfigured, zk.Availability{}},
		{"pinned, not enabled", map[access.Environment]zk.Environment{access.Test: {Circuits: circuits}}, zk.ReasonNotEnabled,
			zk.Availability{Configured: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := intents()
			svc, err := zk.New(zk.Config{Intents: f, Environments: c.envs})
			if err != nil {
				t.Fatal(err)
			}
			if got := svc.Availability(access.Test); got != c.want {
				t.Errorf("availability = %+v, want %+v", got, c.want)
			}
			_, err = svc.Check(context.Background(), principalOf(f, zktest.SampleIntent), zktest.SampleIntent, request(t, "square_proof.json"))
			wantCode(t, err, fault.ProviderUnavailable, c.reason, "")
			if f.reads != 0 {
				t.Errorf("the intent was read %d times", f.reads)
			}
		})
	}
}

// TestPinnedKeysAreChecked: New refuses a bad name, a version pinned
// twice, a key that is not a snarkjs Groth16 key or holds a bad point, and
// a binding input outside the key's public inputs.
func TestPinnedKeysAreChecked(t *testing.T) {
	key := string(readTestdata(t, "square_vk.json"))
	vk := testKey(t)
	bad := vk.JSON()
	bad.IC[2] = []string{"0", "0", "1"} // an unbound public input
	badKey, err := json.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	circuit := func(key []byte, binding int) zk.Circuit {
		return zk.Circuit{ID: "square", Version: "1", VerifyingKey: key, BindingInput: binding}
	}
	edited := func(old, repl string) []byte { return []byte(strings.Replace(key, old, repl, 1)) }
	cases := []struct {
		name     string
		circuits []zk.Circuit
		want     string
	}{
		{"bad id", []zk.Circuit{{ID: "Square!", Version: "1", VerifyingKey: []byte(key), BindingInput: 1}}, "ids and versions"},
		{"pinned twice", []zk.Circuit{circuit([]byte(key), 1), circuit([]byte(key), 1)}, "pinned twice"},
		{"not JSON", []zk.Circuit{circuit([]byte("{"), 1)}, "not a snarkjs verification key"},
		{"unknown field", []zk.Circuit{circuit(edited(`"protocol"`, `"extra": 1, "protocol"`), 1)}, "unknown field"},
		{"plonk", []zk.Circuit{circuit(edited("groth16", "plonk"), 1)}, "protocol must be"},
		{"nPublic wrong", []zk.Circuit{circuit(edited(`"nPublic": 2`, `"nPublic": 3`), 1)}, "nPublic is 3"},
		{"IC at infinity", []zk.Circuit{circuit(badKey, 1)}, "IC[2]: the point at infinity"},
		{"binding outside the inputs", []zk.Circuit{circuit([]byte(key), 2)}, "binding input 2"},
	}
	for _, c := range cases {
		_, err := zk.New(zk.Config{Intents: intents(), Environments: map[access.Environment]zk.Environment{access.Test: {Enabled: true,
			Circuits: c.circuits}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
