package provideratest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/creatormusic/platform/asset"
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
