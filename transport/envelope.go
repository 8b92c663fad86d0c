package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Meta is the meta object of every envelope.
type Meta struct {
	// RequestID is the request's id, also sent as the X-Request-Id header.
	RequestID string `json:"requestId" doc:"The request's id, also sent as the X-Request-Id header." example:"req_01hzx3k2m9q8r7t6v5w4y3z2a1"`
	// Timestamp is when the answer was made, by the platform's clock;
	// only routes that document it carry it (the network topology).
	Timestamp *time.Time `json:"timestamp,omitempty" doc:"When the answer was made, by the platform's clock (ISO 8601, UTC); only routes that document it carry it (GET /api/v1/network/platform)."`
}

// Envelope is the success envelope: {"data": ..., "meta": {...}}.
type Envelope struct {
	// Data is the route's response value.
	Data any `json:"data"`
	// Meta carries the request id.
	Meta Meta `json:"meta"`
}

// ErrorBody is the error object of the error envelope.
type ErrorBody struct {
	// Code is the stable machine-readable code clients branch on.
	Code fault.Code `json:"code" doc:"The stable machine-readable error code; clients branch on it, never on the message." example:"INVALID_INPUT"`
	// Message is a client-safe, human-readable explanation.
	Message string `json:"message" doc:"A client-safe, human-readable explanation." example:"The request is invalid."`
	// Details is structured, client-safe context, omitted when empty.
	Details map[string]any `json:"details,omitempty" doc:"Structured, client-safe context such as the field path (field) or a limit (limit)."`
}

// ErrorEnvelope is the failure envelope: {"error": {...}, "meta": {...}}.
type ErrorEnvelope struct {
	// Error describes the failure.
	Error ErrorBody `json:"error"`
	// Meta carries the request id.
	Meta Meta `json:"meta"`
}

// WriteData writes the success envelope around data with status.
func WriteData(w http.ResponseWriter, status int, requestID string, data any) {
	WriteDataMeta(w, status, Meta{RequestID: requestID}, data)
}

// WriteDataMeta writes the success envelope around data with status and
// meta (the request id and, when set, the timestamp).
func WriteDataMeta(w http.ResponseWriter, status int, meta Meta, data any) {
	body, err := encodeEnvelope(Envelope{Data: data, Meta: meta})
	if err != nil {
		WriteError(w, nil, meta.RequestID, fault.Wrap("transport.WriteData", err))
		return
	}
	writeJSON(w, status, meta.RequestID, body)
}

// WriteError writes the error envelope for err. The code, message and
// details come from fault.Public, the status from StatusOf. An INTERNAL error
// is logged with its full cause and the request id at error level; the client
// sees only the generic message. Other codes are logged at debug level only.
// A nil log means slog.Default().
func WriteError(w http.ResponseWriter, log *slog.Logger, requestID string, err error) {
	if log == nil {
		log = slog.Default()
	}
	code, message, details := fault.Public(err)
	if err == nil {
		code, message, details = fault.Internal, fault.Internal.DefaultMessage(), nil
	}
	logFailure(log, requestID, code, err)
	if len(details) == 0 {
		details = nil
	}
	env := ErrorEnvelope{Error: ErrorBody{Code: code, Message: message, Details: details}, Meta: Meta{RequestID: requestID}}
	body, mErr := encodeEnvelope(env)
	if mErr != nil {
		// Details that cannot be encoded are dropped rather than failing the reply.
		log.Error("transport: encode error details", "requestId", requestID, "error", mErr.Error())
		env.Error.Details = nil
		body, _ = encodeEnvelope(env) // code, message and id are plain strings
	}
	status := StatusOf(code)
	setFailureHeaders(w.Header(), status, details)
	writeJSON(w, status, requestID, body)
}

// logFailure logs an internal error's cause at error level and any other
// failure at debug level.
func logFailure(log *slog.Logger, requestID string, code fault.Code, err error) {
	cause := "<nil>"
	if err != nil {
		cause = err.Error()
	}
	if code == fault.Internal {
		log.Error("request failed", "requestId", requestID, "code", string(code), "error", cause)
		return
	}
	if log.Enabled(context.Background(), slog.LevelDebug) {
		log.Debug("request failed", "requestId", requestID, "code", string(code), "error", cause)
	}
}

// setFailureHeaders adds the headers a failure status calls for: a bearer
// challenge on 401, Retry-After on 429 when details.retryAfter is set, and
// Content-Range: bytes */size on 416 when details.size is set.
func setFailureHeaders(h http.Header, status int, details map[string]any) {
	switch status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="platform"`)
	case http.StatusTooManyRequests:
		if s, ok := retryAfterSeconds(details["retryAfter"]); ok {
			h.Set("Retry-After", strconv.FormatInt(s, 10))
		}
	case http.StatusRequestedRangeNotSatisfiable:
		if n, ok := retryAfterSeconds(details["size"]); ok { // a non-negative integer, as Retry-After's
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(n, 10))
		}
	}
}

// retryAfterSeconds reads a retryAfter detail given in whole seconds.
func retryAfterSeconds(v any) (int64, bool) {
	var s int64
	switch n := v.(type) {
	case int:
		s = int64(n)
	case int32:
		s = int64(n)
	case int64:
		s = n
	case uint32:
		s = int64(n)
	case float64: // a detail that went through JSON
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		s = int64(math.Ceil(n))
	default:
		return 0, false
	}
	if s < 0 {
		return 0, false
	}
	return s, true
}

// encodeEnvelope marshals an envelope, ending it with a newline.
func encodeEnvelope(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeJSON writes an encoded envelope with its headers.
func writeJSON(w http.ResponseWriter, status int, requestID string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if requestID != "" {
		h.Set("X-Request-Id", requestID)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client has gone if this fails; nothing to do
}

// HumanDuration writes d in whole hours, minutes or seconds when it is
// one: "24 hours", "5 minutes", "90 seconds".
func HumanDuration(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return strconv.FormatInt(n, 10) + " " + name + "s"
	}
	switch {
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return d.String()
}
