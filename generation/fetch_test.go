package generation_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// mediaSecret is the signed token every test URL carries in its query string.
const mediaSecret = "sig-SECRET-7f3a"

// mediaStep answers one GET.
type mediaStep func(w http.ResponseWriter)

func mediaStatus(code int) mediaStep {
	return func(w http.ResponseWriter) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "error page")
	}
}

// mediaBody answers 200 with a Content-Length.
func mediaBody(b []byte) mediaStep {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	}
}

// mediaChunked answers 200 with no Content-Length, in pieces of at most 1 KiB.
func mediaChunked(b []byte) mediaStep {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers out: the length is unknown
		for len(b) > 0 {
			n := min(len(b), 1024)
			_, _ = w.Write(b[:n])
			w.(http.Flusher).Flush()
			b = b[n:]
		}
	}
}

// mediaEmpty answers 200 with Content-Length 0.
func mediaEmpty() mediaStep { return mediaBody(nil) }

// mediaEmptyChunked answers 200 with an unknown length and no bytes.
func mediaEmptyChunked() mediaStep { return mediaChunked(nil) }

// mediaServer serves steps in order, repeating the last, and counts GETs.
func mediaServer(t *testing.T, steps ...mediaStep) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		if got := r.URL.Query().Get("token"); got != mediaSecret {
			t.Errorf("token %q, want the signed token", got)
		}
		i := int(hits.Add(1)) - 1
		steps[min(i, len(steps)-1)](w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/media/track.mp3?token=" + mediaSecret, hits
}

// sleepLog records the waits of a Fetcher without waiting.
type sleepLog struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleepLog) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func noSleep(context.Context, time.Duration) error { return nil }

// guardFor is the media guard that lets exactly u's loopback test server
// through.
func guardFor(t *testing.T, u string) *urlguard.Guard {
	return urlguardtest.Guard(t, generation.MediaGuardConfig(nil), u)
}

// checkNoSecret fails when err's text or details name the signed token.
func checkNoSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	_, msg, details := fault.Public(err)
	for _, s := range []string{err.Error(), msg, fmt.Sprint(details)} {
		if strings.Contains(s, mediaSecret) || strings.Contains(s, "token=") {
			t.Errorf("error leaks the query string: %q", s)
		}
	}
}

func faultDetail(err error, key string) any {
	_, _, d := fault.Public(err)
	return d[key]
}

func mediaBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestFetchSucceeds(t *testing.T) {
	want := mediaBytes(5000)
	tests := []struct {
		name         string
		steps        []mediaStep
		wantAttempts int
	}{
		{"200 at once", []mediaStep{mediaBody(want)}, 1},
		{"403 then 200 (F9)", []mediaStep{mediaStatus(403), mediaBody(want)}, 2},
		{"404, 500, 429 then 200", []mediaStep{mediaStatus(404), mediaStatus(500), mediaStatus(429), mediaBody(want)}, 4},
		{"zero bytes (Content-Length 0) then 200", []mediaStep{mediaEmpty(), mediaBody(want)}, 2},
		{"zero bytes (unknown length) then 200", []mediaStep{mediaEmptyChunked(), mediaBody(want)}, 2},
		{"unknown length", []mediaStep{mediaChunked(want)}, 1},
		{"one byte, unknown length", []mediaStep{mediaChunked(want[:1])}, 1},
		{"zero bytes then unknown length", []mediaStep{mediaEmpty(), mediaChunked(want)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, hits := mediaServer(t, tt.steps...)
			f := &generation.Fetcher{Guard: guardFor(t, u), SleepFunc: noSleep}
			m, err := f.Fetch(context.Background(), u)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			defer m.Body.Close()
			got, err := io.ReadAll(m.Body)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			wantBody := want
			if strings.HasPrefix(tt.name, "one byte") {
				wantBody = want[:1]
			}
			if !bytes.Equal(got, wantBody) {
				t.Errorf("body: %d bytes, want exactly %d bytes", len(got), len(wantBody))
			}
			if m.Attempts != tt.wantAttempts || hits.Load() != int64(tt.wantAttempts) {
				t.Errorf("attempts %d, hits %d, want %d", m.Attempts, hits.Load(), tt.wantAttempts)
			}
			if m.ContentType != "audio/mpeg" {
				t.Errorf("content type %q", m.ContentType)
			}
		})
	}
}

func TestFetchFails(t *testing.T) {
	tests := []struct {
		name     string
		attempts int // Fetcher.Attempts; 0 is the default 4
		steps    []mediaStep
		hits     int64
		code     fault.Code
		details  map[string]any
	}{
		{"always 404", 0, []mediaStep{mediaStatus(404)}, 4,
			fault.ResultExpired, map[string]any{"status": 404, "attempts": 4}},
		{"always 403", 3, []mediaStep{mediaStatus(403)}, 3,
			fault.ResultExpired, map[string]any{"status": 403, "attempts": 3}},
		{"410", 2, []mediaStep{mediaStatus(410)}, 2,
			fault.ResultExpired, map[string]any{"status": 410, "attempts": 2}},
		{"403, 404, 410", 3, []mediaStep{mediaStatus(403), mediaStatus(404), mediaStatus(410)}, 3,
			fault.ResultExpired, map[string]any{"status": 410}},
		{"zero bytes then 404", 2, []mediaStep{mediaEmpty(), mediaStatus(404)}, 2,
			fault.ResultExpired, map[string]any{"status": 404}},
		{"always zero bytes (Content-Length 0)", 0, []mediaStep{mediaEmpty()}, 4,
			fault.GenerationFailed, map[string]any{"reason": "empty_media", "attempts": 4}},
		{"always zero bytes (unknown length)", 3, []mediaStep{mediaEmptyChunked()}, 3,
			fault.GenerationFailed, map[string]any{"reason": "empty_media", "attempts": 3}},
		{"404 then zero bytes", 2, []mediaStep{mediaStatus(404), mediaEmpty()}, 2,
			fault.GenerationFailed, map[string]any{"reason": "empty_media"}},
		{"always 500", 0, []mediaStep{mediaStatus(500)}, 4,
			fault.ProviderUnavailable, map[string]any{"reason": "media_unreachable", "status": 500, "attempts": 4}},
		{"always 503", 2, []mediaStep{mediaStatus(503)}, 2,
			fault.ProviderUnavailable, map[string]any{"reason": "media_unreachable", "status": 503}},
		{"always 429", 2, []mediaStep{mediaStatus(429)}, 2,
			fault.ProviderUnavailable, map[string]any{"reason": "media_unreachable", "status": 429}},
		{"500 then 404: not known gone", 3, []mediaStep{mediaStatus(500), mediaStatus(404)}, 3,
			fault.ProviderUnavailable, map[string]any{"reason": "media_unreachable", "status": 404}},
		{"401 at once", 0, []mediaStep{mediaStatus(401)}, 1,
			fault.GenerationFailed, map[string]any{"reason": "media_refused", "status": 401, "attempts": 1}},
		{"400 at once", 0, []mediaStep{mediaStatus(400)}, 1,
			fault.GenerationFailed, map[string]any{"reason": "media_refused", "status": 400}},
		{"403 then 401", 0, []mediaStep{mediaStatus(403), mediaStatus(401)}, 2,
			fault.GenerationFailed, map[string]any{"reason": "media_refused", "status": 401, "attempts": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, hits := mediaServer(t, tt.steps...)
			f := &generation.Fetcher{Guard: guardFor(t, u), Attempts: tt.attempts, SleepFunc: noSleep}
			m, err := f.Fetch(context.Background(), u)
			if err == nil {
				m.Body.Close()
				t.Fatal("Fetch succeeded")
			}
			if !fault.Is(err, tt.code) {
				t.Fatalf("code %s, want %s: %v", fault.CodeOf(err), tt.code, err)
			}
			if hits.Load() != tt.hits {
				t.Errorf("%d GETs, want %d", hits.Load(), tt.hits)
			}
			for k, v := range tt.details {
				if got := faultDetail(err, k); got != v {
					t.Errorf("details.%s = %v, want %v", k, got, v)
				}
			}
			if got := faultDetail(err, "url"); !strings.HasSuffix(fmt.Sprint(got), "/media/track.mp3") {
				t.Errorf("details.url = %v, want scheme+host+path", got)
			}
			checkNoSecret(t, err)
		})
	}
}

func TestFetchBacksOffDoubling(t *testing.T) {
	u, _ := mediaServer(t, mediaStatus(404))
	var s sleepLog
	f := &generation.Fetcher{Guard: guardFor(t, u), Attempts: 4, Backoff: 10 * time.Millisecond, SleepFunc: s.sleep}
	if _, err := f.Fetch(context.Background(), u); !fault.Is(err, fault.ResultExpired) {
		t.Fatalf("err = %v", err)
	}
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	if fmt.Sprint(s.d) != fmt.Sprint(want) {
		t.Errorf("sleeps %v, want %v", s.d, want)
	}

	s = sleepLog{}
	u, _ = mediaServer(t, mediaStatus(404), mediaBody([]byte("x")))
	if _, err := (&generation.Fetcher{Guard: guardFor(t, u), SleepFunc: s.sleep}).Fetch(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.d) != fmt.Sprint([]time.Duration{500 * time.Millisecond}) {
		t.Errorf("default backoff: sleepLog %v, want [500ms]", s.d)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	const limit = 4096
	t.Run("known length over the limit fails at once", func(t *testing.T) {
		u, hits := mediaServer(t, mediaBody(mediaBytes(limit+1)))
		_, err := (&generation.Fetcher{Guard: guardFor(t, u), MaxBytes: limit, SleepFunc: noSleep}).Fetch(context.Background(), u)
		if !fault.Is(err, fault.PayloadTooLarge) || faultDetail(err, "limit") != int64(limit) {
			t.Fatalf("err = %v (details %v)", err, faultDetail(err, "limit"))
		}
		if hits.Load() != 1 {
			t.Errorf("%d GETs, want 1", hits.Load())
		}
		checkNoSecret(t, err)
	})
	t.Run("unknown length over the limit fails the read", func(t *testing.T) {
		want := mediaBytes(3 * limit)
		u, _ := mediaServer(t, mediaChunked(want))
		m, err := (&generation.Fetcher{Guard: guardFor(t, u), MaxBytes: limit, SleepFunc: noSleep}).Fetch(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Body.Close()
		got, err := io.ReadAll(m.Body)
		if !fault.Is(err, fault.PayloadTooLarge) {
			t.Fatalf("read err = %v, want PAYLOAD_TOO_LARGE", err)
		}
		if !bytes.Equal(got, want[:limit]) {
			t.Errorf("read %d bytes before failing, want the first %d", len(got), limit)
		}
		if n, err := m.Body.Read(make([]byte, 10)); n != 0 || !fault.Is(err, fault.PayloadTooLarge) {
			t.Errorf("read after the failure = %d, %v", n, err)
		}
	})
	for _, st := range []struct {
		name string
		step func([]byte) mediaStep
	}{{"known length", mediaBody}, {"unknown length", mediaChunked}} {
		t.Run(st.name+" exactly at the limit", func(t *testing.T) {
			want := mediaBytes(limit)
			u, _ := mediaServer(t, st.step(want))
			m, err := (&generation.Fetcher{Guard: guardFor(t, u), MaxBytes: limit, SleepFunc: noSleep}).Fetch(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Body.Close()
			got, err := io.ReadAll(m.Body)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, %v; want %d bytes", len(got), err, limit)
			}
		})
	}
}

func TestFetchRejectsURL(t *testing.T) {
	for _, raw := range []string{
		"",
		"ftp://cdn.example/a.mp3?token=" + mediaSecret,
		"file:///etc/passwd",
		"/media/a.mp3?token=" + mediaSecret,
		"cdn.example/a.mp3",
		"http:///a.mp3?token=" + mediaSecret,
		"https://cdn.example/%zz?token=" + mediaSecret,
		"mailto:someone@example.com",
	} {
		t.Run(raw, func(t *testing.T) {
			f := &generation.Fetcher{Client: &http.Client{Transport: failTransport{t}}, SleepFunc: noSleep}
			_, err := f.Fetch(context.Background(), raw)
			if !fault.Is(err, fault.InvalidInput) || faultDetail(err, "field") != "url" {
				t.Fatalf("err = %v, want INVALID_INPUT on url", err)
			}
			checkNoSecret(t, err)
		})
	}
}

// failTransport fails a test that sends any request.
type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.t.Error("unexpected request")
	return nil, errors.New("unexpected request")
}

func TestFetchStopsOnCancel(t *testing.T) {
	t.Run("cancelled while backing off", func(t *testing.T) {
		u, hits := mediaServer(t, mediaStatus(500))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := &generation.Fetcher{Guard: guardFor(t, u), SleepFunc: func(ctx context.Context, _ time.Duration) error {
			cancel()
			return ctx.Err()
		}}
		_, err := f.Fetch(ctx, u)
		if !errors.Is(err, context.Canceled) || !fault.Is(err, fault.ProviderUnavailable) || faultDetail(err, "reason") != "cancelled" {
			t.Fatalf("err = %v", err)
		}
		if hits.Load() != 1 {
			t.Errorf("%d GETs after cancel, want 1", hits.Load())
		}
		checkNoSecret(t, err)
	})
	t.Run("default sleep honors the deadline", func(t *testing.T) {
		u, hits := mediaServer(t, mediaStatus(404))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := (&generation.Fetcher{Guard: guardFor(t, u), Backoff: time.Hour}).Fetch(ctx, u)
		if !errors.Is(err, context.DeadlineExceeded) || !fault.Is(err, fault.ProviderTimeout) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Fetch took %v after the deadline", d)
		}
		if hits.Load() != 1 {
			t.Errorf("%d GETs, want 1", hits.Load())
		}
		checkNoSecret(t, err)
	})
	t.Run("already cancelled", func(t *testing.T) {
		u, hits := mediaServer(t, mediaBody([]byte("x")))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := (&generation.Fetcher{Guard: guardFor(t, u), SleepFunc: noSleep}).Fetch(ctx, u)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if hits.Load() != 0 {
			t.Errorf("%d GETs, want 0", hits.Load())
		}
	})
}

func TestFetchTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL + "/media/track.mp3?token=" + mediaSecret
	srv.Close() // connections are refused from now on
	_, err := (&generation.Fetcher{Guard: guardFor(t, u), Attempts: 2, SleepFunc: noSleep}).Fetch(context.Background(), u)
	if !fault.Is(err, fault.ProviderUnavailable) || faultDetail(err, "reason") != "media_unreachable" {
		t.Fatalf("err = %v", err)
	}
	if faultDetail(err, "status") != nil {
		t.Errorf("details.status = %v after a transport error", faultDetail(err, "status"))
	}
	if !strings.Contains(err.Error(), "/media/track.mp3") {
		t.Errorf("the cause should still name the path: %v", err)
	}
	checkNoSecret(t, err)

	// A transport error between answers still leaves a retry.
	var n atomic.Int64
	f := &generation.Fetcher{SleepFunc: noSleep, Client: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if n.Add(1) == 1 {
			return nil, errors.New("connection reset by peer")
		}
		return mediaResponse(200, -1, "audio"), nil
	})}}
	m, err := f.Fetch(context.Background(), "https://cdn.example/a.mp3?token="+mediaSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Body.Close()
	if b, _ := io.ReadAll(m.Body); string(b) != "audio" || m.Attempts != 2 {
		t.Errorf("got %q after %d attempts", b, m.Attempts)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trackedBody records whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func mediaResponse(code int, length int64, s string) *http.Response {
	return &http.Response{StatusCode: code, ContentLength: length, Header: http.Header{}, Body: &trackedBody{Reader: strings.NewReader(s)}}
}

func TestFetchClosesEveryOtherBody(t *testing.T) {
	answers := []*http.Response{
		mediaResponse(500, -1, "oops"),
		mediaResponse(403, 9, "forbidden"),
		mediaResponse(200, 0, ""),
		mediaResponse(200, -1, ""),
		mediaResponse(200, -1, "the audio"),
	}
	var n atomic.Int64
	f := &generation.Fetcher{Attempts: len(answers), SleepFunc: noSleep, Client: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return answers[n.Add(1)-1], nil
	})}}
	m, err := f.Fetch(context.Background(), "https://cdn.example/a.mp3")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range answers[:len(answers)-1] {
		if !r.Body.(*trackedBody).closed.Load() {
			t.Errorf("answer %d (status %d): body not closed", i, r.StatusCode)
		}
	}
	last := answers[len(answers)-1].Body.(*trackedBody)
	if last.closed.Load() {
		t.Fatal("the returned body was closed")
	}
	if b, _ := io.ReadAll(m.Body); string(b) != "the audio" {
		t.Errorf("body %q", b)
	}
	if err := m.Body.Close(); err != nil || !last.closed.Load() {
		t.Errorf("Media.Body.Close did not close the response body (%v)", err)
	}

	// A refused status and an oversized answer close theirs too.
	for _, r := range []*http.Response{mediaResponse(401, -1, "no"), mediaResponse(200, 1<<30, "big")} {
		f := &generation.Fetcher{SleepFunc: noSleep, Client: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return r, nil
		})}}
		if _, err := f.Fetch(context.Background(), "https://cdn.example/a.mp3"); err == nil {
			t.Fatalf("status %d: Fetch succeeded", r.StatusCode)
		}
		if !r.Body.(*trackedBody).closed.Load() {
			t.Errorf("status %d, length %d: body not closed", r.StatusCode, r.ContentLength)
		}
	}
}

// TestFetchRefusesNonPublicMedia: a media URL that names the platform's own
// network fails at once with INVALID_INPUT (details.reason from urlguard):
// no GET reaches it, nothing is retried, and the error hides the query.
func TestFetchRefusesNonPublicMedia(t *testing.T) {
	t.Run("loopback without an allowance", func(t *testing.T) {
		u, hits := mediaServer(t, mediaBody([]byte("audio")))
		var s sleepLog
		_, err := (&generation.Fetcher{SleepFunc: s.sleep}).Fetch(context.Background(), u)
		if !fault.Is(err, fault.InvalidInput) || faultDetail(err, "reason") != urlguard.ReasonPrivateAddress || faultDetail(err, "field") != "url" {
			t.Fatalf("err = %v (details %v)", err, faultDetail(err, "reason"))
		}
		if hits.Load() != 0 || len(s.d) != 0 {
			t.Errorf("%d GETs and %d waits, want none", hits.Load(), len(s.d))
		}
		checkNoSecret(t, err)
	})
	for _, raw := range []string{
		"http://169.254.169.254/latest/meta-data/iam?token=" + mediaSecret,
		"http://10.0.0.1/media/a.mp3?token=" + mediaSecret,
		"http://[::ffff:127.0.0.1]/a.mp3?token=" + mediaSecret,
		"http://2130706433/a.mp3?token=" + mediaSecret,
		"http://metadata.google.internal/computeMetadata/v1/?token=" + mediaSecret,
		"https://user:pw@cdn.example/a.mp3?token=" + mediaSecret,
	} {
		t.Run(raw, func(t *testing.T) {
			f := &generation.Fetcher{SleepFunc: noSleep}
			_, err := f.Fetch(context.Background(), raw)
			if !fault.Is(err, fault.InvalidInput) || faultDetail(err, "field") != "url" || faultDetail(err, "reason") == nil {
				t.Fatalf("err = %v, want INVALID_INPUT on url with a reason", err)
			}
			checkNoSecret(t, err)
		})
	}
	t.Run("redirect to another loopback server", func(t *testing.T) {
		target, targetHits := mediaServer(t, mediaBody([]byte("private")))
		u, hits := mediaServer(t, func(w http.ResponseWriter) {
			w.Header().Set("Location", target)
			w.WriteHeader(http.StatusFound)
		})
		var s sleepLog
		_, err := (&generation.Fetcher{Guard: guardFor(t, u), SleepFunc: s.sleep}).Fetch(context.Background(), u)
		if !fault.Is(err, fault.InvalidInput) || faultDetail(err, "reason") != urlguard.ReasonPrivateAddress {
			t.Fatalf("err = %v", err)
		}
		if faultDetail(err, "attempts") != 1 || hits.Load() != 1 || targetHits.Load() != 0 || len(s.d) != 0 {
			t.Errorf("attempts %v, GETs %d, target GETs %d, waits %d; want 1, 1, 0, 0",
				faultDetail(err, "attempts"), hits.Load(), targetHits.Load(), len(s.d))
		}
		if got := faultDetail(err, "url"); !strings.HasSuffix(fmt.Sprint(got), "/media/track.mp3") {
			t.Errorf("details.url = %v", got)
		}
		checkNoSecret(t, err)
	})
}

// TestFetchRefusesRedirectsToNonPublicAddresses: a media server the guard
// lets through (a loopback test server, allowed by its exact address)
// answers with a redirect to the platform's own network. Fetch refuses the
// hop with INVALID_INPUT (details.reason from urlguard) after one GET, never
// retried, whether it sends through the guard's client or through a client
// that is set: no request reaches the redirect target. With the guard's
// client the target's address is judged before dialing; with a client that
// is set, whose transport here records every request it is asked to send,
// the guard judges the hop before that transport sees it.
func TestFetchRefusesRedirectsToNonPublicAddresses(t *testing.T) {
	target, targetHits := mediaServer(t, mediaBody([]byte("private")))
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	targetPort := tu.Port()
	for _, tc := range []struct{ name, location string }{
		{"loopback on another port", target},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/iam/security-credentials/?token=" + mediaSecret},
		{"private range", "http://10.0.0.1/media/a.mp3?token=" + mediaSecret},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + targetPort + "/media/track.mp3?token=" + mediaSecret},
		{"localhost name", "http://localhost:" + targetPort + "/media/track.mp3?token=" + mediaSecret},
	} {
		for _, set := range []bool{false, true} {
			name := tc.name + " via the guard's client"
			if set {
				name = tc.name + " via a client that is set"
			}
			t.Run(name, func(t *testing.T) {
				before := targetHits.Load()
				u, hits := mediaServer(t, func(w http.ResponseWriter) {
					w.Header().Set("Location", tc.location)
					w.WriteHeader(http.StatusFound)
				})
				f := &generation.Fetcher{Guard: guardFor(t, u), SleepFunc: noSleep}
				var (
					mu   sync.Mutex
					sent []string
				)
				if set {
					f.Client = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						mu.Lock()
						sent = append(sent, r.URL.Host)
						mu.Unlock()
						return http.DefaultTransport.RoundTrip(r)
					})}
				}
				_, err := f.Fetch(context.Background(), u)
				if !fault.Is(err, fault.InvalidInput) || faultDetail(err, "field") != "url" || faultDetail(err, "reason") == nil {
					t.Fatalf("err = %v, want INVALID_INPUT on url with a reason", err)
				}
				if hits.Load() != 1 || targetHits.Load() != before || faultDetail(err, "attempts") != 1 {
					t.Errorf("GETs %d, target GETs %d, attempts %v; want 1, 0, 1", hits.Load(), targetHits.Load()-before, faultDetail(err, "attempts"))
				}
				if set && (len(sent) != 1 || !strings.HasPrefix(u, "http://"+sent[0]+"/")) {
					t.Errorf("the client was asked to send to %v, want only the media server", sent)
				}
				checkNoSecret(t, err)
			})
		}
	}
}
