package provideratest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a callback endpoint that records the callbackType of each
// callback it gets, in order.
type receiver struct {
	srv *httptest.Server

	mu    sync.Mutex
	types []string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var cb struct {
			Data struct {
				CallbackType string `json:"callbackType"`
			} `json:"data"`
		}
		_ = json.NewDecoder(req.Body).Decode(&cb)
		r.mu.Lock()
		r.types = append(r.types, cb.Data.CallbackType)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.types...)
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// createTask creates a task through the HTTP API with a callback to url.
func createTask(t *testing.T, s *Server, url string) string {
	t.Helper()
	body := `{"customMode":false,"instrumental":false,"model":"V5","prompt":"a song","callBackUrl":"` + url + `"}`
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v1/generate", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Code int `json:"code"`
		Data struct {
			TaskID string `json:"taskId"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Code != 200 || env.Data.TaskID == "" {
		t.Fatalf("create: code %d, err %v", env.Code, err)
	}
	return env.Data.TaskID
}

func mustAtoi(t *testing.T, v string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("timestamp %q: %v", v, err)
	}
	return n
}

func taskStatus(s *Server, id string) string {
	for _, ti := range s.Tasks() {
		if ti.ID == id {
			return ti.Status
		}
	}
	return ""
}

func TestAutoAdvanceRunsTaskToSuccess(t *testing.T) {
	rcv := newReceiver(t)
	s, err := New(Config{AutoAdvance: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	id := createTask(t, s, rcv.srv.URL)
	waitFor(t, "the complete callback", func() bool {
		got := rcv.got()
		return len(got) > 0 && got[len(got)-1] == "complete"
	})
	if got := strings.Join(rcv.got(), ","); got != "text,first,complete" {
		t.Fatalf("callbacks = %s, want text,first,complete", got)
	}
	for _, d := range s.Deliveries() {
		if d.Header.Get("X-Webhook-Signature") != Sign(s.CallbackKey(), id, mustAtoi(t, d.Header.Get("X-Webhook-Timestamp"))) {
			t.Fatalf("%s callback is not signed as the manual path signs it", d.Type)
		}
	}

	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/api/v1/generate/record-info?taskId="+id, nil)
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data struct {
			Status   string `json:"status"`
			Response struct {
				SunoData []struct {
					AudioURL string `json:"audioUrl"`
				} `json:"sunoData"`
			} `json:"response"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if env.Data.Status != "SUCCESS" || len(env.Data.Response.SunoData) != 2 {
		t.Fatalf("record: status %s, %d tracks", env.Data.Status, len(env.Data.Response.SunoData))
	}
	for n, tr := range env.Data.Response.SunoData {
		resp, err := http.Get(tr.AudioURL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, err := s.TrackMP3(id, n)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !bytes.Equal(b, want) {
			t.Fatalf("GET %s: status %d, %d bytes, want track %d's %d", tr.AudioURL, resp.StatusCode, len(b), n, len(want))
		}
	}
}

func TestAutoAdvanceLeavesHungAndFailedTasks(t *testing.T) {
	rcv := newReceiver(t)
	s, err := New(Config{AutoAdvance: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hung := createTask(t, s, rcv.srv.URL)
	if err := s.Hang(hung); err != nil {
		t.Fatal(err)
	}
	hungStatus := taskStatus(s, hung)
	failed := createTask(t, s, rcv.srv.URL)
	if err := s.Fail(failed, 501); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st := taskStatus(s, hung); st != hungStatus {
		t.Fatalf("hung task moved from %s to %s", hungStatus, st)
	}
	if st := taskStatus(s, failed); st != "GENERATE_AUDIO_FAILED" {
		t.Fatalf("failed task is %s", st)
	}
	var last string
	for _, d := range s.Deliveries() {
		if d.TaskID == failed {
			last = d.Type
		}
	}
	if last != "error" {
		t.Fatalf("last callback of the failed task = %q, want error", last)
	}
}

func TestCloseStopsAutoAdvance(t *testing.T) {
	rcv := newReceiver(t)
	s, err := New(Config{AutoAdvance: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := createTask(t, s, rcv.srv.URL)
	waitFor(t, "the text callback", func() bool { return len(rcv.got()) > 0 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sent, status := len(s.Deliveries()), taskStatus(s, id)
	time.Sleep(250 * time.Millisecond)
	if n := len(s.Deliveries()); n != sent {
		t.Fatalf("%d callbacks attempted after Close", n-sent)
	}
	if st := taskStatus(s, id); st != status {
		t.Fatalf("task moved from %s to %s after Close", status, st)
	}
	if n := len(rcv.got()); n > sent {
		t.Fatalf("receiver got %d callbacks, %d attempted before Close", n, sent)
	}
}
