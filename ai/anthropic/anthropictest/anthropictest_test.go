package anthropictest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai/anthropic/anthropictest"
	"github.com/creatormusic/platform/internal/simctl"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func newSim(t *testing.T) *anthropictest.Server {
	t.Helper()
	s, err := anthropictest.New(anthropictest.Config{APIKey: "sk-ant-test", Clock: fixedClock{time.Unix(1_800_000_000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends body to /v1/messages with the given headers (key and version
// by default); it returns the status, the header and the raw body.
func post(t *testing.T, s *anthropictest.Server, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", "sk-ant-test")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestStreamEventSequence(t *testing.T) {
	s := newSim(t)
	s.Reply("", anthropictest.Reply{Text: "Sure.", ToolCalls: []anthropictest.ToolCall{{Name: "read_project", Arguments: `{"projectId":"prj_123456"}`}}}, 1)
	status, h, body := post(t, s, `{"model":"sim-claude","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
	if status != 200 || h.Get("Content-Type") != "text/event-stream" || h.Get("Request-Id") != "req_000001" {
		t.Fatalf("status %d, header %v", status, h)
	}
	var names []string
	var args strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var ev struct {
				Type  string `json:"type"`
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(d), &ev); err != nil || ev.Type != names[len(names)-1] {
				t.Fatalf("data %q under event %q: %v", d, names[len(names)-1], err)
			}
			args.WriteString(ev.Delta.PartialJSON)
		}
	}
	got := strings.Join(names, ",")
	want := "message_start,ping,content_block_start,content_block_delta,content_block_stop,content_block_start," +
		"content_block_delta,content_block_delta,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop"
	if strings.ReplaceAll(got, ",ping", "") != strings.ReplaceAll(want, ",ping", "") || !strings.HasPrefix(got, "message_start,ping") {
		t.Fatalf("events = %s", got)
	}
	if args.String() != `{"projectId":"prj_123456"}` || !strings.Contains(body, `"stop_reason":"tool_use"`) ||
		!strings.Contains(body, `"id":"toolu_000001"`) {
		t.Fatalf("tool use: %q in %s", args.String(), body)
	}
}

func TestRequestRules(t *testing.T) {
	s := newSim(t)
	ok := `{"model":"sim-claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	cases := []struct {
		body   string
		hdr    map[string]string
		status int
		typ    string
	}{
		{ok, map[string]string{"X-Api-Key": ""}, 401, "authentication_error"},
		{ok, map[string]string{"X-Api-Key": "sk-ant-other"}, 401, "authentication_error"},
		{ok, map[string]string{"Authorization": "Bearer sk-ant-test", "X-Api-Key": ""}, 401, "authentication_error"},
		{ok, map[string]string{"Anthropic-Version": ""}, 400, "invalid_request_error"},
		{`{"model":"sim-claude","messages":[{"role":"user","content":"hi"}]}`, nil, 400, "invalid_request_error"},
		{`{"model":"sim-claude","max_tokens":10,"messages":[{"role":"system","content":"hi"}]}`, nil, 400, "invalid_request_error"},
		{`{"model":"sim-claude","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, nil, 400, "invalid_request_error"},
		{`{"model":"sim-claude","max_tokens":10,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}]}`, nil, 400, "invalid_request_error"},
		{`{"model":"claude-unknown","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, nil, 404, "not_found_error"},
	}
	for i, tc := range cases {
		status, _, body := post(t, s, tc.body, tc.hdr)
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
			RequestID string `json:"request_id"`
		}
		if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Type != "error" || e.Error.Type != tc.typ || e.RequestID == "" {
			t.Fatalf("case %d: %d %s", i, status, body)
		}
	}
	if status, _, _ := post(t, s, ok, nil); status != 200 {
		t.Fatalf("a valid request: %d", status)
	}
}

func TestJSONModeFromTheSystemInstruction(t *testing.T) {
	s := newSim(t)
	body := `{"model":"sim-claude","max_tokens":100,"system":"Answer with a single JSON object and nothing else. The object must follow this JSON Schema: {\"type\":\"object\",\"properties\":{\"mood\":{\"enum\":[\"calm\"]}}}","messages":[{"role":"user","content":"hi"}]}`
	_, _, out := post(t, s, body, nil)
	var m struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Content[0].Text != `{"mood":"calm"}` || m.Usage.InputTokens == 0 {
		t.Fatalf("answer = %s (%v)", out, err)
	}
}

func TestFaultsAndControl(t *testing.T) {
	s := newSim(t)
	ok := `{"model":"sim-claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	if status, h, _ := post(t, s, ok, map[string]string{"X-Sim-Fault": "rate_limit"}); status != 429 || h.Get("Retry-After") != "2" ||
		h.Get("Anthropic-Ratelimit-Requests-Remaining") != "0" || h.Get("Anthropic-Ratelimit-Requests-Reset") != time.Unix(1_800_000_002, 0).UTC().Format(time.RFC3339) {
		t.Fatalf("rate limit: %d %v", status, h)
	}
	if status, _, body := post(t, s, strings.Replace(ok, "sim-claude", "fault-overloaded", 1), nil); status != 529 || !strings.Contains(body, "overloaded_error") {
		t.Fatalf("overloaded: %d %s", status, body)
	}
	if status, v := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/completions", "", nil); status != 401 || v["type"] != "error" {
		t.Fatalf("control without the key: %d %v", status, v)
	}
	s.Fail("sim-claude", anthropictest.Fault{Kind: anthropictest.FaultServer, Status: 504}, 1)
	if status, _, body := post(t, s, ok, nil); status != 504 || !strings.Contains(body, "timeout_error") {
		t.Fatalf("scripted 504: %d %s", status, body)
	}
	if status, _, _ := post(t, s, ok, nil); status != 200 {
		t.Fatalf("after the script: %d", status)
	}
	if status, v := simctl.Call(t, s.URL(), http.MethodPost, "/_sim/reset", "sk-ant-test", nil); status != 200 || v["reset"] != true ||
		len(s.Requests()) != 0 || len(s.Completions()) != 0 {
		t.Fatalf("reset: %d %v", status, v)
	}
}

// TestAControlKeyOfItsOwnKeepsTheAPIKey: with a control key other than
// the API key, the control routes take the control key alone, and the
// request log shows the API key's header redacted.
func TestAControlKeyOfItsOwnKeepsTheAPIKey(t *testing.T) {
	s, err := anthropictest.New(anthropictest.Config{APIKey: "sk-ant-test", ControlKey: "ctl-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if status, _ := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/events", "sk-ant-test", nil); status != http.StatusUnauthorized {
		t.Fatalf("the API key opened a control route: %d", status)
	}
	ok := `{"model":"sim-claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	if status, _, body := post(t, s, ok, nil); status != 200 {
		t.Fatalf("messages: %d %s", status, body)
	}
	status, v := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/events", s.ControlKey(), nil)
	b, _ := json.Marshal(v)
	if status != 200 || strings.Contains(string(b), "sk-ant-test") || !strings.Contains(string(b), "[redacted]") {
		t.Fatalf("events: %d %s", status, b)
	}
}
