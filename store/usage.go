package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
)

// SubjectUsageAdd adds request counts per subject ("user:<id>",
// "ws:<id>": who sessions and access tokens act for) to the period's
// totals, in the unit of work.
func (tx *Tx) SubjectUsageAdd(ctx context.Context, period string, counts map[string]int64) error {
	subjects := make([]string, 0, len(counts))
	for s := range counts {
		subjects = append(subjects, s)
	}
	sort.Strings(subjects) // a fixed order avoids deadlocks between hosts
	for _, s := range subjects {
		if _, err := tx.idb.ExecContext(ctx, `INSERT INTO request_usage (subject, period, requests) VALUES (?, ?, ?)
			ON CONFLICT (subject, period) DO UPDATE SET requests = request_usage.requests + excluded.requests`,
			s, period, counts[s]); err != nil {
			return errf("store.SubjectUsageAdd", err)
		}
	}
	return nil
}

// SubjectUsageGet returns the requests counted for a subject in a period.
func (tx *Tx) SubjectUsageGet(ctx context.Context, subject, period string) (int64, error) {
	var n int64
	err := tx.idb.QueryRowContext(ctx, `SELECT requests FROM request_usage WHERE subject = ? AND period = ?`, subject, period).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, errf("store.SubjectUsageGet", err)
}
