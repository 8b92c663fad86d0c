package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/creatormusic/platform/store"
)

// tableWrites are the rows written to one table: inserted, updated and
// deleted.
type tableWrites struct {
	table                     string
	inserts, updates, deletes int
}

// acceptWrites are the rows one generation accept writes (POST
// /api/v1/music/generate of generateBody by an API key, the job pool
// disabled), by table, in the order the accept writes them: the one list
// the rows anchor (rows.go) is built from and checked against. The accept
// runs, in one unit of work:
//
//   - operation.Accept: the operation (store.GenerationOperationInsert)
//     and its dispatch job (store.JobEnqueue);
//   - the gateway's complete (transport.Gateway): the request receipt
//     (store.ReceiptInsert) and the idempotency record holding the 202
//     answer (store.IdempotencyInsertLater);
//   - ledger.Reserve, just before the commit (ledger.Service.Post): the
//     reserve movement with its two postings (store.LedgerMovementInsert),
//     its ledger.movement_posted outbox event (store.OutboxInsert), and the
//     workspace's credit and reserved balances, each changed by one UPDATE
//     (store.LedgerAccountsApply; PostgreSQL's insert that opens missing
//     accounts writes nothing once both exist).
//
// Nothing else is written per accept. The key's monthly request count
// (api_key_usage) and its last use (api_keys.last_used_at) are written by
// the gateway's limiter in batches, every
// platform.Config.UsageFlushInterval, not per request: when a flush falls
// within a count, the bench prints those rows apart, as not once per
// accept. The credits account exists from the workspace's first grant;
// its first reservation opens the reserved account (one ledger_accounts
// insert, once per workspace); the counts begin after it.
//
// The bench counts what the accept writes on every run (probeAccept) and
// prints any difference from this list. When the accept path changes,
// change this list, and the statements of rowsAnchor.inserts and its
// balance changes with it; the bench counts those too (rowsRunner.run).
func acceptWrites(d store.Dialect) []tableWrites {
	out := []tableWrites{
		{table: "generation_operations", inserts: 1},
		{table: "jobs", inserts: 1},
		{table: "request_receipts", inserts: 1},
		{table: "idempotency_records", inserts: 1},
		{table: "ledger_movements", inserts: 1},
		{table: "ledger_postings", inserts: 2},
		{table: "outbox_events", inserts: 1},
	}
	if d == store.Postgres {
		// Spread balances: each change takes one slot (migration 22).
		return append(out, tableWrites{table: "ledger_accounts"}, tableWrites{table: "ledger_account_slots", updates: 2})
	}
	return append(out, tableWrites{table: "ledger_accounts", updates: 2})
}

// probeRuns is how many accepts (or anchor units) a write count runs.
const probeRuns = 20

// writeCounter counts the rows written to a set of tables while it runs:
// a trigger on each table adds one to its row of bench_write_counts per
// row inserted, updated or deleted (INSERT ... ON CONFLICT DO NOTHING that
// skips writes nothing and counts nothing). The triggers slow every write,
// so a counter runs only around an untimed probe and is stopped before
// anything is measured.
type writeCounter struct {
	dialect store.Dialect
	pool    *sql.DB
	tables  []string
}

// writeOps are the operations a writeCounter counts, as TG_OP names them
// on PostgreSQL.
func writeOps() []string { return []string{"INSERT", "UPDATE", "DELETE"} }

// startWriteCounter installs the counting triggers on tables through pool.
func startWriteCounter(ctx context.Context, d store.Dialect, pool *sql.DB, tables []string) (*writeCounter, error) {
	w := &writeCounter{dialect: d, pool: pool, tables: tables}
	stmts := []string{"CREATE TABLE bench_write_counts (tbl TEXT NOT NULL, op TEXT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (tbl, op))"}
	if d == store.Postgres {
		stmts = append(stmts, `CREATE FUNCTION bench_count_write() RETURNS trigger LANGUAGE plpgsql AS $f$
			BEGIN
				UPDATE bench_write_counts SET n = n + 1 WHERE tbl = TG_TABLE_NAME AND op = TG_OP;
				RETURN NULL;
			END $f$`)
	}
	for _, t := range tables {
		for _, op := range writeOps() {
			stmts = append(stmts, "INSERT INTO bench_write_counts (tbl, op, n) VALUES ('"+t+"', '"+op+"', 0)")
		}
		stmts = append(stmts, w.triggers(t)...)
	}
	for _, s := range stmts {
		if _, err := pool.ExecContext(ctx, s); err != nil {
			return nil, errors.Join(fmt.Errorf("write counter: %w", err), w.stop(ctx))
		}
	}
	return w, nil
}

// triggers are the statements that count the writes to table t.
func (w *writeCounter) triggers(t string) []string {
	q := `"` + t + `"`
	if w.dialect == store.Postgres {
		return []string{"CREATE TRIGGER bench_count_write AFTER INSERT OR UPDATE OR DELETE ON " + q +
			" FOR EACH ROW EXECUTE FUNCTION bench_count_write()"}
	}
	var out []string
	for _, op := range writeOps() {
		out = append(out, `CREATE TRIGGER "bench_count_`+t+`_`+op+`" AFTER `+op+` ON `+q+
			` BEGIN UPDATE bench_write_counts SET n = n + 1 WHERE tbl = '`+t+`' AND op = '`+op+`'; END`)
	}
	return out
}

// counts returns the rows written to each table since the counter started,
// in the order of its tables.
func (w *writeCounter) counts(ctx context.Context) ([]tableWrites, error) {
	rows, err := w.pool.QueryContext(ctx, "SELECT tbl, op, n FROM bench_write_counts")
	if err != nil {
		return nil, fmt.Errorf("write counter: %w", err)
	}
	by := map[string]*tableWrites{}
	for rows.Next() {
		var t, op string
		var n int
		if err := rows.Scan(&t, &op, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("write counter: %w", err)
		}
		c := by[t]
		if c == nil {
			c = &tableWrites{table: t}
			by[t] = c
		}
		switch op {
		case "INSERT":
			c.inserts = n
		case "UPDATE":
			c.updates = n
		case "DELETE":
			c.deletes = n
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("write counter: %w", err)
	}
	out := make([]tableWrites, 0, len(w.tables))
	for _, t := range w.tables {
		if c := by[t]; c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// stop drops the triggers and bench_write_counts; it drops what exists, so
// it also undoes a start that failed halfway.
func (w *writeCounter) stop(ctx context.Context) error {
	var stmts []string
	for _, t := range w.tables {
		if w.dialect == store.Postgres {
			stmts = append(stmts, `DROP TRIGGER IF EXISTS bench_count_write ON "`+t+`"`)
			continue
		}
		for _, op := range writeOps() {
			stmts = append(stmts, `DROP TRIGGER IF EXISTS "bench_count_`+t+`_`+op+`"`)
		}
	}
	if w.dialect == store.Postgres {
		stmts = append(stmts, "DROP FUNCTION IF EXISTS bench_count_write()")
	}
	stmts = append(stmts, "DROP TABLE IF EXISTS bench_write_counts")
	var errs []error
	for _, s := range stmts {
		if _, err := w.pool.ExecContext(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("write counter: stop: %w", err)
	}
	return nil
}

// countWrites runs fn probeRuns times with the writes to tables counted,
// and returns the counts.
func countWrites(ctx context.Context, d store.Dialect, pool *sql.DB, tables []string, fn func(i int) error) ([]tableWrites, error) {
	w, err := startWriteCounter(ctx, d, pool, tables)
	if err != nil {
		return nil, err
	}
	for i := range probeRuns {
		if err := fn(i); err != nil {
			return nil, errors.Join(err, w.stop(ctx))
		}
	}
	got, err := w.counts(ctx)
	return got, errors.Join(err, w.stop(ctx))
}

// platformTables lists the platform's tables on pool's database (schema,
// on PostgreSQL), the bench's own bench_ tables left out.
func platformTables(ctx context.Context, d store.Dialect, pool *sql.DB) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND name NOT LIKE 'bench\_%' ESCAPE '\' ORDER BY name`
	if d == store.Postgres {
		q = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE 'bench\_%' ORDER BY tablename`
	}
	rows, err := pool.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list tables: %w", err)
		}
		out = append(out, t)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// printWrites prints the writes per run of got (counted over probeRuns
// runs; table names without prefix), the tables of acceptWrites first in
// its order, and whether they are acceptWrites:
// a table written other than a whole number of times per run is listed
// apart, as written meanwhile rather than by each run.
func printWrites(label string, d store.Dialect, prefix string, got []tableWrites) {
	want := map[string]tableWrites{}
	for _, w := range acceptWrites(d) {
		want[w.table] = w
	}
	order := map[string]int{}
	for i, w := range acceptWrites(d) {
		order[w.table] = i + 1
	}
	rank := func(w tableWrites) int {
		if n := order[strings.TrimPrefix(w.table, prefix)]; n > 0 {
			return n
		}
		return len(order) + 1
	}
	got = slices.Clone(got)
	slices.SortStableFunc(got, func(a, b tableWrites) int { return rank(a) - rank(b) })
	var per, apart, diff []string
	seen := map[string]bool{}
	for _, g := range got {
		g.table = strings.TrimPrefix(g.table, prefix)
		if g.inserts+g.updates+g.deletes == 0 {
			continue
		}
		if g.inserts%probeRuns != 0 || g.updates%probeRuns != 0 || g.deletes%probeRuns != 0 {
			apart = append(apart, fmt.Sprintf("%s %s in %d runs", g.table, g.format(), probeRuns))
			continue
		}
		g.inserts, g.updates, g.deletes = g.inserts/probeRuns, g.updates/probeRuns, g.deletes/probeRuns
		per = append(per, g.table+" "+g.format())
		seen[g.table] = true
		if w := want[g.table]; w != g {
			diff = append(diff, fmt.Sprintf("%s %s (the list: %s)", g.table, g.format(), w.format()))
		}
	}
	for _, w := range acceptWrites(d) {
		if !seen[w.table] && w.inserts+w.updates+w.deletes > 0 {
			diff = append(diff, fmt.Sprintf("%s nothing (the list: %s)", w.table, w.format()))
		}
	}
	fmt.Printf("%s: %s\n", label, strings.Join(per, ", "))
	if len(apart) > 0 {
		fmt.Printf("  not once per run: %s\n", strings.Join(apart, ", "))
	}
	if len(diff) > 0 {
		fmt.Printf("  DIFFERS from the rows anchor's list (acceptWrites): %s\n", strings.Join(diff, "; "))
		return
	}
	fmt.Println("  the same as the rows anchor's list (acceptWrites)")
}

// format is w as "+inserts ~updates -deletes", zero counts left out.
func (w tableWrites) format() string {
	var parts []string
	for _, c := range []struct {
		sign string
		n    int
	}{{"+", w.inserts}, {"~", w.updates}, {"-", w.deletes}} {
		if c.n != 0 {
			parts = append(parts, fmt.Sprintf("%s%d", c.sign, c.n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// probeAccept counts what probeRuns sequential accepts on sys (each of
// generateBody with an Idempotency-Key of its own, answered 202; after one
// accept of the workspace) write to every platform table of pool's
// database, and prints it beside acceptWrites.
func probeAccept(ctx context.Context, d store.Dialect, pool *sql.DB, sys *system, name string) error {
	tables, err := platformTables(ctx, d, pool)
	if err != nil {
		return err
	}
	accept := func(i int) error {
		req, err := sys.generateRequest(ctx, fmt.Sprintf("bench-probe-%s-%d", sys.runID, i))
		if err != nil {
			return err
		}
		status, body, err := do(sys.client, req)
		if err != nil || status != http.StatusAccepted {
			return fmt.Errorf("probe generate: %d %v: %.300s", status, err, body)
		}
		return nil
	}
	// The workspace's first reservation also opens its reserved account
	// (one more ledger_accounts insert, once per workspace); the measured
	// accepts come after their clients' warm-up, so count after one too.
	if err := accept(-1); err != nil {
		return err
	}
	got, err := countWrites(ctx, d, pool, tables, accept)
	if err != nil {
		return err
	}
	printWrites(fmt.Sprintf("rows per accept (%s, %d sequential)", name, probeRuns), d, "", got)
	return nil
}
