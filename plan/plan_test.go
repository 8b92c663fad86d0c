package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/plan"
)

// memStore is an in-memory plan.Store for the domain's tests.
type memStore struct {
	mu           sync.Mutex
	now          time.Time
	plans        map[string]plan.Plan
	prices       []plan.PriceVersion
	assignments  map[string]plan.Assignment   // workspace|environment -> assignment
	entitlements map[string]map[string]string // workspace|environment -> entitlement -> source
	jobs         []jobs.InsertParams
	seq          int
	writes       int
}

var _ plan.Store = (*memStore)(nil)

func newMem(now time.Time) *memStore {
	return &memStore{now: now, plans: map[string]plan.Plan{}, assignments: map[string]plan.Assignment{},
		entitlements: map[string]map[string]string{}}
}

func (m *memStore) Now() time.Time { return m.now }

func (m *memStore) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	for _, j := range m.jobs {
		if p.UniqueKey != "" && j.UniqueKey == p.UniqueKey {
			return false, nil
		}
	}
	m.jobs = append(m.jobs, p)
	return true, nil
}

func (m *memStore) planWith(p plan.Plan) plan.Plan {
	p.Prices = nil
	for _, pv := range m.prices {
		if pv.PlanID == p.ID {
			p.Prices = append(p.Prices, pv)
		}
	}
	return p
}

func (m *memStore) PlanList(context.Context) ([]plan.Plan, error) {
	var out []plan.Plan
	for _, p := range m.plans {
		out = append(out, m.planWith(p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	return out, nil
}

func (m *memStore) PlanGet(_ context.Context, id string) (plan.Plan, error) {
	p, ok := m.plans[id]
	if !ok {
		return plan.Plan{}, fault.E("mem", fault.NotFound, "")
	}
	return m.planWith(p), nil
}

func (m *memStore) PlanUpsert(_ context.Context, p plan.Plan) error {
	m.writes++
	p.Entitlements = slices.Clone(p.Entitlements)
	m.plans[p.ID] = p
	return nil
}

func (m *memStore) PlanDeactivateExcept(_ context.Context, ids []string) error {
	m.writes++
	for id, p := range m.plans {
		if !slices.Contains(ids, id) {
			p.Active = false
			m.plans[id] = p
			for i := range m.prices {
				if m.prices[i].PlanID == id {
					m.prices[i].Active = false
				}
			}
		}
	}
	return nil
}

func (m *memStore) PriceVersionInsert(_ context.Context, pv plan.PriceVersion) (plan.PriceVersion, bool, error) {
	for _, x := range m.prices {
		if x.PlanID == pv.PlanID && x.Currency == pv.Currency && x.Interval == pv.Interval && x.Version == pv.Version {
			return plan.PriceVersion{}, false, nil
		}
	}
	m.writes++
	m.seq++
	pv.ID, pv.CreatedAt, pv.Active = fmt.Sprintf("price_%03d", m.seq), m.now, false
	m.prices = append(m.prices, pv)
	return pv, true, nil
}

func (m *memStore) PriceVersionActivate(_ context.Context, planID string, ids []string) error {
	m.writes++
	for i := range m.prices {
		if m.prices[i].PlanID == planID {
			m.prices[i].Active = slices.Contains(ids, m.prices[i].ID)
		}
	}
	return nil
}

func (m *memStore) WorkspacePlanSet(_ context.Context, a plan.Assignment) error {
	a.Since = m.now
	m.assignments[a.WorkspaceID+"|"+string(a.Environment)] = a
	return nil
}

func (m *memStore) WorkspacePlanGet(_ context.Context, ws string, env access.Environment) (plan.Assignment, error) {
	a, ok := m.assignments[ws+"|"+string(env)]
	if !ok {
		return plan.Assignment{}, fault.E("mem", fault.NotFound, "")
	}
	return a, nil
}

// WorkspacePlanList lists each workspace once: its live assignment, else
// its test one.
func (m *memStore) WorkspacePlanList(_ context.Context, after string, limit int) ([]plan.Assignment, error) {
	var out []plan.Assignment
	for _, a := range m.assignments {
		if a.WorkspaceID <= after {
			continue
		}
		if _, live := m.assignments[a.WorkspaceID+"|live"]; a.Environment == access.Live || !live {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkspaceID < out[j].WorkspaceID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memStore) EntitlementSet(_ context.Context, ws, e, source, env string, on bool) error {
	k := ws + "|" + env
	if m.entitlements[k] == nil {
		m.entitlements[k] = map[string]string{}
	}
	if on {
		m.entitlements[k][e] = source
	} else {
		delete(m.entitlements[k], e)
	}
	return nil
}

// run is a plan.RunFunc over m (one lock per unit of work).
func (m *memStore) run(ctx context.Context, fn func(plan.Store) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(m)
}

// fakeGranter records grants, booking each reference once.
type fakeGranter struct {
	mu     sync.Mutex
	grants map[string]plan.Grant
	calls  int
}

func (g *fakeGranter) GrantCredits(_ context.Context, gr plan.Grant) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if g.grants == nil {
		g.grants = map[string]plan.Grant{}
	}
	if _, ok := g.grants[gr.Reference]; !ok {
		g.grants[gr.Reference] = gr
	}
	return nil
}

var jan = time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)

func mustNew(t *testing.T, c plan.Catalog) *plan.Service {
	t.Helper()
	s, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCatalogValidation(t *testing.T) {
	bad := []plan.Catalog{
		{Plans: []plan.Spec{{ID: "pro", Name: "Pro"}}}, // no free plan
		{Plans: []plan.Spec{{ID: "free", Name: "Free"}, {ID: "free", Name: "Again"}}},
		{Plans: []plan.Spec{{ID: "Free", Name: "Free"}}},
		{Plans: []plan.Spec{{ID: "free"}}},
		{Plans: []plan.Spec{{ID: "free", Name: "Free", Entitlements: []string{"AI"}}}},
		{Plans: []plan.Spec{{ID: "free", Name: "Free", Prices: []plan.Price{{Currency: "usd", Interval: plan.Month}}}}},
		{Plans: []plan.Spec{{ID: "free", Name: "Free", Prices: []plan.Price{{Currency: "USD", Interval: "week"}}}}},
		{Plans: []plan.Spec{{ID: "free", Name: "Free", Prices: []plan.Price{{Currency: "USD", Amount: -1, Interval: plan.Month}}}}},
		{Plans: []plan.Spec{{ID: "free", Name: "Free", Prices: []plan.Price{{Currency: "USD", Interval: plan.Month}, {Currency: "USD", Amount: 1, Interval: plan.Month}}}}},
	}
	for i, c := range bad {
		if _, err := plan.New(c); err == nil {
			t.Errorf("catalog %d accepted", i)
		}
	}
	s := mustNew(t, plan.Catalog{})
	if s.TestCredits() != plan.DefaultTestCredits {
		t.Fatalf("test credits = %d", s.TestCredits())
	}
}

func TestSeedIsIdempotentAndVersionsPrices(t *testing.T) {
	ctx := context.Background()
	st := newMem(jan)
	svc := mustNew(t, plan.Catalog{})
	res, err := svc.Seed(ctx, st)
	if err != nil || res.PlansWritten != 3 || res.PriceVersionsCreated != 3 {
		t.Fatalf("first seed = %+v, %v", res, err)
	}
	writes := st.writes
	if res, err := svc.Seed(ctx, st); err != nil || res != (plan.SeedResult{}) || st.writes != writes {
		t.Fatalf("second seed = %+v, %v; %d writes", res, err, st.writes-writes)
	}
	plans, err := svc.List(ctx, st)
	if err != nil || len(plans) != 3 || plans[0].ID != "free" || plans[1].ID != "pro" || plans[2].ID != "studio" {
		t.Fatalf("list = %+v, %v", plans, err)
	}
	for _, p := range plans {
		if a := p.Annual(); a.Available || a.Reason != plan.ReasonNoAnnualPrice {
			t.Fatalf("%s annual = %+v", p.ID, a)
		}
	}
	if !slices.Contains(plans[2].Entitlements, "marketplace.sell") || slices.Contains(plans[1].Entitlements, "marketplace.sell") {
		t.Fatalf("entitlements: pro %v studio %v", plans[1].Entitlements, plans[2].Entitlements)
	}

	// Pro's price changes and it gains an annual price; studio is dropped.
	c := plan.DefaultCatalog()
	c.Plans[1].Prices = []plan.Price{{Currency: "USD", Amount: 2_400, Interval: plan.Month}, {Currency: "USD", Amount: 24_000, Interval: plan.Year}}
	c.Plans = c.Plans[:2]
	res, err = mustNew(t, c).Seed(ctx, st)
	if err != nil || res.PriceVersionsCreated != 2 {
		t.Fatalf("changed seed = %+v, %v", res, err)
	}
	pro, _ := st.PlanGet(ctx, "pro")
	var monthly []plan.PriceVersion
	for _, pv := range pro.Prices {
		if pv.Interval == plan.Month {
			monthly = append(monthly, pv)
		}
	}
	if len(monthly) != 2 || monthly[0].Amount != 1_900 || monthly[0].Active || monthly[1].Version != 2 || monthly[1].Amount != 2_400 || !monthly[1].Active {
		t.Fatalf("pro monthly versions = %+v", monthly)
	}
	if !pro.Annual().Available {
		t.Fatalf("pro annual = %+v", pro.Annual())
	}
	plans, _ = svc.List(ctx, st)
	if len(plans) != 2 {
		t.Fatalf("studio still listed: %+v", plans)
	}
	studio, _ := st.PlanGet(ctx, "studio")
	if studio.Active || len(studio.ActivePrices()) != 0 || len(studio.Prices) != 1 {
		t.Fatalf("dropped studio = %+v", studio)
	}
}

func TestStartAndGrants(t *testing.T) {
	ctx := context.Background()
	st := newMem(jan)
	svc := mustNew(t, plan.Catalog{TestCredits: 777})
	if _, err := svc.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"ws_a", "ws_b"} {
		if err := svc.Start(ctx, st, "ten_1", ws); err != nil {
			t.Fatal(err)
		}
	}
	for _, env := range []string{"live", "test"} {
		if got := st.entitlements["ws_a|"+env]; len(got) != 1 || got["ai.basic"] != "plan:free" {
			t.Fatalf("ws_a %s entitlements = %v", env, got)
		}
	}
	var keys []string
	for _, j := range st.jobs {
		keys = append(keys, j.UniqueKey)
	}
	want := []string{"plan-grant:ws_a:live:2026-01", "plan-grant:ws_a:test:2026-01", "plan-grant:ws_b:live:2026-01", "plan-grant:ws_b:test:2026-01"}
	if !slices.Equal(keys, want) {
		t.Fatalf("jobs = %v", keys)
	}

	// The grant jobs book plan credits in live and test credits in test.
	g := &fakeGranter{}
	h := svc.GrantHandler(st.run, g)
	for _, j := range st.jobs {
		if err := h(ctx, jobs.Job{Kind: j.Kind, Payload: j.Payload}); err != nil {
			t.Fatal(err)
		}
	}
	live, test := g.grants["plan-grant:ws_a:live:2026-01"], g.grants["plan-grant:ws_a:test:2026-01"]
	if live.Credits != 50 || live.PlanID != "free" || live.Environment != access.Live || live.TenantID != "ten_1" ||
		test.Credits != 777 || test.Environment != access.Test || test.Period.String() != "2026-01" {
		t.Fatalf("grants: live %+v test %+v", live, test)
	}

	// Upgrading one environment swaps its entitlements only, and the next
	// grant of that environment records its plan.
	if err := svc.Assign(ctx, st, "ten_1", "ws_a", access.Test, "pro"); err != nil {
		t.Fatal(err)
	}
	if got := st.entitlements["ws_a|test"]; len(got) != 4 || got["ai.pro_models"] != "plan:pro" {
		t.Fatalf("test pro entitlements = %v", got)
	}
	if got := st.entitlements["ws_a|live"]; len(got) != 1 {
		t.Fatalf("live entitlements after a test upgrade = %v", got)
	}
	next := plan.Period{Year: 2026, Month: 2}
	for _, env := range []access.Environment{access.Live, access.Test} {
		gr, err := svc.GrantFor(ctx, st, plan.GrantPayload{TenantID: "ten_1", WorkspaceID: "ws_a", Environment: env, Period: next.String()})
		if err != nil {
			t.Fatal(err)
		}
		wantPlan, wantCredits := "free", uint64(50)
		if env == access.Test {
			wantPlan, wantCredits = "pro", 777 // test credits are a setting, whatever the test plan
		}
		if gr.PlanID != wantPlan || gr.Credits != wantCredits {
			t.Fatalf("%s grant after a test upgrade = %+v", env, gr)
		}
	}
	if err := svc.Assign(ctx, st, "ten_1", "ws_a", access.Live, "pro"); err != nil {
		t.Fatal(err)
	}
	if got := st.entitlements["ws_a|live"]; len(got) != 4 || got["ai.pro_models"] != "plan:pro" {
		t.Fatalf("pro entitlements = %v", got)
	}
	if gr, err := svc.GrantFor(ctx, st, plan.GrantPayload{WorkspaceID: "ws_a", Environment: access.Live, Period: next.String()}); err != nil ||
		gr.Credits != 2000 || gr.PlanID != "pro" {
		t.Fatalf("live grant on pro = %+v, %v", gr, err)
	}
	if err := svc.Assign(ctx, st, "ten_1", "ws_a", access.Live, "free"); err != nil {
		t.Fatal(err)
	}
	if got := st.entitlements["ws_a|live"]; len(got) != 1 {
		t.Fatalf("after downgrade = %v", got)
	}
	if got := st.entitlements["ws_a|test"]; len(got) != 4 {
		t.Fatalf("test entitlements after a live downgrade = %v", got)
	}
	if err := svc.Assign(ctx, st, "ten_1", "ws_a", access.Live, "gold"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown plan = %v", err)
	}
	if err := svc.Assign(ctx, st, "ten_1", "ws_a", "staging", "pro"); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("unknown environment = %v", err)
	}
}

func TestScheduleGrants(t *testing.T) {
	ctx := context.Background()
	st := newMem(jan)
	svc := mustNew(t, plan.Catalog{})
	if _, err := svc.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	for i := range 450 { // more than one batch
		for _, env := range []access.Environment{access.Live, access.Test} { // listed once per workspace
			if err := svc.Assign(ctx, st, "ten_1", fmt.Sprintf("ws_%04d", i), env, plan.FreeID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := svc.EnsureSchedule(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := svc.EnsureSchedule(ctx, st); err != nil { // a second host starting
		t.Fatal(err)
	}
	if len(st.jobs) != 2 || st.jobs[0].UniqueKey != "plan.schedule_grants:2026-01" || st.jobs[1].UniqueKey != "plan.schedule_grants:2026-02" ||
		!st.jobs[1].RunAt.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("schedule jobs = %+v", st.jobs)
	}
	h := svc.ScheduleHandler(st.run)
	feb := st.jobs[1]
	st.jobs = nil
	for range 2 { // a rerun enqueues nothing new
		if err := h(ctx, jobs.Job{Kind: feb.Kind, Payload: feb.Payload}); err != nil {
			t.Fatal(err)
		}
	}
	grants, next := 0, 0
	for _, j := range st.jobs {
		switch j.Kind {
		case plan.JobMonthlyGrant:
			grants++
			var p plan.GrantPayload
			json.Unmarshal(j.Payload, &p)
			if p.Period != "2026-02" || j.UniqueKey != plan.Reference(p.WorkspaceID, p.Environment, plan.Period{Year: 2026, Month: 2}) {
				t.Fatalf("grant job %+v", j)
			}
		case plan.JobScheduleGrants:
			next++
			if j.UniqueKey != "plan.schedule_grants:2026-03" {
				t.Fatalf("next schedule %+v", j)
			}
		}
	}
	if grants != 900 || next != 1 {
		t.Fatalf("grants %d, next schedules %d", grants, next)
	}
}

func TestPeriod(t *testing.T) {
	p := plan.PeriodOf(time.Date(2025, 12, 31, 23, 59, 59, 0, time.FixedZone("x", -3600)))
	if p.String() != "2026-01" || p.Next().String() != "2026-02" {
		t.Fatalf("period = %s next %s", p, p.Next())
	}
	if q, err := plan.ParsePeriod("2026-12"); err != nil || q.Next().String() != "2027-01" || !q.Start().Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("parse = %v, %v", q, err)
	}
	if _, err := plan.ParsePeriod("2026-13"); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("bad period = %v", err)
	}
}

// Every plan of the default catalog has its documented limits, a plan
// configured without limits gets the defaults, and a plan the catalog does
// not list is held to the free plan's.
func TestLimits(t *testing.T) {
	svc, err := plan.New(plan.Catalog{})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]plan.Limits{
		"free":   {SoundMaxDuration: 10 * time.Minute, StorageQuotaBytes: 1 << 30},
		"pro":    {SoundMaxDuration: 30 * time.Minute, StorageQuotaBytes: 20 << 30},
		"studio": {SoundMaxDuration: 60 * time.Minute, StorageQuotaBytes: 100 << 30},
		"gone":   {SoundMaxDuration: 10 * time.Minute, StorageQuotaBytes: 1 << 30},
		"":       {SoundMaxDuration: 10 * time.Minute, StorageQuotaBytes: 1 << 30},
	} {
		if got := svc.Limits(id); got != want {
			t.Errorf("Limits(%q) = %+v, want %+v", id, got, want)
		}
	}
	custom, err := plan.New(plan.Catalog{Plans: []plan.Spec{
		{ID: "free", Name: "Free", Limits: plan.Limits{StorageQuotaBytes: 5000}},
		{ID: "big", Name: "Big", Limits: plan.Limits{SoundMaxDuration: 2 * time.Hour}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := custom.Limits("big"); got != (plan.Limits{SoundMaxDuration: 2 * time.Hour, StorageQuotaBytes: 1 << 30}) {
		t.Errorf("custom big = %+v", got)
	}
	if got := custom.Limits("other"); got != (plan.Limits{SoundMaxDuration: 10 * time.Minute, StorageQuotaBytes: 5000}) {
		t.Errorf("unlisted plan on a custom catalog = %+v", got)
	}
	if _, err := plan.New(plan.Catalog{Plans: []plan.Spec{{ID: "free", Name: "Free", Limits: plan.Limits{StorageQuotaBytes: -1}}}}); err == nil {
		t.Error("a negative limit was accepted")
	}
}

// TestJobsArePlansKinds: the grant scheduler and the monthly grant, byte
// for byte, of the money class, neither periodic (the scheduler plans its
// own next period).
func TestJobsArePlansKinds(t *testing.T) {
	svc, err := plan.New(plan.Catalog{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range svc.Jobs(newMem(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).run, &fakeGranter{}) {
		if k.Class != jobs.ClassMoney || k.HandlerFunc == nil || k.Every != 0 {
			t.Errorf("kind %+v", k)
		}
		got = append(got, k.Name)
	}
	if want := []string{"plan.schedule_grants", "plan.monthly_grant"}; !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
}
