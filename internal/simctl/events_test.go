package simctl

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock the test moves.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newManualClock() *manualClock {
	return &manualClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestEventsRecordInOrderOnTheClock(t *testing.T) {
	clock := newManualClock()
	ev := NewEvents(EventsConfig{Clock: clock, Limit: 4})
	first := ev.Record(Event{Kind: KindState, Name: "TEXT_SUCCESS", Subject: "t1"})
	clock.Add(time.Second)
	ev.Record(Event{Kind: KindDelivery, Name: "text", Subject: "t1", Status: 200})
	ev.Record(Event{Kind: KindState, Name: "SUCCESS", Subject: "t1", At: clock.Now().Add(time.Hour)})
	if first.Seq != 1 || !first.At.Equal(clock.Now().Add(-time.Second)) {
		t.Fatalf("first = %+v", first)
	}
	all := ev.List()
	if len(all) != 3 || all[1].Seq != 2 || !all[1].At.Equal(clock.Now()) || !all[2].At.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("list = %+v", all)
	}
	if st := ev.List(KindState); len(st) != 2 || st[0].Name != "TEXT_SUCCESS" || st[1].Name != "SUCCESS" {
		t.Fatalf("state events = %+v", st)
	}
	for i := 0; i < 3; i++ {
		ev.Record(Event{Kind: KindRequest, Name: "GET /"})
	}
	if ev.Len() != 4 || ev.Dropped() != 2 || ev.List()[0].Seq != 3 {
		t.Fatalf("bounded: len %d, dropped %d, first seq %d", ev.Len(), ev.Dropped(), ev.List()[0].Seq)
	}
	ev.Reset()
	if ev.Len() != 0 || ev.Record(Event{Kind: KindState}).Seq != 7 {
		t.Fatal("reset did not empty the log or restarted its numbers")
	}
}

func TestEventsConcurrentRecordsAreNumberedInListOrder(t *testing.T) {
	ev := NewEvents(EventsConfig{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				ev.Record(Event{Kind: KindRequest})
			}
		}()
	}
	wg.Wait()
	all := ev.List()
	if len(all) != 800 {
		t.Fatalf("%d events", len(all))
	}
	for i, e := range all {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

func TestMiddlewareRecordsRequests(t *testing.T) {
	ev := NewEvents(EventsConfig{BodyLimit: 8})
	mux := http.NewServeMux()
	var read string
	mux.HandleFunc("POST /api/create", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		read = string(b)
		w.WriteHeader(http.StatusCreated)
	})
	mux.HandleFunc("GET /api/stream", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the recorded writer does not flush")
		}
		_, _ = io.WriteString(w, "data: x\n\n")
		w.(http.Flusher).Flush()
	})
	c, err := NewControl(mux, ControlConfig{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ev.Mount(c)
	h := ev.Middleware(mux)

	status, _ := do(t, h, http.MethodPost, "/api/create?x=1", "user-token", strings.NewReader(`{"prompt":"a long song"}`))
	if status != http.StatusCreated || read != `{"prompt":"a long song"}` {
		t.Fatalf("create: %d, handler read %q", status, read)
	}
	do(t, h, http.MethodGet, "/api/stream", "", nil)
	do(t, h, http.MethodGet, "/_sim/events", "k", nil)
	got := ev.List(KindRequest)
	if len(got) != 2 {
		t.Fatalf("requests = %+v", got)
	}
	if got[0].Name != "POST /api/create?x=1" || got[0].Status != http.StatusCreated || string(got[0].Body) != `{"prompt` ||
		got[0].Header.Get("Authorization") != "Bearer user-token" {
		t.Fatalf("create recorded as %+v", got[0])
	}
	if got[1].Name != "GET /api/stream" || got[1].Status != http.StatusOK || got[1].Body != nil {
		t.Fatalf("stream recorded as %+v", got[1])
	}
}

func TestEventsRoutes(t *testing.T) {
	ev := NewEvents(EventsConfig{})
	mux := http.NewServeMux()
	c, err := NewControl(mux, ControlConfig{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ev.Mount(c)
	ev.Record(Event{Kind: KindDelivery, Name: "complete", Subject: "t1", Status: 200, Body: []byte(`{"code":200}`)})
	ev.Record(Event{Kind: KindRequest, Name: "POST /x", Subject: "t2", Body: []byte("a=1&b=2")})
	ev.Record(Event{Kind: KindState, Name: "SUCCESS", Subject: "t1"})

	if status, _ := do(t, mux, http.MethodGet, "/_sim/events", "", nil); status != http.StatusUnauthorized {
		t.Fatalf("events without the key: %d", status)
	}
	list := func(query string) []map[string]any {
		t.Helper()
		status, body := do(t, mux, http.MethodGet, "/_sim/events"+query, "k", nil)
		var v struct {
			Object string           `json:"object"`
			Data   []map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &v); status != http.StatusOK || err != nil || v.Object != "list" {
			t.Fatalf("events%s: %d %s", query, status, body)
		}
		return v.Data
	}
	all := list("")
	if len(all) != 3 || all[0]["kind"] != "delivery" || all[0]["body"].(map[string]any)["code"] != 200.0 || all[1]["body"] != "a=1&b=2" {
		t.Fatalf("all = %v", all)
	}
	if got := list("?subject=t1&kind=state"); len(got) != 1 || got[0]["name"] != "SUCCESS" {
		t.Fatalf("filtered = %v", got)
	}
	if got := list("?after=2"); len(got) != 1 || got[0]["seq"] != 3.0 {
		t.Fatalf("after 2 = %v", got)
	}
	if status, _ := do(t, mux, http.MethodGet, "/_sim/events?after=x", "k", nil); status != http.StatusBadRequest {
		t.Fatalf("bad after: %d", status)
	}
	if status, body := do(t, mux, http.MethodPost, "/_sim/events/reset", "k", nil); status != http.StatusOK || strings.TrimSpace(body) != `{"reset":3}` {
		t.Fatalf("reset: %d %s", status, body)
	}
	if got := list(""); len(got) != 0 {
		t.Fatalf("after reset = %v", got)
	}
}
