package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/anthropic"
	"github.com/creatormusic/platform/ai/anthropic/anthropictest"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type rig struct {
	sim *anthropictest.Server
	c   *anthropic.Client
	cfg anthropic.Config
}

func newRig(t *testing.T, simCfg anthropictest.Config, mod func(*anthropic.Config)) *rig {
	t.Helper()
	simCfg.Clock = fixedClock{epoch}
	sim, err := anthropictest.New(simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	cfg := anthropic.Config{BaseURL: sim.URL(), APIKey: sim.APIKey(), HTTPClient: urlguardtest.Client(t, sim.URL()),
		Now: func() time.Time { return epoch }}
	if mod != nil {
		mod(&cfg)
	}
	c, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{sim: sim, c: c, cfg: cfg}
	t.Cleanup(func() { r.assertKeyOnly(t) })
	return r
}

// assertKeyOnly checks that every request the simulator saw carried the
// configured key in x-api-key, the pinned version, and no other
// credential.
func (r *rig) assertKeyOnly(t *testing.T) {
	t.Helper()
	for _, q := range r.sim.Requests() {
		if got := q.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != r.cfg.APIKey {
			t.Errorf("%s %s carried x-api-key %q, want the configured key", q.Method, q.Path, got)
		}
		if q.Header.Get("Anthropic-Version") != anthropic.DefaultVersion {
			t.Errorf("%s %s carried anthropic-version %q", q.Method, q.Path, q.Header.Get("Anthropic-Version"))
		}
		for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
			if q.Header.Get(h) != "" {
				t.Errorf("%s %s carried %s", q.Method, q.Path, h)
			}
		}
	}
}

func user(text string) ai.Request {
	return ai.Request{Model: "sim-claude", Messages: []ai.Message{{Role: ai.RoleUser, Content: text}}}
}

func (r *rig) wantFault(t *testing.T, err error, code fault.Code, class ai.ErrorClass) *fault.Error {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if got := ai.ClassOf(err); got != class {
		t.Fatalf("class = %q, want %q (error %v)", got, class, err)
	}
	var fe *fault.Error
	errors.As(err, &fe)
	_, msg, details := fault.Public(err)
	b, _ := json.Marshal(details)
	for _, leak := range []string{r.cfg.APIKey, r.sim.URL(), strings.TrimPrefix(r.sim.URL(), "http://")} {
		if strings.Contains(err.Error(), leak) || strings.Contains(msg, leak) || strings.Contains(string(b), leak) {
			t.Fatalf("error leaks %q: %v %s", leak, err, b)
		}
	}
	return fe
}

func drain(s ai.Stream) ([]ai.Event, error) {
	var evs []ai.Event
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestCompleteWithUsageAndTheExecutedModel(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	req := ai.Request{Model: "sim-claude-latest", Messages: []ai.Message{{Role: ai.RoleSystem, Content: "Be brief."},
		{Role: ai.RoleUser, Content: "hello world"}}}
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Echo: hello world" || resp.Finish != ai.FinishCompleted || resp.Model != "sim-claude-2026" {
		t.Fatalf("response = %+v", resp)
	}
	if resp.ID != "msg_000001" || resp.UpstreamRequestID != "req_000001" {
		t.Fatalf("ids = %q %q", resp.ID, resp.UpstreamRequestID)
	}
	// prompt: 3 + system ("Be" 1 "brief" 2 "." 1) + (3 + "hello" 2 + "world" 2).
	want := ai.Usage{InputTokens: 14, OutputTokens: 6}
	if !resp.UsageReported || resp.Usage != want {
		t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
	}
	var sent struct {
		System    string `json:"system"`
		MaxTokens int    `json:"max_tokens"`
		Messages  []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.sim.Requests()[0].Body, &sent); err != nil || sent.System != "Be brief." ||
		sent.MaxTokens != anthropic.DefaultMaxTokens || len(sent.Messages) != 1 {
		t.Fatalf("request = %+v (%v)", sent, err)
	}
}

func TestCacheReadsAreInputAndReasoningIsOutput(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	r.sim.Reply("sim-claude", anthropictest.Reply{Text: "done", CachedTokens: 5, ReasoningTokens: 9}, 1)
	resp, err := r.c.Complete(context.Background(), user("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	c := r.sim.Completions()[0]
	want := ai.Usage{InputTokens: 10, OutputTokens: 1 + 9, CachedTokens: 5}
	if resp.Usage != want || c.InputTokens != 5 || c.CacheReadTokens != 5 {
		t.Fatalf("usage = %+v, want %+v (simulator %+v)", resp.Usage, want, c)
	}
}

func TestJSONOutputThroughTheSystemInstruction(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"scenes":{"type":"array","items":{"type":"string"},"minItems":2}}}`)
	req := user("Plan a video.")
	req.JSON, req.JSONSchema = true, schema
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != string(anthropictest.Instance(schema)) || resp.Content != `{"scenes":["example","example"],"title":"example"}` {
		t.Fatalf("content = %s", resp.Content)
	}
	r.sim.Reply("sim-claude", anthropictest.Reply{JSON: `{"title":"Blueprint"}`}, 1)
	s, err := r.c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := drain(s); err != nil || s.Response().Content != `{"title":"Blueprint"}` {
		t.Fatalf("streamed json = %q, %v", s.Response().Content, err)
	}
}

var tools = []ai.Tool{{Name: "read_project", Description: "Read a project.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"projectId":{"type":"string"}},"required":["projectId"]}`)}}

func TestToolUseCompleteStreamAndResult(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	args := `{"projectId":"prj_0123456789","note":"caf\u00e9 \"quoted\""}`
	r.sim.Reply("sim-claude", anthropictest.Reply{Text: "Let me look.", ToolCalls: []anthropictest.ToolCall{
		{Name: "read_project", Arguments: args}, {Name: "read_project", Arguments: `{"projectId":"b"}`}}}, 2)
	req := user("open my project")
	req.Tools, req.ToolChoice = tools, ai.ToolChoiceRequired
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Finish != ai.FinishToolCalls || resp.Content != "Let me look." || len(resp.ToolCalls) != 2 ||
		string(resp.ToolCalls[0].Arguments) != args || resp.ToolCalls[0].ID != "toolu_000001" {
		t.Fatalf("response = %+v", resp)
	}
	s, err := r.c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := drain(s)
	if err != nil {
		t.Fatal(err)
	}
	fragments, firstIndex := 0, -1
	for _, ev := range evs {
		if ev.Kind == ai.EventToolCall && ev.ToolCall.Arguments != "" && ev.ToolCall.Index == 0 {
			fragments++
		}
		if ev.Kind == ai.EventToolCall && ev.ToolCall.ID != "" && firstIndex < 0 {
			firstIndex = ev.ToolCall.Index
		}
	}
	got := s.Response()
	if fragments < 3 || firstIndex != 0 || got.Finish != ai.FinishToolCalls || len(got.ToolCalls) != 2 ||
		string(got.ToolCalls[0].Arguments) != args || string(got.ToolCalls[1].Arguments) != `{"projectId":"b"}` ||
		got.Content != "Let me look." || !got.UsageReported {
		t.Fatalf("%d fragments, first index %d, assembled %+v", fragments, firstIndex, got)
	}
	var sent struct {
		ToolChoice struct {
			Type string `json:"type"`
		} `json:"tool_choice"`
		Tools []struct {
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if json.Unmarshal(r.sim.Requests()[0].Body, &sent); sent.ToolChoice.Type != "any" || len(sent.Tools) != 1 {
		t.Fatalf("tools sent = %+v", sent)
	}

	follow := user("open my project")
	follow.Tools = tools
	follow.Messages = append(follow.Messages, ai.Message{Role: ai.RoleAssistant, Content: "Let me look.", ToolCalls: got.ToolCalls},
		ai.Message{Role: ai.RoleTool, ToolCallID: got.ToolCalls[0].ID, Content: `{"title":"Demo"}`},
		ai.Message{Role: ai.RoleTool, ToolCallID: got.ToolCalls[1].ID, Content: "not found", ToolError: true})
	resp, err = r.c.Complete(context.Background(), follow)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Tool result received: not found" {
		t.Fatalf("follow-up = %q", resp.Content)
	}
	var turns struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type    string `json:"type"`
				IsError bool   `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
	}
	reqs := r.sim.Requests()
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &turns)
	if len(turns.Messages) != 3 || turns.Messages[2].Role != "user" || len(turns.Messages[2].Content) != 2 ||
		turns.Messages[2].Content[0].Type != "tool_result" || !turns.Messages[2].Content[1].IsError {
		t.Fatalf("turns = %+v", turns)
	}
}

func TestStreamTextUsageAndExtraEvents(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	for _, model := range []string{"sim-claude-latest", "fault-extra_fields"} {
		req := user("a rather long sentence about music")
		req.Model = model
		s, err := r.c.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(s)
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		var text strings.Builder
		for _, ev := range evs {
			if ev.Kind == ai.EventText {
				text.WriteString(ev.Text)
			}
		}
		resp := s.Response()
		cs := r.sim.Completions()
		c := cs[len(cs)-1]
		if text.String() != "Echo: a rather long sentence about music" || resp.Content != text.String() ||
			resp.Model != c.Model || resp.ID != c.ID || resp.Usage.InputTokens != int64(c.PromptTokens) ||
			resp.Usage.OutputTokens != int64(c.OutputTokens) || resp.Finish != ai.FinishCompleted {
			t.Fatalf("%s: response %+v, simulator %+v", model, resp, c)
		}
		if last := evs[len(evs)-1]; last.Kind != ai.EventDone || last.Usage != resp.Usage {
			t.Fatalf("%s: last event = %+v", model, last)
		}
	}
	if got := r.sim.Completions()[0].Model; got != "sim-claude-2026" {
		t.Fatalf("executed model = %q", got)
	}
}

func TestRefusalTable(t *testing.T) {
	cases := []struct {
		name      string
		fault     anthropictest.Fault
		code      fault.Code
		class     ai.ErrorClass
		retryable bool
		after     time.Duration
		status    int
	}{
		{"rate limit", anthropictest.Fault{Kind: anthropictest.FaultRateLimit, RetryAfter: 3 * time.Second}, fault.RateLimited, ai.ClassRateLimit, true, 3 * time.Second, 429},
		{"rate limit, reset time", anthropictest.Fault{Kind: anthropictest.FaultRateLimit, RetryAfter: 12 * time.Second, Hint: anthropictest.HintReset}, fault.RateLimited, ai.ClassRateLimit, true, 12 * time.Second, 429},
		{"rate limit, no hint", anthropictest.Fault{Kind: anthropictest.FaultRateLimit, Hint: anthropictest.HintNone}, fault.RateLimited, ai.ClassRateLimit, true, 0, 429},
		{"overloaded 529", anthropictest.Fault{Kind: anthropictest.FaultOverloaded}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 529},
		{"api_error 500", anthropictest.Fault{Kind: anthropictest.FaultServer}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 500},
		{"503", anthropictest.Fault{Kind: anthropictest.FaultServer, Status: 503}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 503},
		{"timeout_error 504", anthropictest.Fault{Kind: anthropictest.FaultServer, Status: 504}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 504},
		{"408", anthropictest.Fault{Kind: anthropictest.FaultServer, Status: 408}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 408},
		{"500 x-should-retry false", anthropictest.Fault{Kind: anthropictest.FaultServer, NoRetry: true}, fault.ProviderUnavailable, ai.ClassServer, false, 0, 500},
		{"credit balance", anthropictest.Fault{Kind: anthropictest.FaultCredits}, fault.ProviderCreditsExhausted, ai.ClassCredits, false, 0, 400},
		{"billing_error 402", anthropictest.Fault{Kind: anthropictest.FaultCredits, Status: 402}, fault.ProviderCreditsExhausted, ai.ClassCredits, false, 0, 402},
		{"prompt too long", anthropictest.Fault{Kind: anthropictest.FaultContext}, fault.InvalidInput, ai.ClassContext, false, 0, 400},
		{"authentication_error", anthropictest.Fault{Kind: anthropictest.FaultAuth}, fault.ProviderUnavailable, ai.ClassAuth, false, 0, 401},
		{"permission_error", anthropictest.Fault{Kind: anthropictest.FaultPermission}, fault.ProviderUnavailable, ai.ClassAuth, false, 0, 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, anthropictest.Config{}, nil)
			for _, stream := range []bool{false, true} {
				r.sim.Fail("sim-claude", tc.fault, 1)
				var err error
				if stream {
					_, err = r.c.Stream(context.Background(), user("hi"))
				} else {
					_, err = r.c.Complete(context.Background(), user("hi"))
				}
				fe := r.wantFault(t, err, tc.code, tc.class)
				if ai.RetryableOf(err) != tc.retryable || fe.Details[ai.DetailStatus] != tc.status || fe.Details[ai.DetailRequestID] == nil {
					t.Fatalf("stream %v: details = %v", stream, fe.Details)
				}
				if got, ok := ai.RetryAfterOf(err); got != tc.after || ok != (tc.after > 0) {
					t.Fatalf("stream %v: retry after = %v, want %v", stream, got, tc.after)
				}
			}
			if _, err := r.c.Complete(context.Background(), user("hi")); err != nil {
				t.Fatalf("after the scripted fault: %v", err)
			}
		})
	}
}

func TestAuthErrorEchoingTheKeyIsRedacted(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	r.sim.Fail("", anthropictest.Fault{Kind: anthropictest.FaultAuth}, 1)
	_, err := r.c.Complete(context.Background(), user("hi"))
	fe := r.wantFault(t, err, fault.ProviderUnavailable, ai.ClassAuth)
	if !strings.Contains(fe.Error(), "invalid x-api-key: [redacted]") {
		t.Fatalf("cause = %v", fe)
	}
}

func TestWrongKeyMissingModelAndOverflow(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	req := user("hi")
	req.Model = "no-such-model"
	_, err := r.c.Complete(context.Background(), req)
	if fe := r.wantFault(t, err, fault.ProviderUnavailable, ai.ClassRequest); fe.Details[ai.DetailReason] != "not_found" {
		t.Fatalf("details = %v", fe.Details)
	}
	long := user(strings.Repeat("word ", 5000))
	long.Model = "sim-haiku"
	_, err = r.c.Complete(context.Background(), long)
	r.wantFault(t, err, fault.InvalidInput, ai.ClassContext)

	wrong, err := anthropic.New(anthropic.Config{BaseURL: r.sim.URL(), APIKey: "sk-ant-wrong-secret", HTTPClient: urlguardtest.Client(t, r.sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Complete(context.Background(), user("hi"))
	if ai.ClassOf(err) != ai.ClassAuth || strings.Contains(err.Error(), "sk-ant-wrong-secret") {
		t.Fatalf("wrong key: %v", err)
	}
	r.sim.Reset() // the wrong key's request is not the configured key's
}

func TestStopReasons(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, nil)
	for _, tc := range []struct {
		kind anthropictest.FaultKind
		want ai.Finish
	}{{anthropictest.FaultFilter, ai.FinishFiltered}, {anthropictest.FaultLength, ai.FinishTruncated}} {
		r.sim.Fail("sim-claude", anthropictest.Fault{Kind: tc.kind, After: 2}, 2)
		resp, err := r.c.Complete(context.Background(), user("tell me everything"))
		if err != nil || resp.Finish != tc.want {
			t.Fatalf("%s: complete = %+v, %v", tc.kind, resp, err)
		}
		s, err := r.c.Stream(context.Background(), user("tell me everything"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = drain(s)
		s.Close()
		if err != nil || s.Response().Finish != tc.want || !s.Response().UsageReported {
			t.Fatalf("%s: stream = %+v, %v", tc.kind, s.Response(), err)
		}
	}
	req := user("one two three four five six")
	req.MaxOutputTokens = 3
	req.Stop = []string{"four"}
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil || resp.Finish != ai.FinishTruncated || resp.Content != "Echo: one" {
		t.Fatalf("max_tokens = %+v, %v", resp, err)
	}
	req.MaxOutputTokens = 100
	resp, err = r.c.Complete(context.Background(), req)
	if err != nil || resp.Finish != ai.FinishCompleted || resp.Content != "Echo: one two three " {
		t.Fatalf("stop sequence = %+v, %v", resp, err)
	}
}

func TestMidStreamFailures(t *testing.T) {
	cases := []struct {
		name   string
		fault  anthropictest.Fault
		code   fault.Code
		reason string
	}{
		{"drop", anthropictest.Fault{Kind: anthropictest.FaultDrop, After: 2}, fault.ProviderUnavailable, "dropped"},
		{"drop, connection broken", anthropictest.Fault{Kind: anthropictest.FaultDrop, After: 2, Abort: true}, fault.ProviderUnavailable, "dropped"},
		{"error event", anthropictest.Fault{Kind: anthropictest.FaultErrorEvent, After: 2}, fault.ProviderUnavailable, "error_event"},
		{"malformed event", anthropictest.Fault{Kind: anthropictest.FaultMalformed, After: 2}, fault.ProviderUnavailable, "malformed_chunk"},
		{"stall", anthropictest.Fault{Kind: anthropictest.FaultStall, After: 2}, fault.ProviderTimeout, "idle_timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, anthropictest.Config{}, func(c *anthropic.Config) { c.IdleTimeout = 200 * time.Millisecond })
			r.sim.Fail("sim-claude", tc.fault, 1)
			s, err := r.c.Stream(context.Background(), user("a long enough answer to split"))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, err := drain(s)
			fe := r.wantFault(t, err, tc.code, ai.ClassInterrupted)
			resp := s.Response()
			if fe.Details[ai.DetailReason] != tc.reason || len(evs) != 2 || resp.Content != "Echo: a long e" ||
				resp.UsageReported || resp.Finish != "" || resp.ID == "" || resp.Model != "sim-claude" {
				t.Fatalf("details %v, %d events, partial %+v", fe.Details, len(evs), resp)
			}
		})
	}
}

func TestFailuresBeforeAnyOutput(t *testing.T) {
	cases := []struct {
		fault  anthropictest.Fault
		code   fault.Code
		class  ai.ErrorClass
		reason string
	}{
		{anthropictest.Fault{Kind: anthropictest.FaultDrop}, fault.ProviderUnavailable, ai.ClassServer, "dropped"},
		{anthropictest.Fault{Kind: anthropictest.FaultErrorEvent}, fault.ProviderUnavailable, ai.ClassServer, "error_event"},
		{anthropictest.Fault{Kind: anthropictest.FaultMalformed}, fault.ProviderUnavailable, ai.ClassMalformed, "malformed_chunk"},
		{anthropictest.Fault{Kind: anthropictest.FaultStall}, fault.ProviderTimeout, ai.ClassServer, "idle_timeout"},
	}
	for _, tc := range cases {
		r := newRig(t, anthropictest.Config{}, func(c *anthropic.Config) { c.IdleTimeout = 150 * time.Millisecond })
		r.sim.Fail("sim-claude", tc.fault, 1)
		_, err := r.c.Stream(context.Background(), user("hi"))
		if fe := r.wantFault(t, err, tc.code, tc.class); fe.Details[ai.DetailReason] != tc.reason {
			t.Fatalf("%s: details = %v", tc.fault.Kind, fe.Details)
		}
	}
	for _, tc := range []struct {
		kind   anthropictest.FaultKind
		class  ai.ErrorClass
		reason string
	}{
		{anthropictest.FaultErrorEvent, ai.ClassServer, "error_in_body"},
		{anthropictest.FaultMalformed, ai.ClassMalformed, "malformed_response"},
		{anthropictest.FaultDrop, ai.ClassServer, "unreachable"},
	} {
		r := newRig(t, anthropictest.Config{}, nil)
		r.sim.Fail("sim-claude", anthropictest.Fault{Kind: tc.kind}, 1)
		_, err := r.c.Complete(context.Background(), user("hi"))
		if fe := r.wantFault(t, err, fault.ProviderUnavailable, tc.class); fe.Details[ai.DetailReason] != tc.reason {
			t.Fatalf("complete %s: details = %v", tc.kind, fe.Details)
		}
	}
}

func TestTotalDeadline(t *testing.T) {
	r := newRig(t, anthropictest.Config{}, func(c *anthropic.Config) { c.Timeout = 200 * time.Millisecond })
	r.sim.Fail("sim-claude", anthropictest.Fault{Kind: anthropictest.FaultNoHeaders}, 1)
	_, err := r.c.Complete(context.Background(), user("hi"))
	r.wantFault(t, err, fault.ProviderTimeout, ai.ClassServer)
	r.sim.Fail("sim-claude", anthropictest.Fault{Kind: anthropictest.FaultSlow}, 1)
	_, err = r.c.Stream(context.Background(), user("hi"))
	if fe := r.wantFault(t, err, fault.ProviderTimeout, ai.ClassServer); fe.Details[ai.DetailReason] != "deadline" {
		t.Fatalf("details = %v", fe.Details)
	}
}

func TestModelsArePaged(t *testing.T) {
	r := newRig(t, anthropictest.Config{PageSize: 1}, nil)
	ms, err := r.c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].ID != "sim-claude" || ms[0].DisplayName != "Sim Claude" || ms[2].ID != "sim-claude-latest" ||
		!ms[1].Created.Equal(epoch) {
		t.Fatalf("models = %+v", ms)
	}
	if n := len(r.sim.Requests()); n != 3 {
		t.Fatalf("%d pages asked, want 3", n)
	}
}

func TestNewNeedsAKeyAndAnAllowedBase(t *testing.T) {
	if _, err := anthropic.New(anthropic.Config{BaseURL: "https://api.anthropic.com"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("no key: %v", err)
	}
	if _, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:9", APIKey: "k"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("loopback without an allowing client: %v", err)
	}
	if _, err := anthropic.New(anthropic.Config{BaseURL: "https://api.anthropic.com", APIKey: "k"}); err != nil {
		t.Fatal(err)
	}
}
