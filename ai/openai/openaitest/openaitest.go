// Package openaitest is a deterministic loopback simulator of an
// OpenAI-compatible Chat Completions server, for ai/openai and the
// platform's tests and example host (reference: shared/spec/ai.md,
// sections 1 and 6). Production binaries never import it.
//
// # Wire
//
//	POST /v1/chat/completions   JSON, or SSE with "stream": true
//	GET  /v1/models             {"object":"list","data":[...]}
//	GET  /v1/models/{id}        one model
//
// BaseURL (URL + "/v1") is an adapter's base. Requests need
// "Authorization: Bearer <APIKey>" (else 401 invalid_api_key). The
// simulator checks what OpenAI checks: a known model (else 404
// model_not_found), messages, tool turns answering a preceding tool call,
// stream_options only with stream, not both output-cap fields, and the
// word "json" in some message for json_object output (400
// invalid_request_error otherwise); a prompt over the model's context
// window is 400 context_length_exceeded.
//
// # The canned model
//
// The answer is scripted with Reply (per model, used up in order) or
// canned: in JSON mode (response_format json_object or json_schema) the
// scripted JSON, else an object shaped by the request's schema, else
// {"answer": echo}; in text mode the scripted text, else "Echo: <last
// user turn>" (or "Tool result received: <result>" after a tool turn). A
// Reply with tool calls makes the answer propose them (finish
// tool_calls). The output cap cuts the text at whole words (finish
// length); a stop sequence cuts it there.
//
// Usage comes from Tokens, a deterministic tokenizer: prompt_tokens is 3
// plus, per message, 3 + the tokens of its content and of its tool calls'
// names and arguments, plus, per tool, the tokens of its name,
// description and parameters; completion_tokens is the tokens of the
// answer's text and of its tool calls' names and arguments, plus the
// Reply's ReasoningTokens (reported in completion_tokens_details);
// the Reply's CachedTokens are reported in prompt_tokens_details. Ids
// count from 1 per prefix (chatcmpl-000001, call_000001, req_000001),
// "created" is the injected clock's time: the same requests get the same
// answers on every run. Completions lists what was answered.
//
// A stream sends ": keep-alive" comments, a first chunk with the role,
// the text in pieces of ChunkBytes bytes (split mid-word), each tool call
// as a first piece with id and name and then its arguments in pieces
// split mid-token, a chunk with finish_reason, the usage chunk
// (choices: []) when stream_options.include_usage is set, then
// "data: [DONE]".
//
// # Faults
//
// A fault comes from the request header X-Sim-Fault, a magic model id
// "fault-<kind>" (either with an optional "-<status>": "server-503"), or
// the script (Fail, per model id, used up in order):
//
//	rate_limit        429 rate_limit_exceeded + retry-after, retry-after-ms, x-ratelimit-* (Fault.Hint picks which)
//	quota             429 insufficient_quota
//	credits           402 {"error":{"code":402,...}} (OpenRouter)
//	server            500 (Fault.Status: 502, 503, 408, 409 ...); Fault.NoRetry adds x-should-retry: false
//	context           400 context_length_exceeded, param messages
//	context_vllm      400 flat {"object":"error","message":"This model's maximum context length ...","code":400}
//	context_llamacpp  400 {"error":{"code":400,"type":"exceed_context_size_error",...}}
//	auth              401 whose message echoes the presented key (adapters must not repeat it)
//	filter            finish_reason content_filter (a stream sends Fault.After pieces first)
//	length            finish_reason length, the text cut to two tokens
//	error_in_200      200, then {"error":{...}} as the body or as a data event after Fault.After pieces
//	malformed         200, then a body or chunk cut mid-JSON (after Fault.After pieces)
//	drop              the body ends after Fault.After pieces: no finish, no usage, no [DONE] (Fault.Abort breaks the connection instead)
//	stall             silence for Fault.Delay (zero: until the client leaves) after the role chunk and Fault.After pieces, then the rest
//	slow              headers, then Fault.Delay before any chunk (JSON: before the body)
//	no_headers        Fault.Delay before the headers
//	extra_fields      unknown fields everywhere: reasoning, system_fingerprint fp_ollama, obfuscation, usage cost, ": OPENROUTER PROCESSING"
//	no_done           a stream that ends after its finish and usage chunks without "data: [DONE]" (a deviation some servers have)
//
// # Control routes and the request log
//
// Every API request is logged with its header and body (Requests, and
// GET /_sim/events): tests assert that the simulator never saw anything
// but the configured key. Control routes need "Authorization: Bearer
// <ControlKey>" (the APIKey unless Config.ControlKey names another; with
// another, the log shows the Authorization header redacted):
//
//	POST /_sim/reset          forget scripts, logs and id sequences
//	POST /_sim/faults         {"model","times","fault":{"kind","status","retryAfterMs","hint","noRetry","delayMs","after","abort"}}
//	POST /_sim/replies        {"model","times","reply":{"text","json","toolCalls":[{"name","arguments"}],"cachedTokens","reasoningTokens"}}
//	GET  /_sim/completions    what was answered
//	GET  /_sim/events         the request log; POST /_sim/events/reset empties it
//
// Only waits (stall, slow, no_headers) use real time; Close interrupts
// them.
package openaitest

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
	FaultRateLimit       FaultKind = "rate_limit"
	FaultQuota           FaultKind = "quota"
	FaultCredits         FaultKind = "credits"
	FaultServer          FaultKind = "server"
	FaultContext         FaultKind = "context"
	FaultContextVLLM     FaultKind = "context_vllm"
	FaultContextLlamaCpp FaultKind = "context_llamacpp"
	FaultAuth            FaultKind = "auth"
	FaultFilter          FaultKind = simmodel.KindFilter
	FaultLength          FaultKind = simmodel.KindLength
	FaultErrorIn200      FaultKind = "error_in_200"
	FaultMalformed       FaultKind = "malformed"
	FaultDrop            FaultKind = simmodel.KindDrop
	FaultStall           FaultKind = simmodel.KindStall
	FaultSlow            FaultKind = "slow"
	FaultNoHeaders       FaultKind = "no_headers"
	FaultExtraFields     FaultKind = "extra_fields"
	FaultNoDone          FaultKind = "no_done"
)

// The rate-limit hints Fault.Hint picks.
const (
	// HintAll sends retry-after, retry-after-ms and x-ratelimit-* (the default).
	HintAll = ""
	// HintSeconds sends only retry-after in seconds.
	HintSeconds = "seconds"
	// HintMilliseconds sends only retry-after-ms.
	HintMilliseconds = "milliseconds"
	// HintDate sends only retry-after as an HTTP date of the clock.
	HintDate = "date"
	// HintReset sends only x-ratelimit-* with the requests limit exhausted.
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
	// ContextWindow is its context length in tokens (default 8192),
	// reported as max_model_len.
	ContextWindow int
	// OwnedBy is reported as owned_by (default "sim").
	OwnedBy string
}

// DefaultModels are served when Config.Models is nil: sim-gpt (8192
// tokens), sim-mini (4096) and sim-auto (8192), which is answered as
// sim-gpt (see Config.Served).
func DefaultModels() []Model {
	return []Model{{ID: "sim-gpt", ContextWindow: 8192}, {ID: "sim-mini", ContextWindow: 4096}, {ID: "sim-auto", ContextWindow: 8192}}
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
	// executed. Nil means {"sim-auto": "sim-gpt"}.
	Served map[string]string
	// ChunkBytes is the size of stream pieces. Zero means 7.
	ChunkBytes int
	// MaxRequestBytes bounds a request body. Zero means 4 MiB.
	MaxRequestBytes int64
}

// Completion is what the simulator answered to one completion request.
type Completion struct {
	// ID is the completion's id.
	ID string `json:"id"`
	// Requested is the model the request named; Model the one reported.
	Requested string `json:"requested"`
	Model     string `json:"model"`
	// Stream reports a streamed answer.
	Stream bool `json:"stream"`
	// FinishReason is the finish_reason sent ("" when none was).
	FinishReason string `json:"finishReason"`
	// Content is the text the answer carried (all of it, also when a
	// fault cut the stream).
	Content string `json:"content"`
	// PromptTokens, CompletionTokens, CachedTokens and ReasoningTokens are
	// the usage computed (sent unless a fault or include_usage withheld
	// it).
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	CachedTokens     int `json:"cachedTokens"`
	ReasoningTokens  int `json:"reasoningTokens"`
	// UsageSent reports whether the usage reached the wire.
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
		cfg.Served = map[string]string{"sim-auto": "sim-gpt"}
	}
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = 7
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 4 << 20
	}
	s := &Server{cfg: cfg, models: map[string]Model{}}
	for _, m := range cfg.Models {
		if m.ContextWindow <= 0 {
			m.ContextWindow = 8192
		}
		if m.OwnedBy == "" {
			m.OwnedBy = "sim"
		}
		s.models[m.ID] = m
	}
	h, err := simmodel.NewHost("openaitest", cfg.Addr, cfg.Clock, cfg.ControlKey, func(w http.ResponseWriter, _ *http.Request, _ error) {
		writeError(w, http.StatusUnauthorized, nil, map[string]any{"message": "Control routes need the control key.",
			"type": "invalid_request_error", "param": nil, "code": "invalid_api_key"})
	})
	if err != nil {
		return nil, err
	}
	s.host = h
	if redact {
		h.Redact = []string{"Authorization"}
	}
	h.Mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	h.Mux.HandleFunc("GET /v1/models", s.handleModels)
	h.Mux.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	h.Mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, nil, map[string]any{"message": "Unknown request URL: " + r.Method + " " + r.URL.Path,
			"type": "invalid_request_error", "param": nil, "code": "unknown_url"})
	})
	s.scripts.Mount(h.Control, s.Reset)
	h.Serve()
	return s, nil
}

// URL is the simulator's root URL (control routes live under it).
func (s *Server) URL() string { return s.host.URL }

// BaseURL is the adapter's base: URL + "/v1".
func (s *Server) BaseURL() string { return s.host.URL + "/v1" }

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

// writeError answers status with {"error": e}, or with e itself when flat.
func writeError(w http.ResponseWriter, status int, h http.Header, e map[string]any) {
	body := map[string]any{"error": e}
	if e["object"] == "error" {
		body = e
	}
	b, _ := json.Marshal(body)
	simmodel.WriteBody(w, status, h, b)
}

func invalid(w http.ResponseWriter, h http.Header, msg, param string) {
	var p any
	if param != "" {
		p = param
	}
	writeError(w, http.StatusBadRequest, h, map[string]any{"message": msg, "type": "invalid_request_error", "param": p, "code": nil})
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request, h http.Header) bool {
	if simctl.Bearer(r, s.cfg.APIKey) == nil {
		return true
	}
	writeError(w, http.StatusUnauthorized, h, map[string]any{"message": "Incorrect API key provided.",
		"type": "invalid_request_error", "param": nil, "code": "invalid_api_key"})
	return false
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"X-Request-Id": {s.host.NextID("req_")}}
	if !s.authorized(w, r, h) {
		return
	}
	data := make([]any, 0, len(s.cfg.Models))
	for _, m := range s.cfg.Models {
		data = append(data, s.modelObject(s.models[m.ID]))
	}
	simmodel.WriteJSON(w, h, map[string]any{"object": "list", "data": data})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"X-Request-Id": {s.host.NextID("req_")}}
	if !s.authorized(w, r, h) {
		return
	}
	m, ok := s.models[r.PathValue("id")]
	if !ok {
		writeError(w, http.StatusNotFound, h, map[string]any{"message": "The model does not exist.",
			"type": "invalid_request_error", "param": "model", "code": "model_not_found"})
		return
	}
	simmodel.WriteJSON(w, h, s.modelObject(m))
}

func (s *Server) modelObject(m Model) map[string]any {
	return map[string]any{"id": m.ID, "object": "model", "created": s.cfg.Clock.Now().Unix(), "owned_by": m.OwnedBy,
		"max_model_len": m.ContextWindow}
}

// refusal answers the faults that are refusals; it reports whether it
// answered.
func (s *Server) refusal(w http.ResponseWriter, h http.Header, f Fault, key string) bool {
	switch f.Kind {
	case FaultRateLimit:
		d := f.RetryDelay()
		secs := strconv.Itoa(int((d + time.Second - 1) / time.Second))
		reset := d.String()
		switch f.Hint {
		case HintAll:
			h.Set("Retry-After", secs)
			h.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
			fallthrough
		case HintReset:
			h.Set("X-Ratelimit-Limit-Requests", "60")
			h.Set("X-Ratelimit-Remaining-Requests", "0")
			h.Set("X-Ratelimit-Reset-Requests", reset)
			h.Set("X-Ratelimit-Limit-Tokens", "150000")
			h.Set("X-Ratelimit-Remaining-Tokens", "149000")
			h.Set("X-Ratelimit-Reset-Tokens", "6ms")
		case HintSeconds:
			h.Set("Retry-After", secs)
		case HintMilliseconds:
			h.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
		case HintDate:
			h.Set("Retry-After", s.cfg.Clock.Now().Add(d).UTC().Format(http.TimeFormat))
		}
		writeError(w, http.StatusTooManyRequests, h, map[string]any{"message": "Rate limit reached for requests. Please try again later.",
			"type": "requests", "param": nil, "code": "rate_limit_exceeded"})
	case FaultQuota:
		writeError(w, http.StatusTooManyRequests, h, map[string]any{"message": "You exceeded your current quota, please check your plan and billing details.",
			"type": "insufficient_quota", "param": nil, "code": "insufficient_quota"})
	case FaultCredits:
		writeError(w, http.StatusPaymentRequired, h, map[string]any{"code": 402,
			"message": "Insufficient credits. Add more credits to continue."})
	case FaultServer:
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		if f.NoRetry {
			h.Set("X-Should-Retry", "false")
		}
		writeError(w, status, h, map[string]any{"message": "The server had an error while processing your request.",
			"type": "server_error", "param": nil, "code": nil})
	case FaultContext:
		writeError(w, http.StatusBadRequest, h, map[string]any{"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages.",
			"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"})
	case FaultContextVLLM:
		writeError(w, http.StatusBadRequest, h, map[string]any{"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
			"type": "BadRequestError", "param": nil, "code": 400})
	case FaultContextLlamaCpp:
		writeError(w, http.StatusBadRequest, h, map[string]any{"code": 400, "message": "the request exceeds the available context size, try increasing it",
			"type": "exceed_context_size_error", "n_prompt_tokens": 9001, "n_ctx": 8192})
	case FaultAuth:
		writeError(w, http.StatusUnauthorized, h, map[string]any{"message": "Incorrect API key provided: " + key + ". You can find your API key in your account settings.",
			"type": "invalid_request_error", "param": nil, "code": "invalid_api_key"})
	default:
		return false
	}
	return true
}

// wait applies a delay fault; false when the request or the server ended
// first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool { return s.host.Wait(ctx, d) }
