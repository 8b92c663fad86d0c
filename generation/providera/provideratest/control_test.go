package provideratest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
)

// sim calls a control route with key and decodes the JSON answer.
func sim(t *testing.T, s *Server, method, path, key string, form url.Values) (int, map[string]any) {
	t.Helper()
	return simctl.Call(t, s.URL(), method, path, key, form)
}

func TestControlRoutes(t *testing.T) {
	rcv := newReceiver(t)
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	for _, key := range []string{"", "wrong"} {
		if status, v := sim(t, s, http.MethodGet, "/_sim/events", key, nil); status != 200 || v["code"] != 401.0 {
			t.Fatalf("events with key %q: %d %v", key, status, v)
		}
	}
	id := createTask(t, s, rcv.srv.URL)
	if status, v := sim(t, s, http.MethodPost, "/_sim/tasks/"+id+"/advance", s.APIKey(), nil); status != 200 || v["status"] != "TEXT_SUCCESS" {
		t.Fatalf("advance: %d %v", status, v)
	}
	if status, v := sim(t, s, http.MethodPost, "/_sim/tasks/"+id+"/complete", s.APIKey(), nil); status != 200 || v["ok"] != true {
		t.Fatalf("complete: %d %v", status, v)
	}
	if got := strings.Join(rcv.got(), ","); got != "text,first,complete" {
		t.Fatalf("callbacks = %s", got)
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/tasks/"+id+"/fail", s.APIKey(), url.Values{"code": {"400"}}); status != 409 {
		t.Fatalf("fail a finished task: %d", status)
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/tasks/nope/advance", s.APIKey(), nil); status != 404 {
		t.Fatalf("advance an unknown task: %d", status)
	}
	_, v := sim(t, s, http.MethodGet, "/_sim/tasks", s.APIKey(), nil)
	if tasks := v["data"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["status"] != "SUCCESS" {
		t.Fatalf("tasks = %v", v)
	}

	// The event log holds the create, the statuses and the callbacks, in
	// order, and none of the control requests.
	_, v = sim(t, s, http.MethodGet, "/_sim/events", s.APIKey(), nil)
	var got []string
	for _, e := range v["data"].([]any) {
		m := e.(map[string]any)
		got = append(got, m["kind"].(string)+":"+m["name"].(string))
	}
	want := "state:PENDING request:POST /api/v1/generate state:TEXT_SUCCESS delivery:text state:FIRST_SUCCESS delivery:first state:SUCCESS delivery:complete"
	if strings.Join(got, " ") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if len(s.Deliveries()) != 3 || s.Deliveries()[2].Type != "complete" {
		t.Fatalf("deliveries = %+v", s.Deliveries())
	}

	// fail_next scripts the next create's answer.
	if status, _ := sim(t, s, http.MethodPost, "/_sim/fail_next", s.APIKey(), url.Values{"endpoint": {"create"}, "code": {"430"}, "msg": {"slow down"}}); status != 200 {
		t.Fatalf("fail_next: %d", status)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v1/generate", strings.NewReader(`{"prompt":"x","callBackUrl":"`+rcv.srv.URL+`"}`))
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"code":430`) || s.CreateCount() != 1 {
		t.Fatalf("create after fail_next: %s (%d tasks)", b, s.CreateCount())
	}
	if status, _ := sim(t, s, http.MethodPost, "/_sim/fail_next", s.APIKey(), url.Values{"endpoint": {"nope"}}); status != 400 {
		t.Fatalf("fail_next of an unknown endpoint: %d", status)
	}

	if status, v := sim(t, s, http.MethodPost, "/_sim/events/reset", s.APIKey(), nil); status != 200 || v["reset"].(float64) < 8 {
		t.Fatalf("reset: %d %v", status, v)
	}
	if len(s.Events()) != 0 || len(s.Deliveries()) != 0 {
		t.Fatal("the event log is not empty after reset")
	}
}

func TestAutoAdvanceFollowsTheInjectedClock(t *testing.T) {
	rcv := newReceiver(t)
	clock := NewManualClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	s, err := New(Config{Clock: clock, AutoAdvance: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	id := createTask(t, s, rcv.srv.URL)
	time.Sleep(50 * time.Millisecond)
	if st := taskStatus(s, id); st != "PENDING" {
		t.Fatalf("the task moved to %s before the clock did", st)
	}
	for _, want := range []string{"TEXT_SUCCESS", "FIRST_SUCCESS", "SUCCESS"} {
		clock.Add(time.Minute)
		waitFor(t, want, func() bool { return taskStatus(s, id) == want })
	}
	waitFor(t, "the complete callback", func() bool { return len(rcv.got()) == 3 })
	if got := strings.Join(rcv.got(), ","); got != "text,first,complete" {
		t.Fatalf("callbacks = %s", got)
	}
}
