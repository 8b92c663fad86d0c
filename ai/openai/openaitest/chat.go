package openaitest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/creatormusic/platform/ai/internal/simmodel"
)

// chatReq is the request body as the simulator reads it.
type chatReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// text reads content that is a string, null or text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// answer is a completion being answered.
type answer struct {
	id, model, requested string
	created              int64
	out                  simmodel.Output
	callIDs              []string
	finish               string
	prompt, completion   int
	cached, reasoning    int
	extra                bool
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"X-Request-Id": {s.host.NextID("req_")}}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, h, map[string]any{"message": "The request body is too large.",
			"type": "invalid_request_error", "param": nil, "code": nil})
		return
	}
	var req chatReq
	jerr := json.Unmarshal(body, &req)
	f, faulted := s.scripts.Fault(r, req.Model)
	if faulted && f.Kind == FaultNoHeaders && !s.wait(r.Context(), f.Delay) {
		return
	}
	if faulted && f.Kind == FaultAuth {
		_, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		s.refusal(w, h, f, key)
		return
	}
	if !s.authorized(w, r, h) {
		return
	}
	if jerr != nil {
		invalid(w, h, "We could not parse the JSON body of your request.", "")
		return
	}
	if faulted && s.refusal(w, h, f, "") {
		return
	}
	m, known := s.models[req.Model]
	if !known && !faulted {
		writeError(w, http.StatusNotFound, h, map[string]any{"message": "The model `" + req.Model + "` does not exist or you do not have access to it.",
			"type": "invalid_request_error", "param": nil, "code": "model_not_found"})
		return
	}
	if !known {
		m = Model{ID: req.Model, ContextWindow: 8192}
	}
	if msg, param := check(req); msg != "" {
		invalid(w, h, msg, param)
		return
	}
	a := s.compose(req, f)
	if a.prompt > m.ContextWindow {
		s.refusal(w, h, Fault{Kind: FaultContext}, "")
		return
	}
	if req.Stream {
		s.stream(w, r, h, req, a, f)
		return
	}
	s.complete(w, r, h, a, f)
}

// check applies the server's request rules; it returns the message and
// param of a violation.
func check(req chatReq) (string, string) {
	if req.Model == "" {
		return "you must provide a model parameter", "model"
	}
	if len(req.Messages) == 0 {
		return "'messages' must contain at least one message", "messages"
	}
	calls := map[string]bool{}
	mentionsJSON := false
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		case "tool":
			if !calls[m.ToolCallID] {
				return "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'.", "messages"
			}
		default:
			return "Invalid value for 'role': '" + m.Role + "'.", "messages"
		}
		if strings.Contains(strings.ToLower(text(m.Content)), "json") {
			mentionsJSON = true
		}
	}
	if req.StreamOptions != nil && !req.Stream {
		return "The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options"
	}
	if req.MaxTokens != nil && req.MaxCompletionTokens != nil {
		return "max_tokens and max_completion_tokens cannot both be set.", "max_tokens"
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text":
		case "json_object":
			if !mentionsJSON {
				return "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", "messages"
			}
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return "Missing required parameter: 'response_format.json_schema'.", "response_format"
			}
		default:
			return "Invalid value for 'response_format.type'.", "response_format"
		}
	}
	return "", ""
}

// compose runs the canned model and computes the usage.
func (s *Server) compose(req chatReq, f Fault) answer {
	in := simmodel.Input{}
	prompt := 3
	for _, m := range req.Messages {
		c := text(m.Content)
		prompt += 3 + simmodel.Tokens(c)
		for _, tc := range m.ToolCalls {
			prompt += simmodel.Tokens(tc.Function.Name) + simmodel.Tokens(tc.Function.Arguments)
		}
		switch m.Role {
		case "user":
			in.LastUser, in.LastTool = c, ""
		case "tool":
			in.LastTool = c
		default:
			in.LastTool = ""
		}
	}
	for _, t := range req.Tools {
		prompt += simmodel.Tokens(t.Function.Name) + simmodel.Tokens(t.Function.Description) + simmodel.Tokens(string(t.Function.Parameters))
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "text" {
		in.JSON = true
		if rf.JSONSchema != nil {
			in.Schema = rf.JSONSchema.Schema
		}
	}
	switch {
	case req.MaxCompletionTokens != nil:
		in.MaxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		in.MaxTokens = *req.MaxTokens
	}
	out, rp := s.scripts.Answer(req.Model, in)
	a := answer{id: s.host.NextID("chatcmpl-"), requested: req.Model, model: req.Model, created: s.cfg.Clock.Now().Unix(),
		prompt: prompt, extra: f.Kind == FaultExtraFields}
	if served, ok := s.cfg.Served[req.Model]; ok {
		a.model = served
	}
	a.finish = "stop"
	if cut, ok := stopAt(out.Text, req.Stop); ok {
		out.Text, out.ToolCalls = cut, nil
	}
	a.out, a.finish = simmodel.End(out, f.Kind, a.finish, simmodel.Endings{Length: "length", ToolCalls: "tool_calls", Filter: "content_filter"})
	a.completion = a.out.Tokens()
	a.callIDs = s.host.NextIDs("call_", len(a.out.ToolCalls))
	if rp != nil {
		a.reasoning = rp.ReasoningTokens
		a.completion += rp.ReasoningTokens
		a.cached = min(rp.CachedTokens, prompt)
	}
	return a
}

// stopAt cuts text at the first stop sequence, if any occurs.
func stopAt(text string, raw json.RawMessage) (string, bool) {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		list = []string{one}
	} else {
		_ = json.Unmarshal(raw, &list)
	}
	cut, found := len(text), false
	for _, s := range list {
		if i := strings.Index(text, s); s != "" && i >= 0 && i < cut {
			cut, found = i, true
		}
	}
	return text[:cut], found
}

func (a answer) usage() map[string]any {
	u := map[string]any{"prompt_tokens": a.prompt, "completion_tokens": a.completion, "total_tokens": a.prompt + a.completion,
		"prompt_tokens_details":     map[string]any{"cached_tokens": a.cached, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": a.reasoning, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
	if a.extra {
		u["cost"] = 0.00012
		u["is_byok"] = false
	}
	return u
}

func (a answer) record(stream, usageSent bool, finish string, content string, f Fault) Completion {
	return Completion{ID: a.id, Requested: a.requested, Model: a.model, Stream: stream, FinishReason: finish,
		Content: content, PromptTokens: a.prompt, CompletionTokens: a.completion, CachedTokens: a.cached,
		ReasoningTokens: a.reasoning, UsageSent: usageSent, Fault: f.Kind}
}

// complete answers a non-streamed request.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, h http.Header, a answer, f Fault) {
	if (f.Kind == FaultStall || f.Kind == FaultSlow) && !s.wait(r.Context(), f.Delay) {
		return
	}
	content := a.out.Text
	if f.Kind == FaultFilter {
		content = ""
	}
	switch f.Kind {
	case FaultErrorIn200:
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.WriteJSON(w, h, map[string]any{"error": map[string]any{"message": "Provider returned error", "code": 502,
			"metadata": map[string]any{"raw": "upstream overloaded"}}})
		return
	case FaultMalformed:
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.WriteBody(w, http.StatusOK, h, []byte(`{"id":"`+a.id+`","object":"chat.completion","choices":[`))
		return
	}
	msg := map[string]any{"role": "assistant", "content": content, "refusal": nil}
	if len(a.out.ToolCalls) > 0 {
		var calls []any
		for i, tc := range a.out.ToolCalls {
			calls = append(calls, map[string]any{"id": a.callIDs[i], "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = calls
		if content == "" {
			msg["content"] = nil
		}
	}
	body := map[string]any{"id": a.id, "object": "chat.completion", "created": a.created, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": a.finish}},
		"usage":   a.usage(), "system_fingerprint": "fp_sim"}
	if a.extra {
		msg["reasoning"] = "Thinking about the answer."
		body["system_fingerprint"] = "fp_ollama"
		body["provider"] = "sim"
		body["service_tier"] = "default"
	}
	if f.Kind == FaultDrop {
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.DropJSON(w, h, body)
	}
	s.scripts.Record(a.record(false, true, a.finish, content, f))
	simmodel.WriteJSON(w, h, body)
}
