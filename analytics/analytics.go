package analytics

import (
	"context"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Bounds of a query.
const (
	// MaxBuckets bounds the buckets of a window.
	MaxBuckets = 366
	// DefaultBuckets is how many periods a window without from spans.
	DefaultBuckets = 30
)

// DateLayout is the layout of from and to: a calendar day (UTC).
const DateLayout = time.DateOnly

// Reasons of INVALID_INPUT (details.reason).
const (
	ReasonFuture         = "future"
	ReasonAfterTo        = "after_to"
	ReasonTooManyBuckets = "too_many_buckets"
)

// Period is the length of a bucket.
type Period string

// The periods.
const (
	// Day buckets run from 00:00 UTC to the next day's.
	Day Period = "day"
	// Week buckets run from Monday 00:00 UTC to the next Monday's (ISO 8601 weeks).
	Week Period = "week"
	// Month buckets run from the first day of a month, 00:00 UTC, to the next month's.
	Month Period = "month"
)

// Periods lists every Period.
func Periods() []Period { return []Period{Day, Week, Month} }

// Valid reports whether p is a known period.
func (p Period) Valid() bool { return slices.Contains(Periods(), p) }

// Start returns the start of the period holding t (UTC).
func (p Period) Start(t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case Week:
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return d
}

// Next returns the start of the period after the one starting at start.
func (p Period) Next(start time.Time) time.Time {
	switch p {
	case Week:
		return start.AddDate(0, 0, 7)
	case Month:
		return start.AddDate(0, 1, 0)
	}
	return start.AddDate(0, 0, 1)
}

// Metric names a count the report answers.
type Metric string

// The metrics. Each counts the rows of its source (Definition.Source)
// whose timestamp falls in a bucket.
const (
	Signups                  Metric = "signups"
	WorkspacesCreated        Metric = "workspaces_created"
	ActiveWorkspaces         Metric = "active_workspaces"
	AttributedUsers          Metric = "attributed_users"
	ProjectsCreated          Metric = "projects_created"
	SubmissionsCreated       Metric = "submissions_created"
	GenerationsCreated       Metric = "generations_created"
	GenerationsCompleted     Metric = "generations_completed"
	SoundOperationsCreated   Metric = "sound_operations_created"
	SoundOperationsCompleted Metric = "sound_operations_completed"
	AIOperationsCreated      Metric = "ai_operations_created"
	OrdersCreated            Metric = "marketplace_orders_created"
	OrdersSettled            Metric = "marketplace_orders_settled"
	CheckoutsCreated         Metric = "checkouts_created"
	CheckoutsPaid            Metric = "checkouts_paid"
	CreditPurchasesCreated   Metric = "credit_purchases_created"
	CreditPurchasesSettled   Metric = "credit_purchases_settled"
	RewardsAllocated         Metric = "rewards_allocated"
	RewardPayouts            Metric = "reward_payouts"
	ReleasesCreated          Metric = "releases_created"
)

// Definition states what a metric counts.
type Definition struct {
	// Metric is the metric's name.
	Metric Metric
	// Description says what is counted, for a reader.
	Description string
	// Source names the table and timestamp column counted
	// ("table.column"), with its condition when there is one.
	Source string
	// EnvironmentScoped is false for records that exist in both
	// environments (users, workspaces): their count is the same in both.
	EnvironmentScoped bool
	// Distinct metrics count distinct workspaces; their total is over
	// the whole window, not the sum of the buckets.
	Distinct bool
}

// Catalogue lists every metric with its definition, in the report's
// order. It is built on each call.
func Catalogue() []Definition {
	env := func(m Metric, desc, src string) Definition {
		return Definition{Metric: m, Description: desc, Source: src, EnvironmentScoped: true}
	}
	return []Definition{
		{Metric: Signups, Description: "People who signed up: user accounts created (every tenant; a user exists in both environments).",
			Source: "users.created_at"},
		{Metric: WorkspacesCreated, Description: "Workspaces created by onboarding or by the host's operator (every tenant; a workspace " +
			"exists in both environments).", Source: "workspaces.created_at"},
		{Metric: ActiveWorkspaces, Description: "Workspaces with at least one successful (2xx) mutation through the API in the " +
			"environment in the bucket, by a session or an API key acting in the workspace: distinct workspaces of the durable request " +
			"receipts. The total is the distinct workspaces active anywhere in the window.",
			Source: "request_receipts.created_at where status is 2xx and the workspace is set", EnvironmentScoped: true, Distinct: true},
		env(AttributedUsers, "Users whose first attribution touch was recorded (POST /api/v1/attribution).", "attributions.first_at"),
		env(ProjectsCreated, "Projects created.", "projects.created_at"),
		env(SubmissionsCreated, "Community submissions made to projects.", "submissions.created_at"),
		env(GenerationsCreated, "Music generation operations accepted.", "generation_operations.created_at"),
		env(GenerationsCompleted, "Music generation operations that completed (outputs ingested, credits settled), by completion time.",
			"generation_operations.ended_at where status is completed"),
		env(SoundOperationsCreated, "Sound operations accepted (analysis, stems, mastering, enhancement).", "sound_operations.created_at"),
		env(SoundOperationsCompleted, "Sound operations that completed, by completion time.", "sound_operations.ended_at where status is completed"),
		env(AIOperationsCreated, "AI chat and task completion operations started.", "ai_operations.created_at"),
		env(OrdersCreated, "Marketplace orders created.", "marketplace_orders.created_at"),
		env(OrdersSettled, "Marketplace orders settled: the license entitlement each settled order issued, by issue time.",
			"marketplace_entitlements.created_at"),
		env(CheckoutsCreated, "Subscription checkouts created.", "billing_checkouts.created_at"),
		env(CheckoutsPaid, "Subscription checkouts the payment provider confirmed paid, by payment time.", "billing_checkouts.paid_at"),
		env(CreditPurchasesCreated, "Credit purchases started: transaction intents of purpose credit_purchase.",
			"transaction_intents.created_at where purpose is credit_purchase"),
		env(CreditPurchasesSettled, "Credit purchases settled: the credit grant each settled credit_purchase intent posted, by posting time.",
			"ledger_movements.created_at of the grant of a credit_purchase intent's business reference"),
		env(RewardsAllocated, "Rewards allocated from challenge pools.", "rewards.allocated_at"),
		env(RewardPayouts, "Rewards paid out: distributed to the creator's wallet, by distribution time.",
			"rewards.distributed_at"),
		env(ReleasesCreated, "Releases to external distribution created.", "releases.created_at"),
	}
}

// Metrics lists every metric, in the report's order.
func Metrics() []Metric {
	var out []Metric
	for _, d := range Catalogue() {
		out = append(out, d.Metric)
	}
	return out
}

// Status says whether a metric has rows in the window.
type Status string

// The statuses.
const (
	// StatusObserved: the window holds rows of the metric; its counts
	// are exact.
	StatusObserved Status = "observed"
	// StatusNoData: the window holds no row of the metric.
	StatusNoData Status = "no_data"
)

// Bucket is one period of a window, [Start, End).
type Bucket struct {
	Start, End time.Time
}

// Query asks for a report.
type Query struct {
	// Period is the bucket length; "" means Day.
	Period Period
	// From and To are the window's first and last calendar days
	// (DateLayout); "" takes the defaults (package doc).
	From, To string
	// Metrics narrows the report; empty means every metric.
	Metrics []Metric
}

// Window is a validated query's window.
type Window struct {
	// Period is the bucket length.
	Period Period
	// From and To bound the window, [From, To).
	From, To time.Time
	// Buckets are its periods, in order.
	Buckets []Bucket
	// AsOf is when it was read: counts of a bucket that ends after it
	// are those so far.
	AsOf time.Time
}

// Window validates q at now and returns its window and metrics, or
// INVALID_INPUT naming the parameter (period, from, to, metrics).
func (q Query) Window(now time.Time) (Window, []Definition, error) {
	const op = "analytics.Query"
	now = now.UTC()
	p := q.Period
	if p == "" {
		p = Day
	}
	if !p.Valid() {
		return Window{}, nil, fault.Invalid(op, "period", "period must be day, week or month.")
	}
	today := Day.Start(now)
	to := today
	if q.To != "" {
		d, err := time.Parse(DateLayout, q.To)
		if err != nil {
			return Window{}, nil, fault.Invalid(op, "to", "to must be a calendar day, YYYY-MM-DD.")
		}
		if d.After(today) {
			return Window{}, nil, fault.Invalid(op, "to", "to may not be after today (UTC).").With("reason", ReasonFuture).
				With("max", today.Format(DateLayout))
		}
		to = d
	}
	end := p.Next(p.Start(to))
	start := p.Start(to)
	for range DefaultBuckets - 1 {
		start = p.Start(start.Add(-time.Hour))
	}
	if q.From != "" {
		d, err := time.Parse(DateLayout, q.From)
		if err != nil {
			return Window{}, nil, fault.Invalid(op, "from", "from must be a calendar day, YYYY-MM-DD.")
		}
		if d.After(to) {
			return Window{}, nil, fault.Invalid(op, "from", "from may not be after to.").With("reason", ReasonAfterTo)
		}
		start = p.Start(d)
	}
	w := Window{Period: p, From: start, To: end, AsOf: now}
	for s := start; s.Before(end); s = p.Next(s) {
		if len(w.Buckets) == MaxBuckets {
			return Window{}, nil, fault.Invalid(op, "from", "The window holds at most 366 buckets.").With("reason", ReasonTooManyBuckets).
				With("limit", MaxBuckets)
		}
		w.Buckets = append(w.Buckets, Bucket{Start: s, End: p.Next(s)})
	}
	defs := Catalogue()
	if len(q.Metrics) > 0 {
		var keep []Definition
		for _, m := range q.Metrics {
			i := slices.IndexFunc(defs, func(d Definition) bool { return d.Metric == m })
			if i < 0 {
				return Window{}, nil, fault.Invalid(op, "metrics", "metrics names a metric the platform does not count: "+string(m)+".").
					With("reason", "unknown_metric")
			}
			if !slices.ContainsFunc(keep, func(d Definition) bool { return d.Metric == m }) {
				keep = append(keep, defs[i])
			}
		}
		defs = keep
	}
	return w, defs, nil
}

// CountQuery asks the store for one metric's counts over a window.
type CountQuery struct {
	// Metric is what is counted.
	Metric Metric
	// Environment scopes environment-scoped metrics.
	Environment access.Environment
	// Period is the bucket length.
	Period Period
	// From and To bound the window, [From, To); both are period starts.
	From, To time.Time
}

// Count is one metric's counts over a window.
type Count struct {
	// ByStart counts the rows of each bucket holding any, keyed by the
	// bucket's start (DateLayout).
	ByStart map[string]int64
	// Total counts the rows of the window (a distinct metric: the
	// distinct subjects of the window).
	Total int64
}

// ReadStore is what a report reads; store.Tx implements it.
type ReadStore interface {
	// Now is the platform's time.
	Now() time.Time
	// AnalyticsCount counts q.Metric's rows with timestamps in [q.From,
	// q.To), of every tenant and workspace, in q.Environment for an
	// environment-scoped metric, grouped by the q.Period bucket each
	// falls in. INVALID_INPUT for a metric it does not count.
	AnalyticsCount(ctx context.Context, q CountQuery) (Count, error)
}

// Series is one metric of a report.
type Series struct {
	// Definition states what it counts.
	Definition Definition
	// Status is observed or no_data.
	Status Status
	// Total is the window's count; zero with StatusNoData.
	Total int64
	// Counts holds one count per bucket of the window, in order; nil
	// with StatusNoData.
	Counts []int64
}

// Report is the product analytics of one environment over a window.
type Report struct {
	// Environment is the caller's.
	Environment access.Environment
	// Window is the validated window.
	Window Window
	// Series are the metrics asked for, in catalogue order or the
	// query's.
	Series []Series
}

// Service answers product analytics. It holds no state and is safe for
// concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// Product answers q for p in p's environment (package doc).
// ACCESS_DENIED unless a holds super_admin; INVALID_INPUT for a bad
// query.
func (s *Service) Product(ctx context.Context, st ReadStore, p *access.Principal, a *access.Authority, q Query) (Report, error) {
	const op = "analytics.Product"
	if p == nil || a == nil || !a.SuperAdmin || p.Kind == access.CredentialAPIKey {
		return Report{}, fault.E(op, fault.AccessDenied, "Product analytics need the super_admin platform role.")
	}
	w, defs, err := q.Window(st.Now())
	if err != nil {
		return Report{}, err
	}
	r := Report{Environment: p.Environment, Window: w, Series: make([]Series, 0, len(defs))}
	for _, d := range defs {
		c, err := st.AnalyticsCount(ctx, CountQuery{Metric: d.Metric, Environment: p.Environment, Period: w.Period, From: w.From, To: w.To})
		if err != nil {
			return Report{}, fault.Wrap(op, err)
		}
		r.Series = append(r.Series, series(d, w, c))
	}
	return r, nil
}

// series places c's counts in w's buckets.
func series(d Definition, w Window, c Count) Series {
	if c.Total == 0 {
		return Series{Definition: d, Status: StatusNoData}
	}
	s := Series{Definition: d, Status: StatusObserved, Total: c.Total, Counts: make([]int64, len(w.Buckets))}
	for i, b := range w.Buckets {
		s.Counts[i] = c.ByStart[b.Start.Format(DateLayout)]
	}
	return s
}
