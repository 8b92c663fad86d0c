package providerbtest_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/internal/simctl"

	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
)

// sim calls a control route with key and decodes the JSON answer.
func sim(t *testing.T, s *providerbtest.Server, method, path, key string, form url.Values) (int, map[string]any) {
	t.Helper()
	return simctl.Call(t, s.URL(), method, path, key, form)
}

func TestControlRoutes(t *testing.T) {
	rcv := newReceiver(t)
	s, err := providerbtest.New(providerbtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if status, v := sim(t, s, http.MethodGet, "/_sim/events", "", nil); status != 401 || v["message"] != "Authorization header is missing." {
		t.Fatalf("events without a key: %d %v", status, v)
	}
	if status, v := sim(t, s, http.MethodGet, "/_sim/events", "wrong", nil); status != 401 || v["message"] != "Invalid authorization format." {
		t.Fatalf("events with a wrong key: %d %v", status, v)
	}
	id := createTask(t, s, rcv.srv.URL)
	for _, step := range []string{"advance", "complete"} {
		if status, v := sim(t, s, http.MethodPost, "/_sim/tasks/"+id+"/"+step, s.APIKey(), nil); status != 200 || v["ok"] != true {
			t.Fatalf("%s: %d %v", step, status, v)
		}
	}
	if st := states(task(s, id)); st != "succeeded,succeeded" {
		t.Fatalf("clips = %s", st)
	}
	if got := rcv.webhooks(); len(got) != 1 || got[0].event != providerb.EventCompleted || !got[0].signed {
		t.Fatalf("webhooks = %+v", got)
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/tasks/nope/fail", s.APIKey(), url.Values{"message": {"x"}}); status != 404 {
		t.Fatalf("fail an unknown task: %d", status)
	}
	_, v := sim(t, s, http.MethodGet, "/_sim/tasks", s.APIKey(), nil)
	if tasks := v["data"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["id"] != id {
		t.Fatalf("tasks = %v", v)
	}

	// The event log holds the create, the clips' states and the webhook.
	var got []string
	for _, e := range s.Events() {
		got = append(got, string(e.Kind)+":"+e.Name)
	}
	want := "state:pending state:pending request:POST /api/v1/sonic/create state:running state:running " +
		"state:succeeded state:succeeded delivery:song.completed"
	if strings.Join(got, " ") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if d := s.Deliveries(); len(d) != 1 || d[0].TaskID != id || d[0].WebhookID == "" || d[0].Status != 200 {
		t.Fatalf("deliveries = %+v", d)
	}

	// fail_next: the next two polls answer 503, then the task again.
	if status, v := sim(t, s, http.MethodPost, "/_sim/fail_next", s.APIKey(), url.Values{"endpoint": {"task"}, "status": {"503"}, "n": {"2"}}); status != 200 {
		t.Fatalf("fail_next: %d %v", status, v)
	}
	var codes []int
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest(http.MethodGet, s.URL()+"/api/v1/sonic/task/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+s.APIKey())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 503 || codes[1] != 503 || codes[2] != 200 {
		t.Fatalf("polls answered %v", codes)
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/fail_next", s.APIKey(), url.Values{"endpoint": {"task"}, "status": {"200"}}); status != 400 {
		t.Fatalf("fail_next with a success status: %d", status)
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/events/reset", s.APIKey(), nil); status != 200 || len(s.Events()) != 0 {
		t.Fatalf("reset: %d, %d events left", status, len(s.Events()))
	}
	if err := s.Redeliver(0, false); err == nil {
		t.Fatal("Redeliver found a delivery after the log was reset")
	}
}

// stepClock is a clock the test moves.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var _ providerbtest.Clock = (*stepClock)(nil)

func TestAutoAdvanceFollowsTheInjectedClock(t *testing.T) {
	rcv := newReceiver(t)
	clock := &stepClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	s, err := providerbtest.New(providerbtest.Config{Clock: clock, AutoAdvance: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	id := createTask(t, s, rcv.srv.URL)
	time.Sleep(50 * time.Millisecond)
	if st := states(task(s, id)); st != "pending,pending" {
		t.Fatalf("the clips moved to %s before the clock did", st)
	}
	clock.add(time.Minute)
	waitFor(t, "running clips", func() bool { return states(task(s, id)) == "running,running" })
	clock.add(time.Minute)
	waitFor(t, "succeeded clips", func() bool { return states(task(s, id)) == "succeeded,succeeded" })
	waitFor(t, "the webhook", func() bool { return len(rcv.webhooks()) == 1 })
}
