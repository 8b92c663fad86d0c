package swap

import (
	"testing"
	"time"
)

func TestBreakerOpensPausesProbesAndCloses(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := &Breaker{Threshold: 3, Cooldown: 10 * time.Second, MaxPause: 25 * time.Second}
	for i := range 2 {
		b.Failure(t0)
		if !b.Allow(t0) {
			t.Fatalf("refused after %d failures, below the threshold", i+1)
		}
	}
	b.Failure(t0)
	if b.Allow(t0.Add(9 * time.Second)) {
		t.Fatal("allowed a call during the pause")
	}
	st := b.State(t0.Add(time.Second))
	if st.State != BreakerOpen || st.ConsecutiveFailures != 3 || !st.RetryAt.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("state = %+v", st)
	}
	// The pause ended: one probe, and only one, goes through.
	at := t0.Add(10 * time.Second)
	if b.State(at).State != BreakerHalfOpen {
		t.Fatalf("state at retryAt = %s, want half_open", b.State(at).State)
	}
	if !b.Allow(at) || b.Allow(at) {
		t.Fatal("half-open breaker must let exactly one probe through")
	}
	// The probe fails: paused twice as long.
	b.Failure(at)
	if got := b.State(at).RetryAt; !got.Equal(at.Add(20 * time.Second)) {
		t.Fatalf("retryAt after a failed probe = %v, want +20s", got)
	}
	at = at.Add(20 * time.Second)
	if !b.Allow(at) {
		t.Fatal("second probe refused")
	}
	b.Failure(at)
	if got := b.State(at).RetryAt; !got.Equal(at.Add(25 * time.Second)) {
		t.Fatalf("retryAt = %v, want the 25s cap", got)
	}
	at = at.Add(25 * time.Second)
	if !b.Allow(at) {
		t.Fatal("third probe refused")
	}
	b.Success()
	if st := b.State(at); st.State != BreakerClosed || st.ConsecutiveFailures != 0 || st.RetryAt != nil {
		t.Fatalf("state after a good probe = %+v", st)
	}
	if !b.Allow(at) {
		t.Fatal("closed breaker refused")
	}
}

func TestBreakerSuccessResetsTheCount(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := &Breaker{Threshold: 2}
	b.Failure(t0)
	b.Success()
	b.Failure(t0)
	if !b.Allow(t0) {
		t.Fatal("failures separated by a success opened the breaker")
	}
}
