package plan

import (
	"fmt"
	"slices"
	"time"
)

// DefaultTestCredits is the monthly test-credit grant of each workspace's
// test environment when Catalog.TestCredits is zero.
const DefaultTestCredits uint64 = 10_000

// Catalog configures the plans the platform offers. The zero value is
// DefaultCatalog.
type Catalog struct {
	// Plans are the offered plans, in display order. Nil means
	// DefaultCatalog's plans. It must contain FreeID.
	Plans []Spec
	// TestCredits is the monthly grant of test credits to every workspace's
	// test environment. Zero means DefaultTestCredits.
	TestCredits uint64
}

// DefaultCatalog returns the documented default catalog, with monthly USD
// prices only (annual pricing is therefore reported unavailable):
//
//	free    $0/month    50 credits      ai.basic
//	pro     $19/month   2,000 credits   + ai.pro_models, collaboration.enabled, analytics.advanced
//	studio  $49/month   10,000 credits  + audio.hires, marketplace.sell
//
// and 10,000 test credits a month for each workspace's test environment.
// Their limits (Limits) are:
//
//	        sound operation input   storage per workspace and environment
//	free    10 minutes              1 GiB
//	pro     30 minutes              20 GiB
//	studio  60 minutes              100 GiB
func DefaultCatalog() Catalog {
	pro := []string{"ai.basic", "ai.pro_models", "analytics.advanced", "collaboration.enabled"}
	return Catalog{
		Plans: []Spec{
			{ID: FreeID, Name: "Free", Entitlements: []string{"ai.basic"}, MonthlyCredits: 50,
				Prices: []Price{{Currency: "USD", Amount: 0, Interval: Month}}, Limits: DefaultLimits()},
			{ID: "pro", Name: "Pro", Entitlements: pro, MonthlyCredits: 2_000,
				Prices: []Price{{Currency: "USD", Amount: 1_900, Interval: Month}},
				Limits: Limits{SoundMaxDuration: 30 * time.Minute, StorageQuotaBytes: 20 << 30}},
			{ID: "studio", Name: "Studio", Entitlements: append(slices.Clone(pro), "audio.hires", "marketplace.sell"), MonthlyCredits: 10_000,
				Prices: []Price{{Currency: "USD", Amount: 4_900, Interval: Month}},
				Limits: Limits{SoundMaxDuration: 60 * time.Minute, StorageQuotaBytes: 100 << 30}},
		},
		TestCredits: DefaultTestCredits,
	}
}

// withDefaults fills zero fields and validates the catalog. The plans and
// their slices are copied, so later changes by the caller do not leak in.
func (c Catalog) withDefaults() (Catalog, error) {
	def := DefaultCatalog()
	if c.Plans == nil {
		c.Plans = def.Plans
	}
	if c.TestCredits == 0 {
		c.TestCredits = def.TestCredits
	}
	out := Catalog{TestCredits: c.TestCredits, Plans: make([]Spec, len(c.Plans))}
	seen := map[string]bool{}
	for i, s := range c.Plans {
		if !planIDPattern.MatchString(s.ID) {
			return Catalog{}, fmt.Errorf("plan %d: id %q is not 1-32 lower-case letters, digits, '-' or '_'", i, s.ID)
		}
		if seen[s.ID] {
			return Catalog{}, fmt.Errorf("plan %q: listed twice", s.ID)
		}
		seen[s.ID] = true
		if s.Name == "" {
			return Catalog{}, fmt.Errorf("plan %q: a name is required", s.ID)
		}
		ents := slices.Clone(s.Entitlements)
		slices.Sort(ents)
		ents = slices.Compact(ents)
		for _, e := range ents {
			if !entitlementPattern.MatchString(e) {
				return Catalog{}, fmt.Errorf("plan %q: entitlement %q is not of the form area.name", s.ID, e)
			}
		}
		prices := slices.Clone(s.Prices)
		type key struct {
			cur string
			iv  Interval
		}
		pk := map[key]bool{}
		for _, p := range prices {
			if !currencyPattern.MatchString(p.Currency) {
				return Catalog{}, fmt.Errorf("plan %q: currency %q is not an upper-case ISO 4217 code", s.ID, p.Currency)
			}
			if !p.Interval.Valid() {
				return Catalog{}, fmt.Errorf("plan %q: interval %q is not month or year", s.ID, p.Interval)
			}
			if p.Amount < 0 {
				return Catalog{}, fmt.Errorf("plan %q: a negative price", s.ID)
			}
			if pk[key{p.Currency, p.Interval}] {
				return Catalog{}, fmt.Errorf("plan %q: two %s prices per %s", s.ID, p.Currency, p.Interval)
			}
			pk[key{p.Currency, p.Interval}] = true
		}
		if s.Limits.SoundMaxDuration < 0 || s.Limits.StorageQuotaBytes < 0 {
			return Catalog{}, fmt.Errorf("plan %q: a negative limit", s.ID)
		}
		out.Plans[i] = Spec{ID: s.ID, Name: s.Name, Entitlements: ents, MonthlyCredits: s.MonthlyCredits, Prices: prices,
			Limits: s.Limits.withDefaults()}
	}
	if !seen[FreeID] {
		return Catalog{}, fmt.Errorf("the catalog has no %q plan, which every workspace starts on", FreeID)
	}
	return out, nil
}
