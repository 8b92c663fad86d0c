package simctl

import (
	"sync"
	"sync/atomic"
)

// AnyKey is the key of a Script step that matches every key.
const AnyKey = ""

// Script is a simulator's scripted faults: steps added per key (an
// endpoint or a method) and used up by the calls they apply to, in the
// order they were added. "Fail twice, then succeed" is Add(key, f, 2). The
// zero value is an empty script; it is safe for concurrent use, and a
// script with no step costs one atomic load per call.
type Script[F any] struct {
	mu    sync.Mutex
	steps []*scriptStep[F]
	n     atomic.Int64 // len(steps), read without mu
}

type scriptStep[F any] struct {
	key  string
	f    F
	left int // calls left; < 0 means until dropped
}

// Add appends a step: f applies to the next times calls of key (every key
// for AnyKey); times <= 0 means every call until Drop or Clear.
func (s *Script[F]) Add(key string, f F, times int) {
	st := &scriptStep[F]{key: key, f: f, left: times}
	if times <= 0 {
		st.left = -1
	}
	s.mu.Lock()
	s.steps = append(s.steps, st)
	s.n.Store(int64(len(s.steps)))
	s.mu.Unlock()
}

// Set replaces the steps added for key by one step, as Add does.
func (s *Script[F]) Set(key string, f F, times int) {
	s.mu.Lock()
	s.dropLocked(key)
	s.mu.Unlock()
	s.Add(key, f, times)
}

// Drop removes the steps added for key (only those added for AnyKey when
// key is AnyKey).
func (s *Script[F]) Drop(key string) {
	s.mu.Lock()
	s.dropLocked(key)
	s.mu.Unlock()
}

func (s *Script[F]) dropLocked(key string) {
	kept := s.steps[:0]
	for _, st := range s.steps {
		if st.key != key {
			kept = append(kept, st)
		}
	}
	clear(s.steps[len(kept):])
	s.steps = kept
	s.n.Store(int64(len(kept)))
}

// Clear removes every step.
func (s *Script[F]) Clear() {
	s.mu.Lock()
	s.steps = nil
	s.n.Store(0)
	s.mu.Unlock()
}

// Len is how many steps are left.
func (s *Script[F]) Len() int { return int(s.n.Load()) }

// Next uses the first step that applies to a call of key and returns its
// value; false when no step applies.
func (s *Script[F]) Next(key string) (F, bool) {
	var got F
	found := false
	s.Take(key, func(f F) bool {
		got, found = f, true
		return false
	})
	return got, found
}

// Take visits, in order, the steps that apply to a call of key, using up
// each one visited, until visit returns false: a call can meet a delay
// step and then the error step after it.
func (s *Script[F]) Take(key string, visit func(F) bool) {
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.steps[:0]
	more := true
	for _, st := range s.steps {
		if more && (st.key == AnyKey || st.key == key) {
			more = visit(st.f)
			if st.left > 0 {
				st.left--
				if st.left == 0 {
					continue
				}
			}
		}
		kept = append(kept, st)
	}
	clear(s.steps[len(kept):])
	s.steps = kept
	s.n.Store(int64(len(kept)))
}
