package zk_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/creatormusic/platform/web3/zk"
	"github.com/creatormusic/platform/web3/zk/zktest"
)

// readTestdata reads a file of testdata.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testKey is the committed verifying key, parsed.
func testKey(t testing.TB) zk.VerifyingKey {
	t.Helper()
	vk, err := zk.ParseVerifyingKey(readTestdata(t, "square_vk.json"))
	if err != nil {
		t.Fatal(err)
	}
	return vk
}

// testProofJSON is a committed proof file.
func testProofJSON(t testing.TB, name string) zk.ProofJSON {
	t.Helper()
	var j zk.ProofJSON
	if err := json.Unmarshal(readTestdata(t, name), &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// testPublic is the committed public signals.
func testPublic(t testing.TB) []string {
	t.Helper()
	var s []string
	if err := json.Unmarshal(readTestdata(t, "square_public.json"), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTestdataIsGenerated: the committed files are exactly what the
// documented generator writes, so the README's command remakes them.
func TestTestdataIsGenerated(t *testing.T) {
	files, err := zktest.SquareTestdata()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var committed []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".json" {
			committed = append(committed, e.Name())
		}
	}
	if got, want := committed, slices.Sorted(maps.Keys(files)); !slices.Equal(got, want) {
		t.Fatalf("testdata holds %v, the generator writes %v", got, want)
	}
	for name, b := range files {
		if string(readTestdata(t, name)) != string(b) {
			t.Errorf("%s differs from the generator's output; run go run ./web3/zk/internal/gen -out web3/zk/testdata", name)
		}
	}
}

// TestCommittedProofs: the committed proof verifies its statement, the
// re-randomized one too (other bytes, other proof hash, same statement),
// and the corrupted one fails the pairing check; the valid proof fails
// for any other public input.
func TestCommittedProofs(t *testing.T) {
	vk := testKey(t)
	public, err := zk.ParsePublicSignals(testPublic(t))
	if err != nil {
		t.Fatal(err)
	}
	want := zk.Binding(zktest.SampleTenant, zktest.SampleUser, zktest.SampleIntent, zktest.SampleEconomicsHash())
	if !public[zktest.SquareBindingInput].Equal(&want) || public[0].Text(10) != "9" {
		t.Fatalf("public signals %v are not [9, binding of the sample intent]", zk.Signals(public))
	}
	proofs := map[string]zk.Proof{}
	for _, name := range []string{"square_proof.json", "square_proof_rerandomized.json", "square_proof_corrupted.json"} {
		p, err := zk.ParseProof(testProofJSON(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		proofs[name] = p
	}
	if err := vk.Verify(proofs["square_proof.json"], public); err != nil {
		t.Fatalf("valid proof: %v", err)
	}
	if err := vk.Verify(proofs["square_proof_rerandomized.json"], public); err != nil {
		t.Fatalf("re-randomized proof: %v", err)
	}
	if zk.ProofHash(proofs["square_proof.json"]) == zk.ProofHash(proofs["square_proof_rerandomized.json"]) {
		t.Fatal("a re-randomized proof hashes like the original")
	}
	if err := vk.Verify(proofs["square_proof_corrupted.json"], public); !errors.Is(err, zk.ErrProofInvalid) {
		t.Fatalf("corrupted proof: %v, want ErrProofInvalid", err)
	}
	for i := range public {
		other := slices.Clone(public)
		other[i].Add(&other[i], ptr(fr.One()))
		if err := vk.Verify(proofs["square_proof.json"], other); !errors.Is(err, zk.ErrProofInvalid) {
			t.Errorf("public input %d changed: %v, want ErrProofInvalid", i, err)
		}
	}
	if err := vk.Verify(proofs["square_proof.json"], public[:1]); err == nil || errors.Is(err, zk.ErrProofInvalid) {
		t.Errorf("one public input for a key of two: %v", err)
	}
}

// TestProverRefusesAFalseStatement: the test prover cannot prove x·x = y
// for a y that is not x·x, so its proofs are real ones.
func TestProverRefusesAFalseStatement(t *testing.T) {
	pk, _ := zktest.SquareKeys()
	w := zktest.SquareWitness(3, fr.One())
	w[1].SetUint64(10)
	if _, err := zktest.Prove(pk, w, zktest.NewStream("x")); err == nil {
		t.Fatal("proved 3·3 = 10")
	}
}

// TestSnarkjsG2Order: snarkjs writes an Fp2 element as [c0, c1], c0 the
// real part: BN254's G2 generator, as every snarkjs key with the
// generator as gamma shows it, round-trips through our encoding.
func TestSnarkjsG2Order(t *testing.T) {
	_, _, _, g2 := bn254.Generators()
	vk := zk.VerifyingKey{Gamma: g2}
	got := vk.JSON().Gamma2
	want := [][]string{
		{"10857046999023057135944570762232829481370756359578518086990519993285655852781",
			"11559732032986387107991004021392285783925812861821192530917403151452391805634"},
		{"8495653923123431417604973247489272438418190587263600148770280649306958101930",
			"4082367875863433681332203403145435568316851327593401208105741076214120093531"},
		{"1", "0"},
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("generator = %v, want %v", got, want)
		}
	}
}

// TestBinding: the binding is SHA-256 over the domain tag and the four
// fields, each after a 0x00, reduced modulo r; a change of any field
// changes it.
func TestBinding(t *testing.T) {
	base := zk.Binding("ten_1", "usr_1", "txi_1", "ab")
	for _, other := range []fr.Element{zk.Binding("ten_2", "usr_1", "txi_1", "ab"), zk.Binding("ten_1", "usr_2", "txi_1", "ab"),
		zk.Binding("ten_1", "usr_1", "txi_2", "ab"), zk.Binding("ten_1", "usr_1", "txi_1", "ac"),
		zk.Binding("ten_1usr_1", "", "txi_1", "ab")} {
		if other.Equal(&base) {
			t.Errorf("binding %s did not change", other.Text(10))
		}
	}
	// A pinned vector, so the documented formula is what clients compute.
	if got := base.Text(10); got != bindingVector {
		t.Errorf("binding = %s, want %s", got, bindingVector)
	}
}

func ptr(e fr.Element) *fr.Element { return &e }

// bindingVector is Binding("ten_1", "usr_1", "txi_1", "ab"), computed
// apart from this package: int(sha256(b"platform/zk/v1\0ten_1\0usr_1\0txi_1\0ab"))
// modulo r.
const bindingVector = "4770935381646449108294223981561817503826754568800072288791022725273109518184"
