package sale

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// key returns a deterministic address.
func key(b byte) token2022.PublicKey { return token2022.PublicKey{b, 0xaa, b} }

var (
	_ ChainClient = (*fakeChain)(nil)
	_ Store       = (*fakeStore)(nil)
)

// fakeChain answers from maps; err, when set, fails every read.
type fakeChain struct {
	accounts map[token2022.PublicKey]chain.AccountInfo
	balances map[token2022.PublicKey]chain.TokenAmount
	err      error
	reads    int
}

func (f *fakeChain) GetAccountInfo(_ context.Context, addr chain.Address, c chain.Commitment) (chain.AccountInfo, error) {
	f.reads++
	if c != chain.Finalized {
		return chain.AccountInfo{}, fmt.Errorf("commitment %s, want finalized", c)
	}
	if f.err != nil {
		return chain.AccountInfo{}, f.err
	}
	a, ok := f.accounts[addr]
	if !ok {
		return chain.AccountInfo{}, chain.ErrAccountNotFound
	}
	return a, nil
}

func (f *fakeChain) GetTokenAccountBalance(_ context.Context, addr chain.Address, c chain.Commitment) (chain.TokenAmount, error) {
	f.reads++
	if c != chain.Finalized {
		return chain.TokenAmount{}, fmt.Errorf("commitment %s, want finalized", c)
	}
	if f.err != nil {
		return chain.TokenAmount{}, f.err
	}
	b, ok := f.balances[addr]
	if !ok {
		return chain.TokenAmount{}, chain.ErrNotTokenAccount
	}
	return b, nil
}

// fakeStore keeps everything in memory.
type fakeStore struct {
	mu            sync.Mutex
	n             int
	runs          []Run
	intents       map[string]AccessIntent
	jurisdictions map[string]string
	accounts      map[string]Account
}

func newFakeStore() *fakeStore {
	return &fakeStore{intents: map[string]AccessIntent{}, jurisdictions: map[string]string{},
		accounts: map[string]Account{"usr_1": {InTenant: true, EmailVerified: true}, "usr_2": {InTenant: true, EmailVerified: true}}}
}

func (f *fakeStore) NewID(prefix string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return fmt.Sprintf("%s%04d", prefix, f.n)
}

func (f *fakeStore) SaleRunInsert(_ context.Context, r Run) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, r)
	return nil
}

func (f *fakeStore) SaleRunLatest(_ context.Context, env access.Environment, saleID string) (Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.runs) - 1; i >= 0; i-- {
		if f.runs[i].Environment == env && f.runs[i].SaleID == saleID {
			return f.runs[i], nil
		}
	}
	return Run{}, fault.E("fake", fault.NotFound, "")
}

func (f *fakeStore) AccessIntentInsert(_ context.Context, in AccessIntent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	in.HandoffURL = ""
	f.intents[in.ID] = in
	return nil
}

func (f *fakeStore) AccessIntentGet(_ context.Context, env access.Environment, userID, id string) (AccessIntent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.intents[id]
	if !ok || in.Environment != env || in.UserID != userID {
		return AccessIntent{}, fault.E("fake", fault.NotFound, "")
	}
	return in, nil
}

func (f *fakeStore) Jurisdiction(_ context.Context, userID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.jurisdictions[userID]
	if !ok {
		return "", fault.E("fake", fault.NotFound, "")
	}
	return c, nil
}

func (f *fakeStore) DeclareJurisdiction(_ context.Context, userID, code string, _ time.Time) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.jurisdictions[userID]; !ok {
		f.jurisdictions[userID] = code
	}
	return f.jurisdictions[userID], nil
}

func (f *fakeStore) SaleAccount(_ context.Context, _, userID string) (Account, error) {
	return f.accounts[userID], nil
}

// fixture is a service over one live sale, a fake chain and a fake store.
type fixture struct {
	svc   *Service
	chain *fakeChain
	st    *fakeStore
	now   time.Time
	sale  Sale
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	maxAtomic = "1000000000000000" // one million tokens
	minAtomic = "1000000000"
)

// baseSale is an OPEN sale with every address configured, in its window.
func baseSale() Sale {
	return Sale{
		ID: "presale-1", Status: StatusOpen, TargetWindow: "2026-Q1",
		Window:   &Window{Opens: epoch.Add(-time.Hour), Closes: epoch.Add(24 * time.Hour)},
		Provider: "Launch Provider", ProviderCandidates: []string{"Launch Provider", "Other Provider"},
		ProviderURL:         "https://sale.launchprovider.io/buy",
		AllocationMinAtomic: minAtomic, AllocationMaxAtomic: maxAtomic,
		PresalePriceUSD: "0.010", InitialDexReferenceUSD: "0.015",
		ProductionMint: key(1).String(), SaleContract: key(2).String(), SaleProgram: key(3).String(),
		InventoryAccount: key(4).String(), Terms: Terms{Published: true, Version: "terms-1"},
		Venues: []Venue{
			{Name: "Pool A", Kind: VenuePool, Approved: true, Address: key(5).String(), Program: key(6).String()},
			{Name: "Pool B", Kind: VenuePool, Approved: false, Address: key(7).String(), Program: key(6).String()},
			{Name: "Aggregator", Kind: VenueAggregator, Approved: true},
			{Name: "Aggregator X", Kind: VenueAggregator, Approved: false},
		},
		UpdatedAt: epoch.Add(-48 * time.Hour),
	}
}

// healthyChain holds every account baseSale needs, correct.
func healthyChain() *fakeChain {
	inv := token2022.EncodeAccount(token2022.Account{Mint: key(1), Owner: key(9), Amount: 1_000_000_000_000_000, State: token2022.StateInitialized})
	return &fakeChain{
		accounts: map[token2022.PublicKey]chain.AccountInfo{
			key(2): {Address: key(2), Owner: key(3), Slot: 100},
			key(4): {Address: key(4), Owner: token2022.ProgramID(), Data: inv, Slot: 101},
			key(5): {Address: key(5), Owner: key(6), Slot: 102},
		},
		balances: map[token2022.PublicKey]chain.TokenAmount{key(4): {Amount: 1_000_000_000_000_000, Decimals: 9, Slot: 103}},
	}
}

func newFixture(t *testing.T, mutate func(*Sale, *EnvConfig)) *fixture {
	t.Helper()
	f := &fixture{chain: healthyChain(), st: newFakeStore(), now: epoch, sale: baseSale()}
	ec := EnvConfig{Current: "presale-1", Jurisdictions: JurisdictionPolicy{Allowed: []string{"DE", "FR", "US"}, Blocked: []string{"US"}},
		Disclosure: Disclosure{Version: "disc-3", URL: "https://platform.io/disclosures/3"}, Chain: f.chain}
	if mutate != nil {
		mutate(&f.sale, &ec)
	}
	ec.Sales = []Sale{f.sale}
	svc, err := New(Config{Environments: map[access.Environment]EnvConfig{access.Live: ec}, Clock: clockFunc(func() time.Time { return f.now }),
		HandoffKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	f.svc = svc
	return f
}

// verify runs a verification and records it.
func (f *fixture) verify(t *testing.T, tokenVerified bool) Run {
	t.Helper()
	r, err := f.svc.Verify(context.Background(), access.Live, "presale-1", tokenVerified)
	if err != nil {
		t.Fatalf("Verify() = %v", err)
	}
	if r, err = f.svc.RecordRun(context.Background(), f.st, r); err != nil {
		t.Fatalf("RecordRun() = %v", err)
	}
	return r
}

func user(id string) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: id, SessionID: "ses_" + id,
		Environment: access.Live}
}

func TestMovesAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	states := Statuses()
	for _, m := range Moves() {
		k := string(m.From) + "/" + string(m.Event)
		if seen[k] {
			t.Errorf("duplicate move %s", k)
		}
		seen[k] = true
		if !slices.Contains(states, m.From) || !slices.Contains(states, m.To) {
			t.Errorf("move %v names an unknown state", m)
		}
	}
	if _, err := Transition(StatusPlanned, EventOpen); !fault.Is(err, fault.InvalidState) {
		t.Errorf("PLANNED -open-> = %v, want INVALID_STATE_TRANSITION", err)
	}
	if to, err := Transition(StatusPlanned, EventVerify); err != nil || to != StatusVerified {
		t.Errorf("PLANNED -verify-> = %s, %v", to, err)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	tests := map[string]func(*Sale, *EnvConfig){
		"reserved id":         func(s *Sale, ec *EnvConfig) { s.ID, ec.Current = ReservedID, ReservedID },
		"upper-case id":       func(s *Sale, ec *EnvConfig) { s.ID, ec.Current = "Presale", "Presale" },
		"verified status":     func(s *Sale, _ *EnvConfig) { s.Status = StatusVerified },
		"claimable status":    func(s *Sale, _ *EnvConfig) { s.Status = StatusClaimable },
		"open without window": func(s *Sale, _ *EnvConfig) { s.Window = nil },
		"leading zero":        func(s *Sale, _ *EnvConfig) { s.AllocationMinAtomic = "01" },
		"decimal amount":      func(s *Sale, _ *EnvConfig) { s.AllocationMaxAtomic = "1.5" },
		"min over max":        func(s *Sale, _ *EnvConfig) { s.AllocationMinAtomic = "2" + maxAtomic },
		"bad address":         func(s *Sale, _ *EnvConfig) { s.SaleContract = "not-base58-0OIl" },
		"http provider":       func(s *Sale, _ *EnvConfig) { s.ProviderURL = "http://sale.launchprovider.io" },
		"bad price":           func(s *Sale, _ *EnvConfig) { s.PresalePriceUSD = "-1" },
		"lower jurisdiction":  func(_ *Sale, ec *EnvConfig) { ec.Jurisdictions.Allowed = []string{"de"} },
		"unknown current":     func(_ *Sale, ec *EnvConfig) { ec.Current = "nope" },
		"no disclosure":       func(_ *Sale, ec *EnvConfig) { ec.Disclosure.Version = "" },
		"aggregator address":  func(s *Sale, _ *EnvConfig) { s.Venues[2].Address = key(8).String() },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			s, ec := baseSale(), EnvConfig{Current: "presale-1", Disclosure: Disclosure{Version: "d1"}}
			mutate(&s, &ec)
			ec.Sales = []Sale{s}
			_, err := New(Config{Environments: map[access.Environment]EnvConfig{access.Live: ec}, HandoffKey: make([]byte, 32)})
			if err == nil {
				t.Fatal("New() accepted the configuration")
			}
		})
	}
	ec := EnvConfig{Sales: []Sale{baseSale()}, Disclosure: Disclosure{Version: "d1"}}
	if _, err := New(Config{Environments: map[access.Environment]EnvConfig{access.Live: ec}, HandoffKey: make([]byte, 16)}); err == nil {
		t.Error("New() accepted a short handoff key")
	}
}

func TestPlannedProjectionNeverOpen(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(s *Sale, _ *EnvConfig) { s.Status = StatusPlanned })
	f.verify(t, true) // even a fully verified run does not open a planned sale
	p, err := f.svc.Current(ctx, f.st, access.Live)
	if err != nil || p == nil {
		t.Fatalf("Current() = %v, %v", p, err)
	}
	if p.Status != StatusPlanned || p.Window != nil {
		t.Errorf("planned sale projected %s with window %v", p.Status, p.Window)
	}
	if p.AllocationMaxAtomic != maxAtomic || p.Stage != "PRE_SALE" || p.Disclosure.Version != "disc-3" {
		t.Errorf("projection = %+v", p)
	}
	in, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != IntentIneligible || in.HandoffURL != "" || !slices.Contains(in.Reasons, ReasonSaleNotOpen) {
		t.Errorf("planned sale intent = %+v", in)
	}
}

func TestProjectionCarriesRiskStatements(t *testing.T) {
	f := newFixture(t, nil)
	p, err := f.svc.Get(context.Background(), f.st, access.Live, "presale-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range RequiredStatements() {
		if !slices.Contains(p.Disclosure.Statements, want) {
			t.Errorf("projection lacks statement %s", want.Code)
		}
	}
	d, err := f.svc.Disclosures(access.Live, "presale-1")
	if err != nil || len(d.Statements) < 4 || d.URL == "" {
		t.Errorf("Disclosures() = %+v, %v", d, err)
	}
}

func TestOpenSaleCappedByEvidence(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	status := func() Status {
		t.Helper()
		p, err := f.svc.Get(ctx, f.st, access.Live, "presale-1")
		if err != nil {
			t.Fatal(err)
		}
		return p.Status
	}
	if s := status(); s != StatusPlanned {
		t.Fatalf("configured OPEN without a run projected %s, want PLANNED", s)
	}
	f.verify(t, false) // production mint not verified by the registry
	if s := status(); s != StatusPlanned {
		t.Fatalf("configured OPEN with a failed run projected %s, want PLANNED", s)
	}
	f.verify(t, true)
	if s := status(); s != StatusOpen {
		t.Fatalf("verified OPEN sale in window projected %s, want OPEN", s)
	}
	f.now = epoch.Add(-2 * time.Hour)
	if s := status(); s != StatusAnnounced {
		t.Errorf("verified OPEN sale before its window projected %s, want ANNOUNCED", s)
	}
	f.now = epoch.Add(25 * time.Hour)
	if s := status(); s != StatusClosed {
		t.Errorf("verified OPEN sale after its window projected %s, want CLOSED", s)
	}
}

func TestStaleRunIsNotEvidence(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	r := f.verify(t, true)
	r.ConfigHash, r.ID = "older", "srun_old"
	f.st.runs = append(f.st.runs, r)
	v, err := f.svc.Verification(ctx, f.st, access.Live, "presale-1")
	if err != nil {
		t.Fatal(err)
	}
	if v.SaleContract.Verified || v.ActivationAllowed || !strings.Contains(v.SaleContract.Reason, "predates") {
		t.Errorf("stale run verification = %+v", v)
	}
}

func TestVerificationWithoutRun(t *testing.T) {
	f := newFixture(t, nil)
	v, err := f.svc.Verification(context.Background(), f.st, access.Live, "presale-1")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Provider.Configured || v.SaleContract.Address != key(2).String() || v.ProductionMint.Address != key(1).String() ||
		!v.Terms.Published || v.Terms.Version != "terms-1" || v.Run != nil {
		t.Errorf("configured facts = %+v", v)
	}
	falses := map[string]struct {
		b      bool
		reason string
	}{
		"provider":       {v.Provider.Verified, v.Provider.Reason},
		"saleContract":   {v.SaleContract.Verified, v.SaleContract.Reason},
		"productionMint": {v.ProductionMint.Verified, v.ProductionMint.Reason},
		"funded":         {v.Inventory.Funded, v.Inventory.FundedReason},
		"reconciled":     {v.Inventory.Reconciled, v.Inventory.ReconciledReason},
		"liquidity":      {v.Liquidity.Verified, v.Liquidity.Reason},
		"activation":     {v.ActivationAllowed, v.ActivationReason},
	}
	for name, x := range falses {
		if x.b || x.reason == "" {
			t.Errorf("%s = %v with reason %q, want false with a reason", name, x.b, x.reason)
		}
	}
}

func TestVerificationFlipsOnlyEvidencedFlags(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	// Funded but not reconciled: the balance exceeds the expected inventory.
	f.chain.balances[key(4)] = chain.TokenAmount{Amount: 2_000_000_000_000_000, Decimals: 9, Slot: 150}
	r := f.verify(t, false)
	if r.Outcome != OutcomeFailed || r.Slot == nil || *r.Slot != 150 {
		t.Errorf("run outcome %s slot %v, want FAILED with slot 150", r.Outcome, r.Slot)
	}
	v, err := f.svc.Verification(ctx, f.st, access.Live, "presale-1")
	if err != nil {
		t.Fatal(err)
	}
	if !v.SaleContract.Verified || !v.Inventory.Funded || !v.Liquidity.Verified {
		t.Errorf("evidenced flags not set: %+v", v)
	}
	if v.Inventory.Reconciled || v.ProductionMint.Verified || v.Provider.Verified || v.ActivationAllowed {
		t.Errorf("unevidenced flags set: %+v", v)
	}
	if v.Provider.Reason != "no provider attestation source" || v.ProductionMint.Reason == "" || v.Inventory.ReconciledReason == "" {
		t.Errorf("reasons = %+v", v)
	}
	if v.Run == nil || v.Run.ID != r.ID {
		t.Errorf("run ref = %+v", v.Run)
	}

	// Exact balance and the registry's verification: activation allowed.
	f.chain.balances[key(4)] = chain.TokenAmount{Amount: 1_000_000_000_000_000, Decimals: 9, Slot: 160}
	f.verify(t, true)
	v, _ = f.svc.Verification(ctx, f.st, access.Live, "presale-1")
	if !v.Inventory.Reconciled || !v.ProductionMint.Verified || !v.ActivationAllowed || v.Provider.Verified {
		t.Errorf("verified run = %+v", v)
	}
}

func TestVerificationFailures(t *testing.T) {
	tests := map[string]struct {
		mutate func(*fakeChain)
		check  func(Verification) bool
	}{
		"contract owned by another program": {
			func(c *fakeChain) { c.accounts[key(2)] = chain.AccountInfo{Owner: key(8), Slot: 1} },
			func(v Verification) bool { return !v.SaleContract.Verified && v.Inventory.Funded },
		},
		"contract missing": {
			func(c *fakeChain) { delete(c.accounts, key(2)) },
			func(v Verification) bool { return !v.SaleContract.Verified && !v.ActivationAllowed },
		},
		"inventory of another mint": {
			func(c *fakeChain) {
				a := c.accounts[key(4)]
				a.Data = token2022.EncodeAccount(token2022.Account{Mint: key(8), Amount: 1_000_000_000_000_000, State: token2022.StateInitialized})
				c.accounts[key(4)] = a
			},
			func(v Verification) bool {
				return !v.Inventory.Funded && !v.Inventory.Reconciled && v.SaleContract.Verified
			},
		},
		"inventory short": {
			func(c *fakeChain) { c.balances[key(4)] = chain.TokenAmount{Amount: 5, Decimals: 9} },
			func(v Verification) bool { return !v.Inventory.Funded && !v.Inventory.Reconciled },
		},
		"pool missing": {
			func(c *fakeChain) { delete(c.accounts, key(5)) },
			func(v Verification) bool { return !v.Liquidity.Verified && v.ActivationAllowed },
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			tt.mutate(f.chain)
			f.verify(t, true)
			v, err := f.svc.Verification(context.Background(), f.st, access.Live, "presale-1")
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(v) {
				t.Errorf("verification = %+v", v)
			}
		})
	}
}

func TestChainErrorVerifiesNothing(t *testing.T) {
	ctx := context.Background()
	for name, mutate := range map[string]func(*fixture){
		"unreachable": func(f *fixture) {
			f.chain.err = fmt.Errorf("dial https://rpc.secret.io/?api-key=s3cret: %w", chain.ErrUnavailable)
		},
		"rpc error": func(f *fixture) {
			f.chain.err = &chain.RPCError{Method: "getAccountInfo", Code: chain.CodeNodeUnhealthy}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			mutate(f)
			r := f.verify(t, true)
			if r.Outcome != OutcomeError || r.ActivationAllowed || r.Slot != nil {
				t.Fatalf("run = %+v, want ERROR", r)
			}
			for _, c := range r.Checks {
				if c.Passed || c.Reason == "" {
					t.Errorf("check %s passed=%v reason=%q", c.Code, c.Passed, c.Reason)
				}
				if strings.Contains(c.Reason, "s3cret") {
					t.Errorf("check %s leaks the adapter error: %q", c.Code, c.Reason)
				}
			}
			v, err := f.svc.Verification(ctx, f.st, access.Live, "presale-1")
			if err != nil {
				t.Fatal(err)
			}
			if v.SaleContract.Verified || v.ProductionMint.Verified || v.Inventory.Funded || v.Liquidity.Verified || v.ActivationAllowed {
				t.Errorf("ERROR run verified something: %+v", v)
			}
			if v.Run == nil || v.Run.Outcome != OutcomeError {
				t.Errorf("run ref = %+v", v.Run)
			}
		})
	}
	t.Run("no chain", func(t *testing.T) {
		f := newFixture(t, func(_ *Sale, ec *EnvConfig) { ec.Chain = nil })
		r := f.verify(t, true)
		if r.Outcome != OutcomeError || r.Error != "chain not configured" || r.ActivationAllowed {
			t.Fatalf("run = %+v", r)
		}
	})
}

func TestVerifyUnknownSale(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.svc.Verify(context.Background(), access.Test, "presale-1", true); !fault.Is(err, fault.NotFound) {
		t.Errorf("Verify in another environment = %v, want NOT_FOUND", err)
	}
}

func TestMarketsListApprovedVerifiedOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	m, err := f.svc.Markets(ctx, f.st, access.Live, "presale-1")
	if err != nil {
		t.Fatal(err)
	}
	// Without a run no pool is verified: only the approved aggregator.
	if len(m.Venues) != 1 || m.Venues[0].Name != "Aggregator" || m.Venues[0].Kind != VenueAggregator || m.Venues[0].Address != "" ||
		m.Venues[0].RouteAvailable {
		t.Fatalf("venues without a run = %+v", m.Venues)
	}
	f.verify(t, true)
	m, _ = f.svc.Markets(ctx, f.st, access.Live, "presale-1")
	names := []string{}
	for _, v := range m.Venues {
		names = append(names, v.Name)
		if v.Kind == VenuePool && v.Name == "Aggregator" {
			t.Errorf("aggregator listed as a pool")
		}
	}
	if !slices.Equal(names, []string{"Pool A", "Aggregator"}) {
		t.Errorf("venues = %v, want the approved verified pool and the approved aggregator", names)
	}
	if m.Venues[0].Address != key(5).String() {
		t.Errorf("pool address = %q", m.Venues[0].Address)
	}
	if m.ExchangeA.Status != "TBA" || m.ExchangeA.Verified || m.ExchangeA.Reason == "" || m.ExchangeAAlpha.Verified {
		t.Errorf("listings = %+v %+v", m.ExchangeA, m.ExchangeAAlpha)
	}
	if m.LaunchReferenceUSD != "0.015" || m.LaunchReferenceStatus != "PLANNED" {
		t.Errorf("launch reference = %s %s", m.LaunchReferenceUSD, m.LaunchReferenceStatus)
	}
}

func TestCurrentNullWhenNothingPublishable(t *testing.T) {
	f := newFixture(t, func(_ *Sale, ec *EnvConfig) { ec.Current = "" })
	p, err := f.svc.Current(context.Background(), f.st, access.Live)
	if err != nil || p != nil {
		t.Errorf("Current() = %v, %v, want nil", p, err)
	}
	p, err = f.svc.Current(context.Background(), f.st, access.Test)
	if err != nil || p != nil {
		t.Errorf("Current(test) = %v, %v, want nil", p, err)
	}
}

func TestAccessIntentIneligible(t *testing.T) {
	ctx := context.Background()
	tests := map[string]struct {
		setup        func(*fixture)
		jurisdiction string
		want         Reason
	}{
		"unverified sale": {func(f *fixture) {}, "DE", ReasonSaleNotVerified},
		"before window":   {func(f *fixture) { f.verify(t, true); f.now = epoch.Add(-2 * time.Hour) }, "DE", ReasonOutsideWindow},
		"after window":    {func(f *fixture) { f.verify(t, true); f.now = epoch.Add(25 * time.Hour) }, "DE", ReasonOutsideWindow},
		"blocked":         {func(f *fixture) { f.verify(t, true) }, "US", ReasonJurisdictionBlocked},
		"not allowed":     {func(f *fixture) { f.verify(t, true) }, "BR", ReasonJurisdictionNotAllowed},
		"undeclared":      {func(f *fixture) { f.verify(t, true) }, "", ReasonJurisdictionUndeclared},
		"email": {func(f *fixture) {
			f.verify(t, true)
			f.st.accounts["usr_1"] = Account{InTenant: true}
		}, "DE", ReasonEmailNotVerified},
		"error run": {func(f *fixture) { f.chain.err = chain.ErrUnavailable; f.verify(t, true) }, "DE", ReasonSaleNotVerified},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			tt.setup(f)
			in, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: tt.jurisdiction})
			if err != nil {
				t.Fatal(err)
			}
			if in.Status != IntentIneligible || in.HandoffURL != "" || in.HandoffExpiresAt != nil || !slices.Contains(in.Reasons, tt.want) {
				t.Errorf("intent = %+v, want INELIGIBLE with %s and no handoff", in, tt.want)
			}
			if !strings.HasPrefix(in.ID, IntentIDPrefix) || in.SaleID != "presale-1" || !in.CreatedAt.Equal(f.now) {
				t.Errorf("intent identity = %+v", in)
			}
		})
	}
}

func TestAccessIntentMockProviderNeverLive(t *testing.T) {
	for _, u := range []string{"https://localhost/buy", "https://127.0.0.1/buy", "https://provider.test/x", "https://sale.example/x",
		"https://a.invalid", "https://shop.local", "https://mock-provider.io", "https://simulator.launch.io", "https://example.com/sale",
		"https://sale.launchprovider.io:8443/x", "https://[::1]/x"} {
		t.Run(u, func(t *testing.T) {
			f := newFixture(t, func(s *Sale, _ *EnvConfig) { s.ProviderURL = u })
			f.verify(t, true)
			in, err := f.svc.CreateAccessIntent(context.Background(), f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
			if err != nil {
				t.Fatal(err)
			}
			if in.Status != IntentIneligible || in.HandoffURL != "" || !slices.Contains(in.Reasons, ReasonProviderURLNotCanonical) {
				t.Errorf("intent = %+v", in)
			}
		})
	}
}

func TestAccessIntentHandoff(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	f.verify(t, true)
	in, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != IntentEligible || len(in.Reasons) != 0 || in.Jurisdiction != "DE" || in.HandoffExpiresAt == nil {
		t.Fatalf("intent = %+v, want ELIGIBLE", in)
	}
	if want := epoch.Add(DefaultHandoffTTL); !in.HandoffExpiresAt.Equal(want) {
		t.Errorf("handoff expires %v, want %v", in.HandoffExpiresAt, want)
	}
	u, err := url.Parse(in.HandoffURL)
	if err != nil || u.Scheme != "https" || u.Host != "sale.launchprovider.io" || u.Path != "/buy" {
		t.Fatalf("handoff URL %q", in.HandoffURL)
	}
	token := u.Query().Get("handoff")
	h, err := f.svc.VerifyHandoff(token)
	if err != nil {
		t.Fatalf("VerifyHandoff() = %v", err)
	}
	if h.IntentID != in.ID || h.SaleID != "presale-1" || h.Environment != access.Live || !h.ExpiresAt.Equal(*in.HandoffExpiresAt) {
		t.Errorf("handoff = %+v", h)
	}
	tampered := strings.Replace(token, token[:4], "AAAA", 1)
	if _, err := f.svc.VerifyHandoff(tampered); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("tampered token = %v, want INVALID_INPUT", err)
	}
	other, _ := New(Config{Environments: map[access.Environment]EnvConfig{}, HandoffKey: []byte(strings.Repeat("z", 32)),
		Clock: clockFunc(func() time.Time { return f.now })})
	if _, err := other.VerifyHandoff(token); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("token under another key = %v, want INVALID_INPUT", err)
	}
	f.now = epoch.Add(DefaultHandoffTTL)
	if _, err := f.svc.VerifyHandoff(token); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("expired token = %v, want INVALID_INPUT", err)
	}

	// The stored intent shows the expiry but never the URL, and only to
	// its own user.
	got, err := f.svc.AccessIntent(ctx, f.st, user("usr_1"), in.ID)
	if err != nil || got.HandoffURL != "" || got.HandoffExpiresAt == nil || got.Status != IntentEligible {
		t.Errorf("AccessIntent() = %+v, %v", got, err)
	}
	if _, err := f.svc.AccessIntent(ctx, f.st, user("usr_2"), in.ID); !fault.Is(err, fault.NotFound) {
		t.Errorf("another user's intent = %v, want NOT_FOUND", err)
	}
	key := user("usr_1")
	key.Kind, key.KeyID = access.CredentialAPIKey, "key_1"
	if _, err := f.svc.AccessIntent(ctx, f.st, key, in.ID); !fault.Is(err, fault.AccessDenied) {
		t.Errorf("API key = %v, want ACCESS_DENIED", err)
	}
	if _, err := f.svc.AccessIntent(ctx, f.st, nil, in.ID); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("anonymous = %v, want UNAUTHENTICATED", err)
	}
}

func TestHandoffNeverOutlivesWindow(t *testing.T) {
	f := newFixture(t, nil)
	f.verify(t, true)
	f.now = epoch.Add(24*time.Hour - time.Minute)
	in, err := f.svc.CreateAccessIntent(context.Background(), f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
	if err != nil || in.Status != IntentEligible {
		t.Fatalf("intent = %+v, %v", in, err)
	}
	if !in.HandoffExpiresAt.Equal(epoch.Add(24 * time.Hour)) {
		t.Errorf("handoff expires %v, want the window's close", in.HandoffExpiresAt)
	}
}

func TestJurisdictionFixedAfterFirstDeclaration(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	f.verify(t, true)
	first, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
	if err != nil || first.Jurisdiction != "DE" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	_, err = f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "FR"})
	var fe *fault.Error
	if !fault.Is(err, fault.Conflict) || !errors.As(err, &fe) {
		t.Fatalf("changing jurisdiction = %v, want CONFLICT", err)
	}
	if code, _, details := fault.Public(err); details["reason"] != "JURISDICTION_ALREADY_DECLARED" || details["declared"] != "DE" {
		t.Errorf("conflict %s details = %v", code, details)
	}
	again, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{})
	if err != nil || again.Jurisdiction != "DE" || again.Status != IntentEligible {
		t.Errorf("omitted jurisdiction = %+v, %v, want the declared DE", again, err)
	}
	same, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_1"), "presale-1", IntentRequest{Jurisdiction: "DE"})
	if err != nil || same.Jurisdiction != "DE" {
		t.Errorf("same jurisdiction = %+v, %v", same, err)
	}
	if _, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_2"), "presale-1", IntentRequest{Jurisdiction: "de"}); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("lower-case jurisdiction = %v, want INVALID_INPUT", err)
	}
	if _, err := f.svc.CreateAccessIntent(ctx, f.st, user("usr_2"), "nope", IntentRequest{Jurisdiction: "DE"}); !fault.Is(err, fault.NotFound) {
		t.Errorf("unknown sale = %v, want NOT_FOUND", err)
	}
	if _, err := f.st.Jurisdiction(ctx, "usr_2"); !fault.Is(err, fault.NotFound) {
		t.Errorf("failed requests declared a jurisdiction: %v", err)
	}
}

// clockFunc adapts a function to the Clock shape, for tests.
type clockFunc func() time.Time

// Now calls f.
func (f clockFunc) Now() time.Time { return f() }
