package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/openai"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// fixedClock is the simulator's and the adapter's time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type rig struct {
	sim *openaitest.Server
	c   *openai.Client
	cfg openai.Config
}

func newRig(t *testing.T, mod func(*openai.Config)) *rig {
	t.Helper()
	sim, err := openaitest.New(openaitest.Config{Clock: fixedClock{epoch}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	cfg := openai.Config{BaseURL: sim.BaseURL(), APIKey: sim.APIKey(), HTTPClient: urlguardtest.Client(t, sim.URL()),
		Now: func() time.Time { return epoch }}
	if mod != nil {
		mod(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{sim: sim, c: c, cfg: cfg}
	t.Cleanup(func() { r.assertKeyOnly(t) })
	return r
}

// assertKeyOnly checks that every request the simulator saw carried the
// configured key and nothing else that could be a credential.
func (r *rig) assertKeyOnly(t *testing.T) {
	t.Helper()
	for _, q := range r.sim.Requests() {
		if got := q.Header.Values("Authorization"); len(got) != 1 || got[0] != "Bearer "+r.cfg.APIKey {
			t.Errorf("%s %s carried Authorization %q, want the configured key", q.Method, q.Path, got)
		}
		for _, h := range []string{"X-Api-Key", "Cookie", "Proxy-Authorization"} {
			if q.Header.Get(h) != "" {
				t.Errorf("%s %s carried %s", q.Method, q.Path, h)
			}
		}
	}
}

func user(text string) ai.Request {
	return ai.Request{Model: "sim-gpt", Messages: []ai.Message{{Role: ai.RoleUser, Content: text}}}
}

// wantFault checks err's code and class, and that it leaks neither key
// nor URL.
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
	for _, leak := range []string{r.cfg.APIKey, r.sim.URL(), strings.TrimPrefix(r.sim.URL(), "http://")} {
		if strings.Contains(err.Error(), leak) || strings.Contains(msg, leak) {
			t.Fatalf("error leaks %q: %v", leak, err)
		}
		b, _ := json.Marshal(details)
		if strings.Contains(string(b), leak) {
			t.Fatalf("details leak %q: %s", leak, b)
		}
	}
	return fe
}

func drain(t *testing.T, s ai.Stream) ([]ai.Event, error) {
	t.Helper()
	var evs []ai.Event
	for {
		ev, err := s.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestCompleteEchoesWithUsageAndTheExecutedModel(t *testing.T) {
	r := newRig(t, nil)
	req := user("hello world")
	req.Model = "sim-auto"
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Echo: hello world" || resp.Finish != ai.FinishCompleted {
		t.Fatalf("response = %+v", resp)
	}
	if resp.Model != "sim-gpt" {
		t.Fatalf("model = %q, want the executed sim-gpt from the response", resp.Model)
	}
	if resp.ID != "chatcmpl-000001" || resp.UpstreamRequestID != "req_000001" {
		t.Fatalf("ids = %q %q", resp.ID, resp.UpstreamRequestID)
	}
	// prompt: 3 + (3 + "hello" 2 + "world" 2); completion: "Echo" 1 ":" 1 "hello" 2 "world" 2.
	want := ai.Usage{InputTokens: 10, OutputTokens: 6}
	if !resp.UsageReported || resp.Usage != want {
		t.Fatalf("usage = %+v (reported %v), want %+v", resp.Usage, resp.UsageReported, want)
	}
	c := r.sim.Completions()[0]
	if int64(c.PromptTokens) != resp.Usage.InputTokens || int64(c.CompletionTokens) != resp.Usage.OutputTokens {
		t.Fatalf("simulator computed %+v", c)
	}
}

func TestCompleteReportsCachedAndReasoningTokens(t *testing.T) {
	r := newRig(t, nil)
	r.sim.Reply("sim-gpt", openaitest.Reply{Text: "done", CachedTokens: 4, ReasoningTokens: 7}, 1)
	resp, err := r.c.Complete(context.Background(), user("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	want := ai.Usage{InputTokens: 10, OutputTokens: 1 + 7, CachedTokens: 4, ReasoningTokens: 7}
	if resp.Content != "done" || resp.Usage != want {
		t.Fatalf("response = %+v, want usage %+v", resp, want)
	}
}

func TestJSONModeAnswersTheScriptOrTheSchema(t *testing.T) {
	r := newRig(t, nil)
	req := user("Draft a brief.")
	req.JSON = true
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("json_object without the word json in the prompt: %v", err)
	}
	if !json.Valid([]byte(resp.Content)) || !strings.Contains(resp.Content, `"answer"`) {
		t.Fatalf("content = %q", resp.Content)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"mood":{"enum":["calm","dark"]},"days":{"type":"integer","minimum":3}},"required":["title"]}`)
	req.JSONSchema = schema
	resp, err = r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != string(openaitest.Instance(schema)) || resp.Content != `{"days":3,"mood":"calm","title":"example"}` {
		t.Fatalf("schema answer = %s", resp.Content)
	}
	r.sim.Reply("sim-gpt", openaitest.Reply{JSON: `{"title":"Night Drive"}`}, 1)
	resp, err = r.c.Complete(context.Background(), req)
	if err != nil || resp.Content != `{"title":"Night Drive"}` {
		t.Fatalf("scripted json = %q, %v", resp.Content, err)
	}
	var sent struct {
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	reqs := r.sim.Requests()
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &sent); err != nil || sent.ResponseFormat.Type != "json_schema" {
		t.Fatalf("response_format = %+v (%v)", sent.ResponseFormat, err)
	}
}

var tools = []ai.Tool{{Name: "read_project", Description: "Read a project.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"projectId":{"type":"string"}},"required":["projectId"]}`)}}

func TestToolCallsCompleteAndStreamAssembled(t *testing.T) {
	r := newRig(t, nil)
	args := `{"projectId":"prj_0123456789","note":"caf\u00e9 \"quoted\""}`
	script := openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "read_project", Arguments: args}, {Name: "read_project", Arguments: `{"projectId":"b"}`}}}
	r.sim.Reply("sim-gpt", script, 2)
	req := user("open my project")
	req.Tools = tools
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Finish != ai.FinishToolCalls || len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "read_project" ||
		string(resp.ToolCalls[0].Arguments) != args || resp.ToolCalls[0].ID == "" || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
		t.Fatalf("response = %+v", resp)
	}
	s, err := r.c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := drain(t, s)
	if err != nil {
		t.Fatal(err)
	}
	fragments := 0
	for _, ev := range evs {
		if ev.Kind == ai.EventToolCall && ev.ToolCall.Index == 0 && ev.ToolCall.Arguments != "" {
			fragments++
		}
	}
	if fragments < 3 {
		t.Fatalf("arguments came in %d fragments; the simulator splits them mid-token", fragments)
	}
	got := s.Response()
	if got.Finish != ai.FinishToolCalls || len(got.ToolCalls) != 2 || string(got.ToolCalls[0].Arguments) != args ||
		string(got.ToolCalls[1].Arguments) != `{"projectId":"b"}` || got.ToolCalls[1].ID == "" {
		t.Fatalf("assembled = %+v", got)
	}
	if last := evs[len(evs)-1]; last.Kind != ai.EventDone || last.Finish != ai.FinishToolCalls || last.Usage != got.Usage || !got.UsageReported {
		t.Fatalf("last event = %+v", last)
	}

	// The result goes back as a tool turn that the server matches to the call.
	follow := req
	follow.Messages = append(follow.Messages, ai.Message{Role: ai.RoleAssistant, ToolCalls: got.ToolCalls[:1]},
		ai.Message{Role: ai.RoleTool, ToolCallID: got.ToolCalls[0].ID, Content: `{"title":"Demo"}`})
	resp, err = r.c.Complete(context.Background(), follow)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `Tool result received: {"title":"Demo"}` {
		t.Fatalf("follow-up = %q", resp.Content)
	}
}

func TestMalformedToolArgumentsStayValidJSON(t *testing.T) {
	r := newRig(t, nil)
	r.sim.Reply("sim-gpt", openaitest.Reply{ToolCalls: []openaitest.ToolCall{{Name: "read_project", Arguments: `{"projectId":`}, {Name: "read_project"}}}, 1)
	req := user("open")
	req.Tools = tools
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.ToolCalls[0].Arguments) != `"{\"projectId\":"` || string(resp.ToolCalls[1].Arguments) != `{}` {
		t.Fatalf("arguments = %s, %s", resp.ToolCalls[0].Arguments, resp.ToolCalls[1].Arguments)
	}
}

func TestStreamDeliversTextUsageAndModel(t *testing.T) {
	r := newRig(t, nil)
	req := user("a rather long sentence about music")
	req.Model = "sim-auto"
	s, err := r.c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := drain(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	deltas := 0
	for _, ev := range evs {
		if ev.Kind == ai.EventText {
			text.WriteString(ev.Text)
			deltas++
		}
	}
	resp := s.Response()
	if text.String() != "Echo: a rather long sentence about music" || resp.Content != text.String() || deltas < 4 {
		t.Fatalf("text %q in %d deltas, response %q", text.String(), deltas, resp.Content)
	}
	c := r.sim.Completions()[0]
	if resp.Model != "sim-gpt" || resp.ID != c.ID || !resp.UsageReported || resp.Usage.InputTokens != int64(c.PromptTokens) ||
		resp.Usage.OutputTokens != int64(c.CompletionTokens) || resp.Finish != ai.FinishCompleted {
		t.Fatalf("response = %+v, simulator %+v", resp, c)
	}
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if json.Unmarshal(r.sim.Requests()[0].Body, &sent); !sent.Stream || !sent.StreamOptions.IncludeUsage {
		t.Fatalf("stream request = %+v", sent)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after the end = %v", err)
	}
}

func TestOutputCapFieldAndTruncation(t *testing.T) {
	for _, field := range []string{openai.MaxCompletionTokens, openai.MaxTokens} {
		r := newRig(t, func(c *openai.Config) { c.MaxTokensField = field })
		req := user("one two three four five six")
		req.MaxOutputTokens = 3
		resp, err := r.c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Finish != ai.FinishTruncated || resp.Content != "Echo: one" {
			t.Fatalf("%s: response = %+v", field, resp)
		}
		var sent map[string]any
		_ = json.Unmarshal(r.sim.Requests()[0].Body, &sent)
		if sent[field] != float64(3) || len(sent) != 3 {
			t.Fatalf("%s: body = %v", field, sent)
		}
	}
}

func TestExtraFieldsAreTolerated(t *testing.T) {
	r := newRig(t, nil)
	req := user("hi")
	req.Model = "fault-extra_fields"
	resp, err := r.c.Complete(context.Background(), req)
	if err != nil || resp.Content != "Echo: hi" || !resp.UsageReported {
		t.Fatalf("complete = %+v, %v", resp, err)
	}
	s, err := r.c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := drain(t, s); err != nil || s.Response().Content != "Echo: hi" || s.Response().Model != "fault-extra_fields" {
		t.Fatalf("stream = %+v, %v", s.Response(), err)
	}
}

func TestStreamWithoutDoneAfterFinishAndUsage(t *testing.T) {
	r := newRig(t, nil)
	r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultNoDone}, 1)
	s, err := r.c.Stream(context.Background(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := drain(t, s)
	if err != nil || evs[len(evs)-1].Kind != ai.EventDone || !s.Response().UsageReported || s.Response().Content != "Echo: hi" {
		t.Fatalf("stream = %+v, %v", s.Response(), err)
	}
}

func TestRefusalTable(t *testing.T) {
	cases := []struct {
		name      string
		fault     openaitest.Fault
		code      fault.Code
		class     ai.ErrorClass
		retryable bool
		after     time.Duration // retry hint; zero means none
		status    int
	}{
		{"rate limit, all hints", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 1500 * time.Millisecond}, fault.RateLimited, ai.ClassRateLimit, true, 1500 * time.Millisecond, 429},
		{"rate limit, seconds", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 3 * time.Second, Hint: openaitest.HintSeconds}, fault.RateLimited, ai.ClassRateLimit, true, 3 * time.Second, 429},
		{"rate limit, http date", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 7 * time.Second, Hint: openaitest.HintDate}, fault.RateLimited, ai.ClassRateLimit, true, 7 * time.Second, 429},
		{"rate limit, reset headers", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 2500 * time.Millisecond, Hint: openaitest.HintReset}, fault.RateLimited, ai.ClassRateLimit, true, 2500 * time.Millisecond, 429},
		{"rate limit, no hint", openaitest.Fault{Kind: openaitest.FaultRateLimit, Hint: openaitest.HintNone}, fault.RateLimited, ai.ClassRateLimit, true, 0, 429},
		{"quota", openaitest.Fault{Kind: openaitest.FaultQuota}, fault.ProviderCreditsExhausted, ai.ClassCredits, false, 0, 429},
		{"credits 402", openaitest.Fault{Kind: openaitest.FaultCredits}, fault.ProviderCreditsExhausted, ai.ClassCredits, false, 0, 402},
		{"500", openaitest.Fault{Kind: openaitest.FaultServer}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 500},
		{"502", openaitest.Fault{Kind: openaitest.FaultServer, Status: 502}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 502},
		{"503", openaitest.Fault{Kind: openaitest.FaultServer, Status: 503}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 503},
		{"408", openaitest.Fault{Kind: openaitest.FaultServer, Status: 408}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 408},
		{"409", openaitest.Fault{Kind: openaitest.FaultServer, Status: 409}, fault.ProviderUnavailable, ai.ClassServer, true, 0, 409},
		{"500 x-should-retry false", openaitest.Fault{Kind: openaitest.FaultServer, NoRetry: true}, fault.ProviderUnavailable, ai.ClassServer, false, 0, 500},
		{"context", openaitest.Fault{Kind: openaitest.FaultContext}, fault.InvalidInput, ai.ClassContext, false, 0, 400},
		{"context vLLM", openaitest.Fault{Kind: openaitest.FaultContextVLLM}, fault.InvalidInput, ai.ClassContext, false, 0, 400},
		{"context llama.cpp", openaitest.Fault{Kind: openaitest.FaultContextLlamaCpp}, fault.InvalidInput, ai.ClassContext, false, 0, 400},
		{"auth", openaitest.Fault{Kind: openaitest.FaultAuth}, fault.ProviderUnavailable, ai.ClassAuth, false, 0, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			for _, stream := range []bool{false, true} {
				r.sim.Fail("sim-gpt", tc.fault, 1)
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
				got, ok := ai.RetryAfterOf(err)
				if got != tc.after || ok != (tc.after > 0) {
					t.Fatalf("stream %v: retry after = %v %v, want %v", stream, got, ok, tc.after)
				}
				if tc.after > 0 && fe.Details[ai.DetailRetryAfter] != int64((tc.after+time.Second-1)/time.Second) {
					t.Fatalf("stream %v: retryAfter seconds = %v", stream, fe.Details[ai.DetailRetryAfter])
				}
			}
			if _, err := r.c.Complete(context.Background(), user("hi")); err != nil {
				t.Fatalf("after the scripted fault: %v", err)
			}
		})
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	r := newRig(t, nil)
	r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultRateLimit}, 2)
	for i := 0; i < 2; i++ {
		if _, err := r.c.Complete(context.Background(), user("hi")); !fault.Is(err, fault.RateLimited) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if resp, err := r.c.Complete(context.Background(), user("hi")); err != nil || resp.Content != "Echo: hi" {
		t.Fatalf("third call = %+v, %v", resp, err)
	}
}

func TestContextOverflowOfTheModelsWindow(t *testing.T) {
	r := newRig(t, nil)
	req := user(strings.Repeat("word ", 5000))
	req.Model = "sim-mini"
	_, err := r.c.Complete(context.Background(), req)
	r.wantFault(t, err, fault.InvalidInput, ai.ClassContext)
}

func TestUnknownModelAndWrongKey(t *testing.T) {
	r := newRig(t, nil)
	req := user("hi")
	req.Model = "no-such-model"
	_, err := r.c.Complete(context.Background(), req)
	fe := r.wantFault(t, err, fault.ProviderUnavailable, ai.ClassRequest)
	if fe.Details[ai.DetailReason] != "not_found" {
		t.Fatalf("details = %v", fe.Details)
	}

	sim := r.sim
	wrong, err := openai.New(openai.Config{BaseURL: sim.BaseURL(), APIKey: "sk-wrong-secret-key", HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.Complete(context.Background(), user("hi"))
	if !fault.Is(err, fault.ProviderUnavailable) || ai.ClassOf(err) != ai.ClassAuth || strings.Contains(err.Error(), "sk-wrong-secret-key") {
		t.Fatalf("wrong key: %v", err)
	}
	sim.Reset() // the wrong key's request is not the configured key's
}

func TestAuthErrorEchoingTheKeyIsRedacted(t *testing.T) {
	r := newRig(t, func(c *openai.Config) {})
	r.sim.Fail("", openaitest.Fault{Kind: openaitest.FaultAuth}, 1)
	_, err := r.c.Complete(context.Background(), user("hi"))
	fe := r.wantFault(t, err, fault.ProviderUnavailable, ai.ClassAuth)
	if !strings.Contains(fe.Error(), "[redacted]") {
		t.Fatalf("the cause should keep the upstream text with the key redacted: %v", fe)
	}
}

func TestFinishFilteredAndTruncated(t *testing.T) {
	r := newRig(t, nil)
	for _, tc := range []struct {
		kind openaitest.FaultKind
		want ai.Finish
	}{{openaitest.FaultFilter, ai.FinishFiltered}, {openaitest.FaultLength, ai.FinishTruncated}} {
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: tc.kind, After: 2}, 2)
		resp, err := r.c.Complete(context.Background(), user("tell me everything"))
		if err != nil || resp.Finish != tc.want || !resp.UsageReported {
			t.Fatalf("%s: complete = %+v, %v", tc.kind, resp, err)
		}
		s, err := r.c.Stream(context.Background(), user("tell me everything"))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := drain(t, s)
		s.Close()
		if err != nil || s.Response().Finish != tc.want || evs[len(evs)-1].Finish != tc.want {
			t.Fatalf("%s: stream = %+v, %v", tc.kind, s.Response(), err)
		}
	}
}

func TestMidStreamFailures(t *testing.T) {
	cases := []struct {
		name   string
		fault  openaitest.Fault
		code   fault.Code
		reason string
	}{
		{"drop", openaitest.Fault{Kind: openaitest.FaultDrop, After: 2}, fault.ProviderUnavailable, "dropped"},
		{"drop, connection broken", openaitest.Fault{Kind: openaitest.FaultDrop, After: 2, Abort: true}, fault.ProviderUnavailable, "dropped"},
		{"error in 200", openaitest.Fault{Kind: openaitest.FaultErrorIn200, After: 2}, fault.ProviderUnavailable, "error_event"},
		{"malformed chunk", openaitest.Fault{Kind: openaitest.FaultMalformed, After: 2}, fault.ProviderUnavailable, "malformed_chunk"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.sim.Fail("sim-gpt", tc.fault, 1)
			s, err := r.c.Stream(context.Background(), user("a long enough answer to split"))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, err := drain(t, s)
			fe := r.wantFault(t, err, tc.code, ai.ClassInterrupted)
			if fe.Details[ai.DetailReason] != tc.reason || ai.RetryableOf(err) {
				t.Fatalf("details = %v", fe.Details)
			}
			resp := s.Response()
			if len(evs) != 2 || resp.Content != "Echo: a long e" || resp.UsageReported || resp.Finish != "" {
				t.Fatalf("partial = %d events, %+v", len(evs), resp)
			}
			if _, err := s.Next(); !fault.Is(err, tc.code) {
				t.Fatalf("Next after the failure = %v", err)
			}
		})
	}
}

func TestFailuresBeforeAnyOutputReturnFromStream(t *testing.T) {
	cases := []struct {
		fault  openaitest.Fault
		class  ai.ErrorClass
		reason string
	}{
		{openaitest.Fault{Kind: openaitest.FaultDrop}, ai.ClassServer, "dropped"},
		{openaitest.Fault{Kind: openaitest.FaultErrorIn200}, ai.ClassServer, "error_event"},
		{openaitest.Fault{Kind: openaitest.FaultMalformed}, ai.ClassMalformed, "malformed_chunk"},
	}
	for _, tc := range cases {
		r := newRig(t, nil)
		r.sim.Fail("sim-gpt", tc.fault, 1)
		_, err := r.c.Stream(context.Background(), user("hi"))
		fe := r.wantFault(t, err, fault.ProviderUnavailable, tc.class)
		if fe.Details[ai.DetailReason] != tc.reason || !ai.RetryableOf(err) {
			t.Fatalf("%s: details = %v", tc.fault.Kind, fe.Details)
		}
	}
}

func TestCompleteBodyFaults(t *testing.T) {
	cases := []struct {
		kind   openaitest.FaultKind
		class  ai.ErrorClass
		reason string
	}{
		{openaitest.FaultErrorIn200, ai.ClassServer, "error_in_body"},
		{openaitest.FaultMalformed, ai.ClassMalformed, "malformed_response"},
		{openaitest.FaultDrop, ai.ClassServer, "unreachable"},
	}
	for _, tc := range cases {
		r := newRig(t, nil)
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: tc.kind}, 1)
		_, err := r.c.Complete(context.Background(), user("hi"))
		fe := r.wantFault(t, err, fault.ProviderUnavailable, tc.class)
		if fe.Details[ai.DetailReason] != tc.reason {
			t.Fatalf("%s: details = %v", tc.kind, fe.Details)
		}
	}
}

func TestDeadlines(t *testing.T) {
	t.Run("stall past the idle deadline", func(t *testing.T) {
		r := newRig(t, func(c *openai.Config) { c.IdleTimeout = 150 * time.Millisecond })
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultStall}, 1)
		start := time.Now()
		_, err := r.c.Stream(context.Background(), user("hi"))
		fe := r.wantFault(t, err, fault.ProviderTimeout, ai.ClassServer)
		if fe.Details[ai.DetailReason] != "idle_timeout" || time.Since(start) > 3*time.Second {
			t.Fatalf("details = %v after %v", fe.Details, time.Since(start))
		}
	})
	t.Run("a short stall within the idle deadline", func(t *testing.T) {
		r := newRig(t, func(c *openai.Config) { c.IdleTimeout = 2 * time.Second })
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultStall, Delay: 50 * time.Millisecond}, 1)
		s, err := r.c.Stream(context.Background(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := drain(t, s); err != nil || s.Response().Content != "Echo: hi" {
			t.Fatalf("stream = %+v, %v", s.Response(), err)
		}
	})
	t.Run("slow first token past the total deadline", func(t *testing.T) {
		r := newRig(t, func(c *openai.Config) { c.Timeout = 200 * time.Millisecond })
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultSlow}, 1)
		_, err := r.c.Stream(context.Background(), user("hi"))
		fe := r.wantFault(t, err, fault.ProviderTimeout, ai.ClassServer)
		if fe.Details[ai.DetailReason] != "deadline" {
			t.Fatalf("details = %v", fe.Details)
		}
	})
	t.Run("no headers past the total deadline", func(t *testing.T) {
		r := newRig(t, func(c *openai.Config) { c.Timeout = 200 * time.Millisecond })
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultNoHeaders}, 1)
		_, err := r.c.Complete(context.Background(), user("hi"))
		r.wantFault(t, err, fault.ProviderTimeout, ai.ClassServer)
	})
	t.Run("stall after output began", func(t *testing.T) {
		r := newRig(t, func(c *openai.Config) { c.IdleTimeout = 150 * time.Millisecond })
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultStall, After: 2}, 1)
		s, err := r.c.Stream(context.Background(), user("a long enough answer"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		evs, err := drain(t, s)
		fe := r.wantFault(t, err, fault.ProviderTimeout, ai.ClassInterrupted)
		if fe.Details[ai.DetailReason] != "idle_timeout" || len(evs) != 2 || s.Response().UsageReported {
			t.Fatalf("details = %v, %d events, %+v", fe.Details, len(evs), s.Response())
		}
	})
	t.Run("next after close", func(t *testing.T) {
		r := newRig(t, nil)
		s, err := r.c.Stream(context.Background(), user("a long enough answer"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(); err == nil || errors.Is(err, io.EOF) {
			t.Fatalf("Next after Close = %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
	t.Run("the caller cancels", func(t *testing.T) {
		r := newRig(t, nil)
		r.sim.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultStall}, 1)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := r.c.Stream(ctx, user("hi"))
		if !errors.Is(err, context.Canceled) || ai.ClassOf(err) != "" {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestModels(t *testing.T) {
	r := newRig(t, nil)
	ms, err := r.c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].ID != "sim-gpt" || ms[0].ContextWindow != 8192 || ms[1].ContextWindow != 4096 ||
		ms[0].OwnedBy != "sim" || !ms[0].Created.Equal(epoch) {
		t.Fatalf("models = %+v", ms)
	}
}

func TestRequestsRefusedBeforeSending(t *testing.T) {
	r := newRig(t, nil)
	bad := []ai.Request{
		{Messages: []ai.Message{{Role: ai.RoleUser, Content: "x"}}},
		{Model: "sim-gpt"},
		{Model: "sim-gpt", Messages: []ai.Message{{Role: "robot", Content: "x"}}},
		{Model: "sim-gpt", Messages: []ai.Message{{Role: ai.RoleTool, Content: "x"}}},
		{Model: "sim-gpt", Messages: []ai.Message{{Role: ai.RoleUser, Content: "x"}}, Tools: []ai.Tool{{Name: "bad name"}}},
		{Model: "sim-gpt", Messages: []ai.Message{{Role: ai.RoleUser, Content: "x"}}, ToolChoice: "undeclared"},
		{Model: "sim-gpt", Messages: []ai.Message{{Role: ai.RoleUser, Content: "x"}}, Stop: []string{"a", "b", "c", "d", "e"}},
	}
	for i, req := range bad {
		if _, err := r.c.Complete(context.Background(), req); !fault.Is(err, fault.InvalidInput) {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if n := len(r.sim.Requests()); n != 0 {
		t.Fatalf("%d requests reached the simulator", n)
	}
}

func TestNewRefusesWhatTheGuardRefuses(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:9/v1", "https://localhost/v1", "ftp://example.com", "https://user:pw@api.example.com/v1", "https://api.example.com/v1?key=x"} {
		if _, err := openai.New(openai.Config{BaseURL: base}); !fault.Is(err, fault.InvalidInput) || strings.Contains(err.Error(), base) {
			t.Fatalf("%s: %v", base, err)
		}
	}
	if _, err := openai.New(openai.Config{BaseURL: "https://api.openai.com/v1", MaxTokensField: "tokens"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("bad cap field: %v", err)
	}
	if _, err := openai.New(openai.Config{BaseURL: "https://api.openai.com/v1"}); err != nil {
		t.Fatalf("public https base: %v", err)
	}
}
