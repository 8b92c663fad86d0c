package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/anthropic/anthropictest"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// aiSims are the two provider simulators an AI operations system talks
// to, with the keys the platform holds for them.
type aiSims struct {
	openai    *openaitest.Server
	anthropic *anthropictest.Server
}

// keys are the simulators' keys, which must never appear in an answer,
// a log line or the database in plaintext.
func (sims aiSims) keys() []string { return []string{sims.openai.APIKey(), sims.anthropic.APIKey()} }

// aiOpsOptions starts both simulators on loopback and configures the
// test environment: sim-small (OpenAI wire) then sim-private (Anthropic
// wire) for chat, sim-small alone for complete, and the pricey
// sim-pricey for prompt_enhance.
func aiOpsOptions(t *testing.T) (platformtest.Options, aiSims) {
	t.Helper()
	oa, err := openaitest.New(openaitest.Config{APIKey: "sk-simopenai0123456789abcdefghij"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { oa.Close() })
	an, err := anthropictest.New(anthropictest.Config{APIKey: "sk-ant-simanthropic0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { an.Close() })
	all := []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapTools, ai.CapStreaming}
	model := func(id, prov, upstream string, priv ai.PrivacyClass, in, out string) ai.ModelConfig {
		return ai.ModelConfig{ID: id, ProviderID: prov, Upstream: upstream, Capabilities: all, ContextWindow: 128000, Privacy: priv,
			InputPrice: in, OutputPrice: out}
	}
	both := []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention}
	cfg := platform.AIConfig{
		Test: ai.Environment{
			Providers: []ai.ProviderConfig{
				{ID: "sim-openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI simulator", BaseURL: oa.BaseURL(), KeyRef: "openai-key"},
				{ID: "sim-anthropic", Kind: ai.KindAnthropic, DisplayName: "Anthropic simulator", BaseURL: an.URL(), KeyRef: "anthropic-key"},
			},
			Models: []ai.ModelConfig{
				model("sim-small", "sim-openai", "sim-gpt", ai.PrivacyStandard, "0.0000015", "0.000002"),
				model("sim-private", "sim-anthropic", "sim-claude", ai.PrivacyNoRetention, "0.000003", "0.000015"),
				model("sim-pricey", "sim-openai", "sim-gpt", ai.PrivacyStandard, "0.001", "0.01"),
			},
			Routing: &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
				ai.TaskChat:          {Primary: "sim-small", Fallbacks: []string{"sim-private"}, Privacy: both},
				ai.TaskComplete:      {Primary: "sim-small", Privacy: both},
				ai.TaskPromptEnhance: {Primary: "sim-pricey", Privacy: both},
			}},
		},
		TestKeys: ai.ProviderKeys{"openai-key": oa.APIKey(), "anthropic-key": an.APIKey()},
		Limits:   ai.Limits{RetryWait: 500 * time.Millisecond},
	}
	return platformtest.Options{AI: cfg, AllowLoopback: []string{oa.URL(), an.URL()}}, aiSims{openai: oa, anthropic: an}
}

// aiPost posts body to path with the test key (and an Idempotency-Key
// when idem is set).
func aiPost(s *platformtest.System, key, path, idem string, body any) *platformtest.Response {
	h := map[string]string{}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Key: key, Body: body, Header: h})
}

// chatBody is a one-message chat.
func chatBody(text string, stream bool) map[string]any {
	return map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}, "maxOutputTokens": 64, "stream": stream}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data json.RawMessage
}

// parseSSE reads a text/event-stream body.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected stream line %q", line)
		}
	}
	return out
}

// aiOp reads an operation as the test key.
func aiOp(t *testing.T, s *platformtest.System, id string) api.AIOperationView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/operations/" + id, Key: s.Boot.TestKey})
	var v api.AIOperationView
	aiOK(t, "get operation", r, http.StatusOK, &v)
	return v
}

// noKeysAnywhere fails when a simulator key appears in the captured log
// or in the database in plaintext (every text of every table).
func noKeysAnywhere(t *testing.T, s *platformtest.System, sims aiSims) {
	t.Helper()
	for _, k := range sims.keys() {
		if strings.Contains(s.Log.String(), k) {
			t.Errorf("the log holds a provider key")
		}
	}
	ctx := context.Background()
	var dump strings.Builder
	if s.DB.Dialect() == store.Postgres {
		var tables []string
		if err := s.DB.Read().IDB().NewRaw(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`).
			Scan(ctx, &tables); err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			var rows []string
			if err := s.DB.Read().IDB().NewRaw(fmt.Sprintf(`SELECT CAST(t AS TEXT) FROM %q t`, tb)).Scan(ctx, &rows); err != nil {
				t.Fatalf("dump %s: %v", tb, err)
			}
			dump.WriteString(strings.Join(rows, "\n"))
		}
	} else {
		var file string
		if err := s.DB.Read().IDB().NewRaw(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(ctx, &file); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{file, file + "-wal"} {
			b, err := os.ReadFile(filepath.Clean(f))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			dump.Write(b)
		}
	}
	if dump.Len() == 0 {
		t.Fatal("the database dump is empty")
	}
	for _, k := range sims.keys() {
		if strings.Contains(dump.String(), k) {
			t.Errorf("the database holds a provider key in plaintext")
		}
	}
	if c := count(t, s, `SELECT COUNT(*) FROM ai_provider_keys WHERE environment = 'test'`); c != 2 {
		t.Errorf("sealed keys = %d, want 2", c)
	}
}

// TestAIChatAndCompleteSettleOnReportedUsage: a chat and a completion
// answer JSON; each is a completed operation whose credits were reserved
// before the call and settled on the provider's reported usage, once;
// the usage list shows both with totals; keys appear in no answer, log
// line or table.
func TestAIChatAndCompleteSettleOnReportedUsage(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		var bodies []string
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "chat-1", chatBody("Name a synth-pop track about city lights.", false))
		bodies = append(bodies, string(r.Body))
		var chat api.AIAnswer
		aiOK(t, "chat", r, http.StatusOK, &chat)
		if !strings.HasPrefix(chat.Message.Content, "Echo: Name a synth-pop") || chat.Finish != "completed" || chat.Object != "ai_chat_completion" {
			t.Fatalf("chat answer: %+v", chat)
		}
		o := chat.Operation
		if o.Status != "completed" || o.Routing.Model != "sim-small" || o.Routing.Reason != "primary" || o.Usage.Source == nil ||
			*o.Usage.Source != "reported" || o.Usage.InputUnits == 0 || o.Usage.OutputUnits == 0 || o.Routing.UpstreamModel == nil ||
			*o.Routing.UpstreamModel != "sim-gpt" || len(o.Routing.Attempts) != 1 {
			t.Fatalf("chat operation: %+v", o)
		}
		if o.Usage.CreditsSettled == nil || o.Usage.CreditsReleased == nil {
			t.Fatalf("chat settlement: %+v", o.Usage)
		}
		// The replay of the key answers the recorded answer.
		r = aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "chat-1", chatBody("Name a synth-pop track about city lights.", false))
		var replayed api.AIAnswer
		aiOK(t, "replay", r, http.StatusOK, &replayed)
		if r.Header.Get("Idempotent-Replayed") != "true" || replayed.Message.Content != chat.Message.Content || replayed.OperationID != chat.OperationID {
			t.Fatalf("replay: %d %s", r.Status, r.Body)
		}
		r = aiPost(s, s.Boot.TestKey, "/api/v1/ai/complete", "", map[string]any{"prompt": "Write a hook.", "context": []map[string]any{
			{"sourceType": "note", "priority": 10, "provenance": "user", "content": "Mood: nostalgic."},
			{"sourceType": "project", "sourceId": "prj_x", "priority": 90, "provenance": "platform", "content": "Title: Neon Avenue."}}})
		bodies = append(bodies, string(r.Body))
		var done api.AIAnswer
		aiOK(t, "complete", r, http.StatusOK, &done)
		if done.Object != "ai_completion" || done.Operation.Task != "complete" || done.Operation.Status != "completed" {
			t.Fatalf("complete: %+v", done)
		}
		// The provider saw the context, highest priority first, and the key.
		reqs := sims.openai.Requests()
		last := reqs[len(reqs)-1]
		if i, j := bytes.Index(last.Body, []byte("Neon Avenue")), bytes.Index(last.Body, []byte("nostalgic")); i < 0 || j < i {
			t.Fatalf("context order in the provider request: %s", last.Body)
		}
		settled := int64(0)
		for _, a := range []api.AIAnswer{chat, done} {
			var n int64
			fmt.Sscan(*a.Operation.Usage.CreditsSettled, &n)
			settled += n
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference IN (?, ?, ?)`, "reserve:"+a.OperationID,
				"settle:"+a.OperationID, "release:"+a.OperationID); c < 2 {
				t.Fatalf("%s: %d credit movements", a.OperationID, c)
			}
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-settled {
			t.Fatalf("balance %d, want %d - %d", got, before, settled)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != 0 {
			t.Fatalf("reserved %d, want 0", got)
		}
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/usage?limit=1", Key: s.Boot.TestKey})
		bodies = append(bodies, string(r.Body))
		var page api.AIUsagePage
		aiOK(t, "usage", r, http.StatusOK, &page)
		if len(page.Items) != 1 || !page.HasMore || page.NextCursor == nil || page.Totals.Operations != 2 || page.Totals.Completed != 2 ||
			page.Totals.CreditsSettled != fmt.Sprint(settled) {
			t.Fatalf("usage page: %+v", page)
		}
		first := page.Items[0].ID
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/usage?limit=1&cursor=" + *page.NextCursor, Key: s.Boot.TestKey})
		aiOK(t, "usage page 2", r, http.StatusOK, &page)
		// Ids order the pages; made at one instant of the fake clock, the
		// two operations may come in either order.
		if len(page.Items) != 1 || page.HasMore || first+page.Items[0].ID != done.OperationID+chat.OperationID &&
			first+page.Items[0].ID != chat.OperationID+done.OperationID {
			t.Fatalf("usage page 2: %+v", page)
		}
		bodies = append(bodies, string(aiOpBody(t, s, chat.OperationID)))
		for _, b := range bodies {
			for _, k := range sims.keys() {
				if strings.Contains(b, k) {
					t.Fatalf("an answer holds a provider key: %s", b)
				}
			}
		}
		for _, rq := range sims.openai.Requests() {
			if got := rq.Header.Get("Authorization"); got != "Bearer "+sims.openai.APIKey() {
				t.Fatalf("the provider saw Authorization %q", got)
			}
		}
		noKeysAnywhere(t, s, sims)
	})
}

// aiOpBody is the raw answer of an operation read.
func aiOpBody(t *testing.T, s *platformtest.System, id string) []byte {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/operations/" + id, Key: s.Boot.TestKey})
	if r.Status != http.StatusOK {
		t.Fatalf("operation %s: %d %s", id, r.Status, r.Body)
	}
	return r.Body
}

// TestAIChatStreamsThroughTheGateway: "stream": true answers server-sent
// events: operation, deltas whose text is the answer, then done with the
// whole answer; the operation completed and settled on usage.
func TestAIChatStreamsThroughTheGateway(t *testing.T) {
	t.Parallel()
	opts, _ := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "", chatBody("Stream me a title for a ballad.", true))
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		evs := parseSSE(t, r.Body)
		if len(evs) < 3 || evs[0].name != "operation" || evs[len(evs)-1].name != "done" {
			t.Fatalf("events: %+v", evs)
		}
		var start api.AIStreamStart
		if err := json.Unmarshal(evs[0].data, &start); err != nil || start.Model != "sim-small" || start.RoutingReason != "primary" {
			t.Fatalf("operation event: %s", evs[0].data)
		}
		var text strings.Builder
		for _, e := range evs[1 : len(evs)-1] {
			var d api.AIStreamDelta
			if e.name != "delta" || json.Unmarshal(e.data, &d) != nil || d.Text == nil {
				t.Fatalf("delta: %s %s", e.name, e.data)
			}
			text.WriteString(*d.Text)
		}
		var done api.AIAnswer
		if err := json.Unmarshal(evs[len(evs)-1].data, &done); err != nil {
			t.Fatal(err)
		}
		if done.Message.Content != text.String() || !strings.HasPrefix(text.String(), "Echo: Stream me") || done.OperationID != start.OperationID {
			t.Fatalf("done %+v, deltas %q", done, text.String())
		}
		o := aiOp(t, s, start.OperationID)
		if o.Status != "completed" || !o.Stream || o.Usage.Source == nil || *o.Usage.Source != "reported" {
			t.Fatalf("operation: %+v", o)
		}
	})
}

// TestAIChatStreamDroppedSettlesReservation: a provider stream that
// drops after the answer began (no usage, no [DONE]) ends the stream
// with an error event PROVIDER_UNAVAILABLE; the operation failed with
// that code and settled its whole reservation, as documented; the model
// is not retried (its output already reached the caller).
func TestAIChatStreamDroppedSettlesReservation(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		sims.openai.Reset()
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultDrop, After: 2}, 1)
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "", chatBody("A long answer that will be cut off midway, please.", true))
		if r.Status != http.StatusOK {
			t.Fatalf("stream: %d %s", r.Status, r.Body)
		}
		evs := parseSSE(t, r.Body)
		if len(evs) < 3 || evs[0].name != "operation" || evs[1].name != "delta" || evs[len(evs)-1].name != "error" {
			t.Fatalf("events: %+v", evs)
		}
		var env struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(evs[len(evs)-1].data, &env); err != nil || env.Error.Code != "PROVIDER_UNAVAILABLE" {
			t.Fatalf("error event: %s", evs[len(evs)-1].data)
		}
		id, _ := env.Error.Details["operationId"].(string)
		o := aiOp(t, s, id)
		if o.Status != "failed" || o.Failure == nil || o.Failure.Code != "PROVIDER_UNAVAILABLE" || o.Usage.Source == nil ||
			*o.Usage.Source != "reservation" || o.Usage.CreditsSettled == nil || *o.Usage.CreditsSettled != o.Usage.CreditsReserved ||
			len(o.Routing.Attempts) != 1 {
			t.Fatalf("operation: %+v", o)
		}
		var reserved int64
		fmt.Sscan(o.Usage.CreditsReserved, &reserved)
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-reserved {
			t.Fatalf("balance %d, want %d", got, before-reserved)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != 0 {
			t.Fatalf("reserved %d, want 0", got)
		}
		if n := len(sims.openai.Completions()); n != 1 {
			t.Fatalf("provider calls = %d, want 1", n)
		}
	})
}

// TestAIRateLimitThenSuccess: a 429 of the chat route's primary falls
// back to the next model the route allows (the other wire), which
// answers: reason fallback:rate_limit, both calls recorded, the rate
// limit counted in the primary's health. With no other model (complete
// routes one), the same model is retried once after its short retry
// hint and answers.
func TestAIRateLimitThenSuccess(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		sims.openai.Reset()
		sims.anthropic.Reset()
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 20 * time.Second}, 1)
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "", chatBody("Hello after a rate limit.", false))
		var a api.AIAnswer
		aiOK(t, "chat after 429", r, http.StatusOK, &a)
		o := a.Operation
		if o.Routing.Model != "sim-private" || o.Routing.Reason != "fallback:rate_limit" || len(o.Routing.Attempts) != 2 ||
			o.Routing.Attempts[0].Outcome != "rate_limit" || o.Routing.Attempts[0].Code == nil || *o.Routing.Attempts[0].Code != "RATE_LIMITED" ||
			o.Routing.Attempts[1].Outcome != "success" || o.Routing.Attempts[1].Provider != "sim-anthropic" {
			t.Fatalf("operation: %+v", o)
		}
		var h api.AIHealthList
		root := bootstrapOwner(t, s, "Root")
		if err := s.P.GrantSuperAdmin(context.Background(), root.email); err != nil {
			t.Fatal(err)
		}
		root.cookie, _ = s.Login(root.email, testPassword)
		aiOK(t, "health", as(s, person{cookie: root.cookie}, access.Test, http.MethodGet, "/api/v1/admin/ai/health", "", nil), http.StatusOK, &h)
		for _, it := range h.Items {
			if it.ID == "sim-small" && (it.Failures != 1 || it.LastFailure == nil || *it.LastFailure != "rate_limit") {
				t.Fatalf("sim-small health: %+v", it)
			}
			if it.ID == "sim-private" && it.Successes != 1 {
				t.Fatalf("sim-private health: %+v", it)
			}
		}
		// The same model again, after a short hint.
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 50 * time.Millisecond,
			Hint: openaitest.HintMilliseconds}, 1)
		r = aiPost(s, s.Boot.TestKey, "/api/v1/ai/complete", "", map[string]any{"prompt": "Hello again."})
		aiOK(t, "complete after 429", r, http.StatusOK, &a)
		o = a.Operation
		if o.Routing.Model != "sim-small" || len(o.Routing.Attempts) != 2 || o.Routing.Attempts[0].Outcome != "rate_limit" ||
			o.Routing.Attempts[1].Outcome != "success" || o.Routing.Attempts[1].Model != "sim-small" {
			t.Fatalf("retried operation: %+v", o)
		}
		// A long hint and no other model: the rate limit is the answer.
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultRateLimit, RetryAfter: 30 * time.Second}, 1)
		r = aiPost(s, s.Boot.TestKey, "/api/v1/ai/complete", "", map[string]any{"prompt": "And again."})
		if r.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("long hint: %d %s", r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "upstream") {
			t.Fatalf("a provider detail leaked: %s", r.Body)
		}
	})
}

// TestAIInsufficientCreditsBeforeAnyCall: a request whose reservation
// the workspace's credits do not cover is 422 INSUFFICIENT_CREDITS; the
// provider saw no request, no operation was written and the balance is
// unchanged.
func TestAIInsufficientCreditsBeforeAnyCall(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		sims.openai.Reset()
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/complete", "", map[string]any{"task": "prompt_enhance", "prompt": "Enhance: rainy night.",
			"maxOutputTokens": 8192})
		if r.Status != http.StatusUnprocessableEntity || r.Code() != "INSUFFICIENT_CREDITS" {
			t.Fatalf("pricey completion: %d %s", r.Status, r.Body)
		}
		for _, rq := range sims.openai.Requests() {
			if strings.Contains(rq.Path, "chat/completions") {
				t.Fatalf("the provider was called: %+v", rq)
			}
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ai_operations`); c != 0 {
			t.Fatalf("operations = %d, want 0", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before {
			t.Fatalf("balance %d, want %d", got, before)
		}
	})
}

// TestAIConcurrentRequestsSettleOnce: twenty callers with one
// Idempotency-Key make one operation, one reservation and one
// settlement; the others are 409 IDEMPOTENCY_IN_PROGRESS or the replayed
// answer. Twenty callers with twenty keys make twenty operations, and the
// balance is exactly the start less what each settled.
func TestAIConcurrentRequestsSettleOnce(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s)
		sims.openai.Reset()
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultSlow, Delay: 300 * time.Millisecond}, 1)
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		const n = 20
		var wg sync.WaitGroup
		statuses := make(chan string, n)
		for range n {
			wg.Go(func() {
				r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "dup-key", chatBody("One song, twenty callers.", false))
				statuses <- fmt.Sprintf("%d %s", r.Status, r.Code())
			})
		}
		wg.Wait()
		close(statuses)
		ok := 0
		for st := range statuses {
			switch st {
			case "200 ":
				ok++
			case "409 IDEMPOTENCY_IN_PROGRESS":
			default:
				t.Fatalf("duplicate answered %s", st)
			}
		}
		if ok == 0 {
			t.Fatal("no duplicate was answered 200")
		}
		var ids []string
		if err := s.DB.Read().IDB().NewRaw(`SELECT id FROM ai_operations`).Scan(context.Background(), &ids); err != nil || len(ids) != 1 {
			t.Fatalf("operations %v (%v), want 1", ids, err)
		}
		for _, typ := range []string{"reserve", "settle"} {
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, typ+":"+ids[0]); c != 1 {
				t.Fatalf("%s movements = %d, want 1", typ, c)
			}
		}
		if c := len(sims.openai.Completions()); c != 1 {
			t.Fatalf("provider calls = %d, want 1", c)
		}
		o := aiOp(t, s, ids[0])
		var settled int64
		fmt.Sscan(*o.Usage.CreditsSettled, &settled)
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-settled {
			t.Fatalf("balance %d, want %d", got, before-settled)
		}
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "dup-key", chatBody("Another body.", false))
		if r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("same key, other body: %d %s", r.Status, r.Body)
		}

		// Twenty distinct requests.
		before = creditInt(t, s, ledger.AccountWorkspaceCredits)
		for i := range n {
			wg.Go(func() {
				r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", fmt.Sprintf("key-%d", i), chatBody(fmt.Sprintf("Song number %d.", i), false))
				if r.Status != http.StatusOK {
					t.Errorf("distinct %d: %d %s", i, r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		var sum int64
		if err := s.DB.Read().IDB().NewRaw(`SELECT COALESCE(SUM(credits_settled), 0) FROM ai_operations WHERE id <> ?`, ids[0]).
			Scan(context.Background(), &sum); err != nil {
			t.Fatal(err)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ai_operations WHERE status = 'completed'`); c != n+1 {
			t.Fatalf("completed operations = %d, want %d", c, n+1)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-sum {
			t.Fatalf("balance %d, want %d - %d", got, before, sum)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != 0 {
			t.Fatalf("reserved %d, want 0", got)
		}
	})
}

// TestAIOpsAuthorization: each route between principals. A VIEWER (no
// track.generate) and a key without ai:use are ACCESS_DENIED and change
// nothing (no operation, no provider call); another tenant naming this
// workspace is WORKSPACE_ACCESS_DENIED, and neither it nor a live
// credential sees the test operation (404) or its usage; a CREATOR's own
// grant does not reach the owner's operation (ACCESS_DENIED) and lists
// only what it asked.
func TestAIOpsAuthorization(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		owner := bootstrapOwner(t, s, "Studio")
		op := person{email: owner.email, cookie: owner.cookie}
		viewer := join(t, s, "viewer@example.com", "Viewer", invite(t, s, op, "viewer@example.com", "VIEWER"))
		creator := join(t, s, "creator@example.com", "Creator", invite(t, s, op, "creator@example.com", "CREATOR"))
		other := bootstrapOwner(t, s, "Elsewhere")
		_, narrow := createKey(t, s, owner.boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		settle(t, s, "plan.monthly_grant") // the new workspaces' free credits
		sims.openai.Reset()

		r := as(s, op, access.Test, http.MethodPost, "/api/v1/ai/chat", "", chatBody("Owner asks.", false))
		var a api.AIAnswer
		aiOK(t, "owner chat", r, http.StatusOK, &a)
		id := a.OperationID
		calls := len(sims.openai.Completions())
		ops := count(t, s, `SELECT COUNT(*) FROM ai_operations`)

		type call struct {
			name string
			do   func() *platformtest.Response
			code string
		}
		post := func(path string, body any) func(p person) func() *platformtest.Response {
			return func(p person) func() *platformtest.Response {
				return func() *platformtest.Response { return as(s, p, access.Test, http.MethodPost, path, "", body) }
			}
		}
		chat := post("/api/v1/ai/chat", chatBody("May I?", false))
		complete := post("/api/v1/ai/complete", map[string]any{"prompt": "May I?"})
		keyPost := func(path string, body any) func() *platformtest.Response {
			return func() *platformtest.Response {
				return s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Key: narrow.Secret, Body: body})
			}
		}
		keyGet := func(key, path string) func() *platformtest.Response {
			return func() *platformtest.Response {
				return s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Key: key})
			}
		}
		get := func(p person, env access.Environment, path string) func() *platformtest.Response {
			return func() *platformtest.Response { return as(s, p, env, http.MethodGet, path, "", nil) }
		}
		otherWS := func(p person, method, path string, body any) func() *platformtest.Response {
			return func() *platformtest.Response {
				return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body,
					Header: map[string]string{transport.EnvironmentHeader: "test", transport.WorkspaceHeader: owner.boot.WorkspaceID}})
			}
		}
		oth := person{email: other.email, cookie: other.cookie}
		opPath := "/api/v1/ai/operations/" + id
		for _, c := range []call{
			{"viewer chat", chat(viewer), "ACCESS_DENIED"},
			{"viewer complete", complete(viewer), "ACCESS_DENIED"},
			{"viewer operation", get(viewer, access.Test, opPath), "ACCESS_DENIED"},
			{"viewer usage", get(viewer, access.Test, "/api/v1/ai/usage"), "ACCESS_DENIED"},
			{"narrow key chat", keyPost("/api/v1/ai/chat", chatBody("May I?", false)), "ACCESS_DENIED"},
			{"narrow key complete", keyPost("/api/v1/ai/complete", map[string]any{"prompt": "May I?"}), "ACCESS_DENIED"},
			{"narrow key operation", keyGet(narrow.Secret, opPath), "ACCESS_DENIED"},
			{"narrow key usage", keyGet(narrow.Secret, "/api/v1/ai/usage"), "ACCESS_DENIED"},
			{"creator reads the owner's operation", get(creator, access.Test, opPath), "ACCESS_DENIED"},
			{"another tenant's operation", get(oth, access.Test, opPath), "NOT_FOUND"},
			{"another tenant's key", keyGet(other.boot.TestKey, opPath), "NOT_FOUND"},
			{"another tenant into this workspace: chat", otherWS(oth, http.MethodPost, "/api/v1/ai/chat", chatBody("Sneak.", false)), "WORKSPACE_ACCESS_DENIED"},
			{"another tenant into this workspace: complete", otherWS(oth, http.MethodPost, "/api/v1/ai/complete", map[string]any{"prompt": "Sneak."}), "WORKSPACE_ACCESS_DENIED"},
			{"another tenant into this workspace: operation", otherWS(oth, http.MethodGet, opPath, nil), "WORKSPACE_ACCESS_DENIED"},
			{"another tenant into this workspace: usage", otherWS(oth, http.MethodGet, "/api/v1/ai/usage", nil), "WORKSPACE_ACCESS_DENIED"},
			{"live key, test operation", keyGet(owner.boot.LiveKey, opPath), "NOT_FOUND"},
			{"live session, test operation", get(op, access.Live, opPath), "NOT_FOUND"},
		} {
			r := c.do()
			if r.Code() != c.code {
				t.Errorf("%s: %d %s, want %s", c.name, r.Status, r.Body, c.code)
			}
		}
		if got := len(sims.openai.Completions()); got != calls {
			t.Fatalf("refused requests reached the provider: %d calls, want %d", got, calls)
		}
		if got := count(t, s, `SELECT COUNT(*) FROM ai_operations`); got != ops {
			t.Fatalf("refused requests wrote operations: %d, want %d", got, ops)
		}
		// Lists: another workspace's, the other environment's and an own
		// grant's lists do not show the operation.
		for name, do := range map[string]func() *platformtest.Response{
			"another tenant's usage": get(oth, access.Test, "/api/v1/ai/usage"),
			"live usage":             keyGet(owner.boot.LiveKey, "/api/v1/ai/usage"),
			"creator's usage":        get(creator, access.Test, "/api/v1/ai/usage"),
		} {
			var page api.AIUsagePage
			aiOK(t, name, do(), http.StatusOK, &page)
			if len(page.Items) != 0 || page.Totals.Operations != 0 {
				t.Errorf("%s shows %+v", name, page)
			}
		}
		// The creator's own operation is its to read; the owner sees both.
		r = as(s, creator, access.Test, http.MethodPost, "/api/v1/ai/chat", "", chatBody("Creator asks.", false))
		aiOK(t, "creator chat", r, http.StatusOK, &a)
		aiOK(t, "creator reads its own", get(creator, access.Test, "/api/v1/ai/operations/"+a.OperationID)(), http.StatusOK, nil)
		var page api.AIUsagePage
		aiOK(t, "creator usage", get(creator, access.Test, "/api/v1/ai/usage")(), http.StatusOK, &page)
		if len(page.Items) != 1 || page.Items[0].ID != a.OperationID {
			t.Errorf("creator's usage: %+v", page)
		}
		aiOK(t, "owner usage", get(op, access.Test, "/api/v1/ai/usage")(), http.StatusOK, &page)
		if len(page.Items) != 2 {
			t.Errorf("owner's usage: %+v", page)
		}
	})
}

// TestAIClientDisconnectCancelsUpstream: a caller that leaves while its
// answer streams cancels the provider call (the simulator, stalled, sees
// its client leave); the operation ends cancelled and, output having
// begun without usage, settles its reservation, as documented.
func TestAIClientDisconnectCancelsUpstream(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		sims.openai.Reset()
		sims.openai.Fail("sim-gpt", openaitest.Fault{Kind: openaitest.FaultStall, After: 2}, 1)
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		body, _ := json.Marshal(chatBody("Stream until I hang up.", true))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Server.URL+"/api/v1/ai/chat", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.Boot.TestKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		rd := bufio.NewReader(resp.Body)
		var id string
		deltas := 0
		for deltas < 1 {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("read the stream: %v", err)
			}
			if strings.HasPrefix(line, "event: delta") {
				deltas++
			}
			if rest, ok := strings.CutPrefix(line, "data: "); ok && id == "" {
				var start api.AIStreamStart
				if json.Unmarshal([]byte(rest), &start) == nil {
					id = start.OperationID
				}
			}
		}
		cancel() // the caller hangs up while the provider stalls
		var o api.AIOperationView
		waitFor(t, "the operation ends", func() bool {
			o = aiOp(t, s, id)
			return o.Status != "running"
		})
		if o.Status != "cancelled" || o.Usage.Source == nil || *o.Usage.Source != "reservation" || o.Failure != nil ||
			len(o.Routing.Attempts) != 1 || o.Routing.Attempts[0].Outcome != "cancelled" {
			t.Fatalf("operation: %+v", o)
		}
		var reserved int64
		fmt.Sscan(o.Usage.CreditsReserved, &reserved)
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-reserved {
			t.Fatalf("balance %d, want %d", got, before-reserved)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != 0 {
			t.Fatalf("reserved %d, want 0", got)
		}
	})
}

// TestAIChatRunsPlatformToolsUnderTheCaller: with platformTools the
// model may call the platform's tools; a mutating tool's call comes back
// with a draft artifact the caller reads (it applies only on
// confirmation), a call the catalog refuses comes back as an error
// result, and a call of the caller's own tool comes back as it came.
func TestAIChatRunsPlatformToolsUnderTheCaller(t *testing.T) {
	t.Parallel()
	opts, sims := aiOpsOptions(t)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		sims.openai.Reset()
		sims.openai.Reply("sim-gpt", openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{Name: "project_create_draft", Arguments: `{"title":"Night Drive","type":"single"}`},
			{Name: "project_create_draft", Arguments: `{"title":"Bad","type":"symphony"}`},
			{Name: "lookup_tempo", Arguments: `{"song":"Night Drive"}`},
		}}, 1)
		body := chatBody("Make a project for my night drive song.", false)
		body["platformTools"] = true
		body["tools"] = []map[string]any{{"name": "lookup_tempo", "parameters": map[string]any{"type": "object"}}}
		r := aiPost(s, s.Boot.TestKey, "/api/v1/ai/chat", "", body)
		var a api.AIAnswer
		aiOK(t, "chat with tools", r, http.StatusOK, &a)
		tc := a.Message.ToolCalls
		if a.Finish != "tool_calls" || len(tc) != 3 || tc[0].Result == nil || tc[0].Result.IsError || tc[0].Result.ArtifactID == nil ||
			tc[0].Result.ArtifactStatus == nil || *tc[0].Result.ArtifactStatus != "draft" || tc[1].Result == nil || !tc[1].Result.IsError ||
			tc[2].Result != nil || a.Operation.ToolCalls != 3 {
			t.Fatalf("answer: %s", r.Body)
		}
		// The provider was offered the platform's tools and the caller's.
		reqs := sims.openai.Requests()
		last := reqs[len(reqs)-1].Body
		if !bytes.Contains(last, []byte("project_create_draft")) || !bytes.Contains(last, []byte("lookup_tempo")) {
			t.Fatalf("offered tools: %s", last)
		}
		r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ai/artifacts/" + *tc[0].Result.ArtifactID, Key: s.Boot.TestKey})
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), a.OperationID) {
			t.Fatalf("artifact: %d %s", r.Status, r.Body)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM projects`); c != 0 {
			t.Fatalf("a draft applied itself: %d projects", c)
		}
	})
}
