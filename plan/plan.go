package plan

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// Interval is the billing interval of a price.
type Interval string

const (
	// Month prices bill every calendar month.
	Month Interval = "month"
	// Year prices bill every year.
	Year Interval = "year"
)

// Intervals returns every interval.
func Intervals() []Interval { return []Interval{Month, Year} }

// Valid reports whether i is a known interval.
func (i Interval) Valid() bool { return slices.Contains(Intervals(), i) }

// FreeID is the id of the plan every workspace starts on. A catalog must
// contain it.
const FreeID = "free"

// ReasonNoAnnualPrice is why a plan's annual pricing is unavailable: it has
// no active annual price version.
const ReasonNoAnnualPrice = "no_annual_price_version"

// Price is a configured price of a plan: an amount in minor units of an ISO
// 4217 currency per interval.
type Price struct {
	// Currency is an ISO 4217 code in upper case, such as "USD".
	Currency string
	// Amount is in the currency's minor units (cents for USD); 0 or more.
	Amount int64
	// Interval is Month or Year.
	Interval Interval
}

// Spec is one plan of the configured catalog.
type Spec struct {
	// ID is a stable lower-case id, such as "pro".
	ID string
	// Name is the display name.
	Name string
	// Entitlements are the entitlement identifiers the plan grants, such as
	// "ai.basic".
	Entitlements []string
	// MonthlyCredits are granted each period to the live environment of a
	// workspace on the plan in live (see Service.GrantFor).
	MonthlyCredits uint64
	// Prices are the plan's current prices, at most one per (currency,
	// interval).
	Prices []Price
	// Limits bound what a workspace on the plan may consume. A zero field
	// takes DefaultLimits' value for that field.
	Limits Limits
}

// Limits are a plan's resource limits: configuration, applied where the
// resource is consumed (they are not persisted with the plan).
type Limits struct {
	// SoundMaxDuration is the longest audio one sound operation (analysis,
	// mastering, enhancement, stem separation) processes: admission refuses
	// an input whose header claims more, and decoding stops an input that
	// runs longer whatever its header claimed. It is measured in decoded
	// frames at the input's sample rate.
	SoundMaxDuration time.Duration
	// StorageQuotaBytes bounds the bytes of all assets of a workspace in one
	// environment (uploads, generated tracks and sound outputs, each record
	// counted in full even when identical content is stored once). An
	// upload or sound output that would pass it is refused; generated
	// tracks, already paid for, are counted but never refused.
	StorageQuotaBytes int64
}

// DefaultLimits returns the limits of a plan that configures none: the
// free plan's defaults, 10 minutes of audio per sound operation and 1 GiB
// of storage.
func DefaultLimits() Limits {
	return Limits{SoundMaxDuration: 10 * time.Minute, StorageQuotaBytes: 1 << 30}
}

// withDefaults fills l's zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.SoundMaxDuration == 0 {
		l.SoundMaxDuration = d.SoundMaxDuration
	}
	if l.StorageQuotaBytes == 0 {
		l.StorageQuotaBytes = d.StorageQuotaBytes
	}
	return l
}

// PriceVersion is one immutable, persisted price of a plan. Versions number
// the prices of one (plan, currency, interval) from 1; only the newest of
// them can be active.
type PriceVersion struct {
	// ID identifies the version ("price_" + ULID); checkout records it.
	ID string
	// PlanID is the plan priced.
	PlanID string
	// Currency is an ISO 4217 code.
	Currency string
	// Interval is Month or Year.
	Interval Interval
	// Version counts the prices of (PlanID, Currency, Interval) from 1.
	Version int
	// Amount is in minor units of Currency.
	Amount int64
	// Active reports whether the catalog offers this version now.
	Active bool
	// CreatedAt is when the version was published.
	CreatedAt time.Time
}

// Plan is a persisted plan with every price version it ever had.
type Plan struct {
	// ID is the plan's id.
	ID string
	// Name is its display name.
	Name string
	// Entitlements are the entitlements it grants, sorted.
	Entitlements []string
	// MonthlyCredits are granted to the live environment each period.
	MonthlyCredits uint64
	// Position orders the catalog (the configuration's order).
	Position int
	// Active reports whether the catalog offers the plan.
	Active bool
	// Prices are every price version, ordered by currency, interval and
	// version.
	Prices []PriceVersion
}

// ActivePrices returns the plan's active price versions.
func (p Plan) ActivePrices() []PriceVersion {
	var out []PriceVersion
	for _, pv := range p.Prices {
		if pv.Active {
			out = append(out, pv)
		}
	}
	return out
}

// Availability says whether a kind of pricing is offered, and why not.
type Availability struct {
	// Available is true when an active price version exists.
	Available bool
	// Reason is empty when available, else a stable reason code such as
	// ReasonNoAnnualPrice.
	Reason string
}

// Annual reports whether the plan can be bought yearly: only when it has an
// active annual price version.
func (p Plan) Annual() Availability {
	for _, pv := range p.Prices {
		if pv.Active && pv.Interval == Year {
			return Availability{Available: true}
		}
	}
	return Availability{Reason: ReasonNoAnnualPrice}
}

// latest returns the newest price version of (currency, interval).
func (p Plan) latest(currency string, iv Interval) (PriceVersion, bool) {
	var out PriceVersion
	found := false
	for _, pv := range p.Prices {
		if pv.Currency == currency && pv.Interval == iv && (!found || pv.Version > out.Version) {
			out, found = pv, true
		}
	}
	return out, found
}

// Assignment is a workspace's plan in one environment: a workspace has a
// plan in test and one in live (both free until a subscription of that
// environment moves it).
type Assignment struct {
	// TenantID owns the workspace.
	TenantID string
	// WorkspaceID is the workspace.
	WorkspaceID string
	// Environment is the environment the plan applies to.
	Environment access.Environment
	// PlanID is its plan.
	PlanID string
	// Since is when the workspace moved to the plan.
	Since time.Time
}

// Source is the entitlement source recorded for the entitlements of plan id.
func Source(id string) string { return "plan:" + id }

// Reader reads the catalog.
type Reader interface {
	// PlanList returns every plan (active or not) with all its price
	// versions, ordered by position then id.
	PlanList(ctx context.Context) ([]Plan, error)
}

// Store is the plan port, implemented by the store on a unit of work. It is
// the seam between this package and SQL, not a stable API.
type Store interface {
	Reader
	jobs.Enqueuer
	// Now is the unit of work's time, from the injected clock.
	Now() time.Time
	// PlanGet returns one plan with its price versions; NOT_FOUND if none.
	PlanGet(ctx context.Context, id string) (Plan, error)
	// PlanUpsert creates plan p or replaces its name, entitlements, monthly
	// credits, position and active flag (p.Prices is ignored).
	PlanUpsert(ctx context.Context, p Plan) error
	// PlanDeactivateExcept deactivates every plan whose id is not in ids,
	// and every price version of those plans.
	PlanDeactivateExcept(ctx context.Context, ids []string) error
	// PriceVersionInsert stores pv (ID and CreatedAt are set by the store),
	// inactive. When (plan, currency, interval, version) exists it stores
	// nothing and returns inserted=false.
	PriceVersionInsert(ctx context.Context, pv PriceVersion) (stored PriceVersion, inserted bool, err error)
	// PriceVersionActivate makes exactly the versions activeIDs of planID
	// active.
	PriceVersionActivate(ctx context.Context, planID string, activeIDs []string) error
	// WorkspacePlanSet puts a.WorkspaceID on a.PlanID in a.Environment since
	// the unit of work's time (a.Since is ignored; it only moves when the
	// plan changes).
	WorkspacePlanSet(ctx context.Context, a Assignment) error
	// WorkspacePlanGet returns a workspace's plan in env; NOT_FOUND if it has
	// none there.
	WorkspacePlanGet(ctx context.Context, workspaceID string, env access.Environment) (Assignment, error)
	// WorkspacePlanList returns up to limit workspaces that have a plan, with
	// ids greater than after, in workspace id order: one assignment each, the
	// live one (the test one for a workspace without a live plan).
	WorkspacePlanList(ctx context.Context, after string, limit int) ([]Assignment, error)
	// EntitlementSet turns a workspace entitlement on in env (with its
	// source) or off there, and bumps the workspace's authority version. env
	// "" is an entitlement held in both environments; plans always name one.
	EntitlementSet(ctx context.Context, workspaceID, entitlement, source, env string, on bool) error
}

// RunFunc runs fn in one unit of work: a transaction whose writes commit
// together when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Grant is one monthly credit grant.
type Grant struct {
	// TenantID and WorkspaceID receive the credits.
	TenantID    string
	WorkspaceID string
	// Environment is live (the live plan's credits) or test (test credits).
	Environment access.Environment
	// Credits is the amount, in whole credits (the ledger's atomic unit).
	Credits uint64
	// Reference is "plan-grant:<workspace>:<environment>:<YYYY-MM>", unique
	// per grant: the ledger books a reference once.
	Reference string
	// PlanID is the workspace's plan in Environment when the grant was
	// computed.
	PlanID string
	// Period is the calendar month granted.
	Period Period
}

// CreditGranter books a grant of credits: the credit ledger. It runs its own
// unit of work and must be idempotent on Grant.Reference: booking a
// reference that is already booked returns nil and moves nothing.
type CreditGranter interface {
	GrantCredits(ctx context.Context, g Grant) error
}

// Reference returns the unique business reference of a workspace's grant
// in env for period p.
func Reference(workspaceID string, env access.Environment, p Period) string {
	return fmt.Sprintf("plan-grant:%s:%s:%s", workspaceID, env, p)
}

// Period is a calendar month in UTC.
type Period struct {
	Year  int
	Month time.Month
}

// PeriodOf returns the period containing t (in UTC).
func PeriodOf(t time.Time) Period {
	t = t.UTC()
	return Period{Year: t.Year(), Month: t.Month()}
}

// ParsePeriod parses "YYYY-MM"; INVALID_INPUT otherwise.
func ParsePeriod(s string) (Period, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return Period{}, fault.Invalid("plan.ParsePeriod", "period", "A period is written YYYY-MM.")
	}
	return PeriodOf(t), nil
}

// String returns "YYYY-MM".
func (p Period) String() string { return fmt.Sprintf("%04d-%02d", p.Year, int(p.Month)) }

// Start is the period's first instant.
func (p Period) Start() time.Time { return time.Date(p.Year, p.Month, 1, 0, 0, 0, 0, time.UTC) }

// Next is the following period.
func (p Period) Next() Period { return PeriodOf(p.Start().AddDate(0, 1, 0)) }

var (
	planIDPattern      = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	entitlementPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	currencyPattern    = regexp.MustCompile(`^[A-Z]{3}$`)
)
