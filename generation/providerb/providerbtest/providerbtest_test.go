package providerbtest_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/internal/tune/tunetest"
)

// TestClipsAreTwoPiecesOfMusic completes a task and fetches its two
// clips: each is an MP3 that the asset parser accepts and go-mp3 decodes
// to sound of the configured length, the two differ, the poll reports
// their duration, and a streaming clip's link serves the first half of
// its MP3.
func TestClipsAreTwoPiecesOfMusic(t *testing.T) {
	rcv := newReceiver(t)
	s, err := providerbtest.New(providerbtest.Config{TrackDuration: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	id := createTask(t, s, rcv.srv.URL)
	for range 2 { // running, streaming
		if err := s.Advance(id); err != nil {
			t.Fatal(err)
		}
	}
	var poll struct {
		Data []struct {
			ClipID   string  `json:"clip_id"`
			State    string  `json:"state"`
			AudioURL string  `json:"audio_url"`
			Duration float64 `json:"duration"`
		} `json:"data"`
	}
	call(t, s, http.MethodGet, "/api/v1/sonic/task/"+id, "", &poll)
	if len(poll.Data) != 2 || poll.Data[0].State != providerb.StateStreaming {
		t.Fatalf("poll while streaming: %+v", poll.Data)
	}
	stream := tunetest.Get(t, poll.Data[0].AudioURL)
	if err := s.Complete(id); err != nil {
		t.Fatal(err)
	}
	call(t, s, http.MethodGet, "/api/v1/sonic/task/"+id, "", &poll)
	var takes [][]byte
	for n, c := range poll.Data {
		if c.State != providerb.StateSucceeded {
			t.Fatalf("clip %d: state %s", n, c.State)
		}
		if want := s.TrackLength().Round(10 * time.Millisecond).Seconds(); c.Duration != want {
			t.Errorf("clip %d: duration %v, want %v", n, c.Duration, want)
		}
		b := tunetest.Get(t, c.AudioURL)
		if n == 0 && !bytes.Equal(stream, b[:len(b)/2]) {
			t.Errorf("the stream link served %d bytes, not the first half of the clip's %d", len(stream), len(b))
		}
		takes = append(takes, b)
	}
	tunetest.CheckTakes(t, s.TrackLength(), takes...)
}
