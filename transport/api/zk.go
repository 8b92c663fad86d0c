package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/web3/zk"
)

// SnarkjsProof is a Groth16 proof over BN254 as snarkjs writes it (proof.json).
type SnarkjsProof struct {
	// PiA is the point A of G1: [x, y, "1"], decimal strings below the base field's modulus.
	PiA []string `json:"pi_a" example:"1"`
	// PiB is the point B of G2: [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]], c0 the real part of each coordinate.
	PiB [][]string `json:"pi_b"`
	// PiC is the point C of G1: [x, y, "1"].
	PiC []string `json:"pi_c" example:"2"`
	// Protocol is the proof system; only groth16 is accepted.
	Protocol string `json:"protocol" example:"groth16" enum:"groth16"`
	// Curve is snarkjs's name of the curve; only bn128 (BN254) is accepted.
	Curve string `json:"curve" example:"bn128" enum:"bn128"`
}

// ZKVerifyRequest is the body of POST /api/v1/transactions/{id}/zk-verify.
type ZKVerifyRequest struct {
	// CircuitID names a circuit whose verifying key the server pinned in the caller's environment.
	CircuitID string `json:"circuitId" example:"ownership"`
	// CircuitVersion names the pinned key's version of that circuit.
	CircuitVersion string `json:"circuitVersion" example:"1"`
	// Proof is the proof, as snarkjs writes it.
	Proof SnarkjsProof `json:"proof"`
	// PublicSignals are the proof's public inputs as snarkjs writes them (public.json): canonical decimal strings below
	// BN254's scalar field modulus, as many as the circuit takes, the circuit's binding input among them.
	PublicSignals []string `json:"publicSignals" example:"9"`
}

// ZKVerificationView is a verified proof's record: the statement it proved, bound to the intent. It settles nothing.
type ZKVerificationView struct {
	// ID is the verification's id.
	ID string `json:"id" example:"zkv_01jd0000000000000000000000"`
	// Object is always "zk_verification".
	Object string `json:"object" example:"zk_verification"`
	// IntentID is the transaction intent the statement is bound to; the intent itself is unchanged.
	IntentID string `json:"intentId" example:"txi_0123456789abcdef0123456789abcdef"`
	// CircuitID is the circuit whose pinned key verified the proof.
	CircuitID string `json:"circuitId" example:"ownership"`
	// CircuitVersion is that key's version.
	CircuitVersion string `json:"circuitVersion" example:"1"`
	// Verified is always true: only proofs that verify are recorded.
	Verified bool `json:"verified" example:"true"`
	// Binding is the binding public input the server computed for the caller's tenant, user and the intent, a decimal
	// string.
	Binding string `json:"binding" example:"792571089450190310131537608835195760656868788362976115730611395796831976248"`
	// PublicSignals are the statement's public inputs, canonical decimal strings.
	PublicSignals []string `json:"publicSignals" example:"9"`
	// StatementHash names the statement (the circuit version and every public input), lowercase hex SHA-256: every
	// proof of it, re-randomized or not, has this hash.
	StatementHash string `json:"statementHash" example:"5ab30000000000000000000000000000000000000000000000000000000000ff"`
	// ProofHash is the lowercase hex SHA-256 of the points of the first proof that verified the statement.
	ProofHash string `json:"proofHash" example:"0c1d0000000000000000000000000000000000000000000000000000000000aa"`
	// CreatedAt is when the statement was first verified.
	CreatedAt time.Time `json:"createdAt"`
}

func zkVerificationView(v zk.Verification) ZKVerificationView {
	return ZKVerificationView{ID: v.ID, Object: "zk_verification", IntentID: v.IntentID, CircuitID: v.CircuitID,
		CircuitVersion: v.CircuitVersion, Verified: true, Binding: v.Binding, PublicSignals: append([]string{}, v.PublicSignals...),
		StatementHash: v.StatementHash, ProofHash: v.ProofHash, CreatedAt: v.CreatedAt}
}

// zkFeature is zk_verification's line of the chain features: configured
// when a circuit is pinned in the environment, enabled when it is also
// enabled there, never verified (nothing on chain is proven).
func zkFeature(a zk.Availability) Web3FeatureView {
	fv := Web3FeatureView{Feature: "zk_verification", Enabled: a.Enabled, Configured: a.Configured}
	switch {
	case !a.Configured:
		fv.Reason = optional(zk.ReasonNotConfigured)
	case !a.Enabled:
		fv.Reason = optional(zk.ReasonNotEnabled)
	}
	return fv
}

// zkBodyLimit bounds a proof request: a proof is under 1 KiB and a
// circuit takes at most zk.MaxPublicSignals signals of 78 digits.
const zkBodyLimit = 16 << 10

// zkRoutes is POST /api/v1/transactions/{id}/zk-verify (spec, Web3
// adapters; package web3/zk).
func zkRoutes(svc *zk.Service) []Route {
	if svc == nil {
		return nil
	}
	example := ZKVerificationView{ID: "zkv_01jd0000000000000000000000", Object: "zk_verification",
		IntentID: "txi_0123456789abcdef0123456789abcdef", CircuitID: "ownership", CircuitVersion: "1", Verified: true,
		PublicSignals: []string{"9", "792571089450190310131537608835195760656868788362976115730611395796831976248"},
		CreatedAt:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	return []Route{{Method: http.MethodPost, Pattern: "/api/v1/transactions/{id}/zk-verify", OperationID: "verifyTransactionIntentProof",
		Tag: transport.TagWeb3, Auth: transport.AuthSession, Private: true, AnyMember: true, Idempotency: transport.IdempotencyOptional,
		OwnUnitOfWork: true, Status: http.StatusCreated, BodyLimit: zkBodyLimit,
		ExistingStatus: http.StatusOK, ExistingText: "OK: the statement was verified before (this proof, or another proof of it such as " +
			"a re-randomized one); its first verification is answered and nothing new is recorded.",
		Summary: "Verify a zero-knowledge proof bound to a transaction intent",
		Description: "The specification does not show this body; its fields are the platform's. Verifies a Groth16 proof over " +
			"BN254 in snarkjs's formats (proof.json and public.json) against the verifying key the server pinned for circuitId " +
			"and circuitVersion in the caller's environment; a key is never taken from the caller. The statement must be bound " +
			"to the caller's tenant, user and this intent: the circuit's binding input must equal SHA-256(\"platform/zk/v1\" 0x00 " +
			"tenantId 0x00 userId 0x00 intentId 0x00 economicsHash) read as a big-endian integer modulo BN254's scalar field " +
			"modulus r, which the server computes from its records (economicsHash is the intent's). Checks, in order: a verifier " +
			"is configured and enabled for the environment (else 503 PROVIDER_UNAVAILABLE, details.reason verifier_not_configured " +
			"or verifier_not_enabled); the intent is the caller's own (else 404 NOT_FOUND); circuitId and circuitVersion name a " +
			"pinned key (else 400 INVALID_INPUT, reason unknown_circuit); every coordinate and signal is a canonical decimal " +
			"below its modulus, every point affine, on the curve, in its subgroup and not at infinity, and there are as many " +
			"public signals as the key takes (else 400 INVALID_INPUT naming the field, such as proof.pi_b, with details.reason " +
			"not_decimal, out_of_range, shape, not_on_curve, not_in_subgroup, infinity, protocol or count); the binding input " +
			"is this intent's (else 422 STATEMENT_MISMATCH: the proof was made for another user, intent or tenant; " +
			"details.expected is the value to prove); the pairing check passes (else 422 VERIFICATION_FAILED, reason " +
			"pairing_check_failed). A valid proof verifies its statement only: it settles nothing and changes nothing of the " +
			"intent. The first proof of a statement is recorded (201) with the outbox event zk_verification.verified and an " +
			"audit record; any later proof of the same statement, byte-identical or re-randomized, is verified the same way and " +
			"answers that record (200), recording nothing. An Idempotency-Key is optional.",
		Request: ZKVerifyRequest{CircuitID: "ownership", CircuitVersion: "1", Proof: SnarkjsProof{PiA: []string{"1", "2", "1"},
			PiB: [][]string{{"1", "2"}, {"3", "4"}, {"1", "0"}}, PiC: []string{"1", "2", "1"}, Protocol: "groth16", Curve: "bn128"},
			PublicSignals: example.PublicSignals},
		Response: example,
		Errors: []string{string(fault.NotFound), string(fault.ProviderUnavailable), string(fault.StatementMismatch),
			string(fault.VerificationFailed)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			var in ZKVerifyRequest
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			chk, err := svc.Check(ctx, c.Principal, c.PathValue("id"), zk.Request{CircuitID: in.CircuitID,
				CircuitVersion: in.CircuitVersion, PublicSignals: in.PublicSignals, Proof: zk.ProofJSON{PiA: in.Proof.PiA,
					PiB: in.Proof.PiB, PiC: in.Proof.PiC, Protocol: in.Proof.Protocol, Curve: in.Proof.Curve}})
			if err != nil {
				return nil, err
			}
			existing := func() (any, bool, error) {
				prior, ok, err := svc.Existing(ctx, c.Tx, chk)
				if err != nil || !ok {
					return nil, false, err
				}
				out, err := c.CommitResult(ctx, func(Tx) (any, error) {
					c.SetStatus(http.StatusOK)
					return zkVerificationView(prior), nil
				})
				return out, true, err
			}
			if out, ok, err := existing(); err != nil || ok {
				return out, err
			}
			out, err := c.CommitResult(ctx, func(tx Tx) (any, error) {
				v, err := svc.Record(ctx, tx, c.Principal, chk, c.RequestID)
				if err != nil {
					return nil, err
				}
				return zkVerificationView(v), nil
			})
			if fault.Is(err, fault.Conflict) {
				// Another request recorded the statement meanwhile: answer its record.
				if prior, ok, rerr := existing(); ok || rerr != nil {
					return prior, rerr
				}
			}
			return out, err
		}}}
}
