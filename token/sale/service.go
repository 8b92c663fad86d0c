package sale

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Store is the port the service reads and writes through, bound to one
// unit of work (or the read pool for reads). Package store implements it.
type Store interface {
	// NewID returns a fresh id with prefix.
	NewID(prefix string) string
	// SaleRunInsert stores a verification run.
	SaleRunInsert(ctx context.Context, r Run) error
	// SaleRunLatest returns the newest run of saleID in env (by finish
	// time, then id); NOT_FOUND when none.
	SaleRunLatest(ctx context.Context, env access.Environment, saleID string) (Run, error)
	// AccessIntentInsert stores an access intent (never its handoff URL).
	AccessIntentInsert(ctx context.Context, in AccessIntent) error
	// AccessIntentGet returns the intent id of userID in env; NOT_FOUND
	// for another user's or environment's intent.
	AccessIntentGet(ctx context.Context, env access.Environment, userID, id string) (AccessIntent, error)
	// Jurisdiction returns the jurisdiction userID declared; NOT_FOUND
	// when none.
	Jurisdiction(ctx context.Context, userID string) (string, error)
	// DeclareJurisdiction records code for userID unless one is recorded
	// (first write wins, safe under concurrency) and returns the recorded
	// code.
	DeclareJurisdiction(ctx context.Context, userID, code string, at time.Time) (string, error)
	// SaleAccount returns the account state of userID as seen from
	// tenantID.
	SaleAccount(ctx context.Context, tenantID, userID string) (Account, error)
}

// Account is the account state an access intent is evaluated against.
type Account struct {
	// InTenant reports that the user belongs to the session's tenant.
	InTenant bool
	// EmailVerified reports that the user verified their email address.
	EmailVerified bool
}

// Service projects configured sales and records access intents. It is
// safe for concurrent use.
type Service struct {
	cfg Config
	// hashes identify each environment's configuration as given, before
	// defaults were filled in (ConfigHash).
	hashes map[access.Environment]string
}

// New validates cfg (sale ids, statuses, windows, amounts, addresses,
// URLs, jurisdiction codes, the handoff key) and returns a Service.
func New(cfg Config) (*Service, error) {
	envs := make(map[access.Environment]EnvConfig, len(cfg.Environments))
	hashes := map[access.Environment]string{}
	for env, ec := range cfg.Environments {
		hashes[env] = envHash(ec)
		ec.Sales = slices.Clone(ec.Sales)
		for i := range ec.Sales {
			ec.Sales[i].Venues = slices.Clone(ec.Sales[i].Venues)
		}
		envs[env] = ec
	}
	cfg.Environments = envs
	cfg.HandoffKey = slices.Clone(cfg.HandoffKey)
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sale: invalid configuration: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.HandoffTTL == 0 {
		cfg.HandoffTTL = DefaultHandoffTTL
	}
	return &Service{cfg: cfg, hashes: hashes}, nil
}

// ConfigHash identifies env's sale configuration as it was given to New,
// its chain client aside: a changed configuration has another hash.
func (s *Service) ConfigHash(env access.Environment) string {
	if h, ok := s.hashes[env]; ok {
		return h
	}
	return envHash(EnvConfig{})
}

// envHash is the first 8 bytes, in hex, of the SHA-256 of ec's JSON
// without its chain client; "unhashable" when it cannot be encoded.
func envHash(ec EnvConfig) string {
	ec.Chain = nil
	b, err := json.Marshal(ec)
	if err != nil {
		return "unhashable"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// now is the clock's time in UTC, truncated to microseconds (the store's
// precision).
func (s *Service) now() time.Time { return s.cfg.Clock.Now().UTC().Truncate(time.Microsecond) }

// sale returns the configuration of saleID in env; NOT_FOUND otherwise.
func (s *Service) sale(env access.Environment, saleID string) (EnvConfig, Sale, error) {
	ec := s.cfg.Environments[env]
	for _, sl := range ec.Sales {
		if sl.ID == saleID {
			return ec, sl, nil
		}
	}
	return ec, Sale{}, fault.E("sale.lookup", fault.NotFound, "No such token sale.").With("saleId", saleID)
}

// latestRun returns the newest run of sl in env when it checked the
// current configuration, or nil and the reason nothing is verified.
func (s *Service) latestRun(ctx context.Context, st Store, env access.Environment, sl Sale) (*Run, string, error) {
	r, err := st.SaleRunLatest(ctx, env, sl.ID)
	if fault.Is(err, fault.NotFound) {
		return nil, "no verification run recorded", nil
	}
	if err != nil {
		return nil, "", fault.Wrap("sale.latestRun", err)
	}
	if r.ConfigHash != configHash(sl) {
		return nil, "verification run predates the current configuration", nil
	}
	return &r, "", nil
}

// projectStatus is the configured status capped by evidence, walked
// through the state table from PLANNED (see the package doc).
func projectStatus(sl Sale, run *Run, now time.Time) Status {
	if sl.Status == StatusPlanned || run == nil || !run.ActivationAllowed {
		return StatusPlanned
	}
	st := StatusPlanned
	step := func(e Event) {
		if to, err := Transition(st, e); err == nil {
			st = to
		}
	}
	step(EventVerify)
	step(EventAnnounce)
	if sl.Window != nil && !now.Before(sl.Window.Closes) {
		step(EventClose)
		return st
	}
	if sl.Status == StatusOpen && sl.Window.contains(now) {
		step(EventOpen)
	}
	return st
}

// DisclosureDoc is the disclosure a projection embeds: the required risk
// statements first, then the configured ones.
type DisclosureDoc struct {
	SaleID     string
	Version    string
	URL        string
	Statements []Statement
}

// disclosure returns the environment's disclosure for saleID.
func disclosure(ec EnvConfig, saleID string) DisclosureDoc {
	return DisclosureDoc{SaleID: saleID, Version: ec.Disclosure.Version, URL: ec.Disclosure.URL,
		Statements: append(RequiredStatements(), ec.Disclosure.Statements...)}
}

// Projection is a sale's public projection.
type Projection struct {
	SaleID string
	Stage  string
	// Status is the configured status capped by evidence.
	Status       Status
	TargetWindow string
	// Window is the open window, shown only once the sale is past PLANNED.
	Window                 *Window
	Provider               string
	ProviderCandidates     []string
	AllocationMinAtomic    string
	AllocationMaxAtomic    string
	PresalePriceUSD        string
	InitialDexReferenceUSD string
	ProductionMint         string
	UpdatedAt              time.Time
	Disclosure             DisclosureDoc
}

// project builds the projection of sl.
func (s *Service) project(ctx context.Context, st Store, env access.Environment, ec EnvConfig, sl Sale) (Projection, error) {
	run, _, err := s.latestRun(ctx, st, env, sl)
	if err != nil {
		return Projection{}, err
	}
	p := Projection{SaleID: sl.ID, Stage: sl.Stage, Status: projectStatus(sl, run, s.now()), TargetWindow: sl.TargetWindow,
		Provider: sl.Provider, ProviderCandidates: slices.Clone(sl.ProviderCandidates), AllocationMinAtomic: sl.AllocationMinAtomic,
		AllocationMaxAtomic: sl.AllocationMaxAtomic, PresalePriceUSD: sl.PresalePriceUSD, InitialDexReferenceUSD: sl.InitialDexReferenceUSD,
		ProductionMint: sl.ProductionMint, UpdatedAt: sl.UpdatedAt, Disclosure: disclosure(ec, sl.ID)}
	if p.Status != StatusPlanned && sl.Window != nil {
		w := *sl.Window
		p.Window = &w
	}
	return p, nil
}

// Current returns the projection of env's current sale, or nil when no
// sale is publishable.
func (s *Service) Current(ctx context.Context, st Store, env access.Environment) (*Projection, error) {
	ec := s.cfg.Environments[env]
	if ec.Current == "" {
		return nil, nil
	}
	_, sl, err := s.sale(env, ec.Current)
	if err != nil {
		return nil, fault.Wrap("sale.Current", err)
	}
	p, err := s.project(ctx, st, env, ec, sl)
	if err != nil {
		return nil, fault.Wrap("sale.Current", err)
	}
	return &p, nil
}

// Get returns the projection of saleID in env; NOT_FOUND when it is not
// configured there.
func (s *Service) Get(ctx context.Context, st Store, env access.Environment, saleID string) (Projection, error) {
	ec, sl, err := s.sale(env, saleID)
	if err != nil {
		return Projection{}, fault.Wrap("sale.Get", err)
	}
	p, err := s.project(ctx, st, env, ec, sl)
	return p, fault.Wrap("sale.Get", err)
}

// Disclosures returns the disclosure of saleID in env; NOT_FOUND when it
// is not configured there.
func (s *Service) Disclosures(env access.Environment, saleID string) (DisclosureDoc, error) {
	ec, sl, err := s.sale(env, saleID)
	if err != nil {
		return DisclosureDoc{}, fault.Wrap("sale.Disclosures", err)
	}
	return disclosure(ec, sl.ID), nil
}

// Fact is a verified flag with the reason it is false.
type Fact struct {
	Verified bool
	Reason   string
}

// AddressFact is a configured address and whether a run verified it.
type AddressFact struct {
	// Address is "" when not configured.
	Address  string
	Verified bool
	Reason   string
}

// ProviderFact separates the configured provider from its verification.
type ProviderFact struct {
	Configured bool
	Verified   bool
	Reason     string
}

// InventoryFact is the inventory's funded and reconciled evidence.
type InventoryFact struct {
	Funded           bool
	FundedReason     string
	Reconciled       bool
	ReconciledReason string
}

// TermsFact is the configured terms.
type TermsFact struct {
	Published bool
	Version   string
	Reason    string
}

// RunRef summarizes the run a verification projection rests on.
type RunRef struct {
	ID         string
	Outcome    Outcome
	Slot       *uint64
	FinishedAt time.Time
}

// Verification is the verification projection: configuration beside proof.
type Verification struct {
	SaleID            string
	Provider          ProviderFact
	SaleContract      AddressFact
	ProductionMint    AddressFact
	Inventory         InventoryFact
	Terms             TermsFact
	Liquidity         Fact
	ActivationAllowed bool
	ActivationReason  string
	// Run is the newest run of the current configuration; nil when none.
	Run *RunRef
}

// Verification returns the verification projection of saleID in env from
// its configuration and the newest stored run; NOT_FOUND when it is not
// configured there.
func (s *Service) Verification(ctx context.Context, st Store, env access.Environment, saleID string) (Verification, error) {
	const op = "sale.Verification"
	_, sl, err := s.sale(env, saleID)
	if err != nil {
		return Verification{}, fault.Wrap(op, err)
	}
	run, why, err := s.latestRun(ctx, st, env, sl)
	if err != nil {
		return Verification{}, fault.Wrap(op, err)
	}
	fact := func(code CheckCode) (bool, string) {
		if run == nil {
			return false, why
		}
		c, ok := run.check(code)
		if !ok {
			return false, "not checked by the verification run"
		}
		return c.Passed, c.Reason
	}
	v := Verification{SaleID: sl.ID}
	v.Provider.Configured = sl.Provider != "" || sl.ProviderURL != ""
	v.Provider.Reason = "no provider attestation source"
	v.SaleContract.Address = sl.SaleContract
	v.SaleContract.Verified, v.SaleContract.Reason = fact(CheckSaleContract)
	v.ProductionMint.Address = sl.ProductionMint
	v.ProductionMint.Verified, v.ProductionMint.Reason = fact(CheckProductionMint)
	v.Inventory.Funded, v.Inventory.FundedReason = fact(CheckInventoryFunded)
	v.Inventory.Reconciled, v.Inventory.ReconciledReason = fact(CheckInventoryReconciled)
	v.Terms = TermsFact{Published: sl.Terms.Published, Version: sl.Terms.Version}
	if !v.Terms.Published {
		v.Terms.Reason = "terms not published"
	}
	v.Liquidity.Verified, v.Liquidity.Reason = fact(CheckLiquidity)
	v.ActivationAllowed, v.ActivationReason = fact(CheckActivation)
	if run != nil {
		v.ActivationAllowed = v.ActivationAllowed && run.ActivationAllowed
		v.Run = &RunRef{ID: run.ID, Outcome: run.Outcome, Slot: run.Slot, FinishedAt: run.FinishedAt}
	}
	return v, nil
}

// ListingFact is an exchange listing's status and evidence.
type ListingFact struct {
	Status   string
	Verified bool
	Reason   string
}

// MarketVenue is a listed venue. Pools carry Address; aggregators carry
// RouteAvailable.
type MarketVenue struct {
	Name           string
	Kind           VenueKind
	Status         string
	Address        string
	RouteAvailable bool
}

// Markets is the markets projection: approved, verified observations only.
type Markets struct {
	SaleID                string
	LaunchReferenceUSD    string
	LaunchReferenceStatus string
	Venues                []MarketVenue
	ExchangeA             ListingFact
	ExchangeAAlpha        ListingFact
}

// Markets returns the markets projection of saleID in env: approved
// aggregators, and approved pools the newest run of the current
// configuration verified; NOT_FOUND when the sale is not configured there.
func (s *Service) Markets(ctx context.Context, st Store, env access.Environment, saleID string) (Markets, error) {
	const op = "sale.Markets"
	_, sl, err := s.sale(env, saleID)
	if err != nil {
		return Markets{}, fault.Wrap(op, err)
	}
	run, _, err := s.latestRun(ctx, st, env, sl)
	if err != nil {
		return Markets{}, fault.Wrap(op, err)
	}
	const noListingSource = "no listing evidence source"
	m := Markets{SaleID: sl.ID, LaunchReferenceUSD: sl.LaunchReferenceUSD, LaunchReferenceStatus: sl.LaunchReferenceStatus,
		Venues:         []MarketVenue{},
		ExchangeA:      ListingFact{Status: sl.ExchangeA.Status, Reason: noListingSource},
		ExchangeAAlpha: ListingFact{Status: sl.ExchangeAAlpha.Status, Reason: noListingSource}}
	for _, v := range sl.Venues {
		if !v.Approved {
			continue
		}
		switch v.Kind {
		case VenuePool:
			if run.poolVerified(v.Name) {
				m.Venues = append(m.Venues, MarketVenue{Name: v.Name, Kind: VenuePool, Status: v.Status, Address: v.Address})
			}
		case VenueAggregator:
			m.Venues = append(m.Venues, MarketVenue{Name: v.Name, Kind: VenueAggregator, Status: v.Status})
		}
	}
	return m, nil
}
