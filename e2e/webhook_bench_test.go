package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/webhook"
	"github.com/creatormusic/platform/webhook/webhooktest"
)

// BenchmarkWebhookDelivery writes b.N outbox events (one unit of work
// each, as a domain writes them) into a workspace with one endpoint on a
// loopback receiver that verifies every signature, and waits until every
// one has arrived. The platform runs with its defaults (the fan-out every
// second, the outbound class's two workers, one attempt of an endpoint at
// a time) on a clock that moves with real time. It reports the events
// delivered per second, from the first commit to the last arrival, and
// the time from each event's commit to its arrival (p50, p95), which
// includes the wait for the fan-out's next period. SQLite; with
// PLATFORM_TEST_POSTGRES_URL, PostgreSQL too. Run it with a fixed count:
//
//	go test ./e2e -run '^$' -bench BenchmarkWebhookDelivery -benchtime 200x
func BenchmarkWebhookDelivery(b *testing.B) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		b.Run(name, func(b *testing.B) { benchWebhookDelivery(b, pg) })
	}
}

func benchWebhookDelivery(b *testing.B, pg bool) {
	var s *platformtest.System
	recv := webhooktest.New(b, func() time.Time { return s.Clock.Now() }, false)
	opts := platformtest.Options{Postgres: pg, Webhooks: webhook.Tuning{AllowTestLoopback: true}}
	s = platformtest.New(b, opts)
	s.Clock.Advance(time.Millisecond)
	// The fake clock follows real time, so the periodic fan-out comes
	// every second as in production.
	stop := make(chan struct{})
	var clockDone sync.WaitGroup
	clockDone.Go(func() {
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				now := time.Now()
				s.Clock.Advance(now.Sub(last))
				last = now
			}
		}
	})
	defer func() { close(stop); clockDone.Wait() }()

	r := s.Do(whRequest(s.Boot.TestKey, http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{"url": recv.URL + "/bench",
		"enabledEvents": []string{"api_key.created"}}))
	var e api.WebhookEndpointSecret
	r.Data(b, &e)
	if r.Status != http.StatusCreated {
		b.Fatalf("endpoint: %d %s", r.Status, r.Body)
	}
	recv.Trust(e.Secret)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	recv.Respond(func(_ int, d webhooktest.Delivery) (int, string) {
		mu.Lock()
		arrived[d.ID] = time.Now()
		mu.Unlock()
		return http.StatusOK, "ok"
	})

	ctx := context.Background()
	committed := make(map[string]time.Time, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		var id string
		err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			ev, err := tx.OutboxInsert(ctx, outbox.Event{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: "test",
				Type: "api_key.created", SchemaVersion: 1, AggregateID: fmt.Sprintf("key_bench%d", i), AggregateVersion: 1,
				Payload: json.RawMessage(`{"bench":true}`)})
			id = ev.ID
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		committed[id] = time.Now()
	}
	got := recv.Wait(b, b.N, 5*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()

	var lat []time.Duration
	mu.Lock()
	for id, c := range committed {
		if a, ok := arrived[id]; ok {
			lat = append(lat, a.Sub(c))
		}
	}
	mu.Unlock()
	if len(lat) != b.N || len(got) != b.N {
		b.Fatalf("%d events arrived once of %d (%d requests)", len(lat), b.N, len(got))
	}
	for _, d := range got {
		if d.Err != nil {
			b.Fatalf("a delivery did not verify: %v", d.Err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "commit-to-delivery-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "commit-to-delivery-p95-ms")
}
