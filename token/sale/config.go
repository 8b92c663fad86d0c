package sale

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
)

// ReservedID is the sale id the router keeps for the access-intent route
// (/api/v1/token-sales/access-intents/{id}); no sale may use it.
const ReservedID = "access-intents"

// Decimals is the atomic scale of the token's amounts.
const Decimals = 9

// DefaultHandoffTTL is how long a handoff link lives when Config leaves
// HandoffTTL zero.
const DefaultHandoffTTL = 10 * time.Minute

// Config configures a Service.
type Config struct {
	// Environments holds each environment's sales, policy, disclosure and
	// chain client. An environment without an entry has no sale.
	Environments map[access.Environment]EnvConfig
	// Clock is the clock; nil means the wall clock.
	Clock Clock
	// HandoffKey signs handoff tokens (HMAC-SHA256). It must be at least 32
	// bytes when any environment configures a sale.
	HandoffKey []byte
	// HandoffTTL is a handoff link's lifetime; zero means
	// DefaultHandoffTTL. At most one hour.
	HandoffTTL time.Duration
}

// EnvConfig is one environment's sale configuration.
type EnvConfig struct {
	// Sales are the configured sales, each projected by id.
	Sales []Sale
	// Current names the sale GET current projects; "" means no sale is
	// publishable (current is null).
	Current string
	// Jurisdictions is the eligibility policy of access intents.
	Jurisdictions JurisdictionPolicy
	// Disclosure is the current disclosure document every projection embeds.
	Disclosure Disclosure
	// Chain reads the cluster for verification runs; nil means no chain
	// (runs record ERROR "chain not configured").
	Chain ChainClient
}

// JurisdictionPolicy decides which declared jurisdictions may take part.
// It is deny by default: a jurisdiction must be in Allowed and not in
// Blocked. Codes are ISO 3166-1 alpha-2, upper case.
type JurisdictionPolicy struct {
	Allowed []string
	Blocked []string
}

// Disclosure is a versioned disclosure document.
type Disclosure struct {
	// Version identifies the document; required when sales are configured.
	Version string
	// URL links the full document; optional, https.
	URL string
	// Statements are extra statements shown after the required risk
	// statements.
	Statements []Statement
}

// Statement is one disclosure statement.
type Statement struct {
	// Code is stable (PRICE_MAY_FALL); Text is what clients show.
	Code string `json:"code"`
	Text string `json:"text"`
}

// RequiredStatements returns the risk statements every sale projection
// carries (spec, Token sale records).
func RequiredStatements() []Statement {
	return []Statement{
		{"PRICE_MAY_FALL", "Token prices can fall, including to zero."},
		{"LIQUIDITY_MAY_DISAPPEAR", "Liquidity can disappear; you may be unable to sell."},
		{"LISTING_NOT_GUARANTEED", "Listings on any exchange or venue are not guaranteed."},
		{"JURISDICTION_RESTRICTED", "Participation may be restricted by jurisdiction."},
	}
}

// Window is a sale's open window: [Opens, Closes).
type Window struct {
	Opens  time.Time
	Closes time.Time
}

// contains reports whether t is inside w.
func (w *Window) contains(t time.Time) bool {
	return w != nil && !t.Before(w.Opens) && t.Before(w.Closes)
}

// Terms are the sale's terms as configured.
type Terms struct {
	// Published reports that the terms are public; Version names them.
	Published bool
	Version   string
}

// VenueKind classes a market venue.
type VenueKind string

// The venue kinds. An aggregator routes across pools and is never a pool.
const (
	VenuePool       VenueKind = "POOL"
	VenueAggregator VenueKind = "AGGREGATOR"
)

// Venue is a configured market venue.
type Venue struct {
	// Name is the venue's display name.
	Name string
	// Kind is POOL or AGGREGATOR.
	Kind VenueKind
	// Status is the configured status ("PLANNED" when empty).
	Status string
	// Approved venues may be listed; unapproved ones never are.
	Approved bool
	// Address and Program are a pool's account and the program that must
	// own it. Aggregators have neither.
	Address string
	Program string
}

// Listing is an exchange listing's configured status.
type Listing struct {
	// Status is "TBA" when empty.
	Status string
}

// Sale is one configured sale.
type Sale struct {
	// ID matches ^[a-z0-9][a-z0-9-]{0,62}$ and is not ReservedID.
	ID string
	// Stage is the sale's stage, for example PRE_SALE (the default).
	Stage string
	// Status is PLANNED (the default), ANNOUNCED or OPEN.
	Status Status
	// TargetWindow is the planning window as text ("2026-Q3").
	TargetWindow string
	// Window is the open window; required for OPEN.
	Window *Window
	// Provider is the chosen provider's name; "" while none is chosen.
	Provider string
	// ProviderCandidates are the providers under evaluation.
	ProviderCandidates []string
	// ProviderURL is the provider's canonical URL (https) that handoffs
	// point to.
	ProviderURL string
	// AllocationMinAtomic and AllocationMaxAtomic are the planning
	// envelope in 9-decimal atomic units (canonical decimal strings).
	AllocationMinAtomic string
	AllocationMaxAtomic string
	// ExpectedInventoryAtomic is the inventory the sale account must hold
	// exactly to reconcile; "" means AllocationMaxAtomic.
	ExpectedInventoryAtomic string
	// PresalePriceUSD and InitialDexReferenceUSD are decimal strings.
	PresalePriceUSD        string
	InitialDexReferenceUSD string
	// LaunchReferenceUSD defaults to InitialDexReferenceUSD;
	// LaunchReferenceStatus to PLANNED.
	LaunchReferenceUSD    string
	LaunchReferenceStatus string
	// ProductionMint is the token's mint; "" until deployment.
	ProductionMint string
	// SaleContract is the sale contract account; SaleProgram the program
	// that must own it.
	SaleContract string
	SaleProgram  string
	// InventoryAccount is the token account holding the sale inventory.
	InventoryAccount string
	// Terms are the sale terms.
	Terms Terms
	// Venues are the market venues.
	Venues []Venue
	// ExchangeA and ExchangeAAlpha are exchange listings.
	ExchangeA      Listing
	ExchangeAAlpha Listing
	// UpdatedAt is when the configuration last changed; required.
	UpdatedAt time.Time
}

// saleIDPattern is the shape of a sale id.
var saleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// validate checks cfg and fills defaults in place.
func (cfg *Config) validate() error {
	var errs []error
	anySale := false
	for env, ec := range cfg.Environments {
		if !env.Valid() {
			errs = append(errs, fmt.Errorf("environment %q is not test or live", env))
			continue
		}
		if err := ec.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
		}
		for i := range ec.Sales {
			s := &ec.Sales[i]
			if s.Stage == "" {
				s.Stage = "PRE_SALE"
			}
			if s.Status == "" {
				s.Status = StatusPlanned
			}
			if s.ExpectedInventoryAtomic == "" {
				s.ExpectedInventoryAtomic = s.AllocationMaxAtomic
			}
			if s.LaunchReferenceUSD == "" {
				s.LaunchReferenceUSD = s.InitialDexReferenceUSD
			}
			if s.LaunchReferenceStatus == "" {
				s.LaunchReferenceStatus = string(StatusPlanned)
			}
			for j := range s.Venues {
				if s.Venues[j].Status == "" {
					s.Venues[j].Status = string(StatusPlanned)
				}
			}
			if s.ExchangeA.Status == "" {
				s.ExchangeA.Status = "TBA"
			}
			if s.ExchangeAAlpha.Status == "" {
				s.ExchangeAAlpha.Status = "TBA"
			}
			anySale = true
		}
		cfg.Environments[env] = ec
	}
	if anySale && len(cfg.HandoffKey) < 32 {
		errs = append(errs, errors.New("HandoffKey must be at least 32 bytes"))
	}
	if cfg.HandoffTTL < 0 || cfg.HandoffTTL > time.Hour {
		errs = append(errs, errors.New("HandoffTTL must be between zero and one hour"))
	}
	return errors.Join(errs...)
}

// validate checks one environment's configuration.
func (ec *EnvConfig) validate() error {
	var errs []error
	seen := map[string]bool{}
	for i := range ec.Sales {
		s := ec.Sales[i]
		if seen[s.ID] {
			errs = append(errs, fmt.Errorf("sale %q is configured twice", s.ID))
		}
		seen[s.ID] = true
		if err := s.validate(); err != nil {
			errs = append(errs, fmt.Errorf("sale %q: %w", s.ID, err))
		}
	}
	if ec.Current != "" && !seen[ec.Current] {
		errs = append(errs, fmt.Errorf("current sale %q is not configured", ec.Current))
	}
	if len(ec.Sales) > 0 && ec.Disclosure.Version == "" {
		errs = append(errs, errors.New("disclosure version is required"))
	}
	if ec.Disclosure.URL != "" {
		if err := httpsURL(ec.Disclosure.URL); err != nil {
			errs = append(errs, fmt.Errorf("disclosure URL: %w", err))
		}
	}
	for _, list := range [][]string{ec.Jurisdictions.Allowed, ec.Jurisdictions.Blocked} {
		for _, c := range list {
			if !ValidJurisdiction(c) {
				errs = append(errs, fmt.Errorf("jurisdiction %q is not an upper-case ISO 3166-1 alpha-2 code", c))
			}
		}
	}
	return errors.Join(errs...)
}

// validate checks one sale.
func (s Sale) validate() error {
	var errs []error
	if !saleIDPattern.MatchString(s.ID) || s.ID == ReservedID {
		errs = append(errs, fmt.Errorf("id must match %s and not be %q", saleIDPattern, ReservedID))
	}
	status := s.Status
	if status == "" {
		status = StatusPlanned
	}
	if !status.Configurable() {
		errs = append(errs, fmt.Errorf("status %s cannot be configured: only PLANNED, ANNOUNCED or OPEN; later states need evidence", s.Status))
	}
	if s.UpdatedAt.IsZero() {
		errs = append(errs, errors.New("updatedAt is required"))
	}
	if s.Window != nil && !s.Window.Opens.Before(s.Window.Closes) {
		errs = append(errs, errors.New("window must open before it closes"))
	}
	if status == StatusOpen && s.Window == nil {
		errs = append(errs, errors.New("an OPEN sale needs a window"))
	}
	minA, errMin := parseAtomic(s.AllocationMinAtomic)
	maxA, errMax := parseAtomic(s.AllocationMaxAtomic)
	if errMin != nil {
		errs = append(errs, fmt.Errorf("allocationMinAtomic: %w", errMin))
	}
	if errMax != nil {
		errs = append(errs, fmt.Errorf("allocationMaxAtomic: %w", errMax))
	}
	if errMin == nil && errMax == nil && minA > maxA {
		errs = append(errs, errors.New("allocationMinAtomic exceeds allocationMaxAtomic"))
	}
	if s.ExpectedInventoryAtomic != "" {
		if _, err := parseAtomic(s.ExpectedInventoryAtomic); err != nil {
			errs = append(errs, fmt.Errorf("expectedInventoryAtomic: %w", err))
		}
	}
	for name, v := range map[string]string{"presalePriceUsd": s.PresalePriceUSD, "initialDexReferenceUsd": s.InitialDexReferenceUSD,
		"launchReferenceUsd": s.LaunchReferenceUSD} {
		if v != "" && !validDecimal(v) {
			errs = append(errs, fmt.Errorf("%s %q is not a decimal string", name, v))
		}
	}
	for name, v := range map[string]string{"productionMint": s.ProductionMint, "saleContract": s.SaleContract,
		"saleProgram": s.SaleProgram, "inventoryAccount": s.InventoryAccount} {
		if v == "" {
			continue
		}
		if _, err := token2022.ParsePublicKey(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if (s.SaleContract == "") != (s.SaleProgram == "") {
		errs = append(errs, errors.New("saleContract and saleProgram go together"))
	}
	if s.ProviderURL != "" {
		if err := httpsURL(s.ProviderURL); err != nil {
			errs = append(errs, fmt.Errorf("providerUrl: %w", err))
		}
	}
	for i, v := range s.Venues {
		switch v.Kind {
		case VenuePool:
			for name, a := range map[string]string{"address": v.Address, "program": v.Program} {
				if _, err := token2022.ParsePublicKey(a); err != nil {
					errs = append(errs, fmt.Errorf("venues[%d].%s: %w", i, name, err))
				}
			}
		case VenueAggregator:
			if v.Address != "" || v.Program != "" {
				errs = append(errs, fmt.Errorf("venues[%d]: an aggregator has no pool address", i))
			}
		default:
			errs = append(errs, fmt.Errorf("venues[%d]: kind %q is not POOL or AGGREGATOR", i, v.Kind))
		}
		if v.Name == "" {
			errs = append(errs, fmt.Errorf("venues[%d]: name is required", i))
		}
	}
	return errors.Join(errs...)
}

// parseAtomic parses a canonical atomic decimal string: digits only, no
// sign, no leading zero (except "0"), fitting 64 bits.
func parseAtomic(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("required")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a canonical atomic decimal", s)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n, nil
}

// decimalPattern is a non-negative decimal string.
var decimalPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// validDecimal reports whether s is a non-negative decimal string.
func validDecimal(s string) bool { return decimalPattern.MatchString(s) }

// httpsURL checks that raw is an absolute https URL with a host.
func httpsURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("parse %q: %w", raw, err)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an https URL with a host", raw)
	}
	return nil
}

// ValidJurisdiction reports whether code is an upper-case ISO 3166-1
// alpha-2 shaped code (two letters A to Z).
func ValidJurisdiction(code string) bool {
	return len(code) == 2 && code[0] >= 'A' && code[0] <= 'Z' && code[1] >= 'A' && code[1] <= 'Z'
}

// configHash is the digest of the parts of s a verification run proves,
// so a run of an older configuration is never taken for evidence.
func configHash(s Sale) string {
	type pool struct{ Name, Address, Program string }
	v := struct {
		ID, Mint, Contract, Program, Inventory, Max, Expected string
		Pools                                                 []pool
	}{s.ID, s.ProductionMint, s.SaleContract, s.SaleProgram, s.InventoryAccount, s.AllocationMaxAtomic, s.ExpectedInventoryAtomic, nil}
	for _, p := range s.Venues {
		if p.Kind == VenuePool && p.Approved {
			v.Pools = append(v.Pools, pool{p.Name, p.Address, p.Program})
		}
	}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonicalProvider reports whether raw is a canonical live provider URL:
// https, a DNS host name (no IP literal, no port other than 443), and not a
// loopback, reserved, documentation or mock/simulator host. The reason is
// empty when it is.
func canonicalProvider(raw string) string {
	if raw == "" {
		return "provider URL not configured"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return "provider URL is not https"
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return "provider URL has no host"
	}
	if p := u.Port(); p != "" && p != "443" {
		return "provider URL uses a non-standard port"
	}
	if strings.Trim(host, "0123456789.") == "" || strings.Contains(host, ":") {
		return "provider URL host is an IP address"
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return "provider URL host is not a public name"
	}
	tld := labels[len(labels)-1]
	switch tld {
	case "localhost", "test", "example", "invalid", "local", "internal", "localdomain", "lan", "home", "corp", "onion":
		return "provider URL host is a reserved or local name"
	}
	sld := strings.Join(labels[len(labels)-2:], ".")
	switch sld {
	case "example.com", "example.net", "example.org":
		return "provider URL host is a documentation name"
	}
	for _, l := range labels {
		if strings.Contains(l, "mock") || strings.Contains(l, "simulator") || l == "localhost" {
			return "provider URL host is a mock or simulator"
		}
	}
	return ""
}

// Clock tells the time.
type Clock interface {
	// Now is the current time.
	Now() time.Time
}

// wallClock is the default Clock.
type wallClock struct{}

// Now is time.Now.
func (wallClock) Now() time.Time { return time.Now() }
