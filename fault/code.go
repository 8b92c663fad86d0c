package fault

// Code is a stable, machine-readable error code in the spec's UPPER_SNAKE
// form. Codes cross the wire: they are append-only, never renamed.
type Code string

// Generic and gateway codes.
const (
	// Internal is an unexpected failure; its cause is logged, never returned.
	Internal Code = "INTERNAL"
	// InvalidInput is a malformed or out-of-range request; details.field names the path.
	InvalidInput Code = "INVALID_INPUT"
	// NotFound is a missing resource, or one the caller may not know exists.
	NotFound Code = "NOT_FOUND"
	// RouteNotFound is a path no route serves.
	RouteNotFound Code = "ROUTE_NOT_FOUND"
	// MethodNotAllowed is a known path asked with a method it does not serve.
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// PayloadTooLarge is a request body over the route's limit.
	PayloadTooLarge Code = "PAYLOAD_TOO_LARGE"
	// UnsupportedMediaType is a request body whose Content-Type the route does not take.
	UnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// Conflict is a write that conflicts with the current state of a resource.
	Conflict Code = "CONFLICT"
	// DirectActivationDisabled is a direct activation of a paid plan: only a
	// checkout the payment provider confirmed activates one.
	DirectActivationDisabled Code = "DIRECT_ACTIVATION_DISABLED"
	// InvalidState is a transition the resource's state machine does not allow.
	InvalidState Code = "INVALID_STATE_TRANSITION"
	// ServiceUnavailable is a dependency of the platform itself (database, worker) that is down.
	ServiceUnavailable Code = "SERVICE_UNAVAILABLE"
	// RangeNotSatisfiable is a Range header no byte of the content satisfies.
	RangeNotSatisfiable Code = "RANGE_NOT_SATISFIABLE"
)

// Access codes (spec, Errors: Access).
const (
	// Unauthenticated means no valid credential was presented.
	Unauthenticated Code = "UNAUTHENTICATED"
	// SessionExpired means the session or key was valid once and has expired.
	SessionExpired Code = "SESSION_EXPIRED"
	// AccessDenied is a permission or resource-policy failure.
	AccessDenied Code = "ACCESS_DENIED"
	// WorkspaceAccessDenied is a membership or workspace-scope failure.
	WorkspaceAccessDenied Code = "WORKSPACE_ACCESS_DENIED"
	// SubscriptionRequired means the workspace needs a subscription.
	SubscriptionRequired Code = "SUBSCRIPTION_REQUIRED"
	// EntitlementRequired means the workspace's plan lacks an entitlement.
	EntitlementRequired Code = "ENTITLEMENT_REQUIRED"
	// FeatureDisabled means a feature flag is off for the caller.
	FeatureDisabled Code = "FEATURE_DISABLED"
	// ReauthenticationRequired means the route needs a recent sign-in.
	ReauthenticationRequired Code = "REAUTHENTICATION_REQUIRED"
	// RateLimited means a request, concurrency or budget limit was reached.
	RateLimited Code = "RATE_LIMITED"
)

// Idempotency codes.
const (
	// IdempotencyKeyRequired means the route requires an Idempotency-Key header.
	IdempotencyKeyRequired Code = "IDEMPOTENCY_KEY_REQUIRED"
	// IdempotencyConflict means the key was used before with another request or principal.
	IdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	// IdempotencyInProgress means the first request with this key has not finished yet.
	IdempotencyInProgress Code = "IDEMPOTENCY_IN_PROGRESS"
)

// Operation, capability and provider codes (spec, Errors: Provider).
const (
	// ResultNotReady is a result route asked before the operation completed.
	ResultNotReady Code = "RESULT_NOT_READY"
	// CapabilityUnsupported is a request the active capability snapshot cannot serve.
	CapabilityUnsupported Code = "CAPABILITY_UNSUPPORTED"
	// ProviderCredentialInvalid means the provider rejected the credential.
	ProviderCredentialInvalid Code = "PROVIDER_CREDENTIAL_INVALID"
	// ProviderCreditsExhausted means the provider account has no credits.
	ProviderCreditsExhausted Code = "PROVIDER_CREDITS_EXHAUSTED"
	// ProviderUnavailable means the provider cannot be reached or refused service.
	ProviderUnavailable Code = "PROVIDER_UNAVAILABLE"
	// ProviderTimeout means the provider did not answer in time.
	ProviderTimeout Code = "PROVIDER_TIMEOUT"
	// ContentPolicyRejected means the provider refused the content.
	ContentPolicyRejected Code = "CONTENT_POLICY_REJECTED"
	// GenerationFailed means the provider reported a failed generation, or
	// a model's structured answer stayed invalid after its one retry.
	GenerationFailed Code = "GENERATION_FAILED"
	// CallbackFailed means a provider callback could not be verified or applied.
	CallbackFailed Code = "CALLBACK_FAILED"
	// ResultExpired means the result is no longer available.
	ResultExpired Code = "RESULT_EXPIRED"
	// InsufficientCredits means the credit balance does not cover the request.
	InsufficientCredits Code = "INSUFFICIENT_CREDITS"
)

// Swap and chain codes (spec, Errors: Swap).
const (
	WalletRequired            Code = "WALLET_REQUIRED"             // a verified wallet is required
	WalletMismatch            Code = "WALLET_MISMATCH"             // the wallet differs from the bound one
	NetworkMismatch           Code = "NETWORK_MISMATCH"            // the network differs from the bound one
	TokenNotTrusted           Code = "TOKEN_NOT_TRUSTED"           // the mint is not in the trusted registry
	BalanceUnavailable        Code = "BALANCE_UNAVAILABLE"         // the balance cannot be read; never zero
	InsufficientBalance       Code = "INSUFFICIENT_BALANCE"        // the balance does not cover the amount
	InsufficientNativeReserve Code = "INSUFFICIENT_NATIVE_RESERVE" // too little native coin for fees
	InvalidAmount             Code = "INVALID_AMOUNT"              // a malformed or out-of-range amount
	QuoteUnavailable          Code = "QUOTE_UNAVAILABLE"           // no executable quote
	QuoteExpired              Code = "QUOTE_EXPIRED"               // the quote's lifetime passed
	QuoteMismatch             Code = "QUOTE_MISMATCH"              // the request differs from the quote
	SlippageOutOfPolicy       Code = "SLIPPAGE_OUT_OF_POLICY"      // slippage outside the policy bounds
	PriceImpactExceeded       Code = "PRICE_IMPACT_EXCEEDED"       // price impact over the hard limit
	RouteUnavailable          Code = "ROUTE_UNAVAILABLE"           // no route for the pair
	SimulationFailed          Code = "SIMULATION_FAILED"           // the transaction simulation failed
	SignatureRejected         Code = "SIGNATURE_REJECTED"          // the signature does not verify
	SubmissionUncertain       Code = "SUBMISSION_UNCERTAIN"        // submitted; outcome unknown until inspected
	TransactionFailed         Code = "TRANSACTION_FAILED"          // the chain reports failure
	VerificationFailed        Code = "VERIFICATION_FAILED"         // effects do not match the intent
	SettlementFailed          Code = "SETTLEMENT_FAILED"           // settlement could not be written
	ReconciliationDrift       Code = "RECONCILIATION_DRIFT"        // reconciliation found drift
	RequiresReview            Code = "REQUIRES_REVIEW"             // a person must review the operation
	SwapPaused                Code = "SWAP_PAUSED"                 // swaps are paused by policy
	SwapNotConfigured         Code = "SWAP_NOT_CONFIGURED"         // swaps are not configured
	PersistenceNotConfigured  Code = "PERSISTENCE_NOT_CONFIGURED"  // durable storage is not configured
)

// Proof verification codes (web3/zk).
const (
	// StatementMismatch means a proof's statement is not bound to the
	// caller's tenant, user and intent: its binding input differs from the
	// one the server computes from its records.
	StatementMismatch Code = "STATEMENT_MISMATCH"
)

// Marketplace codes.
const (
	// TermsMismatch means a terms hash differs from the content hash of the
	// rights policy version it quotes.
	TermsMismatch Code = "TERMS_MISMATCH"
)

// Outbound URL codes.
const (
	// URLNotAllowed means a URL the platform would call (a webhook
	// endpoint) is not one it may call: https to a public address only;
	// details.field names the field and details.reason the URL guard's
	// reason (package urlguard), or unresolved_host.
	URLNotAllowed Code = "URL_NOT_ALLOWED"
)

// codes lists every code, in declaration order, for Codes.
var codes = []Code{
	Internal, InvalidInput, NotFound, RouteNotFound, MethodNotAllowed, PayloadTooLarge,
	UnsupportedMediaType, Conflict, DirectActivationDisabled, InvalidState, ServiceUnavailable, RangeNotSatisfiable,
	Unauthenticated, SessionExpired, AccessDenied, WorkspaceAccessDenied, SubscriptionRequired,
	EntitlementRequired, FeatureDisabled, ReauthenticationRequired, RateLimited,
	IdempotencyKeyRequired, IdempotencyConflict, IdempotencyInProgress,
	ResultNotReady, CapabilityUnsupported, ProviderCredentialInvalid, ProviderCreditsExhausted,
	ProviderUnavailable, ProviderTimeout, ContentPolicyRejected, GenerationFailed, CallbackFailed,
	ResultExpired, InsufficientCredits,
	WalletRequired, WalletMismatch, NetworkMismatch, TokenNotTrusted, BalanceUnavailable,
	InsufficientBalance, InsufficientNativeReserve, InvalidAmount, QuoteUnavailable, QuoteExpired,
	QuoteMismatch, SlippageOutOfPolicy, PriceImpactExceeded, RouteUnavailable, SimulationFailed,
	SignatureRejected, SubmissionUncertain, TransactionFailed, VerificationFailed, SettlementFailed,
	ReconciliationDrift, RequiresReview, SwapPaused, SwapNotConfigured, PersistenceNotConfigured,
	StatementMismatch,
	TermsMismatch,
	URLNotAllowed,
}

// Codes returns every code the platform can return, so tables keyed by code
// (HTTP status, documentation) can be checked for completeness.
func Codes() []Code { return append([]Code(nil), codes...) }

// DefaultMessage is the client-safe message used when an error sets none.
func (c Code) DefaultMessage() string {
	switch c {
	case Internal:
		return "An internal error occurred."
	case InvalidInput:
		return "The request is invalid."
	case NotFound:
		return "The resource was not found."
	case RouteNotFound:
		return "No route serves this path."
	case MethodNotAllowed:
		return "The method is not allowed for this path."
	case PayloadTooLarge:
		return "The request body is too large."
	case UnsupportedMediaType:
		return "The request content type is not supported."
	case Unauthenticated:
		return "Authentication is required."
	case SessionExpired:
		return "The credential has expired."
	case AccessDenied:
		return "The caller is not allowed to do this."
	case WorkspaceAccessDenied:
		return "The caller has no access to this workspace."
	case RateLimited:
		return "Too many requests."
	case IdempotencyKeyRequired:
		return "This route requires an Idempotency-Key header."
	case IdempotencyConflict:
		return "The Idempotency-Key was used with a different request."
	case IdempotencyInProgress:
		return "A request with this Idempotency-Key is still being processed."
	case ServiceUnavailable:
		return "A platform service is unavailable."
	case RangeNotSatisfiable:
		return "The requested range is not satisfiable."
	}
	return "The request failed."
}
