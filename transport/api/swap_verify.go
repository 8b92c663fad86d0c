package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/transport"
)

// SwapCheckView is one verification check of a swap's transaction.
type SwapCheckView struct {
	// Name is the check: network, success, signer, extraSigners, uniqueness, programs, tokenPrograms, mints,
	// balances, executableInput, feeRecipient, serviceFee or minimumOutput.
	Name string `json:"name" example:"serviceFee"`
	// Passed reports whether the chain's record agrees with the intent.
	Passed bool `json:"passed" example:"true"`
	// Expected is what the intent expected (amounts as atomic integers, keys in base58).
	Expected string `json:"expected" example:"29400000"`
	// Actual is what the chain recorded.
	Actual string `json:"actual" example:"29400000"`
}

// SwapSettlementView is a swap's one authoritative settlement.
type SwapSettlementView struct {
	// ID identifies the settlement (settlementId).
	ID string `json:"id" example:"sws_0123456789abcdef0123456789abcdef"`
	// Signature is the settled transaction's signature.
	Signature string `json:"signature" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// ServiceFeeAtomic is the service fee the intent bound, atomic units of the input mint, an integer string.
	ServiceFeeAtomic string `json:"serviceFeeAtomic" example:"30000000"`
	// FeeReceivedAtomic is what the fee recipient's account actually gained: the service fee less any Token-2022
	// transfer fee withheld on it. It is the amount recorded as revenue on the financial ledger.
	FeeReceivedAtomic string `json:"feeReceivedAtomic" example:"29400000"`
	// ActualInputAtomic is what left the wallet in the input mint, the service fee included, an integer string.
	ActualInputAtomic string `json:"actualInputAtomic" example:"1500000000"`
	// ActualOutputAtomic is what reached the wallet in the output mint, an integer string.
	ActualOutputAtomic string `json:"actualOutputAtomic" example:"2882101"`
	// Slot is the slot the transaction landed in.
	Slot uint64 `json:"slot" example:"312000123"`
	// ObservedAt is when the platform read the transaction from the cluster.
	ObservedAt time.Time `json:"observedAt"`
}

// SwapReconciliationView is a swap's reconciliation.
type SwapReconciliationView struct {
	// ID identifies the reconciliation (reconciliationId).
	ID string `json:"id" example:"swr_0123456789abcdef0123456789abcdef"`
	// Outcome is MATCH, DRIFT_DETECTED (reported, never corrected), REQUIRES_REVIEW or FAILED.
	Outcome string `json:"outcome" enum:"MATCH,DRIFT_DETECTED,REQUIRES_REVIEW,FAILED" example:"MATCH"`
}

// SwapVerifyView is POST /api/v1/swap/{intentId}/verify: where the swap stands after the platform read its
// transaction from the chain.
type SwapVerifyView struct {
	// OperationID identifies the swap operation.
	OperationID string `json:"operationId" example:"swp_0123456789abcdef0123456789abcdef"`
	// IntentID is the intent verified.
	IntentID string `json:"intentId" example:"swi_0123456789abcdef0123456789abcdef"`
	// QuoteID is its quote.
	QuoteID string `json:"quoteId" example:"swq_0123456789abcdef0123456789abcdef"`
	// Status is the operation's state: SUBMITTED or CONFIRMING while the transaction is pending, SETTLED, RECONCILING
	// or RECONCILED once settled, FAILED when it failed on chain, REQUIRES_REVIEW when its effects do not match the
	// intent.
	Status string `json:"status" example:"SETTLED"`
	// Terminal reports a state no request moves on from.
	Terminal bool `json:"terminal" example:"false"`
	// Pending is true while the cluster does not show the transaction at confirmed commitment yet: nothing changed,
	// and verifying again later (or the platform's own watch) continues. Not an error.
	Pending bool `json:"pending" example:"false"`
	// TransactionSignature is the signature bound to the intent.
	TransactionSignature *string `json:"transactionSignature" example:"5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv"`
	// LastError is the code that left the operation where it is: TRANSACTION_FAILED (failed on chain, nothing
	// settled), VERIFICATION_FAILED (a check failed; the verification is kept as evidence for review),
	// RECONCILIATION_DRIFT or REQUIRES_REVIEW (from reconciliation); null when none.
	LastError *string `json:"lastError" example:"VERIFICATION_FAILED"`
	// Checks are the verification's checks, in order; empty before the transaction was read.
	Checks []SwapCheckView `json:"checks"`
	// Settlement is the operation's one settlement; null until settled.
	Settlement *SwapSettlementView `json:"settlement"`
	// Reconciliation is the operation's reconciliation; null until reconciled.
	Reconciliation *SwapReconciliationView `json:"reconciliation"`
}

// swapVerifyView renders a settlement result.
func swapVerifyView(r swap.SettleResult) SwapVerifyView {
	o := r.Operation
	v := SwapVerifyView{OperationID: o.ID, IntentID: r.Intent.ID, QuoteID: o.QuoteID, Status: string(o.State), Terminal: o.State.Terminal(),
		Pending: r.Pending, TransactionSignature: optionalString(o.Signature), LastError: optionalString(o.LastError),
		Checks: []SwapCheckView{}}
	if r.Verification != nil {
		for _, c := range r.Verification.Verification.Checks {
			v.Checks = append(v.Checks, SwapCheckView{Name: string(c.Name), Passed: c.Passed, Expected: c.Expected, Actual: c.Actual})
		}
	}
	if s := r.Settlement; s != nil {
		v.Settlement = &SwapSettlementView{ID: s.ID, Signature: s.Signature, ServiceFeeAtomic: s.ServiceFeeAtomic.String(),
			FeeReceivedAtomic: s.FeeReceivedAtomic.String(), ActualInputAtomic: s.ActualInputAtomic.String(),
			ActualOutputAtomic: s.ActualOutputAtomic.String(), Slot: s.Slot, ObservedAt: s.ObservedAt}
	}
	if rc := r.Reconciliation; rc != nil {
		v.Reconciliation = &SwapReconciliationView{ID: rc.ID, Outcome: string(rc.Reconciliation.Outcome)}
	}
	return v
}

// swapVerifyRoute is POST /api/v1/swap/{intentId}/verify.
func swapVerifyRoute(svc *swap.Service) Route {
	return Route{Method: http.MethodPost, Pattern: "/api/v1/swap/{intentId}/verify", OperationID: "verifySwap", Tag: transport.TagSwap,
		Auth: transport.AuthSession, Private: true, Permission: access.WalletSign, Idempotency: transport.IdempotencyNone,
		OwnUnitOfWork: true,
		Summary:       "Verify and settle a swap",
		Description: "The specification does not show this body; its fields (status, checks, settlement, reconciliation) are the " +
			"platform's. Reads the transaction bound to the intent from the environment's cluster (never from the browser: no " +
			"economic effect is accepted from the client) and verifies it against the intent: network, success, signer, no other " +
			"signer, signature uniqueness, allowed programs, token programs, mints, executable input, fee recipient, service fee " +
			"and minimum output, each check answered with what was expected and what the chain recorded. While the cluster does " +
			"not show the transaction at confirmed commitment, the answer is pending and nothing changes. A transaction that " +
			"failed on chain leaves the operation FAILED (lastError TRANSACTION_FAILED; nothing settled); one whose effects do " +
			"not match the intent goes to REQUIRES_REVIEW (lastError VERIFICATION_FAILED) with the verification kept as " +
			"evidence; one that matches is SETTLED with exactly one settlement and the service fee the fee recipient received " +
			"recorded once on the financial ledger, and is then reconciled in the background against the finalized transaction " +
			"(RECONCILED with MATCH or DRIFT_DETECTED, or REQUIRES_REVIEW). No body and no Idempotency-Key: every repeat, " +
			"concurrent or not, converges on the one settlement and changes nothing more. Only the user who created the intent, " +
			"in its workspace and environment, may verify it (anyone else: 404 NOT_FOUND); an intent without a submitted " +
			"signature is 409 INVALID_STATE_TRANSITION.",
		Response: SwapVerifyView{Status: string(swap.StateSettled), Checks: []SwapCheckView{{Name: "serviceFee", Passed: true,
			Expected: "29400000", Actual: "29400000"}}, Settlement: &SwapSettlementView{ID: "sws_0123456789abcdef0123456789abcdef"},
			Reconciliation: &SwapReconciliationView{ID: "swr_0123456789abcdef0123456789abcdef", Outcome: "MATCH"}},
		Errors: []string{string(fault.NotFound), string(fault.InvalidState), string(fault.NetworkMismatch), string(fault.ProviderUnavailable),
			string(fault.SwapNotConfigured)},
		Handle: func(ctx context.Context, c *Call) (any, error) {
			res, err := svc.Settle(ctx, swap.OwnerOf(c.Principal), c.PathValue("intentId"))
			if err != nil {
				return nil, err
			}
			if err := c.Commit(ctx, func(Tx) error { return nil }); err != nil {
				return nil, err
			}
			return swapVerifyView(res), nil
		}}
}
