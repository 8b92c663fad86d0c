package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// analyticsRoot bootstraps a tenant whose owner holds super_admin and
// signs in again.
func analyticsRoot(t *testing.T, s *platformtest.System) (person, platform.Bootstrap) {
	t.Helper()
	root := bootstrapOwner(t, s, "Root")
	if err := s.P.GrantSuperAdmin(context.Background(), root.email); err != nil {
		t.Fatal(err)
	}
	root.cookie, _ = s.Login(root.email, testPassword)
	return person{email: root.email, cookie: root.cookie, userID: root.boot.OwnerID}, root.boot
}

// productAnalytics reads GET /api/v1/analytics/product as p in env with
// query q, failing unless it answers 200.
func productAnalytics(t *testing.T, s *platformtest.System, p person, env access.Environment, q url.Values) (api.ProductAnalyticsView, []byte) {
	t.Helper()
	r := as(s, p, env, http.MethodGet, "/api/v1/analytics/product?"+q.Encode(), "", nil)
	var v api.ProductAnalyticsView
	aiOK(t, "product analytics "+q.Encode(), r, http.StatusOK, &v)
	return v, r.Body
}

// metricRow is one row a metric counts: when, and the counted subject
// (the workspace, for a distinct metric).
type metricRow struct {
	At      time.Time `bun:"at"`
	Subject string    `bun:"subject"`
}

// metricRowsSQL is the test's own reading of each metric's definition:
// the rows it counts, ungrouped, of the environment (the first argument,
// unused by the two metrics of records without one). The test places
// them in buckets itself.
var metricRowsSQL = map[string]string{
	"signups":            `SELECT created_at AS at, id AS subject FROM users WHERE ? <> ''`,
	"workspaces_created": `SELECT created_at AS at, id AS subject FROM workspaces WHERE ? <> ''`,
	"active_workspaces": `SELECT created_at AS at, workspace_id AS subject FROM request_receipts WHERE environment = ?
		AND status >= 200 AND status < 300 AND workspace_id <> ''`,
	"attributed_users":           `SELECT first_at AS at, id AS subject FROM attributions WHERE environment = ?`,
	"projects_created":           `SELECT created_at AS at, id AS subject FROM projects WHERE environment = ?`,
	"submissions_created":        `SELECT created_at AS at, id AS subject FROM submissions WHERE environment = ?`,
	"generations_created":        `SELECT created_at AS at, id AS subject FROM generation_operations WHERE environment = ?`,
	"generations_completed":      `SELECT ended_at AS at, id AS subject FROM generation_operations WHERE environment = ? AND status = 'completed'`,
	"sound_operations_created":   `SELECT created_at AS at, id AS subject FROM sound_operations WHERE environment = ?`,
	"sound_operations_completed": `SELECT ended_at AS at, id AS subject FROM sound_operations WHERE environment = ? AND status = 'completed'`,
	"ai_operations_created":      `SELECT created_at AS at, id AS subject FROM ai_operations WHERE environment = ?`,
	"marketplace_orders_created": `SELECT created_at AS at, id AS subject FROM marketplace_orders WHERE environment = ?`,
	"marketplace_orders_settled": `SELECT created_at AS at, id AS subject FROM marketplace_entitlements WHERE environment = ?`,
	"checkouts_created":          `SELECT created_at AS at, id AS subject FROM billing_checkouts WHERE environment = ?`,
	"checkouts_paid":             `SELECT paid_at AS at, id AS subject FROM billing_checkouts WHERE environment = ? AND paid_at IS NOT NULL`,
	"credit_purchases_created":   `SELECT created_at AS at, id AS subject FROM transaction_intents WHERE environment = ? AND purpose = 'credit_purchase'`,
	"credit_purchases_settled": `SELECT m.created_at AS at, m.id AS subject FROM ledger_movements m WHERE m.environment = ? AND m.type = 'grant'
		AND m.ledger = 'credits' AND m.reference IN (SELECT 'grant:' || business_reference FROM transaction_intents WHERE purpose = 'credit_purchase')`,
	"rewards_allocated": `SELECT allocated_at AS at, id AS subject FROM rewards WHERE environment = ?`,
	"reward_payouts":    `SELECT distributed_at AS at, id AS subject FROM rewards WHERE environment = ? AND distributed_at IS NOT NULL`,
	"releases_created":  `SELECT created_at AS at, id AS subject FROM releases WHERE environment = ?`,
}

// checkReport fails unless every metric of v matches the test's own
// count of its rows: per bucket (distinct subjects for a distinct
// metric), the window's total, no_data with null total and counts when
// the window holds none. It returns the window totals by metric.
func checkReport(t *testing.T, s *platformtest.System, v api.ProductAnalyticsView, raw []byte, env access.Environment) map[string]int64 {
	t.Helper()
	var doc struct {
		Data struct {
			Metrics []map[string]json.RawMessage `json:"metrics"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Data.Metrics) != len(v.Metrics) {
		t.Fatalf("raw report: %v", err)
	}
	if v.Environment != string(env) || v.Scope != "platform" || len(v.Buckets) == 0 || !v.Window.From.Equal(v.Buckets[0].Start) ||
		!v.Window.To.Equal(v.Buckets[len(v.Buckets)-1].End) {
		t.Fatalf("report = %+v", v)
	}
	totals := map[string]int64{}
	for i, m := range v.Metrics {
		query, ok := metricRowsSQL[m.Metric]
		if !ok {
			t.Fatalf("metric %s has no reading of its rows in this test", m.Metric)
		}
		var rows []metricRow
		if err := s.DB.Read().IDB().NewRaw(query, string(env)).Scan(context.Background(), &rows); err != nil &&
			!strings.Contains(err.Error(), "no rows") {
			t.Fatalf("%s rows: %v", m.Metric, err)
		}
		distinct := m.Aggregation == "distinct_workspaces"
		counts := make([]int64, len(v.Buckets))
		window := map[string]bool{}
		var total int64
		for i, b := range v.Buckets {
			seen := map[string]bool{}
			for _, r := range rows {
				if r.At.Before(b.Start) || !r.At.Before(b.End) {
					continue
				}
				if distinct && seen[r.Subject] {
					continue
				}
				seen[r.Subject] = true
				counts[i]++
				if !distinct || !window[r.Subject] {
					total++
				}
				window[r.Subject] = true
			}
		}
		totals[m.Metric] = total
		if !m.Window.From.Equal(v.Window.From) || !m.Window.To.Equal(v.Window.To) {
			t.Errorf("%s window = %+v", m.Metric, m.Window)
		}
		if total == 0 {
			if m.Status != "no_data" || m.Total != nil || m.Counts != nil || string(doc.Data.Metrics[i]["total"]) != "null" ||
				string(doc.Data.Metrics[i]["counts"]) != "null" {
				t.Errorf("%s in %s with no rows = %+v", m.Metric, env, m)
			}
			continue
		}
		if m.Status != "observed" || m.Total == nil || *m.Total != total || fmt.Sprint(m.Counts) != fmt.Sprint(counts) {
			t.Errorf("%s in %s = %s %v %v; rows say %d %v", m.Metric, env, m.Status, deref(m.Total), m.Counts, total, counts)
		}
	}
	return totals
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestProductAnalyticsEmpty: on a system where nothing happened every
// environment-scoped metric says no_data in both modes (total and counts
// null), users and workspaces are counted from their rows, and a window
// before any record says no_data for every metric.
func TestProductAnalyticsEmpty(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		root, _ := analyticsRoot(t, s)
		for _, env := range []access.Environment{access.Test, access.Live} {
			v, raw := productAnalytics(t, s, root, env, url.Values{})
			if len(v.Metrics) != len(analytics.Catalogue()) || len(v.Buckets) != analytics.DefaultBuckets || v.Period != "day" {
				t.Fatalf("default report = %+v", v)
			}
			totals := checkReport(t, s, v, raw, env)
			for _, m := range v.Metrics {
				if m.EnvironmentScoped && m.Status != "no_data" {
					t.Errorf("%s on an empty system in %s = %+v", m.Metric, env, m)
				}
			}
			if totals["signups"] != int64(count(t, s, `SELECT COUNT(*) FROM users`)) || totals["signups"] < 2 ||
				totals["workspaces_created"] != int64(count(t, s, `SELECT COUNT(*) FROM workspaces`)) {
				t.Fatalf("users and workspaces = %v", totals)
			}
			last := v.Buckets[len(v.Buckets)-1]
			if last.Complete || !v.Buckets[0].Complete || !last.Start.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
				t.Fatalf("buckets = %+v", v.Buckets)
			}
		}
		v, raw := productAnalytics(t, s, root, access.Live, url.Values{"period": {"month"}, "from": {"2025-01-01"}, "to": {"2025-12-31"}})
		checkReport(t, s, v, raw, access.Live)
		for _, m := range v.Metrics {
			if m.Status != "no_data" {
				t.Errorf("%s before any record = %+v", m.Metric, m)
			}
		}
		if len(v.Buckets) != 12 || !v.Buckets[11].Complete {
			t.Fatalf("a past year by month = %+v", v.Buckets)
		}
	})
}

// TestProductAnalyticsCounts: after activity through the real routes
// over several days and both environments (signups, onboarding,
// attribution, projects, a music generation completed by the provider, a
// sound analysis, a release), every metric of every report (by day, week
// and month, test and live mode, narrowed to some metrics) equals the
// test's own count of the rows.
func TestProductAnalyticsCounts(t *testing.T) {
	t.Parallel()
	opts := platformtest.Options{Music: true, Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond, Workers: 4}}
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		root, _ := analyticsRoot(t, s)
		// Day one (2026-01-02): a signup who onboards and says where they
		// came from, a project, a generation and a sound analysis of the
		// bootstrapped workspace in test mode.
		bob := signIn(t, s, "bob@example.com", "Bob")
		aiOK(t, "bob's touch", touch(s, bob, access.Live, "", map[string]any{"source": "newsletter"}), http.StatusCreated, nil)
		onboard(t, s, &bob, "Bob Studio")
		aiOK(t, "root's touch", touch(s, root, access.Test, "", map[string]any{"source": "direct"}), http.StatusCreated, nil)
		project := func(key, title string) api.ProjectView {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Key: key,
				Body: map[string]any{"title": title, "type": "music_video", "description": "d", "visibility": "workspace"}})
			var p api.ProjectView
			aiOK(t, "project "+title, r, http.StatusCreated, &p)
			return p
		}
		project(s.Boot.TestKey, "Day one")
		acc := acceptedID(t, generate(s, "gen-analytics", map[string]any{"prompt": "A calm piano piece"}))
		waitTasksA(t, s, 1)
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		waitOp(t, s, acc.OperationID, "completed", func(v api.OperationView) bool { return v.Status == "completed" })
		const rate = 8000
		wav := uploadWAV(t, s, pcmWAV(rate, rate, func(i int) float64 { return 0.1 }))
		if v := analyzed(t, s, "an-analytics", map[string]any{"input": map[string]any{"assetId": wav}}); v.Status != "completed" {
			t.Fatalf("analysis = %+v", v)
		}

		// Day four (2026-01-05, a Monday): a live project, a test project
		// released, another signup, a touch replacing bob's last.
		s.Clock.Advance(72 * time.Hour)
		project(s.Boot.LiveKey, "Live one")
		p := project(s.Boot.TestKey, "Day four")
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/releases", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "rel-analytics"},
			Body: map[string]any{"target": map[string]string{"type": "project", "id": p.ID}, "title": "Day four",
				"releaseDate": s.Clock.Now().UTC().Format(time.DateOnly), "territories": []string{"WW"}, "distributor": "Example"}})
		aiOK(t, "release", r, http.StatusCreated, nil)
		signIn(t, s, "carol@example.com", "Carol")
		aiOK(t, "bob's second touch", touch(s, bob, access.Live, "", map[string]any{"source": "direct"}), http.StatusOK, nil)

		type want struct {
			env     access.Environment
			q       url.Values
			buckets int
			totals  map[string]int64
		}
		for _, c := range []want{
			{access.Test, url.Values{"from": {"2026-01-01"}, "to": {"2026-01-05"}}, 5,
				map[string]int64{"projects_created": 2, "generations_created": 1, "generations_completed": 1, "sound_operations_created": 1,
					"sound_operations_completed": 1, "releases_created": 1, "attributed_users": 1, "signups": 4}},
			{access.Live, url.Values{"period": {"week"}, "from": {"2025-12-29"}, "to": {"2026-01-05"}}, 2,
				map[string]int64{"projects_created": 1, "generations_created": 0, "attributed_users": 1, "releases_created": 0}},
			{access.Test, url.Values{"period": {"month"}, "from": {"2025-11-15"}}, 3, map[string]int64{"projects_created": 2}},
			{access.Live, url.Values{"metrics": {"active_workspaces,signups"}, "from": {"2026-01-02"}}, 4, map[string]int64{}},
		} {
			v, raw := productAnalytics(t, s, root, c.env, c.q)
			if len(v.Buckets) != c.buckets {
				t.Fatalf("%s %v: %d buckets", c.env, c.q, len(v.Buckets))
			}
			totals := checkReport(t, s, v, raw, c.env)
			for m, n := range c.totals {
				if totals[m] != n {
					t.Errorf("%s %v: %s = %d, seeded %d", c.env, c.q, m, totals[m], n)
				}
			}
			if c.q.Get("metrics") != "" && (len(v.Metrics) != 2 || v.Metrics[0].Metric != "active_workspaces" || v.Metrics[1].Metric != "signups") {
				t.Errorf("narrowed report = %+v", v.Metrics)
			}
		}
		// Active workspaces: the bootstrapped workspace's key and bob's
		// workspace acted in test and live mode; each is counted once.
		v, raw := productAnalytics(t, s, root, access.Test, url.Values{"period": {"week"}, "from": {"2026-01-01"}, "to": {"2026-01-05"}})
		if totals := checkReport(t, s, v, raw, access.Test); totals["active_workspaces"] < 1 {
			t.Errorf("no active workspace in test mode: %v", totals)
		}
	})
}

// TestProductAnalyticsAccess: only a super_admin's session reads product
// analytics; a workspace OWNER, a VIEWER, another tenant's owner and an
// API key (even root's own) are 403 ACCESS_DENIED, an anonymous call
// 401; a bad query is 400 INVALID_INPUT naming the parameter; and none of
// it changes what root reads.
func TestProductAnalyticsAccess(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		root, rootBoot := analyticsRoot(t, s)
		viewer := join(t, s, "viewer@example.com", "Viewer", invite(t, s, root, "viewer@example.com", "VIEWER"))
		owner := join(t, s, "coowner@example.com", "Co Owner", invite(t, s, root, "coowner@example.com", "OWNER"))
		other := bootstrapOwner(t, s, "Elsewhere")
		q := url.Values{"from": {"2026-01-01"}, "to": {"2026-01-02"}}
		path := "/api/v1/analytics/product?" + q.Encode()
		_, before := productAnalytics(t, s, root, access.Test, q)
		for _, p := range []person{viewer, owner, {email: other.email, cookie: other.cookie}} {
			for _, env := range []access.Environment{access.Test, access.Live} {
				wantCode(t, p.email+" in "+string(env), as(s, p, env, http.MethodGet, path, "", nil), http.StatusForbidden, "ACCESS_DENIED")
			}
		}
		for _, key := range []string{rootBoot.TestKey, rootBoot.LiveKey, other.boot.TestKey} {
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Key: key})
			wantCode(t, "an API key", r, http.StatusForbidden, "ACCESS_DENIED")
			if detail(r, "credential") != "api_key" {
				t.Errorf("an API key's refusal: %s", r.Body)
			}
		}
		wantCode(t, "anonymous", s.Do(platformtest.Request{Method: http.MethodGet, Path: path}), http.StatusUnauthorized, "UNAUTHENTICATED")
		for _, c := range []struct {
			q             string
			field, reason string
		}{
			{"period=hour", "period", ""},
			{"from=2026-1-1", "from", ""},
			{"to=tomorrow", "to", ""},
			{"to=2026-01-03", "to", analytics.ReasonFuture},
			{"from=2026-01-02&to=2026-01-01", "from", analytics.ReasonAfterTo},
			{"from=2024-12-31&to=2026-01-01", "from", analytics.ReasonTooManyBuckets},
			{"period=week&from=2018-01-01", "from", analytics.ReasonTooManyBuckets},
			{"metrics=signups,revenue", "metrics", "unknown_metric"},
			{"metrics=signups,", "metrics", "unknown_metric"},
		} {
			r := as(s, root, access.Test, http.MethodGet, "/api/v1/analytics/product?"+c.q, "", nil)
			wantCode(t, c.q, r, http.StatusBadRequest, "INVALID_INPUT")
			if detail(r, "field") != c.field || (c.reason != "" && detail(r, "reason") != c.reason) {
				t.Errorf("%s: %s", c.q, r.Body)
			}
		}
		if _, after := productAnalytics(t, s, root, access.Test, q); string(after[:strings.Index(string(after), `"meta"`)]) !=
			string(before[:strings.Index(string(before), `"meta"`)]) {
			t.Fatalf("the refused calls changed the report:\n%s\n%s", before, after)
		}
	})
}
