package id

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// A Sequence's identifiers sort in the order made, within one millisecond
// and across milliseconds, carry the caller's time, and are well formed.
func TestSequenceSortsInOrderMade(t *testing.T) {
	var s Sequence
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var prev string
	for i := 0; i < 3000; i++ {
		at := t0.Add(time.Duration(i/1000) * time.Millisecond)
		got := s.Next("evt_", at)
		if !Valid("evt_", got) {
			t.Fatalf("%q is not a valid identifier", got)
		}
		u, err := ulid.ParseStrict(strings.ToUpper(strings.TrimPrefix(got, "evt_")))
		if err != nil || !ulid.Time(u.Time()).Equal(at) {
			t.Fatalf("%q: time %v, %v; want %v", got, ulid.Time(u.Time()), err, at)
		}
		if got <= prev {
			t.Fatalf("identifier %d %q does not sort after %q", i, got, prev)
		}
		prev = got
	}
	// Two sequences of one millisecond do not collide.
	var a, b Sequence
	if a.Next("x_", t0) == b.Next("x_", t0) {
		t.Fatal("two sequences made the same identifier")
	}
}

// The increment carries into the high bits, and past 80 bits it is
// ulid's overflow error, never a smaller identifier.
func TestMonotonicCarriesAndOverflows(t *testing.T) {
	m := monotonic{ms: 7, hi: 1, lo: ^uint64(0), primed: true}
	p := make([]byte, 10)
	if err := m.MonotonicRead(7, p); err != nil {
		t.Fatal(err)
	}
	if m.hi != 2 || m.lo == ^uint64(0) {
		t.Fatalf("after a carry hi=%d lo=%d", m.hi, m.lo)
	}
	m = monotonic{ms: 7, hi: 0xffff, lo: ^uint64(0), primed: true}
	if err := m.MonotonicRead(7, p); !errors.Is(err, ulid.ErrMonotonicOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	// A new millisecond starts from fresh bits.
	if err := m.MonotonicRead(8, p); err != nil || m.ms != 8 {
		t.Fatalf("new millisecond: %v, ms %d", err, m.ms)
	}
}
