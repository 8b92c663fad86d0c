package cctp

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// Id prefixes of the package's records.
const (
	// IDPrefix starts a transfer's id.
	IDPrefix = "ctp_"
	// EvidencePrefix starts an evidence record's id.
	EvidencePrefix = "cte_"
	// ReadinessPrefix starts a readiness run's id.
	ReadinessPrefix = "ccr_"
)

// Audit actions and target of transfers.
const (
	// ActionCreated: a transfer was created. After: amount, domains,
	// recipient.
	ActionCreated = "cctp_transfer.created"
	// ActionMoved: a transfer's state moved with new evidence. Before and
	// after: state; after also names the evidence.
	ActionMoved = "cctp_transfer.state_changed"
	// TargetTransfer is a cross-chain transfer (target id: its id).
	TargetTransfer = "cctp_transfer"
)

// Owner is whom a transfer belongs to: the user who created it in a
// workspace and environment.
type Owner struct {
	TenantID    string
	WorkspaceID string
	Environment access.Environment
	UserID      string
}

// OwnerOf returns p's owner identity.
func OwnerOf(p *access.Principal) Owner {
	return Owner{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: p.Environment, UserID: p.UserID}
}

// Transfer is one USDC transfer from an EVM chain to Solana through CCTP
// V2: what creation pinned, and what each verified step recorded. Every
// write compare-and-sets Version; the state moves only through Transition.
type Transfer struct {
	// ID is the transfer's id (IDPrefix).
	ID string
	// Owner is whom it belongs to.
	Owner Owner
	// State is where it stands (Moves).
	State State

	// Amount is the USDC to burn, atomic (6 decimals); pinned at creation.
	Amount money.Atomic
	// SourceDomain and DestinationDomain are pinned at creation; the
	// destination is DomainSolana.
	SourceDomain, DestinationDomain Domain
	// MintRecipient is the Solana USDC token account the mint credits
	// (web3.md §2.8: the token account, not the wallet); pinned.
	MintRecipient chain.Address

	// BurnTxHash, BurnLogIndex and BurnBlock identify the verified
	// DepositForBurn (zero before SOURCE_VERIFIED).
	BurnTxHash   TxHash
	BurnLogIndex uint32
	BurnBlock    uint64
	// Depositor signed the burn; MaxFee and MinFinalityThreshold are what
	// it asked for.
	Depositor            EVMAddress
	MaxFee               money.Atomic
	MinFinalityThreshold uint32
	// SourceMessage is the MessageSent bytes of the burn, as logged.
	SourceMessage []byte

	// Message and Attestation are what the platform fetched from the
	// attestation service (nil before ATTESTED); MessageHash is
	// Keccak256(Message), Nonce its nonce (the key of the destination's
	// used-nonce record), FeeExecuted and FinalityThresholdExecuted the
	// attester's.
	Message                   []byte
	Attestation               []byte
	MessageHash               Word
	Nonce                     Word
	FeeExecuted               money.Atomic
	FinalityThresholdExecuted uint32

	// MintSignature and MintSlot identify the Solana transaction that
	// used the nonce ("" before DESTINATION_VERIFIED).
	MintSignature string
	MintSlot      uint64

	// ReviewReason names the check that sent it to REQUIRES_REVIEW.
	ReviewReason string
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// Received is what the recipient is due: Amount minus FeeExecuted.
func (t Transfer) Received() money.Atomic {
	if t.FeeExecuted > t.Amount {
		return 0
	}
	return t.Amount - t.FeeExecuted
}

// move returns t moved by e at now, or INVALID_STATE_TRANSITION.
func (t Transfer) move(e Event, now time.Time) (Transfer, error) {
	to, err := Transition(t.State, e)
	if err != nil {
		return Transfer{}, err
	}
	t.State, t.Version, t.UpdatedAt = to, t.Version+1, now
	return t, nil
}

// Step names the step of a transfer that evidence records.
type Step string

// The steps.
const (
	// StepSource is the burn's verification (source-submitted).
	StepSource Step = "source"
	// StepAttestation is the attestation's fetch and verification.
	StepAttestation Step = "attestation"
	// StepDestination is the mint's verification (destination-submitted).
	StepDestination Step = "destination"
	// StepReconcile is the reconciliation of both sides.
	StepReconcile Step = "reconcile"
)

// Check is one comparison a step made: what the transfer expected, what
// a chain or the attestation service showed, and whether they agree.
type Check struct {
	// Name names the check ("amount", "mint_recipient", ...).
	Name string `json:"name"`
	// Passed reports whether it held.
	Passed bool `json:"passed"`
	// Expected and Actual are the compared values as text (amounts as
	// integers, EVM values as 0x hex, Solana keys in base58).
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// Evidence is what one step observed and how it judged it. It is built
// from the chains and the attestation service alone, never from a
// caller's claim, and never corrected.
type Evidence struct {
	// ID is the record's id (EvidencePrefix); TransferID its transfer.
	ID         string
	TransferID string
	// Step is the step; Outcome what it concluded: verified, pending,
	// attested, replayed (a repeated mint whose nonce an earlier mint
	// used), review or completed.
	Step    Step
	Outcome string
	// Reference is what was read: the burn's transaction hash, the
	// attestation service's lookup, the mint's signature.
	Reference string
	// Checks are the comparisons, in the order they were made.
	Checks []Check
	// ObservedAt is when it was read.
	ObservedAt time.Time
}

// Failed returns the first check that did not hold, and false when all
// did.
func (e Evidence) Failed() (Check, bool) {
	for _, c := range e.Checks {
		if !c.Passed {
			return c, true
		}
	}
	return Check{}, false
}

// The outcomes evidence records.
const (
	OutcomeVerified  = "verified"
	OutcomePending   = "pending"
	OutcomeAttested  = "attested"
	OutcomeReplayed  = "replayed"
	OutcomeReview    = "review"
	OutcomeCompleted = "completed"
)

// EventType is the outbox event type written with a transfer in state s:
// "cctp_transfer." and the state in lower case.
func EventType(s State) string { return "cctp_transfer." + strings.ToLower(string(s)) }

// changed writes the outbox event of t's current state in st's unit of
// work.
func changed(ctx context.Context, st outbox.Writer, now time.Time, t Transfer, evidenceID string) error {
	payload, _ := json.Marshal(map[string]any{"id": t.ID, "state": t.State, "amount": t.Amount.String(),
		"sourceDomain": t.SourceDomain, "destinationDomain": t.DestinationDomain, "mintRecipient": t.MintRecipient.String(),
		"evidenceId": evidenceID, "reviewReason": t.ReviewReason})
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: t.Owner.TenantID, WorkspaceID: t.Owner.WorkspaceID,
		Environment: string(t.Owner.Environment), Type: EventType(t.State), SchemaVersion: 1,
		AggregateID: t.ID, AggregateVersion: t.Version, OccurredAt: now, Payload: payload})
	return err
}

// audit records a's action on t for actor.
func audit(ctx context.Context, st account.AuditWriter, actor *access.Principal, t Transfer, action, requestID string,
	before, after map[string]any) error {
	return account.Audit(ctx, st, actor, account.AuditEntry{TenantID: t.Owner.TenantID, WorkspaceID: t.Owner.WorkspaceID,
		Environment: t.Owner.Environment, Action: action, TargetType: TargetTransfer, TargetID: t.ID, RequestID: requestID,
		Before: before, After: after})
}
