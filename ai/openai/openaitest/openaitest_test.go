package openaitest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/internal/simctl"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func newSim(t *testing.T) *openaitest.Server {
	t.Helper()
	s, err := openaitest.New(openaitest.Config{APIKey: "sk-test", Clock: fixedClock{time.Unix(1_800_000_000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends body to path with the key and extra headers; it returns the
// status, the header and the raw body.
func post(t *testing.T, s *openaitest.Server, path, key, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestStreamWireShape(t *testing.T) {
	s := newSim(t)
	s.Reply("sim-gpt", openaitest.Reply{Text: "Sure.", ToolCalls: []openaitest.ToolCall{{Name: "read_project", Arguments: `{"projectId":"prj_123456"}`}}}, 1)
	status, h, body := post(t, s, "/v1/chat/completions", "sk-test",
		`{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if status != 200 || h.Get("Content-Type") != "text/event-stream" || h.Get("X-Request-Id") != "req_000001" {
		t.Fatalf("status %d, header %v", status, h)
	}
	if !strings.HasPrefix(body, ": keep-alive\n\n") || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("body = %q", body)
	}
	var chunks []map[string]any
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
			var c map[string]any
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				t.Fatalf("chunk %q: %v", d, err)
			}
			chunks = append(chunks, c)
		}
	}
	delta := func(c map[string]any) map[string]any {
		return c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
	}
	if delta(chunks[0])["role"] != "assistant" {
		t.Fatalf("first chunk = %v", chunks[0])
	}
	var args strings.Builder
	argPieces := 0
	for _, c := range chunks[:len(chunks)-1] {
		if c["id"] != "chatcmpl-000001" || c["created"] != float64(1_800_000_000) || c["object"] != "chat.completion.chunk" {
			t.Fatalf("chunk = %v", c)
		}
		if tcs, ok := delta(c)["tool_calls"].([]any); ok {
			tc := tcs[0].(map[string]any)
			if tc["index"] != float64(0) {
				t.Fatalf("tool call chunk = %v", tc)
			}
			if a := tc["function"].(map[string]any)["arguments"].(string); a != "" {
				args.WriteString(a)
				argPieces++
			}
		}
	}
	if args.String() != `{"projectId":"prj_123456"}` || argPieces < 3 {
		t.Fatalf("arguments %q in %d pieces", args.String(), argPieces)
	}
	finish := chunks[len(chunks)-2]["choices"].([]any)[0].(map[string]any)["finish_reason"]
	last := chunks[len(chunks)-1]
	if finish != "tool_calls" || len(last["choices"].([]any)) != 0 || last["usage"].(map[string]any)["prompt_tokens"] != float64(3+3+1) {
		t.Fatalf("finish %v, last chunk %v", finish, last)
	}

	// Without include_usage: no usage chunk, no usage key.
	_, _, body = post(t, s, "/v1/chat/completions", "sk-test", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if strings.Contains(body, `"usage"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("body without include_usage = %q", body)
	}
}

func TestSameRequestsSameAnswersAfterReset(t *testing.T) {
	s := newSim(t)
	req := `{"model":"sim-auto","messages":[{"role":"user","content":"make it deterministic"}]}`
	_, _, first := post(t, s, "/v1/chat/completions", "sk-test", req)
	s.Reset()
	_, _, second := post(t, s, "/v1/chat/completions", "sk-test", req)
	if first != second || !strings.Contains(first, `"model":"sim-gpt"`) || !strings.Contains(first, `"id":"chatcmpl-000001"`) {
		t.Fatalf("answers differ or are not as documented:\n%s\n%s", first, second)
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("request log after reset holds %d", n)
	}
}

func TestRequestRules(t *testing.T) {
	s := newSim(t)
	cases := []struct {
		key, body string
		status    int
		code      string
	}{
		{"", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}]}`, 401, "invalid_api_key"},
		{"sk-other", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}]}`, 401, "invalid_api_key"},
		{"sk-test", `{"model":"gpt-unknown","messages":[{"role":"user","content":"hi"}]}`, 404, "model_not_found"},
		{"sk-test", `{"model":"sim-gpt","messages":[{"role":"tool","tool_call_id":"x","content":"hi"}]}`, 400, ""},
		{"sk-test", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`, 400, ""},
		{"sk-test", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`, 400, ""},
		{"sk-test", `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"max_completion_tokens":5}`, 400, ""},
		{"sk-test", `{"model":"sim-gpt","messages":`, 400, ""},
	}
	for i, tc := range cases {
		status, _, body := post(t, s, "/v1/chat/completions", tc.key, tc.body)
		var e struct {
			Error struct {
				Type string `json:"type"`
				Code any    `json:"code"`
			} `json:"error"`
		}
		if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Error.Type != "invalid_request_error" ||
			(tc.code != "" && e.Error.Code != tc.code) {
			t.Fatalf("case %d: %d %s", i, status, body)
		}
	}
}

func TestHeaderMagicIDAndScriptedFaults(t *testing.T) {
	s := newSim(t)
	msg := `{"model":"%s","messages":[{"role":"user","content":"hi"}]}`
	status, h, _ := post(t, s, "/v1/chat/completions", "sk-test", strings.Replace(msg, "%s", "sim-gpt", 1), "X-Sim-Fault", "server-503")
	if status != 503 {
		t.Fatalf("header fault: %d", status)
	}
	status, _, body := post(t, s, "/v1/chat/completions", "sk-test", strings.Replace(msg, "%s", "fault-credits", 1))
	if status != 402 || !strings.Contains(body, `"code":402`) {
		t.Fatalf("magic id: %d %s", status, body)
	}
	s.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 1500 * time.Millisecond}, 2)
	for i := 0; i < 2; i++ {
		status, h, _ = post(t, s, "/v1/chat/completions", "sk-test", strings.Replace(msg, "%s", "sim-gpt", 1))
		if status != 429 || h.Get("Retry-After") != "2" || h.Get("Retry-After-Ms") != "1500" ||
			h.Get("X-Ratelimit-Remaining-Requests") != "0" || h.Get("X-Ratelimit-Reset-Requests") != "1.5s" {
			t.Fatalf("scripted rate limit %d: %d %v", i, status, h)
		}
	}
	if status, _, _ = post(t, s, "/v1/chat/completions", "sk-test", strings.Replace(msg, "%s", "sim-gpt", 1)); status != 200 {
		t.Fatalf("after the script: %d", status)
	}
}

func TestControlRoutes(t *testing.T) {
	s := newSim(t)
	if status, v := simctl.Call(t, s.URL(), http.MethodPost, "/_sim/reset", "", nil); status != 401 || v["error"] == nil {
		t.Fatalf("control without the key: %d %v", status, v)
	}
	ctl := func(path, body string) int {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer sk-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if ctl("/_sim/faults", `{"model":"sim-gpt","times":1,"fault":{"kind":"quota"}}`) != 200 ||
		ctl("/_sim/replies", `{"model":"sim-gpt","times":1,"reply":{"text":"scripted"}}`) != 200 {
		t.Fatal("scripting through the control routes failed")
	}
	msg := `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}]}`
	if status, _, body := post(t, s, "/v1/chat/completions", "sk-test", msg); status != 429 || !strings.Contains(body, "insufficient_quota") {
		t.Fatalf("scripted quota: %d %s", status, body)
	}
	if status, _, body := post(t, s, "/v1/chat/completions", "sk-test", msg); status != 200 || !strings.Contains(body, `"content":"scripted"`) {
		t.Fatalf("scripted reply: %d %s", status, body)
	}
	if status, v := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/completions", "sk-test", nil); status != 200 || len(v["data"].([]any)) != 1 {
		t.Fatalf("completions: %d %v", status, v)
	}
	if status, v := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/events", "sk-test", nil); status != 200 || len(v["data"].([]any)) != 2 {
		t.Fatalf("events: %d %v", status, v)
	}
	if ctl("/_sim/reset", "") != 200 || len(s.Completions()) != 0 || len(s.Requests()) != 0 {
		t.Fatal("reset kept state")
	}
}

func TestCloseInterruptsAStall(t *testing.T) {
	s, err := openaitest.New(openaitest.Config{APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	s.Fail("", openaitest.Fault{Kind: openaitest.FaultNoHeaders}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(`{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-test")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if time.Since(start) > 3*time.Second {
		t.Fatalf("Close took %v", time.Since(start))
	}
	if _, err := openaitest.New(openaitest.Config{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("a non-loopback address was accepted")
	}
}

// TestAControlKeyOfItsOwnKeepsTheAPIKey: with a control key other than
// the API key, the control routes take the control key alone, and the
// request log shows the API key's header redacted.
func TestAControlKeyOfItsOwnKeepsTheAPIKey(t *testing.T) {
	s, err := openaitest.New(openaitest.Config{APIKey: "sk-test", ControlKey: "ctl-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ControlKey() != "ctl-test" {
		t.Fatalf("control key %q", s.ControlKey())
	}
	if status, _ := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/events", "sk-test", nil); status != http.StatusUnauthorized {
		t.Fatalf("the API key opened a control route: %d", status)
	}
	msg := `{"model":"sim-gpt","messages":[{"role":"user","content":"hi"}]}`
	if status, _, body := post(t, s, "/v1/chat/completions", "sk-test", msg); status != 200 {
		t.Fatalf("chat: %d %s", status, body)
	}
	status, v := simctl.Call(t, s.URL(), http.MethodGet, "/_sim/events", "ctl-test", nil)
	b, _ := json.Marshal(v)
	if status != 200 || strings.Contains(string(b), "sk-test") || !strings.Contains(string(b), "[redacted]") {
		t.Fatalf("events: %d %s", status, b)
	}
}
