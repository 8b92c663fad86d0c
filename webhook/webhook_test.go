package webhook

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

func TestTables(t *testing.T) {
	endpoints := fsm.New("webhook.Transition", "A webhook endpoint", Moves())
	if err := endpoints.Check(); err != nil {
		t.Fatal(err)
	}
	if err := endpoints.Enforced(Transition); err != nil {
		t.Fatal(err)
	}
	deliveries := fsm.New("webhook.DeliveryTransition", "A webhook delivery", DeliveryMoves())
	if err := deliveries.Check(); err != nil {
		t.Fatal(err)
	}
	if err := deliveries.Enforced(DeliveryTransition); err != nil {
		t.Fatal(err)
	}
	if _, err := Transition(StatusDeleted, EventEnable); !fault.Is(err, fault.InvalidState) {
		t.Errorf("a deleted endpoint enabled: %v", err)
	}
	if _, err := DeliveryTransition(DeliveryPending, DeliveryRedeliver); !fault.Is(err, fault.InvalidState) {
		t.Errorf("a pending delivery redelivered: %v", err)
	}
}

// TestSignSpecificationVector: the signature of the Standard Webhooks
// reference libraries' test vector.
func TestSignSpecificationVector(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	at := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	got, err := Sign([]string{secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", at, body)
	if err != nil || got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("Sign = %q, %v", got, err)
	}
	h := http.Header{}
	h.Set(HeaderID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, "v1,bm90IHRoaXMgb25l "+got)
	if err := Verify(secret, h, body, at.Add(4*time.Minute), 0); err != nil {
		t.Errorf("Verify with the good signature second: %v", err)
	}
	for name, c := range map[string]struct {
		change func(h http.Header) []byte
		want   error
	}{
		"too old":         {func(http.Header) []byte { return body }, ErrTimestamp},
		"no id":           {func(h http.Header) []byte { h.Del(HeaderID); return body }, ErrMissingHeaders},
		"bad timestamp":   {func(h http.Header) []byte { h.Set(HeaderTimestamp, "soon"); return body }, ErrMissingHeaders},
		"changed body":    {func(http.Header) []byte { return append([]byte(" "), body...) }, ErrSignature},
		"other id":        {func(h http.Header) []byte { h.Set(HeaderID, "msg_other"); return body }, ErrSignature},
		"other signature": {func(h http.Header) []byte { h.Set(HeaderSignature, "v1,bm90IHRoaXMgb25l"); return body }, ErrSignature},
	} {
		hc := h.Clone()
		b := c.change(hc)
		now := at
		if name == "too old" {
			now = at.Add(5*time.Minute + time.Second)
		}
		if err := Verify(secret, hc, b, now, 0); err != c.want {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	two, _ := Sign([]string{newSecret(), secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", at, body)
	if f := strings.Fields(two); len(f) != 2 || f[1] != got {
		t.Errorf("two secrets sign %q", two)
	}
}

func TestRetrySchedule(t *testing.T) {
	var total time.Duration
	for n := 1; n < MaxAttempts(); n++ {
		d := retryDelay(n, 0.5)
		if lo, hi := retryDelay(n, 0), retryDelay(n, 1); lo >= d || hi <= d || hi != MaxRetryDelay(n) || d != RetrySchedule()[n-1] {
			t.Errorf("attempt %d: %s..%s around %s", n, lo, hi, d)
		}
		total += d
	}
	if MaxAttempts() != 11 || total != 71*time.Hour+36*time.Minute+5*time.Second {
		t.Errorf("%d attempts over %s", MaxAttempts(), total)
	}
}

func TestMatches(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	e := Endpoint{ID: "whe_1", Scope: sc, Status: StatusEnabled, EnabledEvents: []string{"project.created"}, CreatedAt: t0}
	ev := outbox.Event{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test", Type: "project.created", OccurredAt: t0}
	with := func(change func(e *Endpoint, ev *outbox.Event)) bool {
		e, ev := e, ev
		change(&e, &ev)
		return Matches(e, ev)
	}
	for name, c := range map[string]struct {
		change func(e *Endpoint, ev *outbox.Event)
		want   bool
	}{
		"subscribed":           {func(*Endpoint, *outbox.Event) {}, true},
		"another type":         {func(_ *Endpoint, ev *outbox.Event) { ev.Type = "api_key.created" }, false},
		"the wildcard":         {func(e *Endpoint, ev *outbox.Event) { e.EnabledEvents, ev.Type = []string{Wildcard}, "api_key.created" }, true},
		"the live environment": {func(_ *Endpoint, ev *outbox.Event) { ev.Environment = "live" }, false},
		"another workspace":    {func(_ *Endpoint, ev *outbox.Event) { ev.WorkspaceID = "ws_2" }, false},
		"another tenant":       {func(_ *Endpoint, ev *outbox.Event) { ev.TenantID = "ten_2" }, false},
		"disabled":             {func(e *Endpoint, _ *outbox.Event) { e.Status = StatusDisabled }, false},
		"before the creation":  {func(_ *Endpoint, ev *outbox.Event) { ev.OccurredAt = t0.Add(-time.Microsecond) }, false},
		"its test event":       {func(_ *Endpoint, ev *outbox.Event) { ev.Type, ev.AggregateID = EventTypeTest, "whe_1" }, true},
		"another's test event": {func(e *Endpoint, ev *outbox.Event) {
			e.EnabledEvents, ev.Type, ev.AggregateID = []string{Wildcard}, EventTypeTest, "whe_2"
		}, false},
		"another test event, listed": {func(e *Endpoint, ev *outbox.Event) {
			e.EnabledEvents, ev.Type, ev.AggregateID = []string{EventTypeTest}, EventTypeTest, "whe_2"
		}, false},
	} {
		if got := with(c.change); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

// fakeStore is an in-memory DeliveryStore whose units of work roll back
// on error.
type fakeStore struct {
	mu         sync.Mutex
	now        time.Time
	seq        int
	endpoints  map[string]Endpoint
	deliveries map[string]Delivery
	attempts   map[[2]any]Attempt
	events     map[string]outbox.Event
	jobs       map[string]jobs.InsertParams
	outbox     []outbox.Event
}

// run runs fn as one unit of work.
func (f *fakeStore) run(_ context.Context, fn func(st DeliveryStore) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, d, a, j, o := maps.Clone(f.endpoints), maps.Clone(f.deliveries), maps.Clone(f.attempts), maps.Clone(f.jobs), len(f.outbox)
	if err := fn(f); err != nil {
		f.endpoints, f.deliveries, f.attempts, f.jobs, f.outbox = e, d, a, j, f.outbox[:o]
		return err
	}
	return nil
}

func (f *fakeStore) Now() time.Time { return f.now }
func (f *fakeStore) NewID(prefix string) string {
	f.seq++
	return prefix + string(rune('a'+f.seq))
}
func (f *fakeStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	f.outbox = append(f.outbox, e)
	return e, nil
}
func (f *fakeStore) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	if _, ok := f.jobs[p.UniqueKey]; ok {
		return false, nil
	}
	f.jobs[p.UniqueKey] = p
	return true, nil
}
func (f *fakeStore) WebhookEndpointByID(_ context.Context, _ access.Environment, id string) (Endpoint, error) {
	e, ok := f.endpoints[id]
	if !ok {
		return Endpoint{}, fault.E("fake", fault.NotFound, "")
	}
	return e, nil
}
func (f *fakeStore) WebhookEndpointUpdate(_ context.Context, e Endpoint) error {
	if f.endpoints[e.ID].Version != e.Version-1 {
		return fault.E("fake", fault.Conflict, "")
	}
	f.endpoints[e.ID] = e
	return nil
}
func (f *fakeStore) WebhookEndpointSucceeded(_ context.Context, id string, at time.Time) error {
	e := f.endpoints[id]
	if e.LastSuccessAt.Before(at) {
		e.LastSuccessAt = at
	}
	f.endpoints[id] = e
	return nil
}
func (f *fakeStore) WebhookDeliveryByID(_ context.Context, _ access.Environment, id string) (Delivery, error) {
	d, ok := f.deliveries[id]
	if !ok {
		return Delivery{}, fault.E("fake", fault.NotFound, "")
	}
	return d, nil
}
func (f *fakeStore) WebhookDeliveryUpdate(_ context.Context, d Delivery) error {
	if f.deliveries[d.ID].Version != d.Version-1 {
		return fault.E("fake", fault.Conflict, "")
	}
	f.deliveries[d.ID] = d
	return nil
}
func (f *fakeStore) WebhookAttemptInsert(_ context.Context, a Attempt) error {
	k := [2]any{a.DeliveryID, a.Number}
	if _, ok := f.attempts[k]; ok {
		return fault.E("fake", fault.Conflict, "")
	}
	f.attempts[k] = a
	return nil
}
func (f *fakeStore) WebhookEventGet(_ context.Context, _ access.Environment, id string) (outbox.Event, error) {
	return f.events[id], nil
}

type fakeSealer struct{}

func (fakeSealer) Seal(p, _ []byte) []byte          { return append([]byte(nil), p...) }
func (fakeSealer) Open(s, _ []byte) ([]byte, error) { return s, nil }

// TestAttemptsNeverSentTwice: a job whose claim committed but whose
// outcome did not (the worker stopped between them) records the attempt
// interrupted on its next run and sends nothing; the next attempt is
// planned by the schedule and sent once; stale copies of the jobs, and a
// worker recording after the attempt was recorded interrupted, change
// nothing and send nothing.
func TestAttemptsNeverSentTwice(t *testing.T) {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	f := &fakeStore{now: t0, attempts: map[[2]any]Attempt{}, jobs: map[string]jobs.InsertParams{},
		endpoints: map[string]Endpoint{"whe_1": {ID: "whe_1", Scope: sc, URL: srv.URL + "/hook", Status: StatusEnabled,
			SecretSealed: []byte(newSecret()), SecretVersion: 1, Version: 1, CreatedAt: t0}},
		deliveries: map[string]Delivery{"whd_1": {ID: "whd_1", EndpointID: "whe_1", EventID: "evt_1", Scope: sc,
			Status: DeliveryPending, Version: 1, CreatedAt: t0}},
		events: map[string]outbox.Event{"evt_1": {ID: "evt_1", Environment: "test", Type: "project.created", Payload: json.RawMessage(`{}`)}}}
	s, err := New(Config{Sealer: fakeSealer{}, EventTypes: []string{"project.created"}, Clock: clockFunc(func() time.Time { return f.now }),
		DeliveryRunFunc: f.run, FanoutRunFunc: func(context.Context, func(FanoutStore) error) error { return nil },
		Tuning: Tuning{AllowTestLoopback: true, JitterFunc: func() float64 { return 0.5 }}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	job := func(version int64) jobs.Job {
		b, _ := json.Marshal(deliverPayload{DeliveryID: "whd_1", Environment: access.Test, Version: version})
		return jobs.Job{Kind: JobDeliver, Payload: b}
	}

	// The first run claims attempt 1 and stops before sending.
	plan, err := s.claim(ctx, deliverPayload{DeliveryID: "whd_1", Environment: access.Test, Version: 1})
	if err != nil || plan == nil || plan.number != 1 {
		t.Fatalf("claim: %+v, %v", plan, err)
	}
	// Its job runs again (the lease expired): attempt 1 is recorded
	// interrupted, nothing is sent, attempt 2 is planned 5 seconds later.
	if err := s.deliverJob(ctx, job(1)); err != nil {
		t.Fatal(err)
	}
	d := f.deliveries["whd_1"]
	a := f.attempts[[2]any{"whd_1", 1}]
	next, planned := f.jobs[JobDeliver+":whd_1:3"]
	if sent.Load() != 0 || a.ErrorClass != ClassInterrupted || d.Status != DeliveryPending || d.Version != 3 || !planned ||
		!next.RunAt.Equal(t0.Add(5*time.Second)) || next.Group != "whe_1" {
		t.Fatalf("after the rerun: sent %d, attempt %+v, delivery %+v, next %+v", sent.Load(), a, d, next)
	}
	// The stopped worker, were it only slow, finds its attempt recorded.
	if err := s.record(ctx, plan, outcome{statusCode: 200}); err != nil {
		t.Fatal(err)
	}
	if got := f.deliveries["whd_1"]; got.Version != 3 || got.Status != DeliveryPending {
		t.Fatalf("a late record changed the delivery: %+v", got)
	}
	// Attempt 2, once; stale copies do nothing.
	f.now = t0.Add(5 * time.Second)
	for _, v := range []int64{3, 3, 1, 2} {
		if err := s.deliverJob(ctx, job(v)); err != nil {
			t.Fatal(err)
		}
	}
	d = f.deliveries["whd_1"]
	if sent.Load() != 1 || d.Status != DeliverySucceeded || d.Attempts != 2 || len(f.attempts) != 2 || f.endpoints["whe_1"].LastSuccessAt.IsZero() {
		t.Fatalf("after attempt 2: sent %d, delivery %+v, %d attempts", sent.Load(), d, len(f.attempts))
	}
}

// TestGoneDisablesTheEndpoint: a 410 Gone answer fails the delivery
// without a retry and disables the endpoint (reason gone), with the event
// that tells its owner.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusGone)
		w.Write([]byte("unsubscribed"))
	}))
	defer srv.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	f := &fakeStore{now: t0, attempts: map[[2]any]Attempt{}, jobs: map[string]jobs.InsertParams{},
		endpoints: map[string]Endpoint{"whe_1": {ID: "whe_1", Scope: sc, URL: srv.URL + "/hook", Status: StatusEnabled,
			SecretSealed: []byte(newSecret()), SecretVersion: 1, Version: 1, CreatedAt: t0}},
		deliveries: map[string]Delivery{"whd_1": {ID: "whd_1", EndpointID: "whe_1", EventID: "evt_1", Scope: sc,
			Status: DeliveryPending, Version: 1, CreatedAt: t0}},
		events: map[string]outbox.Event{"evt_1": {ID: "evt_1", Environment: "test", Type: "project.created", Payload: json.RawMessage(`{}`)}}}
	s, err := New(Config{Sealer: fakeSealer{}, EventTypes: []string{"project.created"}, Clock: clockFunc(func() time.Time { return f.now }),
		DeliveryRunFunc: f.run, FanoutRunFunc: func(context.Context, func(FanoutStore) error) error { return nil },
		Tuning: Tuning{AllowTestLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, _ := json.Marshal(deliverPayload{DeliveryID: "whd_1", Environment: access.Test, Version: 1})
	if err := s.deliverJob(context.Background(), jobs.Job{Kind: JobDeliver, Payload: b}); err != nil {
		t.Fatal(err)
	}
	d, e, a := f.deliveries["whd_1"], f.endpoints["whe_1"], f.attempts[[2]any{"whd_1", 1}]
	if d.Status != DeliveryFailed || d.FailureReason != FailedGone || len(f.jobs) != 0 || a.StatusCode != http.StatusGone ||
		a.ResponseExcerpt != "unsubscribed" || e.Status != StatusDisabled || e.DisabledReason != DisabledGone ||
		len(f.outbox) != 1 || f.outbox[0].Type != EventTypeDisabled {
		t.Fatalf("delivery %+v, endpoint %+v, attempt %+v, %d jobs, events %+v", d, e, a, len(f.jobs), f.outbox)
	}
}

// clockFunc adapts a function to Clock.
type clockFunc func() time.Time

func (c clockFunc) Now() time.Time { return c() }
