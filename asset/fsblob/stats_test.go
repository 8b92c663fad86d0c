package fsblob_test

import "runtime"

// runtimeStats samples the allocator.
type runtimeStats struct{ totalAlloc uint64 }

func (s *runtimeStats) read() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.totalAlloc = m.TotalAlloc
}
