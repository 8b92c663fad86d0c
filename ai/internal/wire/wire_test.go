package wire

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"milliseconds first", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{"fractional seconds", http.Header{"Retry-After": {"2.5"}}, 2500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(7 * time.Second).Format(http.TimeFormat)}}, 7 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"exhausted requests reset", http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"6m0s"},
			"X-Ratelimit-Remaining-Tokens": {"900"}, "X-Ratelimit-Reset-Tokens": {"12ms"}}, 6 * time.Minute},
		{"no limit exhausted: the longest reset", http.Header{"X-Ratelimit-Reset-Requests": {"1s"}, "X-Ratelimit-Reset-Tokens": {"20ms"}}, time.Second},
		{"anthropic reset time", http.Header{"Anthropic-Ratelimit-Tokens-Remaining": {"0"},
			"Anthropic-Ratelimit-Tokens-Reset": {now.Add(30 * time.Second).Format(time.RFC3339)}}, 30 * time.Second},
		{"garbage", http.Header{"Retry-After": {"soon"}, "Retry-After-Ms": {"-4"}, "X-Ratelimit-Reset-Requests": {"later"}}, 0},
	}
	for _, tc := range cases {
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSSEReader(t *testing.T) {
	in := ": keep-alive\r\n\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\ndata: line one\ndata: line two\n\n:comment\ndata:no-space\n\ndata: [DONE]"
	lines := 0
	s := NewSSE(strings.NewReader(in), 1<<10, func() { lines++ })
	want := []Message{{Event: "message_start", Data: `{"a":1}`}, {Data: "line one\nline two"}, {Data: "no-space"}, {Data: "[DONE]"}}
	for i, w := range want {
		m, err := s.Next()
		if err != nil || m != w {
			t.Fatalf("message %d = %+v, %v; want %+v", i, m, err, w)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last = %v", err)
	}
	if lines < 10 {
		t.Fatalf("activity counted %d lines", lines)
	}
	big := NewSSE(strings.NewReader("data: "+strings.Repeat("x", 5000)+"\n\n"), 1<<10, nil)
	if _, err := big.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("oversized event = %v", err)
	}
	many := NewSSE(strings.NewReader(strings.Repeat("data: xxxxxxxx\n", 200)+"\n"), 1<<10, nil)
	if _, err := many.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("oversized multi-line event = %v", err)
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("sk-secret", "https://gw.example.com:8443/v1")
	got := r.Text(`Post "https://gw.example.com:8443/v1/chat/completions": key sk-secret refused by gw.example.com`)
	for _, leak := range []string{"sk-secret", "gw.example.com"} {
		if strings.Contains(got, leak) {
			t.Fatalf("%q leaks %q", got, leak)
		}
	}
	cause := errors.New("key sk-secret")
	if err := r.Err(cause); err.Error() != "key [redacted]" || !errors.Is(err, cause) {
		t.Fatalf("Err = %v", err)
	}
	if NewRedactor("", "").Text("nothing to hide") != "nothing to hide" {
		t.Fatal("an empty redactor changed the text")
	}
}

func TestArgumentsAreAlwaysJSON(t *testing.T) {
	for in, want := range map[string]string{"": "{}", "  ": "{}", `{"a":1}`: `{"a":1}`, `{"a":`: `"{\"a\":"`, `[1]`: `[1]`} {
		if got := string(Arguments(in)); got != want {
			t.Errorf("Arguments(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLenientCountsAndText(t *testing.T) {
	var c struct {
		A, B, C, D Count
	}
	if err := json.Unmarshal([]byte(`{"A":12,"B":"7","C":null,"D":3.9}`), &c); err != nil || c.A != 12 || c.B != 7 || c.C != 0 || c.D != 3 {
		t.Fatalf("counts = %+v, %v", c, err)
	}
	if Text([]byte(`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`)) != "ab" || Text([]byte(`null`)) != "" || Text([]byte(`"x"`)) != "x" {
		t.Fatal("content parts")
	}
	if CodeText([]byte(`402`)) != "402" || CodeText([]byte(`"insufficient_quota"`)) != "insufficient_quota" || CodeText(nil) != "" {
		t.Fatal("codes")
	}
}

func TestByStatusCoversEveryStatus(t *testing.T) {
	cases := []struct {
		status int
		code   fault.Code
		class  ai.ErrorClass
		retry  bool
		reason string
	}{
		{402, fault.ProviderCreditsExhausted, ai.ClassCredits, false, ""},
		{429, fault.RateLimited, ai.ClassRateLimit, true, ""},
		{401, fault.ProviderUnavailable, ai.ClassAuth, false, ""},
		{403, fault.ProviderUnavailable, ai.ClassAuth, false, ""},
		{404, fault.ProviderUnavailable, ai.ClassRequest, false, "not_found"},
		{408, fault.ProviderUnavailable, ai.ClassServer, true, ""},
		{409, fault.ProviderUnavailable, ai.ClassServer, true, ""},
		{503, fault.ProviderUnavailable, ai.ClassServer, true, ""},
		{400, fault.InvalidInput, ai.ClassRequest, false, ""},
		{413, fault.InvalidInput, ai.ClassRequest, false, ""},
		{422, fault.InvalidInput, ai.ClassRequest, false, ""},
		{418, fault.ProviderUnavailable, ai.ClassServer, false, "unexpected_status"},
	}
	cause := errors.New("refused")
	for _, tc := range cases {
		f := ByStatus(tc.status, cause)
		if f.Code != tc.code || f.Class != tc.class || f.Retryable != tc.retry || f.Reason != tc.reason || f.Cause != cause {
			t.Errorf("%d: %+v", tc.status, f)
		}
	}
}
