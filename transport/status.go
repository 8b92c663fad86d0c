package transport

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/fault"
)

// codeRow is one row of the status table: a code, its HTTP status and a
// short client-facing description used by the OpenAPI document.
type codeRow struct {
	code        fault.Code
	status      int
	description string
}

// statusTable maps every fault code to its HTTP status. It is the only place
// where a code meets a status; domains never choose statuses. It is built once
// from statusRows and only read afterwards.
var statusTable = indexRows(statusRows())

// indexRows indexes rows by code.
func indexRows(rows []codeRow) map[fault.Code]codeRow {
	m := make(map[fault.Code]codeRow, len(rows))
	for _, r := range rows {
		m[r.code] = r
	}
	return m
}

// statusRows lists the table's rows, grouped by status. 402 is never used:
// subscription, entitlement and feature gaps are 403 so that clients branch on
// the code, not on a payment status.
func statusRows() []codeRow {
	return []codeRow{
		{fault.InvalidInput, http.StatusBadRequest, "the request is malformed or out of range; details.field names the path"},
		{fault.InvalidAmount, http.StatusBadRequest, "an amount is malformed or out of range"},
		{fault.IdempotencyKeyRequired, http.StatusBadRequest, "the route requires an Idempotency-Key header"},
		{fault.CallbackFailed, http.StatusBadRequest, "a provider callback could not be verified or applied"},

		{fault.Unauthenticated, http.StatusUnauthorized, "no valid credential was presented"},
		{fault.SessionExpired, http.StatusUnauthorized, "the session, token or key has expired"},
		{fault.ReauthenticationRequired, http.StatusUnauthorized, "the route needs a recent sign-in"},

		{fault.AccessDenied, http.StatusForbidden, "a permission, scope or resource policy denies the request"},
		{fault.WorkspaceAccessDenied, http.StatusForbidden, "no active membership of, or scope over, the workspace"},
		{fault.SubscriptionRequired, http.StatusForbidden, "the workspace needs a subscription"},
		{fault.EntitlementRequired, http.StatusForbidden, "the workspace's plan lacks the entitlement"},
		{fault.FeatureDisabled, http.StatusForbidden, "the feature is disabled for the caller"},

		{fault.NotFound, http.StatusNotFound, "the resource does not exist or is not visible to the caller"},
		{fault.RouteNotFound, http.StatusNotFound, "no route serves the path"},
		{fault.MethodNotAllowed, http.StatusMethodNotAllowed, "the path does not serve the method; see the Allow header"},

		{fault.Conflict, http.StatusConflict, "the write conflicts with the resource's current state"},
		{fault.DirectActivationDisabled, http.StatusForbidden, "paid plans are activated only by a provider-confirmed checkout"},
		{fault.InvalidState, http.StatusConflict, "the state machine does not allow the transition"},
		{fault.IdempotencyConflict, http.StatusConflict, "the Idempotency-Key was used with a different request or principal"},
		{fault.IdempotencyInProgress, http.StatusConflict, "the first request with this Idempotency-Key is still running"},
		{fault.ResultNotReady, http.StatusConflict, "the operation has not completed yet"},
		{fault.QuoteMismatch, http.StatusConflict, "the request differs from the quote it references"},
		{fault.TermsMismatch, http.StatusConflict, "the terms hash differs from the content hash of the rights policy version it quotes"},
		{fault.ReconciliationDrift, http.StatusConflict, "reconciliation found drift; the operation is held"},
		{fault.RequiresReview, http.StatusConflict, "a person must review the operation before it continues"},

		{fault.ResultExpired, http.StatusGone, "the result is no longer available"},
		{fault.QuoteExpired, http.StatusGone, "the quote's lifetime has passed"},

		{fault.PayloadTooLarge, http.StatusRequestEntityTooLarge, "the request body exceeds the route's limit; details.limit gives it"},
		{fault.UnsupportedMediaType, http.StatusUnsupportedMediaType, "the request body's content type is not one the route takes (application/json unless documented otherwise)"},
		{fault.RangeNotSatisfiable, http.StatusRequestedRangeNotSatisfiable, "the Range header lies past the end of the content; see Content-Range"},

		{fault.CapabilityUnsupported, http.StatusUnprocessableEntity, "the capability snapshot cannot serve the request"},
		{fault.ProviderCredentialInvalid, http.StatusUnprocessableEntity, "the provider rejected the configured credential"},
		{fault.ProviderCreditsExhausted, http.StatusUnprocessableEntity, "the provider account has no credits left"},
		{fault.ContentPolicyRejected, http.StatusUnprocessableEntity, "the provider refused the content"},
		{fault.InsufficientCredits, http.StatusUnprocessableEntity, "the credit balance does not cover the request"},
		{fault.WalletRequired, http.StatusUnprocessableEntity, "a verified wallet is required"},
		{fault.WalletMismatch, http.StatusUnprocessableEntity, "the wallet differs from the bound wallet"},
		{fault.NetworkMismatch, http.StatusUnprocessableEntity, "the network differs from the bound network"},
		{fault.TokenNotTrusted, http.StatusUnprocessableEntity, "the token is not in the trusted registry"},
		{fault.InsufficientBalance, http.StatusUnprocessableEntity, "the balance does not cover the amount"},
		{fault.InsufficientNativeReserve, http.StatusUnprocessableEntity, "too little native coin is left for fees"},
		{fault.SlippageOutOfPolicy, http.StatusUnprocessableEntity, "the slippage is outside the policy bounds"},
		{fault.PriceImpactExceeded, http.StatusUnprocessableEntity, "the price impact exceeds the hard limit"},
		{fault.RouteUnavailable, http.StatusUnprocessableEntity, "no swap route exists for the pair"},
		{fault.SimulationFailed, http.StatusUnprocessableEntity, "the transaction simulation failed"},
		{fault.SignatureRejected, http.StatusUnprocessableEntity, "the signature does not verify"},
		{fault.TransactionFailed, http.StatusUnprocessableEntity, "the chain reports the transaction failed"},
		{fault.VerificationFailed, http.StatusUnprocessableEntity, "the on-chain effects do not match the intent"},
		{fault.URLNotAllowed, http.StatusUnprocessableEntity, "the URL is not one the platform may call (https to a public address only); details.reason says why"},
		{fault.StatementMismatch, http.StatusUnprocessableEntity, "the proof's statement is not bound to the caller's tenant, user and intent"},

		{fault.RateLimited, http.StatusTooManyRequests, "a rate, budget or concurrency limit was reached; see Retry-After"},

		{fault.Internal, http.StatusInternalServerError, "an unexpected failure; quote meta.requestId to support"},
		{fault.SettlementFailed, http.StatusInternalServerError, "the settlement could not be written"},

		{fault.GenerationFailed, http.StatusBadGateway, "the provider reported a failed generation"},
		{fault.SubmissionUncertain, http.StatusBadGateway, "the transaction was submitted but its outcome is unknown until inspected"},

		{fault.ServiceUnavailable, http.StatusServiceUnavailable, "a platform dependency is unavailable"},
		{fault.ProviderUnavailable, http.StatusServiceUnavailable, "the provider cannot be reached or refused service"},
		{fault.BalanceUnavailable, http.StatusServiceUnavailable, "the balance cannot be read (never reported as zero)"},
		{fault.QuoteUnavailable, http.StatusServiceUnavailable, "no executable quote is available now"},
		{fault.SwapPaused, http.StatusServiceUnavailable, "swaps are paused by policy"},
		{fault.SwapNotConfigured, http.StatusServiceUnavailable, "swaps are not configured"},
		{fault.PersistenceNotConfigured, http.StatusServiceUnavailable, "durable storage is not configured"},

		{fault.ProviderTimeout, http.StatusGatewayTimeout, "the provider did not answer in time"},
	}
}

// StatusOf returns the HTTP status of code. A code missing from the table
// (which a test forbids) is treated as 500, like INTERNAL.
func StatusOf(code fault.Code) int {
	if r, ok := statusTable[code]; ok {
		return r.status
	}
	return http.StatusInternalServerError
}

// KnownCode reports whether code is in the status table.
func KnownCode(code fault.Code) bool {
	_, ok := statusTable[code]
	return ok
}

// codeDescription returns the documented meaning of code.
func codeDescription(code fault.Code) string {
	if r, ok := statusTable[code]; ok {
		return r.description
	}
	return code.DefaultMessage()
}

// CodeDescriptions returns, for each status, the codes that produce it in
// the order of fault.Codes, so the OpenAPI document lists them from the same
// table the runtime uses.
func CodeDescriptions() map[int][]fault.Code {
	out := map[int][]fault.Code{}
	for _, c := range fault.Codes() {
		s := StatusOf(c)
		out[s] = append(out[s], c)
	}
	return out
}

// DescribeCodes renders codes as a Markdown list for a response description.
func DescribeCodes(codes []fault.Code) string {
	var b strings.Builder
	for i, c := range codes {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("- `" + string(c) + "` (" + strconv.Itoa(StatusOf(c)) + "): " + codeDescription(c))
	}
	return b.String()
}
