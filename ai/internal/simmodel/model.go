// Package simmodel is what the AI provider simulators (ai/openai/openaitest,
// ai/anthropic/anthropictest) share below their wires: a deterministic
// tokenizer, the canned "model" that answers (an echo, a scripted reply, a
// schema-shaped JSON object, scripted tool calls) and how its answer ends,
// the split of answers into stream pieces and the faults that strike
// between them, the fault and reply scripts with their control routes, the
// JSON writers, and the loopback host with its request log. Nothing here is random: the same requests get the same answers,
// ids and usage on every run.
package simmodel

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens counts the tokens of s deterministically: each run of letters and
// digits is one token per four characters (rounded up), each other
// non-space character one token, and spaces none.
func Tokens(s string) int {
	n := 0
	for _, u := range units(s) {
		n += u.tokens
	}
	return n
}

// unit is a word or a symbol of a text, with its tokens and its end.
type unit struct {
	tokens int
	end    int // byte offset just past the unit
}

func units(s string) []unit {
	var out []unit
	word := 0
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word++
			if next := i + utf8.RuneLen(r); next == len(s) || !isWord(s[next:]) {
				out = append(out, unit{tokens: (word + 3) / 4, end: next})
				word = 0
			}
		case unicode.IsSpace(r):
		default:
			out = append(out, unit{tokens: 1, end: i + utf8.RuneLen(r)})
		}
	}
	return out
}

func isWord(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// CutTokens returns the longest prefix of s, ending after a whole word or
// symbol, of at most n tokens.
func CutTokens(s string, n int) string {
	t, end := 0, 0
	for _, u := range units(s) {
		if t+u.tokens > n {
			break
		}
		t += u.tokens
		end = u.end
	}
	return s[:end]
}

// Split cuts s into pieces of at most n bytes on rune boundaries, so that
// words, JSON tokens and escapes are split mid-way, as real streams do.
func Split(s string, n int) []string {
	if n <= 0 {
		n = 7
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// ToolCall is a tool call a Reply scripts.
type ToolCall struct {
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is the arguments' JSON text, sent as is (it may be
	// deliberately invalid).
	Arguments string `json:"arguments"`
}

// Reply scripts the model's next answers to a model id.
type Reply struct {
	// Text is the answer in text mode.
	Text string `json:"text,omitempty"`
	// JSON is the answer in JSON mode, sent as is.
	JSON string `json:"json,omitempty"`
	// ToolCalls, when set, make the answer propose these calls (after
	// Text, if any) and finish with tool calls.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// CachedTokens is reported as the cached part of the input.
	CachedTokens int `json:"cachedTokens,omitempty"`
	// ReasoningTokens is added to the output and reported as reasoning.
	ReasoningTokens int `json:"reasoningTokens,omitempty"`
}

// Input is what the canned model reads of a request.
type Input struct {
	// LastUser is the text of the last user turn.
	LastUser string
	// LastTool is the result of the last turn when it is a tool result.
	LastTool string
	// JSON asks for a JSON object; Schema is its schema, if any.
	JSON   bool
	Schema json.RawMessage
	// MaxTokens caps the answer's text; zero means no cap.
	MaxTokens int
}

// Output is the canned model's answer.
type Output struct {
	// Text is the answer's text.
	Text string
	// ToolCalls are the proposed calls.
	ToolCalls []ToolCall
	// Truncated reports that MaxTokens cut the text.
	Truncated bool
}

// Answer is the canned model: a scripted reply when one is given (its
// tool calls, its JSON in JSON mode, else its text), else in JSON mode an
// object shaped by the schema (or {"answer": echo}), else an echo of the
// last tool result or user turn. MaxTokens cuts the text.
func Answer(in Input, r *Reply) Output {
	var out Output
	switch {
	case r != nil && len(r.ToolCalls) > 0:
		out.Text, out.ToolCalls = r.Text, r.ToolCalls
	case in.JSON && r != nil && r.JSON != "":
		out.Text = r.JSON
	case in.JSON && len(in.Schema) > 0:
		out.Text = string(Instance(in.Schema))
	case in.JSON:
		b, _ := json.Marshal(map[string]string{"answer": echo(in)})
		out.Text = string(b)
	case r != nil && r.Text != "":
		out.Text = r.Text
	default:
		out.Text = echo(in)
	}
	if in.MaxTokens > 0 && Tokens(out.Text) > in.MaxTokens {
		out.Text, out.Truncated, out.ToolCalls = CutTokens(out.Text, in.MaxTokens), true, nil
	}
	return out
}

// Tokens counts the answer's output: its text's tokens and its tool
// calls' names and arguments.
func (o Output) Tokens() int {
	n := Tokens(o.Text)
	for _, tc := range o.ToolCalls {
		n += Tokens(tc.Name) + Tokens(tc.Arguments)
	}
	return n
}

// The fault kinds End applies; a simulator's own kinds of these names take
// these values.
const (
	// KindLength cuts the answer as the output cap would.
	KindLength = "length"
	// KindFilter withholds the answer as a content filter would.
	KindFilter = "filter"
)

// Endings are a wire's words for how an answer ends.
type Endings struct {
	// Length ends an answer the output cap cut.
	Length string
	// ToolCalls ends an answer that proposes tool calls.
	ToolCalls string
	// Filter ends an answer a content filter withheld.
	Filter string
}

// End settles how out ends, given its end so far (end): cut by the output
// cap (Length), else proposing tool calls (ToolCalls); then a length fault
// cuts the text to two tokens (Length) and a filter fault withholds the
// tool calls (Filter).
func End[K ~string](out Output, kind K, end string, e Endings) (Output, string) {
	switch {
	case out.Truncated:
		end = e.Length
	case len(out.ToolCalls) > 0:
		end = e.ToolCalls
	}
	switch kind {
	case KindLength:
		out.Text, out.ToolCalls, end = CutTokens(out.Text, 2), nil, e.Length
	case KindFilter:
		out.ToolCalls, end = nil, e.Filter
	}
	return out, end
}

func echo(in Input) string {
	if in.LastTool != "" {
		return "Tool result received: " + in.LastTool
	}
	return "Echo: " + in.LastUser
}

// Instance returns a JSON value shaped by schema: const, the first enum
// value or the default when given; the first branch of anyOf, oneOf or
// allOf; every property of an object (keys sorted); one item of an array
// (or minItems); "example" (or a value of the format: date, date-time,
// uri, email) padded to minLength and cut to maxLength; minimum or 1 for
// numbers; true for booleans.
func Instance(schema json.RawMessage) json.RawMessage {
	var s any
	if json.Unmarshal(schema, &s) != nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(instance(s, 0))
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

func instance(v any, depth int) any {
	s, ok := v.(map[string]any)
	if !ok || depth > 8 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := s["default"]; ok {
		return d
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return instance(alts[0], depth+1)
		}
	}
	typ, _ := s["type"].(string)
	if list, ok := s["type"].([]any); ok {
		for _, t := range list {
			if ts, _ := t.(string); ts != "null" && ts != "" {
				typ = ts
				break
			}
		}
	}
	if typ == "" {
		if _, ok := s["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := map[string]any{}
		for _, k := range keys {
			out[k] = instance(props[k], depth+1)
		}
		return out
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok && m > 1 {
			n = min(int(m), 16)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = instance(s["items"], depth+1)
		}
		return out
	case "string":
		str := "example"
		switch s["format"] {
		case "date":
			str = "2026-01-01"
		case "date-time":
			str = "2026-01-01T00:00:00Z"
		case "uri":
			str = "https://example.com/"
		case "email":
			str = "creator@example.com"
		}
		if m, ok := s["minLength"].(float64); ok && int(m) > len(str) {
			str += strings.Repeat("x", min(int(m), 4096)-len(str))
		}
		if m, ok := s["maxLength"].(float64); ok && int(m) < len(str) && m >= 0 {
			str = str[:int(m)]
		}
		return str
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return true
	}
	return nil
}
