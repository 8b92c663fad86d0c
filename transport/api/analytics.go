package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/transport"
)

// ProductAnalyticsView is GET /api/v1/analytics/product: counts of the
// platform's records per period over a window, in the caller's
// environment.
type ProductAnalyticsView struct {
	// Object is always "product_analytics".
	Object string `json:"object" example:"product_analytics"`
	// Environment is the caller's environment, the one environment-scoped metrics count.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Scope is platform: every tenant and workspace of the environment is counted; no tenant, workspace, user or record is named.
	Scope string `json:"scope" example:"platform" enum:"platform"`
	// Period is the length of a bucket: day (00:00 UTC to 00:00 UTC), week (Monday to Monday, UTC) or month (first day to first day, UTC).
	Period string `json:"period" example:"day" enum:"day,week,month"`
	// Window is the window counted: from the start of the period holding the query's from to the end of the period holding its to.
	Window AnalyticsWindowView `json:"window"`
	// AsOf is when the counts were read; a bucket ending after it is not complete.
	AsOf time.Time `json:"asOf"`
	// Buckets are the window's periods in order; each metric's counts[i] is the count of buckets[i].
	Buckets []AnalyticsBucketView `json:"buckets"`
	// Metrics are the metrics asked for (all by default), each with its definition.
	Metrics []AnalyticsMetricView `json:"metrics"`
}

// AnalyticsWindowView bounds a window: [from, to).
type AnalyticsWindowView struct {
	// From is the window's start, included.
	From time.Time `json:"from"`
	// To is the window's end, excluded.
	To time.Time `json:"to"`
}

// AnalyticsBucketView is one period of the window: [start, end).
type AnalyticsBucketView struct {
	// Start is the bucket's start, included.
	Start time.Time `json:"start"`
	// End is the bucket's end, excluded.
	End time.Time `json:"end"`
	// Complete is false for the bucket holding asOf: its counts are those so far.
	Complete bool `json:"complete" example:"true"`
}

// AnalyticsMetricView is one metric over the window.
type AnalyticsMetricView struct {
	// Metric is the metric's name.
	Metric string `json:"metric" example:"signups"`
	// Description says what is counted.
	Description string `json:"description" example:"People who signed up: user accounts created (every tenant; a user exists in both environments)."`
	// Source names the table and timestamp column counted, with its condition when there is one.
	Source string `json:"source" example:"users.created_at"`
	// EnvironmentScoped is false for records that exist in both environments (users, workspaces): their counts are the same in both.
	EnvironmentScoped bool `json:"environmentScoped" example:"false"`
	// Aggregation is count (rows) or distinct_workspaces (each workspace once per bucket; the total once over the window).
	Aggregation string `json:"aggregation" example:"count" enum:"count,distinct_workspaces"`
	// Window is the window the metric counts: the report's.
	Window AnalyticsWindowView `json:"window"`
	// Status is observed when the window holds rows of the metric (every count is then exact, zeros included) and no_data when it holds none.
	Status string `json:"status" example:"observed" enum:"observed,no_data"`
	// Total is the window's count; null with no_data, never an observed zero.
	Total *int64 `json:"total" example:"12"`
	// Counts holds one count per bucket, in the order of buckets; null with no_data.
	Counts []int64 `json:"counts" example:"[5,0,7]"`
}

func productAnalyticsView(r analytics.Report) ProductAnalyticsView {
	w := AnalyticsWindowView{From: r.Window.From, To: r.Window.To}
	v := ProductAnalyticsView{Object: "product_analytics", Environment: string(r.Environment), Scope: "platform",
		Period: string(r.Window.Period), Window: w, AsOf: r.Window.AsOf, Buckets: []AnalyticsBucketView{},
		Metrics: []AnalyticsMetricView{}}
	for _, b := range r.Window.Buckets {
		v.Buckets = append(v.Buckets, AnalyticsBucketView{Start: b.Start, End: b.End, Complete: !b.End.After(r.Window.AsOf)})
	}
	for _, s := range r.Series {
		d := s.Definition
		m := AnalyticsMetricView{Metric: string(d.Metric), Description: d.Description, Source: d.Source,
			EnvironmentScoped: d.EnvironmentScoped, Aggregation: "count", Window: w, Status: string(s.Status)}
		if d.Distinct {
			m.Aggregation = "distinct_workspaces"
		}
		if s.Status == analytics.StatusObserved {
			total := s.Total
			m.Total, m.Counts = &total, s.Counts
		}
		v.Metrics = append(v.Metrics, m)
	}
	return v
}

// analyticsRoutes serve product analytics (spec, Architecture and
// operations: GET /api/v1/analytics/product).
func analyticsRoutes(svc *analytics.Service) []Route {
	if svc == nil {
		return nil
	}
	var names []string
	for _, m := range analytics.Metrics() {
		names = append(names, string(m))
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := AnalyticsWindowView{From: t, To: t.AddDate(0, 0, 3)}
	total := int64(12)
	ex := ProductAnalyticsView{Object: "product_analytics", Environment: "live", Scope: "platform", Period: "day", Window: w,
		AsOf: t.AddDate(0, 0, 2).Add(15 * time.Hour),
		Buckets: []AnalyticsBucketView{{Start: t, End: t.AddDate(0, 0, 1), Complete: true},
			{Start: t.AddDate(0, 0, 1), End: t.AddDate(0, 0, 2), Complete: true}, {Start: t.AddDate(0, 0, 2), End: t.AddDate(0, 0, 3)}},
		Metrics: []AnalyticsMetricView{
			{Metric: string(analytics.Signups), Description: analytics.Catalogue()[0].Description, Source: analytics.Catalogue()[0].Source,
				Aggregation: "count", Window: w, Status: "observed", Total: &total, Counts: []int64{5, 0, 7}},
			{Metric: string(analytics.OrdersSettled), Description: "Marketplace orders settled: the license entitlement each settled order " +
				"issued, by issue time.", Source: "marketplace_entitlements.created_at", EnvironmentScoped: true, Aggregation: "count",
				Window: w, Status: "no_data"}}}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/analytics/product", OperationID: "getProductAnalytics", Tag: transport.TagArchitecture,
			Summary: "Read product analytics",
			Description: "Counts of the platform's own records per period over a window, in the caller's environment, across every " +
				"tenant and workspace (scope platform): the platform operator's view, for a session holding the super_admin " +
				"platform role. A workspace role, OWNER included, grants nothing here (403 ACCESS_DENIED), and API keys are " +
				"refused (403 ACCESS_DENIED, details.credential api_key). The answer names no tenant, workspace, user or record. " +
				"Nothing is estimated: every number is a count of stored rows, done by the database, each metric stated with its " +
				"source. period is day, week (Monday to Monday) or month, in UTC (default day); from and to are the window's " +
				"first and last calendar days (YYYY-MM-DD; default to today, from 30 periods back), widened to whole periods; to " +
				"may not be after today (details.reason future), from not after to (after_to), and the window holds at most 366 " +
				"buckets (too_many_buckets, details.limit). metrics narrows the answer to a comma-separated list of: " +
				strings.Join(names, ", ") + " (an unknown one is refused, details.reason unknown_metric). Each refusal is 400 " +
				"INVALID_INPUT naming the parameter. A metric with no row in the window answers status no_data with total and " +
				"counts null, never an observed zero; one with rows answers status observed, the window's total and one exact " +
				"count per bucket. signups and workspaces_created count records that exist in both environments " +
				"(environmentScoped false); active_workspaces counts distinct workspaces with at least one successful mutation " +
				"through the API in the bucket, its total the distinct workspaces of the window. The bucket holding asOf is not " +
				"complete: its counts are those so far.",
			Auth: transport.AuthSession, SuperAdmin: true, Private: true, Idempotency: transport.IdempotencyNone,
			Query: []transport.Param{
				{Name: "period", Description: "day, week or month (default day).", Example: "week"},
				{Name: "from", Description: "The window's first calendar day, YYYY-MM-DD (UTC); default: 30 periods back.", Example: "2026-01-01"},
				{Name: "to", Description: "The window's last calendar day, YYYY-MM-DD (UTC), not after today; default today.", Example: "2026-01-31"},
				{Name: "metrics", Description: "A comma-separated list of metrics to answer; default all.", Example: "signups,active_workspaces"},
			},
			Response: ex,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				q := analytics.Query{Period: analytics.Period(c.Query("period")), From: c.Query("from"), To: c.Query("to")}
				if list := c.Query("metrics"); list != "" {
					for _, m := range strings.Split(list, ",") {
						q.Metrics = append(q.Metrics, analytics.Metric(strings.TrimSpace(m)))
					}
				}
				r, err := svc.Product(ctx, c.Tx, c.Principal, c.Authority, q)
				if err != nil {
					return nil, err
				}
				return productAnalyticsView(r), nil
			}},
	}
}
