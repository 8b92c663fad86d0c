package jobs_test

import (
	"math"
	"testing"
	"time"

	"github.com/creatormusic/platform/jobs"
)

func TestBackoffBounds(t *testing.T) {
	jitters := []float64{0, 0.25, 0.5, 0.999, 1, -1, 2, math.NaN()}
	prev := time.Duration(0)
	for attempt := -1; attempt <= 200; attempt++ {
		ceiling := jobs.MaxBackoff
		if a := max(attempt, 1); a < 12 {
			ceiling = min(time.Duration(1<<a)*time.Second, jobs.MaxBackoff)
		}
		for _, j := range jitters {
			d := jobs.Backoff(attempt, j)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("Backoff(%d, %v) = %v, want in [%v, %v]", attempt, j, d, ceiling/2, ceiling)
			}
		}
		if low := jobs.Backoff(attempt, 0); low < prev {
			t.Fatalf("Backoff(%d, 0) = %v decreased from %v", attempt, low, prev)
		} else {
			prev = low
		}
	}
	for _, c := range []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0, time.Second}, {1, 1, 2 * time.Second}, {3, 0.5, 6 * time.Second},
		{11, 1, 2048 * time.Second}, {12, 1, time.Hour}, {64, 0, 30 * time.Minute}, {1 << 30, 1, time.Hour},
	} {
		if got := jobs.Backoff(c.attempt, c.jitter); got != c.want {
			t.Errorf("Backoff(%d, %v) = %v, want %v", c.attempt, c.jitter, got, c.want)
		}
	}
}

func TestStates(t *testing.T) {
	seen := map[jobs.State]bool{}
	for _, s := range jobs.States() {
		if s == "" || seen[s] {
			t.Fatalf("States() has empty or duplicate %q", s)
		}
		seen[s] = true
	}
	if len(seen) != 6 {
		t.Fatalf("States() = %d states, want 6", len(seen))
	}
	for s, final := range map[jobs.State]bool{jobs.Available: false, jobs.Running: false, jobs.Failed: false,
		jobs.Succeeded: true, jobs.Discarded: true, jobs.Cancelled: true} {
		if s.Final() != final {
			t.Errorf("%s.Final() = %v", s, !final)
		}
	}
}
