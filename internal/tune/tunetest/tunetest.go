// Package tunetest checks, in the music provider simulators' tests, that
// the takes a simulator serves are what package tune promises: MP3 that
// decodes to sound of the configured length, a different piece per take.
package tunetest

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/hajimehoshi/go-mp3"

	"github.com/creatormusic/platform/asset"
)

// Get fetches url and returns its body, failing t unless it answers 200
// with Content-Type audio/mpeg.
func Get(t testing.TB, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "audio/mpeg" {
		t.Fatalf("GET %s: %d %s, %v", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	return b
}

// CheckTakes fails t unless every take is an MP3 the platform's sniffer
// reads as 44.1 kHz mono, which go-mp3 decodes to length of audible sound,
// and unless each take differs from the first in its decoded audio.
func CheckTakes(t testing.TB, length time.Duration, takes ...[]byte) {
	t.Helper()
	pcm := make([][]byte, len(takes))
	for n, b := range takes {
		m, err := asset.Sniff(bytes.NewReader(b), int64(len(b)))
		if err != nil || m.Format != asset.MP3 || m.SampleRate != 44100 || m.Channels != 1 {
			t.Fatalf("take %d: Sniff = %+v, %v", n, m, err)
		}
		d, err := mp3.NewDecoder(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("take %d: go-mp3: %v", n, err)
		}
		if pcm[n], err = io.ReadAll(d); err != nil {
			t.Fatalf("take %d: go-mp3: %v", n, err)
		}
		// go-mp3 always decodes to 16-bit stereo: 4 bytes per sample.
		if got, want := len(pcm[n])/4, int(length.Seconds()*44100+0.5); got != want {
			t.Errorf("take %d: %d samples, want %d", n, got, want)
		}
		if r := rms(pcm[n]); r < 0.05 {
			t.Errorf("take %d: rms %.3f: near silent", n, r)
		}
	}
	for n := 1; n < len(pcm); n++ {
		diff := make([]byte, min(len(pcm[0]), len(pcm[n])))
		for i := 0; i+1 < len(diff); i += 2 {
			v := sample(pcm[0], i) - sample(pcm[n], i)
			diff[i], diff[i+1] = byte(v), byte(uint16(v)>>8)
		}
		if r := rms(diff); r < 0.05 {
			t.Fatalf("takes 0 and %d differ by rms %.3f: the same music", n, r)
		}
	}
}

// sample is the 16-bit little-endian sample at byte offset i.
func sample(b []byte, i int) int16 { return int16(uint16(b[i]) | uint16(b[i+1])<<8) }

// rms is the level of 16-bit little-endian samples, full scale 1.
func rms(b []byte) float64 {
	s := 0.0
	for i := 0; i+1 < len(b); i += 2 {
		v := float64(sample(b, i)) / 32768
		s += v * v
	}
	return math.Sqrt(s / float64(len(b)/2))
}
