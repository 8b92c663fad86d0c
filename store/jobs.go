package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
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
	(id, kind, payload, state, unique_key, group_key, run_at, attempts, max_attempts, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
	ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING`

// jobArgs are the arguments of jobInsert for p.
func (tx *Tx) jobArgs(p jobs.InsertParams) ([]any, error) {
	p, err := p.WithDefaults(tx.now)
	if err != nil {
		return nil, err
	}
	var key, group any // NULL when empty: the indexes are partial on NOT NULL
	if p.UniqueKey != "" {
		key = p.UniqueKey
	}
	if p.Group != "" {
		group = p.Group
	}
	return []any{id.New("job_", tx.now), p.Kind, string(p.Payload), string(jobs.Available), key, group,
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

// JobBacklog implements jobs.Store, on the read handle: it writes nothing.
func (s jobStore) JobBacklog(ctx context.Context, p jobs.BacklogParams) (jobs.Backlog, error) {
	return s.db.Read().JobBacklog(ctx, p)
}

// jobRow is a jobs row as scanned.
type jobRow struct {
	ID          string         `bun:"id"`
	Kind        string         `bun:"kind"`
	Payload     string         `bun:"payload"`
	State       string         `bun:"state"`
	UniqueKey   sql.NullString `bun:"unique_key"`
	GroupKey    sql.NullString `bun:"group_key"`
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
		Group:     r.GroupKey.String,
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

const jobColumns = `id, kind, payload, state, unique_key, group_key, run_at, attempts, max_attempts,
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
// first it discards running jobs of p.Kinds whose lease expired on their
// last allowed attempt, then it leases up to p.Limit due jobs in one
// statement.
//
// Without a group limit the candidates are selected FOR UPDATE SKIP LOCKED
// on PostgreSQL, so claimers never wait on each other. With one, the
// statement numbers each group's candidates (a window function, which
// PostgreSQL does not allow beside FOR UPDATE) and counts each group's
// running jobs; two claimers reading the same counts at once could each
// take a group's last room. So on PostgreSQL such a claim first takes a
// transaction-scoped advisory lock named by its kinds (claimLockKey): the
// claims of one class run one after another across every host, each a
// single short statement, and each sees the jobs the one before leased,
// because that transaction committed before its lock was released. On
// SQLite the single writer serializes every claim. The picked ids are a
// MATERIALIZED common table expression, computed once: a subquery inside
// the UPDATE's WHERE may be run again by PostgreSQL while it rechecks rows
// that other transactions changed, and with SKIP LOCKED a second run picks
// other rows, so one claim could take more than its limit. The UPDATE
// repeats the claimable condition, so a row that changed after it was
// picked (a lease renewed, a job settled) is left alone.
func (tx *Tx) JobClaim(ctx context.Context, p jobs.ClaimParams) ([]jobs.Job, error) {
	const op = "store.JobClaim"
	if p.LockedBy == "" || p.Limit <= 0 || p.Lease <= 0 || p.GroupLimit < 0 {
		return nil, fault.Invalid(op, "claim", "Claiming needs a token, a positive limit and a positive lease.")
	}
	kinds, kindArgs := kindFilter(p.Kinds)
	lock := ""
	if tx.Dialect() == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
		if p.GroupLimit > 0 {
			lock = ""
			if _, err := tx.idb.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, claimLockKey(p.Kinds)); err != nil {
				return nil, errf(op, err)
			}
		}
	}
	// A lease that expired on the last allowed attempt ends the job: it
	// crashed (or hung) as often as it may run.
	if _, err := tx.idb.ExecContext(ctx, `UPDATE jobs
		SET state = ?, finished_at = ?, locked_by = NULL, locked_until = NULL,
			last_error = 'jobs: lease expired on the last attempt'
		WHERE id IN (SELECT id FROM jobs
			WHERE state = ? AND locked_until < ? AND attempts >= max_attempts`+kinds+lock+`)`,
		append([]any{string(jobs.Discarded), tx.now, string(jobs.Running), tx.now}, kindArgs...)...); err != nil {
		return nil, errf(op, err)
	}
	claimable := []any{tx.now, string(jobs.Available), string(jobs.Running), tx.now}
	set := []any{string(jobs.Running), p.LockedBy, tx.now.Add(p.Lease)}
	var (
		query string
		args  []any
	)
	if p.GroupLimit == 0 {
		query = `WITH pick AS MATERIALIZED (SELECT id FROM jobs
			WHERE ` + claimableSQL + kinds + `
			ORDER BY run_at, id
			LIMIT ?` + lock + `)
		UPDATE jobs
		SET state = ?, locked_by = ?, locked_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM pick) AND ` + claimableSQL + `
		RETURNING ` + jobColumns
		args = append(append(claimable, kindArgs...), p.Limit)
		args = append(append(args, set...), claimable...)
	} else {
		query = groupRoomCTE(kinds) + `,
		pick AS MATERIALIZED (SELECT id FROM room ORDER BY run_at, id LIMIT ?)
		UPDATE jobs
		SET state = ?, locked_by = ?, locked_until = ?, attempts = attempts + 1
		WHERE id IN (SELECT id FROM pick) AND ` + claimableSQL + `
		RETURNING ` + jobColumns
		args = append(groupRoomArgs(tx.now, p.GroupLimit, kindArgs), p.Limit)
		args = append(append(args, set...), claimable...)
	}
	var rows []jobRow
	err := tx.idb.NewRaw(query, args...).Scan(ctx, &rows)
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

// claimableSQL holds of a job a claim may take (arguments: now, available,
// running, now): due, and available or running under an expired lease.
const claimableSQL = `run_at <= ? AND (state = ? OR (state = ? AND locked_until < ?))`

// kindFilter is the condition " AND kind IN (...)" with its argument, or
// nothing when kinds is empty (every kind).
func kindFilter(kinds []string) (string, []any) {
	if len(kinds) == 0 {
		return "", nil
	}
	return " AND kind IN (?)", []any{bun.In(kinds)}
}

// groupRoomCTE starts a WITH clause whose table room holds the claimable
// jobs (id, run_at, runnable_since) that their group's limit lets run now:
// jobs without a group, and within each group the first (limit - running)
// candidates in (run_at, id) order, running counting the group's jobs of
// these kinds under an unexpired lease. Its arguments are groupRoomArgs.
func groupRoomCTE(kinds string) string {
	return `WITH busy AS (
			SELECT group_key, COUNT(*) AS n FROM jobs
			WHERE state = ? AND locked_until >= ? AND group_key IS NOT NULL` + kinds + `
			GROUP BY group_key),
		cand AS (
			SELECT id, run_at, group_key,
				CASE WHEN state = ? THEN locked_until ELSE run_at END AS runnable_since,
				ROW_NUMBER() OVER (PARTITION BY group_key ORDER BY run_at, id) AS rn
			FROM jobs
			WHERE ` + claimableSQL + kinds + `),
		room AS (
			SELECT cand.id, cand.run_at, cand.runnable_since FROM cand
			LEFT JOIN busy ON busy.group_key = cand.group_key
			WHERE cand.group_key IS NULL OR cand.rn + COALESCE(busy.n, 0) <= ?)`
}

// groupRoomArgs are the arguments of groupRoomCTE.
func groupRoomArgs(now time.Time, limit int, kindArgs []any) []any {
	args := append([]any{string(jobs.Running), now}, kindArgs...)
	args = append(args, string(jobs.Running), now, string(jobs.Available), string(jobs.Running), now)
	args = append(args, kindArgs...)
	return append(args, limit)
}

// claimLockKey names the PostgreSQL advisory lock that serializes the
// group-limited claims of one set of kinds (one class) on every host: the
// sorted kinds. Hosts that configure a class with the same kinds share the
// lock; a hash collision with another lock only serializes more.
func claimLockKey(kinds []string) string {
	return "jobs-claim:" + strings.Join(slices.Sorted(slices.Values(kinds)), ",")
}

// JobBacklog implements jobs.Store: the claimable jobs of p's kinds that
// p's group limit lets run, counted, and the age of the oldest by when it
// became runnable (run_at, or the end of an expired lease).
func (tx *Tx) JobBacklog(ctx context.Context, p jobs.BacklogParams) (jobs.Backlog, error) {
	const op = "store.JobBacklog"
	kinds, kindArgs := kindFilter(p.Kinds)
	limit := p.GroupLimit
	if limit <= 0 {
		// No limit: every group has room for all its jobs.
		limit = math.MaxInt32
	}
	var rows []struct {
		N      int          `bun:"n"`
		Oldest bun.NullTime `bun:"oldest"`
	}
	err := tx.idb.NewRaw(groupRoomCTE(kinds)+`
		SELECT COUNT(*) AS n, MIN(runnable_since) AS oldest FROM room`,
		groupRoomArgs(tx.now, limit, kindArgs)...).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return jobs.Backlog{}, errf(op, err)
	}
	if len(rows) == 0 || rows[0].N == 0 || rows[0].Oldest.IsZero() {
		return jobs.Backlog{}, nil
	}
	oldest := rows[0].Oldest.Time.UTC()
	return jobs.Backlog{Runnable: rows[0].N, OldestSince: oldest, Age: max(tx.now.Sub(oldest), 0)}, nil
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
// is discarded when p.Discard is set or its attempts are spent, else
// available at now+RetryAfter.
func (tx *Tx) JobFail(ctx context.Context, p jobs.FailParams) (jobs.State, error) {
	const op = "store.JobFail"
	var states []string
	// A permanent failure ends the job as a spent budget does.
	last := `(attempts >= max_attempts)`
	if p.Discard {
		last = `(1 = 1)`
	}
	err := tx.idb.NewRaw(`UPDATE jobs
		SET state = CASE WHEN `+last+` THEN ? ELSE ? END,
			run_at = CASE WHEN `+last+` THEN run_at ELSE ? END,
			finished_at = CASE WHEN `+last+` THEN ? ELSE finished_at END,
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
