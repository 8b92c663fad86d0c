package api

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/token/sale"
)

// SaleStatement is one disclosure statement.
type SaleStatement struct {
	// Code is the statement's stable identifier.
	Code string `json:"code" example:"PRICE_MAY_FALL"`
	// Text is the statement, as clients must show it.
	Text string `json:"text" example:"Token prices can fall, including to zero."`
}

// SaleDisclosure is the disclosure every sale projection embeds: its
// version, an optional link, and the statements clients must keep
// visible (prices can fall, liquidity can disappear, listings are not
// guaranteed, participation may be restricted by jurisdiction).
type SaleDisclosure struct {
	// Version is the disclosure's version.
	Version string `json:"version" example:"2026-01"`
	// URL links the full disclosure; null when none is published.
	URL *string `json:"url" example:"https://platform.io/legal/token-sale-disclosure"`
	// Statements are the statements clients must keep visible.
	Statements []SaleStatement `json:"statements"`
}

// SaleDisclosureView answers GET /api/v1/token-sales/{saleId}/disclosures.
type SaleDisclosureView struct {
	// SaleID is the sale's id.
	SaleID string `json:"saleId" example:"presale-2026"`
	SaleDisclosure
}

// SaleWindow is a sale's open window, shown once the sale is past PLANNED.
type SaleWindow struct {
	// OpensAt is when the sale opens.
	OpensAt time.Time `json:"opensAt"`
	// ClosesAt is when the sale closes.
	ClosesAt time.Time `json:"closesAt"`
}

// SaleView is a sale projection. Planning values (the allocation envelope,
// prices, the target window) are never funded, open or executable; status
// is the configured status capped by verification evidence.
type SaleView struct {
	// SaleID is the sale's id (lowercase letters, digits and hyphens).
	SaleID string `json:"saleId" example:"presale-2026"`
	// Object is always "token_sale".
	Object string `json:"object" example:"token_sale"`
	// Stage is the sale's stage, such as PRE_SALE.
	Stage string `json:"stage" example:"PRE_SALE"`
	// Status is the configured status capped by verification evidence: a sale is never shown past
	// what a verification run proved.
	Status string `json:"status" example:"PLANNED" enum:"PLANNED,VERIFIED,ANNOUNCED,OPEN,CLOSED"`
	// TargetWindow is the planning window as text, such as 2026-Q3; not a commitment.
	TargetWindow string `json:"targetWindow" example:"2026-Q3"`
	// Window is the sale's open window; null while the sale is PLANNED.
	Window *SaleWindow `json:"window"`
	// Provider is the chosen sale provider's name; null while none is chosen.
	Provider *string `json:"provider" example:"Launch Provider"`
	// ProviderCandidates are the providers under evaluation.
	ProviderCandidates []string `json:"providerCandidates" example:"Launch Provider"`
	// AllocationMinAtomic and AllocationMaxAtomic are a planning envelope
	// in 9-decimal atomic units, not funded or claimable inventory.
	AllocationMinAtomic string `json:"allocationMinAtomic" example:"1000000000000000"`
	// AllocationMaxAtomic is the upper end of the planning envelope, in 9-decimal atomic units (an
	// integer string).
	AllocationMaxAtomic string `json:"allocationMaxAtomic" example:"5000000000000000"`
	// PresalePriceUSD is the planned presale price in USD, a decimal string; never an offer.
	PresalePriceUSD string `json:"presalePriceUsd" example:"0.010"`
	// InitialDexReferenceUSD is the planned initial DEX reference price in USD, a decimal string;
	// never a promise.
	InitialDexReferenceUSD string `json:"initialDexReferenceUsd" example:"0.015"`
	// ProductionMint is the token's mint (base58); null until it is deployed.
	ProductionMint *string `json:"productionMint" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// UpdatedAt is when the sale's configuration last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// Disclosure is the disclosure clients must keep visible.
	Disclosure SaleDisclosure `json:"disclosure"`
}

// SaleProviderFact separates the configured provider from its verification.
type SaleProviderFact struct {
	// Configured is true when a provider is chosen in the configuration.
	Configured bool `json:"configured" example:"true"`
	// Verified is true when the latest run verified the provider; false without evidence.
	Verified bool `json:"verified" example:"false"`
	// Reason says why verified is false; null when true.
	Reason *string `json:"reason" example:"no provider attestation source"`
}

// SaleAddressFact is a configured address and whether a run verified it.
type SaleAddressFact struct {
	// Address is the configured address (base58); null when none is configured.
	Address *string `json:"address" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// Verified is true when the latest run verified the address on the chain.
	Verified bool `json:"verified" example:"false"`
	// Reason says why verified is false; null when true.
	Reason *string `json:"reason" example:"no verification run recorded"`
}

// SaleInventoryFact is the inventory evidence of the latest run.
type SaleInventoryFact struct {
	// Funded is true when the latest run found the sale inventory account funded.
	Funded bool `json:"funded" example:"false"`
	// FundedReason says why funded is false; null when true.
	FundedReason *string `json:"fundedReason" example:"no verification run recorded"`
	// Reconciled is true when the latest run found the inventory exactly as expected.
	Reconciled bool `json:"reconciled" example:"false"`
	// ReconciledReason says why reconciled is false; null when true.
	ReconciledReason *string `json:"reconciledReason" example:"no verification run recorded"`
}

// SaleTermsFact is the configured terms.
type SaleTermsFact struct {
	// Published is true when the sale's terms are published.
	Published bool `json:"published" example:"false"`
	// Version is the published terms' version; null when none.
	Version *string `json:"version" example:"terms-2026-01"`
	// Reason says why published is false; null when true.
	Reason *string `json:"reason" example:"terms not published"`
}

// SaleFact is a verified flag with the reason it is false.
type SaleFact struct {
	// Verified is true when the latest run supplied evidence.
	Verified bool `json:"verified" example:"false"`
	// Reason says why verified is false; null when true.
	Reason *string `json:"reason" example:"no verification run recorded"`
}

// SaleRunRef is the verification run a projection rests on.
type SaleRunRef struct {
	// ID is the verification run's id.
	ID string `json:"id" example:"srun_01jd0000000000000000000000"`
	// Outcome is the run's outcome: every check passed, one failed, or the run could not finish.
	Outcome string `json:"outcome" example:"FAILED" enum:"PASSED,FAILED,ERROR"`
	// Slot is the chain slot the run read at; null when it read nothing.
	Slot *uint64 `json:"slot" example:"312000000"`
	// FinishedAt is when the run finished.
	FinishedAt time.Time `json:"finishedAt"`
}

// SaleVerificationView answers GET /api/v1/token-sales/{saleId}/verification:
// configuration beside proof. Every verified, funded, reconciled and
// activationAllowed flag is false, with a reason, unless the latest run of
// the current configuration supplied evidence.
type SaleVerificationView struct {
	// SaleID is the sale's id.
	SaleID string `json:"saleId" example:"presale-2026"`
	// Provider is the sale provider's configuration and verification.
	Provider SaleProviderFact `json:"provider"`
	// SaleContract is the sale contract account and whether a run verified it.
	SaleContract SaleAddressFact `json:"saleContract"`
	// ProductionMint is the token's mint and whether a run verified it.
	ProductionMint SaleAddressFact `json:"productionMint"`
	// Inventory is the sale inventory's evidence.
	Inventory SaleInventoryFact `json:"inventory"`
	// Terms is the sale terms' publication.
	Terms SaleTermsFact `json:"terms"`
	// Liquidity is whether liquidity was verified.
	Liquidity SaleFact `json:"liquidity"`
	// ActivationAllowed is true only when every check of the latest run of the current
	// configuration passed.
	ActivationAllowed bool `json:"activationAllowed" example:"false"`
	// ActivationReason says why activationAllowed is false; null when true.
	ActivationReason *string `json:"activationReason" example:"no verification run recorded"`
	// Run is the latest verification run of the current configuration; null when none ran.
	Run *SaleRunRef `json:"run"`
}

// SaleVenue is a listed market venue: a pool carries address, an
// aggregator routeAvailable; an aggregator is never a pool.
type SaleVenue struct {
	// Venue is the venue's display name.
	Venue string `json:"venue" example:"Aggregator"`
	// Kind is POOL (a liquidity pool account) or AGGREGATOR (a router).
	Kind string `json:"kind" example:"AGGREGATOR" enum:"POOL,AGGREGATOR"`
	// Status is the venue's configured status, such as PLANNED.
	Status string `json:"status" example:"PLANNED"`
	// Address is a pool's account (base58); absent for an aggregator.
	Address *string `json:"address,omitempty" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// RouteAvailable is whether an aggregator routes the token; absent for a pool.
	RouteAvailable *bool `json:"routeAvailable,omitempty" example:"false"`
}

// SaleListing is an exchange listing's status; verified stays false
// without evidence, and a marketing field never implies a listing.
type SaleListing struct {
	// Status is the listing's configured status; TBA when none is configured.
	Status string `json:"status" example:"TBA"`
	// Verified is true only with listing evidence; a configured status never implies a listing.
	Verified bool `json:"verified" example:"false"`
	// Reason says why verified is false; null when true.
	Reason *string `json:"reason" example:"no listing evidence source"`
}

// SaleMarketsView answers GET /api/v1/token-sales/{saleId}/markets:
// approved, verified observations only.
type SaleMarketsView struct {
	// SaleID is the sale's id.
	SaleID string `json:"saleId" example:"presale-2026"`
	// LaunchReferenceUSD is the launch reference price in USD, a decimal string; null when none is
	// configured.
	LaunchReferenceUSD *string `json:"launchReferenceUsd" example:"0.015"`
	// LaunchReferenceStatus is the launch reference's status, such as PLANNED.
	LaunchReferenceStatus string `json:"launchReferenceStatus" example:"PLANNED"`
	// Venues are the approved market venues.
	Venues []SaleVenue `json:"venues"`
	// ExchangeA is exchange A's listing status.
	ExchangeA SaleListing `json:"exchangeA"`
	// ExchangeAAlpha is exchange A's alpha market listing status.
	ExchangeAAlpha SaleListing `json:"exchangeAAlpha"`
}

// AccessIntentRequest is the body of POST .../access-intents. The body
// may be empty once the account declared its jurisdiction.
type AccessIntentRequest struct {
	// Jurisdiction is an upper-case ISO 3166-1 alpha-2 code. The first one
	// an account sends is recorded and cannot be changed here.
	Jurisdiction string `json:"jurisdiction,omitempty" example:"DE"`
}

// SaleHandoff is the short-lived link to the sale provider.
type SaleHandoff struct {
	// URL is the provider URL with a signed, expiring, single-purpose
	// token; only the POST answer carries it, a GET shows null.
	URL *string `json:"url" example:"https://sale.provider.io/buy?handoff=REPLACE_WITH_TOKEN"`
	// ExpiresAt is when the handoff link stops working.
	ExpiresAt time.Time `json:"expiresAt"`
}

// AccessIntentView is an evaluated access intent. No custody: the platform
// records eligibility and, when every check passes, hands over to the
// provider.
type AccessIntentView struct {
	// ID is the access intent's id.
	ID string `json:"id" example:"sai_01jd0000000000000000000000"`
	// Object is always "token_sale_access_intent".
	Object string `json:"object" example:"token_sale_access_intent"`
	// SaleID is the sale the intent is for.
	SaleID string `json:"saleId" example:"presale-2026"`
	// Environment is the environment (test or live) of the intent.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Status is ELIGIBLE when every check passed, else INELIGIBLE.
	Status string `json:"status" example:"INELIGIBLE" enum:"ELIGIBLE,INELIGIBLE"`
	// Reasons are the codes of the checks that failed; empty when eligible.
	Reasons []string `json:"reasons" example:"SALE_NOT_VERIFIED"`
	// Jurisdiction is the account's declared jurisdiction (ISO 3166-1 alpha-2); null when none was
	// declared.
	Jurisdiction *string `json:"jurisdiction" example:"DE"`
	// Handoff is the link to the sale provider when eligible; null otherwise.
	Handoff *SaleHandoff `json:"handoff"`
	// CreatedAt is when the intent was evaluated.
	CreatedAt time.Time `json:"createdAt"`
}

// reasonIf returns the reason only when the flag is false.
func reasonIf(ok bool, reason string) *string {
	if ok {
		return nil
	}
	return optional(reason)
}

func saleDisclosure(d sale.DisclosureDoc) SaleDisclosure {
	out := SaleDisclosure{Version: d.Version, URL: optional(d.URL), Statements: []SaleStatement{}}
	for _, s := range d.Statements {
		out.Statements = append(out.Statements, SaleStatement{Code: s.Code, Text: s.Text})
	}
	return out
}

func saleView(p sale.Projection) SaleView {
	v := SaleView{SaleID: p.SaleID, Object: "token_sale", Stage: p.Stage, Status: string(p.Status), TargetWindow: p.TargetWindow,
		Provider: optional(p.Provider), ProviderCandidates: append([]string{}, p.ProviderCandidates...),
		AllocationMinAtomic: p.AllocationMinAtomic, AllocationMaxAtomic: p.AllocationMaxAtomic, PresalePriceUSD: p.PresalePriceUSD,
		InitialDexReferenceUSD: p.InitialDexReferenceUSD, ProductionMint: optional(p.ProductionMint), UpdatedAt: p.UpdatedAt,
		Disclosure: saleDisclosure(p.Disclosure)}
	if p.Window != nil {
		v.Window = &SaleWindow{OpensAt: p.Window.Opens, ClosesAt: p.Window.Closes}
	}
	return v
}

func saleVerificationView(x sale.Verification) SaleVerificationView {
	v := SaleVerificationView{SaleID: x.SaleID,
		Provider: SaleProviderFact{Configured: x.Provider.Configured, Verified: x.Provider.Verified,
			Reason: reasonIf(x.Provider.Verified, x.Provider.Reason)},
		SaleContract: SaleAddressFact{Address: optional(x.SaleContract.Address), Verified: x.SaleContract.Verified,
			Reason: reasonIf(x.SaleContract.Verified, x.SaleContract.Reason)},
		ProductionMint: SaleAddressFact{Address: optional(x.ProductionMint.Address), Verified: x.ProductionMint.Verified,
			Reason: reasonIf(x.ProductionMint.Verified, x.ProductionMint.Reason)},
		Inventory: SaleInventoryFact{Funded: x.Inventory.Funded, FundedReason: reasonIf(x.Inventory.Funded, x.Inventory.FundedReason),
			Reconciled: x.Inventory.Reconciled, ReconciledReason: reasonIf(x.Inventory.Reconciled, x.Inventory.ReconciledReason)},
		Terms: SaleTermsFact{Published: x.Terms.Published, Version: optional(x.Terms.Version),
			Reason: reasonIf(x.Terms.Published, x.Terms.Reason)},
		Liquidity:         SaleFact{Verified: x.Liquidity.Verified, Reason: reasonIf(x.Liquidity.Verified, x.Liquidity.Reason)},
		ActivationAllowed: x.ActivationAllowed, ActivationReason: reasonIf(x.ActivationAllowed, x.ActivationReason)}
	if r := x.Run; r != nil {
		v.Run = &SaleRunRef{ID: r.ID, Outcome: string(r.Outcome), Slot: r.Slot, FinishedAt: r.FinishedAt}
	}
	return v
}

func saleListing(l sale.ListingFact) SaleListing {
	return SaleListing{Status: l.Status, Verified: l.Verified, Reason: reasonIf(l.Verified, l.Reason)}
}

func saleMarketsView(m sale.Markets) SaleMarketsView {
	v := SaleMarketsView{SaleID: m.SaleID, LaunchReferenceUSD: optional(m.LaunchReferenceUSD), LaunchReferenceStatus: m.LaunchReferenceStatus,
		Venues: []SaleVenue{}, ExchangeA: saleListing(m.ExchangeA), ExchangeAAlpha: saleListing(m.ExchangeAAlpha)}
	for _, x := range m.Venues {
		sv := SaleVenue{Venue: x.Name, Kind: string(x.Kind), Status: x.Status}
		if x.Kind == sale.VenuePool {
			sv.Address = optional(x.Address)
		} else {
			route := x.RouteAvailable
			sv.RouteAvailable = &route
		}
		v.Venues = append(v.Venues, sv)
	}
	return v
}

func accessIntentView(in sale.AccessIntent) AccessIntentView {
	v := AccessIntentView{ID: in.ID, Object: "token_sale_access_intent", SaleID: in.SaleID, Environment: string(in.Environment),
		Status: string(in.Status), Reasons: []string{}, Jurisdiction: optional(in.Jurisdiction), CreatedAt: in.CreatedAt}
	for _, r := range in.Reasons {
		v.Reasons = append(v.Reasons, string(r))
	}
	if in.HandoffExpiresAt != nil {
		v.Handoff = &SaleHandoff{URL: optional(in.HandoffURL), ExpiresAt: *in.HandoffExpiresAt}
	}
	return v
}

// saleViaPattern is the one mux pattern that serves the three sale views
// beside the literal access-intent route (design.md, Router note).
const saleViaPattern = "/api/v1/token-sales/{saleId}/{view}"

func exampleSaleDisclosure() SaleDisclosure {
	url := "https://platform.io/legal/token-sale-disclosure"
	d := SaleDisclosure{Version: "2026-01", URL: &url}
	for _, s := range sale.RequiredStatements() {
		d.Statements = append(d.Statements, SaleStatement{Code: s.Code, Text: s.Text})
	}
	return d
}

// saleRoutes are the token sale routes (spec, Endpoints: Token sale). The
// five reads are public with optional authentication (Route.OptionalAuth):
// an anonymous caller sees the Live environment's sales, a caller with an
// API key, access token or session its own environment's; reads never call
// the chain (projections come from
// configuration and the latest stored verification run). The three views
// share one mux pattern through Via; access-intents is a reserved sale id.
// The two access-intent routes need a signed-in user (session cookie or
// access token; an API key is refused).
func saleRoutes(svc *sale.Service) []Route {
	if svc == nil {
		return nil
	}
	public := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.OptionalAuth, r.Idempotency = http.MethodGet, transport.TagTokenSale, transport.AuthPublic, true, transport.IdempotencyNone
		return r
	}
	view := func(r Route) Route {
		r = public(r)
		r.Via = saleViaPattern
		r.Errors = []string{string(fault.NotFound)}
		return r
	}
	signedIn := func(r Route) Route {
		r.Tag, r.Auth, r.SignedIn, r.Private = transport.TagTokenSale, transport.AuthSession, true, true
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	provider, mint := "Launch Provider", "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
	exSale := SaleView{SaleID: "presale-2026", Object: "token_sale", Stage: "PRE_SALE", Status: "PLANNED", TargetWindow: "2026-Q3",
		Provider: &provider, ProviderCandidates: []string{"Launch Provider"}, AllocationMinAtomic: "1000000000000000",
		AllocationMaxAtomic: "5000000000000000", PresalePriceUSD: "0.010", InitialDexReferenceUSD: "0.015", UpdatedAt: t,
		Disclosure: exampleSaleDisclosure()}
	noRun := "no verification run recorded"
	exVerification := SaleVerificationView{SaleID: "presale-2026",
		Provider:       SaleProviderFact{Configured: true, Reason: optional("no provider attestation source")},
		SaleContract:   SaleAddressFact{Reason: &noRun},
		ProductionMint: SaleAddressFact{Address: &mint, Reason: &noRun},
		Inventory:      SaleInventoryFact{FundedReason: &noRun, ReconciledReason: &noRun},
		Terms:          SaleTermsFact{Reason: optional("terms not published")},
		Liquidity:      SaleFact{Reason: &noRun}, ActivationReason: &noRun}
	noRoute := false
	exMarkets := SaleMarketsView{SaleID: "presale-2026", LaunchReferenceUSD: optional("0.015"), LaunchReferenceStatus: "PLANNED",
		Venues:         []SaleVenue{{Venue: "Aggregator", Kind: "AGGREGATOR", Status: "PLANNED", RouteAvailable: &noRoute}},
		ExchangeA:      SaleListing{Status: "TBA", Reason: optional("no listing evidence source")},
		ExchangeAAlpha: SaleListing{Status: "TBA", Reason: optional("no listing evidence source")}}
	jurisdiction := "DE"
	exIntent := AccessIntentView{ID: "sai_01jd0000000000000000000000", Object: "token_sale_access_intent", SaleID: "presale-2026",
		Environment: "live", Status: "INELIGIBLE", Reasons: []string{"SALE_NOT_VERIFIED", "SALE_NOT_OPEN"}, Jurisdiction: &jurisdiction,
		CreatedAt: t}
	return []Route{
		public(Route{Pattern: "/api/v1/token-sales/current", OperationID: "getCurrentTokenSale",
			Summary: "Get the current token sale",
			Description: "The projection of the sale the platform publishes as current, or data null when no sale is publishable. " +
				"Anonymous callers see the live environment. status is the configured status capped by evidence: a sale is OPEN only " +
				"while a verification run allowed activation and the time is inside its window, otherwise PLANNED (unverified), " +
				"ANNOUNCED (before the window) or CLOSED (after it). The allocation envelope and prices are planning values, never " +
				"funded, open or executable. Every projection embeds the current disclosure with its risk statements.",
			Response: (*SaleView)(nil),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := svc.Current(ctx, c.Tx, callerEnvironment(c))
				if err != nil || p == nil {
					return nil, err
				}
				return saleView(*p), nil
			}}),
		public(Route{Pattern: "/api/v1/token-sales/{saleId}", OperationID: "getTokenSale",
			Summary: "Get a token sale", Description: "The projection of a configured sale (see getCurrentTokenSale). An unknown sale is 404.",
			Response: exSale, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := svc.Get(ctx, c.Tx, callerEnvironment(c), c.PathValue("saleId"))
				if err != nil {
					return nil, err
				}
				return saleView(p), nil
			}}),
		view(Route{Pattern: "/api/v1/token-sales/{saleId}/disclosures", OperationID: "getTokenSaleDisclosures",
			Summary: "Get a token sale's disclosures",
			Description: "The current disclosure version, its link and its statements: prices can fall, liquidity can disappear, " +
				"listings are not guaranteed and participation may be restricted by jurisdiction, then any configured statements.",
			Response: SaleDisclosureView{SaleID: "presale-2026", SaleDisclosure: exampleSaleDisclosure()},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				d, err := svc.Disclosures(callerEnvironment(c), c.PathValue("saleId"))
				if err != nil {
					return nil, err
				}
				return SaleDisclosureView{SaleID: d.SaleID, SaleDisclosure: saleDisclosure(d)}, nil
			}}),
		view(Route{Pattern: "/api/v1/token-sales/{saleId}/verification", OperationID: "getTokenSaleVerification",
			Summary: "Get a token sale's verification",
			Description: "Configuration beside proof. Configuration sets provider.configured, the addresses and the terms; every " +
				"verified, funded, reconciled and activationAllowed flag is false, with a reason, unless the latest verification run of " +
				"the current configuration read the evidence on chain at finalized commitment (sale contract owned by its program, " +
				"inventory of the production mint at least allocationMaxAtomic (funded) and exactly the expected inventory " +
				"(reconciled), pools owned by their programs) or the token registry verified the production mint. provider.verified " +
				"stays false: there is no provider attestation source. A run that could not read the chain verifies nothing.",
			Response: exVerification,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				v, err := svc.Verification(ctx, c.Tx, callerEnvironment(c), c.PathValue("saleId"))
				if err != nil {
					return nil, err
				}
				return saleVerificationView(v), nil
			}}),
		view(Route{Pattern: "/api/v1/token-sales/{saleId}/markets", OperationID: "getTokenSaleMarkets",
			Summary: "Get a token sale's markets",
			Description: "Approved, verified observations only: approved aggregators (kind AGGREGATOR, with routeAvailable, never " +
				"classed as a pool) and approved pools (kind POOL, with address) whose accounts the latest verification run found owned " +
				"by their programs. exchangeA and exchangeAAlpha carry their status (TBA by default) and verified false with a reason: " +
				"no listing evidence source is wired, and a listing is never implied.",
			Response: exMarkets,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				m, err := svc.Markets(ctx, c.Tx, callerEnvironment(c), c.PathValue("saleId"))
				if err != nil {
					return nil, err
				}
				return saleMarketsView(m), nil
			}}),
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/token-sales/{saleId}/access-intents",
			OperationID: "createTokenSaleAccessIntent", Status: http.StatusCreated, Idempotency: transport.IdempotencyOptional, SealResponse: true,
			Summary: "Create a token sale access intent",
			Description: "Evaluates the signed-in user's access to the sale without custody and records the intent in the caller's " +
				"environment. The body's jurisdiction (ISO 3166-1 alpha-2, upper case) is recorded on the account on the first request " +
				"and may be omitted afterwards; a different one is 409 CONFLICT with details.reason JURISDICTION_ALREADY_DECLARED. " +
				"status is ELIGIBLE only when the sale is verified and OPEN, the time is inside its window, the jurisdiction is allowed " +
				"and not blocked, the email is verified and the provider URL is canonical; otherwise INELIGIBLE with reasons " +
				"(SALE_NOT_VERIFIED, SALE_NOT_OPEN, OUTSIDE_WINDOW, JURISDICTION_UNDECLARED, JURISDICTION_BLOCKED, " +
				"JURISDICTION_NOT_ALLOWED, EMAIL_NOT_VERIFIED, ACCOUNT_NOT_IN_TENANT, PROVIDER_URL_NOT_CANONICAL). An eligible intent " +
				"carries handoff.url, the provider URL with a signed single-purpose token valid about ten minutes; it is returned only " +
				"here (a replay with the same Idempotency-Key returns it from a sealed record) and never stored. A mock or simulator " +
				"provider URL is never returned as a live link.",
			Request: AccessIntentRequest{Jurisdiction: "DE"}, Response: exIntent,
			Errors: []string{string(fault.NotFound), string(fault.Conflict), string(fault.InvalidInput)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AccessIntentRequest
				if len(bytes.TrimSpace(c.Body())) > 0 {
					if err := c.Decode(&in); err != nil {
						return nil, err
					}
				}
				x, err := svc.CreateAccessIntent(ctx, c.Tx, c.Principal, c.PathValue("saleId"), sale.IntentRequest{Jurisdiction: in.Jurisdiction})
				if err != nil {
					return nil, err
				}
				return accessIntentView(x), nil
			}}),
		signedIn(Route{Method: http.MethodGet, Pattern: "/api/v1/token-sales/access-intents/{accessIntentId}",
			OperationID: "getTokenSaleAccessIntent", Idempotency: transport.IdempotencyNone,
			Summary: "Get a token sale access intent",
			Description: "The caller's own access intent in the caller's environment; another user's is 404. handoff.url is null " +
				"here: the link is a bearer credential returned only by the create call; handoff.expiresAt says how long it lived.",
			Response: exIntent, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				x, err := svc.AccessIntent(ctx, c.Tx, c.Principal, c.PathValue("accessIntentId"))
				if err != nil {
					return nil, err
				}
				return accessIntentView(x), nil
			}}),
	}
}
