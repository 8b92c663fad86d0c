package simctl

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEveryStepsOnTheInjectedClock(t *testing.T) {
	clock := newManualClock()
	r := NewRunner(RunnerConfig{Clock: clock, Poll: time.Millisecond})
	defer r.Close()
	var steps atomic.Int32
	r.Every(time.Minute, func(context.Context) bool { return steps.Add(1) < 3 })
	time.Sleep(30 * time.Millisecond)
	if n := steps.Load(); n != 0 {
		t.Fatalf("%d steps before the clock moved", n)
	}
	clock.Add(59 * time.Second)
	time.Sleep(20 * time.Millisecond)
	if n := steps.Load(); n != 0 {
		t.Fatalf("%d steps before an interval passed", n)
	}
	for want := int32(1); want <= 3; want++ {
		clock.Add(time.Minute)
		eventually(t, "a step", func() bool { return steps.Load() == want })
	}
	clock.Add(time.Hour)
	time.Sleep(20 * time.Millisecond)
	if n := steps.Load(); n != 3 {
		t.Fatalf("%d steps after the step asked to stop", n)
	}
}

func TestEveryOnTheWallClock(t *testing.T) {
	r := NewRunner(RunnerConfig{})
	defer r.Close()
	var steps atomic.Int32
	start := time.Now()
	r.Every(10*time.Millisecond, func(context.Context) bool { return steps.Add(1) < 3 })
	eventually(t, "three steps", func() bool { return steps.Load() == 3 })
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("three steps of 10ms took %s", d)
	}
}

func TestCloseStopsEveryWithinASecond(t *testing.T) {
	r := NewRunner(RunnerConfig{})
	var entered, after atomic.Int32
	r.Every(time.Millisecond, func(ctx context.Context) bool {
		entered.Add(1)
		<-ctx.Done() // a delivery blocked until the simulator closes
		return true
	})
	r.Every(time.Millisecond, func(context.Context) bool {
		after.Add(1)
		return true
	})
	eventually(t, "a step under way", func() bool { return entered.Load() == 1 && after.Load() > 2 })
	start := time.Now()
	r.Close()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %s", d)
	}
	n := after.Load()
	time.Sleep(30 * time.Millisecond)
	if after.Load() != n || entered.Load() != 1 {
		t.Fatal("a step ran after Close returned")
	}
	if r.Go(func(context.Context) { t.Error("work ran on a closed runner") }) {
		t.Fatal("Go accepted work after Close")
	}
	stop := r.Every(time.Millisecond, func(context.Context) bool { t.Error("a step ran on a closed runner"); return true })
	stop()
	time.Sleep(10 * time.Millisecond)
}

func TestEveryStopEndsOneLoop(t *testing.T) {
	r := NewRunner(RunnerConfig{})
	defer r.Close()
	var a, b atomic.Int32
	stopA := r.Every(time.Millisecond, func(context.Context) bool { a.Add(1); return true })
	r.Every(time.Millisecond, func(context.Context) bool { b.Add(1); return true })
	eventually(t, "both loops", func() bool { return a.Load() > 0 && b.Load() > 0 })
	stopA()
	stopA()
	n, m := a.Load(), b.Load()
	eventually(t, "the other loop going on", func() bool { return b.Load() > m+2 })
	if a.Load() != n {
		t.Fatal("a stopped loop stepped")
	}
}

func TestSleepEndsOnStop(t *testing.T) {
	r := NewRunner(RunnerConfig{Clock: newManualClock()})
	if err := r.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sleep: %v", err)
	}
	if err := r.Sleep(ctx, 0); err != nil {
		t.Fatalf("a zero wait failed: %v", err)
	}
	done := make(chan error, 1)
	r.Go(func(ctx context.Context) { done <- r.Sleep(context.Background(), time.Hour) })
	time.Sleep(5 * time.Millisecond)
	start := time.Now()
	r.Close()
	if err := <-done; !errors.Is(err, ErrStopped) || time.Since(start) > time.Second {
		t.Fatalf("sleep at Close: %v after %s", err, time.Since(start))
	}
	if !r.Stopped() || r.Context().Err() == nil {
		t.Fatal("a closed runner is not stopped")
	}
}

func TestEveryOverrunIsFollowedByOneStepNotABurst(t *testing.T) {
	clock := newManualClock()
	r := NewRunner(RunnerConfig{Clock: clock, Poll: time.Millisecond})
	defer r.Close()
	var steps atomic.Int32
	r.Every(time.Minute, func(context.Context) bool {
		if steps.Add(1) == 1 {
			clock.Add(5 * time.Minute) // the first step overruns five intervals
		}
		return true
	})
	clock.Add(time.Minute)
	eventually(t, "the catch-up step", func() bool { return steps.Load() == 2 })
	time.Sleep(30 * time.Millisecond)
	if n := steps.Load(); n != 2 {
		t.Fatalf("%d steps after an overrun, want 2", n)
	}
	clock.Add(time.Minute)
	eventually(t, "the next step", func() bool { return steps.Load() == 3 })
}
