package zk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// The protocol and curve names of snarkjs's JSON files.
const (
	// Protocol is the only proof system accepted.
	Protocol = "groth16"
	// Curve is snarkjs's name of BN254 (alt_bn128), the only curve accepted.
	Curve = "bn128"
)

// Bounds of the formats, checked before any arithmetic.
const (
	// MaxPublicSignals bounds the public signals of a circuit (and of a
	// request): a key with more IC points is refused.
	MaxPublicSignals = 64
	// maxDecimalDigits bounds one decimal number: both moduli have 77
	// digits, so anything longer is out of range whatever its digits.
	maxDecimalDigits = 78
)

// The reasons of a FormatError.
const (
	// ReasonNotDecimal: not a canonical decimal string (digits only, no
	// sign, no leading zero, at most 78 digits).
	ReasonNotDecimal = "not_decimal"
	// ReasonOutOfRange: a field element not below its modulus.
	ReasonOutOfRange = "out_of_range"
	// ReasonShape: an array of the wrong length, or a point that is not
	// in affine form (its last coordinate 1, or [1, 0] for G2).
	ReasonShape = "shape"
	// ReasonNotOnCurve: a point whose coordinates are not on the curve.
	ReasonNotOnCurve = "not_on_curve"
	// ReasonNotInSubgroup: a G2 point on the curve but outside the
	// prime-order subgroup.
	ReasonNotInSubgroup = "not_in_subgroup"
	// ReasonInfinity: the point at infinity where a proof or key needs a
	// proper point.
	ReasonInfinity = "infinity"
	// ReasonProtocol: protocol or curve other than groth16 on bn128.
	ReasonProtocol = "protocol"
	// ReasonCount: a count that disagrees with the key (public signals
	// against len(IC)-1, nPublic against IC).
	ReasonCount = "count"
)

// FormatError is a snarkjs value that is malformed or not a valid element
// or point. Field is the JSON path inside the value ("pi_b[1][0]",
// "IC[2]"); Reason is one of the Reason constants.
type FormatError struct {
	Field  string
	Reason string
	Msg    string
}

// Error implements error.
func (e *FormatError) Error() string { return fmt.Sprintf("zk: %s: %s", e.Field, e.Msg) }

func formatErr(field, reason, format string, args ...any) *FormatError {
	return &FormatError{Field: field, Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// ProofJSON is a proof in snarkjs's proof.json form: each G1 point as
// three decimal strings [x, y, "1"], the G2 point as three pairs
// [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]] (c0 the real part).
type ProofJSON struct {
	PiA      []string   `json:"pi_a"`
	PiB      [][]string `json:"pi_b"`
	PiC      []string   `json:"pi_c"`
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
}

// VerifyingKeyJSON is a verifying key in snarkjs's verification_key.json
// form. vk_alphabeta_12, the pairing e(alpha, beta) that snarkjs caches,
// is read and ignored: it is recomputed, never trusted.
type VerifyingKeyJSON struct {
	Protocol    string          `json:"protocol"`
	Curve       string          `json:"curve"`
	NPublic     int             `json:"nPublic"`
	Alpha1      []string        `json:"vk_alpha_1"`
	Beta2       [][]string      `json:"vk_beta_2"`
	Gamma2      [][]string      `json:"vk_gamma_2"`
	Delta2      [][]string      `json:"vk_delta_2"`
	AlphaBeta12 json.RawMessage `json:"vk_alphabeta_12,omitempty"`
	IC          [][]string      `json:"IC"`
}

// ParseProof checks a snarkjs proof: groth16 on bn128, each coordinate a
// canonical decimal below the base field's modulus, each point affine, on
// the curve, in its subgroup and not the point at infinity.
func ParseProof(j ProofJSON) (Proof, error) {
	if j.Protocol != Protocol {
		return Proof{}, formatErr("protocol", ReasonProtocol, "protocol must be %q", Protocol)
	}
	if j.Curve != Curve {
		return Proof{}, formatErr("curve", ReasonProtocol, "curve must be %q", Curve)
	}
	var p Proof
	var err error
	if p.A, err = parseG1("pi_a", j.PiA); err != nil {
		return Proof{}, err
	}
	if p.B, err = parseG2("pi_b", j.PiB); err != nil {
		return Proof{}, err
	}
	if p.C, err = parseG1("pi_c", j.PiC); err != nil {
		return Proof{}, err
	}
	return p, nil
}

// JSON returns p in snarkjs's proof.json form.
func (p Proof) JSON() ProofJSON {
	return ProofJSON{PiA: g1JSON(p.A), PiB: g2JSON(p.B), PiC: g1JSON(p.C), Protocol: Protocol, Curve: Curve}
}

// ParseVerifyingKey decodes and checks a snarkjs verification_key.json:
// unknown fields are refused, every point is checked as in ParseProof, IC
// holds 1 to MaxPublicSignals+1 points and nPublic equals len(IC)-1.
func ParseVerifyingKey(data []byte) (VerifyingKey, error) {
	var j VerifyingKeyJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return VerifyingKey{}, formatErr("", ReasonShape, "not a snarkjs verification key: %v", err)
	}
	if dec.More() {
		return VerifyingKey{}, formatErr("", ReasonShape, "trailing data after the verification key")
	}
	return j.Parse()
}

// Parse checks j as ParseVerifyingKey does.
func (j VerifyingKeyJSON) Parse() (VerifyingKey, error) {
	if j.Protocol != Protocol {
		return VerifyingKey{}, formatErr("protocol", ReasonProtocol, "protocol must be %q", Protocol)
	}
	if j.Curve != Curve {
		return VerifyingKey{}, formatErr("curve", ReasonProtocol, "curve must be %q", Curve)
	}
	if len(j.IC) < 1 || len(j.IC) > MaxPublicSignals+1 {
		return VerifyingKey{}, formatErr("IC", ReasonShape, "IC must hold 1 to %d points", MaxPublicSignals+1)
	}
	if j.NPublic != len(j.IC)-1 {
		return VerifyingKey{}, formatErr("nPublic", ReasonCount, "nPublic is %d but IC holds %d points", j.NPublic, len(j.IC))
	}
	var vk VerifyingKey
	var err error
	if vk.Alpha, err = parseG1("vk_alpha_1", j.Alpha1); err != nil {
		return VerifyingKey{}, err
	}
	for _, g := range []struct {
		field string
		in    [][]string
		out   *bn254.G2Affine
	}{{"vk_beta_2", j.Beta2, &vk.Beta}, {"vk_gamma_2", j.Gamma2, &vk.Gamma}, {"vk_delta_2", j.Delta2, &vk.Delta}} {
		if *g.out, err = parseG2(g.field, g.in); err != nil {
			return VerifyingKey{}, err
		}
	}
	vk.IC = make([]bn254.G1Affine, len(j.IC))
	for i, c := range j.IC {
		if vk.IC[i], err = parseG1(fmt.Sprintf("IC[%d]", i), c); err != nil {
			return VerifyingKey{}, err
		}
	}
	return vk, nil
}

// JSON returns vk in snarkjs's verification_key.json form (without
// vk_alphabeta_12).
func (vk VerifyingKey) JSON() VerifyingKeyJSON {
	j := VerifyingKeyJSON{Protocol: Protocol, Curve: Curve, NPublic: len(vk.IC) - 1, Alpha1: g1JSON(vk.Alpha),
		Beta2: g2JSON(vk.Beta), Gamma2: g2JSON(vk.Gamma), Delta2: g2JSON(vk.Delta)}
	for _, c := range vk.IC {
		j.IC = append(j.IC, g1JSON(c))
	}
	return j
}

// ParsePublicSignals checks snarkjs public signals: each a canonical
// decimal string below the scalar field's modulus r. Field paths are
// "[i]".
func ParsePublicSignals(s []string) ([]fr.Element, error) {
	if len(s) > MaxPublicSignals {
		return nil, formatErr("", ReasonCount, "at most %d public signals", MaxPublicSignals)
	}
	out := make([]fr.Element, len(s))
	for i, v := range s {
		n, err := decimal(fmt.Sprintf("[%d]", i), v, fr.Modulus())
		if err != nil {
			return nil, err
		}
		out[i].SetBigInt(n)
	}
	return out, nil
}

// Signals returns public inputs as snarkjs public signals (canonical
// decimal strings).
func Signals(public []fr.Element) []string {
	out := make([]string, len(public))
	for i := range public {
		out[i] = public[i].Text(10)
	}
	return out
}

// decimal parses a canonical decimal below modulus.
func decimal(field, s string, modulus *big.Int) (*big.Int, error) {
	if s == "" || len(s) > maxDecimalDigits || (len(s) > 1 && s[0] == '0') {
		return nil, formatErr(field, ReasonNotDecimal, "must be a canonical decimal string")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, formatErr(field, ReasonNotDecimal, "must be a canonical decimal string")
		}
	}
	n, _ := new(big.Int).SetString(s, 10)
	if n.Cmp(modulus) >= 0 {
		return nil, formatErr(field, ReasonOutOfRange, "must be below the field's modulus")
	}
	return n, nil
}

// base parses a coordinate of the base field.
func base(field, s string) (fp.Element, error) {
	n, err := decimal(field, s, fp.Modulus())
	if err != nil {
		return fp.Element{}, err
	}
	var e fp.Element
	e.SetBigInt(n)
	return e, nil
}

// parseG1 reads [x, y, "1"]: on the curve (G1's cofactor is 1, so that is
// the subgroup) and not the point at infinity.
func parseG1(field string, c []string) (bn254.G1Affine, error) {
	if len(c) != 3 || c[2] != "1" {
		return bn254.G1Affine{}, formatErr(field, ReasonShape, `a G1 point is [x, y, "1"]`)
	}
	var p bn254.G1Affine
	var err error
	if p.X, err = base(fmt.Sprintf("%s[0]", field), c[0]); err != nil {
		return bn254.G1Affine{}, err
	}
	if p.Y, err = base(fmt.Sprintf("%s[1]", field), c[1]); err != nil {
		return bn254.G1Affine{}, err
	}
	switch {
	case p.IsInfinity():
		return bn254.G1Affine{}, formatErr(field, ReasonInfinity, "the point at infinity is not accepted")
	case !p.IsOnCurve():
		return bn254.G1Affine{}, formatErr(field, ReasonNotOnCurve, "the point is not on the curve")
	}
	return p, nil
}

// parseG2 reads [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]: on the twist,
// in the prime-order subgroup and not the point at infinity.
func parseG2(field string, c [][]string) (bn254.G2Affine, error) {
	if len(c) != 3 || len(c[0]) != 2 || len(c[1]) != 2 || len(c[2]) != 2 || c[2][0] != "1" || c[2][1] != "0" {
		return bn254.G2Affine{}, formatErr(field, ReasonShape, `a G2 point is [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]`)
	}
	var p bn254.G2Affine
	for i, dst := range []*fp.Element{&p.X.A0, &p.X.A1, &p.Y.A0, &p.Y.A1} {
		e, err := base(fmt.Sprintf("%s[%d][%d]", field, i/2, i%2), c[i/2][i%2])
		if err != nil {
			return bn254.G2Affine{}, err
		}
		*dst = e
	}
	switch {
	case p.IsInfinity():
		return bn254.G2Affine{}, formatErr(field, ReasonInfinity, "the point at infinity is not accepted")
	case !p.IsOnCurve():
		return bn254.G2Affine{}, formatErr(field, ReasonNotOnCurve, "the point is not on the curve")
	case !p.IsInSubGroup():
		return bn254.G2Affine{}, formatErr(field, ReasonNotInSubgroup, "the point is not in the prime-order subgroup")
	}
	return p, nil
}

func g1JSON(p bn254.G1Affine) []string { return []string{p.X.Text(10), p.Y.Text(10), "1"} }

func g2JSON(p bn254.G2Affine) [][]string {
	return [][]string{{p.X.A0.Text(10), p.X.A1.Text(10)}, {p.Y.A0.Text(10), p.Y.A1.Text(10)}, {"1", "0"}}
}
