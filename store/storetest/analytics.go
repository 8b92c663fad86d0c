package storetest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/store"
)

// exerciseAnalytics covers analytics.ReadStore: on an empty database
// every metric of the catalogue counts nothing in every period (so each
// metric's SQL runs on the dialect); rows are placed in day, week
// (Monday) and month buckets by their UTC time, fractions of a second
// included, the window's start included and its end excluded; an
// environment-scoped metric counts its environment only, users in
// either; active workspaces counts distinct workspaces of successful
// receipts per bucket, and over the window for its total; an unknown
// metric is INVALID_INPUT.
func exerciseAnalytics(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	read := db.Read()
	window := func(p analytics.Period, from, to string) analytics.CountQuery {
		f, _ := time.Parse(analytics.DateLayout, from)
		e, _ := time.Parse(analytics.DateLayout, to)
		return analytics.CountQuery{Environment: access.Test, Period: p, From: f, To: e}
	}
	for _, m := range analytics.Metrics() {
		for _, p := range analytics.Periods() {
			q := window(p, "2026-01-01", "2026-06-01")
			q.Metric = m
			c, err := read.AnalyticsCount(ctx, q)
			if err != nil || c.Total != 0 || len(c.ByStart) != 0 {
				t.Errorf("%s by %s on an empty database = %+v, %v", m, p, c, err)
			}
		}
	}
	q := window(analytics.Day, "2026-01-01", "2026-02-01")
	q.Metric = "revenue"
	if _, err := read.AnalyticsCount(ctx, q); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("an unknown metric: %v, want INVALID_INPUT", err)
	}

	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	seedWorkspaces(t, db)
	times := []string{"2026-03-02 00:00:00", "2026-03-08 23:59:59.999999", "2026-03-09 00:00:00.5", "2026-04-01 12:00:00", "2026-03-01 23:59:59.999999"}
	for i, s := range times {
		clock.Set(at(s))
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.UserInsert(ctx, fmt.Sprintf("usr_%d", i), "ten_1", fmt.Sprintf("u%d@example.com", i), "U")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	receipts := []struct {
		when, ws, env string
		status        int
	}{
		{"2026-03-02 09:00:00", "ws_1", "test", 200},
		{"2026-03-02 10:00:00", "ws_1", "test", 201},
		{"2026-03-02 11:00:00", "ws_2", "test", 202},
		{"2026-03-03 11:00:00", "ws_2", "test", 403}, // refused: not active
		{"2026-03-03 12:00:00", "ws_1", "test", 200}, // active again on the 3rd
		{"2026-03-03 13:00:00", "", "test", 200},     // no workspace
		{"2026-03-04 13:00:00", "ws_3", "live", 200}, // the other environment
		{"2026-03-04 14:00:00", "ws_2", "test", 500}, // failed: not active
		{"2026-03-09 00:00:00", "ws_2", "test", 200}, // the next week
		{"2026-03-01 23:59:59.999999", "ws_3", "test", 200},
	}
	for i, r := range receipts {
		clock.Set(at(r.when))
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.ReceiptInsert(ctx, idempotency.Receipt{RequestID: fmt.Sprintf("req_%d", i), TenantID: "ten_1", WorkspaceID: r.ws,
				Environment: r.env, Principal: "user:usr_0", Method: "POST", OperationID: "op", Status: r.status})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, env := range []access.Environment{access.Test, access.Live, access.Test} {
		when := at(times[i])
		tch := attribution.Touch{Source: "direct", At: when}
		a := attribution.Attribution{ID: fmt.Sprintf("atr_%d", i), Scope: access.Scope{TenantID: "ten_1", Environment: env},
			UserID: fmt.Sprintf("usr_%d", i), First: tch, Last: tch, TouchCount: 1, Version: 1}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AttributionInsert(ctx, a) }); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		name   string
		m      analytics.Metric
		env    access.Environment
		p      analytics.Period
		from   string
		to     string
		counts map[string]int64
		total  int64
	}{
		{"signups by day", analytics.Signups, access.Test, analytics.Day, "2026-03-02", "2026-03-10",
			map[string]int64{"2026-03-02": 1, "2026-03-08": 1, "2026-03-09": 1}, 3},
		{"signups in live mode", analytics.Signups, access.Live, analytics.Day, "2026-03-02", "2026-03-10",
			map[string]int64{"2026-03-02": 1, "2026-03-08": 1, "2026-03-09": 1}, 3},
		{"signups by week", analytics.Signups, access.Test, analytics.Week, "2026-02-23", "2026-03-16",
			map[string]int64{"2026-02-23": 1, "2026-03-02": 2, "2026-03-09": 1}, 4},
		{"signups by month", analytics.Signups, access.Test, analytics.Month, "2026-03-01", "2026-05-01",
			map[string]int64{"2026-03-01": 4, "2026-04-01": 1}, 5},
		{"active workspaces by day", analytics.ActiveWorkspaces, access.Test, analytics.Day, "2026-03-02", "2026-03-10",
			map[string]int64{"2026-03-02": 2, "2026-03-03": 1, "2026-03-09": 1}, 2},
		{"active workspaces by week", analytics.ActiveWorkspaces, access.Test, analytics.Week, "2026-02-23", "2026-03-16",
			map[string]int64{"2026-02-23": 1, "2026-03-02": 2, "2026-03-09": 1}, 3},
		{"active workspaces live", analytics.ActiveWorkspaces, access.Live, analytics.Month, "2026-03-01", "2026-04-01",
			map[string]int64{"2026-03-01": 1}, 1},
		{"attributed users test", analytics.AttributedUsers, access.Test, analytics.Month, "2026-03-01", "2026-04-01",
			map[string]int64{"2026-03-01": 2}, 2},
		{"attributed users live", analytics.AttributedUsers, access.Live, analytics.Week, "2026-03-02", "2026-03-09",
			map[string]int64{"2026-03-02": 1}, 1},
	} {
		q := window(c.p, c.from, c.to)
		q.Metric, q.Environment = c.m, c.env
		got, err := read.AnalyticsCount(ctx, q)
		if err != nil || got.Total != c.total || !maps.Equal(got.ByStart, c.counts) {
			t.Errorf("%s = %+v, %v; want %v total %d", c.name, got, err, c.counts, c.total)
		}
	}
}
