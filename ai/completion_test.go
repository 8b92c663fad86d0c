package ai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// call is one scripted answer of a fake provider: a response, or an
// error; for a stream, events before the error.
type call struct {
	resp   ai.Response
	err    error
	events []ai.Event
}

// fakeProvider answers from a script and records what it was asked,
// with the key it was built with.
type fakeProvider struct {
	mu     sync.Mutex
	script []call
	asked  []ai.Request
	keys   []string
}

func (f *fakeProvider) next(r ai.Request) call {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, r)
	if len(f.script) == 0 {
		return call{resp: ai.Response{ID: "resp", Model: r.Model + "-served", Content: "ok", Finish: ai.FinishCompleted,
			Usage: ai.Usage{InputTokens: 100, OutputTokens: 50}, UsageReported: true}}
	}
	c := f.script[0]
	f.script = f.script[1:]
	return c
}

func (f *fakeProvider) Complete(_ context.Context, r ai.Request) (ai.Response, error) {
	c := f.next(r)
	return c.resp, c.err
}

func (f *fakeProvider) Stream(_ context.Context, r ai.Request) (ai.Stream, error) {
	c := f.next(r)
	if len(c.events) == 0 && c.err != nil {
		return nil, c.err
	}
	return &fakeStream{c: c}, nil
}

func (f *fakeProvider) Models(context.Context) ([]ai.Model, error) { return nil, nil }

// fakeStream plays a call's events, then its error (or done).
type fakeStream struct {
	c    call
	i    int
	text strings.Builder
}

func (s *fakeStream) Next() (ai.Event, error) {
	if s.i < len(s.c.events) {
		e := s.c.events[s.i]
		s.i++
		s.text.WriteString(e.Text)
		return e, nil
	}
	if s.c.err != nil {
		return ai.Event{}, s.c.err
	}
	if s.i == len(s.c.events) {
		s.i++
		return ai.Event{Kind: ai.EventDone, Finish: s.c.resp.Finish, Usage: s.c.resp.Usage}, nil
	}
	return ai.Event{}, io.EOF
}

func (s *fakeStream) Response() ai.Response {
	r := s.c.resp
	if s.c.err != nil {
		r = ai.Response{Content: s.text.String()}
	}
	return r
}

func (s *fakeStream) Close() error { return nil }

// recordingEmitter records a stream.
type recordingEmitter struct {
	began  []ai.Operation
	deltas []ai.Event
}

func (e *recordingEmitter) Begin(o ai.Operation) error { e.began = append(e.began, o); return nil }
func (e *recordingEmitter) Delta(ev ai.Event) error    { e.deltas = append(e.deltas, ev); return nil }

// fakeTools is a ToolRunner of one platform tool, make_draft.
type fakeTools struct {
	ran []string
}

func (f *fakeTools) Tools(context.Context, *access.Principal) ([]ai.Tool, error) {
	return []ai.Tool{{Name: "make_draft", Description: "Drafts a project.", Parameters: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (f *fakeTools) RunTool(_ context.Context, p *access.Principal, opID string, c ai.ToolCall) (ai.Message, string, error) {
	f.ran = append(f.ran, p.UserID+"/"+opID+"/"+c.Name)
	return ai.Message{Role: ai.RoleTool, ToolCallID: c.ID, Content: `{"draft":"art_1"}`}, "art_1", nil
}

// opsFixture is a completion path on a SQLite store with two fake
// providers and a workspace holding 1000 credits.
type opsFixture struct {
	db       *store.DB
	ops      *ai.Completions
	reg      *ai.Service
	p        *access.Principal
	provs    map[string]*fakeProvider
	waits    []time.Duration
	keyring  *secret.Keyring
	clock    *storetest.Clock
	provided []string // provider ids ProviderFunc built
}

const (
	opsKeyA = "sk-opsFixture-provider-a-0123456789"
	opsKeyB = "sk-ant-opsFixture-provider-b-0123456789"
)

func newOpsFixture(t *testing.T, tools ai.ToolRunner, limits ai.Limits) *opsFixture {
	t.Helper()
	ctx := context.Background()
	clock := storetest.NewClock(storetest.Epoch)
	db := storetest.OpenSQLite(t, clock)
	kr, err := secret.New([]byte("completion-test-secret-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	all := []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapTools, ai.CapStreaming}
	both := []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention}
	reg, err := ai.New(ai.Config{Environments: map[access.Environment]ai.Environment{access.Test: {
		Providers: []ai.ProviderConfig{
			{ID: "pa", Kind: ai.KindOpenAICompatible, DisplayName: "A", BaseURL: "https://a.example.com/v1", KeyRef: "key-a"},
			{ID: "pb", Kind: ai.KindAnthropic, DisplayName: "B", BaseURL: "https://b.example.com", KeyRef: "key-b"},
		},
		Models: []ai.ModelConfig{
			{ID: "ma", ProviderID: "pa", Upstream: "up-a", Capabilities: all, ContextWindow: 100000, Privacy: ai.PrivacyStandard,
				InputPrice: "0.00001", OutputPrice: "0.00002"},
			{ID: "mb", ProviderID: "pb", Upstream: "up-b", Capabilities: all, ContextWindow: 100000, Privacy: ai.PrivacyNoRetention,
				InputPrice: "0.00002", OutputPrice: "0.00004"},
		},
		Routing: &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
			ai.TaskChat:     {Primary: "ma", Fallbacks: []string{"mb"}, Privacy: both},
			ai.TaskComplete: {Primary: "ma", Privacy: both},
		}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Seed(ctx, ai.RunFunc(store.Runner[ai.Store](db)), access.Test); err != nil {
		t.Fatal(err)
	}
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := reg.SealKeys(ctx, tx, kr, access.Test, ai.ProviderKeys{"key-a": opsKeyA, "key-b": opsKeyB}); err != nil {
			return err
		}
		if err := ai.SeedCreditPricing(ctx, tx, access.Test, ai.DefaultCreditPricing()); err != nil {
			return err
		}
		_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: "start", Amount: money.Atomic(1000)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f := &opsFixture{db: db, reg: reg, keyring: kr, clock: clock, provs: map[string]*fakeProvider{"pa": {}, "pb": {}},
		p: &access.Principal{Kind: access.CredentialSession, TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: access.Test, UserID: "usr_1"}}
	ops, err := ai.NewCompletions(ai.CompletionConfig{Registry: reg, Ledger: ledger.New(), Sealer: kr,
		ProviderFunc: func(pc ai.ProviderConfig, key string) (ai.Provider, error) {
			fp := f.provs[pc.ID]
			fp.mu.Lock()
			fp.keys = append(fp.keys, key)
			fp.mu.Unlock()
			f.provided = append(f.provided, pc.ID)
			return fp, nil
		},
		BeginRunFunc: ai.UnitFunc[ai.BeginStore](store.Runner[ai.BeginStore](db)), EndRunFunc: ai.UnitFunc[ai.EndStore](store.Runner[ai.EndStore](db)),
		HealthRunFunc: ai.RunFunc(store.Runner[ai.Store](db)), ReadFunc: store.Reader[ai.ReadStore](db), Tools: tools, Limits: limits,
		SleepFunc: func(_ context.Context, d time.Duration) error { f.waits = append(f.waits, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.ops = ops
	return f
}

// balance is the workspace's credits account and reserved account.
func (f *opsFixture) balance(t *testing.T) (credits, reserved string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved} {
		a, err := f.db.Read().LedgerAccountGet(ctx, f.p.Scope(), ledger.Credits, name)
		v := "0"
		if err == nil {
			v = a.Balance.String()
		} else if !fault.Is(err, fault.NotFound) {
			t.Fatal(err)
		}
		if name == ledger.AccountWorkspaceCredits {
			credits = v
		} else {
			reserved = v
		}
	}
	return credits, reserved
}

// chat runs a whole chat: begin, execute, complete (in its own unit).
func (f *opsFixture) chat(t *testing.T, in ai.ChatRequest, id ai.Identity, emit ai.Emitter) (ai.Operation, ai.Answer, error) {
	t.Helper()
	ctx := context.Background()
	x, err := f.ops.BeginChat(ctx, f.p, in, id)
	if err != nil {
		return ai.Operation{}, ai.Answer{}, err
	}
	a, err := x.Execute(ctx, emit)
	if err != nil {
		return x.Operation(), a, err
	}
	var o ai.Operation
	err = f.db.InTx(ctx, func(tx *store.Tx) (err error) { o, err = x.Complete(ctx, tx); return err })
	return o, a, err
}

func hello() ai.ChatRequest {
	return ai.ChatRequest{Messages: []ai.Message{{Role: ai.RoleUser, Content: "Hello there"}}, MaxOutputTokens: 100}
}

// TestCompletionSettlesReportedUsageAtExecutedModel: the reservation
// covers the route's dearest model; the settlement prices the reported
// usage at the model that executed; the key reaches the adapter only.
func TestCompletionSettlesReportedUsageAtExecutedModel(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	o, a, err := f.chat(t, hello(), ai.Identity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Reservation: (est. input + 100 out) at mb, the dearest of the route:
	// input estimate ceil(11/3)+4 = 8; 8*0.00002 + 100*0.00004 = 0.00416
	// USD = 4.16 credits -> 5. Settlement: 100*0.00001 + 50*0.00002 =
	// 0.002 USD at ma = 2 credits.
	if o.Status != ai.OpCompleted || o.CreditsReserved != 5 || o.Settled() != 2 || o.UsageSource != ai.UsageReported ||
		o.InputUnits != 100 || o.OutputUnits != 50 || o.ModelID != "ma" || o.UpstreamModel != "up-a-served" || a.Content != "ok" {
		t.Fatalf("operation %+v answer %+v", o, a)
	}
	if c, r := f.balance(t); c != "998" || r != "0" {
		t.Fatalf("credits %s reserved %s", c, r)
	}
	if got := f.provs["pa"].keys; len(got) != 1 || got[0] != opsKeyA {
		t.Fatalf("adapter keys %q", got)
	}
	if f.provs["pa"].asked[0].Model != "up-a" {
		t.Fatalf("asked %+v", f.provs["pa"].asked)
	}
}

// TestCompletionFallbackAndSameModelRetry: a rate limit before output
// falls back to the route's next model; with none left, a short retry
// hint is waited and the same model asked again; a long hint is
// answered RATE_LIMITED with the reservation released.
func TestCompletionFallbackAndSameModelRetry(t *testing.T) {
	rate := func(hint time.Duration) error {
		return ai.Failure{Code: fault.RateLimited, Class: ai.ClassRateLimit, Status: http.StatusTooManyRequests, RetryAfter: hint,
			Retryable: true, RequestID: "upstream-req-1"}.Err("fake")
	}
	f := newOpsFixture(t, nil, ai.Limits{RetryWait: time.Second})
	f.provs["pa"].script = []call{{err: rate(5 * time.Second)}}
	o, _, err := f.chat(t, hello(), ai.Identity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.ModelID != "mb" || o.Reason != ai.ReasonFallbackRateLimit || len(o.Attempts) != 2 || o.Attempts[0].Outcome != ai.OutcomeRateLimit {
		t.Fatalf("fallback: %+v", o)
	}
	ctx := context.Background()
	complete := func() (ai.Operation, error) {
		x, err := f.ops.BeginComplete(ctx, f.p, ai.CompleteRequest{Prompt: "Write a hook."}, ai.Identity{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Execute(ctx, nil); err != nil {
			return x.Operation(), err
		}
		var o ai.Operation
		err = f.db.InTx(ctx, func(tx *store.Tx) (err error) { o, err = x.Complete(ctx, tx); return err })
		return o, err
	}
	f.provs["pa"].script = []call{{err: rate(200 * time.Millisecond)}}
	o, err = complete()
	if err != nil || o.ModelID != "ma" || len(o.Attempts) != 2 || o.Attempts[1].Outcome != ai.OutcomeSuccess ||
		!slices.Equal(f.waits, []time.Duration{200 * time.Millisecond}) {
		t.Fatalf("retry: %+v %v waits %v", o, err, f.waits)
	}
	before, _ := f.balance(t)
	f.provs["pa"].script = []call{{err: rate(5 * time.Second)}}
	o, err = complete()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.RateLimited || fe.Details["retryAfter"] != int64(5) || fe.Details["operationId"] != o.ID ||
		fe.Details[ai.DetailRequestID] != nil || fe.Details[ai.DetailStatus] != nil {
		t.Fatalf("long hint: %#v", err)
	}
	if o.Status != ai.OpFailed || o.FailureCode != string(fault.RateLimited) || o.UsageSource != ai.UsageNone || o.Settled() != 0 {
		t.Fatalf("failed operation: %+v", o)
	}
	if after, r := f.balance(t); after != before || r != "0" {
		t.Fatalf("credits %s -> %s, reserved %s", before, after, r)
	}
}

// TestCompletionStreamDropSettlesReservation: a stream that breaks after
// output began fails PROVIDER_UNAVAILABLE without a fallback and
// settles its whole reservation; one that fails before its first event
// falls back.
func TestCompletionStreamDropSettlesReservation(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	drop := ai.Failure{Code: fault.ProviderUnavailable, Class: ai.ClassInterrupted, Reason: "dropped"}.Err("fake")
	f.provs["pa"].script = []call{{events: []ai.Event{{Kind: ai.EventText, Text: "Hel"}, {Kind: ai.EventText, Text: "lo"}}, err: drop}}
	in := hello()
	in.Stream = true
	em := &recordingEmitter{}
	o, _, err := f.chat(t, in, ai.Identity{}, em)
	if !fault.Is(err, fault.ProviderUnavailable) || len(em.began) != 1 || len(em.deltas) != 2 {
		t.Fatalf("drop: %v, began %d deltas %d", err, len(em.began), len(em.deltas))
	}
	got, err := ai.GetOperation(context.Background(), f.db.Read(), f.p, o.ID)
	if err != nil || got.Status != ai.OpFailed || got.UsageSource != ai.UsageReservation || got.Settled() != got.CreditsReserved ||
		len(got.Attempts) != 1 {
		t.Fatalf("dropped operation: %+v %v", got, err)
	}
	// A drop before the first event falls back to mb, which streams.
	f.provs["pa"].script = []call{{err: drop}}
	f.provs["pb"].script = []call{{events: []ai.Event{{Kind: ai.EventText, Text: "Hi"}},
		resp: ai.Response{Content: "Hi", Finish: ai.FinishCompleted, Model: "up-b", Usage: ai.Usage{InputTokens: 10, OutputTokens: 1}, UsageReported: true}}}
	em = &recordingEmitter{}
	o, a, err := f.chat(t, in, ai.Identity{}, em)
	if err != nil || o.ModelID != "mb" || a.Content != "Hi" || len(em.began) != 1 || em.began[0].ModelID != "mb" {
		t.Fatalf("fallback stream: %+v %v %+v", o, err, em.began)
	}
}

// TestCompletionFilteredAnswerSettlesUsage: an answer the provider
// withheld fails CONTENT_POLICY_REJECTED and settles its reported usage;
// the model is not retried elsewhere.
func TestCompletionFilteredAnswerSettlesUsage(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	f.provs["pa"].script = []call{{resp: ai.Response{Finish: ai.FinishFiltered, Usage: ai.Usage{InputTokens: 100, OutputTokens: 50}, UsageReported: true}}}
	o, _, err := f.chat(t, hello(), ai.Identity{}, nil)
	if !fault.Is(err, fault.ContentPolicyRejected) {
		t.Fatalf("filtered: %v", err)
	}
	got, _ := ai.GetOperation(context.Background(), f.db.Read(), f.p, o.ID)
	if got.Status != ai.OpFailed || got.Settled() != 2 || got.UsageSource != ai.UsageReported || len(f.provs["pb"].asked) != 0 {
		t.Fatalf("operation %+v", got)
	}
}

// TestCompletionToolCallsGoToTheRunner: asked for, the runner's tools
// are offered beside the caller's; a call of a runner tool is run with
// the caller's principal and the operation id; a call of the caller's
// tool is returned as it came. Without a runner every call is returned.
func TestCompletionToolCallsGoToTheRunner(t *testing.T) {
	calls := []ai.ToolCall{{ID: "c1", Name: "make_draft", Arguments: json.RawMessage(`{"title":"x"}`)},
		{ID: "c2", Name: "lookup", Arguments: json.RawMessage(`{}`)}}
	in := hello()
	in.Tools = []ai.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}}
	in.PlatformTools = true
	tools := &fakeTools{}
	f := newOpsFixture(t, tools, ai.Limits{})
	f.provs["pa"].script = []call{{resp: ai.Response{ToolCalls: calls, Finish: ai.FinishToolCalls, Usage: ai.Usage{InputTokens: 1, OutputTokens: 1}, UsageReported: true}}}
	o, a, err := f.chat(t, in, ai.Identity{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := f.provs["pa"].asked[0].Tools
	if len(asked) != 2 || asked[0].Name != "lookup" || asked[1].Name != "make_draft" {
		t.Fatalf("offered tools %+v", asked)
	}
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].Result == nil || a.ToolCalls[0].Result.ArtifactID != "art_1" || a.ToolCalls[0].Result.ArtifactStatus != "draft" || a.ToolCalls[1].Result != nil ||
		!slices.Equal(tools.ran, []string{"usr_1/" + o.ID + "/make_draft"}) || o.ToolCalls != 2 || a.Finish != ai.FinishToolCalls {
		t.Fatalf("answer %+v ran %v", a, tools.ran)
	}
	// A caller tool named like a platform tool is refused.
	in.Tools = []ai.Tool{{Name: "make_draft"}}
	if _, _, err := f.chat(t, in, ai.Identity{}, nil); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("shadowing tool: %v", err)
	}
	// Without PlatformTools the runner's tools are not offered.
	in.Tools, in.PlatformTools = []ai.Tool{{Name: "lookup"}}, false
	if _, _, err := f.chat(t, in, ai.Identity{}, nil); err != nil || len(f.provs["pa"].asked[len(f.provs["pa"].asked)-1].Tools) != 1 {
		t.Fatalf("without platform tools: %v", err)
	}
	g := newOpsFixture(t, nil, ai.Limits{})
	g.provs["pa"].script = []call{{resp: ai.Response{ToolCalls: calls, Finish: ai.FinishToolCalls}}}
	in.PlatformTools = true
	if _, _, err := g.chat(t, in, ai.Identity{}, nil); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("platform tools without a runner: %v", err)
	}
	in.PlatformTools = false
	_, a, err = g.chat(t, in, ai.Identity{}, nil)
	if err != nil || len(a.ToolCalls) != 2 || a.ToolCalls[0].Result != nil || a.ToolCalls[1].Result != nil {
		t.Fatalf("without a runner: %+v %v", a, err)
	}
}

// TestCompletionIdempotency: a key whose operation runs is
// IDEMPOTENCY_IN_PROGRESS; with another body IDEMPOTENCY_CONFLICT; once
// ended it is replayed, a failure as its failure.
func TestCompletionIdempotency(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	ctx := context.Background()
	id := ai.Identity{Key: "k1", Body: []byte(`{"a":1}`)}
	x, err := f.ops.BeginChat(ctx, f.p, hello(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ops.BeginChat(ctx, f.p, hello(), id); !fault.Is(err, fault.IdempotencyInProgress) {
		t.Fatalf("while running: %v", err)
	}
	if _, err := f.ops.BeginChat(ctx, f.p, hello(), ai.Identity{Key: "k1", Body: []byte(`{"a":2}`)}); !fault.Is(err, fault.IdempotencyConflict) {
		t.Fatalf("another body: %v", err)
	}
	f.provs["pa"].script = []call{{err: ai.Failure{Code: fault.InvalidInput, Class: ai.ClassRequest}.Err("fake")}}
	if _, err := x.Execute(ctx, nil); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("execute: %v", err)
	}
	y, err := f.ops.BeginChat(ctx, f.p, hello(), id)
	if err != nil || !y.Replayed() || y.Operation().ID != x.Operation().ID || !fault.Is(y.ReplayErr(), fault.InvalidInput) {
		t.Fatalf("replay: %+v %v", y, err)
	}
	if len(f.provs["pb"].asked) != 0 {
		t.Fatal("a refused request fell back")
	}
}

// TestCompletionExpireReleases: an operation whose host stopped before
// its end is expired by its deadline job, its reservation released
// once; a second run changes nothing.
func TestCompletionExpireReleases(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	ctx := context.Background()
	x, err := f.ops.BeginChat(ctx, f.p, hello(), ai.Identity{})
	if err != nil {
		t.Fatal(err)
	}
	if _, r := f.balance(t); r != "5" {
		t.Fatalf("reserved %s", r)
	}
	payload, _ := json.Marshal(map[string]string{"operation": x.Operation().ID})
	h := f.ops.Jobs()[0]
	for range 2 {
		if err := h.HandlerFunc(ctx, jobs.Job{Kind: h.Name, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := ai.GetOperation(ctx, f.db.Read(), f.p, x.Operation().ID)
	if got.Status != ai.OpExpired || got.Settled() != 0 || got.FailureCode != string(fault.ProviderTimeout) || got.Version != 2 {
		t.Fatalf("expired %+v", got)
	}
	if c, r := f.balance(t); c != "1000" || r != "0" {
		t.Fatalf("credits %s reserved %s", c, r)
	}
	if err := f.db.InTx(ctx, func(tx *store.Tx) error { _, err := x.Complete(ctx, tx); return err }); !fault.Is(err, fault.InvalidState) {
		t.Fatalf("completing an expired operation: %v", err)
	}
}

// TestCompletionInsufficientCredits: a reservation the credits do not
// cover writes nothing and calls no provider.
func TestCompletionInsufficientCredits(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{MaxOutputTokens: 8192 * 4})
	in := hello()
	in.MaxOutputTokens = 8192 * 4 // 32768 * 0.00004 * 1000 = 1311 credits
	if _, _, err := f.chat(t, in, ai.Identity{}, nil); !fault.Is(err, fault.InsufficientCredits) {
		t.Fatalf("err %v", err)
	}
	if len(f.provided) != 0 {
		t.Fatalf("adapters built: %v", f.provided)
	}
	os, err := f.db.Read().AIOperationList(context.Background(), ai.UsageQuery{Scope: f.p.Scope(), Limit: 10})
	if err != nil || len(os) != 0 {
		t.Fatalf("operations %v %v", os, err)
	}
}

// TestCompletionValidation: requests are bounded and refused before
// anything is written.
func TestCompletionValidation(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{MaxMessages: 2})
	user := func(s string) ai.Message { return ai.Message{Role: ai.RoleUser, Content: s} }
	for name, tc := range map[string]struct {
		in    ai.ChatRequest
		field string
	}{
		"no messages":      {ai.ChatRequest{}, "messages"},
		"too many":         {ai.ChatRequest{Messages: []ai.Message{user("a"), user("b"), user("c")}}, "messages"},
		"bad role":         {ai.ChatRequest{Messages: []ai.Message{{Role: "robot", Content: "x"}}}, "messages[0].role"},
		"orphan tool turn": {ai.ChatRequest{Messages: []ai.Message{{Role: ai.RoleTool, Content: "x", ToolCallID: "nope"}}}, "messages[0].toolCallId"},
		"a platform key":   {ai.ChatRequest{Messages: []ai.Message{user("use platform_live_abcdefghijklmnopqrstuvwx please")}}, "messages[0].content"},
		"a provider key":   {ai.ChatRequest{Messages: []ai.Message{user("my key is sk-abcdefghijklmnopqrstuvwxyz012345")}}, "messages[0].content"},
		"output cap":       {ai.ChatRequest{Messages: []ai.Message{user("a")}, MaxOutputTokens: 100000}, "maxOutputTokens"},
		"bad tool choice":  {ai.ChatRequest{Messages: []ai.Message{user("a")}, ToolChoice: "ghost"}, "toolChoice"},
		"long message":     {ai.ChatRequest{Messages: []ai.Message{user(strings.Repeat("a", 40<<10))}}, "messages[0].content"},
	} {
		_, err := f.ops.BeginChat(context.Background(), f.p, tc.in, ai.Identity{})
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Details["field"] != tc.field {
			t.Errorf("%s: %v, want INVALID_INPUT at %s", name, err, tc.field)
		}
	}
	for name, in := range map[string]ai.CompleteRequest{
		"chat task":      {Task: ai.TaskChat, Prompt: "x"},
		"bad mode":       {Prompt: "x", Mode: "xml"},
		"no prompt":      {},
		"bad provenance": {Prompt: "x", Context: []ai.ContextBlock{{SourceType: "note", Provenance: "rumour", Content: "y"}}},
		"bad source":     {Prompt: "x", Context: []ai.ContextBlock{{SourceType: "Note!", Provenance: "user", Content: "y"}}},
		"secret context": {Prompt: "x", Context: []ai.ContextBlock{{SourceType: "note", Provenance: "user", Content: "-----BEGIN RSA PRIVATE KEY-----"}}},
	} {
		if _, err := f.ops.BeginComplete(context.Background(), f.p, in, ai.Identity{}); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(f.provided) != 0 {
		t.Fatalf("adapters built: %v", f.provided)
	}
}

// TestSealKeys: keys are stored sealed under their environment and ref,
// never in plaintext; sealing the same key again writes nothing; a key
// for a ref no provider names, or an empty one, is refused.
func TestSealKeys(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	ctx := context.Background()
	k, err := f.db.Read().AIProviderKeyGet(ctx, access.Test, "key-a")
	if err != nil || bytes.Contains(k.Sealed, []byte(opsKeyA)) || len(k.Fingerprint) != ai.FingerprintLen {
		t.Fatalf("sealed %+v %v", k, err)
	}
	plain, err := f.keyring.Open(k.Sealed, ai.KeyAAD(access.Test, "key-a"))
	if err != nil || string(plain) != opsKeyA {
		t.Fatalf("open: %v", err)
	}
	if _, err := f.keyring.Open(k.Sealed, ai.KeyAAD(access.Test, "key-b")); err == nil {
		t.Fatal("a sealed key opens under another ref")
	}
	f.clock.Advance(time.Hour)
	for name, keys := range map[string]ai.ProviderKeys{"same": {"key-a": opsKeyA}, "unknown": {"nope": "x"}, "empty": {"key-a": " "}} {
		err := f.db.InTx(ctx, func(tx *store.Tx) error { return f.reg.SealKeys(ctx, tx, f.keyring, access.Test, keys) })
		if (name == "same") != (err == nil) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if again, _ := f.db.Read().AIProviderKeyGet(ctx, access.Test, "key-a"); !again.UpdatedAt.Equal(k.UpdatedAt) {
		t.Fatal("the same key was sealed again")
	}
}

// TestCreditPricing: exact decimals, rounded up, at least the minimum.
func TestCreditPricing(t *testing.T) {
	p := ai.CreditPricing{CreditsPerUSD: "1000", MinimumCredits: "1"}
	for cost, want := range map[ai.Price]int64{"0": 1, "0.000001": 1, "0.002": 2, "0.0020001": 3, "12.5": 12500} {
		if got, err := p.Credits(cost); err != nil || got != want {
			t.Errorf("Credits(%s) = %d %v, want %d", cost, got, err, want)
		}
	}
	if (ai.CreditPricing{CreditsPerUSD: "-1", MinimumCredits: "0"}).Validate() == nil ||
		(ai.CreditPricing{CreditsPerUSD: "1", MinimumCredits: "x"}).Validate() == nil {
		t.Fatal("invalid pricing validated")
	}
	if got := ai.EstimateUnits([]ai.Message{{Content: "abcdef"}}, nil); got != 6 {
		t.Fatalf("estimate %d", got)
	}
}

// TestOperationTableIsEnforced: the table is a function of (state,
// event) and OperationTransition answers exactly what it says.
func TestOperationTableIsEnforced(t *testing.T) {
	tb := fsmTable()
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(ai.OperationTransition); err != nil {
		t.Fatal(err)
	}
}

// fsmTable is the operation's table as the architecture serves it.
func fsmTable() fsm.Table[ai.OperationStatus, ai.OperationEvent] {
	return fsm.New("ai.OperationTransition", "An AI operation", ai.OperationMoves())
}

// TestCompletionRunServesATask: a structured task's request runs as an
// operation of its own (endpoint task) on its task's route, JSON mode
// needing json_output, and settles like any other.
func TestCompletionRunServesATask(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	ctx := context.Background()
	req := ai.Request{Model: "ignored", Messages: []ai.Message{{Role: ai.RoleSystem, Content: "Answer JSON."}, {Role: ai.RoleUser, Content: "x"}},
		JSON: true, JSONSchema: json.RawMessage(`{"type":"object"}`)}
	resp, err := f.ops.Run(ctx, f.p, ai.TaskComplete, req)
	if err != nil || resp.Content != "ok" {
		t.Fatalf("run: %+v %v", resp, err)
	}
	asked := f.provs["pa"].asked[0]
	if asked.Model != "up-a" || !asked.JSON || asked.MaxOutputTokens != 1024 {
		t.Fatalf("asked %+v", asked)
	}
	os, _ := f.db.Read().AIOperationList(ctx, ai.UsageQuery{Scope: f.p.Scope(), Limit: 10})
	if len(os) != 1 || os[0].Endpoint != ai.EndpointTask || os[0].Mode != ai.ModeJSON || os[0].Status != ai.OpCompleted || os[0].Settled() != 2 {
		t.Fatalf("operations %+v", os)
	}
	if _, err := f.ops.Run(ctx, f.p, ai.TaskLyrics, req); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("an unrouted task: %v", err)
	}
}
