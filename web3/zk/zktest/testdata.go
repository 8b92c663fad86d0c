package zktest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/creatormusic/platform/web3/zk"
)

// The statement the committed proofs of web3/zk/testdata are bound to: a
// fixed tenant, user and intent with a fixed economics hash.
const (
	SampleTenant = "ten_zktest"
	SampleUser   = "usr_zktest"
	SampleIntent = "txi_0123456789abcdef0123456789abcdef"
)

// SampleEconomicsHash is the sample intent's economics hash: the hex
// SHA-256 of "zktest economics".
func SampleEconomicsHash() string {
	sum := sha256.Sum256([]byte("zktest economics"))
	return hex.EncodeToString(sum[:])
}

// SquareSeed is the seed of the Square circuit's setup (Stream); its
// toxic waste is public, which is why its key is for tests alone.
const SquareSeed = "platform/zk/testdata/square/v1"

// SquareKeys runs Square's deterministic setup.
func SquareKeys() (*ProvingKey, zk.VerifyingKey) {
	pk, vk, err := Setup(Square(), NewStream(SquareSeed))
	if err != nil {
		panic(err) // the seed is fixed: a failure is a bug, found by the tests
	}
	return pk, vk
}

// SquareTestdata returns the files of web3/zk/testdata, by name, as the
// generator (web3/zk/internal/gen) writes them: the verifying key, the
// public signals [9, b] with b the binding of the sample tenant, user and
// intent, a proof of them with x = 3, a re-randomized proof of the same
// statement and a corrupted proof. Everything is drawn from Stream seeds,
// so the files come out the same byte for byte.
func SquareTestdata() (map[string][]byte, error) {
	pk, vk := SquareKeys()
	b := zk.Binding(SampleTenant, SampleUser, SampleIntent, SampleEconomicsHash())
	w := SquareWitness(3, b)
	proof, err := Prove(pk, w, NewStream(SquareSeed+"/proof"))
	if err != nil {
		return nil, err
	}
	rerand, err := Rerandomize(vk, proof, NewStream(SquareSeed+"/rerandomize"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for name, v := range map[string]any{
		"square_vk.json":                 vk.JSON(),
		"square_public.json":             zk.Signals(w[1:3]),
		"square_proof.json":              proof.JSON(),
		"square_proof_rerandomized.json": rerand.JSON(),
		"square_proof_corrupted.json":    Corrupt(proof).JSON(),
	} {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return nil, fmt.Errorf("zktest: %s: %w", name, err)
		}
		out[name] = append(b, '\n')
	}
	return out, nil
}
