package simctl

import (
	"slices"
	"sync"
	"testing"
)

func TestLogKeepsTheNewestWithinItsBound(t *testing.T) {
	l := NewLog[int](3)
	if _, ok := l.Last(); ok {
		t.Fatal("an empty log has a last entry")
	}
	for i := 1; i <= 5; i++ {
		if seq := l.Append(i * 10); seq != uint64(i) {
			t.Fatalf("append %d: seq %d", i, seq)
		}
	}
	if got := l.Snapshot(); !slices.Equal(got, []int{30, 40, 50}) {
		t.Fatalf("snapshot = %v", got)
	}
	if last, _ := l.Last(); last != 50 || l.Len() != 3 || l.Dropped() != 2 {
		t.Fatalf("last %d, len %d, dropped %d", last, l.Len(), l.Dropped())
	}
	// A snapshot is a copy.
	s := l.Snapshot()
	s[0] = -1
	if l.Snapshot()[0] != 30 {
		t.Fatal("a snapshot shares the log's memory")
	}
	l.Reset()
	if l.Len() != 0 || l.Dropped() != 0 || len(l.Snapshot()) != 0 {
		t.Fatalf("after reset: len %d, dropped %d", l.Len(), l.Dropped())
	}
	if seq := l.Append(60); seq != 6 {
		t.Fatalf("the sequence restarted at %d after reset", seq)
	}
	if got := l.Snapshot(); !slices.Equal(got, []int{60}) {
		t.Fatalf("after reset and append: %v", got)
	}
}

func TestLogZeroValueUsesTheDefaultLimit(t *testing.T) {
	var l Log[string]
	for range DefaultLimit + 7 {
		l.Append("x")
	}
	if l.Len() != DefaultLimit || l.Dropped() != 7 || l.Limit() != DefaultLimit {
		t.Fatalf("len %d, dropped %d", l.Len(), l.Dropped())
	}
}

func TestLogConcurrentAppendsKeepOneOrder(t *testing.T) {
	l := NewLog[uint64](500)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l.Append(0)
				_ = l.Snapshot()
			}
		}()
	}
	wg.Wait()
	if l.Len() != 500 || l.Dropped() != 8*200-500 {
		t.Fatalf("len %d, dropped %d", l.Len(), l.Dropped())
	}
}
