package wire

import (
	"encoding/json"
	"net/http"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// Malformed is the failure of an answer that does not decode.
func Malformed(reason string, cause error) ai.Failure {
	return ai.Failure{Code: fault.ProviderUnavailable, Class: ai.ClassMalformed, Reason: reason, Retryable: true, Cause: cause}
}

// ServerFailure is a retryable failure of the server's side: an error a
// 200 answer or a stream carried, or a stream that ended too soon.
func ServerFailure(reason string, cause error) ai.Failure {
	return ai.Failure{Code: fault.ProviderUnavailable, Class: ai.ClassServer, Reason: reason, Retryable: true, Cause: cause}
}

// Refused is the failure of a refusal an adapter's Refuse classified.
func Refused(code fault.Code, class ai.ErrorClass, retryable bool, reason string, cause error) ai.Failure {
	return ai.Failure{Code: code, Class: class, Retryable: retryable, Reason: reason, Cause: cause}
}

// ByStatus classifies a refusal by its status alone, for what no rule of
// the adapter's dialect matched: 402 credits; 429 rate limit; 401 and 403
// auth; 404 not_found; 408, 409 and 5xx a retryable server failure; 400,
// 413 and 422 invalid input; any other status unexpected_status.
func ByStatus(status int, cause error) ai.Failure {
	switch {
	case status == http.StatusPaymentRequired:
		return Refused(fault.ProviderCreditsExhausted, ai.ClassCredits, false, "", cause)
	case status == http.StatusTooManyRequests:
		return Refused(fault.RateLimited, ai.ClassRateLimit, true, "", cause)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Refused(fault.ProviderUnavailable, ai.ClassAuth, false, "", cause)
	case status == http.StatusNotFound:
		return Refused(fault.ProviderUnavailable, ai.ClassRequest, false, "not_found", cause)
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return Refused(fault.ProviderUnavailable, ai.ClassServer, true, "", cause)
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return Refused(fault.InvalidInput, ai.ClassRequest, false, "", cause)
	}
	return Refused(fault.ProviderUnavailable, ai.ClassServer, false, "unexpected_status", cause)
}

// Absent reports whether a JSON field is missing or null.
func Absent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// emptyObjectSchema is the parameters of a tool that declares none.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// ObjectSchema is a tool's parameters schema as the wires send it: an
// object with no properties when the tool declares none.
func ObjectSchema(params json.RawMessage) json.RawMessage {
	if len(params) == 0 {
		return json.RawMessage(emptyObjectSchema)
	}
	return params
}
