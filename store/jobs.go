package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/id"
	"github.com/creatormusic/platform/jobs"
)

// Compile-time checks: *Tx enqueues and works jobs; DB.Jobs() works them in
// a unit of work per call.
var (
	_ jobs.Enqueuer = (*Tx)(nil)
	_ jobs.Store    = (*Tx)(nil)
	_ jobs.Store    = jobStore{}
)

// jobStore is the workers' handle: every call runs in its own InTx.
type jobStore struct{ db *DB }

// Jobs returns the workers' port over db: each call is its own unit of work
// with its own timestamp. Pass it as jobs.Config.Store.
func (db *DB) Jobs() jobs.Store { return jobStore{db: db} }

// JobEnqueue is JobInsert for a caller that does not need to know whether
// the job was inserted: on a pipelining store it goes to the server with
// the unit of work's next statement.
func (tx *Tx) JobEnqueue(ctx context.Context, p jobs.InsertParams) error {
	args, err := tx.jobArgs(p)
	if err != nil {
		return err
	}
	return errf("store.JobEnqueue", tx.execLater(ctx, nil, jobInsert, args...))
}

const jobInsert = `INSERT INTO jobs
	(id, kind, payload, state, unique_key, run_at, attempts, max_attempts, created_at)
	VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)
	ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING`

// jobArgs are the arguments of jobInsert for p.
func (tx *Tx) jobArgs(p jobs.InsertParams) ([]any, error) {
	p, err := p.WithDefaults(tx.now)
	if err != nil {
		return nil, err
	}
	var key any // NULL when empty: the unique index is partial on NOT NULL
	if p.UniqueKey != "" {
		key = p.UniqueKey
	}
	return []any{id.New("job_", tx.now), p.Kind, string(p.Payload), string(jobs.Available), key,
		p.RunAt.UTC(), p.MaxAttempts, tx.now}, nil
}

// JobClaim implements jobs.Store.
func (s jobStore) JobClaim(ctx context.Context, p jobs.ClaimParams) (out []jobs.Job, err error) {
	err = s.db.InTx(ctx, func(tx *Tx) error {
		out, err = tx.JobClaim(ctx, p)
		return err
	})
	return out, err
}

// JobComplete implements jobs.Store.
func (s jobStore) JobComplete(ctx context.Context, id, lockedBy string) error {
	return s.db.InTx(ctx, func(tx *Tx) error { return tx.JobComplete(ctx, id, lockedBy) })
}

// JobFail implements jobs.Store.
func (s jobStore) JobFail(ctx context.Context, p jobs.FailParams) (st jobs.State, err error) {
	err = s.db.InTx(ctx, func(tx *Tx) error {
		st, err = tx.JobFail(ctx, p)
		return err
	})
	return st, err
}

// JobExtend implements jobs.Store.
func (s jobStore) JobExtend(ctx context.Context, p jobs.ExtendParams) error {
	return s.db.InTx(ctx, func(tx *Tx) error { return tx.JobExtend(ctx, p) })
}

// jobRow is a jobs row as scanned.
type jobRow struct {
	ID          string         `bun:"id"`
	Kind        string         `bun:"kind"`
	Payload     string         `bun:"payload"`
	State       string         `bun:"state"`
	UniqueKey   sql.NullString `bun:"unique_key"`
	RunAt       time.Time      `bun:"run_at"`
	Attempts    int            `bun:"attempts"`
	MaxAttempts int            `bun:"max_attempts"`
	LockedBy    sql.NullString `bun:"locked_by"`
	LockedUntil sql.NullTime   `bun:"locked_until"`
	LastError   sql.NullString `bun:"last_error"`
	CreatedAt   time.Time      `bun:"created_at"`
	FinishedAt  sql.NullTime   `bun:"finished_at"`
}

func (r jobRow) job() jobs.Job {
	return jobs.Job{
		ID: r.ID, Kind: r.Kind, Payload: []byte(r.Payload),
		Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, RunAt: r.RunAt.UTC(),
	}
}

func (r jobRow) record() jobs.Record {
	rec := jobs.Record{
		Job:       r.job(),
		State:     jobs.State(r.State),
		UniqueKey: r.UniqueKey.String,
		LockedBy:  r.LockedBy.String,
		LastError: r.LastError.String,
		CreatedAt: r.CreatedAt.UTC(),
	}
	if r.LockedUntil.Valid {
		rec.LockedUntil = r.LockedUntil.Time.UTC()
	}
	if r.FinishedAt.Valid {
		rec.FinishedAt = r.FinishedAt.Time.UTC()
	}
	return rec
}

const jobColumns = `id, kind, payload, state, unique_key, run_at, attempts, max_attempts,
	locked_by, locked_until, last_error, created_at, finished_at`

// JobInsert implements jobs.Enqueuer. Call it on the unit of work's Tx so the
// job commits with the business rows; a duplicate UniqueKey inserts nothing
// and reports false.
func (tx *Tx) JobInsert(ctx context.Context, p jobs.InsertParams) (bool, error) {
	const op = "store.JobInsert"
	args, err := tx.jobArgs(p)
	if err != nil {
		return false, err
	}
	res, err := tx.exec(ctx, jobInsert, args...)
	if err != nil {
		return false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, errf(op, err)
	}
	return n == 1, nil
}

// JobClaim implements jobs.Store. Run it in a transaction (DB.Jobs does):
// first it discards running jobs whose lease expired on their last allowed
// attempt, then it leases up to p.Limit due jobs in one statement, FOR
// UPDATE SKIP LOCKED on PostgreSQL.
func (tx *Tx) JobClaim(ctx context.Context, p jobs.ClaimParams) ([]jobs.Job, error) {
	const op = "store.JobClaim"
	if p.LockedBy == "" || p.Limit <= 0 || p.Lease <= 0 {
		return nil, fault.Invalid(op, "claim", "Claiming needs a token, a positive limit and a positive lease.")
	}
	lock := ""
	if tx.Dialect() == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// A lease that expired on the last allowed attempt ends the job: it
	// crashed (or hung) as often as it may run.
	if _, err := tx.idb.ExecContext(ctx, `UPDATE jobs
		SET state = ?, finished_at = ?, locked_by = NULL, locked_until = NULL,
			last_error = 'jobs: lease expired on the last attempt'
		WHERE id IN (SELECT id FROM jobs
			WHERE state = ? AND locked_until < ? AND attempts >= max_attempts`+lock+`)`,
		string(jobs.Discarded), tx.now, string(jobs.Running), tx.now); err != nil {
		return nil, errf(op, err)
	}
	var rows []jobRow
	err := tx.idb.NewRaw(`UPDATE jobs
		SET state = ?, locked_by = ?, locked_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM jobs
			WHERE run_at <= ? AND (state = ? OR (state = ? AND locked_until < ?))
			ORDER BY run_at, id
			LIMIT ?`+lock+`)
		RETURNING `+jobColumns,
		string(jobs.Running), p.LockedBy, tx.now.Add(p.Lease),
		tx.now, string(jobs.Available), string(jobs.Running), tx.now,
		p.Limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]jobs.Job, len(rows))
	for i, r := range rows {
		out[i] = r.job()
	}
	// RETURNING has no order; hand jobs out in claim order.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].RunAt.Equal(out[j].RunAt) {
			return out[i].RunAt.Before(out[j].RunAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// lostLease is the CONFLICT of a settle or extend whose claim no longer holds.
func lostLease(op string) error {
	return fault.E(op, fault.Conflict, "The job is no longer leased by this worker.")
}

// JobComplete implements jobs.Store: compare-and-set on the claim token.
func (tx *Tx) JobComplete(ctx context.Context, id, lockedBy string) error {
	const op = "store.JobComplete"
	res, err := tx.idb.ExecContext(ctx, `UPDATE jobs
		SET state = ?, finished_at = ?, locked_by = NULL, locked_until = NULL
		WHERE id = ? AND state = ? AND locked_by = ?`,
		string(jobs.Succeeded), tx.now, id, string(jobs.Running), lockedBy)
	return casResult(op, res, err)
}

// JobFail implements jobs.Store: compare-and-set on the claim token; the job
// is discarded when its attempts are spent, else available at now+RetryAfter.
func (tx *Tx) JobFail(ctx context.Context, p jobs.FailParams) (jobs.State, error) {
	const op = "store.JobFail"
	var states []string
	err := tx.idb.NewRaw(`UPDATE jobs
		SET state = CASE WHEN attempts >= max_attempts THEN ? ELSE ? END,
			run_at = CASE WHEN attempts >= max_attempts THEN run_at ELSE ? END,
			finished_at = CASE WHEN attempts >= max_attempts THEN ? ELSE finished_at END,
			locked_by = NULL, locked_until = NULL, last_error = ?
		WHERE id = ? AND state = ? AND locked_by = ?
		RETURNING state`,
		string(jobs.Discarded), string(jobs.Available),
		tx.now.Add(max(p.RetryAfter, 0)),
		tx.now,
		errorText(p.Error, jobs.MaxErrorLen),
		p.ID, string(jobs.Running), p.LockedBy).Scan(ctx, &states)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", errf(op, err)
	}
	if len(states) != 1 {
		return "", lostLease(op)
	}
	return jobs.State(states[0]), nil
}

// JobExtend implements jobs.Store: compare-and-set on the claim token.
func (tx *Tx) JobExtend(ctx context.Context, p jobs.ExtendParams) error {
	const op = "store.JobExtend"
	if p.Lease <= 0 {
		return fault.Invalid(op, "lease", "The lease must be positive.")
	}
	res, err := tx.idb.ExecContext(ctx, `UPDATE jobs SET locked_until = ?
		WHERE id = ? AND state = ? AND locked_by = ?`,
		tx.now.Add(p.Lease), p.ID, string(jobs.Running), p.LockedBy)
	return casResult(op, res, err)
}

// casResult turns a guarded single-row UPDATE's outcome into nil, CONFLICT
// (no row matched the guard) or a wrapped database error.
func casResult(op string, res sql.Result, err error) error {
	if err != nil {
		return errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return errf(op, err)
	}
	if n != 1 {
		return lostLease(op)
	}
	return nil
}

// JobGet returns one job with its bookkeeping; NOT_FOUND if there is none.
func (tx *Tx) JobGet(ctx context.Context, id string) (jobs.Record, error) {
	var row jobRow
	err := tx.idb.NewRaw(`SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id).Scan(ctx, &row)
	if err != nil {
		return jobs.Record{}, notFound("store.JobGet", err)
	}
	return row.record(), nil
}

// JobList returns up to limit jobs of kind ("" = every kind) in id order,
// for inspection.
func (tx *Tx) JobList(ctx context.Context, kind string, limit int) ([]jobs.Record, error) {
	var rows []jobRow
	err := tx.idb.NewRaw(`SELECT `+jobColumns+` FROM jobs
		WHERE (? = '' OR kind = ?) ORDER BY id LIMIT ?`, kind, kind, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.JobList", err)
	}
	out := make([]jobs.Record, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

// JobCounts returns how many jobs are in each state (states with no jobs are
// absent), for the health route and tests.
func (tx *Tx) JobCounts(ctx context.Context) (map[jobs.State]int, error) {
	var rows []struct {
		State string `bun:"state"`
		N     int    `bun:"n"`
	}
	err := tx.idb.NewRaw(`SELECT state, COUNT(*) AS n FROM jobs GROUP BY state`).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.JobCounts", err)
	}
	out := make(map[jobs.State]int, len(rows))
	for _, r := range rows {
		out[jobs.State(r.State)] = r.N
	}
	return out, nil
}

// errorText makes a handler's error storable: valid UTF-8 without NUL
// bytes (PostgreSQL TEXT takes neither), at most n bytes, not splitting a
// rune.
func errorText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
