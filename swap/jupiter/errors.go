package jupiter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// The classes of failure. Every error of a Client wraps exactly one of
// them, so errors.Is classifies it; the outermost error is a *fault.Error
// carrying the platform code of the class (see the package doc).
var (
	// ErrNoRoute means the aggregator found no route for the pair and
	// amount (a routing error code such as COULD_NOT_FIND_ANY_ROUTE).
	// Code ROUTE_UNAVAILABLE.
	ErrNoRoute = errors.New("jupiter: no route")
	// ErrUnavailable means no usable answer came: a throttle (429, with a
	// *RateLimited in the chain), a 5xx, a timeout, a transport failure, or
	// an answer that is malformed, too large or inconsistent with the
	// request. Code PROVIDER_UNAVAILABLE; details.retryable says whether a
	// later attempt may succeed.
	ErrUnavailable = errors.New("jupiter: aggregator unavailable")
	// ErrRejected means the aggregator refused the request itself: a 400
	// without a routing code (QUOTE_UNAVAILABLE), a refused key (401, 403)
	// or any other 4xx (PROVIDER_UNAVAILABLE, not retryable).
	ErrRejected = errors.New("jupiter: request rejected")
	// ErrSimulationFailed means /swap-instructions answered with a
	// non-null simulationError (a *SimulationError in the chain). Code
	// SIMULATION_FAILED.
	ErrSimulationFailed = errors.New("jupiter: swap simulation failed")
)

// IsRoutingCode reports whether code is one of the aggregator's routing
// error codes (swap.md §1.6), which the adapter reports as ErrNoRoute.
func IsRoutingCode(code string) bool {
	switch code {
	case "NO_ROUTES_FOUND", "COULD_NOT_FIND_ANY_ROUTE", "ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT", "MARKET_NOT_FOUND",
		"TOKEN_NOT_TRADABLE", "NOT_SUPPORTED", "CIRCULAR_ARBITRAGE_IS_DISABLED", "CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD":
		return true
	}
	return false
}

// APIError is an answer with an error status other than 429.
type APIError struct {
	// Status is the HTTP status.
	Status int
	// ErrorCode is the body's errorCode, "" when it had none.
	ErrorCode string
	// Message is the body's error text (or the start of a body that is not
	// the {error, errorCode} shape), at most 200 bytes, with the API key
	// removed should the aggregator ever echo it.
	Message string
	// RequestID is the x-api-gateway-request-id header, "" when absent.
	RequestID string

	class error
}

// Error describes the answer.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jupiter: HTTP %d", e.Status)
	if e.ErrorCode != "" {
		b.WriteString(" " + e.ErrorCode)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Unwrap returns the error's class: ErrNoRoute, ErrUnavailable or
// ErrRejected.
func (e *APIError) Unwrap() error { return e.class }

// RateLimited is a 429 answer: the organisation's window (or the
// gateway's firewall) is spent. Its class is ErrUnavailable.
type RateLimited struct {
	// Message is the body's error text ("[API Gateway] Too many
	// requests"), at most 200 bytes.
	Message string
	// Remaining is x-ratelimit-remaining (it can be zero or negative);
	// nil when the header is absent or not an integer.
	Remaining *int64
	// Current is x-ratelimit-current; nil when absent or not an integer.
	Current *int64
	// Reset is x-ratelimit-reset (Unix seconds), the zero time when absent
	// or not an integer.
	Reset time.Time
	// RequestID is the x-api-gateway-request-id header, "" when absent.
	RequestID string
}

// Error describes the throttle.
func (e *RateLimited) Error() string {
	var b strings.Builder
	b.WriteString("jupiter: HTTP 429 rate limited")
	if e.Remaining != nil {
		fmt.Fprintf(&b, ", remaining %d", *e.Remaining)
	}
	if e.Current != nil {
		fmt.Fprintf(&b, ", current %d", *e.Current)
	}
	if !e.Reset.IsZero() {
		fmt.Fprintf(&b, ", reset %d", e.Reset.Unix())
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Unwrap returns ErrUnavailable.
func (e *RateLimited) Unwrap() error { return ErrUnavailable }

// SimulationError is the simulationError object of a /swap-instructions
// answer: the aggregator simulated the swap and it failed.
type SimulationError struct {
	// ErrorCode is the object's errorCode.
	ErrorCode string
	// Message is the object's error text, at most 200 bytes.
	Message string
}

// Error describes the failed simulation.
func (e *SimulationError) Error() string {
	return fmt.Sprintf("jupiter: simulation failed: %s: %s", e.ErrorCode, e.Message)
}

// Unwrap returns ErrSimulationFailed.
func (e *SimulationError) Unwrap() error { return ErrSimulationFailed }

// Reasons reported in details.reason of PROVIDER_UNAVAILABLE and
// QUOTE_UNAVAILABLE errors.
const (
	ReasonRateLimited       = "rate_limited"       // 429
	ReasonServerError       = "server_error"       // 5xx
	ReasonTimeout           = "timeout"            // the call's deadline passed
	ReasonCanceled          = "canceled"           // the caller's context was cancelled
	ReasonUnreachable       = "unreachable"        // a transport failure
	ReasonAddressRefused    = "address_refused"    // the URL guard refused the address
	ReasonMalformedResponse = "malformed_response" // the answer does not parse or breaks the wire's rules
	ReasonResponseTooLarge  = "response_too_large" // the answer exceeds Config.MaxResponseBytes
	ReasonQuoteMismatch     = "quote_mismatch"     // the quote does not echo the request
	ReasonUnexpectedStatus  = "unexpected_status"  // a status that is neither 200 nor an error
	ReasonCredentialRefused = "credential_refused" // 401 or 403
	ReasonProviderRejected  = "provider_rejected"  // another 4xx
)

// unavailable is a PROVIDER_UNAVAILABLE error of class ErrUnavailable.
func unavailable(op, reason, message string, retryable bool, cause error) *fault.Error {
	if cause == nil {
		cause = ErrUnavailable
	} else if !errors.Is(cause, ErrUnavailable) {
		cause = fmt.Errorf("%w: %w", ErrUnavailable, cause)
	}
	return (&fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: message, Err: cause}).
		With("reason", reason).With("retryable", retryable)
}

// malformed is the error of an answer that breaks the wire's rules at
// field (a JSON path such as "routePlan[0].swapInfo.outAmount").
func malformed(op, field string, cause error) *fault.Error {
	return unavailable(op, ReasonMalformedResponse, "The swap aggregator sent a malformed answer.", true,
		fmt.Errorf("%s: %w", field, cause)).With("field", field)
}

// transportError maps a failed round trip or body read. ctx is the call's
// context (the Client's timeout applied).
func transportError(op string, ctx context.Context, err error) *fault.Error {
	var ne net.Error
	switch {
	case errors.Is(err, urlguard.ErrRefused):
		return unavailable(op, ReasonAddressRefused, "The swap aggregator's address is not allowed.", false, err).
			With("guard_reason", urlguard.Reason(err))
	case fault.Is(err, fault.PayloadTooLarge):
		return unavailable(op, ReasonResponseTooLarge, "The swap aggregator's answer is too large.", false, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()):
		return unavailable(op, ReasonTimeout, "The swap aggregator did not answer in time.", true, err)
	case errors.Is(ctx.Err(), context.Canceled):
		return unavailable(op, ReasonCanceled, "The request to the swap aggregator was cancelled.", false,
			fmt.Errorf("%w: %w", ctx.Err(), err))
	}
	return unavailable(op, ReasonUnreachable, "The swap aggregator cannot be reached.", true, err)
}

// errorBody is the aggregator's error shape.
type errorBody struct {
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
}

// saysNoRoute reports whether an error text without errorCode means "no
// route" (the errorCode field is not in the published schema).
func saysNoRoute(msg string) bool {
	lower := strings.ToLower(msg)
	for _, m := range []string{"could not find any route", "no routes found", "no route found"} {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// statusError maps an answer whose status is not 200. key is removed from
// any text kept.
func statusError(op string, status int, body []byte, h http.Header, key string) *fault.Error {
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil || (eb.Error == "" && eb.ErrorCode == "") {
		eb = errorBody{Error: strings.TrimSpace(string(body))}
	}
	msg := clip(scrub(eb.Error, key), 200)
	code := clip(scrub(eb.ErrorCode, key), 100)
	reqID := clip(h.Get("x-api-gateway-request-id"), 100)
	if status == http.StatusTooManyRequests {
		rl := &RateLimited{Message: msg, RequestID: reqID,
			Remaining: headerInt(h, "x-ratelimit-remaining"), Current: headerInt(h, "x-ratelimit-current")}
		if r := headerInt(h, "x-ratelimit-reset"); r != nil {
			rl.Reset = time.Unix(*r, 0).UTC()
		}
		e := unavailable(op, ReasonRateLimited, "The swap aggregator is rate limiting requests.", true, rl)
		if rl.Remaining != nil {
			e = e.With("remaining", *rl.Remaining)
		}
		if !rl.Reset.IsZero() {
			e = e.With("reset", rl.Reset.Unix())
		}
		return e
	}
	ae := &APIError{Status: status, ErrorCode: code, Message: msg, RequestID: reqID}
	noRoute := IsRoutingCode(eb.ErrorCode) || (eb.ErrorCode == "" && status == http.StatusBadRequest && saysNoRoute(eb.Error))
	switch {
	case noRoute && status >= 400 && status < 500:
		ae.class = ErrNoRoute
		e := &fault.Error{Op: op, Code: fault.RouteUnavailable, Message: "No route was found for this pair and amount.", Err: ae}
		e = e.With("retryable", false)
		if code != "" {
			e = e.With("provider_code", code)
		}
		return e
	case status >= 500:
		ae.class = ErrUnavailable
		return unavailable(op, ReasonServerError, "The swap aggregator is unavailable.", true, ae).With("status", status)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		ae.class = ErrRejected
		return (&fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The swap aggregator refused the platform's credential.", Err: ae}).
			With("reason", ReasonCredentialRefused).With("retryable", false).With("status", status)
	case status == http.StatusBadRequest:
		ae.class = ErrRejected
		e := (&fault.Error{Op: op, Code: fault.QuoteUnavailable, Message: "The swap aggregator refused the request.", Err: ae}).
			With("reason", ReasonProviderRejected).With("retryable", false).With("status", status)
		if code != "" {
			e = e.With("provider_code", code)
		}
		return e
	case status >= 400:
		ae.class = ErrRejected
		return (&fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The swap aggregator refused the request.", Err: ae}).
			With("reason", ReasonProviderRejected).With("retryable", false).With("status", status)
	}
	ae.class = ErrUnavailable
	return unavailable(op, ReasonUnexpectedStatus, "The swap aggregator sent an unexpected answer.", true, ae).With("status", status)
}

// headerInt parses an integer header; nil when absent or malformed.
func headerInt(h http.Header, name string) *int64 {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// scrub removes key from s.
func scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
