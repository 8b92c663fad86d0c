package anthropictest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/ai/internal/simmodel"
)

// msgReq is the request body as the simulator reads it.
type msgReq struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	StopSequences []string `json:"stop_sequences"`
	Stream        bool     `json:"stream"`
}

// block is a content block of a request.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// blocks reads content that is a string or an array of blocks.
func blocks(raw json.RawMessage) ([]block, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: &s}}, true
	}
	var bs []block
	return bs, json.Unmarshal(raw, &bs) == nil
}

// plain reads a string or the text of text blocks.
func plain(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	bs, _ := blocks(raw)
	var b strings.Builder
	for _, x := range bs {
		if x.Text != nil {
			b.WriteString(*x.Text)
		}
	}
	return b.String()
}

// answer is a message being answered.
type answer struct {
	id, model, requested string
	out                  simmodel.Output
	toolIDs              []string
	stop                 string
	prompt, output       int
	cached               int
	extra                bool
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	h := http.Header{"Request-Id": {s.host.NextID("req_")}}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, h, "request_too_large", "Request exceeds the maximum allowed number of bytes.")
		return
	}
	var req msgReq
	jerr := json.Unmarshal(body, &req)
	f, faulted := s.scripts.Fault(r, req.Model)
	if faulted && f.Kind == FaultNoHeaders && !s.wait(r.Context(), f.Delay) {
		return
	}
	if faulted && f.Kind == FaultAuth {
		s.refusal(w, h, f, r.Header.Get("X-Api-Key"))
		return
	}
	if !s.authorized(w, r, h) {
		return
	}
	if jerr != nil {
		writeError(w, http.StatusBadRequest, h, "invalid_request_error", "The request body is not valid JSON.")
		return
	}
	if faulted && s.refusal(w, h, f, "") {
		return
	}
	m, known := s.models[req.Model]
	if !known && !faulted {
		writeError(w, http.StatusNotFound, h, "not_found_error", "model: "+req.Model)
		return
	}
	if !known {
		m = Model{ID: req.Model, ContextWindow: 8192}
	}
	if msg := check(req); msg != "" {
		writeError(w, http.StatusBadRequest, h, "invalid_request_error", msg)
		return
	}
	a := s.compose(req, f)
	if a.prompt > m.ContextWindow {
		writeError(w, http.StatusBadRequest, h, "invalid_request_error",
			"prompt is too long: "+strconv.Itoa(a.prompt)+" tokens > "+strconv.Itoa(m.ContextWindow)+" maximum")
		return
	}
	if req.Stream {
		s.stream(w, r, h, a, f)
		return
	}
	s.complete(w, r, h, a, f)
}

// check applies the API's request rules; it returns a violation's message.
func check(req msgReq) string {
	if req.Model == "" {
		return "model: Field required"
	}
	if req.MaxTokens == nil || *req.MaxTokens < 1 {
		return "max_tokens: Field required"
	}
	if len(req.Messages) == 0 {
		return "messages: at least one message is required"
	}
	uses := map[string]bool{}
	for i, m := range req.Messages {
		at := "messages." + strconv.Itoa(i)
		if m.Role != "user" && m.Role != "assistant" {
			return at + ".role: Input should be 'user' or 'assistant'"
		}
		bs, ok := blocks(m.Content)
		if !ok {
			return at + ".content: Input should be a valid list"
		}
		for _, b := range bs {
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return at + ": text content blocks must be non-empty"
				}
			case "tool_use":
				if m.Role != "assistant" || b.ID == "" || b.Name == "" || !strings.HasPrefix(strings.TrimSpace(string(b.Input)), "{") {
					return at + ": tool_use blocks need an id, a name and an input object in an assistant turn"
				}
				uses[b.ID] = true
			case "tool_result":
				if m.Role != "user" || !uses[b.ToolUseID] {
					return at + ": tool_result block(s) provided when previous message does not have a matching tool_use"
				}
			default:
				return at + ": unknown content block type " + b.Type
			}
		}
	}
	return ""
}

// compose runs the canned model and computes the usage.
func (s *Server) compose(req msgReq, f Fault) answer {
	system := plain(req.System)
	in := simmodel.Input{MaxTokens: *req.MaxTokens}
	if strings.Contains(system, "JSON object") {
		in.JSON = true
		if _, rest, ok := strings.Cut(system, "JSON Schema: "); ok {
			var schema json.RawMessage
			if json.NewDecoder(strings.NewReader(rest)).Decode(&schema) == nil {
				in.Schema = schema
			}
		}
	}
	prompt := 3 + simmodel.Tokens(system)
	for _, m := range req.Messages {
		prompt += 3
		bs, _ := blocks(m.Content)
		for _, b := range bs {
			switch b.Type {
			case "text":
				prompt += simmodel.Tokens(*b.Text)
				if m.Role == "user" {
					in.LastUser, in.LastTool = *b.Text, ""
				}
			case "tool_use":
				prompt += simmodel.Tokens(b.Name) + simmodel.Tokens(string(b.Input))
			case "tool_result":
				c := plain(b.Content)
				prompt += simmodel.Tokens(c)
				in.LastTool = c
			}
		}
		if m.Role == "assistant" {
			in.LastTool = ""
		}
	}
	for _, t := range req.Tools {
		prompt += simmodel.Tokens(t.Name) + simmodel.Tokens(t.Description) + simmodel.Tokens(string(t.InputSchema))
	}
	out, rp := s.scripts.Answer(req.Model, in)
	a := answer{id: s.host.NextID("msg_"), requested: req.Model, model: req.Model, prompt: prompt, stop: "end_turn",
		extra: f.Kind == FaultExtraFields}
	if served, ok := s.cfg.Served[req.Model]; ok {
		a.model = served
	}
	for _, seq := range req.StopSequences {
		if i := strings.Index(out.Text, seq); seq != "" && i >= 0 {
			out.Text, out.ToolCalls, a.stop = out.Text[:i], nil, "stop_sequence"
		}
	}
	a.out, a.stop = simmodel.End(out, f.Kind, a.stop, simmodel.Endings{Length: "max_tokens", ToolCalls: "tool_use", Filter: "refusal"})
	a.output = a.out.Tokens()
	a.toolIDs = s.host.NextIDs("toolu_", len(a.out.ToolCalls))
	if rp != nil {
		a.output += rp.ReasoningTokens
		a.cached = min(rp.CachedTokens, prompt)
	}
	return a
}

// input is a tool call's input object as the answer sends it.
func input(args string) json.RawMessage {
	if json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{") {
		return json.RawMessage(args)
	}
	return json.RawMessage("{}")
}

func (a answer) startUsage() map[string]any {
	u := map[string]any{"input_tokens": a.prompt - a.cached, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": a.cached, "output_tokens": 1}
	if a.extra {
		u["service_tier"] = "standard"
		u["cache_creation"] = map[string]any{"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
	}
	return u
}

func (a answer) record(stream, usageSent bool, stop, content string, f Fault) Completion {
	return Completion{ID: a.id, Requested: a.requested, Model: a.model, Stream: stream, StopReason: stop, Content: content,
		PromptTokens: a.prompt, InputTokens: a.prompt - a.cached, CacheReadTokens: a.cached, OutputTokens: a.output,
		UsageSent: usageSent, Fault: f.Kind}
}

// complete answers a non-streamed request.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, h http.Header, a answer, f Fault) {
	if (f.Kind == FaultStall || f.Kind == FaultSlow) && !s.wait(r.Context(), f.Delay) {
		return
	}
	text := a.out.Text
	if f.Kind == FaultFilter {
		text = ""
	}
	switch f.Kind {
	case FaultErrorEvent:
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.WriteJSON(w, h, map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
		return
	case FaultMalformed:
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.WriteBody(w, http.StatusOK, h, []byte(`{"id":"`+a.id+`","type":"message","content":[`))
		return
	}
	content := []any{}
	if a.extra {
		content = append(content, map[string]any{"type": "thinking", "thinking": "Considering.", "signature": "sig"})
	}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, tc := range a.out.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": a.toolIDs[i], "name": tc.Name, "input": input(tc.Arguments)})
	}
	u := a.startUsage()
	u["output_tokens"] = a.output
	body := map[string]any{"id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": content,
		"stop_reason": a.stop, "stop_sequence": nil, "usage": u}
	if a.extra {
		body["container"] = nil
	}
	if f.Kind == FaultDrop {
		s.scripts.Record(a.record(false, false, "", "", f))
		simmodel.DropJSON(w, h, body)
	}
	s.scripts.Record(a.record(false, true, a.stop, text, f))
	simmodel.WriteJSON(w, h, body)
}
