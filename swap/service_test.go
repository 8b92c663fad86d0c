package swap

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/relay"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// memStore is an in-memory Store; every unit of work sees the same data.
type memStore struct {
	mu       sync.Mutex
	now      time.Time
	policies map[string][]policy.Version
	runs     []RegistryRun
}

func newMemStore(now time.Time) *memStore {
	return &memStore{now: now, policies: map[string][]policy.Version{}}
}

func (m *memStore) Now() time.Time { return m.now }

func pkey(s policy.Scope, id string) string {
	return string(s.Environment) + "|" + s.TenantID + "|" + id
}

func (m *memStore) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := pkey(v.Scope, v.ID)
	for _, x := range m.policies[k] {
		if x.Version == v.Version {
			return x, false, nil
		}
	}
	v.CreatedAt = m.now
	m.policies[k] = append(m.policies[k], v)
	return v, true, nil
}

func (m *memStore) PolicyCurrent(_ context.Context, s policy.Scope, id string) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.policies[pkey(s, id)]
	if len(vs) == 0 {
		return policy.Version{}, fault.E("mem", fault.NotFound, "")
	}
	return vs[len(vs)-1], nil
}

func (m *memStore) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.policies[pkey(s, id)] {
		if v.Version == version {
			return v, nil
		}
	}
	return policy.Version{}, fault.E("mem", fault.NotFound, "")
}

func (m *memStore) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	panic("not used")
}

func (m *memStore) SwapRegistryRunInsert(_ context.Context, r RegistryRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs = append(m.runs, r)
	return nil
}

func (m *memStore) newest(env access.Environment, version int, readable bool) (RegistryRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	runs := append([]RegistryRun(nil), m.runs...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CheckedAt.After(runs[j].CheckedAt) })
	for _, r := range runs {
		if r.Environment == string(env) && r.RegistryVersion == version && (!readable || !r.Unreadable) {
			return r, nil
		}
	}
	return RegistryRun{}, fault.E("mem", fault.NotFound, "")
}

func (m *memStore) SwapRegistryRunLatest(_ context.Context, env access.Environment, version int) (RegistryRun, error) {
	return m.newest(env, version, true)
}

func (m *memStore) SwapRegistryRunNewest(_ context.Context, env access.Environment, version int) (RegistryRun, error) {
	return m.newest(env, version, false)
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// fixture is a loopback cluster with two mints, a registry of them and a
// third entry whose mint does not exist, and a Service over memStore.
type fixture struct {
	cluster *chaintest.Cluster
	store   *memStore
	clock   *clock
	svc     *Service
	reg     Registry
}

// namedRoutes is a route provider that only has a name: the registry and
// settings never call it.
type namedRoutes string

func (n namedRoutes) Name() string { return string(n) }

func (namedRoutes) Route(context.Context, RouteRequest) (ProviderRoute, error) { panic("not used") }

func (namedRoutes) Instructions(context.Context, ProviderRoute, chain.Address) (RouteInstructions, error) {
	panic("not used")
}

func newFixture(t *testing.T, provider string) *fixture {
	t.Helper()
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	platformMint, usdMint := testKey(41), testKey(42)
	fee := token2022.TransferFeeConfig{Older: token2022.TransferFee{BasisPoints: 200, MaximumFee: 1 << 62},
		Newer: token2022.TransferFee{BasisPoints: 200, MaximumFee: 1 << 62}}
	if err := c.CreateMint(platformMint, token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1, Extensions: []token2022.Extension{fee}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateMint(usdMint, token2022.Mint{Decimals: 6, IsInitialized: true, Supply: 1, Extensions: []token2022.Extension{}}); err != nil {
		t.Fatal(err)
	}
	reg := Registry{Tokens: []Token{
		{Mint: platformMint.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 9, Symbol: "CMT", Name: "Creator Music Token"},
		{Mint: usdMint.String(), TokenProgram: token2022.ProgramID().String(), Decimals: 6, Symbol: "TUSD", Name: "Test Dollar"},
		{Mint: testKey(43).String(), TokenProgram: token2022.ProgramID().String(), Decimals: 6, Symbol: "GONE", Name: "Never minted"},
	}}
	rpc, err := solanarpc.New(solanarpc.Config{URL: c.URL(), Timeout: 2 * time.Second, HTTPClient: urlguardtest.Client(t, c.URL())})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	st := newMemStore(clk.t)
	n := 0
	var routes RouteProvider
	if provider != "" {
		routes = namedRoutes(provider)
	}
	svc, err := New(Config{
		Environments:   map[access.Environment]Environment{access.Test: {Chain: rpc, Routes: routes, Registry: &reg, FeeRecipient: testKey(44).String()}},
		Clock:          clk,
		Run:            func(ctx context.Context, fn func(Store) error) error { return fn(st) },
		ReadFunc:       func() Store { return st },
		SubmitRun:      func(ctx context.Context, fn func(SubmitStore) error) error { return fn(st) },
		SubmitReadFunc: func() SubmitStore { return st },
		Breaker:        BreakerConfig{Threshold: 2, Cooldown: time.Minute},
		NewIDFunc:      func() string { n++; return string(rune('a' + n)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &fixture{cluster: c, store: st, clock: clk, svc: svc, reg: reg}
}

func TestTokensPendingUntilReadThenMatchedFromTheCluster(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "jupiter")
	v, err := f.svc.Tokens(ctx, f.store, access.Test)
	if err != nil {
		t.Fatal(err)
	}
	if v.RegistryVersion != 1 || v.Network != "" || v.VerifiedAt != nil || len(v.Tokens) != 3 {
		t.Fatalf("before any run: %+v", v)
	}
	for _, tv := range v.Tokens {
		if tv.Executable || tv.Check.Status != TokenPending {
			t.Fatalf("%s before any run: executable %v, status %s", tv.Symbol, tv.Executable, tv.Check.Status)
		}
	}

	run, ran, err := f.svc.VerifyRegistry(ctx, access.Test)
	if err != nil || !ran || run.Unreadable {
		t.Fatalf("VerifyRegistry = %+v, %v, %v", run, ran, err)
	}
	v, err = f.svc.Tokens(ctx, f.store, access.Test)
	if err != nil {
		t.Fatal(err)
	}
	if v.Network != f.cluster.Network().CAIP2() || v.VerifiedAt == nil {
		t.Fatalf("network = %q (want the cluster's %q), verifiedAt %v", v.Network, f.cluster.Network().CAIP2(), v.VerifiedAt)
	}
	want := map[string]struct {
		exec   bool
		reason string
	}{"CMT": {true, ""}, "TUSD": {true, ""}, "GONE": {false, ReasonMintMissing}}
	for _, tv := range v.Tokens {
		w := want[tv.Symbol]
		if tv.Executable != w.exec || tv.Check.Reason != w.reason {
			t.Fatalf("%s: executable %v reason %q, want %v %q", tv.Symbol, tv.Executable, tv.Check.Reason, w.exec, w.reason)
		}
	}
	if fee := v.Tokens[0].Check.TransferFeeBps; fee == nil || *fee != 200 {
		t.Fatalf("CMT transfer fee = %v, want the mint's 200 bps", fee)
	}

	// The cluster stops answering: the run is stored as unreadable and
	// changes nothing that was observed.
	f.cluster.Inject(chaintest.Fault{HTTPStatus: 503})
	f.cluster.Inject(chaintest.Fault{Code: -32005, Behind: 40})
	f.clock.t = f.clock.t.Add(time.Minute)
	run, _, err = f.svc.VerifyRegistry(ctx, access.Test)
	if err != nil || !run.Unreadable || run.Network != "" {
		t.Fatalf("run against an unhealthy node = %+v, %v", run, err)
	}
	v2, err := f.svc.Tokens(ctx, f.store, access.Test)
	if err != nil {
		t.Fatal(err)
	}
	if !v2.Tokens[0].Executable || !v2.VerifiedAt.Equal(*v.VerifiedAt) {
		t.Fatal("an unreadable run changed what the readable one observed")
	}
	f.cluster.ClearFaults()

	// The mint changes under the registry: the next run takes the entry
	// out of the executable list.
	if err := f.cluster.SetMint(testKey(42), token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1, Extensions: []token2022.Extension{}}); err != nil {
		t.Fatal(err)
	}
	f.clock.t = f.clock.t.Add(time.Minute)
	if _, _, err := f.svc.VerifyRegistry(ctx, access.Test); err != nil {
		t.Fatal(err)
	}
	v3, _ := f.svc.Tokens(ctx, f.store, access.Test)
	if v3.Tokens[1].Executable || v3.Tokens[1].Check.Reason != ReasonDecimalsMismatch {
		t.Fatalf("TUSD after its decimals changed: %+v", v3.Tokens[1])
	}
}

func TestTokensFailClosed(t *testing.T) {
	ctx := context.Background()
	st := newMemStore(time.Now())
	svc, err := New(Config{Environments: map[access.Environment]Environment{access.Test: {Routes: namedRoutes("jupiter")}},
		Clock: &clock{}, Run: func(ctx context.Context, fn func(Store) error) error { return fn(st) }, ReadFunc: func() Store { return st },
		SubmitRun:      func(ctx context.Context, fn func(SubmitStore) error) error { return fn(st) },
		SubmitReadFunc: func() SubmitStore { return st }})
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []access.Environment{access.Test, access.Live} {
		_, err := svc.Tokens(ctx, st, env)
		if !fault.Is(err, fault.SwapNotConfigured) {
			t.Fatalf("%s without a cluster: %v, want SWAP_NOT_CONFIGURED", env, err)
		}
	}
	f := newFixture(t, "jupiter")
	f.store.policies = map[string][]policy.Version{}
	if _, err := f.svc.Tokens(ctx, f.store, access.Test); !fault.Is(err, fault.SwapNotConfigured) {
		t.Fatalf("without a published registry: %v, want SWAP_NOT_CONFIGURED", err)
	}
}

func TestSettingsStatus(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "jupiter")
	v, err := f.svc.Settings(ctx, f.store, access.Test)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != StatusActive || v.ServiceFeeBps != ServiceFeeBps || v.FeePolicyVersion != 1 || v.RegistryVersion != 1 ||
		v.SettingsVersion != 1 || v.Settings != DefaultSettings() || v.FeeRecipient != testKey(44).String() || v.Provider != "jupiter" {
		t.Fatalf("settings = %+v", v)
	}
	if v.Network != "" {
		t.Fatalf("network %q shown before any reading of the cluster", v.Network)
	}
	if _, _, err := f.svc.VerifyRegistry(ctx, access.Test); err != nil {
		t.Fatal(err)
	}
	if v, _ = f.svc.Settings(ctx, f.store, access.Test); v.Network != f.cluster.Network().CAIP2() {
		t.Fatalf("network = %q after a run", v.Network)
	}

	// Two provider failures open the breaker: paused until it closes.
	b := f.svc.Breaker(access.Test)
	b.Failure(f.clock.t)
	b.Failure(f.clock.t)
	if v, _ = f.svc.Settings(ctx, f.store, access.Test); v.Status != StatusPaused || v.StatusReason != "route_provider_circuit_open" ||
		v.Breaker.State != BreakerOpen || v.Breaker.ConsecutiveFailures != 2 {
		t.Fatalf("after two failures: %+v", v)
	}
	b.Success()

	// Disabled by a newer settings version.
	off := DefaultSettings()
	off.SwapEnabled = false
	if _, _, err := policy.Publish(ctx, f.store, policy.Scope{Environment: access.Test}, PolicySettings, off, "operator"); err != nil {
		t.Fatal(err)
	}
	if v, _ = f.svc.Settings(ctx, f.store, access.Test); v.Status != StatusPaused || v.StatusReason != "disabled_by_policy" || v.SettingsVersion != 2 {
		t.Fatalf("disabled: %+v", v)
	}

	// Live has no configuration at all.
	if v, _ = f.svc.Settings(ctx, f.store, access.Live); v.Status != StatusNotConfigured || v.StatusReason != "cluster_not_configured" ||
		v.FeePolicyVersion != 0 || v.RegistryVersion != 0 {
		t.Fatalf("live: %+v", v)
	}
	// No route provider.
	g := newFixture(t, "")
	if v, _ = g.svc.Settings(ctx, g.store, access.Test); v.Status != StatusNotConfigured || v.StatusReason != "route_provider_not_configured" {
		t.Fatalf("no provider: %+v", v)
	}
}

// TestCapabilityFollowsTheRegistryRuns: configured is not verified before
// a run read the cluster (not_checked); a run that matched two mints
// verifies and enables swaps, agreeing with the tokens view; a mint that
// changes under the registry leaves one executable entry, so swaps are
// no longer verified (deployment_not_verified); a pause keeps verified
// and disables; no cluster or no route provider is the settings' reason.
func TestCapabilityFollowsTheRegistryRuns(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "jupiter")
	capOf := func(env access.Environment) Capability {
		t.Helper()
		c, err := f.svc.Capability(ctx, f.store, env)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := capOf(access.Test); c != (Capability{Configured: true, Reason: ReasonNotChecked}) {
		t.Fatalf("before any run: %+v", c)
	}
	if _, _, err := f.svc.VerifyRegistry(ctx, access.Test); err != nil {
		t.Fatal(err)
	}
	if c := capOf(access.Test); c != (Capability{Configured: true, Verified: true, Enabled: true}) {
		t.Fatalf("after a matching run: %+v", c)
	}
	v, err := f.svc.Tokens(ctx, f.store, access.Test)
	if err != nil {
		t.Fatal(err)
	}
	executable := 0
	for _, tv := range v.Tokens {
		if tv.Executable {
			executable++
		}
	}
	if executable != 2 {
		t.Fatalf("the tokens view has %d executable entries where the capability saw two", executable)
	}

	// A pause keeps what the run proved.
	b := f.svc.Breaker(access.Test)
	b.Failure(f.clock.t)
	b.Failure(f.clock.t)
	if c := capOf(access.Test); c != (Capability{Configured: true, Verified: true, Reason: "route_provider_circuit_open"}) {
		t.Fatalf("breaker open: %+v", c)
	}
	b.Success()

	if err := f.cluster.SetMint(testKey(42), token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1, Extensions: []token2022.Extension{}}); err != nil {
		t.Fatal(err)
	}
	f.clock.t = f.clock.t.Add(time.Minute)
	if _, _, err := f.svc.VerifyRegistry(ctx, access.Test); err != nil {
		t.Fatal(err)
	}
	if c := capOf(access.Test); c != (Capability{Configured: true, Reason: ReasonDeploymentNotVerified}) {
		t.Fatalf("one mint left matching: %+v", c)
	}

	if c := capOf(access.Live); c != (Capability{Reason: "cluster_not_configured"}) {
		t.Fatalf("live: %+v", c)
	}
	g := newFixture(t, "")
	if _, _, err := g.svc.VerifyRegistry(ctx, access.Test); err != nil {
		t.Fatal(err)
	}
	c, err := g.svc.Capability(ctx, g.store, access.Test)
	if err != nil || c != (Capability{Verified: true, Reason: "route_provider_not_configured"}) {
		t.Fatalf("no route provider: %+v, %v", c, err)
	}
}

func TestPublishKeepsAnOperatorsSettings(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "jupiter")
	tight := DefaultSettings()
	tight.Slippage.MaxBps = 100
	if _, _, err := policy.Publish(ctx, f.store, policy.Scope{Environment: access.Test}, PolicySettings, tight, "operator"); err != nil {
		t.Fatal(err)
	}
	// A restart without configured settings keeps the operator's version.
	if err := f.svc.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	v, _ := f.svc.Settings(ctx, f.store, access.Test)
	if v.SettingsVersion != 2 || v.Settings.Slippage.MaxBps != 100 {
		t.Fatalf("settings after a restart = v%d %+v", v.SettingsVersion, v.Settings.Slippage)
	}
	// The same registry again publishes nothing new.
	if tv, _ := f.svc.Tokens(ctx, f.store, access.Test); tv.RegistryVersion != 1 {
		t.Fatalf("registry version after republishing the same list = %d", tv.RegistryVersion)
	}
}

// The registry and settings tests write no operation, quote or intent.

func (m *memStore) OutboxInsert(context.Context, outbox.Event) (outbox.Event, error) {
	panic("not used")
}

func (m *memStore) SwapOperationInsert(context.Context, Operation) error { panic("not used") }

func (m *memStore) SwapOperation(context.Context, Owner, string) (Operation, error) {
	panic("not used")
}

func (m *memStore) SwapOperationUpdate(context.Context, Operation, int64) error { panic("not used") }

func (m *memStore) SwapQuoteInsert(context.Context, Quote) error { panic("not used") }

func (m *memStore) SwapQuote(context.Context, Owner, string) (Quote, error) { panic("not used") }

func (m *memStore) SwapIntentInsert(context.Context, Intent, Prepared) error { panic("not used") }

func (m *memStore) SwapIntent(context.Context, Owner, string) (Intent, Prepared, error) {
	panic("not used")
}

func (m *memStore) JobInsert(context.Context, jobs.InsertParams) (bool, error) { panic("not used") }

func (m *memStore) AfterCommit(func()) { panic("not used") }

func (m *memStore) SwapSubmissionInsert(context.Context, string, relay.Submission) error {
	panic("not used")
}

func (m *memStore) SwapSubmission(context.Context, string) (relay.Submission, error) {
	panic("not used")
}

func (m *memStore) SwapSubmissionUpdate(context.Context, string, relay.Submission, int, relay.State) error {
	panic("not used")
}

func (m *memStore) SwapOperationByID(context.Context, string) (Operation, error) { panic("not used") }

func (m *memStore) SwapOperationsExpired(context.Context, time.Time, int) ([]Operation, error) {
	panic("not used")
}
