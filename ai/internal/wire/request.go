package wire

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

// toolName is the name rule both wires share.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Validate checks r before anything is sent: INVALID_INPUT with
// details.field naming the offending field.
func Validate(op string, r ai.Request) error {
	if strings.TrimSpace(r.Model) == "" {
		return fault.Invalid(op, "model", "A model is required.")
	}
	if len(r.Messages) == 0 {
		return fault.Invalid(op, "messages", "At least one message is required.")
	}
	for i, m := range r.Messages {
		f := "messages[" + strconv.Itoa(i) + "]"
		switch m.Role {
		case ai.RoleSystem, ai.RoleUser:
		case ai.RoleAssistant:
			for j, c := range m.ToolCalls {
				if c.ID == "" || !toolName.MatchString(c.Name) {
					return fault.Invalid(op, f+".toolCalls["+strconv.Itoa(j)+"]", "A tool call needs an id and a valid name.")
				}
			}
		case ai.RoleTool:
			if m.ToolCallID == "" {
				return fault.Invalid(op, f+".toolCallId", "A tool message must name the call it answers.")
			}
		default:
			return fault.Invalid(op, f+".role", "The role must be system, user, assistant or tool.")
		}
	}
	declared := map[string]bool{}
	for i, t := range r.Tools {
		f := "tools[" + strconv.Itoa(i) + "]"
		if !toolName.MatchString(t.Name) {
			return fault.Invalid(op, f+".name", "A tool name is 1 to 64 letters, digits, '_' or '-'.")
		}
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return fault.Invalid(op, f+".parameters", "The parameters must be a JSON Schema.")
		}
		declared[t.Name] = true
	}
	switch r.ToolChoice {
	case "", ai.ToolChoiceAuto, ai.ToolChoiceNone:
	case ai.ToolChoiceRequired:
		if len(r.Tools) == 0 {
			return fault.Invalid(op, "toolChoice", "A tool call cannot be required without tools.")
		}
	default:
		if !declared[r.ToolChoice] {
			return fault.Invalid(op, "toolChoice", "The tool choice names no declared tool.")
		}
	}
	if len(r.JSONSchema) > 0 && !json.Valid(r.JSONSchema) {
		return fault.Invalid(op, "jsonSchema", "The JSON schema must be JSON.")
	}
	if len(r.Stop) > 4 {
		return fault.Invalid(op, "stop", "At most four stop sequences are allowed.").With("limit", 4)
	}
	if r.MaxOutputTokens < 0 {
		return fault.Invalid(op, "maxOutputTokens", "The output cap cannot be negative.")
	}
	if r.Temperature != nil && (*r.Temperature < 0 || *r.Temperature > 2) {
		return fault.Invalid(op, "temperature", "The temperature must be between 0 and 2.")
	}
	return nil
}

// RequestID reads a provider's request id: x-request-id (OpenAI, vLLM),
// request-id (Anthropic), X-Generation-Id (OpenRouter), x-litellm-call-id.
func RequestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id", "X-Generation-Id", "X-Litellm-Call-Id"} {
		if v := h.Get(k); v != "" {
			return Truncate(v, 200)
		}
	}
	return ""
}

// Count is a token count decoded leniently: a number (fractions dropped),
// a numeric string, or null.
type Count int64

// UnmarshalJSON implements json.Unmarshaler.
func (c *Count) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*c = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e15 {
		*c = 0
		return nil
	}
	*c = Count(f)
	return nil
}

// Text decodes message content leniently: a string, null, or an array of
// parts whose "text" fields are joined.
func Text(raw json.RawMessage) string {
	if Absent(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// ArgumentsText reads tool-call arguments sent as a JSON string (the
// wire's form) or, leniently, as an object.
func ArgumentsText(raw json.RawMessage) string {
	if Absent(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// MentionsJSON reports whether any message mentions JSON, which OpenAI's
// json_object mode requires.
func MentionsJSON(ms []ai.Message) bool {
	for _, m := range ms {
		if strings.Contains(strings.ToLower(m.Content), "json") {
			return true
		}
	}
	return false
}

// JSONInstruction is the instruction added for JSON output where the wire
// needs one.
func JSONInstruction(schema json.RawMessage) string {
	s := "Answer with a single JSON object and nothing else."
	if len(schema) > 0 {
		s += " The object must follow this JSON Schema: " + string(schema)
	}
	return s
}
