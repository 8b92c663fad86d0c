package analytics_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/fault"
)

func day(s string) time.Time {
	t, err := time.Parse(analytics.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func starts(w analytics.Window) []string {
	var out []string
	for _, b := range w.Buckets {
		out = append(out, b.Start.Format(analytics.DateLayout))
	}
	return out
}

// TestWindow: buckets cover whole periods from the one holding from to
// the one holding to; defaults, and every refusal with its field and
// reason.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 3, 18, 15, 30, 0, 0, time.UTC) // a Wednesday
	w, defs, err := analytics.Query{From: "2026-03-14", To: "2026-03-16"}.Window(now)
	if err != nil {
		t.Fatal(err)
	}
	if w.Period != analytics.Day || !slices.Equal(starts(w), []string{"2026-03-14", "2026-03-15", "2026-03-16"}) ||
		!w.From.Equal(day("2026-03-14")) || !w.To.Equal(day("2026-03-17")) || !w.AsOf.Equal(now) || len(defs) != len(analytics.Catalogue()) {
		t.Fatalf("days = %+v", w)
	}
	for i, b := range w.Buckets {
		if !b.End.Equal(b.Start.AddDate(0, 0, 1)) || (i > 0 && !b.Start.Equal(w.Buckets[i-1].End)) {
			t.Fatalf("bucket %d = %+v", i, b)
		}
	}
	// Weeks start on Monday: from a Sunday to a Wednesday spans two weeks.
	w, _, err = analytics.Query{Period: analytics.Week, From: "2026-03-08", To: "2026-03-18"}.Window(now)
	if err != nil || !slices.Equal(starts(w), []string{"2026-03-02", "2026-03-09", "2026-03-16"}) || !w.To.Equal(day("2026-03-23")) {
		t.Fatalf("weeks = %+v, %v", w, err)
	}
	// Months from the first day; the current one is included whole.
	w, _, err = analytics.Query{Period: analytics.Month, From: "2025-12-31"}.Window(now)
	if err != nil || !slices.Equal(starts(w), []string{"2025-12-01", "2026-01-01", "2026-02-01", "2026-03-01"}) || !w.To.Equal(day("2026-04-01")) {
		t.Fatalf("months = %+v, %v", w, err)
	}
	// Defaults: to is today, from DefaultBuckets periods back.
	for _, p := range analytics.Periods() {
		w, _, err := analytics.Query{Period: p}.Window(now)
		if err != nil || len(w.Buckets) != analytics.DefaultBuckets || !w.Buckets[len(w.Buckets)-1].Start.Equal(p.Start(now)) {
			t.Fatalf("%s default = %d buckets ending %v, %v", p, len(w.Buckets), w.To, err)
		}
	}
	// Exactly MaxBuckets days is allowed; one more is not.
	if w, _, err := (analytics.Query{From: "2025-03-18", To: "2026-03-18"}).Window(now); err != nil || len(w.Buckets) != analytics.MaxBuckets {
		t.Fatalf("366 days: %d, %v", len(w.Buckets), err)
	}
	for _, c := range []struct {
		name          string
		q             analytics.Query
		field, reason string
	}{
		{"period", analytics.Query{Period: "hour"}, "period", ""},
		{"from layout", analytics.Query{From: "2026-3-1"}, "from", ""},
		{"to layout", analytics.Query{To: "2026-03-18T00:00:00Z"}, "to", ""},
		{"future", analytics.Query{To: "2026-03-19"}, "to", analytics.ReasonFuture},
		{"after to", analytics.Query{From: "2026-03-10", To: "2026-03-09"}, "from", analytics.ReasonAfterTo},
		{"too many", analytics.Query{From: "2025-03-17", To: "2026-03-18"}, "from", analytics.ReasonTooManyBuckets},
		{"too many weeks", analytics.Query{Period: analytics.Week, From: "2010-01-01"}, "from", analytics.ReasonTooManyBuckets},
		{"unknown metric", analytics.Query{Metrics: []analytics.Metric{analytics.Signups, "revenue"}}, "metrics", "unknown_metric"},
	} {
		_, _, err := c.q.Window(now)
		fe, ok := err.(*fault.Error)
		if !ok || fe.Code != fault.InvalidInput || fe.Details["field"] != c.field || (c.reason != "" && fe.Details["reason"] != c.reason) {
			t.Errorf("%s: %v, want INVALID_INPUT %s %s", c.name, err, c.field, c.reason)
		}
	}
	// A metrics filter keeps the asked order, once each.
	_, defs, err = analytics.Query{Metrics: []analytics.Metric{analytics.ReleasesCreated, analytics.Signups, analytics.ReleasesCreated}}.Window(now)
	if err != nil || len(defs) != 2 || defs[0].Metric != analytics.ReleasesCreated || defs[1].Metric != analytics.Signups {
		t.Fatalf("filtered = %+v, %v", defs, err)
	}
}

// TestCatalogue: every metric is named once; only users and workspaces
// are not environment-scoped; only active workspaces is distinct.
func TestCatalogue(t *testing.T) {
	seen := map[analytics.Metric]bool{}
	for _, d := range analytics.Catalogue() {
		if seen[d.Metric] || d.Description == "" || d.Source == "" {
			t.Errorf("definition %+v", d)
		}
		seen[d.Metric] = true
		if want := d.Metric != analytics.Signups && d.Metric != analytics.WorkspacesCreated; d.EnvironmentScoped != want {
			t.Errorf("%s environment-scoped = %v", d.Metric, d.EnvironmentScoped)
		}
		if d.Distinct != (d.Metric == analytics.ActiveWorkspaces) {
			t.Errorf("%s distinct = %v", d.Metric, d.Distinct)
		}
	}
}

// fakeReads answers fixed counts per metric and records the queries.
type fakeReads struct {
	now     time.Time
	counts  map[analytics.Metric]analytics.Count
	queries []analytics.CountQuery
}

func (f *fakeReads) Now() time.Time { return f.now }

func (f *fakeReads) AnalyticsCount(_ context.Context, q analytics.CountQuery) (analytics.Count, error) {
	f.queries = append(f.queries, q)
	return f.counts[q.Metric], nil
}

// TestProduct: a metric without rows says no_data with no counts; one
// with rows places them in their buckets, zeros included, and keeps the
// store's total (distinct for active workspaces); only super_admin
// sessions read.
func TestProduct(t *testing.T) {
	ctx := context.Background()
	st := &fakeReads{now: time.Date(2026, 3, 18, 15, 0, 0, 0, time.UTC), counts: map[analytics.Metric]analytics.Count{
		analytics.Signups:          {ByStart: map[string]int64{"2026-03-16": 2, "2026-03-18": 1}, Total: 3},
		analytics.ActiveWorkspaces: {ByStart: map[string]int64{"2026-03-16": 2, "2026-03-17": 2}, Total: 3},
	}}
	p := &access.Principal{Kind: access.CredentialSession, UserID: "usr_root", Environment: access.Test}
	admin := &access.Authority{SuperAdmin: true}
	r, err := analytics.New().Product(ctx, st, p, admin, analytics.Query{From: "2026-03-16", To: "2026-03-18"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Environment != access.Test || len(r.Series) != len(analytics.Catalogue()) || len(st.queries) != len(r.Series) {
		t.Fatalf("report = %+v", r)
	}
	for _, q := range st.queries {
		if q.Environment != access.Test || q.Period != analytics.Day || !q.From.Equal(day("2026-03-16")) || !q.To.Equal(day("2026-03-19")) {
			t.Fatalf("query = %+v", q)
		}
	}
	for _, s := range r.Series {
		switch s.Definition.Metric {
		case analytics.Signups:
			if s.Status != analytics.StatusObserved || s.Total != 3 || !slices.Equal(s.Counts, []int64{2, 0, 1}) {
				t.Errorf("signups = %+v", s)
			}
		case analytics.ActiveWorkspaces:
			if s.Status != analytics.StatusObserved || s.Total != 3 || !slices.Equal(s.Counts, []int64{2, 2, 0}) {
				t.Errorf("active workspaces = %+v", s)
			}
		default:
			if s.Status != analytics.StatusNoData || s.Total != 0 || s.Counts != nil {
				t.Errorf("%s without rows = %+v", s.Definition.Metric, s)
			}
		}
	}
	st.queries = nil
	key := &access.Principal{Kind: access.CredentialAPIKey, KeyID: "key_1", UserID: "usr_root", Environment: access.Test}
	for _, c := range []struct {
		p *access.Principal
		a *access.Authority
	}{{p, nil}, {p, &access.Authority{Roles: []access.Role{access.RoleOwner}}}, {key, admin}, {nil, admin}} {
		if _, err := analytics.New().Product(ctx, st, c.p, c.a, analytics.Query{}); !fault.Is(err, fault.AccessDenied) {
			t.Errorf("%+v %+v: %v", c.p, c.a, err)
		}
	}
	if len(st.queries) != 0 {
		t.Fatalf("a refused read counted %d metrics", len(st.queries))
	}
}
