// Package anthropictest is a deterministic loopback simulator of the
// Anthropic Messages API, for ai/anthropic and the platform's tests and
// example host (reference: shared/spec/ai.md, sections 2 and 6).
// Production binaries never import it.
//
// # Wire
//
//	POST /v1/messages       JSON, or named SSE events with "stream": true
//	GET  /v1/models         {"data":[...],"has_more","first_id","last_id"}, paged by limit and after_id
//	GET  /v1/models/{id}    one model
//
// URL is an adapter's base. Requests need x-api-key: <APIKey> (else 401
// authentication_error) and an anthropic-version header (else 400). The
// simulator checks what the API checks: a known model (else 404
// not_found_error), max_tokens, messages with roles user and assistant
// only, non-empty text blocks, and tool_result blocks answering a
// preceding tool_use (400 invalid_request_error otherwise); a prompt over
// the model's context window is 400 "prompt is too long".
//
// # The canned model
//
// As openaitest's, on this wire: the answer is scripted with Reply (per
// model, used up in order) or canned ("Echo: <last user text>", or "Tool
// result received: <result>" after tool results). The wire has no JSON
// mode, so the simulator takes a system text that asks for a "JSON
// object" as JSON mode, and the JSON following "JSON Schema: " in it as
// the schema (the instruction ai/anthropic sends): the answer is then the
// scripted JSON, or an object shaped by the schema, or {"answer": echo}.
// A Reply with tool calls makes the answer end in tool_use blocks
// (stop_reason tool_use); max_tokens cuts the text at whole words
// (stop_reason max_tokens); a stop sequence cuts it there (stop_sequence).
//
// Usage comes from Tokens: the prompt is 3 plus the tokens of the system
// text, plus, per message, 3 + the tokens of its text, tool_use names and
// inputs, and tool_result contents, plus, per tool, the tokens of its
// name, description and input_schema. input_tokens reports the prompt
// less the Reply's CachedTokens, which cache_read_input_tokens reports
// (as the API counts them); output_tokens is the tokens of the text and
// of the tool calls' names and inputs, plus the Reply's ReasoningTokens.
// Ids count from 1 (msg_000001, toolu_000001, req_000001). Completions
// lists what was answered.
//
// A stream sends message_start (with the input usage), ping, a text block
// (content_block_start, text_delta pieces of ChunkBytes bytes,
// content_block_stop), one tool_use block per call whose input comes as
// input_json_delta pieces split mid-token, message_delta (stop_reason and
// output usage) and message_stop.
//
// # Faults
//
// A fault comes from the request header X-Sim-Fault, a magic model id
// "fault-<kind>" (either with an optional "-<status>": "server-503"), or
// the script (Fail, per model id, used up in order):
//
//	rate_limit   429 rate_limit_error + retry-after and anthropic-ratelimit-requests-* (Fault.Hint picks which)
//	overloaded   529 overloaded_error
//	server       500 api_error (Fault.Status: 502, 503, 504 timeout_error, 408, 409); Fault.NoRetry adds x-should-retry: false
//	credits      400 invalid_request_error "Your credit balance is too low ..." (Fault.Status 402: billing_error)
//	context      400 invalid_request_error "prompt is too long: ..."
//	auth         401 authentication_error whose message echoes the presented key (adapters must not repeat it)
//	permission   403 permission_error
//	filter       stop_reason refusal (a stream sends Fault.After pieces first)
//	length       stop_reason max_tokens, the text cut to two tokens
//	error_event  200, then an error event (overloaded_error) after Fault.After pieces; JSON: a 200 error body
//	malformed    200, then an event or body cut mid-JSON (after Fault.After pieces)
//	drop         the body ends after Fault.After pieces: no message_delta, no message_stop (Fault.Abort breaks the connection)
//	stall        silence for Fault.Delay (zero: until the client leaves) after message_start and Fault.After pieces
//	slow         headers, then Fault.Delay before any event (JSON: before the body)
//	no_headers   Fault.Delay before the headers
//	extra_fields a thinking block with signature_delta, unknown events and fields
//
// # Control routes and the request log
//
// Every API request is logged with its header and body (Requests, and
// GET /_sim/events). Control routes need "Authorization: Bearer
// <ControlKey>" (the APIKey unless Config.ControlKey names another; with
// another, the log shows the x-api-key and Authorization headers
// redacted) and are those of openaitest: POST /_sim/reset, POST
// /_sim/faults, POST /_sim/replies, GET /_sim/completions, GET
// /_sim/events, POST /_sim/events/reset.
package anthropictest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/ai/internal/simmodel"
	"github.com/creatormusic/platform/internal/simctl"
)

// Clock tells the simulator's time.
type Clock interface {
	Now() time.Time
}

// Reply scripts answers (see the package doc).
type Reply = simmodel.Reply

// ToolCall is a scripted tool call.
type ToolCall = simmodel.ToolCall

// Request is a logged API request.
type Request = simmodel.Request

// Tokens is the simulator's deterministic tokenizer.
func Tokens(s string) int { return simmodel.Tokens(s) }

// Instance is the object the canned model answers for a JSON schema.
func Instance(schema json.RawMessage) json.RawMessage { return simmodel.Instance(schema) }

// FaultKind names a fault.
type FaultKind string

// The faults (see the package doc).
const (
	FaultRateLimit   FaultKind = "rate_limit"
	FaultOverloaded  FaultKind = "overloaded"
	FaultServer      FaultKind = "server"
	FaultCredits     FaultKind = "credits"
	FaultContext     FaultKind = "context"
	FaultAuth        FaultKind = "auth"
	FaultPermission  FaultKind = "permission"
	FaultFilter      FaultKind = simmodel.KindFilter
	FaultLength      FaultKind = simmodel.KindLength
	FaultErrorEvent  FaultKind = "error_event"
	FaultMalformed   FaultKind = "malformed"
	FaultDrop        FaultKind = simmodel.KindDrop
	FaultStall       FaultKind = simmodel.KindStall
	FaultSlow        FaultKind = "slow"
	FaultNoHeaders   FaultKind = "no_headers"
	FaultExtraFields FaultKind = "extra_fields"
)

// The rate-limit hints Fault.Hint picks.
const (
	// HintAll sends retry-after and anthropic-ratelimit-requests-* (the default).
	HintAll = ""
	// HintSeconds sends only retry-after.
	HintSeconds = "seconds"
	// HintReset sends only anthropic-ratelimit-requests-* with the limit
	// exhausted and its reset as an RFC 3339 time of the clock.
	HintReset = "reset"
	// HintNone sends no hint.
	HintNone = "none"
)

// Fault is an injected failure: its Kind, and the Status, RetryAfter,
// Hint, NoRetry, Delay, After and Abort that the faults above take.
type Fault = simmodel.Fault[FaultKind]

// Model is a model the simulator serves.
type Model struct {
	// ID is the model id.
	ID string
	// DisplayName is reported as display_name (default: the id).
	DisplayName string
	// ContextWindow is its context length in tokens (default 8192).
	ContextWindow int
}

// DefaultModels are served when Config.Models is nil: sim-claude (8192
// tokens), sim-haiku (4096) and sim-claude-latest (8192), which is
// answered as sim-claude-2026 (see Config.Served).
func DefaultModels() []Model {
	return []Model{{ID: "sim-claude", DisplayName: "Sim Claude", ContextWindow: 8192},
		{ID: "sim-haiku", DisplayName: "Sim Haiku", ContextWindow: 4096},
		{ID: "sim-claude-latest", DisplayName: "Sim Claude (latest)", ContextWindow: 8192}}
}

// Config configures a Server.
type Config struct {
	// APIKey is the key clients present. Empty means a random one.
	APIKey string
	// ControlKey is the Bearer key of the control routes. Empty means
	// APIKey. Another key lets a host keep the API key to itself while
	// people script the simulator: the request log then shows the API
	// key's header redacted.
	ControlKey string
	// Clock is the simulator's time. Nil means the wall clock.
	Clock Clock
	// Addr is the loopback listen address. Empty means 127.0.0.1:0.
	Addr string
	// Models are the models served. Nil means DefaultModels().
	Models []Model
	// Served maps a requested model to the model the answer reports as
	// executed. Nil means {"sim-claude-latest": "sim-claude-2026"}.
	Served map[string]string
	// ChunkBytes is the size of stream pieces. Zero means 7.
	ChunkBytes int
	// PageSize caps a model list page. Zero means 20.
	PageSize int
	// MaxRequestBytes bounds a request body. Zero means 4 MiB.
	MaxRequestBytes int64
}

// Completion is what the simulator answered to one messages request.
type Completion struct {
	// ID is the message's id.
	ID string `json:"id"`
	// Requested is the model the request named; Model the one reported.
	Requested string `json:"requested"`
	Model     string `json:"model"`
	// Stream reports a streamed answer.
	Stream bool `json:"stream"`
	// StopReason is the stop_reason sent ("" when none was).
	StopReason string `json:"stopReason"`
	// Content is the text the answer carried.
	Content string `json:"content"`
	// PromptTokens is the whole prompt; InputTokens, CacheReadTokens and
	// OutputTokens what the usage reports.
	PromptTokens    int `json:"promptTokens"`
	InputTokens     int `json:"inputTokens"`
	CacheReadTokens int `json:"cacheReadTokens"`
	OutputTokens    int `json:"outputTokens"`
	// UsageSent reports whether the final usage reached the wire.
	UsageSent bool `json:"usageSent"`
	// Fault is the fault applied, if any.
	Fault FaultKind `json:"fault,omitempty"`
}

// Server is the simulator. It is safe for concurrent use.
type Server struct {
	cfg     Config
	host    *simmodel.Host
	models  map[string]Model
	scripts simmodel.Scripts[FaultKind, Completion]
}

// New starts a simulator on loopback.
func New(cfg Config) (*Server, error) {
	if cfg.APIKey == "" {
		cfg.APIKey = simctl.RandomHex(16)
	}
	redact := cfg.ControlKey != "" && cfg.ControlKey != cfg.APIKey
	if cfg.ControlKey == "" {
		cfg.ControlKey = cfg.APIKey
	}
	if cfg.Clock == nil {
		cfg.Clock = simctl.WallClock{}
	}
	if cfg.Models == nil {
		cfg.Models = DefaultModels()
	}
	if cfg.Served == nil {
		cfg.Served = map[string]string{"sim-claude-latest": "sim-claude-2026"}
	}
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = 7
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 20
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 4 << 20
	}
	s := &Server{cfg: cfg, models: map[string]Model{}}
	for i, m := range cfg.Models {
		if m.ContextWindow <= 0 {
			m.ContextWindow = 8192
		}
		if m.DisplayName == "" {
			m.DisplayName = m.ID
		}
		cfg.Models[i] = m
		s.models[m.ID] = m
	}
	h, err := simmodel.NewHost("anthropictest", cfg.Addr, cfg.Clock, cfg.ControlKey, func(w http.ResponseWriter, _ *http.Request, _ error) {
		writeError(w, http.StatusUnauthorized, nil, "authentication_error", "Control routes need the control key.")
	})
	if err != nil {
		return nil, err
	}
	s.host = h
	if redact {
		h.Redact = []string{"X-Api-Key", "Authorization"}
	}
	h.Mux.HandleFunc("POST /v1/messages", s.handleMessages)
	h.Mux.HandleFunc("GET /v1/models", s.handleModels)
	h.Mux.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	h.Mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, nil, "not_found_error", "Not found")
	})
	s.scripts.Mount(h.Control, s.Reset)
	h.Serve()
	return s, nil
}

// URL is the simulator's root URL, the adapter's base.
func (s *Server) URL() string { return s.host.URL }

// APIKey is the key clients must present.
func (s *Server) APIKey() string { return s.cfg.APIKey }

// ControlKey is the Bearer key of the control routes.
func (s *Server) ControlKey() string { return s.cfg.ControlKey }

// Close stops the server and interrupts its waits.
func (s *Server) Close() error { return s.host.Close() }

// Fail scripts f for the next times requests naming model ("" means any
// model); times <= 0 means every request until Reset.
func (s *Server) Fail(model string, f Fault, times int) { s.scripts.Fail(model, f, times) }

// Reply scripts r as the answer to the next times requests naming model
// ("" means any model); times <= 0 means every request until Reset.
func (s *Server) Reply(model string, r Reply, times int) { s.scripts.Reply(model, r, times) }

// Requests lists the API requests answered since the last reset.
func (s *Server) Requests() []Request { return s.host.Requests() }

// Completions lists what was answered since the last reset.
func (s *Server) Completions() []Completion { return s.scripts.Answered() }

// Reset forgets the scripts, the request log, the completions and the id
// sequences.
func (s *Server) Reset() {
	s.scripts.Reset()
	s.host.Reset()
}

// writeError answers status with the API's error body.
func writeError(w http.ResponseWriter, status int, h http.Header, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg},
		"request_id": h.Get("Request-Id")})
	simmodel.WriteBody(w, status, h, b)
}

// authorized checks x-api-key and anthropic-version.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, h http.Header) bool {
	key := r.Header.Get("X-Api-Key")
	if key == "" || len(r.Header.Values("X-Api-Key")) != 1 || key != s.cfg.APIKey {
		writeError(w, http.StatusUnauthorized, h, "authentication_error", "invalid x-api-key")
		return false
	}
	if r.Header.Get("Anthropic-Version") == "" {
		writeError(w, http.StatusBadRequest, h, "invalid_request_error", "anthropic-version: header is required")
		return false
	}
	return true
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"Request-Id": {s.host.NextID("req_")}}
	if !s.authorized(w, r, h) {
		return
	}
	limit := s.cfg.PageSize
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n > 0 && n < limit {
		limit = n
	}
	start := 0
	if after := r.URL.Query().Get("after_id"); after != "" {
		for i, m := range s.cfg.Models {
			if m.ID == after {
				start = i + 1
			}
		}
	}
	end := min(start+limit, len(s.cfg.Models))
	data := []any{}
	for _, m := range s.cfg.Models[start:end] {
		data = append(data, s.modelObject(m))
	}
	page := map[string]any{"data": data, "has_more": end < len(s.cfg.Models), "first_id": nil, "last_id": nil}
	if end > start {
		page["first_id"], page["last_id"] = s.cfg.Models[start].ID, s.cfg.Models[end-1].ID
	}
	simmodel.WriteJSON(w, h, page)
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"Request-Id": {s.host.NextID("req_")}}
	if !s.authorized(w, r, h) {
		return
	}
	m, ok := s.models[r.PathValue("id")]
	if !ok {
		writeError(w, http.StatusNotFound, h, "not_found_error", "model: "+r.PathValue("id"))
		return
	}
	simmodel.WriteJSON(w, h, s.modelObject(m))
}

func (s *Server) modelObject(m Model) map[string]any {
	return map[string]any{"type": "model", "id": m.ID, "display_name": m.DisplayName,
		"created_at": s.cfg.Clock.Now().UTC().Format(time.RFC3339)}
}

// refusal answers the faults that are refusals; it reports whether it
// answered.
func (s *Server) refusal(w http.ResponseWriter, h http.Header, f Fault, key string) bool {
	switch f.Kind {
	case FaultRateLimit:
		d := f.RetryDelay()
		switch f.Hint {
		case HintAll:
			h.Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
			fallthrough
		case HintReset:
			h.Set("Anthropic-Ratelimit-Requests-Limit", "50")
			h.Set("Anthropic-Ratelimit-Requests-Remaining", "0")
			h.Set("Anthropic-Ratelimit-Requests-Reset", s.cfg.Clock.Now().Add(d).UTC().Format(time.RFC3339))
			h.Set("Anthropic-Ratelimit-Tokens-Remaining", "40000")
			h.Set("Anthropic-Ratelimit-Tokens-Reset", s.cfg.Clock.Now().Add(time.Second).UTC().Format(time.RFC3339))
		case HintSeconds:
			h.Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
		}
		writeError(w, http.StatusTooManyRequests, h, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit.")
	case FaultOverloaded:
		writeError(w, 529, h, "overloaded_error", "Overloaded")
	case FaultServer:
		status, typ := f.Status, "api_error"
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if status == http.StatusGatewayTimeout {
			typ = "timeout_error"
		}
		if f.NoRetry {
			h.Set("X-Should-Retry", "false")
		}
		writeError(w, status, h, typ, "Internal server error")
	case FaultCredits:
		if f.Status == http.StatusPaymentRequired {
			writeError(w, http.StatusPaymentRequired, h, "billing_error", "Your account has a billing issue.")
		} else {
			writeError(w, http.StatusBadRequest, h, "invalid_request_error",
				"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
		}
	case FaultContext:
		writeError(w, http.StatusBadRequest, h, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
	case FaultAuth:
		writeError(w, http.StatusUnauthorized, h, "authentication_error", "invalid x-api-key: "+key)
	case FaultPermission:
		writeError(w, http.StatusForbidden, h, "permission_error", "Your API key does not have permission to use the specified resource.")
	default:
		return false
	}
	return true
}

// wait applies a delay fault; false when the request or the server ended
// first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool { return s.host.Wait(ctx, d) }
