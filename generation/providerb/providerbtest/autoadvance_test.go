package providerbtest_test

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

	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
)

const secret = "whsec-auto"

// webhook is one webhook the receiver got.
type webhook struct {
	id, event string
	signed    bool
}

// receiver is a webhook endpoint that records what it gets, in order.
type receiver struct {
	srv *httptest.Server

	mu  sync.Mutex
	got []webhook
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ts, _ := strconv.ParseInt(req.Header.Get(providerb.HeaderWebhookTimestamp), 10, 64)
		wh := webhook{id: req.Header.Get(providerb.HeaderWebhookID), event: req.Header.Get(providerb.HeaderWebhookEvent),
			signed: req.Header.Get(providerb.HeaderWebhookSignature) == providerb.Sign(secret, ts, body)}
		r.mu.Lock()
		r.got = append(r.got, wh)
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) webhooks() []webhook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]webhook(nil), r.got...)
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

func call(t *testing.T, s *providerbtest.Server, method, path, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

// createTask creates a task through the HTTP API with a webhook to url.
func createTask(t *testing.T, s *providerbtest.Server, url string) string {
	t.Helper()
	var out struct {
		TaskID string `json:"task_id"`
	}
	call(t, s, http.MethodPost, "/api/v1/sonic/create", `{"task_type":"create_music","custom_mode":false,"mv":"sonic-v5",`+
		`"gpt_description_prompt":"a calm song","webhook_url":"`+url+`","webhook_secret":"`+secret+`"}`, &out)
	if out.TaskID == "" {
		t.Fatal("create: no task_id")
	}
	return out.TaskID
}

func task(s *providerbtest.Server, id string) providerbtest.Task {
	for _, tk := range s.Tasks() {
		if tk.ID == id {
			return tk
		}
	}
	return providerbtest.Task{}
}

func states(tk providerbtest.Task) string {
	var st []string
	for _, c := range tk.Clips {
		st = append(st, c.State)
	}
	return strings.Join(st, ",")
}

func TestAutoAdvanceRunsTaskToSuccess(t *testing.T) {
	rcv := newReceiver(t)
	s, err := providerbtest.New(providerbtest.Config{AutoAdvance: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetWebhookDuplicates(1)
	id := createTask(t, s, rcv.srv.URL)
	waitFor(t, "running clips", func() bool { return states(task(s, id)) != "pending,pending" })
	waitFor(t, "the song.completed webhooks", func() bool { return len(rcv.webhooks()) >= 2 })
	got := rcv.webhooks()
	if len(got) != 2 || got[0].id != got[1].id {
		t.Fatalf("webhooks = %+v, want one song.completed sent twice with one id", got)
	}
	for _, wh := range got {
		if wh.event != providerb.EventCompleted || !wh.signed {
			t.Fatalf("webhook = %+v, want a signed %s", wh, providerb.EventCompleted)
		}
	}

	var poll struct {
		Data []struct {
			ClipID   string `json:"clip_id"`
			State    string `json:"state"`
			AudioURL string `json:"audio_url"`
		} `json:"data"`
	}
	call(t, s, http.MethodGet, "/api/v1/sonic/task/"+id, "", &poll)
	if len(poll.Data) != 2 {
		t.Fatalf("poll: %d clips", len(poll.Data))
	}
	for _, c := range poll.Data {
		if c.State != providerb.StateSucceeded {
			t.Fatalf("clip state = %s", c.State)
		}
		resp, err := http.Get(c.AudioURL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, err := s.ClipMP3(c.ClipID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !bytes.Equal(b, want) {
			t.Fatalf("GET %s: status %d, %d bytes, want the clip's %d", c.AudioURL, resp.StatusCode, len(b), len(want))
		}
	}
}

func TestAutoAdvanceLeavesHungAndFailedTasks(t *testing.T) {
	rcv := newReceiver(t)
	s, err := providerbtest.New(providerbtest.Config{AutoAdvance: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	hung := createTask(t, s, rcv.srv.URL)
	if err := s.Hang(hung); err != nil {
		t.Fatal(err)
	}
	hungStates := states(task(s, hung))
	failed := createTask(t, s, rcv.srv.URL)
	if err := s.Fail(failed, "flagged by moderation"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st := states(task(s, hung)); st != hungStates {
		t.Fatalf("hung task moved from %s to %s", hungStates, st)
	}
	if st := states(task(s, failed)); st != "failed,failed" {
		t.Fatalf("failed task clips = %s", st)
	}
	got := rcv.webhooks()
	if len(got) != 1 || got[0].event != providerb.EventFailed {
		t.Fatalf("webhooks = %+v, want one %s", got, providerb.EventFailed)
	}
}

func TestCloseStopsAutoAdvance(t *testing.T) {
	rcv := newReceiver(t)
	s, err := providerbtest.New(providerbtest.Config{AutoAdvance: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := createTask(t, s, rcv.srv.URL)
	waitFor(t, "running clips", func() bool { return states(task(s, id)) != "pending,pending" })
	s.Close()
	sent, st := len(s.Deliveries()), states(task(s, id))
	time.Sleep(250 * time.Millisecond)
	if n := len(s.Deliveries()); n != sent {
		t.Fatalf("%d webhooks attempted after Close", n-sent)
	}
	if now := states(task(s, id)); now != st {
		t.Fatalf("clips moved from %s to %s after Close", st, now)
	}
	if n := len(rcv.webhooks()); n > sent {
		t.Fatalf("receiver got %d webhooks, %d attempted before Close", n, sent)
	}
}
