package providerbtest_test

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	mp3 "github.com/hajimehoshi/go-mp3"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
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
	stream := get(t, poll.Data[0].AudioURL)
	if err := s.Complete(id); err != nil {
		t.Fatal(err)
	}
	call(t, s, http.MethodGet, "/api/v1/sonic/task/"+id, "", &poll)
	var pcm [2][]byte
	for n, c := range poll.Data {
		if c.State != providerb.StateSucceeded {
			t.Fatalf("clip %d: state %s", n, c.State)
		}
		if want := s.TrackLength().Round(10 * time.Millisecond).Seconds(); c.Duration != want {
			t.Errorf("clip %d: duration %v, want %v", n, c.Duration, want)
		}
		b := get(t, c.AudioURL)
		m, err := asset.Sniff(bytes.NewReader(b), int64(len(b)))
		if err != nil || m.Format != asset.MP3 || m.SampleRate != 44100 || m.Channels != 1 {
			t.Fatalf("clip %d: Sniff = %+v, %v", n, m, err)
		}
		d, err := mp3.NewDecoder(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("clip %d: go-mp3: %v", n, err)
		}
		if pcm[n], err = io.ReadAll(d); err != nil {
			t.Fatalf("clip %d: go-mp3: %v", n, err)
		}
		if got, want := len(pcm[n])/4, int(s.TrackLength().Seconds()*44100+0.5); got != want {
			t.Errorf("clip %d: %d samples, want %d", n, got, want)
		}
		if r := rmsPCM(pcm[n]); r < 0.05 {
			t.Errorf("clip %d: rms %.3f: near silent", n, r)
		}
		if n == 0 && !bytes.Equal(stream, b[:len(b)/2]) {
			t.Errorf("the stream link served %d bytes, not the first half of the clip's %d", len(stream), len(b))
		}
	}
	diff := make([]byte, min(len(pcm[0]), len(pcm[1])))
	for i := 0; i+1 < len(diff); i += 2 {
		v := int16(uint16(pcm[0][i])|uint16(pcm[0][i+1])<<8) - int16(uint16(pcm[1][i])|uint16(pcm[1][i+1])<<8)
		diff[i], diff[i+1] = byte(v), byte(uint16(v)>>8)
	}
	if r := rmsPCM(diff); r < 0.05 {
		t.Fatalf("the two clips differ by rms %.3f: the same music", r)
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" {
		t.Fatalf("GET %s: %d %s, %v", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return b
}

// rmsPCM is the level of 16-bit little-endian samples, full scale 1.
func rmsPCM(b []byte) float64 {
	s := 0.0
	for i := 0; i+1 < len(b); i += 2 {
		v := float64(int16(uint16(b[i])|uint16(b[i+1])<<8)) / 32768
		s += v * v
	}
	return math.Sqrt(s / float64(len(b)/2))
}
