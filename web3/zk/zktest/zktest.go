// Package zktest is a Groth16 setup and prover over BN254 for tiny test
// circuits, so that tests (and the generator of web3/zk/testdata) can
// make real proofs for the statements they need: a statement bound to a
// tenant, user and intent that a test creates at run time, a
// re-randomized proof, a corrupted one.
//
// It is test support, never imported by production code. Its setup is
// deterministic from a public seed, so its toxic waste is public: anyone
// can forge proofs for its keys. Never pin a key it made outside tests.
//
// The circuit is the one of the package doc of web3/zk: Square proves
// knowledge of x with x·x = y, with public inputs [y, b], b the binding
// input. Like snarkjs, the setup adds one constraint "input · 0 = 0" per
// public input (and the constant one), so that every public input,
// including b which no other constraint uses, has a distinct non-zero
// IC point and is bound by the proof.
//
// The proving key and the prover follow Groth16 (eprint 2016/260) over an
// evaluation domain of the n-th roots of unity (n a power of two):
//
//	A = alpha + Σ w_j·u_j(τ) + r·delta            (G1)
//	B = beta  + Σ w_j·v_j(τ) + s·delta            (G2, and in G1 for C)
//	C = Σ_private w_j·K_j + Σ h_i·τ^i·Z(τ)/delta + s·A + r·B − r·s·delta
//
// with h = (U·V − W)/Z computed by polynomial division, which fails for a
// witness that does not satisfy the constraints.
package zktest

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"

	"github.com/creatormusic/platform/web3/zk"
)

// Term is coefficient·w[Var] in a linear combination.
type Term struct {
	Var   int
	Coeff int64
}

// Constraint is A·w × B·w = C·w.
type Constraint struct {
	A, B, C []Term
}

// R1CS is a rank-1 constraint system over the variables w: w[0] = 1,
// then NbPublic public inputs, then the private ones.
type R1CS struct {
	NbPublic    int
	NbVars      int
	Constraints []Constraint
}

// Square is the test circuit: variables [1, y, b, x], one constraint
// x·x = y; public inputs y and b (b at index 1 of the public signals,
// the binding input).
func Square() R1CS {
	return R1CS{NbPublic: 2, NbVars: 4, Constraints: []Constraint{
		{A: []Term{{3, 1}}, B: []Term{{3, 1}}, C: []Term{{1, 1}}},
	}}
}

// SquareBindingInput is Square's binding input among its public signals.
const SquareBindingInput = 1

// ProvingKey is a Groth16 proving key.
type ProvingKey struct {
	r1cs                  R1CS
	domain                int
	omega                 fr.Element
	alpha1, beta1, delta1 bn254.G1Affine
	beta2, delta2         bn254.G2Affine
	a1, b1                []bn254.G1Affine // u_j(τ), v_j(τ) in G1, every variable
	b2                    []bn254.G2Affine // v_j(τ) in G2, every variable
	k                     []bn254.G1Affine // (β·u_j + α·v_j + w_j)(τ)/δ, private variables
	z                     []bn254.G1Affine // τ^i·Z(τ)/δ, i < n-1
}

// Setup runs Groth16's setup for r with toxic waste drawn from rnd: the
// proving key and the verifying key.
func Setup(r R1CS, rnd io.Reader) (*ProvingKey, zk.VerifyingKey, error) {
	var tau, alpha, beta, gamma, delta fr.Element
	for _, e := range []*fr.Element{&tau, &alpha, &beta, &gamma, &delta} {
		v, err := scalar(rnd)
		if err != nil {
			return nil, zk.VerifyingKey{}, err
		}
		*e = v
	}
	rows := r.rows()
	n := 1
	for n < len(rows) {
		n *= 2
	}
	omega := fft.NewDomain(uint64(n)).Generator
	// Lagrange basis at τ: L_k(τ) = ω^k·(τ^n − 1) / (n·(τ − ω^k)).
	var zt, nInv fr.Element
	zt.Exp(tau, big.NewInt(int64(n)))
	zt.Sub(&zt, ptr(fr.One()))
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	lag := make([]fr.Element, n)
	var wk fr.Element
	wk.SetOne()
	for k := range n {
		var den fr.Element
		den.Sub(&tau, &wk)
		if den.IsZero() {
			return nil, zk.VerifyingKey{}, errors.New("zktest: tau fell on the domain; draw again")
		}
		den.Inverse(&den)
		lag[k].Mul(&wk, &zt).Mul(&lag[k], &nInv).Mul(&lag[k], &den)
		wk.Mul(&wk, &omega)
	}
	u, v, w := make([]fr.Element, r.NbVars), make([]fr.Element, r.NbVars), make([]fr.Element, r.NbVars)
	for k, row := range rows {
		for _, t := range []struct {
			terms []Term
			out   []fr.Element
		}{{row.A, u}, {row.B, v}, {row.C, w}} {
			for _, term := range t.terms {
				var c fr.Element
				c.SetInt64(term.Coeff).Mul(&c, &lag[k])
				t.out[term.Var].Add(&t.out[term.Var], &c)
			}
		}
	}
	_, _, g1, g2 := bn254.Generators()
	mul1 := func(e fr.Element) bn254.G1Affine {
		var p bn254.G1Affine
		p.ScalarMultiplication(&g1, e.BigInt(new(big.Int)))
		return p
	}
	mul2 := func(e fr.Element) bn254.G2Affine {
		var p bn254.G2Affine
		p.ScalarMultiplication(&g2, e.BigInt(new(big.Int)))
		return p
	}
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&gamma)
	deltaInv.Inverse(&delta)
	// combined is (β·u_j + α·v_j + w_j)(τ).
	combined := func(j int) fr.Element {
		var a, b, c fr.Element
		a.Mul(&beta, &u[j])
		b.Mul(&alpha, &v[j])
		c.Add(&a, &b).Add(&c, &w[j])
		return c
	}
	vk := zk.VerifyingKey{Alpha: mul1(alpha), Beta: mul2(beta), Gamma: mul2(gamma), Delta: mul2(delta)}
	for j := 0; j <= r.NbPublic; j++ {
		c := combined(j)
		vk.IC = append(vk.IC, mul1(*c.Mul(&c, &gammaInv)))
	}
	pk := &ProvingKey{r1cs: r, domain: n, omega: omega, alpha1: vk.Alpha, beta1: mul1(beta), delta1: mul1(delta), beta2: vk.Beta,
		delta2: vk.Delta}
	for j := range r.NbVars {
		pk.a1 = append(pk.a1, mul1(u[j]))
		pk.b1 = append(pk.b1, mul1(v[j]))
		pk.b2 = append(pk.b2, mul2(v[j]))
		if j > r.NbPublic {
			c := combined(j)
			pk.k = append(pk.k, mul1(*c.Mul(&c, &deltaInv)))
		}
	}
	var ti fr.Element
	ti.SetOne()
	for range n - 1 {
		var e fr.Element
		e.Mul(&ti, &zt).Mul(&e, &deltaInv)
		pk.z = append(pk.z, mul1(e))
		ti.Mul(&ti, &tau)
	}
	return pk, vk, nil
}

// rows are the constraints with one "input · 0 = 0" row per public input
// and the constant one.
func (r R1CS) rows() []Constraint {
	rows := append([]Constraint(nil), r.Constraints...)
	for j := 0; j <= r.NbPublic; j++ {
		rows = append(rows, Constraint{A: []Term{{j, 1}}})
	}
	return rows
}

// Prove makes a proof of the statement w[1..NbPublic] with the full
// witness w (w[0] = 1), drawing r and s from rnd. It fails when w does
// not satisfy the constraints.
func Prove(pk *ProvingKey, w []fr.Element, rnd io.Reader) (zk.Proof, error) {
	cs := pk.r1cs
	if len(w) != cs.NbVars || !w[0].IsOne() {
		return zk.Proof{}, fmt.Errorf("zktest: the witness must hold %d values, the first 1", cs.NbVars)
	}
	n := pk.domain
	rows := cs.rows()
	ea, eb, ec := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	for k, row := range rows {
		ea[k], eb[k], ec[k] = eval(row.A, w), eval(row.B, w), eval(row.C, w)
		var ab fr.Element
		ab.Mul(&ea[k], &eb[k])
		if !ab.Equal(&ec[k]) {
			return zk.Proof{}, fmt.Errorf("zktest: the witness does not satisfy constraint %d", k)
		}
	}
	U, V, W := interpolate(ea, pk.omega), interpolate(eb, pk.omega), interpolate(ec, pk.omega)
	// P = U·V − W, then h = P / (X^n − 1) with no remainder.
	p := make([]fr.Element, 2*n-1)
	for i := range U {
		for j := range V {
			var t fr.Element
			t.Mul(&U[i], &V[j])
			p[i+j].Add(&p[i+j], &t)
		}
	}
	for i := range W {
		p[i].Sub(&p[i], &W[i])
	}
	h := make([]fr.Element, n-1)
	for i := len(p) - 1; i >= n; i-- {
		h[i-n].Add(&h[i-n], &p[i])
		p[i-n].Add(&p[i-n], &p[i])
		p[i].SetZero()
	}
	for i := range n {
		if !p[i].IsZero() {
			return zk.Proof{}, errors.New("zktest: U·V − W is not divisible by the vanishing polynomial")
		}
	}
	r, err := scalar(rnd)
	if err != nil {
		return zk.Proof{}, err
	}
	s, err := scalar(rnd)
	if err != nil {
		return zk.Proof{}, err
	}
	var a, b1 bn254.G1Jac
	var b2 bn254.G2Jac
	a.FromAffine(&pk.alpha1)
	b1.FromAffine(&pk.beta1)
	b2.FromAffine(&pk.beta2)
	for j := range w {
		addMul1(&a, pk.a1[j], w[j])
		addMul1(&b1, pk.b1[j], w[j])
		addMul2(&b2, pk.b2[j], w[j])
	}
	addMul1(&a, pk.delta1, r)
	addMul1(&b1, pk.delta1, s)
	addMul2(&b2, pk.delta2, s)
	var c bn254.G1Jac
	for j, kj := range pk.k {
		addMul1(&c, kj, w[cs.NbPublic+1+j])
	}
	for i := range h {
		addMul1(&c, pk.z[i], h[i])
	}
	var aAff, b1Aff bn254.G1Affine
	aAff.FromJacobian(&a)
	b1Aff.FromJacobian(&b1)
	var rs fr.Element
	rs.Mul(&r, &s).Neg(&rs)
	addMul1(&c, aAff, s)
	addMul1(&c, b1Aff, r)
	addMul1(&c, pk.delta1, rs)
	var out zk.Proof
	out.A = aAff
	out.B.FromJacobian(&b2)
	out.C.FromJacobian(&c)
	return out, nil
}

// SquareWitness is Square's witness for x and the binding input b:
// [1, x·x, b, x].
func SquareWitness(x uint64, b fr.Element) []fr.Element {
	w := make([]fr.Element, 4)
	w[0].SetOne()
	w[3].SetUint64(x)
	w[1].Mul(&w[3], &w[3])
	w[2] = b
	return w
}

// Rerandomize turns p into another valid proof of the same statement
// under vk, with r1, r2 drawn from rnd (as ark-groth16's
// rerandomize_proof): A' = A/r1, B' = r1·B + r1·r2·delta, C' = C + r2·A.
func Rerandomize(vk zk.VerifyingKey, p zk.Proof, rnd io.Reader) (zk.Proof, error) {
	r1, err := scalar(rnd)
	if err != nil {
		return zk.Proof{}, err
	}
	r2, err := scalar(rnd)
	if err != nil {
		return zk.Proof{}, err
	}
	var inv, r12 fr.Element
	inv.Inverse(&r1)
	r12.Mul(&r1, &r2)
	var out zk.Proof
	out.A.ScalarMultiplication(&p.A, inv.BigInt(new(big.Int)))
	var b, d bn254.G2Affine
	b.ScalarMultiplication(&p.B, r1.BigInt(new(big.Int)))
	d.ScalarMultiplication(&vk.Delta, r12.BigInt(new(big.Int)))
	out.B.Add(&b, &d)
	var ra bn254.G1Affine
	ra.ScalarMultiplication(&p.A, r2.BigInt(new(big.Int)))
	out.C.Add(&p.C, &ra)
	return out, nil
}

// Corrupt returns p with C moved by the generator of G1: every point is
// still on the curve and in its subgroup, and the pairing check fails.
func Corrupt(p zk.Proof) zk.Proof {
	_, _, g1, _ := bn254.Generators()
	p.C.Add(&p.C, &g1)
	return p
}

// Stream is a deterministic byte stream from a seed: SHA-256(seed ‖
// counter) blocks, counter a big-endian uint64 from 0. It is what the
// generator of web3/zk/testdata draws its toxic waste and proof
// randomness from, so that the files can be made again byte for byte.
type Stream struct {
	seed    []byte
	counter uint64
	buf     []byte
}

// NewStream returns the stream of seed.
func NewStream(seed string) *Stream { return &Stream{seed: []byte(seed)} }

// Read implements io.Reader; it never fails.
func (s *Stream) Read(p []byte) (int, error) {
	for n := 0; n < len(p); {
		if len(s.buf) == 0 {
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], s.counter)
			s.counter++
			sum := sha256.Sum256(append(append([]byte(nil), s.seed...), c[:]...))
			s.buf = sum[:]
		}
		k := copy(p[n:], s.buf)
		s.buf, n = s.buf[k:], n+k
	}
	return len(p), nil
}

// scalar draws a non-zero scalar: 64 bytes from rnd reduced modulo r.
func scalar(rnd io.Reader) (fr.Element, error) {
	var b [64]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return fr.Element{}, fmt.Errorf("zktest: randomness: %w", err)
	}
	var e fr.Element
	e.SetBigInt(new(big.Int).SetBytes(b[:]))
	if e.IsZero() {
		return scalar(rnd)
	}
	return e, nil
}

// eval is a linear combination at w.
func eval(terms []Term, w []fr.Element) fr.Element {
	var out fr.Element
	for _, t := range terms {
		var c fr.Element
		c.SetInt64(t.Coeff).Mul(&c, &w[t.Var])
		out.Add(&out, &c)
	}
	return out
}

// interpolate returns the coefficients of the polynomial with values e
// on the domain 1, ω, ω², ...: coeff_i = (1/n)·Σ_k e_k·ω^(−i·k).
func interpolate(e []fr.Element, omega fr.Element) []fr.Element {
	n := len(e)
	var inv, nInv fr.Element
	inv.Inverse(&omega)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	out := make([]fr.Element, n)
	for i := range n {
		var step, x fr.Element
		step.Exp(inv, big.NewInt(int64(i)))
		x.SetOne()
		for k := range n {
			var t fr.Element
			t.Mul(&e[k], &x)
			out[i].Add(&out[i], &t)
			x.Mul(&x, &step)
		}
		out[i].Mul(&out[i], &nInv)
	}
	return out
}

func addMul1(acc *bn254.G1Jac, p bn254.G1Affine, s fr.Element) {
	var t bn254.G1Jac
	t.FromAffine(&p)
	t.ScalarMultiplication(&t, s.BigInt(new(big.Int)))
	acc.AddAssign(&t)
}

func addMul2(acc *bn254.G2Jac, p bn254.G2Affine, s fr.Element) {
	var t bn254.G2Jac
	t.FromAffine(&p)
	t.ScalarMultiplication(&t, s.BigInt(new(big.Int)))
	acc.AddAssign(&t)
}

func ptr(e fr.Element) *fr.Element { return &e }
