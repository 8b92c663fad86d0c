package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/fault"
)

// envelopeLogger returns a JSON logger at level writing to a buffer.
func envelopeLogger(level slog.Level) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})), &buf
}

// decodeErrorEnvelope decodes a recorded error envelope.
func decodeErrorEnvelope(t *testing.T, rec *httptest.ResponseRecorder) ErrorEnvelope {
	t.Helper()
	var env ErrorEnvelope
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("decode error envelope: %v", err)
	}
	return env
}

func TestWriteErrorInternalHidesCause(t *testing.T) {
	log, buf := envelopeLogger(slog.LevelInfo)
	rec := httptest.NewRecorder()
	cause := errors.New("dial tcp 10.0.0.7:5432: secret-host refused")
	WriteError(rec, log, "req_abc", fmt.Errorf("store.InTx: %w", cause))

	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
	body := rec.Body.String()
	if strings.Contains(body, "secret-host") {
		t.Errorf("body leaks the cause: %s", body)
	}
	env := decodeErrorEnvelope(t, rec)
	want := ErrorEnvelope{Error: ErrorBody{Code: fault.Internal, Message: fault.Internal.DefaultMessage()}, Meta: Meta{RequestID: "req_abc"}}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("envelope (-want +got):\n%s", diff)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "req_abc" {
		t.Errorf("X-Request-Id = %q", got)
	}
	var entry map[string]any
	if err := json.Unmarshal(buf.Bytes(), &entry); err != nil {
		t.Fatalf("log is not one JSON entry: %q", buf.String())
	}
	if entry["level"] != "ERROR" || entry["requestId"] != "req_abc" || !strings.Contains(fmt.Sprint(entry["error"]), "secret-host refused") {
		t.Errorf("log entry = %v, want an ERROR with requestId and the cause", entry)
	}
}

func TestWriteErrorCoded(t *testing.T) {
	log, buf := envelopeLogger(slog.LevelInfo)
	rec := httptest.NewRecorder()
	err := fault.Wrap("apikey.Create", fault.Invalid("apikey.validate", "limits.ratePerMinute", "Must be positive."))
	WriteError(rec, log, "req_1", err)

	if rec.Code != http.StatusBadRequest {
		t.Errorf("status = %d, want 400", rec.Code)
	}
	env := decodeErrorEnvelope(t, rec)
	want := ErrorBody{Code: fault.InvalidInput, Message: "Must be positive.", Details: map[string]any{"field": "limits.ratePerMinute"}}
	if diff := cmp.Diff(want, env.Error); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
	if buf.Len() != 0 {
		t.Errorf("a coded error was logged above debug: %s", buf.String())
	}
}

func TestWriteErrorOmitsEmptyDetails(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, slog.New(slog.DiscardHandler), "req_1", &fault.Error{Code: fault.NotFound, Details: map[string]any{}})
	if strings.Contains(rec.Body.String(), "details") {
		t.Errorf("empty details written: %s", rec.Body.String())
	}
	if rec.Code != http.StatusNotFound {
		t.Errorf("status = %d, want 404", rec.Code)
	}
}

func TestWriteErrorHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, slog.New(slog.DiscardHandler), "req_1", fault.E("limit", fault.RateLimited, "").With("retryAfter", 7))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "7" {
		t.Errorf("status %d, Retry-After %q; want 429 and 7", rec.Code, rec.Header().Get("Retry-After"))
	}
	rec = httptest.NewRecorder()
	WriteError(rec, slog.New(slog.DiscardHandler), "req_1", fault.E("auth", fault.Unauthenticated, ""))
	if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("status %d, WWW-Authenticate %q; want 401 and a bearer challenge", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

func TestWriteData(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteData(rec, http.StatusCreated, "req_9", map[string]string{"id": "key_1"})
	if rec.Code != http.StatusCreated {
		t.Errorf("status = %d, want 201", rec.Code)
	}
	if got, want := rec.Body.String(), `{"data":{"id":"key_1"},"meta":{"requestId":"req_9"}}`+"\n"; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if rec.Header().Get("X-Request-Id") != "req_9" || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", rec.Header())
	}
}

func TestWriteDataUnencodable(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteData(rec, http.StatusOK, "req_9", map[string]any{"f": func() {}})
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
	if env := decodeErrorEnvelope(t, rec); env.Error.Code != fault.Internal {
		t.Errorf("code = %s, want INTERNAL", env.Error.Code)
	}
}
