package simctl

import "sync"

// DefaultLimit is how many entries a Log keeps when its limit is not set.
const DefaultLimit = 10_000

// Log is an append-only, bounded, concurrency-safe record: it keeps the
// newest Limit entries in the order they were appended and counts the older
// ones it dropped. The zero value keeps DefaultLimit entries.
type Log[T any] struct {
	mu      sync.Mutex
	limit   int
	buf     []T // ring of up to limit entries
	head    int // index of the oldest entry in buf
	n       int // entries held
	seq     uint64
	dropped uint64
}

// NewLog returns a log that keeps the newest limit entries; limit <= 0
// means DefaultLimit.
func NewLog[T any](limit int) *Log[T] {
	return &Log[T]{limit: limit}
}

// Limit is how many entries the log keeps.
func (l *Log[T]) Limit() int {
	if l.limit <= 0 {
		return DefaultLimit
	}
	return l.limit
}

// Append adds v after every entry appended before it, dropping the oldest
// entry when the log is full, and returns v's sequence number: 1 for the
// first entry ever appended, counting on across Reset.
func (l *Log[T]) Append(v T) uint64 {
	return l.appendFunc(func(uint64) T { return v })
}

// appendFunc appends the entry build makes from its sequence number, under
// the lock, so that sequence numbers follow the log's order.
func (l *Log[T]) appendFunc(build func(seq uint64) T) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	limit := l.Limit()
	l.seq++
	v := build(l.seq)
	if l.n < limit { // not full yet: head is 0 and buf holds n entries
		l.buf = append(l.buf, v)
		l.n++
		return l.seq
	}
	l.buf[l.head] = v
	l.head = (l.head + 1) % limit
	l.dropped++
	return l.seq
}

// Snapshot returns the entries held, oldest first, in a new slice.
func (l *Log[T]) Snapshot() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]T, l.n)
	for i := range out {
		out[i] = l.buf[(l.head+i)%len(l.buf)]
	}
	return out
}

// Last returns the newest entry held, if any.
func (l *Log[T]) Last() (T, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		var zero T
		return zero, false
	}
	return l.buf[(l.head+l.n-1)%len(l.buf)], true
}

// Len is how many entries the log holds.
func (l *Log[T]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Dropped is how many entries the bound dropped since the log was made or
// last reset.
func (l *Log[T]) Dropped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Reset forgets every entry held and the dropped count; sequence numbers
// go on from where they were, so an entry's number is never reused.
func (l *Log[T]) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf, l.head, l.n, l.dropped = nil, 0, 0, 0
}
