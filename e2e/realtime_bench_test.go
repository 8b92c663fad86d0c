package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/store"
)

// BenchmarkFanout measures the realtime fan-out to 1,000 loopback WebSocket
// clients subscribed to one workspace's channel, on one host (SQLite, or
// PostgreSQL with PLATFORM_TEST_POSTGRES_URL and FANOUT_POSTGRES=1):
//
//   - heap-B/conn: heap in use per open connection, both ends together
//     (the host's side and the loopback client, which share the process),
//     measured after a GC with every client subscribed and idle;
//   - ms-p50, ms-p99, ms-max: time from the commit of a unit of work that
//     writes one event (a credit grant's ledger movement) to the event's
//     message read by each client, over every client and iteration.
//
// Run it briefly: go test ./e2e -run '^$' -bench BenchmarkFanout -benchtime 5x
func BenchmarkFanout(b *testing.B) {
	clients := 1000
	if v, err := strconv.Atoi(os.Getenv("FANOUT_CLIENTS")); err == nil && v > 0 {
		clients = v
	}
	opts := platformtest.Options{Realtime: platform.RealtimeConfig{MaxConnectionsPerKey: clients, MaxConnectionsPerWorkspace: clients}}
	opts.Postgres = os.Getenv("FANOUT_POSTGRES") == "1"
	s := platformtest.New(b, opts)
	ctx := context.Background()
	if r := s.Do(platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys/" + s.Boot.KeyID + "/limits", Key: s.Boot.TestKey,
		Body: map[string]any{"requestsPerMinute": 6000, "maxConcurrentRequests": 64, "monthlyRequestBudget": 1000000}}); r.Status != 200 {
		b.Fatalf("limits: %d %s", r.Status, r.Body)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()

	// received[i] is when client i read each event, by iteration.
	received := make([][]time.Time, clients)
	var mu sync.Mutex
	got := sync.NewCond(&mu)
	count := 0
	conns := make([]*websocket.Conn, clients)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			// The handshakes count against the key's request rate, whose
			// bucket refills on the platform's (fake) clock: a refused one
			// moves the clock on a second and tries again.
			var ws *websocket.Conn
			var resp *http.Response
			var err error
			for {
				ws, resp, err = websocket.Dial(dctx, wsURL(s.Server.URL), &websocket.DialOptions{
					HTTPHeader: http.Header{"Authorization": {"Bearer " + s.Boot.TestKey}}})
				if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || dctx.Err() != nil {
					break
				}
				s.Clock.Advance(time.Second)
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil {
				var body []byte
				if resp != nil {
					body, _ = io.ReadAll(resp.Body)
				}
				b.Errorf("dial %d: %v %s", i, err, body)
				return
			}
			sub, _ := json.Marshal(realtime.ClientMessage{Type: realtime.TypeSubscribe, Channel: "workspace"})
			if err := ws.Write(dctx, websocket.MessageText, sub); err != nil {
				b.Errorf("subscribe %d: %v", i, err)
				return
			}
			if _, _, err := ws.Read(dctx); err != nil { // subscribed
				b.Errorf("subscribed %d: %v", i, err)
				return
			}
			conns[i] = ws
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	for i, ws := range conns {
		go func() {
			for {
				_, _, err := ws.Read(ctx)
				if err != nil {
					return
				}
				at := time.Now()
				mu.Lock()
				received[i] = append(received[i], at)
				count++
				got.Broadcast()
				mu.Unlock()
			}
		}()
	}
	perConn := float64(heap()-before) / float64(clients)
	b.Cleanup(func() {
		for _, ws := range conns {
			ws.CloseNow()
		}
	})

	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	var latencies []time.Duration
	b.ResetTimer()
	for n := range b.N {
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: fmt.Sprintf("fanout-%d", n), Amount: money.Atomic(1)})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		mu.Lock()
		deadline := time.AfterFunc(30*time.Second, func() { mu.Lock(); got.Broadcast(); mu.Unlock() })
		start := time.Now()
		for count < clients*(n+1) && time.Since(start) < 30*time.Second {
			got.Wait()
		}
		deadline.Stop()
		if count < clients*(n+1) {
			mu.Unlock()
			b.Fatalf("iteration %d: %d of %d messages after 30s", n, count-clients*n, clients)
		}
		for i := range clients {
			latencies = append(latencies, max(received[i][n].Sub(committed), 0))
		}
		mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(latencies)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(perConn, "heap-B/conn")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "ms-p50")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "ms-p99")
	b.ReportMetric(ms(latencies[len(latencies)-1]), "ms-max")
	b.ReportMetric(float64(s.P.Realtime().Connections()), "conns")
}
