package relay

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// SendClass is how a node answered a send, and so what the relay does
// next.
type SendClass string

// The send classes (chain.md §1.4 and §1.5).
const (
	// SendAccepted: the node returned the signature.
	SendAccepted SendClass = "accepted"
	// SendAlreadyProcessed: preflight answered AlreadyProcessed (-32002);
	// the transaction is on chain, which counts as sent.
	SendAlreadyProcessed SendClass = "already_processed"
	// SendUncertain: no answer (a timeout, an unreachable or unhealthy
	// node, any error the node did not tie to the transaction); it may
	// or may not be in flight, so the signature is inspected before any
	// retry.
	SendUncertain SendClass = "uncertain"
	// SendStaleBlockhash: preflight answered BlockhashNotFound. The node
	// may lag behind the blockhash or the blockhash may have lapsed; the
	// drop rule decides, never this answer.
	SendStaleBlockhash SendClass = "stale_blockhash"
	// SendPreflightFailed: the simulation failed (-32002 with any other
	// error): the transaction can never succeed as signed.
	SendPreflightFailed SendClass = "preflight_failed"
	// SendMalformed: the node refused the bytes as a transaction (-32602).
	SendMalformed SendClass = "malformed"
	// SendSignatureRejected: signature verification failed (-32003).
	SendSignatureRejected SendClass = "signature_rejected"
)

// Sent reports whether the node holds the transaction: accepted, or
// already processed.
func (c SendClass) Sent() bool { return c == SendAccepted || c == SendAlreadyProcessed }

// Refused reports whether the node refused the transaction for good: the
// submission is failed and never sent again.
func (c SendClass) Refused() bool {
	return c == SendPreflightFailed || c == SendMalformed || c == SendSignatureRejected
}

// Code is the fault code a submission records after an answer of class c:
// "" once sent, SUBMISSION_UNCERTAIN while the outcome is unknown (also
// for a stale blockhash), SIGNATURE_REJECTED for a bad signature and
// TRANSACTION_FAILED for any other refusal. A caller whose own contract
// names a failed simulation SIMULATION_FAILED maps SendPreflightFailed
// itself.
func (c SendClass) Code() fault.Code {
	switch c {
	case SendUncertain, SendStaleBlockhash:
		return fault.SubmissionUncertain
	case SendSignatureRejected:
		return fault.SignatureRejected
	case SendPreflightFailed, SendMalformed:
		return fault.TransactionFailed
	}
	return ""
}

// Classify classifies a SendTransaction error (nil is SendAccepted) and
// returns, for a refusal, the chain's reason: the simulation's error (a
// unit error's name such as "InsufficientFundsForFee", or an instruction
// error's JSON), "TransactionSignatureVerificationFailure", or the node's
// message for malformed bytes.
func Classify(err error) (SendClass, string) {
	if err == nil {
		return SendAccepted, ""
	}
	var re *chain.RPCError
	if !errors.As(err, &re) {
		return SendUncertain, ""
	}
	switch re.Code {
	case chain.CodePreflightFailure:
		name := simulationErr(re)
		switch name {
		case "AlreadyProcessed":
			return SendAlreadyProcessed, ""
		case "BlockhashNotFound":
			return SendStaleBlockhash, name
		}
		return SendPreflightFailed, name
	case chain.CodeSignatureFailure:
		return SendSignatureRejected, "TransactionSignatureVerificationFailure"
	case chain.CodeInvalidParams:
		return SendMalformed, re.Message
	}
	return SendUncertain, ""
}

// simulationErr extracts the simulation's err from a -32002's data: a
// unit error's name, or an instruction error's JSON. Without data it
// falls back on the message.
func simulationErr(re *chain.RPCError) string {
	var d struct {
		Err json.RawMessage `json:"err"`
	}
	if re.Data != "" && json.Unmarshal([]byte(re.Data), &d) == nil && len(d.Err) > 0 && string(d.Err) != "null" {
		var name string
		if json.Unmarshal(d.Err, &name) == nil {
			return name
		}
		return string(d.Err)
	}
	switch {
	case strings.Contains(re.Message, "Blockhash not found"):
		return "BlockhashNotFound"
	case strings.Contains(re.Message, "AlreadyProcessed"), strings.Contains(re.Message, "already been processed"):
		return "AlreadyProcessed"
	}
	return re.Message
}
