package wire

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads a provider's retry hint from h, in this order:
// retry-after-ms (milliseconds), retry-after (seconds, fractional, or an
// HTTP date), then the rate-limit reset headers of an exhausted limit:
// x-ratelimit-reset-{requests,tokens} (durations such as "12ms" or "6m0s")
// and anthropic-ratelimit-*-reset (RFC 3339 times), the longest wait of
// those whose remaining count is 0 (or, when none is, of all given). It
// returns 0 when h holds no usable hint.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 && s < 1e9 {
				return time.Duration(s * float64(time.Second))
			}
		} else if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	var exhausted, any time.Duration
	for name, vals := range h {
		if len(vals) == 0 {
			continue
		}
		lname := strings.ToLower(name)
		var d time.Duration
		var remaining string
		switch {
		case strings.HasPrefix(lname, "x-ratelimit-reset-"):
			v, err := time.ParseDuration(strings.TrimSpace(vals[0]))
			if err != nil || v <= 0 {
				continue
			}
			d = v
			remaining = "x-ratelimit-remaining-" + strings.TrimPrefix(lname, "x-ratelimit-reset-")
		case strings.HasPrefix(lname, "anthropic-ratelimit-") && strings.HasSuffix(lname, "-reset"):
			t, err := time.Parse(time.RFC3339, strings.TrimSpace(vals[0]))
			if err != nil || !t.After(now) {
				continue
			}
			d = t.Sub(now)
			remaining = strings.TrimSuffix(lname, "-reset") + "-remaining"
		default:
			continue
		}
		any = max(any, d)
		if strings.TrimSpace(h.Get(remaining)) == "0" {
			exhausted = max(exhausted, d)
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return any
}
