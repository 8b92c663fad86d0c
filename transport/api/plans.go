package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/plan"
)

// PlanCatalog is the active plan catalog (spec, Identity and access: plans).
type PlanCatalog struct {
	// Plans are the offered plans in display order.
	Plans []PlanView `json:"plans"`
}

// PlanView is one offered plan with its active price versions.
type PlanView struct {
	// ID is the plan's id.
	ID string `json:"id" example:"pro"`
	// Name is the plan's display name.
	Name string `json:"name" example:"Pro"`
	// Entitlements are the entitlement identifiers the plan grants.
	Entitlements []string `json:"entitlements" example:"ai.pro_models"`
	// MonthlyCredits are granted to the live environment each calendar month
	// (UTC), as an integer string.
	MonthlyCredits string `json:"monthlyCredits" example:"2000"`
	// Prices are the plan's active, immutable price versions; checkout
	// captures one of them by id.
	Prices []PriceVersionView `json:"prices"`
	// Annual says whether the plan can be bought yearly.
	Annual PriceAvailability `json:"annual"`
}

// PriceVersionView is one immutable price version of a plan.
type PriceVersionView struct {
	// ID is the price version's id, which checkout captures.
	ID string `json:"id" example:"price_01jd0000000000000000000000"`
	// Currency is an ISO 4217 code.
	Currency string `json:"currency" example:"USD"`
	// Amount is in the currency's minor units, as an integer string.
	Amount string `json:"amount" example:"1900"`
	// Interval is the billing period: a month or a year.
	Interval string `json:"interval" example:"month" enum:"month,year"`
	// Version counts the prices of this plan, currency and interval from 1.
	Version int `json:"version" example:"1"`
	// Active is true while checkout offers the price version.
	Active bool `json:"active" example:"true"`
	// CreatedAt is when the price version was created; versions never change.
	CreatedAt time.Time `json:"createdAt"`
}

// PriceAvailability says whether a kind of pricing is offered and, when
// not, why.
type PriceAvailability struct {
	// Available is true when the kind of pricing is offered.
	Available bool `json:"available" example:"false"`
	// Reason is null when available; no_annual_price_version until an
	// annual price version exists.
	Reason *string `json:"reason" example:"no_annual_price_version"`
}

func planView(p plan.Plan) PlanView {
	v := PlanView{ID: p.ID, Name: p.Name, Entitlements: append([]string{}, p.Entitlements...),
		MonthlyCredits: strconv.FormatUint(p.MonthlyCredits, 10), Prices: []PriceVersionView{}}
	for _, pv := range p.ActivePrices() {
		v.Prices = append(v.Prices, PriceVersionView{ID: pv.ID, Currency: pv.Currency, Amount: strconv.FormatInt(pv.Amount, 10),
			Interval: string(pv.Interval), Version: pv.Version, Active: pv.Active, CreatedAt: pv.CreatedAt})
	}
	a := p.Annual()
	v.Annual.Available = a.Available
	if !a.Available {
		r := a.Reason
		v.Annual.Reason = &r
	}
	return v
}

// planCacheControl lets clients and shared caches keep the public catalog
// briefly: it is the same for every caller, and a new price version shows
// within a minute.
const planCacheControl = "public, max-age=60"

// planRoutes serves the public plan catalog. It takes no credential: the
// catalog is what a visitor sees before signing up, and it carries no
// workspace data.
func planRoutes(plans *plan.Service) []Route {
	reason := plan.ReasonNoAnnualPrice
	example := PlanCatalog{Plans: []PlanView{{ID: "pro", Name: "Pro",
		Entitlements: []string{"ai.basic", "ai.pro_models", "analytics.advanced", "collaboration.enabled"}, MonthlyCredits: "2000",
		Prices: []PriceVersionView{{ID: "price_01jd0000000000000000000000", Currency: "USD", Amount: "1900", Interval: "month",
			Version: 1, Active: true, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Annual: PriceAvailability{Reason: &reason}}}}
	return []Route{{
		Method: http.MethodGet, Pattern: "/api/v1/saas/plans", OperationID: "listPlans", Tag: transport.TagAccount,
		Summary: "List the plan catalog",
		Description: "The active plans with their entitlements, monthly credit grant and active immutable price versions " +
			"(amounts in minor units). Annual pricing is reported unavailable until an annual price version exists. " +
			"Public: no credential is needed; the answer may be cached for 60 seconds.",
		Auth: transport.AuthPublic, Idempotency: transport.IdempotencyNone, Response: example,
		Handle: func(ctx context.Context, c *Call) (any, error) {
			ps, err := plans.List(ctx, c.Tx)
			if err != nil {
				return nil, err
			}
			out := PlanCatalog{Plans: make([]PlanView, 0, len(ps))}
			for _, p := range ps {
				out.Plans = append(out.Plans, planView(p))
			}
			c.Header().Set("Cache-Control", planCacheControl)
			return out, nil
		},
	}}
}
