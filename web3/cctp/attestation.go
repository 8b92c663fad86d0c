package cctp

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// What the attestation service answered, as Result.Observed says it.
const (
	ObservedNotIndexed = "not_indexed"
	ObservedPending    = "pending"
	ObservedComplete   = "complete"
)

// SignatureSize is one attester signature's length (r, s, v).
const SignatureSize = 65

// FetchAttestation asks the attestation service, from the server and
// never from a caller, for the message of the transfer's verified burn.
// Not indexed yet (404) changes nothing; pending moves the transfer to
// ATTESTATION_PENDING; complete moves it to ATTESTED once the attested
// message is the burn's (its source form equals the logged MessageSent),
// its nonce is set, the fee executed is within maxFee, the finality
// executed reaches the burn's threshold, and exactly SignatureThreshold
// signatures over its Keccak-256 recover to distinct configured
// attesters in increasing order, as the destination's
// MessageTransmitterV2 requires. A service that answers for the burn's
// transaction with no message of the burn, or with a complete attestation
// that fails a check, is unexplained: the transfer goes to
// REQUIRES_REVIEW with the evidence.
//
// Errors: NOT_FOUND; INVALID_STATE_TRANSITION before the burn is
// verified; PROVIDER_UNAVAILABLE when the service cannot be read
// (details.reason rate_limited and retryAfterSeconds while backing off
// after a 429). A transfer attested before, or closed, is a Replay.
func (s *Service) FetchAttestation(ctx context.Context, st Store, p *access.Principal, id string) (Result, error) {
	const op = "cctp.FetchAttestation"
	t, err := st.CCTPTransfer(ctx, OwnerOf(p), id)
	if err != nil {
		return Result{}, fault.Wrap(op, err)
	}
	e, err := s.environment(op, t.Owner.Environment)
	if err != nil {
		return Result{}, err
	}
	switch t.State {
	case StateSourceVerified, StateAttestationPending:
	case StateCreated:
		_, err := Transition(t.State, EventAttest)
		return Result{}, err
	default:
		return Result{Transfer: t, Replay: true}, nil
	}
	msgs, err := e.Attestations.Messages(ctx, t.SourceDomain, t.BurnTxHash)
	if errors.Is(err, ErrNotIndexed) {
		return Result{Transfer: t, Observed: ObservedNotIndexed}, nil
	}
	if err != nil {
		if fault.CodeOf(err) == fault.ProviderUnavailable {
			return Result{}, fault.Wrap(op, err)
		}
		return Result{}, unavailable(op, "attestation_service_unavailable", err)
	}
	ev := Evidence{Step: StepAttestation, ObservedAt: s.cfg.Clock.Now().UTC(),
		Reference: "attestations:" + strconv.FormatUint(uint64(t.SourceDomain), 10) + ":" + t.BurnTxHash.String()}
	att, ok := matchBurn(t, msgs)
	if !ok {
		ev.Checks = []Check{{Name: "message", Expected: "the burn's message " + Keccak256(t.SourceMessage).String(),
			Actual: strconv.Itoa(len(msgs)) + " messages, none of them the burn's"}}
		r := review(t, "attestation_message_mismatch", ev)
		r.Observed = string(statusOf(msgs))
		return r, nil
	}
	if att.Status != AttestationComplete {
		r := Result{Transfer: t, Observed: ObservedPending}
		if t.State == StateSourceVerified {
			ev.Outcome = OutcomePending
			ev.Checks = []Check{{Name: "message", Expected: "the burn's message", Actual: "indexed, " + string(att.Status), Passed: true}}
			r.Event, r.Evidence = EventAttestationPending, &ev
		}
		return r, nil
	}
	m, _ := DecodeMessage(att.Message) // matchBurn decoded it
	ev.Checks = s.attestationChecks(t, e, m, att)
	if c, failed := ev.Failed(); failed {
		r := review(t, "attestation_"+c.Name, ev)
		r.Observed = ObservedComplete
		return r, nil
	}
	fee, _ := m.Body.FeeExecuted.Uint64()
	ev.Outcome = OutcomeAttested
	t.Message, t.Attestation = bytes.Clone(att.Message), bytes.Clone(att.Attestation)
	t.MessageHash, t.Nonce, t.FeeExecuted, t.FinalityThresholdExecuted = Keccak256(att.Message), m.Nonce, money.Atomic(fee),
		m.FinalityThresholdExecuted
	return Result{Transfer: t, Event: EventAttest, Evidence: &ev, Observed: ObservedComplete}, nil
}

// matchBurn returns the message of msgs whose source form is the burn's
// logged message.
func matchBurn(t Transfer, msgs []Attested) (Attested, bool) {
	for _, a := range msgs {
		m, err := DecodeMessage(a.Message)
		if err == nil && bytes.Equal(m.SourceForm().Encode(), t.SourceMessage) {
			return a, true
		}
	}
	return Attested{}, false
}

// statusOf is the status the service gave the first message, for the
// observation of a mismatch.
func statusOf(msgs []Attested) AttestationStatus {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].Status
}

// attestationChecks judge a complete attestation of the burn's message.
func (s *Service) attestationChecks(t Transfer, e Environment, m Message, a Attested) []Check {
	fee, feeFits := m.Body.FeeExecuted.Uint64()
	sigOK, sigText := s.verifySignatures(e, Keccak256(a.Message), a.Attestation)
	return []Check{
		{Name: "message", Expected: "the burn's message", Actual: "the burn's message", Passed: true},
		{Name: "nonce", Expected: "a nonce", Actual: m.Nonce.String(), Passed: !m.Nonce.IsZero()},
		{Name: "fee_executed", Expected: "at most " + t.MaxFee.String(), Actual: amountText(m.Body.FeeExecuted),
			Passed: feeFits && fee <= uint64(t.MaxFee)},
		{Name: "finality_threshold_executed", Expected: "at least " + strconv.FormatUint(uint64(t.MinFinalityThreshold), 10),
			Actual: strconv.FormatUint(uint64(m.FinalityThresholdExecuted), 10), Passed: m.FinalityThresholdExecuted >= t.MinFinalityThreshold},
		{Name: "signatures", Expected: strconv.Itoa(e.SignatureThreshold) + " signatures of configured attesters in increasing order",
			Actual: sigText, Passed: sigOK},
	}
}

// verifySignatures checks an attestation as MessageTransmitterV2 does:
// exactly SignatureThreshold signatures over digest, each recovering to a
// configured attester, addresses strictly increasing (so no duplicate).
func (s *Service) verifySignatures(e Environment, digest Word, att []byte) (bool, string) {
	if len(att) != SignatureSize*e.SignatureThreshold {
		return false, strconv.Itoa(len(att)) + " bytes"
	}
	var last EVMAddress
	var signers []string
	for i := 0; i < e.SignatureThreshold; i++ {
		a, err := s.cfg.Recovery.Recover(digest, att[i*SignatureSize:(i+1)*SignatureSize])
		if err != nil {
			return false, "signature " + strconv.Itoa(i) + " does not recover"
		}
		if i > 0 && bytes.Compare(a[:], last[:]) <= 0 {
			return false, "signature " + strconv.Itoa(i) + " out of order or repeated"
		}
		if !slices.Contains(e.Attesters, a) {
			return false, "signature " + strconv.Itoa(i) + " by " + a.String() + ", not an attester"
		}
		last = a
		signers = append(signers, a.String())
	}
	return true, "signed by " + strings.Join(signers, ", ")
}
