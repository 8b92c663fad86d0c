package zk

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Proof is a Groth16 proof over BN254 whose points were checked (on the
// curve, in the subgroup, not at infinity).
type Proof struct {
	A bn254.G1Affine
	B bn254.G2Affine
	C bn254.G1Affine
}

// VerifyingKey is a Groth16 verifying key over BN254 whose points were
// checked. IC holds one point per public input, after the constant one's.
type VerifyingKey struct {
	Alpha              bn254.G1Affine
	Beta, Gamma, Delta bn254.G2Affine
	IC                 []bn254.G1Affine
}

// NbPublic is the number of public inputs the key verifies: len(IC)-1.
func (vk VerifyingKey) NbPublic() int { return len(vk.IC) - 1 }

// ErrProofInvalid is the pairing check failing: the proof does not prove
// the statement under the key.
var ErrProofInvalid = errors.New("zk: the proof does not verify against the key")

// Verify runs Groth16's pairing check
//
//	e(A, B) = e(alpha, beta) · e(L, gamma) · e(C, delta),  L = IC[0] + Σ public[i]·IC[i+1]
//
// as one product e(-A, B)·e(alpha, beta)·e(L, gamma)·e(C, delta) = 1.
// ErrProofInvalid when it fails; an error naming the count when public
// does not hold NbPublic inputs. p and vk must come from ParseProof and
// ParseVerifyingKey (checked points: the pairing does not check them).
func (vk VerifyingKey) Verify(p Proof, public []fr.Element) error {
	if len(public) != vk.NbPublic() {
		return fmt.Errorf("zk: %d public inputs for a key of %d", len(public), vk.NbPublic())
	}
	var acc bn254.G1Jac
	acc.FromAffine(&vk.IC[0])
	for i := range public {
		var term bn254.G1Jac
		term.FromAffine(&vk.IC[i+1])
		term.ScalarMultiplication(&term, public[i].BigInt(new(big.Int)))
		acc.AddAssign(&term)
	}
	var l, negA bn254.G1Affine
	l.FromJacobian(&acc)
	negA.Neg(&p.A)
	ok, err := bn254.PairingCheck([]bn254.G1Affine{negA, vk.Alpha, l, p.C}, []bn254.G2Affine{p.B, vk.Beta, vk.Gamma, vk.Delta})
	if err != nil {
		return fmt.Errorf("zk: pairing: %w", err)
	}
	if !ok {
		return ErrProofInvalid
	}
	return nil
}

// ProofHash is the lowercase hex SHA-256 of the proof's points in their
// uncompressed encoding (A, B, C): the same proof however its JSON was
// written hashes the same, and a re-randomized proof hashes differently.
func ProofHash(p Proof) string {
	h := sha256.New()
	a, b, c := p.A.RawBytes(), p.B.RawBytes(), p.C.RawBytes()
	h.Write(a[:])
	h.Write(b[:])
	h.Write(c[:])
	return hex.EncodeToString(h.Sum(nil))
}
