// Package anthropic is the adapter for the Anthropic Messages API,
// implementing ai.Provider (reference: shared/spec/ai.md, section 2).
//
// # Wire
//
//	POST {base}/v1/messages   Complete and Stream
//	GET  {base}/v1/models     Models (paged by after_id)
//
// Every request carries x-api-key (the key travels nowhere else) and
// anthropic-version (Config.Version, "2023-06-01" by default; the adapter
// pins it, since newer versions change parameters). System messages become
// the top-level system text; user and assistant turns become content
// blocks (an assistant turn's tool calls tool_use blocks whose input is
// the arguments object); tool turns become tool_result blocks (is_error
// from ai.Message.ToolError) in a user turn, results first; consecutive
// turns of one role are merged. max_tokens is required by the wire:
// Config.DefaultMaxTokens when the request sets none. Tools are declared
// with input_schema; tool_choice "required" is {type:"any"}. The wire has
// no JSON mode: JSON output is asked for by a system instruction that
// carries the schema, and the caller validates the answer.
//
// # Decoding
//
// The executed model is the answer's "model". Text blocks are joined;
// tool_use blocks become tool calls (input as arguments); thinking and
// unknown blocks are ignored. stop_reason end_turn and stop_sequence ->
// completed, max_tokens, model_context_window_exceeded and pause_turn ->
// truncated, tool_use -> tool_calls, refusal -> filtered. Usage:
// InputTokens is input_tokens plus cache_read_input_tokens and
// cache_creation_input_tokens, CachedTokens the cache reads, OutputTokens
// output_tokens (reasoning included; the wire does not split it out).
//
// Streams: message_start (id, model, input usage), content_block_start /
// content_block_delta (text_delta, input_json_delta fragments of the
// block's tool call, indexed among the answer's tool calls from 0) /
// content_block_stop, message_delta (stop_reason and cumulative usage),
// message_stop (the end). ping and unknown events are ignored; an error
// event ends the stream with a failure. A stream that ends without
// message_stop is accepted only when message_delta already came, and is
// otherwise a drop.
//
// # Errors
//
// See ai.Provider for codes and classes. Bodies {"type":"error",
// "error":{"type","message"},"request_id"}:
//
//   - 402, billing_error, or a "credit balance is too low" refusal ->
//     PROVIDER_CREDITS_EXHAUSTED.
//   - 429 rate_limit_error -> RATE_LIMITED with the hint of retry-after or
//     the anthropic-ratelimit-*-reset time of an exhausted limit.
//   - invalid_request_error saying the prompt is too long (or the context
//     window is exceeded) -> INVALID_INPUT (class context).
//   - 401 authentication_error, 403 permission_error -> PROVIDER_UNAVAILABLE
//     (class auth); 404 not_found_error -> PROVIDER_UNAVAILABLE (class
//     request, reason not_found).
//   - 529 overloaded_error, 500 api_error, 504 timeout_error, 408, 409 and
//     other 5xx -> PROVIDER_UNAVAILABLE (class server, retryable).
//   - other 400, 413 request_too_large and 422 -> INVALID_INPUT (class
//     request).
//
// Outbound policy, deadlines and bounds are those of ai/openai.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/internal/wire"
	"github.com/creatormusic/platform/fault"
)

var _ ai.Provider = (*Client)(nil)

// Defaults of Config.
const (
	// DefaultVersion is the anthropic-version the adapter pins.
	DefaultVersion = "2023-06-01"
	// DefaultMaxTokens is max_tokens when a request sets no output cap.
	DefaultMaxTokens = 4096
	// DefaultTimeout bounds a whole call.
	DefaultTimeout = wire.DefaultTimeout
	// DefaultIdleTimeout bounds the wait for each line of a stream.
	DefaultIdleTimeout = wire.DefaultIdleTimeout
	// DefaultMaxResponseBytes bounds an answer's body.
	DefaultMaxResponseBytes = wire.DefaultMaxResponseBytes
	// MaxEventBytes bounds one stream event.
	MaxEventBytes = wire.MaxEventBytes
	// maxModelPages bounds the pages Models reads.
	maxModelPages = 20
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root (https://api.anthropic.com). Required.
	BaseURL string
	// APIKey is sent as x-api-key. Required.
	APIKey string
	// Version is the anthropic-version header. Empty means DefaultVersion.
	Version string
	// DefaultMaxTokens is max_tokens when a request sets none. Zero means
	// DefaultMaxTokens.
	DefaultMaxTokens int
	// HTTPClient sends the requests. Nil means a urlguard client, and
	// BaseURL must pass its guard.
	HTTPClient *http.Client
	// Timeout bounds a whole call. Zero means DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout bounds the wait for each stream line. Zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxResponseBytes bounds an answer's body. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Now tells the time for retry hints given as times. Nil means
	// time.Now.
	Now func() time.Time
}

// Client is the Anthropic Messages adapter. It is safe for concurrent use.
type Client struct {
	w         wire.Client
	key       string
	version   string
	maxTokens int
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	const op = "anthropic.New"
	base, err := wire.CheckBase(op, cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, fault.Invalid(op, "apiKey", "An API key is required.")
	}
	if cfg.Version == "" {
		cfg.Version = DefaultVersion
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = DefaultMaxTokens
	}
	w, err := wire.NewClient(op, wire.Options{Base: base, Key: cfg.APIKey, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout,
		IdleTimeout: cfg.IdleTimeout, MaxResponseBytes: cfg.MaxResponseBytes, Now: cfg.Now, Refuse: refuse})
	if err != nil {
		return nil, err
	}
	return &Client{w: w, key: cfg.APIKey, version: cfg.Version, maxTokens: cfg.DefaultMaxTokens}, nil
}

func (c *Client) header(accept string) http.Header {
	return http.Header{"Accept": {accept}, "X-Api-Key": {c.key}, "Anthropic-Version": {c.version}}
}

// Complete implements ai.Provider.
func (c *Client) Complete(ctx context.Context, r ai.Request) (ai.Response, error) {
	const op = "anthropic.Complete"
	if err := wire.Validate(op, r); err != nil {
		return ai.Response{}, err
	}
	return c.w.Complete(ctx, op, "/v1/messages", c.header("application/json"), c.body(r, false), decodeMessage)
}

// Stream implements ai.Provider.
func (c *Client) Stream(ctx context.Context, r ai.Request) (ai.Stream, error) {
	const op = "anthropic.Stream"
	if err := wire.Validate(op, r); err != nil {
		return nil, err
	}
	return c.w.Stream(ctx, op, "/v1/messages", c.header("text/event-stream"), c.body(r, true), &decoder{blocks: map[int]*blockState{}})
}

// Models implements ai.Provider.
func (c *Client) Models(ctx context.Context) ([]ai.Model, error) {
	const op = "anthropic.Models"
	var out []ai.Model
	after := ""
	for page := 0; page < maxModelPages; page++ {
		path := "/v1/models?limit=1000"
		if after != "" {
			path += "&after_id=" + url.QueryEscape(after)
		}
		var list struct {
			Data []struct {
				ID          string `json:"id"`
				DisplayName string `json:"display_name"`
				CreatedAt   string `json:"created_at"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := c.w.GetJSON(ctx, op, path, c.header("application/json"), "model list", &list,
			func() bool { return list.Data != nil }); err != nil {
			return nil, err
		}
		for _, m := range list.Data {
			if m.ID == "" {
				continue
			}
			am := ai.Model{ID: m.ID, DisplayName: m.DisplayName, OwnedBy: "anthropic"}
			if t, err := time.Parse(time.RFC3339, m.CreatedAt); err == nil {
				am.Created = t.UTC()
			}
			out = append(out, am)
		}
		if !list.HasMore || list.LastID == "" || list.LastID == after {
			break
		}
		after = list.LastID
	}
	return out, nil
}

// msgRequest is the request body.
type msgRequest struct {
	Model         string      `json:"model"`
	MaxTokens     int         `json:"max_tokens"`
	System        string      `json:"system,omitempty"`
	Messages      []msgTurn   `json:"messages"`
	Tools         []msgTool   `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	Temperature   *float64    `json:"temperature,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
}

type msgTurn struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type msgTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// body builds the request body of r.
func (c *Client) body(r ai.Request, stream bool) msgRequest {
	b := msgRequest{Model: r.Model, MaxTokens: r.MaxOutputTokens, Temperature: r.Temperature, StopSequences: r.Stop, Stream: stream}
	if b.MaxTokens == 0 {
		b.MaxTokens = c.maxTokens
	}
	var system []string
	add := func(role string, blocks ...block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(b.Messages); n > 0 && b.Messages[n-1].Role == role {
			b.Messages[n-1].Content = append(b.Messages[n-1].Content, blocks...)
			return
		}
		b.Messages = append(b.Messages, msgTurn{Role: role, Content: blocks})
	}
	for _, m := range r.Messages {
		var blocks []block
		if m.Content != "" && m.Role != ai.RoleTool {
			blocks = append(blocks, block{Type: "text", Text: m.Content})
		}
		switch m.Role {
		case ai.RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
		case ai.RoleUser:
			add("user", blocks...)
		case ai.RoleAssistant:
			for _, tc := range m.ToolCalls {
				input := json.RawMessage(wire.Arguments(string(tc.Arguments)))
				if !isObject(input) {
					input = json.RawMessage("{}")
				}
				blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
			add("assistant", blocks...)
		case ai.RoleTool:
			add("user", block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content, IsError: m.ToolError})
		}
	}
	if r.JSON {
		system = append(system, wire.JSONInstruction(r.JSONSchema))
	}
	b.System = strings.Join(system, "\n\n")
	for _, t := range r.Tools {
		b.Tools = append(b.Tools, msgTool{Name: t.Name, Description: t.Description, InputSchema: wire.ObjectSchema(t.Parameters)})
	}
	switch r.ToolChoice {
	case "":
	case ai.ToolChoiceAuto, ai.ToolChoiceNone:
		b.ToolChoice = &toolChoice{Type: r.ToolChoice}
	case ai.ToolChoiceRequired:
		b.ToolChoice = &toolChoice{Type: "any"}
	default:
		b.ToolChoice = &toolChoice{Type: "tool", Name: r.ToolChoice}
	}
	return b
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return strings.HasPrefix(t, "{")
}

// msgUsage is the wire's usage object.
type msgUsage struct {
	InputTokens              wire.Count `json:"input_tokens"`
	OutputTokens             wire.Count `json:"output_tokens"`
	CacheCreationInputTokens wire.Count `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     wire.Count `json:"cache_read_input_tokens"`
}

func (u msgUsage) usage() ai.Usage {
	return ai.Usage{
		InputTokens:  int64(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens: int64(u.OutputTokens), CachedTokens: int64(u.CacheReadInputTokens),
	}
}

// message is the non-streamed answer.
type message struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      *msgUsage       `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

// decodeMessage reads a 200 answer.
func decodeMessage(raw []byte) (ai.Response, *ai.Failure) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		f := wire.Malformed("malformed_response", fmt.Errorf("message: %v", err))
		return ai.Response{}, &f
	}
	if m.Type == "error" || !wire.Absent(m.Error) {
		f := errorEvent(m.Error, "error_in_body")
		return ai.Response{}, &f
	}
	if m.Content == nil && m.StopReason == nil {
		f := wire.Malformed("malformed_response", errors.New("message without content"))
		return ai.Response{}, &f
	}
	resp := ai.Response{ID: m.ID, Model: m.Model}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, ai.ToolCall{ID: b.ID, Name: b.Name, Arguments: wire.Arguments(string(b.Input))})
		}
	}
	resp.Content = text.String()
	reason := ""
	if m.StopReason != nil {
		reason = *m.StopReason
	}
	resp.Finish = wire.FinishWithCalls(finish(reason), len(resp.ToolCalls))
	if m.Usage != nil {
		resp.Usage, resp.UsageReported = m.Usage.usage(), true
	}
	return resp, nil
}

// finish normalizes a stop_reason.
func finish(reason string) ai.Finish {
	switch reason {
	case "max_tokens", "model_context_window_exceeded", "pause_turn":
		return ai.FinishTruncated
	case "tool_use":
		return ai.FinishToolCalls
	case "refusal":
		return ai.FinishFiltered
	}
	return ai.FinishCompleted
}

// apiError is an error object's fields.
type apiError struct {
	Type, Message string
}

// parseError reads {"type":"error","error":{...}} or the inner object.
func parseError(raw []byte) apiError {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return apiError{Message: wire.Truncate(string(raw), 300)}
	}
	if !wire.Absent(env.Error) {
		var inner apiError
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return apiError{Message: s}
		}
		var obj struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &obj) == nil {
			inner = apiError{Type: obj.Type, Message: obj.Message}
		}
		return inner
	}
	return apiError{Type: env.Type, Message: env.Message}
}

// errorEvent is the failure of an error a 200 answer or an error event
// carried.
func errorEvent(raw json.RawMessage, reason string) ai.Failure {
	e := parseError(raw)
	return wire.ServerFailure(reason, fmt.Errorf("error in a 200 answer: %s: %s", e.Type, wire.Truncate(e.Message, 300)))
}

// refuse maps a non-2xx answer (see the package doc).
func refuse(status int, _ http.Header, body []byte) ai.Failure {
	e := parseError(body)
	text := strings.ToLower(e.Message)
	cause := fmt.Errorf("HTTP %d %s: %s", status, e.Type, wire.Truncate(e.Message, 300))
	switch {
	case status == http.StatusPaymentRequired || e.Type == "billing_error" || strings.Contains(text, "credit balance"):
		return wire.Refused(fault.ProviderCreditsExhausted, ai.ClassCredits, false, "", cause)
	case status == http.StatusTooManyRequests || e.Type == "rate_limit_error":
		return wire.Refused(fault.RateLimited, ai.ClassRateLimit, true, "", cause)
	case status >= 400 && status < 500 && (strings.Contains(text, "prompt is too long") || strings.Contains(text, "context window") ||
		strings.Contains(text, "context length")):
		return wire.Refused(fault.InvalidInput, ai.ClassContext, false, "context_length_exceeded", cause)
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		e.Type == "authentication_error" || e.Type == "permission_error":
		return wire.Refused(fault.ProviderUnavailable, ai.ClassAuth, false, "", cause)
	case status == http.StatusNotFound || e.Type == "not_found_error":
		return wire.Refused(fault.ProviderUnavailable, ai.ClassRequest, false, "not_found", cause)
	case status == 529 || e.Type == "overloaded_error":
		return wire.Refused(fault.ProviderUnavailable, ai.ClassServer, true, "overloaded", cause)
	}
	return wire.ByStatus(status, cause)
}

// blockState is a content block of a stream.
type blockState struct {
	tool      int // index among tool calls; -1 for other blocks
	startArgs string
	gotArgs   bool
}

// decoder is the stream dialect; it keeps the stream's block state.
type decoder struct {
	blocks map[int]*blockState
	tools  int
	start  msgUsage
	ended  bool
}

// event is one stream payload.
type event struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string    `json:"id"`
		Model string    `json:"model"`
		Usage *msgUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *msgUsage       `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Message implements wire.Decoder.
func (d *decoder) Message(m wire.Message, acc *wire.Acc) (bool, *ai.Failure) {
	var ev event
	if err := json.Unmarshal([]byte(m.Data), &ev); err != nil {
		f := wire.Malformed("malformed_chunk", fmt.Errorf("stream event %q: %v", wire.Truncate(m.Event, 40), err))
		return false, &f
	}
	kind := ev.Type
	if kind == "" {
		kind = m.Event
	}
	switch kind {
	case "message_start":
		if ev.Message != nil {
			acc.SetID(ev.Message.ID)
			acc.SetModel(ev.Message.Model)
			if ev.Message.Usage != nil {
				d.start = *ev.Message.Usage
			}
		}
	case "content_block_start":
		st := &blockState{tool: -1}
		d.blocks[ev.Index] = st
		if cb := ev.ContentBlock; cb != nil {
			switch cb.Type {
			case "text":
				acc.Text(cb.Text)
			case "tool_use":
				st.tool = d.tools
				d.tools++
				if t := strings.TrimSpace(string(cb.Input)); t != "" && t != "{}" && t != "null" {
					st.startArgs = t
				}
				acc.ToolCall(ai.ToolCallDelta{Index: st.tool, ID: cb.ID, Name: cb.Name})
			}
		}
	case "content_block_delta":
		st := d.blocks[ev.Index]
		if ev.Delta == nil {
			break
		}
		switch ev.Delta.Type {
		case "text_delta":
			acc.Text(ev.Delta.Text)
		case "input_json_delta":
			if st != nil && st.tool >= 0 && ev.Delta.PartialJSON != "" {
				st.gotArgs = true
				acc.ToolCall(ai.ToolCallDelta{Index: st.tool, Arguments: ev.Delta.PartialJSON})
			}
		}
	case "content_block_stop":
		if st := d.blocks[ev.Index]; st != nil && st.tool >= 0 && !st.gotArgs && st.startArgs != "" {
			acc.ToolCall(ai.ToolCallDelta{Index: st.tool, Arguments: st.startArgs})
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			acc.SetFinish(finish(*ev.Delta.StopReason))
		}
		u := d.start
		if ev.Usage != nil {
			u.OutputTokens = ev.Usage.OutputTokens
			if ev.Usage.InputTokens > 0 {
				u.InputTokens = ev.Usage.InputTokens
			}
			if ev.Usage.CacheReadInputTokens > 0 {
				u.CacheReadInputTokens = ev.Usage.CacheReadInputTokens
			}
			if ev.Usage.CacheCreationInputTokens > 0 {
				u.CacheCreationInputTokens = ev.Usage.CacheCreationInputTokens
			}
			acc.SetUsage(u.usage())
		}
		d.ended = true
	case "message_stop":
		if acc.Finish() == "" {
			acc.SetFinish(ai.FinishCompleted)
		}
		return true, nil
	case "error":
		f := errorEvent(ev.Error, "error_event")
		return false, &f
	}
	return false, nil
}

// EOF implements wire.Decoder: without message_stop, only a stream that
// already sent message_delta counts as complete.
func (d *decoder) EOF(acc *wire.Acc) *ai.Failure {
	if d.ended && acc.Finish() != "" {
		return nil
	}
	f := wire.ServerFailure("dropped", errors.New("the stream ended before message_stop"))
	return &f
}
