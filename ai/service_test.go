package ai_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// config is a live environment of two providers and three models, with
// a routing policy for chat.
func config() ai.Config {
	return ai.Config{Environments: map[access.Environment]ai.Environment{
		access.Live: {
			Providers: []ai.ProviderConfig{
				{ID: "openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI", BaseURL: "https://api.openai.com/v1", KeyRef: "openai"},
				{ID: "anthropic", Kind: ai.KindAnthropic, DisplayName: "Anthropic", BaseURL: "https://api.anthropic.com", KeyRef: "anthropic"},
			},
			Models: []ai.ModelConfig{
				{ID: "gpt-small", ProviderID: "openai", Upstream: "gpt-4o-mini", Capabilities: []ai.Capability{ai.CapStreaming, ai.CapChat, ai.CapJSONOutput},
					ContextWindow: 128000, Privacy: ai.PrivacyStandard, InputPrice: "0.00000015", OutputPrice: "0.00000060"},
				{ID: "claude", ProviderID: "anthropic", Upstream: "claude-sonnet", Capabilities: []ai.Capability{ai.CapChat, ai.CapJSONOutput},
					ContextWindow: 200000, Privacy: ai.PrivacyNoRetention, InputPrice: "0.000003", OutputPrice: "0.000015"},
				{ID: "gpt-large", ProviderID: "openai", Upstream: "gpt-4o", Capabilities: []ai.Capability{ai.CapChat},
					ContextWindow: 128000, Privacy: ai.PrivacyStandard, InputPrice: "0.0000025", OutputPrice: "0.00001", Disabled: true},
			},
			Routing: &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
				ai.TaskChat: {Primary: "gpt-small", Fallbacks: []string{"claude"}, Privacy: anyPrivacy},
			}},
		},
	}}
}

func newService(t *testing.T, cfg ai.Config) *ai.Service {
	t.Helper()
	s, err := ai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func admin(env access.Environment) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, UserID: "usr_admin", TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env}
}

// TestNewRefusesBadConfiguration: configuration errors fail New.
func TestNewRefusesBadConfiguration(t *testing.T) {
	for name, mutate := range map[string]func(*ai.Environment){
		"unknown provider": func(e *ai.Environment) { e.Models[0].ProviderID = "nobody" },
		"slash in an id":   func(e *ai.Environment) { e.Models[0].ID = "openai/gpt-4o" },
		"float price":      func(e *ai.Environment) { e.Models[0].InputPrice = "1.5e-7" },
		"no chat":          func(e *ai.Environment) { e.Models[0].Capabilities = []ai.Capability{ai.CapJSONOutput} },
		"bad privacy":      func(e *ai.Environment) { e.Models[0].Privacy = "secret" },
		"twice":            func(e *ai.Environment) { e.Models[1].ID = e.Models[0].ID },
		"credentialed URL": func(e *ai.Environment) { e.Providers[0].BaseURL = "https://user:pw@api.openai.com/v1" },
		"bad kind":         func(e *ai.Environment) { e.Providers[0].Kind = "grpc" },
		"routing to nowhere": func(e *ai.Environment) {
			e.Routing.Tasks[ai.TaskChat] = ai.TaskRoute{Primary: "nope", Privacy: anyPrivacy}
		},
	} {
		cfg := config()
		e := cfg.Environments[access.Live]
		mutate(&e)
		cfg.Environments[access.Live] = e
		if _, err := ai.New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

// TestSeed: configuration seeds the registry; an administrator's
// change of a model's enabled flag and prices survives a reseed that
// changes the configuration, which still sets the other fields; a model
// the configuration drops is retired and returns when listed again;
// seeding twice writes nothing; the configured routing policy is
// published only where none exists.
func TestSeed(t *testing.T) {
	ctx := context.Background()
	st := newMem()
	svc := newService(t, config())
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	if err := svc.Seed(ctx, st.run, access.Test); err != nil {
		t.Fatal(err)
	}
	reg, err := svc.Registry(ctx, st, access.Live)
	if err != nil || len(reg.Models) != 3 {
		t.Fatalf("registry: %+v, %v", reg, err)
	}
	small, _ := reg.Model("gpt-small")
	if small.OutputPrice != "0.0000006" || !small.Enabled || small.Version != 1 || small.UpdatedBy != ai.Publisher ||
		len(small.Capabilities) != 3 || small.Capabilities[0] != ai.CapChat {
		t.Fatalf("seeded model: %+v", small)
	}
	if large, _ := reg.Model("gpt-large"); large.Enabled {
		t.Fatalf("a model configured disabled is enabled: %+v", large)
	}
	if ms, _ := st.AIModelList(ctx, access.Test); len(ms) != 0 {
		t.Fatalf("the test environment got %d models from the live configuration", len(ms))
	}
	rt, err := svc.Routing(ctx, st, access.Live)
	if err != nil || rt.Ref.Version != 1 || rt.CreatedBy != ai.Publisher {
		t.Fatalf("seeded routing: %+v, %v", rt, err)
	}

	// Seeding again changes nothing.
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	if m, _ := st.AIModelGet(ctx, access.Live, "gpt-small"); m.Version != 1 {
		t.Fatalf("a second seed wrote the model: version %d", m.Version)
	}

	// An administrator disables gpt-small and reprices claude; a policy is
	// published by hand.
	off, price := false, "0.000002"
	if _, _, err := svc.UpdateModel(ctx, st, admin(access.Live), "gpt-small", ai.ModelChange{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.UpdateModel(ctx, st, admin(access.Live), "claude", ai.ModelChange{InputPrice: &price}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.PublishTask(ctx, st, admin(access.Live), ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: anyPrivacy}, "req_1"); err != nil {
		t.Fatal(err)
	}

	// The configuration changes: gpt-small's price and context window,
	// claude's price, gpt-large is dropped, the routing differs.
	cfg := config()
	e := cfg.Environments[access.Live]
	e.Models[0].InputPrice, e.Models[0].ContextWindow = "0.0000002", 64000
	e.Models[1].InputPrice = "0.000004"
	e.Models = e.Models[:2]
	e.Routing = &ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{ai.TaskChat: {Primary: "claude", Privacy: anyPrivacy}}}
	cfg.Environments[access.Live] = e
	if err := newService(t, cfg).Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	small, _ = st.AIModelGet(ctx, access.Live, "gpt-small")
	if small.Enabled || small.InputPrice != "0.00000015" || small.ContextWindow != 64000 || small.Version != 3 {
		t.Fatalf("the administrator's model after a reseed: %+v", small)
	}
	claude, _ := st.AIModelGet(ctx, access.Live, "claude")
	if claude.InputPrice != "0.000002" {
		t.Fatalf("the administrator's price was overwritten: %+v", claude)
	}
	large, _ := st.AIModelGet(ctx, access.Live, "gpt-large")
	if !large.Retired || large.Version != 2 {
		t.Fatalf("a dropped model: %+v", large)
	}
	if _, err := svc.Model(ctx, st, access.Live, "gpt-large"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("a retired model is read: %v", err)
	}
	if rt, _ := svc.Routing(ctx, st, access.Live); rt.Ref.Version != 2 || rt.Policy.Tasks[ai.TaskLyrics].Primary != "claude" {
		t.Fatalf("configuration overrode a published policy: %+v", rt)
	}
	// Listed again, it returns.
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	if large, _ := st.AIModelGet(ctx, access.Live, "gpt-large"); large.Retired {
		t.Fatalf("a model listed again stays retired: %+v", large)
	}
	// A host configuring no models leaves the registry alone.
	if err := newService(t, ai.Config{}).Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	if ms, _ := st.AIModelList(ctx, access.Live); len(ms) != 3 || ms[0].Retired || ms[1].Retired || ms[2].Retired {
		t.Fatalf("a host without configuration changed the registry: %+v", ms)
	}
}

// TestPublishRouting: the same content is the same version however it
// is spelled; new content is a new version with an audit record and an
// outbox event; a route to a model the registry does not list is
// INVALID_INPUT naming the field; the test environment's policy is its
// own.
func TestPublishRouting(t *testing.T) {
	ctx := context.Background()
	st := newMem()
	cfg := config()
	e := cfg.Environments[access.Live]
	e.Routing = nil
	cfg.Environments[access.Live] = e
	svc := newService(t, cfg)
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Routing(ctx, st, access.Live); !fault.Is(err, fault.NotFound) {
		t.Fatalf("routing before any publication: %v", err)
	}
	pol := ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
		ai.TaskChat: {Primary: "gpt-small", Fallbacks: []string{"claude"}, Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention, ai.PrivacyStandard},
			MaxOutputPrice: "0.0000150"},
	}}
	v1, created, err := svc.PublishRouting(ctx, st, admin(access.Live), pol, "req_1")
	if err != nil || !created || v1.Ref.Version != 1 || v1.Ref.Hash == "" || v1.CreatedBy != "user:usr_admin" {
		t.Fatalf("v1 = %+v, %v, %v", v1, created, err)
	}
	// The same content, spelled otherwise: same version, nothing written.
	same := ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{
		ai.TaskChat: {Primary: "gpt-small", Fallbacks: []string{"claude"}, Privacy: []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention, ai.PrivacyStandard},
			MaxOutputPrice: "0.000015", Strategy: ai.StrategyPrimary},
	}}
	again, created, err := svc.PublishRouting(ctx, st, admin(access.Live), same, "req_2")
	if err != nil || created || again.Ref != v1.Ref {
		t.Fatalf("republish = %+v, %v, %v", again.Ref, created, err)
	}
	// A task route published alone with the content it has: same version.
	if r, created, err := svc.PublishTask(ctx, st, admin(access.Live), ai.TaskChat, same.Tasks[ai.TaskChat], "req_3"); err != nil || created || r.Ref != v1.Ref {
		t.Fatalf("per-task republish = %+v, %v, %v", r.Ref, created, err)
	}
	v2, created, err := svc.PublishTask(ctx, st, admin(access.Live), ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: []ai.PrivacyClass{ai.PrivacyNoRetention}}, "req_4")
	if err != nil || !created || v2.Ref.Version != 2 || len(v2.Policy.Tasks) != 2 || v2.Policy.Tasks[ai.TaskChat].Primary != "gpt-small" {
		t.Fatalf("v2 = %+v, %v, %v", v2, created, err)
	}
	if len(st.audits) != 2 || len(st.events) != 2 {
		t.Fatalf("%d audits and %d events, want one of each per version", len(st.audits), len(st.events))
	}
	ev := st.events[1]
	var payload struct {
		Version      int      `json:"version"`
		ChangedTasks []string `json:"changedTasks"`
	}
	if err := json.Unmarshal(ev.Payload, &payload); err != nil || ev.Type != ai.EventRoutingPublished || ev.AggregateID != ai.PolicyRouting ||
		ev.AggregateVersion != 2 || payload.Version != 2 || len(payload.ChangedTasks) != 1 || payload.ChangedTasks[0] != "lyrics" {
		t.Fatalf("event = %+v (%s)", ev, ev.Payload)
	}
	if a := st.audits[1]; a.Action != ai.ActionRoutingPublished || a.TargetType != ai.TargetPolicy || a.TargetID != ai.PolicyRouting ||
		a.RequestID != "req_4" || a.Environment != access.Live {
		t.Fatalf("audit = %+v", a)
	}

	for name, tc := range map[string]struct {
		task  ai.Task
		route ai.TaskRoute
		field string
	}{
		"unknown primary":  {ai.TaskChat, ai.TaskRoute{Primary: "gpt-9", Privacy: anyPrivacy}, "tasks.chat.primary"},
		"unknown fallback": {ai.TaskChat, ai.TaskRoute{Primary: "claude", Fallbacks: []string{"gpt-small", "gpt-9"}, Privacy: anyPrivacy}, "tasks.chat.fallbacks[1]"},
		"twice":            {ai.TaskChat, ai.TaskRoute{Primary: "claude", Fallbacks: []string{"claude"}, Privacy: anyPrivacy}, "tasks.chat.fallbacks[0]"},
		"no privacy":       {ai.TaskLyrics, ai.TaskRoute{Primary: "claude"}, "tasks.lyrics.privacyClasses"},
		"bad privacy":      {ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: []ai.PrivacyClass{"secret"}}, "tasks.lyrics.privacyClasses"},
		"float budget":     {ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: anyPrivacy, MaxInputPrice: "1e-6"}, "tasks.lyrics.maxInputPrice"},
		"bad strategy":     {ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: anyPrivacy, Strategy: "random"}, "tasks.lyrics.strategy"},
	} {
		_, _, err := svc.PublishTask(ctx, st, admin(access.Live), tc.task, tc.route, "req")
		if _, _, d := fault.Public(err); !fault.Is(err, fault.InvalidInput) || d["field"] != tc.field {
			t.Errorf("%s: %v (%v), want INVALID_INPUT on %s", name, err, d, tc.field)
		}
	}
	if _, _, err := svc.PublishTask(ctx, st, admin(access.Live), "karaoke", ai.TaskRoute{Primary: "claude", Privacy: anyPrivacy}, "req"); !fault.Is(err, fault.NotFound) {
		t.Errorf("unknown task: %v", err)
	}
	bad := ai.RoutingPolicy{Tasks: map[ai.Task]ai.TaskRoute{"karaoke": {Primary: "claude", Privacy: anyPrivacy}}}
	if _, _, err := svc.PublishRouting(ctx, st, admin(access.Live), bad, "req"); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("a whole policy with an unknown task: %v", err)
	}
	// The test environment has no models: its policy cannot name live's.
	if _, _, err := svc.PublishRouting(ctx, st, admin(access.Test), pol, "req"); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("a test policy naming live models: %v", err)
	}
	if cur, _ := svc.Routing(ctx, st, access.Live); cur.Ref.Version != 2 || len(st.audits) != 2 {
		t.Fatalf("refused publications wrote: version %d, %d audits", cur.Ref.Version, len(st.audits))
	}
}

// raceStore publishes another task's route the first time its wrapped
// store is asked to insert a policy version, as a concurrent publisher
// would between this one's read and insert.
type raceStore struct {
	*memStore
	race func()
}

func (r *raceStore) PolicyInsert(ctx context.Context, v policy.Version) (policy.Version, bool, error) {
	if r.race != nil {
		race := r.race
		r.race = nil
		race()
	}
	return r.memStore.PolicyInsert(ctx, v)
}

// TestPublishTaskRace: two administrators publishing different tasks at
// once both land; the one that lost the race applies its change to the
// winner's version.
func TestPublishTaskRace(t *testing.T) {
	ctx := context.Background()
	mem := newMem()
	svc := newService(t, config())
	if err := svc.Seed(ctx, mem.run, access.Live); err != nil {
		t.Fatal(err)
	}
	st := &raceStore{memStore: mem}
	st.race = func() {
		if _, _, err := svc.PublishTask(ctx, mem, admin(access.Live), ai.TaskLyrics, ai.TaskRoute{Primary: "claude", Privacy: anyPrivacy}, "other"); err != nil {
			t.Errorf("the concurrent publication: %v", err)
		}
	}
	got, created, err := svc.PublishTask(ctx, st, admin(access.Live), ai.TaskMusicBrief, ai.TaskRoute{Primary: "gpt-small", Privacy: anyPrivacy}, "mine")
	if err != nil || !created || got.Ref.Version != 3 {
		t.Fatalf("publish after a lost race = %+v, %v, %v", got.Ref, created, err)
	}
	for _, task := range []ai.Task{ai.TaskChat, ai.TaskLyrics, ai.TaskMusicBrief} {
		if _, ok := got.Policy.Tasks[task]; !ok {
			t.Errorf("version 3 lost the route of %s: %+v", task, got.Policy.Tasks)
		}
	}
}

// TestUpdateModel: a change is a new version of the model with an audit
// record and an outbox event; asking for what is already there writes
// nothing; bad prices name their field; a model of another environment
// is not found.
func TestUpdateModel(t *testing.T) {
	ctx := context.Background()
	st := newMem()
	svc := newService(t, config())
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	st.now = epoch.Add(time.Hour)
	on, price := true, "0.00002"
	m, changed, err := svc.UpdateModel(ctx, st, admin(access.Live), "gpt-large", ai.ModelChange{Enabled: &on, OutputPrice: &price, RequestID: "req_1"})
	if err != nil || !changed || !m.Enabled || m.OutputPrice != "0.00002" || m.Version != 2 || !m.AdminChanged ||
		m.UpdatedBy != "user:usr_admin" || !m.UpdatedAt.Equal(st.now) {
		t.Fatalf("update = %+v, %v, %v", m, changed, err)
	}
	if len(st.events) != 1 || st.events[0].Type != ai.EventModelUpdated || st.events[0].AggregateID != ai.ModelAggregatePrefix+"gpt-large" ||
		st.events[0].AggregateVersion != 2 {
		t.Fatalf("events = %+v", st.events)
	}
	if len(st.audits) != 1 || st.audits[0].Action != ai.ActionModelUpdated || st.audits[0].TargetID != "gpt-large" ||
		string(st.audits[0].Before) != `{"enabled":false,"inputPrice":"0.0000025","outputPrice":"0.00001"}` ||
		string(st.audits[0].After) != `{"enabled":true,"inputPrice":"0.0000025","outputPrice":"0.00002"}` {
		t.Fatalf("audits = %+v", st.audits)
	}
	// The same values again: nothing written.
	spelled := "0.000020"
	if m, changed, err := svc.UpdateModel(ctx, st, admin(access.Live), "gpt-large", ai.ModelChange{Enabled: &on, OutputPrice: &spelled}); err != nil || changed || m.Version != 2 {
		t.Fatalf("a change to the same values = %+v, %v, %v", m, changed, err)
	}
	if len(st.events) != 1 || len(st.audits) != 1 {
		t.Fatal("a change to the same values wrote")
	}
	neg := "-1"
	for name, tc := range map[string]struct {
		ch    ai.ModelChange
		field string
	}{
		"nothing":        {ai.ModelChange{}, "enabled"},
		"negative price": {ai.ModelChange{InputPrice: &neg}, "inputPrice"},
	} {
		_, _, err := svc.UpdateModel(ctx, st, admin(access.Live), "gpt-large", tc.ch)
		if _, _, d := fault.Public(err); !fault.Is(err, fault.InvalidInput) || d["field"] != tc.field {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := svc.UpdateModel(ctx, st, admin(access.Test), "gpt-large", ai.ModelChange{Enabled: &on}); !fault.Is(err, fault.NotFound) {
		t.Errorf("a live model changed from test: %v", err)
	}
}

// TestRecordOutcomeAndRoute: outcomes recorded through the service cool
// the primary, after which Route serves the fallback; concurrent
// observations are all counted; no policy is PROVIDER_UNAVAILABLE.
func TestRecordOutcomeAndRoute(t *testing.T) {
	ctx := context.Background()
	st := newMem()
	cfg := config()
	cfg.Health = ai.HealthPolicy{Threshold: 2, Cooldown: time.Minute}
	svc := newService(t, cfg)
	if _, err := svc.Route(ctx, st, ai.TaskChat, ai.Caller{Environment: access.Live}); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("route without a policy: %v", err)
	}
	if err := svc.Seed(ctx, st.run, access.Live); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Route(ctx, st, ai.TaskChat, ai.Caller{Environment: access.Live})
	if err != nil || res.Model.ID != "gpt-small" || res.Reason != ai.ReasonPrimary || res.Policy.Version != 1 {
		t.Fatalf("route = %+v, %v", res, err)
	}
	// A concurrent observation lands between this one's read and write.
	raced := false
	st.beforeHealthPut = func() {
		if raced {
			return
		}
		raced = true
		if _, err := svc.RecordOutcome(ctx, st, access.Live, ai.Observation{Model: "gpt-small", Outcome: ai.OutcomeServer, At: epoch}); err != nil {
			t.Errorf("the concurrent observation: %v", err)
		}
	}
	h, err := svc.RecordOutcome(ctx, st, access.Live, ai.Observation{Model: "gpt-small", Outcome: ai.OutcomeServer, At: epoch})
	if err != nil || h.ConsecutiveFailures != 2 || h.Version != 2 || !h.Cooling(epoch) {
		t.Fatalf("after two failures: %+v, %v", h, err)
	}
	res, err = svc.Route(ctx, st, ai.TaskChat, ai.Caller{Environment: access.Live})
	if err != nil || res.Model.ID != "claude" || res.Reason != ai.ReasonFallbackOutage {
		t.Fatalf("route while cooling = %s %s, %v", res.Model.ID, res.Reason, err)
	}
	reg, _ := svc.Registry(ctx, st, access.Live)
	hs, err := svc.Health(ctx, st, reg)
	if err != nil || len(hs) != 3 || hs[0].ModelID != "claude" || hs[0].Status(epoch) != ai.HealthUnobserved || hs[2].Status(epoch) != ai.HealthCooldown {
		t.Fatalf("health = %+v, %v", hs, err)
	}
	if _, err := svc.RecordOutcome(ctx, st, access.Live, ai.Observation{Model: "gpt-small", Outcome: "meh", At: epoch}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("an unknown outcome: %v", err)
	}
}

// seedRaceStore loses the race for the first model row it inserts:
// another host inserts the row first.
type seedRaceStore struct {
	*memStore
	raced bool
}

func (r *seedRaceStore) AIModelInsert(ctx context.Context, m ai.RegistryModel) error {
	if !r.raced {
		r.raced = true
		if err := r.memStore.AIModelInsert(ctx, m); err != nil {
			return err
		}
		return fault.E("race", fault.Conflict, "")
	}
	return r.memStore.AIModelInsert(ctx, m)
}

// TestSeedRace: a host that loses the race for a model's row to another
// host starting at the same time seeds again over the winner's rows and
// starts.
func TestSeedRace(t *testing.T) {
	ctx := context.Background()
	st := &seedRaceStore{memStore: newMem()}
	run := func(_ context.Context, fn func(ai.Store) error) error { return fn(st) }
	if err := newService(t, config()).Seed(ctx, run, access.Live); err != nil {
		t.Fatalf("seed after a lost race: %v", err)
	}
	if ms, _ := st.AIModelList(ctx, access.Live); len(ms) != 3 || !st.raced {
		t.Fatalf("after the race: %d models (raced %v)", len(ms), st.raced)
	}
}
