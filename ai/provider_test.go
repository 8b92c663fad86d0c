package ai

import (
	"errors"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
)

func TestFailureFillsTheDetailsTheRouterReads(t *testing.T) {
	cause := errors.New("HTTP 429 requests/rate_limit_exceeded: slow down")
	err := Failure{Code: fault.RateLimited, Class: ClassRateLimit, Status: 429, RetryAfter: 1500 * time.Millisecond,
		Retryable: true, RequestID: "req_1", Cause: cause}.Err("openai.Complete")
	wrapped := fault.Wrap("ai.Route", err)

	if !fault.Is(wrapped, fault.RateLimited) || ClassOf(wrapped) != ClassRateLimit || !RetryableOf(wrapped) {
		t.Fatalf("code %s, class %q, retryable %v", fault.CodeOf(wrapped), ClassOf(wrapped), RetryableOf(wrapped))
	}
	if d, ok := RetryAfterOf(wrapped); !ok || d != 1500*time.Millisecond {
		t.Fatalf("retry after = %v %v", d, ok)
	}
	code, msg, details := fault.Public(wrapped)
	if code != fault.RateLimited || msg != "The AI provider is rate limiting requests." {
		t.Fatalf("public = %s %q", code, msg)
	}
	want := map[string]any{DetailClass: "rate_limit", DetailRetryable: true, DetailStatus: 429,
		DetailRetryAfter: int64(2), DetailRetryAfterMs: int64(1500), DetailRequestID: "req_1"}
	if len(details) != len(want) {
		t.Fatalf("details = %v, want %v", details, want)
	}
	for k, v := range want {
		if details[k] != v {
			t.Fatalf("details[%s] = %v (%T), want %v", k, details[k], details[k], v)
		}
	}
	if !errors.Is(wrapped, cause) {
		t.Fatal("the cause is not reachable for logs")
	}
}

func TestFailureWithoutHintsOrClass(t *testing.T) {
	err := Failure{Code: fault.ProviderUnavailable, Class: ClassAuth}.Err("anthropic.Complete")
	if _, ok := RetryAfterOf(err); ok || RetryableOf(err) {
		t.Fatalf("details = %v", err.Details)
	}
	if _, ok := err.Details[DetailStatus]; ok {
		t.Fatalf("a status was invented: %v", err.Details)
	}
	if _, msg, _ := fault.Public(err); msg != "The AI provider is unavailable." {
		t.Fatalf("an auth failure must read as a plain outage, got %q", msg)
	}
	plain := fault.E("ai.Route", fault.InvalidInput, "bad")
	if ClassOf(plain) != "" || RetryableOf(plain) || ClassOf(nil) != "" {
		t.Fatal("a non-provider error has no class")
	}
}
