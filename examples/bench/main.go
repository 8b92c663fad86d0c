// Command bench measures the platform's HTTP gateway over loopback.
//
// It starts the platform (platform.New, jobs enabled, logs discarded) on a
// fresh SQLite database in a temp dir, serves its handler on 127.0.0.1, and
// drives it with -clients concurrent clients for -duration per measurement:
//
//  1. GET /api/v1/auth/context with an API key (Authorization: Bearer), the
//     cheapest authenticated route: requests/second (200s only), p50 and p99
//     latency, and the count of every other status or transport error;
//  2. the same for a bare net/http handler on its own loopback listener that
//     serves the bytes of one real auth/context response body with
//     Content-Type application/json (the ceiling of net/http on this machine);
//  3. the gateway's rate as a percentage of the bare handler's (the goal is
//     at least 50%);
//  4. idempotent POST /api/v1/api-keys (a unique Idempotency-Key per request)
//     on SQLite, and on PostgreSQL when -postgres names a server: the bench
//     creates a fresh schema bench_<random>, opens the store with search_path
//     set to it, and drops it at exit;
//  5. the process's peak and current resident set size (VmHWM and VmRSS of
//     /proc/self/status) after the run.
//
// Keys' limits would cap the measurement (at most 6,000 requests per minute
// by default), so the bench configures the platform as an operator would
// for a load test: apikey.Config.MaxLimits raised to benchLimits, and the
// bootstrap key's limits set to those maximums with
// PUT /api/v1/api-keys/{keyId}/limits before measuring.
//
// The clients run in the same process as the server, so every figure
// includes the client's cost as well; compare the two GET rates, not
// absolute numbers across machines.
//
// Run it from the module root:
//
//	go run ./examples/bench
//	go run ./examples/bench -postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//
// Flags: -duration (per measurement, default 5s), -clients (default 16),
// -postgres URL, -cpuprofile file (a CPU profile of the gateway GET
// measurement only, for go tool pprof).
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
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for schema set-up

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/postgres"
	"github.com/creatormusic/platform/store/sqlite"
)

// secretKey is the bench platform's fixed master secret (32+ bytes).
var secretKey = []byte("bench-master-secret-0123456789abcdef-not-for-production")

// benchLimits are the platform's maximum key limits during the bench, and
// the bootstrap key's limits: high enough that no limit caps a run.
var benchLimits = apikey.Limits{RequestsPerMinute: 10_000_000, MaxConcurrentRequests: 4096, MonthlyRequestBudget: 1_000_000_000_000}

// createBody is the body of every POST /api/v1/api-keys.
const createBody = `{"name":"bench","scopes":["keys:read"]}`

func main() {
	duration := flag.Duration("duration", 5*time.Second, "length of each measurement")
	clients := flag.Int("clients", 16, "concurrent clients")
	pgURL := flag.String("postgres", "", "PostgreSQL URL; when set, the POST measurement also runs on a fresh schema of it")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the gateway GET measurement to this file")
	flag.Parse()
	if *duration <= 0 || *clients < 1 {
		fmt.Fprintln(os.Stderr, "bench: -duration must be positive and -clients at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, *duration, *clients, *pgURL, *cpuProfile)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration time.Duration, clients int, pgURL, cpuProfile string) error {
	fmt.Printf("bench: %d clients, %s per measurement, loopback 127.0.0.1\n", clients, duration)
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        clients * 2,
			MaxIdleConnsPerHost: clients,
			IdleConnTimeout:     30 * time.Second,
		},
		Timeout: 30 * time.Second,
	}
	defer client.CloseIdleConnections()

	// SQLite: GET auth/context, the bare handler, then POST api-keys.
	dir, err := os.MkdirTemp("", "platform-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "platform.db")})
	if err != nil {
		return err
	}
	sys, err := start(ctx, db, client)
	if err != nil {
		db.Close()
		return err
	}
	body, err := sys.captureAuthContext(ctx)
	if err != nil {
		sys.close()
		db.Close()
		return err
	}

	var prof *os.File
	if cpuProfile != "" {
		if prof, err = os.Create(cpuProfile); err != nil {
			sys.close()
			db.Close()
			return err
		}
		if err := pprof.StartCPUProfile(prof); err != nil {
			prof.Close()
			sys.close()
			db.Close()
			return err
		}
	}
	gw := measure(ctx, client, clients, duration, http.StatusOK, sys.getAuthContext)
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	gw.print("gateway GET /api/v1/auth/context (sqlite)")

	bare, err := measureBare(ctx, client, clients, duration, body)
	if err != nil {
		sys.close()
		db.Close()
		return err
	}
	bare.print("bare net/http GET (same JSON body)")
	if bare.rps() > 0 {
		pct := 100 * gw.rps() / bare.rps()
		verdict := "meets"
		if pct < 50 {
			verdict = "below"
		}
		fmt.Printf("ratio: gateway/bare = %.1f%% (%s the 50%% goal)\n", pct, verdict)
	}

	post := measure(ctx, client, clients, duration, http.StatusCreated, sys.postKey())
	post.print("idempotent POST /api/v1/api-keys (sqlite)")
	sys.close()
	if err := db.Close(); err != nil {
		return err
	}

	// PostgreSQL: the same POST (and, for comparison, the GET).
	if pgURL == "" {
		fmt.Println("postgres: skipped (no -postgres URL)")
	} else if err := runPostgres(ctx, client, clients, duration, pgURL); err != nil {
		return err
	}

	peak, cur, err := rss()
	if err != nil {
		return err
	}
	fmt.Printf("memory: peak RSS (VmHWM) %s, current RSS (VmRSS) %s\n", peak, cur)
	return nil
}

func runPostgres(ctx context.Context, client *http.Client, clients int, duration time.Duration, base string) error {
	u, drop, err := postgresSchema(ctx, base)
	if err != nil {
		return err
	}
	defer drop()
	db, err := postgres.Open(ctx, postgres.Config{URL: u})
	if err != nil {
		return err
	}
	defer db.Close()
	sys, err := start(ctx, db, client)
	if err != nil {
		return err
	}
	defer sys.close()
	gw := measure(ctx, client, clients, duration, http.StatusOK, sys.getAuthContext)
	gw.print("gateway GET /api/v1/auth/context (postgres)")
	post := measure(ctx, client, clients, duration, http.StatusCreated, sys.postKey())
	post.print("idempotent POST /api/v1/api-keys (postgres)")
	return nil
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

// system is a platform serving on a loopback listener, with its bootstrap key.
type system struct {
	p      *platform.Platform
	srv    *http.Server
	base   string
	boot   platform.Bootstrap
	client *http.Client
	runID  string
}

// start builds the platform on db, serves it on 127.0.0.1, bootstraps a
// workspace and raises the bootstrap key's limits to benchLimits.
func start(ctx context.Context, db *store.DB, client *http.Client) (*system, error) {
	mailer, err := filemail.New(filepath.Join(os.TempDir(), "platform-bench-mail"), "no-reply@platform.localhost", nil)
	if err != nil {
		return nil, err
	}
	p, err := platform.New(ctx, platform.Config{Store: db, SecretKey: secretKey, Keys: apikey.Config{MaxLimits: benchLimits},
		BlobDir: filepath.Join(os.TempDir(), "platform-bench-blobs"), Mailer: mailer}) // this bench uploads nothing
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.Close()
		return nil, err
	}
	var rb [6]byte
	rand.Read(rb[:])
	s := &system{p: p, srv: &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second},
		base: "http://" + ln.Addr().String(), client: client, runID: hex.EncodeToString(rb[:])}
	go s.srv.Serve(ln)
	s.boot, err = p.Bootstrap(ctx, platform.BootstrapInput{TenantName: "Bench Tenant", WorkspaceName: "Bench Studio",
		OwnerEmail: "bench@example.test", OwnerName: "Bench Owner", KeyName: "bench"})
	if err != nil {
		s.close()
		return nil, err
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

func (s *system) close() {
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
	ok        int
	elapsed   time.Duration
	p50, p99  time.Duration
	others    map[int]int // status -> count of non-success answers
	transport int         // transport errors
	firstErr  string
}

func (r result) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

func (r result) print(label string) {
	fmt.Printf("%-45s %6.0f req/s, p50 %s, p99 %s (%d ok in %s)\n", label+":", r.rps(), fmtDur(r.p50), fmtDur(r.p99), r.ok, r.elapsed.Round(time.Millisecond))
	codes := make([]int, 0, len(r.others))
	for c := range r.others {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d x%d", c, r.others[c]))
	}
	if r.transport > 0 {
		parts = append(parts, fmt.Sprintf("transport errors x%d", r.transport))
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

// measure runs clients loops of make+send until duration has passed (after
// a short untimed warm-up) and counts answers of status want.
func measure(ctx context.Context, client *http.Client, clients int, duration time.Duration, want int,
	mk func(ctx context.Context, client, i int) (*http.Request, error)) result {
	type clientResult struct {
		lat       []time.Duration
		others    map[int]int
		transport int
		firstErr  string
	}
	per := make([]clientResult, clients)
	// Warm-up: open the connections and fill caches; not counted. Iteration
	// numbers are negative so idempotency keys never repeat.
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range 5 {
				if req, err := mk(ctx, c, -1-i); err == nil {
					do(client, req)
				}
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
				req, err := mk(ctx, c, i)
				if err != nil {
					r.transport++
					if r.firstErr == "" {
						r.firstErr = err.Error()
					}
					continue
				}
				status, body, err := do(client, req)
				el := time.Since(t0)
				switch {
				case err != nil:
					r.transport++
					if r.firstErr == "" {
						r.firstErr = err.Error()
					}
				case status == want:
					r.lat = append(r.lat, el)
				default:
					r.others[status]++
					if r.firstErr == "" {
						r.firstErr = fmt.Sprintf("%d %.200s", status, body)
					}
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
		res.transport += r.transport
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
