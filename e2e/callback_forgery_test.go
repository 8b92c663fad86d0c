package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// Provider A signs a callback's task id and timestamp, not its body. An
// attacker who captured one genuine callback (here the text-stage one)
// posts, with its headers unchanged and inside the skew window, a body of
// their own: "error", or "complete" naming their own audio URLs. Both are
// acknowledged (the signature is valid), and neither is believed: the
// platform asks provider A's authenticated record and takes only what it
// says.
//
//   - While the task still runs, the forged "error" fails nothing and the
//     forged "complete" ingests nothing: the operation stays processing
//     at the text stage, no asset, no output, credits still reserved.
//     When the task really finishes, the operation completes with the
//     record's two tracks.
//   - After the task has finished (its own callbacks lost), the forged
//     "complete" makes the platform read the record, which completes the
//     operation with the record's tracks.
//
// The attacker's media server is never asked for anything, and no output
// carries the attacker's track ids.
func TestGenerationForgedCallbackIngestsNothing(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		mp3 := provideratest.MP3(4)
		var evilHits atomic.Int64
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			evilHits.Add(1)
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Header().Set("Content-Length", strconv.Itoa(len(mp3)))
			_, _ = w.Write(mp3)
		}))
		t.Cleanup(evil.Close)

		// The record still runs.
		running := gfStart(t, s, "forged-running")
		captured := forgeryCapture(t, s, running.task)
		if code := forgeryPost(t, s, running.task, captured, forgedBody(running.task, "error", 501, "")); code != http.StatusOK {
			t.Fatalf("forged error answered %d, want 200 (validly signed)", code)
		}
		if code := forgeryPost(t, s, running.task, captured, forgedBody(running.task, "complete", 200, evil.URL)); code != http.StatusOK {
			t.Fatalf("forged complete answered %d, want 200 (validly signed)", code)
		}
		forgeryConfirmed(t, s, running.id, 3) // text, error and complete were each confirmed once
		v := getOp(t, s, running.id)
		if v.Status != "processing" || v.Stage != "text" || v.Failure != nil || len(v.Outputs) != 0 {
			t.Fatalf("after forged callbacks on a running task: %s/%s failure %+v outputs %+v", v.Status, v.Stage, v.Failure, v.Outputs)
		}
		if n := gfGenerated(t, s); n != 0 {
			t.Fatalf("generated assets = %d, want 0", n)
		}
		if got := reservationLeft(t, s, running.id); got != strconv.Itoa(gfPrice) {
			t.Fatalf("reservation left = %s, want %d", got, gfPrice)
		}
		// The task really finishes: its first callback is confirmed, its
		// complete one is a duplicate of the forged claim, and the recovery
		// polls finish what the confirmation did not see.
		if err := s.ProviderA.Complete(running.task); err != nil {
			t.Fatal(err)
		}
		gfAdvanceUntil(t, s, time.Second, "the record completes it", gfStatus(t, s, running.id, "completed"))
		forgeryTracks(t, s, gfCompleted(t, s, running))

		// The record has finished; its callbacks were lost.
		finished := gfStart(t, s, "forged-finished")
		captured = forgeryCapture(t, s, finished.task)
		if err := s.ProviderA.DropCallbacks(finished.task, "first", "complete"); err != nil {
			t.Fatal(err)
		}
		if err := s.ProviderA.Complete(finished.task); err != nil {
			t.Fatal(err)
		}
		if code := forgeryPost(t, s, finished.task, captured, forgedBody(finished.task, "complete", 200, evil.URL)); code != http.StatusOK {
			t.Fatalf("forged complete answered %d", code)
		}
		forgeryTracks(t, s, gfCompleted(t, s, finished))

		if n := evilHits.Load(); n != 0 {
			t.Fatalf("the attacker's media server got %d requests, want 0", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE provider_track_id LIKE 'evil-%'`); n != 0 {
			t.Fatalf("%d outputs carry the attacker's track ids", n)
		}
	})
}

// forgeryCapture advances task to its text stage and returns the headers
// of the callback provider A delivered for it.
func forgeryCapture(t *testing.T, s *platformtest.System, task string) http.Header {
	t.Helper()
	if _, err := s.ProviderA.Advance(task); err != nil {
		t.Fatal(err)
	}
	for _, d := range s.ProviderA.Deliveries() {
		if d.TaskID == task && d.Type == "text" && d.Status == http.StatusOK {
			return d.Header
		}
	}
	t.Fatalf("no text callback delivered for %s", task)
	return nil
}

// forgedBody is an A callback body of type typ for task; a complete one
// names two tracks served by evilURL.
func forgedBody(task, typ string, code int, evilURL string) []byte {
	items := []map[string]any{}
	if typ == "complete" {
		for i := 1; i <= 2; i++ {
			n := strconv.Itoa(i)
			items = append(items, map[string]any{"id": "evil-" + n, "audio_url": evilURL + "/track" + n + ".mp3",
				"stream_audio_url": evilURL + "/stream" + n, "title": "Forged", "duration": 600})
		}
	}
	b, _ := json.Marshal(map[string]any{"code": code, "msg": "forged", "data": map[string]any{"callbackType": typ, "task_id": task, "data": items}})
	return b
}

// forgeryPost posts body to task's callback URL with the captured headers
// and returns the status.
func forgeryPost(t *testing.T, s *platformtest.System, task string, h http.Header, body []byte) int {
	t.Helper()
	var url string
	for _, ti := range s.ProviderA.Tasks() {
		if ti.ID == task {
			url = ti.CallbackURL
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// forgeryConfirmed waits until n confirmation queries of the operation's
// attempt have run, or the operation has ended (which the caller's
// assertions then refuse).
func forgeryConfirmed(t *testing.T, s *platformtest.System, opID string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for count(t, s, `SELECT COUNT(*) FROM jobs j JOIN generation_attempts a ON j.unique_key LIKE 'gen-confirm:' || a.id || ':%'
		WHERE a.operation_id = ? AND j.state = 'succeeded'`, opID) < n &&
		count(t, s, `SELECT COUNT(*) FROM generation_operations WHERE id = ? AND status IN ('completed', 'failed', 'cancelled', 'expired')`, opID) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("operation %s: fewer than %d confirmations after 15s", opID, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// forgeryTracks asserts a completed operation's outputs are provider A's
// own tracks, as its record names them.
func forgeryTracks(t *testing.T, s *platformtest.System, v api.OperationView) {
	t.Helper()
	if n := count(t, s, `SELECT COUNT(*) FROM generation_outputs WHERE operation_id = ? AND provider_track_id NOT LIKE 'evil-%'`, v.ID); n != 2 {
		t.Fatalf("outputs of provider A's own tracks = %d, want 2", n)
	}
}
