package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
)

// The rows anchor: bare transactions that write what one generation accept
// writes (measurement 8 of the package doc). The statements are the
// store's (store/generation.go, store/jobs.go, store/spine.go,
// store/ledger.go) with bench_ in front of each table name, in the order
// an accept runs them; the values have the shapes and sizes of an
// accept's.

// rowsTables are the tables an accept writes on either database
// (acceptWrites), each before the tables whose foreign keys refer to it.
// The anchor writes bench_ copies of them.
func rowsTables() []string {
	var out []string
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		for _, w := range acceptWrites(d) {
			if !slices.Contains(out, w.table) {
				out = append(out, w.table)
			}
		}
	}
	return out
}

// benchTables are the bench_ copies of rowsTables.
func benchTables() []string {
	var out []string
	for _, t := range rowsTables() {
		out = append(out, "bench_"+t)
	}
	return out
}

// The anchor's statements, with ? placeholders (the store's convention;
// pgText numbers them for PostgreSQL).
const (
	// rowsOperationInsert is store.GenerationOperationInsert's.
	rowsOperationInsert = `INSERT INTO bench_generation_operations (id, tenant_id, workspace_id, environment, created_by_user_id,
		created_by_key_id, status, request, billing_mode, credits_reserved, credits_settled, byok_credits, pricing, routes,
		duration_applied, snapshot, version, attempts, current_attempt_id, deadline_at, created_at, updated_at, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// rowsJobInsert is store.JobEnqueue's.
	rowsJobInsert = `INSERT INTO bench_jobs
		(id, kind, payload, state, unique_key, group_key, run_at, attempts, max_attempts, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
		ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING`
	// rowsReceiptInsert is store.ReceiptInsert's.
	rowsReceiptInsert = `INSERT INTO bench_request_receipts
		(request_id, tenant_id, workspace_id, environment, principal, method, operation_id, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING`
	// rowsIdempotencyInsert is store.IdempotencyInsertLater's on
	// PostgreSQL; SQLite's adds rowsIdempotencyOnConflict and checks that
	// it wrote the row.
	rowsIdempotencyInsert = `INSERT INTO bench_idempotency_records
		(id, tenant_id, workspace_id, environment, endpoint, idem_key, request_hash, state, response_status, response_body, sealed,
		created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'completed', ?, ?, ?, ?, ?)`
	rowsIdempotencyOnConflict = `
		ON CONFLICT (tenant_id, workspace_id, environment, endpoint, idem_key) DO NOTHING`
	// rowsMovementInsert is store.LedgerMovementInsert's for a fresh
	// movement on PostgreSQL; SQLite's adds rowsMovementOnConflict and
	// checks that it wrote the row.
	rowsMovementInsert = `INSERT INTO bench_ledger_movements (id, tenant_id, workspace_id, environment, ledger, type, reference, decimals,
	actor_user_id, actor_key_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	rowsMovementOnConflict = ` ON CONFLICT (tenant_id, workspace_id, environment, reference) DO NOTHING`
	// rowsPostingsInsert is the postings insert of
	// store.LedgerMovementInsert for two postings.
	rowsPostingsInsert = `INSERT INTO bench_ledger_postings (movement_id, seq, tenant_id, workspace_id, environment, ledger,
		account, direction, amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// rowsOutboxInsert is store.OutboxInsert's.
	rowsOutboxInsert = `INSERT INTO bench_outbox_events
		(id, tenant_id, workspace_id, environment, type, schema_version, aggregate_id, aggregate_version, occurred_at, payload)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// rowsAccountsRead is the read of SQLite's store.LedgerAccountsApply.
	rowsAccountsRead = `SELECT tenant_id, workspace_id, environment, ledger, name, decimals, allow_negative,
	CAST(balance AS TEXT) AS balance, version, created_at, updated_at FROM bench_ledger_accounts
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name IN (?, ?)`
	// rowsAccountUpdate is SQLite's balance write
	// (store.LedgerAccountsUpdate): the balance changed in Go, set under
	// the version read.
	rowsAccountUpdate = `UPDATE bench_ledger_accounts SET balance = ?, version = ?, updated_at = ?
			WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name = ? AND version = ?`
	// rowsSlotChange is the change of a spread balance on PostgreSQL
	// (store.LedgerAccountsApply's ledger_spread_change, migration 0022)
	// when a slot can take it, as it can for every accept of the bench:
	// one slot that covers the change and that no other transaction
	// holds, tried from a given slot on, changed in place.
	rowsSlotChange = `UPDATE bench_ledger_account_slots SET balance = balance + CAST(? AS NUMERIC),
				room = room - CAST(? AS NUMERIC), version = version + 1, updated_at = ?
			WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name = ? AND slot = (
				SELECT slot FROM bench_ledger_account_slots
				WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name = ?
					AND balance + CAST(? AS NUMERIC) >= 0 AND room - CAST(? AS NUMERIC) >= 0
				ORDER BY (slot + 8 - ?) % 8 LIMIT 1 FOR UPDATE SKIP LOCKED)`
	// rowsSlotSeed gives a workspace's spread account a slot when the copy
	// lacks it: a share of benchCredits (the credits) or room (the
	// reservations).
	rowsSlotSeed = `INSERT INTO bench_ledger_account_slots (tenant_id, workspace_id, environment, ledger, name, slot, balance, room,
		version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING`
	// rowsAccountSeed gives a workspace's account benchCredits (the
	// credits) or nothing (the reservations) when the copy lacks it.
	rowsAccountSeed = `INSERT INTO bench_ledger_accounts (tenant_id, workspace_id, environment, ledger, name, decimals,
		allow_negative, balance, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
		ON CONFLICT (tenant_id, workspace_id, environment, ledger, name) DO NOTHING`
)

// rowsReserve is the credits an accept of generateBody reserves (model v5).
const rowsReserve = 15

// sqliteTime is how the store writes a time into SQLite's TEXT columns.
const sqliteTime = "2006-01-02 15:04:05.999999-07:00"

// rowsStmt is one statement of a unit and its arguments.
type rowsStmt struct {
	query string
	args  []any
	// one is set when the statement must write exactly one row (SQLite's
	// checks of an insert that skips a taken key).
	one bool
}

// rowsAnchor writes the rows of one accept per unit of work, for one
// dialect.
type rowsAnchor struct {
	dialect store.Dialect
	// pg are the statements' PostgreSQL texts, by their ? texts.
	pg map[string]string
	// stmts are SQLite's statements prepared on the anchor's pool.
	stmts map[string]*sql.Stmt
	// request, pricing, routes and snapshot are the columns every
	// operation of an accept of generateBody holds.
	request, pricing, routes, snapshot string
	// runID and n make identifiers and idempotency keys unique.
	runID string
	n     atomic.Uint64
}

// newRowsAnchor returns the anchor of dialect d.
func newRowsAnchor(d store.Dialect) (*rowsAnchor, error) {
	a := &rowsAnchor{dialect: d, pg: map[string]string{}, stmts: map[string]*sql.Stmt{}, runID: randomHex(6)}
	var req operation.Request
	if err := json.Unmarshal([]byte(generateBody), &req); err != nil {
		return nil, fmt.Errorf("rows anchor: %w", err)
	}
	for _, f := range []struct {
		dst *string
		v   any
	}{
		{&a.request, req},
		{&a.pricing, policy.Ref{ID: "pricing.generation", Version: 1, Hash: randomHex(32)}},
		{&a.routes, []generation.ProviderID{generation.ProviderA, generation.ProviderB}},
		{&a.snapshot, generation.Snapshot{Status: generation.StatusQueued, Stage: generation.StageQueued}},
	} {
		b, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("rows anchor: %w", err)
		}
		*f.dst = string(b)
	}
	for _, q := range []string{rowsOperationInsert, rowsJobInsert, rowsReceiptInsert, rowsIdempotencyInsert, rowsMovementInsert,
		rowsPostingsInsert, rowsOutboxInsert, rowsAccountSeed, rowsSlotChange, rowsSlotSeed} {
		a.pg[q] = pgText(q)
	}
	return a, nil
}

// pgText numbers the ? placeholders of q ($1, $2, ...); the anchor's
// statements hold no ? in a quoted string.
func pgText(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// at is t as the dialect's columns take it: on SQLite the text the store
// writes.
func (a *rowsAnchor) at(t time.Time) any {
	if a.dialect == store.SQLite {
		return t.UTC().Format(sqliteTime)
	}
	return t
}

// newID returns an identifier shaped as the platform's: prefix and 26
// characters that sort in the order they were made.
func (a *rowsAnchor) newID(prefix string, now time.Time) string {
	return fmt.Sprintf("%s%013x%013x", prefix, now.UnixMicro(), a.n.Add(1))
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(mrand.Uint32())
	}
	return hex.EncodeToString(b)
}

// inserts are the inserts of one accept for ws, in the order an accept
// runs them: the operation and its dispatch job (operation.Accept), the
// receipt and the idempotency record (the gateway's complete), then the
// reservation's movement, postings and outbox event (ledger.Post).
func (a *rowsAnchor) inserts(ws platform.Bootstrap, now time.Time) []rowsStmt {
	const env, endpoint = "test", "generateMusic"
	at := a.at(now)
	op := a.newID(operation.IDPrefix, now)
	mov := a.newID("mov_", now)
	ref := string(ledger.TypeReserve) + ":" + op
	reserve := strconv.Itoa(rowsReserve)
	body := []byte(`{"operationId":"` + op + `","status":"queued","billing":{"mode":"` + string(credential.ModePlatformManaged) +
		`","creditsReserved":"` + reserve + `"}}`)
	payload := `{"movementId":"` + mov + `","ledger":"` + string(ledger.Credits) + `","type":"` + string(ledger.TypeReserve) +
		`","reference":"` + ref + `","decimals":0,"postings":[{"account":"` + ledger.AccountWorkspaceCredits +
		`","direction":"debit","amountAtomic":"` + reserve + `"},{"account":"` + ledger.AccountWorkspaceReserved +
		`","direction":"credit","amountAtomic":"` + reserve + `"}],"actor":{"userId":"` + ws.OwnerID + `","keyId":"` + ws.KeyID + `"}}`
	idem, movement := rowsIdempotencyInsert, rowsMovementInsert
	if a.dialect == store.SQLite {
		idem, movement = idem+rowsIdempotencyOnConflict, movement+rowsMovementOnConflict
	}
	credits := string(ledger.Credits)
	return []rowsStmt{
		{query: rowsOperationInsert, args: []any{op, ws.TenantID, ws.WorkspaceID, env, ws.OwnerID, ws.KeyID,
			string(generation.StatusQueued), a.request, string(credential.ModePlatformManaged), int64(rowsReserve), nil, int64(2),
			a.pricing, a.routes, nil, a.snapshot, int64(1), 0, "", a.at(now.Add(30 * time.Minute)), at, at, nil}},
		{query: rowsJobInsert, args: []any{a.newID("job_", now), operation.JobDispatch, `{"operation":"` + op + `"}`,
			string(jobs.Available), "gen-dispatch:" + op + ":0", nil, at, jobs.DefaultMaxAttempts, at}},
		{query: rowsReceiptInsert, args: []any{"req_" + randomHex(16), ws.TenantID, ws.WorkspaceID, env, "key:" + ws.KeyID,
			"POST", endpoint, 202, at}},
		{query: idem, one: a.dialect == store.SQLite, args: []any{a.newID("idem_", now), ws.TenantID, ws.WorkspaceID, env, endpoint,
			fmt.Sprintf("bench-rows-%s-%d", a.runID, a.n.Add(1)), randomHex(32), 202, body, false, at, a.at(now.Add(24 * time.Hour))}},
		{query: movement, one: a.dialect == store.SQLite, args: []any{mov, ws.TenantID, ws.WorkspaceID, env, credits,
			string(ledger.TypeReserve), ref, ledger.CreditsDecimals, ws.OwnerID, ws.KeyID, at}},
		{query: rowsPostingsInsert, args: []any{
			mov, 0, ws.TenantID, ws.WorkspaceID, env, credits, ledger.AccountWorkspaceCredits, string(ledger.Debit), reserve,
			mov, 1, ws.TenantID, ws.WorkspaceID, env, credits, ledger.AccountWorkspaceReserved, string(ledger.Credit), reserve}},
		{query: rowsOutboxInsert, args: []any{a.newID("evt_", now), ws.TenantID, ws.WorkspaceID, env, ledger.EventMovementPosted, 1,
			mov, int64(1), at, payload}},
	}
}

// postgresUnit is every statement of one accept for ws on PostgreSQL: the
// inserts, then the two balances changed in one slot each, the workspace's
// credits first (the ledger changes accounts in name order).
func (a *rowsAnchor) postgresUnit(ws platform.Bootstrap) []rowsStmt {
	now := time.Now().UTC().Truncate(time.Microsecond)
	out := a.inserts(ws, now)
	credits := string(ledger.Credits)
	for _, c := range []struct {
		name  string
		delta string
	}{{ledger.AccountWorkspaceCredits, "-" + strconv.Itoa(rowsReserve)}, {ledger.AccountWorkspaceReserved, strconv.Itoa(rowsReserve)}} {
		out = append(out, rowsStmt{query: rowsSlotChange, args: []any{c.delta, c.delta, now,
			ws.TenantID, ws.WorkspaceID, "test", credits, c.name, ws.TenantID, ws.WorkspaceID, "test", credits, c.name,
			c.delta, c.delta, mrand.IntN(rowsSlots)}})
	}
	return out
}

// rowsSlots is the slots of a spread account (store's spreadSlots).
const rowsSlots = 8

// sqliteUnit writes the rows of one accept for ws in tx on SQLite, through
// the prepared statements: the inserts, then the two balances read,
// changed in Go and written back under the versions read.
func (a *rowsAnchor) sqliteUnit(ctx context.Context, tx *sql.Tx, ws platform.Bootstrap) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, s := range a.inserts(ws, now) {
		res, err := tx.StmtContext(ctx, a.stmts[s.query]).ExecContext(ctx, s.args...)
		if err != nil {
			return err
		}
		if s.one {
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return fmt.Errorf("rows anchor: %.40s... wrote %d rows (%v)", s.query, n, err)
			}
		}
	}
	credits := string(ledger.Credits)
	rows, err := tx.StmtContext(ctx, a.stmts[rowsAccountsRead]).QueryContext(ctx, ws.TenantID, ws.WorkspaceID, "test", credits,
		ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved)
	if err != nil {
		return err
	}
	type account struct {
		tenant, workspace, env, ledger, name string
		decimals                             int
		allowNegative                        bool
		balance                              string
		version                              int64
		created, updated                     time.Time
	}
	var accounts []account
	for rows.Next() {
		var r account
		if err := rows.Scan(&r.tenant, &r.workspace, &r.env, &r.ledger, &r.name, &r.decimals, &r.allowNegative, &r.balance,
			&r.version, &r.created, &r.updated); err != nil {
			rows.Close()
			return err
		}
		accounts = append(accounts, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, name := range []string{ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved} {
		i := 0
		for i < len(accounts) && accounts[i].name != name {
			i++
		}
		if i == len(accounts) {
			return fmt.Errorf("rows anchor: account %s of %s missing", name, ws.WorkspaceID)
		}
		r := accounts[i]
		b, err := strconv.ParseInt(r.balance, 10, 64)
		if err != nil {
			return fmt.Errorf("rows anchor: balance %q: %w", r.balance, err)
		}
		if name == ledger.AccountWorkspaceCredits {
			b -= rowsReserve
		} else {
			b += rowsReserve
		}
		if b < 0 && !r.allowNegative {
			return fmt.Errorf("rows anchor: %s of %s would go below zero", name, ws.WorkspaceID)
		}
		res, err := tx.StmtContext(ctx, a.stmts[rowsAccountUpdate]).ExecContext(ctx, strconv.FormatInt(b, 10), r.version+1,
			a.at(now), ws.TenantID, ws.WorkspaceID, "test", credits, name, r.version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("rows anchor: account %s changed meanwhile (%v)", name, err)
		}
	}
	return nil
}

// prepare prepares SQLite's statements on pool.
func (a *rowsAnchor) prepare(ctx context.Context, pool *sql.DB) error {
	for _, q := range []string{rowsOperationInsert, rowsJobInsert, rowsReceiptInsert, rowsIdempotencyInsert + rowsIdempotencyOnConflict,
		rowsMovementInsert + rowsMovementOnConflict, rowsPostingsInsert, rowsOutboxInsert, rowsAccountsRead, rowsAccountUpdate} {
		s, err := pool.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("rows anchor: prepare: %w", err)
		}
		a.stmts[q] = s
	}
	return nil
}

// closeStmts closes the prepared statements.
func (a *rowsAnchor) closeStmts() {
	for _, s := range a.stmts {
		s.Close()
	}
}

// seed gives each workspace of wss both accounts a unit changes, when the
// copied ledger lacks them: benchCredits credits and no reservation.
func (a *rowsAnchor) seed(ctx context.Context, pool *sql.DB, wss []platform.Bootstrap) error {
	q := rowsAccountSeed
	if a.dialect == store.Postgres {
		q = a.pg[q]
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, ws := range wss {
		for _, acc := range []struct{ name, balance string }{
			{ledger.AccountWorkspaceCredits, strconv.Itoa(benchCredits)}, {ledger.AccountWorkspaceReserved, "0"}} {
			if _, err := pool.ExecContext(ctx, q, ws.TenantID, ws.WorkspaceID, "test", string(ledger.Credits), acc.name,
				ledger.CreditsDecimals, false, acc.balance, a.at(now), a.at(now)); err != nil {
				return fmt.Errorf("rows anchor: seed accounts: %w", err)
			}
		}
		if a.dialect != store.Postgres {
			continue
		}
		for slot := range rowsSlots {
			for _, acc := range []struct{ name, balance, room string }{
				{ledger.AccountWorkspaceCredits, strconv.Itoa(benchCredits / rowsSlots), "0"},
				{ledger.AccountWorkspaceReserved, "0", strconv.Itoa(benchCredits)}} {
				if _, err := pool.ExecContext(ctx, a.pg[rowsSlotSeed], ws.TenantID, ws.WorkspaceID, "test", string(ledger.Credits),
					acc.name, slot, acc.balance, acc.room, now); err != nil {
					return fmt.Errorf("rows anchor: seed slots: %w", err)
				}
			}
		}
	}
	return nil
}

// scratchName renames the tables of rowsTables in SQL text to their bench_
// copies.
func scratchName() func(string) string {
	re := regexp.MustCompile(`\b(` + strings.Join(rowsTables(), "|") + `)\b`)
	return func(s string) string { return re.ReplaceAllString(s, "bench_$1") }
}

// sqliteScratch makes the bench_ copies of rowsTables on SQLite: each
// table's own CREATE TABLE and CREATE INDEX statements with the tables
// (and indexes) renamed, so the columns, constraints, foreign keys (to
// tenants and workspaces, which stay the platform's, and between the
// copies) and indexes are the platform's; then its rows.
func sqliteScratch(ctx context.Context, pool *sql.DB) error {
	rename := scratchName()
	index := regexp.MustCompile(`^(CREATE\s+(?:UNIQUE\s+)?INDEX\s+)(\w+)`)
	for _, t := range rowsTables() {
		rows, err := pool.QueryContext(ctx, `SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL
			ORDER BY type = 'index', name`, t)
		if err != nil {
			return fmt.Errorf("scratch %s: %w", t, err)
		}
		var ddl []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return fmt.Errorf("scratch %s: %w", t, err)
			}
			ddl = append(ddl, index.ReplaceAllString(rename(s), "${1}bench_${2}"))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("scratch %s: %w", t, err)
		}
		if len(ddl) == 0 {
			return fmt.Errorf("scratch %s: no such table", t)
		}
		for _, s := range append(ddl, "INSERT INTO bench_"+t+" SELECT * FROM "+t) {
			if _, err := pool.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("scratch %s: %w", t, err)
			}
		}
	}
	return nil
}

// postgresScratch makes the bench_ copies of rowsTables on PostgreSQL:
// LIKE ... INCLUDING ALL (columns, defaults, constraints, indexes), the
// rows, then the foreign keys, which LIKE leaves out, renamed as
// sqliteScratch renames them.
func postgresScratch(ctx context.Context, pool *sql.DB) error {
	for _, t := range rowsTables() {
		for _, s := range []string{"CREATE TABLE bench_" + t + " (LIKE " + t + " INCLUDING ALL)", "INSERT INTO bench_" + t + " SELECT * FROM " + t} {
			if _, err := pool.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("scratch %s: %w", t, err)
			}
		}
	}
	rename := scratchName()
	for _, t := range rowsTables() {
		rows, err := pool.QueryContext(ctx, `SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conrelid = to_regclass($1) AND contype = 'f' ORDER BY conname`, t)
		if err != nil {
			return fmt.Errorf("scratch %s: %w", t, err)
		}
		var adds []string
		for rows.Next() {
			var name, def string
			if err := rows.Scan(&name, &def); err != nil {
				rows.Close()
				return fmt.Errorf("scratch %s: %w", t, err)
			}
			adds = append(adds, "ALTER TABLE bench_"+t+" ADD CONSTRAINT "+pgx.Identifier{"bench_" + name}.Sanitize()+" "+rename(def))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("scratch %s: %w", t, err)
		}
		for _, s := range adds {
			if _, err := pool.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("scratch %s: %w", t, err)
			}
		}
	}
	return nil
}

// sqliteWriterDSN is the data source name sqlite.Open gives the store's
// writer for the database at path.
func sqliteWriterDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "wal_autocheckpoint(20000)")
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	return "file:" + path + "?" + q.Encode()
}

// checkpointer copies the WAL into the database file on a connection of
// its own, 10 ms after a commit wakes it, as the SQLite store's
// checkpointer does beside its writer (store/sqlite/checkpoint.go).
type checkpointer struct {
	db   *sql.DB
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// startCheckpointer starts a checkpointer on db, a pool it owns.
func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				return
			case <-c.wake:
			}
			select {
			case <-c.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			_, _ = c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
		}
	}()
	return c
}

// committed wakes the checkpointer; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close stops the checkpointer and closes its pool.
func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
	c.db.Close()
}

// rowsRunner writes the rows of one accept (acceptWrites) for a workspace
// on one database, in the two ways the anchor measures: a bare
// transaction of its own, and a unit of work through store.DB.InTx. The
// dialects differ only in these two funcs (rowsSQLite, rowsPostgres);
// run measures both alike.
type rowsRunner struct {
	name    string
	dialect store.Dialect
	// pool is the anchor's own pool on the database, and db the store the
	// units go through (on SQLite a store over pool, with group commit).
	pool *sql.DB
	db   *store.DB
	// bareFunc writes one accept's rows for ws in a transaction of its
	// own; unitFunc writes them in one unit of work of db.
	bareFunc, unitFunc func(ctx context.Context, ws platform.Bootstrap) error
}

// rowsMeasured are the anchor's four measurements on one database: bare
// transactions and units of work through store.DB.InTx, each with every
// client on one workspace and with one workspace per client.
type rowsMeasured struct {
	bare, bareSpread, units, unitsSpread result
}

// run first counts what probeRuns bare transactions write to the bench_
// tables and prints it beside acceptWrites, then measures the bare
// transactions and the units, each with every client on acc.oneWS and
// with client c on acc.spreadWS[c], and prints each and the accept rates'
// ratios to them.
func (r rowsRunner) run(ctx context.Context, acc accepts, cfg config) error {
	got, err := countWrites(ctx, r.dialect, r.pool, benchTables(), func(int) error { return r.bareFunc(ctx, acc.oneWS) })
	if err != nil {
		return fmt.Errorf("rows anchor: %w", err)
	}
	printWrites(fmt.Sprintf("rows per same-rows transaction (%s, %d sequential)", r.name, probeRuns), r.dialect, "bench_", got)

	each := func(f func(context.Context, platform.Bootstrap) error, wss []platform.Bootstrap) result {
		return measureOps(ctx, cfg.clients, cfg.duration, func(ctx context.Context, c, _ int) error {
			return f(ctx, wss[c%len(wss)])
		})
	}
	one, spread := []platform.Bootstrap{acc.oneWS}, fmt.Sprintf("%d workspaces", len(acc.spreadWS))
	var m rowsMeasured
	m.bare = each(r.bareFunc, one)
	m.bare.print("bare same-rows transactions ("+r.name+", one workspace)", "tx/s")
	m.bareSpread = each(r.bareFunc, acc.spreadWS)
	m.bareSpread.print("bare same-rows transactions ("+r.name+", "+spread+")", "tx/s")
	w := r.db.WriterStats()
	m.units = each(r.unitFunc, one)
	m.units.print("  same-rows units through store.DB.InTx ("+r.name+", one workspace)", "units/s")
	w = printWriter(r.db, w, m.units, "unit")
	m.unitsSpread = each(r.unitFunc, acc.spreadWS)
	m.unitsSpread.print("  same-rows units through store.DB.InTx ("+r.name+", "+spread+")", "units/s")
	printWriter(r.db, w, m.unitsSpread, "unit")
	acc.printRowsRatios(r.name, m)
	return nil
}

// rowsSQLite measures the rows anchor on the SQLite database at path.
func rowsSQLite(ctx context.Context, path string, acc accepts, cfg config) error {
	a, err := newRowsAnchor(store.SQLite)
	if err != nil {
		return err
	}
	pool, err := sql.Open("sqlite", sqliteWriterDSN(path))
	if err != nil {
		return err
	}
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	pool.SetConnMaxLifetime(0)
	ckptPool, err := sql.Open("sqlite", sqliteWriterDSN(path))
	if err != nil {
		pool.Close()
		return err
	}
	ckptPool.SetMaxOpenConns(1)
	ckpt := startCheckpointer(ckptPool)
	defer ckpt.close()
	// The store over the anchor's pool, with group commit as sqlite.Open
	// makes it: its units run the statements prepared on the pool.
	sdb := store.New(store.SQLite, bun.NewDB(pool, sqlitedialect.New()), nil, store.Options{CommittedFunc: ckpt.committed, GroupCommit: true})
	defer sdb.Close()
	if err := sqliteScratch(ctx, pool); err != nil {
		return err
	}
	if err := a.seed(ctx, pool, append([]platform.Bootstrap{acc.oneWS}, acc.spreadWS...)); err != nil {
		return err
	}
	if err := a.prepare(ctx, pool); err != nil {
		return err
	}
	defer a.closeStmts()
	return rowsRunner{name: "sqlite", dialect: store.SQLite, pool: pool, db: sdb,
		bareFunc: func(ctx context.Context, ws platform.Bootstrap) error {
			tx, err := pool.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := a.sqliteUnit(ctx, tx, ws); err != nil {
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			ckpt.committed()
			return nil
		},
		unitFunc: func(ctx context.Context, ws platform.Bootstrap) error {
			return sdb.InTx(ctx, func(tx *store.Tx) error {
				btx, ok := tx.IDB().(bun.Tx)
				if !ok {
					return fmt.Errorf("rows anchor: unit of work on %T", tx.IDB())
				}
				return a.sqliteUnit(ctx, btx.Tx, ws)
			})
		}}.run(ctx, acc, cfg)
}

// rowsPostgres measures the rows anchor on the PostgreSQL schema that u
// selects, through db (the platform's store on it) for the units of work.
func rowsPostgres(ctx context.Context, db *store.DB, u string, acc accepts, cfg config) error {
	a, err := newRowsAnchor(store.Postgres)
	if err != nil {
		return err
	}
	pool, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer pool.Close()
	pool.SetMaxOpenConns(16)
	pool.SetMaxIdleConns(16)
	if err := postgresScratch(ctx, pool); err != nil {
		return err
	}
	if err := a.seed(ctx, pool, append([]platform.Bootstrap{acc.oneWS}, acc.spreadWS...)); err != nil {
		return err
	}
	return rowsRunner{name: "postgres", dialect: store.Postgres, pool: pool, db: db,
		// A bare transaction is one batch: BEGIN, the statements and
		// COMMIT sent together, as the store's driver sends an accept's.
		bareFunc: func(ctx context.Context, ws platform.Bootstrap) error {
			stmts := a.postgresUnit(ws)
			conn, err := pool.Conn(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			return conn.Raw(func(dc any) error {
				sc, ok := dc.(*stdlib.Conn)
				if !ok {
					return fmt.Errorf("rows anchor: driver connection %T", dc)
				}
				b := &pgx.Batch{}
				b.Queue("begin")
				for _, s := range stmts {
					b.Queue(a.pg[s.query], s.args...)
				}
				b.Queue("commit")
				if err := sc.Conn().SendBatch(ctx, b).Close(); err != nil {
					_, _ = sc.Conn().Exec(context.WithoutCancel(ctx), "rollback")
					return err
				}
				return nil
			})
		},
		// Through the store, every statement is deferred: its driver holds
		// them and sends them with the COMMIT.
		unitFunc: func(ctx context.Context, ws platform.Bootstrap) error {
			stmts := a.postgresUnit(ws)
			return db.InTx(ctx, func(tx *store.Tx) error {
				btx, ok := tx.IDB().(bun.Tx)
				if !ok {
					return fmt.Errorf("rows anchor: unit of work on %T", tx.IDB())
				}
				dctx := store.Defer(ctx, store.Held{})
				for _, s := range stmts {
					if _, err := btx.Tx.ExecContext(dctx, a.pg[s.query], s.args...); err != nil {
						return err
					}
				}
				return nil
			})
		}}.run(ctx, acc, cfg)
}

// printRowsRatios prints, for one workspace and for the spread
// workspaces, the accept rate as a share of the bare same-rows
// transactions' against the goal (at least 50%) with the accept p99
// against its goal (under 20 ms) beside the bare p99, then the share of
// the units' rate through store.DB.InTx against the same goal.
func (acc accepts) printRowsRatios(name string, m rowsMeasured) {
	verdict := func(pct float64) string {
		if pct < 50 {
			return "below"
		}
		return "meets"
	}
	for _, r := range []struct {
		label        string
		acc, bare, u result
	}{{"one workspace", acc.one, m.bare, m.units}, {fmt.Sprintf("%d workspaces", len(acc.spreadWS)), acc.spread, m.bareSpread, m.unitsSpread}} {
		if r.bare.rps() <= 0 || r.u.rps() <= 0 {
			fmt.Printf("ratio (%s, %s): accept/same-rows not measured (an anchor had no successful unit)\n", name, r.label)
			continue
		}
		lat := "meets"
		if r.acc.p99 >= 20*time.Millisecond {
			lat = "misses"
		}
		bare, units := 100*r.acc.rps()/r.bare.rps(), 100*r.acc.rps()/r.u.rps()
		fmt.Printf("ratio (%s, %s): accept/same-rows bare = %.1f%% (%s the 50%% goal); accept p99 %s (%s the < 20 ms goal), bare p99 %s\n",
			name, r.label, bare, verdict(bare), fmtDur(r.acc.p99), lat, fmtDur(r.bare.p99))
		fmt.Printf("  accept/same-rows units through store.DB.InTx = %.1f%% (%s the 50%% goal)\n", units, verdict(units))
	}
}
