package provideratest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/internal/tune/tunetest"
)

func TestMP3AcceptedBySniff(t *testing.T) {
	b := MP3(0)
	m, err := asset.Sniff(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Sniff: %v", err)
	}
	if m.Format != asset.MP3 || m.SampleRate != 44100 || m.BitrateKbps != 128 || m.Channels != 2 {
		t.Fatalf("media = %+v", m)
	}
}

func TestLoopbackOnlyAndCreateWithoutCallback(t *testing.T) {
	if _, err := New(Config{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("non-loopback address accepted")
	}
	for _, d := range []string{DialectSunoAPI, DialectKie} {
		s, err := New(Config{Dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/api/v1/generate",
			strings.NewReader(`{"customMode":false,"instrumental":false,"model":"V5","prompt":"a song"}`))
		req.Header.Set("Authorization", "Bearer "+s.APIKey())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"code":422`) || !strings.Contains(string(body), "callBackUrl") {
			t.Fatalf("%s: body = %s", d, body)
		}
		if s.CreateCount() != 0 {
			t.Fatalf("%s: a task was created", d)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTracksAreTwoPiecesOfMusic completes a task and fetches its two
// tracks: each is an MP3 that go-mp3 decodes to sound of the configured
// length, the two differ, the record reports their duration, and the
// first stage's stream link serves the first half of the track.
func TestTracksAreTwoPiecesOfMusic(t *testing.T) {
	rcv := newReceiver(t)
	s, err := New(Config{TrackDuration: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	id := createTask(t, s, rcv.srv.URL)
	for range 2 {
		if _, err := s.Advance(id); err != nil {
			t.Fatal(err)
		}
	}
	stream := tunetest.Get(t, s.URL()+"/audiopipe/"+id+"/0")
	if err := s.Complete(id); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data struct {
			Response struct {
				SunoData []struct {
					AudioURL string  `json:"audioUrl"`
					Duration float64 `json:"duration"`
				} `json:"sunoData"`
			} `json:"response"`
		} `json:"data"`
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/api/v1/generate/record-info?taskId="+id, nil)
	req.Header.Set("Authorization", "Bearer "+s.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&env)
	resp.Body.Close()
	if err != nil || len(env.Data.Response.SunoData) != 2 {
		t.Fatalf("record: %+v, %v", env, err)
	}
	var takes [][]byte
	for n, tr := range env.Data.Response.SunoData {
		b := tunetest.Get(t, tr.AudioURL)
		if want := s.TrackLength().Round(10 * time.Millisecond).Seconds(); tr.Duration != want {
			t.Errorf("track %d: duration %v, want %v", n, tr.Duration, want)
		}
		if n == 0 && !bytes.Equal(stream, b[:len(b)/2]) {
			t.Errorf("the stream link served %d bytes, not the first half of the track's %d", len(stream), len(b))
		}
		takes = append(takes, b)
	}
	tunetest.CheckTakes(t, s.TrackLength(), takes...)
}
