// Command bench measures the platform's HTTP gateway and its music
// generation accept path over loopback.
//
// It starts the platform (platform.New, logs discarded) on a fresh SQLite
// database in a temp dir, serves its handler on 127.0.0.1, and drives it
// with -clients concurrent clients for -duration per measurement:
//
//  1. GET /api/v1/auth/context with an API key (Authorization: Bearer), the
//     cheapest authenticated route: requests/second (200s only), p50 and p99
//     latency, and the count of every other status or transport error;
//  2. the same for a bare net/http handler on its own loopback listener that
//     serves the bytes of one real auth/context response body with
//     Content-Type application/json (the ceiling of net/http on this machine);
//  3. the gateway's rate as a percentage of the bare handler's (the goal is
//     at least 50%);
//  4. idempotent POST /api/v1/api-keys (a unique Idempotency-Key per request);
//  5. accept to completed: -generations sequential POST
//     /api/v1/music/generate, each followed by GET /api/v1/operations/{id}
//     every 5 ms until it is completed, timed from the 202 to the first
//     completed answer: p50, p99 and mean. Both provider simulators
//     (generation/providera/provideratest in the sunoapi dialect, and
//     providerbtest) run in-process on loopback with AutoAdvance set to
//     -advance, wired as test mode's providers A and B with platform-managed
//     keys, and Generation.CallbackBaseURL is the bench's own loopback URL,
//     so callbacks reach it. Every operation goes to provider A (the default
//     route), whose task passes 3 stages, so each time includes 3 x -advance
//     of simulated provider work. The platform's and simulator A's create
//     windows (18 and 20 per 10 s by default) are raised so that the
//     sequence measures the platform, not those throttles;
//  6. idempotent POST /api/v1/music/generate (a unique Idempotency-Key per
//     request) on a second platform instance on the same store whose job
//     pool is disabled (platform.JobsConfig{Disabled: true}), so no
//     dispatch job competes with the accept path. First, untimed, the
//     rows it writes: after one accept, 20 sequential accepts with a
//     counting trigger on every platform table (installed for them and
//     dropped before anything is timed), printed per accept and table
//     (+inserts ~updates -deletes) beside the list the rows anchor of
//     measurement 8 writes (acceptWrites, writes.go), with any difference
//     flagged. Then the accepts: requests/second (202s only), p50 and
//     p99; on SQLite also what the store's single writer
//     did meanwhile (store.DB.WriterStats): the share of the run it was
//     busy, its time per accept and the units per group commit. First
//     with every client on the bootstrap workspace, then with -clients
//     workspaces (each bootstrapped as a tenant of its own, with
//     benchCredits test credits), one per client;
//  7. bare two-row insert transactions on the same database with the same
//     clients: each a database transaction of its own (BEGIN, two INSERTs
//     into a scratch table bench_pairs(id TEXT PRIMARY KEY, v TEXT), COMMIT)
//     through database/sql on a pool opened as the store opens its writer
//     (SQLite: one connection, WAL, synchronous NORMAL, BEGIN IMMEDIATE;
//     PostgreSQL: 16 connections): transactions/second, p50 and p99; then
//     the same two-row units of work through store.DB.InTx (on SQLite the
//     store's group commit puts several units in one transaction, and the
//     writer's figures follow), printed for comparison only; then the
//     ratio accept/bare (bare transactions) against the goal (at least
//     25%) and the accept p99 against the goal (under 20 ms);
//  8. the anchor of the accept rate: bare transactions that write the
//     rows one accept writes, and nothing else (rows.go; the rows are
//     listed once, in acceptWrites, and the same trigger count as in
//     measurement 6 checks 20 units against that list). Each unit writes
//     a generation operation and its dispatch job (operation.Accept), the
//     request receipt and the idempotency record with the 202 answer (the
//     gateway's complete), the reserve movement with its two postings and
//     its outbox event (ledger.Post), and changes the workspace's credit
//     and reserved balances by the 15 credits an accept reserves: on
//     SQLite read, changed in Go and written back under the versions read;
//     on PostgreSQL changed in one slot each (one that can take the change
//     and that no other transaction holds: migration 0022's common case,
//     whose function also opens a missing account). The
//     statements are the store's, in the order an accept runs them, and
//     the values have the shapes and sizes of an accept's. They write
//     bench_ copies of those nine tables made from the platform's
//     (columns, constraints, indexes, foreign keys to tenants and
//     workspaces, and rows), so nothing of the platform's data is written.
//     On SQLite each unit is a transaction of its own through a pool opened
//     as sqlite.Open opens the store's writer (one connection, WAL,
//     synchronous NORMAL, foreign keys, BEGIN IMMEDIATE), the statements
//     prepared once, with a checkpointer beside it as the store has; then
//     the same units through store.DB.InTx of a store over that pool
//     (group commit), with the writer's figures. On PostgreSQL each unit is
//     one batch on a pool of 16 connections (BEGIN, the statements and
//     COMMIT sent together, as the store's pipelining driver sends an
//     accept's: one statement at a time, the anchor would measure round
//     trips, not rows); then the same units through the platform's
//     store.DB.InTx, every statement deferred. Each runs with every client
//     on the bootstrap workspace (every unit changes the same two balances,
//     as the accepts of one workspace do, with no admission in front of
//     them) and
//     with the workspaces of measurement 6, one per client:
//     transactions/second, p50 and p99. Then, for one and for -clients
//     workspaces, the ratio accept/same-rows bare against the goal (at
//     least 50%) with the accept p99 against its goal (under 20 ms) beside
//     the bare p99, and the ratio to the units through store.DB.InTx
//     against the same 50%. On SQLite the accepts commit in groups, as
//     the units through store.DB.InTx do, so they may pass the bare
//     transactions, which commit one at a time; on PostgreSQL the accepts
//     of one workspace pass an admission queue (operation.Service.Admit)
//     before they take the balance rows' locks, so they may pass units
//     that all wait on those locks at once;
//  9. measurements 1 to 8 again on PostgreSQL when -postgres names a
//     server (the gateway's GET beside its own bare handler run, so that
//     each database's ratio is printed): the bench creates a fresh schema
//     bench_<random>, opens the store with search_path set to it, and drops
//     it at exit;
//  10. the process's peak and current resident set size (VmHWM and VmRSS of
//     /proc/self/status) after the run.
//
// Keys' limits would cap the measurement (at most 6,000 requests per minute
// by default), so the bench configures the platform as an operator would
// for a load test: apikey.Config.MaxLimits raised to benchLimits, and the
// bootstrap key's limits set to those maximums with
// PUT /api/v1/api-keys/{keyId}/limits before measuring. A workspace gets
// 10,000 test credits a month and each generation reserves 15, so the
// bench grants each bootstrapped workspace benchCredits test credits
// (ledger.Service.Grant in one store unit of work); the simulators start
// with benchCredits provider credits.
//
// The clients run in the same process as the server, so every figure
// includes the client's cost as well; compare rates measured in the same
// run, not absolute numbers across machines.
//
// Run it from the module root:
//
//	go run ./examples/bench
//	go run ./examples/bench -postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//
// Flags: -duration (per measurement, default 5s), -clients (default 16),
// -postgres URL, -only sqlite|postgres, -generations (default 20), -advance (default 50ms),
// -cpuprofile file (a CPU profile of the gateway GET measurement only),
// -accept-cpuprofile file and -postgres-accept-cpuprofile file (a CPU
// profile of the SQLite or PostgreSQL generate accept measurement only),
// all for go tool pprof.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for schema set-up

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/generation/providera"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
	"github.com/creatormusic/platform/urlguard"
)

// secretKey is the bench platform's fixed master secret (32+ bytes).
var secretKey = []byte("bench-master-secret-0123456789abcdef-not-for-production")

// benchLimits are the platform's maximum key limits during the bench, and
// the bootstrap key's limits: high enough that no limit caps a run.
var benchLimits = apikey.Limits{RequestsPerMinute: 10_000_000, MaxConcurrentRequests: 4096, MonthlyRequestBudget: 1_000_000_000_000}

// benchCredits are the test credits granted to each bootstrapped workspace
// (a generation reserves 15), and the simulators' starting provider credits.
const benchCredits = 100_000_000

// benchCreateLimit is the create window, per 10 s, of the platform's
// provider scheduler and of simulator A during the bench.
const benchCreateLimit = 100_000

// createBody is the body of every POST /api/v1/api-keys.
const createBody = `{"name":"bench","scopes":["keys:read"]}`

// generateBody is the body of every POST /api/v1/music/generate.
const generateBody = `{"prompt":"An upbeat synth-pop track about city lights","model":"v5"}`

// config is the bench's flags.
type config struct {
	duration      time.Duration
	clients       int
	pgURL         string
	cpuProfile    string
	acceptProfile string
	pgProfile     string
	only          string
	gatewayOnly   bool
	generations   int
	advance       time.Duration
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "length of each measurement")
	flag.IntVar(&cfg.clients, "clients", 16, "concurrent clients")
	flag.StringVar(&cfg.pgURL, "postgres", "", "PostgreSQL URL; when set, every measurement also runs on a fresh schema of it")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the gateway GET measurement to this file (SQLite's; PostgreSQL's with -only postgres)")
	flag.StringVar(&cfg.acceptProfile, "accept-cpuprofile", "", "write a CPU profile of the SQLite generate accept measurement to this file")
	flag.StringVar(&cfg.pgProfile, "postgres-accept-cpuprofile", "", "write a CPU profile of the PostgreSQL generate accept measurement to this file")
	flag.StringVar(&cfg.only, "only", "", "run only the sqlite or the postgres measurements")
	flag.BoolVar(&cfg.gatewayOnly, "gateway-only", false, "run only the gateway GET beside bare net/http, on each database")
	flag.IntVar(&cfg.generations, "generations", 20, "sequential generations of the accept-to-completed measurement")
	flag.DurationVar(&cfg.advance, "advance", 50*time.Millisecond, "the provider simulators' AutoAdvance: time per task stage")
	flag.Parse()
	if cfg.duration <= 0 || cfg.clients < 1 || cfg.generations < 1 || cfg.advance <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -duration and -advance must be positive, -clients and -generations at least 1")
		os.Exit(2)
	}
	if cfg.only != "" && cfg.only != "sqlite" && cfg.only != "postgres" {
		fmt.Fprintln(os.Stderr, "bench: -only is sqlite or postgres")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	fmt.Printf("bench: %d clients, %s per measurement, loopback 127.0.0.1\n", cfg.clients, cfg.duration)
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        cfg.clients * 2,
			MaxIdleConnsPerHost: cfg.clients,
			IdleConnTimeout:     30 * time.Second,
		},
		Timeout: 30 * time.Second,
	}
	defer client.CloseIdleConnections()
	sims, err := startSims(cfg.advance)
	if err != nil {
		return err
	}
	defer sims.close()

	// SQLite: GET auth/context, the bare handler, POST api-keys, accept to
	// completed, then the generation accept path beside bare inserts.
	if cfg.only != "postgres" {
		if err := runSQLiteFile(ctx, client, sims, cfg); err != nil {
			return err
		}
	}

	// PostgreSQL: the same measurements, the gateway's GET with its ratio
	// to the bare handler included.
	switch {
	case cfg.only == "sqlite":
	case cfg.pgURL == "":
		fmt.Println("postgres: skipped (no -postgres URL)")
	default:
		if err := runPostgres(ctx, client, sims, cfg); err != nil {
			return err
		}
	}

	peak, cur, err := rss()
	if err != nil {
		return err
	}
	fmt.Printf("memory: peak RSS (VmHWM) %s, current RSS (VmRSS) %s\n", peak, cur)
	return nil
}

// runSQLiteFile runs the SQLite measurements on a new database file.
func runSQLiteFile(ctx context.Context, client *http.Client, sims *providerSims, cfg config) error {
	dir, err := os.MkdirTemp("", "platform-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		return err
	}
	if err := runSQLite(ctx, db, filepath.Join(dir, "platform.db"), client, sims, cfg); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

func runSQLite(ctx context.Context, db *store.DB, path string, client *http.Client, sims *providerSims, cfg config) error {
	sys, err := start(ctx, db, client, sims, platform.JobsConfig{})
	if err != nil {
		return err
	}
	defer sys.close()
	if err := gatewayBesideBare(ctx, client, sys, cfg, "sqlite", cfg.cpuProfile); err != nil || cfg.gatewayOnly {
		return err
	}
	post := measure(ctx, client, cfg.clients, cfg.duration, http.StatusCreated, sys.postKey())
	post.print("idempotent POST /api/v1/api-keys (sqlite)", "req/s")
	if err := sys.completion(ctx, "sqlite", cfg.generations, cfg.advance); err != nil {
		return err
	}
	sys.close()
	acc, err := acceptBesideBare(ctx, db, func() (*sql.DB, string, error) {
		// The store's own settings: WAL, synchronous NORMAL, BEGIN
		// IMMEDIATE, and one writer connection.
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		if err != nil {
			return nil, "", err
		}
		raw.SetMaxOpenConns(1)
		return raw, "INSERT INTO bench_pairs (id, v) VALUES (?, ?)", nil
	}, client, sims, cfg, "sqlite", cfg.acceptProfile)
	if err != nil {
		return err
	}
	return rowsSQLite(ctx, path, acc, cfg)
}

// gatewayBesideBare measures the gateway's authenticated GET on sys (with
// a CPU profile written to profilePath when it is set), then a bare
// net/http handler serving the same JSON body, and prints the ratio of
// their rates against the 50% goal.
func gatewayBesideBare(ctx context.Context, client *http.Client, sys *system, cfg config, dialect, profilePath string) error {
	body, err := sys.captureAuthContext(ctx)
	if err != nil {
		return err
	}
	stopProfile, err := profile(profilePath)
	if err != nil {
		return err
	}
	before := sys.db.CredentialCacheStats()
	gw := measure(ctx, client, cfg.clients, cfg.duration, http.StatusOK, sys.getAuthContext)
	stopProfile()
	gw.print("gateway GET /api/v1/auth/context ("+dialect+")", "req/s")
	printCredentials(before, sys.db.CredentialCacheStats())
	bare, err := measureBare(ctx, client, cfg.clients, cfg.duration, body)
	if err != nil {
		return err
	}
	bare.print("bare net/http GET (same JSON body)", "req/s")
	if bare.rps() > 0 {
		pct := 100 * gw.rps() / bare.rps()
		verdict := "meets"
		if pct < 50 {
			verdict = "below"
		}
		fmt.Printf("ratio (%s): gateway/bare = %.1f%% (%s the 50%% goal)\n", dialect, pct, verdict)
	}
	return nil
}

// printCredentials prints what the credential cache did between two
// readings of its stats: lookups it answered, lookups that read the
// database, and on PostgreSQL the reads of the change log its answers
// waited for, each shared by the lookups that arrived together.
func printCredentials(before, after store.CredentialCacheStats) {
	hits, misses, syncs := after.Hits-before.Hits, after.Misses-before.Misses, after.Syncs-before.Syncs
	fmt.Printf("  credential cache: %d lookups answered from memory, %d read the database", hits, misses)
	if syncs > 0 {
		fmt.Printf(", %d change-log reads (%.1f lookups each)", syncs, float64(hits)/float64(syncs))
	}
	fmt.Println()
}

func runPostgres(ctx context.Context, client *http.Client, sims *providerSims, cfg config) error {
	u, drop, err := postgresSchema(ctx, cfg.pgURL)
	if err != nil {
		return err
	}
	defer drop()
	db, err := postgres.Open(ctx, postgres.Config{URL: u})
	if err != nil {
		return err
	}
	defer db.Close()
	sys, err := start(ctx, db, client, sims, platform.JobsConfig{})
	if err != nil {
		return err
	}
	defer sys.close()
	profile := ""
	if cfg.only == "postgres" {
		profile = cfg.cpuProfile
	}
	if err := gatewayBesideBare(ctx, client, sys, cfg, "postgres", profile); err != nil || cfg.gatewayOnly {
		return err
	}
	post := measure(ctx, client, cfg.clients, cfg.duration, http.StatusCreated, sys.postKey())
	post.print("idempotent POST /api/v1/api-keys (postgres)", "req/s")
	if err := sys.completion(ctx, "postgres", cfg.generations, cfg.advance); err != nil {
		return err
	}
	sys.close()
	acc, err := acceptBesideBare(ctx, db, func() (*sql.DB, string, error) {
		// A pool of the store's default size on the same schema.
		raw, err := sql.Open("pgx", u)
		if err != nil {
			return nil, "", err
		}
		raw.SetMaxOpenConns(16)
		raw.SetMaxIdleConns(16)
		return raw, "INSERT INTO bench_pairs (id, v) VALUES ($1, $2)", nil
	}, client, sims, cfg, "postgres", cfg.pgProfile)
	if err != nil {
		return err
	}
	return rowsPostgres(ctx, db, u, acc, cfg)
}

// accepts are a database's generate accept measurements and the
// workspaces they ran on.
type accepts struct {
	// one has every client on oneWS, the bootstrap workspace; spread has
	// client c on spreadWS[c].
	one, spread result
	oneWS       platform.Bootstrap
	spreadWS    []platform.Bootstrap
}

// acceptBesideBare measures the generation accept path on a platform
// instance on db with its job pool disabled, then bare two-row insert
// transactions on db with the same clients, and prints the ratio and the
// goals' verdicts. A non-empty profilePath gets a CPU profile of the
// accept measurement.
func acceptBesideBare(ctx context.Context, db *store.DB, openBare func() (*sql.DB, string, error), client *http.Client, sims *providerSims, cfg config, name, profilePath string) (accepts, error) {
	sys, err := start(ctx, db, client, sims, platform.JobsConfig{Disabled: true})
	if err != nil {
		return accepts{}, err
	}
	defer sys.close()
	raw, insert, err := openBare()
	if err != nil {
		return accepts{}, err
	}
	defer raw.Close()
	if err := probeAccept(ctx, db.Dialect(), raw, sys, name); err != nil {
		return accepts{}, err
	}
	stopProfile, err := profile(profilePath)
	if err != nil {
		return accepts{}, err
	}
	w := db.WriterStats()
	acc := measure(ctx, client, cfg.clients, cfg.duration, http.StatusAccepted, sys.postGenerate())
	stopProfile()
	acc.print("idempotent POST /api/v1/music/generate ("+name+", job pool disabled)", "req/s")
	w = printWriter(db, w, acc, "accept")
	wss, err := sys.workspaces(ctx, cfg.clients)
	if err != nil {
		return accepts{}, err
	}
	keys := make([]string, len(wss))
	for i, b := range wss {
		keys[i] = b.TestKey
	}
	w = db.WriterStats()
	spread := measure(ctx, client, cfg.clients, cfg.duration, http.StatusAccepted, sys.postGenerateAs(keys))
	spread.print(fmt.Sprintf("  the same, %d workspaces, one client each", len(keys)), "req/s")
	printWriter(db, w, spread, "accept")

	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.IDB().ExecContext(ctx, "CREATE TABLE bench_pairs (id TEXT PRIMARY KEY, v TEXT)")
		return err
	}); err != nil {
		return accepts{}, fmt.Errorf("create bench_pairs: %w", err)
	}
	bare := measureOps(ctx, cfg.clients, cfg.duration, func(ctx context.Context, c, i int) error {
		id := fmt.Sprintf("%s-%d-%d", sys.runID, c, i)
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, suffix := range []string{"a", "b"} {
			if _, err := tx.ExecContext(ctx, insert, id+suffix, "bench"); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	w = db.WriterStats()
	units := measureOps(ctx, cfg.clients, cfg.duration, func(ctx context.Context, c, i int) error {
		id := fmt.Sprintf("%s-u%d-%d", sys.runID, c, i)
		return db.InTx(ctx, func(tx *store.Tx) error {
			for _, suffix := range []string{"a", "b"} {
				if _, err := tx.IDB().ExecContext(ctx, "INSERT INTO bench_pairs (id, v) VALUES (?, ?)", id+suffix, "bench"); err != nil {
					return err
				}
			}
			return nil
		})
	})
	bare.print("bare two-row insert transactions ("+name+")", "tx/s")
	units.print("  two-row units of work through store.DB.InTx", "units/s")
	printWriter(db, w, units, "unit")
	if bare.rps() > 0 {
		for _, m := range []struct {
			label string
			r     result
		}{{"one workspace", acc}, {fmt.Sprintf("%d workspaces", len(keys)), spread}} {
			pct := 100 * m.r.rps() / bare.rps()
			rate, lat := "meets", "meets"
			if pct < 25 {
				rate = "below"
			}
			if m.r.p99 >= 20*time.Millisecond {
				lat = "misses"
			}
			fmt.Printf("ratio (%s, %s): accept/bare = %.1f%% (%s the 25%% goal); accept p99 %s (%s the < 20 ms goal)\n",
				name, m.label, pct, rate, fmtDur(m.r.p99), lat)
		}
	}
	return accepts{one: acc, spread: spread, oneWS: sys.boot, spreadWS: wss}, nil
}

// printWriter prints what the store's single writer did during r, from
// its stats before (the SQLite group committer; nothing without one): the
// share of the run it was busy, its time per successful unit (each an
// accept, or a bare unit), and the units per group. A writer near 100%
// busy bounds the rate at one unit per that time. It returns the stats
// now.
func printWriter(db *store.DB, before store.WriterStats, r result, what string) store.WriterStats {
	now := db.WriterStats()
	groups, units := now.Groups-before.Groups, now.Units-before.Units
	if groups == 0 || r.ok == 0 || r.elapsed <= 0 {
		return now
	}
	busy := now.Busy - before.Busy
	fmt.Printf("  the writer: busy %.0f%% of the run, %.0f µs per %s, %.1f units per group\n",
		100*busy.Seconds()/r.elapsed.Seconds(), float64(busy.Microseconds())/float64(r.ok), what,
		float64(units)/float64(groups))
	return now
}

// profile starts a CPU profile into path and returns its stop func; an
// empty path profiles nothing.
func profile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// postgresSchema creates schema bench_<random> on the server named by base
// and returns a URL whose search_path selects it, and a func dropping it.
func postgresSchema(ctx context.Context, base string) (string, func(), error) {
	var b [6]byte
	rand.Read(b[:])
	schema := "bench_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("postgres: create schema: %w", err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(dctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "bench: drop schema %s: %v\n", schema, err)
		}
		admin.Close()
	}
	var u string
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		pu, err := url.Parse(base)
		if err != nil {
			drop()
			return "", nil, fmt.Errorf("postgres URL: %w", err)
		}
		q := pu.Query()
		q.Set("search_path", schema)
		pu.RawQuery = q.Encode()
		u = pu.String()
	} else {
		u = fmt.Sprintf("%s search_path=%s", base, schema)
	}
	return u, drop, nil
}

// providerSims are both music provider simulators on loopback, shared by
// every platform the bench starts, and the test-mode providers they make.
type providerSims struct {
	a     *provideratest.Server
	b     *providerbtest.Server
	music credential.Providers
	// allow are the simulators' loopback addresses, the only ones the
	// platform's URL guard lets its media fetches reach.
	allow []netip.AddrPort
}

// startSims starts both simulators with AutoAdvance advance, benchCredits
// provider credits and (A) a create window of benchCreateLimit per 10 s.
func startSims(advance time.Duration) (*providerSims, error) {
	s := &providerSims{}
	var err error
	if s.a, err = provideratest.New(provideratest.Config{Dialect: string(providera.DialectSunoAPI), AutoAdvance: advance,
		Credits: benchCredits, CreateLimit: benchCreateLimit, CreateWindow: 10 * time.Second}); err != nil {
		return nil, fmt.Errorf("provider A simulator: %w", err)
	}
	if s.b, err = providerbtest.New(providerbtest.Config{AutoAdvance: advance, Credits: benchCredits}); err != nil {
		s.close()
		return nil, fmt.Errorf("provider B simulator: %w", err)
	}
	for _, u := range []string{s.a.URL(), s.b.URL()} {
		ap, err := urlguard.LoopbackOf(u)
		if err != nil {
			s.close()
			return nil, err
		}
		s.allow = append(s.allow, ap)
	}
	// The adapters reach exactly the simulators on loopback, as the
	// platform's media fetches do.
	guard, err := urlguard.New(urlguard.Config{AllowHTTP: true, AllowLoopback: s.allow})
	if err != nil {
		s.close()
		return nil, err
	}
	clientA, err := providera.New(providera.Config{BaseURL: s.a.URL(), Dialect: providera.DialectSunoAPI, HTTPClient: guard.Client()})
	if err != nil {
		s.close()
		return nil, err
	}
	clientB, err := providerb.New(providerb.Config{BaseURL: s.b.URL(), HTTPClient: guard.Client()})
	if err != nil {
		s.close()
		return nil, err
	}
	s.music.Test = credential.Adapters{generation.ProviderA: clientA, generation.ProviderB: clientB}
	s.music.PlatformKeys.Test = credential.Keys{
		generation.ProviderA: {APIKey: s.a.APIKey(), CallbackKey: s.a.CallbackKey()},
		generation.ProviderB: {APIKey: s.b.APIKey()},
	}
	return s, nil
}

func (s *providerSims) close() {
	if s.a != nil {
		s.a.Close()
	}
	if s.b != nil {
		s.b.Close()
	}
}

// system is a platform serving on a loopback listener, with its bootstrap key.
type system struct {
	p      *platform.Platform
	db     *store.DB
	srv    *http.Server
	base   string
	boot   platform.Bootstrap
	client *http.Client
	runID  string
	closed bool
}

// start builds the platform on db with jobs and the simulators as test
// mode's music providers, serves it on 127.0.0.1 (the listener opens
// first, since its URL is the providers' callback base), bootstraps a
// workspace, grants it benchCredits test credits and raises the bootstrap
// key's limits to benchLimits.
func start(ctx context.Context, db *store.DB, client *http.Client, sims *providerSims, jobs platform.JobsConfig) (*system, error) {
	mailer, err := filemail.New(filepath.Join(os.TempDir(), "platform-bench-mail"), "no-reply@platform.localhost", nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var handler atomic.Pointer[http.Handler]
	var rb [6]byte
	rand.Read(rb[:])
	s := &system{db: db, base: "http://" + ln.Addr().String(), client: client, runID: hex.EncodeToString(rb[:]),
		srv: &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h := handler.Load(); h != nil {
				(*h).ServeHTTP(w, r)
				return
			}
			http.Error(w, "starting", http.StatusServiceUnavailable)
		})}}
	go s.srv.Serve(ln)
	s.p, err = platform.New(ctx, platform.Config{Store: db, SecretKey: secretKey, Keys: apikey.Config{MaxLimits: benchLimits},
		BlobDir: filepath.Join(os.TempDir(), "platform-bench-blobs"), Mailer: mailer, Jobs: jobs, MusicProviders: sims.music, AllowLoopback: sims.allow,
		Generation: platform.GenerationConfig{CallbackBaseURL: s.base,
			Tuning: operation.Tuning{CreateLimit: benchCreateLimit, CreateWindow: 10 * time.Second}}})
	if err != nil {
		s.srv.Close()
		return nil, err
	}
	h := s.p.Handler()
	handler.Store(&h)
	s.boot, err = s.p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Bench Tenant", WorkspaceName: "Bench Studio",
		OwnerEmail: "bench-" + s.runID + "@example.test", OwnerName: "Bench Owner", KeyName: "bench"})
	if err != nil {
		s.close()
		return nil, err
	}
	scope := access.Scope{TenantID: s.boot.TenantID, WorkspaceID: s.boot.WorkspaceID, Environment: access.Test}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: scope, Ref: "bench:" + s.runID, Amount: benchCredits})
		return err
	}); err != nil {
		s.close()
		return nil, fmt.Errorf("grant test credits: %w", err)
	}
	lim, _ := json.Marshal(benchLimits)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, s.base+"/api/v1/api-keys/"+s.boot.KeyID+"/limits", bytes.NewReader(lim))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.boot.TestKey)
	status, rbody, err := do(client, req)
	if err != nil || status != http.StatusOK {
		s.close()
		return nil, fmt.Errorf("set limits: %d %v: %s", status, err, rbody)
	}
	return s, nil
}

// close stops serving, then the platform; a second call does nothing.
func (s *system) close() {
	if s.closed {
		return
	}
	s.closed = true
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.srv.Shutdown(sctx)
	s.p.Close()
}

// captureAuthContext returns one real auth/context response body.
func (s *system) captureAuthContext(ctx context.Context) ([]byte, error) {
	req, err := s.getAuthContext(ctx, 0, 0)
	if err != nil {
		return nil, err
	}
	status, body, err := do(s.client, req)
	if err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("GET auth/context: %d %v: %s", status, err, body)
	}
	return body, nil
}

func (s *system) getAuthContext(ctx context.Context, _, _ int) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/v1/auth/context", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.boot.TestKey)
	return req, nil
}

// postKey returns a request maker for idempotent creates, each with its own
// Idempotency-Key (unique across the run, the client and the iteration).
func (s *system) postKey() func(ctx context.Context, client, i int) (*http.Request, error) {
	return func(ctx context.Context, client, i int) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/v1/api-keys", strings.NewReader(createBody))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.boot.TestKey)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%s-%d-%d", s.runID, client, i))
		return req, nil
	}
}

// workspaces bootstraps n tenants, each with one workspace holding
// benchCredits test credits and a test key at benchLimits, and returns
// them: a multi-tenant load, where no two clients share a workspace's
// credit account.
func (s *system) workspaces(ctx context.Context, n int) ([]platform.Bootstrap, error) {
	out := make([]platform.Bootstrap, n)
	for i := range n {
		b, err := s.p.Bootstrap(ctx, platform.BootstrapInput{TenantName: fmt.Sprintf("Bench Tenant %d", i),
			WorkspaceName: fmt.Sprintf("Bench Studio %d", i), OwnerEmail: fmt.Sprintf("bench-%s-%d@example.test", s.runID, i),
			OwnerName: "Bench Owner", KeyName: "bench"})
		if err != nil {
			return nil, err
		}
		scope := access.Scope{TenantID: b.TenantID, WorkspaceID: b.WorkspaceID, Environment: access.Test}
		if err := s.db.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: scope, Ref: "bench:" + s.runID, Amount: benchCredits})
			return err
		}); err != nil {
			return nil, fmt.Errorf("grant test credits: %w", err)
		}
		lim, _ := json.Marshal(benchLimits)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, s.base+"/api/v1/api-keys/"+b.KeyID+"/limits", bytes.NewReader(lim))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+b.TestKey)
		if status, rbody, err := do(s.client, req); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("set limits: %d %v: %s", status, err, rbody)
		}
		out[i] = b
	}
	return out, nil
}

// postGenerateAs is postGenerate with client c using keys[c].
func (s *system) postGenerateAs(keys []string) func(ctx context.Context, client, i int) (*http.Request, error) {
	return func(ctx context.Context, client, i int) (*http.Request, error) {
		req, err := s.generateRequest(ctx, fmt.Sprintf("bench-genw-%s-%d-%d", s.runID, client, i))
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+keys[client%len(keys)])
		}
		return req, err
	}
}

// postGenerate returns a request maker for idempotent generates, each with
// its own Idempotency-Key (unique across the run, the client and the
// iteration).
func (s *system) postGenerate() func(ctx context.Context, client, i int) (*http.Request, error) {
	return func(ctx context.Context, client, i int) (*http.Request, error) {
		return s.generateRequest(ctx, fmt.Sprintf("bench-gen-%s-%d-%d", s.runID, client, i))
	}
}

func (s *system) generateRequest(ctx context.Context, key string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/v1/music/generate", strings.NewReader(generateBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.boot.TestKey)
	req.Header.Set("Idempotency-Key", key)
	return req, nil
}

// completion runs n generations one after another, each polled every 5 ms
// from its 202 until it is completed, and prints the accept-to-completed
// times. An operation that ends otherwise, or is not completed within a
// minute, is counted and reported.
func (s *system) completion(ctx context.Context, name string, n int, advance time.Duration) error {
	var times []time.Duration
	var sum time.Duration
	others := map[string]int{}
	for k := range n {
		req, err := s.generateRequest(ctx, fmt.Sprintf("bench-done-%s-%d", s.runID, k))
		if err != nil {
			return err
		}
		status, body, err := do(s.client, req)
		if err != nil || status != http.StatusAccepted {
			return fmt.Errorf("generate: %d %v: %.300s", status, err, body)
		}
		accepted := time.Now()
		var acc struct {
			Data struct {
				OperationID string `json:"operationId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &acc); err != nil || acc.Data.OperationID == "" {
			return fmt.Errorf("generate: no operation id in %.300s", body)
		}
		end := ""
		for end == "" {
			if time.Since(accepted) > time.Minute {
				end = "timeout (1 min)"
				break
			}
			time.Sleep(5 * time.Millisecond)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/v1/operations/"+acc.Data.OperationID, nil)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+s.boot.TestKey)
			status, body, err := do(s.client, req)
			if err != nil || status != http.StatusOK {
				return fmt.Errorf("get operation: %d %v: %.300s", status, err, body)
			}
			var op struct {
				Data struct {
					Status string `json:"status"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &op); err != nil {
				return fmt.Errorf("get operation: %w", err)
			}
			switch op.Data.Status {
			case "completed":
				el := time.Since(accepted)
				times = append(times, el)
				sum += el
				end = "completed"
			case "failed", "cancelled", "expired":
				end = op.Data.Status
			}
		}
		if end != "completed" {
			others[end]++
		}
	}
	slices.Sort(times)
	label := "accept -> completed (" + name + ", sequential, GET every 5 ms):"
	if len(times) == 0 {
		fmt.Printf("%-68s none completed of %d %v\n", label, n, others)
		return nil
	}
	mean := sum / time.Duration(len(times))
	fmt.Printf("%-68s p50 %s, p99 %s, mean %s (%d completed of %d)\n", label,
		fmtDur(percentile(times, 0.50)), fmtDur(percentile(times, 0.99)), fmtDur(mean), len(times), n)
	fmt.Printf("  includes provider A's 3 stages x %s AutoAdvance = %s of simulated provider work; platform share of the mean %s",
		advance, 3*advance, fmtDur(mean-3*advance))
	if len(others) > 0 {
		fmt.Printf("; not completed: %v", others)
	}
	fmt.Println()
	return nil
}

// measureBare serves body from a bare handler on its own loopback listener
// and measures GETs of it.
func measureBare(ctx context.Context, client *http.Client, clients int, duration time.Duration, body []byte) (result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}
	go srv.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	u := "http://" + ln.Addr().String() + "/api/v1/auth/context"
	return measure(ctx, client, clients, duration, http.StatusOK, func(ctx context.Context, _, _ int) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	}), nil
}

// result is one measurement.
type result struct {
	ok       int
	elapsed  time.Duration
	p50, p99 time.Duration
	others   map[int]int // status -> count of non-success answers
	errs     int         // transport (or, for transactions, database) errors
	firstErr string
}

func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

func (r result) print(label, unit string) {
	fmt.Printf("%-68s %6.0f %s, p50 %s, p99 %s (%d ok in %s)\n", label+":", r.rps(), unit, fmtDur(r.p50), fmtDur(r.p99), r.ok, r.elapsed.Round(time.Millisecond))
	codes := make([]int, 0, len(r.others))
	for c := range r.others {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d x%d", c, r.others[c]))
	}
	if r.errs > 0 {
		parts = append(parts, fmt.Sprintf("errors x%d", r.errs))
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Printf("  non-success answers: %s", strings.Join(parts, ", "))
	if r.firstErr != "" {
		fmt.Printf(" (first: %s)", r.firstErr)
	}
	fmt.Println()
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

// refusal is a non-success HTTP answer of one timed call.
type refusal struct {
	status int
	body   []byte
}

func (r *refusal) Error() string { return fmt.Sprintf("%d %.200s", r.status, r.body) }

// measure runs clients loops of make+send until duration has passed (after
// a short untimed warm-up) and counts answers of status want.
func measure(ctx context.Context, client *http.Client, clients int, duration time.Duration, want int,
	mk func(ctx context.Context, client, i int) (*http.Request, error)) result {
	return measureOps(ctx, clients, duration, func(ctx context.Context, c, i int) error {
		req, err := mk(ctx, c, i)
		if err != nil {
			return err
		}
		status, body, err := do(client, req)
		if err != nil {
			return err
		}
		if status != want {
			return &refusal{status: status, body: body}
		}
		return nil
	})
}

// measureOps runs clients loops of call until duration has passed (after
// five untimed warm-up calls per client, with negative iteration numbers so
// that keys never repeat) and times the calls that return nil. A *refusal
// counts under its status, any other error as an error.
func measureOps(ctx context.Context, clients int, duration time.Duration, call func(ctx context.Context, client, i int) error) result {
	type clientResult struct {
		lat      []time.Duration
		others   map[int]int
		errs     int
		firstErr string
	}
	per := make([]clientResult, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range 5 {
				call(ctx, c, -1-i)
			}
		})
	}
	wg.Wait()

	start := time.Now()
	deadline := start.Add(duration)
	for c := range clients {
		wg.Go(func() {
			r := clientResult{lat: make([]time.Duration, 0, 1<<16), others: map[int]int{}}
			for i := 0; ctx.Err() == nil; i++ {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				err := call(ctx, c, i)
				el := time.Since(t0)
				var ref *refusal
				switch {
				case err == nil:
					r.lat = append(r.lat, el)
				case errors.As(err, &ref):
					r.others[ref.status]++
				default:
					r.errs++
				}
				if err != nil && r.firstErr == "" {
					r.firstErr = err.Error()
				}
			}
			per[c] = r
		})
	}
	wg.Wait()
	res := result{elapsed: time.Since(start), others: map[int]int{}}
	n := 0
	for _, r := range per {
		n += len(r.lat)
	}
	all := make([]time.Duration, 0, n)
	for _, r := range per {
		all = append(all, r.lat...)
		for k, v := range r.others {
			res.others[k] += v
		}
		res.errs += r.errs
		if res.firstErr == "" {
			res.firstErr = r.firstErr
		}
	}
	slices.Sort(all)
	res.ok = len(all)
	res.p50, res.p99 = percentile(all, 0.50), percentile(all, 0.99)
	return res
}

// percentile returns the q quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// do sends req and reads the whole body, so the connection is reused.
func do(client *http.Client, req *http.Request) (int, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// kib formats a /proc "1234 kB" value as MiB with the raw figure.
func kib(v string) string {
	v = strings.TrimSpace(v)
	var n int64
	if _, err := fmt.Sscanf(v, "%d kB", &n); err != nil {
		return v
	}
	return fmt.Sprintf("%.1f MiB (%d kB)", float64(n)/1024, n)
}

// rss reads the peak (VmHWM) and current (VmRSS) resident set size.
func rss() (peak, cur string, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmHWM":
			peak = kib(v)
		case "VmRSS":
			cur = kib(v)
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	if peak == "" || cur == "" {
		return "", "", errors.New("VmHWM or VmRSS missing from /proc/self/status")
	}
	return peak, cur, nil
}
