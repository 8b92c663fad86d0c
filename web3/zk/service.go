package zk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// IDPrefix starts a verification's id.
const IDPrefix = "zkv_"

// EventVerified is the outbox event of a new verification.
const EventVerified = "zk_verification.verified"

// Audit action and target of a verification.
const (
	// ActionVerified: a proof verified and its verification was recorded.
	ActionVerified = "zk.proof_verified"
	// TargetVerification is a verification (target id: its id).
	TargetVerification = "zk_verification"
)

// details.reason of the codes Check returns beside INVALID_INPUT's
// format reasons.
const (
	// ReasonNotConfigured: PROVIDER_UNAVAILABLE, no circuit is pinned in
	// the caller's environment.
	ReasonNotConfigured = "verifier_not_configured"
	// ReasonNotEnabled: PROVIDER_UNAVAILABLE, circuits are pinned but
	// verification is not enabled in the caller's environment.
	ReasonNotEnabled = "verifier_not_enabled"
	// ReasonUnknownCircuit: INVALID_INPUT, no such circuit version is
	// pinned in the caller's environment.
	ReasonUnknownCircuit = "unknown_circuit"
	// ReasonPairingFailed: VERIFICATION_FAILED, the pairing check failed.
	ReasonPairingFailed = "pairing_check_failed"
)

// Intents reads the intent a proof is bound to, as its owner reads it:
// NOT_FOUND for an intent that is not the principal's (another user's,
// workspace's or environment's). chain/intent.Service satisfies it.
type Intents interface {
	Get(ctx context.Context, p *access.Principal, id string) (intent.Intent, error)
}

// Reader finds a recorded verification by its statement.
type Reader interface {
	// ZKVerificationByStatement returns the verification of statement
	// hash h in the tenant and environment; NOT_FOUND when none.
	ZKVerificationByStatement(ctx context.Context, tenantID string, env access.Environment, h string) (Verification, error)
}

// Store records verifications, with the audit record and outbox event
// that commit with them. Errors are *fault.Error.
type Store interface {
	Reader
	outbox.Writer
	account.AuditWriter
	// ZKVerificationInsert stores a new verification. CONFLICT when one
	// with its id, its statement (tenant, environment, statement hash) or
	// its proof hash exists.
	ZKVerificationInsert(ctx context.Context, v Verification) error
}

// Verification is a proof that verified against a pinned key, for a
// statement bound to its tenant, user and intent. It settles nothing.
type Verification struct {
	// ID is its id (IDPrefix).
	ID string
	// Scope is the tenant, workspace and environment of the intent.
	Scope access.Scope
	// UserID is the intent's user, who submitted the proof.
	UserID string
	// IntentID is the intent the statement is bound to.
	IntentID string
	// CircuitID and CircuitVersion name the pinned key it verified under.
	CircuitID      string
	CircuitVersion string
	// Binding is the binding public input (decimal), Binding(...) of the
	// intent.
	Binding string
	// PublicSignals are the statement's public inputs (canonical decimals).
	PublicSignals []string
	// StatementHash is StatementHash of the circuit version and inputs:
	// one verification per statement.
	StatementHash string
	// ProofHash is ProofHash of the first proof that verified it.
	ProofHash string
	// Proof is that proof, as verified, in snarkjs's form.
	Proof ProofJSON
	// CreatedAt is when it was recorded.
	CreatedAt time.Time
}

// Config configures a Service.
type Config struct {
	// Environments are the verifiers of test and live; an environment
	// without an entry has none.
	Environments map[access.Environment]Environment
	// Intents reads the intents proofs are bound to. Required.
	Intents Intents
}

// Service verifies proofs bound to transaction intents. It holds no
// mutable state and is safe for concurrent use.
type Service struct {
	envs    map[access.Environment]registry
	intents Intents
}

// New checks every pinned circuit (Circuit's rules, each key parsed) and
// returns a Service; any bad circuit is an error, so a host never starts
// with a key it would fail to use.
func New(cfg Config) (*Service, error) {
	if cfg.Intents == nil {
		return nil, errors.New("zk: Intents is required")
	}
	s := &Service{envs: map[access.Environment]registry{}, intents: cfg.Intents}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("zk: environment %q is neither test nor live", env)
		}
		r, err := newRegistry(e)
		if err != nil {
			return nil, fmt.Errorf("zk: %s: %w", env, err)
		}
		s.envs[env] = r
	}
	return s, nil
}

// Availability is what an environment's verifier can do.
type Availability struct {
	// Configured is true when at least one circuit is pinned there.
	Configured bool
	// Enabled is true when it is configured and enabled: the route
	// verifies proofs.
	Enabled bool
}

// Availability reports env's verifier.
func (s *Service) Availability(env access.Environment) Availability {
	r := s.envs[env]
	configured := len(r.circuits) > 0
	return Availability{Configured: configured, Enabled: configured && r.enabled}
}

// Request is a proof submitted for an intent.
type Request struct {
	// CircuitID and CircuitVersion name a pinned circuit version.
	CircuitID      string
	CircuitVersion string
	// Proof is the proof in snarkjs's form.
	Proof ProofJSON
	// PublicSignals are its public inputs in snarkjs's form.
	PublicSignals []string
}

// Checked is a proof that passed every check of Check, ready to record.
type Checked struct {
	v Verification
}

// Check verifies a proof for intent id of p, reading nothing but the
// intent, in this order:
//
//   - PROVIDER_UNAVAILABLE (details.reason verifier_not_configured or
//     verifier_not_enabled) when p's environment has no enabled verifier;
//   - the intent as Intents reads it: NOT_FOUND when it is not p's,
//     ACCESS_DENIED for an API key;
//   - INVALID_INPUT naming the field: an unknown circuit version
//     (circuitId, circuitVersion; reason unknown_circuit), a malformed
//     proof or signal, a point off the curve or outside its subgroup
//     (proof.pi_a...; the FormatError reasons), a count of public signals
//     other than the key's (publicSignals; reason count);
//   - STATEMENT_MISMATCH when the binding input is not Binding of p's
//     tenant, p's user, the intent and its economics hash (the proof is
//     another user's, another intent's or another tenant's);
//   - VERIFICATION_FAILED (reason pairing_check_failed) when the pairing
//     check fails.
//
// A Checked proof verified its statement; it settles nothing and moves
// nothing of the intent.
func (s *Service) Check(ctx context.Context, p *access.Principal, id string, in Request) (Checked, error) {
	const op = "zk.Check"
	if p == nil {
		return Checked{}, fault.E(op, fault.Unauthenticated, "a signed-in user is required")
	}
	reg, err := s.available(op, p.Environment)
	if err != nil {
		return Checked{}, err
	}
	it, err := s.intents.Get(ctx, p, id)
	if err != nil {
		return Checked{}, fault.Wrap(op, err)
	}
	c, err := reg.lookup(in.CircuitID, in.CircuitVersion)
	if err != nil {
		field := "circuitVersion"
		if !reg.hasID(in.CircuitID) {
			field = "circuitId"
		}
		return Checked{}, fault.Invalid(op, field, "No such circuit version is pinned in this environment.").
			With("reason", ReasonUnknownCircuit)
	}
	proof, err := ParseProof(in.Proof)
	if err != nil {
		return Checked{}, invalid(op, "proof.", err)
	}
	public, err := ParsePublicSignals(in.PublicSignals)
	if err != nil {
		return Checked{}, invalid(op, "publicSignals", err)
	}
	if len(public) != c.vk.NbPublic() {
		return Checked{}, fault.Invalid(op, "publicSignals", fmt.Sprintf("Circuit %s takes %d public signals.", c.name(), c.vk.NbPublic())).
			With("reason", ReasonCount).With("expected", c.vk.NbPublic())
	}
	want := Binding(it.Actor.TenantID, it.Actor.UserID, it.ID, it.EconomicsHash)
	if !public[c.binding].Equal(&want) {
		return Checked{}, fault.E(op, fault.StatementMismatch,
			"The proof's binding input is not the statement of this tenant, user and intent.").
			With("field", fmt.Sprintf("publicSignals[%d]", c.binding)).With("expected", want.Text(10))
	}
	if err := c.vk.Verify(proof, public); err != nil {
		if errors.Is(err, ErrProofInvalid) {
			return Checked{}, fault.E(op, fault.VerificationFailed, "The proof does not verify against the pinned key.").
				With("reason", ReasonPairingFailed)
		}
		return Checked{}, fault.Wrap(op, err)
	}
	return Checked{v: Verification{Scope: it.Actor.Scope(), UserID: it.Actor.UserID, IntentID: it.ID, CircuitID: c.id,
		CircuitVersion: c.version, Binding: want.Text(10), PublicSignals: Signals(public),
		StatementHash: StatementHash(c.id, c.version, public), ProofHash: ProofHash(proof), Proof: proof.JSON()}}, nil
}

// available returns env's registry, or PROVIDER_UNAVAILABLE.
func (s *Service) available(op string, env access.Environment) (registry, error) {
	a := s.Availability(env)
	switch {
	case !a.Configured:
		return registry{}, fault.E(op, fault.ProviderUnavailable, "No proof verifier is configured for this environment.").
			With("reason", ReasonNotConfigured).With("environment", string(env))
	case !a.Enabled:
		return registry{}, fault.E(op, fault.ProviderUnavailable, "Proof verification is not enabled in this environment.").
			With("reason", ReasonNotEnabled).With("environment", string(env))
	}
	return s.envs[env], nil
}

// invalid turns a FormatError into INVALID_INPUT naming prefix+field.
func invalid(op, prefix string, err error) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return fault.Wrap(op, err)
	}
	return fault.Invalid(op, prefix+fe.Field, fe.Msg).With("reason", fe.Reason)
}

// Existing returns the verification already recorded for c's statement,
// and whether there is one: a second proof of a statement (re-randomized
// or resent) answers the first one's verification and records nothing.
func (s *Service) Existing(ctx context.Context, st Reader, c Checked) (Verification, bool, error) {
	const op = "zk.Existing"
	v, err := st.ZKVerificationByStatement(ctx, c.v.Scope.TenantID, c.v.Scope.Environment, c.v.StatementHash)
	switch {
	case fault.Is(err, fault.NotFound):
		return Verification{}, false, nil
	case err != nil:
		return Verification{}, false, fault.Wrap(op, err)
	}
	return v, true, nil
}

// Record stores c as a new verification in st's unit of work, with its
// outbox event (EventVerified) and audit record; the intent is not
// touched. CONFLICT when its statement was recorded meanwhile (Existing
// then finds it).
func (s *Service) Record(ctx context.Context, st Store, p *access.Principal, c Checked, requestID string) (Verification, error) {
	const op = "zk.Record"
	v := c.v
	v.ID, v.CreatedAt = st.NewID(IDPrefix), st.Now()
	if err := st.ZKVerificationInsert(ctx, v); err != nil {
		return Verification{}, fault.Wrap(op, err)
	}
	payload, _ := json.Marshal(map[string]any{"id": v.ID, "intentId": v.IntentID, "circuitId": v.CircuitID,
		"circuitVersion": v.CircuitVersion, "statementHash": v.StatementHash, "proofHash": v.ProofHash}) // strings only
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: v.Scope.TenantID, WorkspaceID: v.Scope.WorkspaceID,
		Environment: string(v.Scope.Environment), Type: EventVerified, SchemaVersion: 1, AggregateID: v.ID, AggregateVersion: 1,
		OccurredAt: v.CreatedAt, Payload: payload}); err != nil {
		return Verification{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionVerified, TargetType: TargetVerification, TargetID: v.ID,
		RequestID: requestID, After: map[string]any{"intentId": v.IntentID, "circuitId": v.CircuitID,
			"circuitVersion": v.CircuitVersion, "statementHash": v.StatementHash}}); err != nil {
		return Verification{}, err
	}
	return v, nil
}
