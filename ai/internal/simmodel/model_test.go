package simmodel

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTokensAreDeterministic(t *testing.T) {
	cases := map[string]int{"": 0, "hello world": 4, "Echo: hi": 3, "supercalifragilistic": 5, `{"a":1}`: 7, "café déjà": 2}
	for s, want := range cases {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
	if got := CutTokens("Echo: one two three", 3); got != "Echo: one" {
		t.Fatalf("CutTokens = %q", got)
	}
}

func TestSplitCutsMidTokenOnRuneBoundaries(t *testing.T) {
	s := `{"note":"café"}`
	parts := Split(s, 7)
	if strings.Join(parts, "") != s || len(parts) < 3 {
		t.Fatalf("parts = %q", parts)
	}
	for _, p := range parts {
		if !json.Valid([]byte(`"`+strings.ReplaceAll(p, `"`, `\"`)+`"`)) || strings.ContainsRune(p, '\uFFFD') {
			t.Fatalf("part %q is not whole runes", p)
		}
	}
}

func TestAnswer(t *testing.T) {
	in := Input{LastUser: "hi"}
	if got := Answer(in, nil); got.Text != "Echo: hi" || got.Truncated {
		t.Fatalf("echo = %+v", got)
	}
	in.LastTool = "42"
	if got := Answer(in, nil); got.Text != "Tool result received: 42" {
		t.Fatalf("tool echo = %+v", got)
	}
	calls := &Reply{Text: "Let me check.", ToolCalls: []ToolCall{{Name: "f", Arguments: "{}"}}}
	if got := Answer(Input{JSON: true}, calls); len(got.ToolCalls) != 1 || got.Text != "Let me check." {
		t.Fatalf("tool calls = %+v", got)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":["null","integer"],"minimum":2},"tags":{"type":"array","items":{"type":"string","format":"date"}},"ok":{"type":"boolean"},"kind":{"anyOf":[{"const":"a"},{"const":"b"}]},"s":{"type":"string","maxLength":3}}}`)
	if got := Answer(Input{JSON: true, Schema: schema}, nil); got.Text != `{"kind":"a","n":2,"ok":true,"s":"exa","tags":["2026-01-01"]}` {
		t.Fatalf("schema instance = %s", got.Text)
	}
	if got := Answer(Input{JSON: true, LastUser: "x"}, &Reply{JSON: `{"x":1}`}); got.Text != `{"x":1}` {
		t.Fatalf("scripted json = %s", got.Text)
	}
	if got := Answer(Input{JSON: true, LastUser: "x"}, nil); got.Text != `{"answer":"Echo: x"}` {
		t.Fatalf("json echo = %s", got.Text)
	}
	if got := Answer(Input{LastUser: "one two three", MaxTokens: 3}, calls); got.Text != "Let me" || !got.Truncated || got.ToolCalls != nil {
		t.Fatalf("capped = %+v", got)
	}
}
