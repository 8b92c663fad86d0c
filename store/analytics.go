package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/creatormusic/platform/analytics"
	"github.com/creatormusic/platform/fault"
)

var _ analytics.ReadStore = (*Tx)(nil)

// metricSource is where a product analytics metric's rows are: the FROM
// clause (the counted table aliased t), the timestamp column that places
// a row in a bucket, the condition beyond the window, whether the table
// is of an environment (t.environment), and for a distinct metric the
// expression counted once.
type metricSource struct {
	from, at, where string
	env             bool
	distinct        string
}

// metricSources is the SQL of every analytics metric (analytics.Catalogue
// states each in words).
func metricSources() map[analytics.Metric]metricSource {
	table := func(name, at string) metricSource { return metricSource{from: name + " t", at: "t." + at, env: true} }
	cond := func(m metricSource, where string) metricSource { m.where = where; return m }
	return map[analytics.Metric]metricSource{
		analytics.Signups:           {from: "users t", at: "t.created_at"},
		analytics.WorkspacesCreated: {from: "workspaces t", at: "t.created_at"},
		analytics.ActiveWorkspaces: {from: "request_receipts t", at: "t.created_at", env: true,
			where: "t.status BETWEEN 200 AND 299 AND t.workspace_id <> ''", distinct: "t.workspace_id"},
		analytics.AttributedUsers:          table("attributions", "first_at"),
		analytics.ProjectsCreated:          table("projects", "created_at"),
		analytics.SubmissionsCreated:       table("submissions", "created_at"),
		analytics.GenerationsCreated:       table("generation_operations", "created_at"),
		analytics.GenerationsCompleted:     cond(table("generation_operations", "ended_at"), "t.status = 'completed'"),
		analytics.SoundOperationsCreated:   table("sound_operations", "created_at"),
		analytics.SoundOperationsCompleted: cond(table("sound_operations", "ended_at"), "t.status = 'completed'"),
		analytics.AIOperationsCreated:      table("ai_operations", "created_at"),
		analytics.OrdersCreated:            table("marketplace_orders", "created_at"),
		analytics.OrdersSettled:            table("marketplace_entitlements", "created_at"),
		analytics.CheckoutsCreated:         table("billing_checkouts", "created_at"),
		analytics.CheckoutsPaid:            table("billing_checkouts", "paid_at"),
		analytics.CreditPurchasesCreated:   cond(table("transaction_intents", "created_at"), "t.purpose = 'credit_purchase'"),
		analytics.CreditPurchasesSettled: {from: `ledger_movements t JOIN transaction_intents i
			ON t.reference = 'grant:' || i.business_reference AND i.purpose = 'credit_purchase' AND i.environment = t.environment`,
			at: "t.created_at", env: true, where: "t.ledger = 'credits' AND t.type = 'grant'"},
		analytics.RewardsAllocated: table("rewards", "allocated_at"),
		analytics.RewardPayouts:    table("rewards", "distributed_at"),
		analytics.ReleasesCreated:  table("releases", "created_at"),
	}
}

// bucketKey is the SQL of the start of the period holding the timestamp
// at, as a calendar day (YYYY-MM-DD, UTC): SQLite's date functions read
// the stored text with its offset; PostgreSQL truncates in UTC (its weeks
// start on Monday, as ISO 8601's).
func (tx *Tx) bucketKey(p analytics.Period, at string) string {
	if tx.Dialect() == Postgres {
		utc := at + " AT TIME ZONE 'UTC'"
		switch p {
		case analytics.Week:
			return "to_char(date_trunc('week', " + utc + "), 'YYYY-MM-DD')"
		case analytics.Month:
			return "to_char(date_trunc('month', " + utc + "), 'YYYY-MM-DD')"
		}
		return "to_char(" + utc + ", 'YYYY-MM-DD')"
	}
	switch p {
	case analytics.Week:
		return "date(" + at + ", 'weekday 0', '-6 days')"
	case analytics.Month:
		return "strftime('%Y-%m-01', " + at + ")"
	}
	return "date(" + at + ")"
}

// AnalyticsCount implements analytics.ReadStore: one grouped count over
// the window's rows (of every tenant and workspace), and for a distinct
// metric a second count of the window's distinct subjects.
func (tx *Tx) AnalyticsCount(ctx context.Context, q analytics.CountQuery) (analytics.Count, error) {
	const op = "store.AnalyticsCount"
	src, ok := metricSources()[q.Metric]
	if !ok || !q.Period.Valid() {
		return analytics.Count{}, fault.Invalid(op, "metrics", "The platform does not count "+string(q.Metric)+".")
	}
	where := src.at + " >= ? AND " + src.at + " < ?"
	args := []any{q.From.UTC(), q.To.UTC()}
	if src.env {
		where += " AND t.environment = ?"
		args = append(args, string(q.Environment))
	}
	if src.where != "" {
		where += " AND " + src.where
	}
	counted := "COUNT(*)"
	if src.distinct != "" {
		counted = "COUNT(DISTINCT " + src.distinct + ")"
	}
	var rows []struct {
		Start string `bun:"bucket"`
		N     int64  `bun:"n"`
	}
	key := tx.bucketKey(q.Period, src.at)
	err := tx.idb.NewRaw(`SELECT `+key+` AS bucket, `+counted+` AS n FROM `+src.from+` WHERE `+where+` GROUP BY `+key, args...).
		Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return analytics.Count{}, errf(op, err)
	}
	out := analytics.Count{ByStart: make(map[string]int64, len(rows))}
	for _, r := range rows {
		out.ByStart[r.Start] += r.N
		out.Total += r.N
	}
	if src.distinct != "" && out.Total > 0 {
		if err := tx.idb.NewRaw(`SELECT `+counted+` FROM `+src.from+` WHERE `+where, args...).Scan(ctx, &out.Total); err != nil {
			return analytics.Count{}, errf(op, err)
		}
	}
	return out, nil
}
