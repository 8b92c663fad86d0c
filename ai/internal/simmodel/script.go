package simmodel

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
)

// Fault is an injected failure of a simulator whose fault kinds are K;
// what each kind does is the simulator's (see its package doc).
type Fault[K ~string] struct {
	// Kind is the fault.
	Kind K `json:"kind"`
	// Status is the HTTP status of a fault that takes one (a server
	// fault's defaults to 500).
	Status int `json:"status,omitempty"`
	// RetryAfter is a rate limit's hint (default 2 s).
	RetryAfter time.Duration `json:"-"`
	// Hint picks the rate-limit headers sent.
	Hint string `json:"hint,omitempty"`
	// NoRetry adds x-should-retry: false.
	NoRetry bool `json:"noRetry,omitempty"`
	// Delay is the wait of stall, slow and no_headers.
	Delay time.Duration `json:"-"`
	// After is how many stream pieces come before a mid-stream fault
	// (drop, malformed, the error in a 200 answer, stall, filter).
	After int `json:"after,omitempty"`
	// Abort makes a drop break the connection.
	Abort bool `json:"abort,omitempty"`
}

// RetryDelay is the rate limit's hint: RetryAfter, or 2 s when unset.
func (f Fault[K]) RetryDelay() time.Duration {
	if f.RetryAfter <= 0 {
		return 2 * time.Second
	}
	return f.RetryAfter
}

// ParseFault reads "kind" or "kind-status".
func ParseFault[K ~string](v string) Fault[K] {
	kind, status, _ := strings.Cut(v, "-")
	f := Fault[K]{Kind: K(kind)}
	if n, err := strconv.Atoi(status); err == nil {
		f.Status = n
	}
	return f
}

// Scripts is what a simulator's tests script and read back: faults (of
// kinds K) and replies per model id, and the record of what was answered
// (C). The zero value is empty; it is safe for concurrent use.
type Scripts[K ~string, C any] struct {
	faults  simctl.Script[Fault[K]]
	replies simctl.Script[Reply]

	mu       sync.Mutex
	answered []C
}

// Fail scripts f for the next times requests naming model ("" means any
// model); times <= 0 means every request until Reset.
func (s *Scripts[K, C]) Fail(model string, f Fault[K], times int) { s.faults.Add(model, f, times) }

// Reply scripts r as the answer to the next times requests naming model
// ("" means any model); times <= 0 means every request until Reset.
func (s *Scripts[K, C]) Reply(model string, r Reply, times int) { s.replies.Add(model, r, times) }

// Fault picks a request's fault: the X-Sim-Fault header, a magic model id
// "fault-<kind>", then the script.
func (s *Scripts[K, C]) Fault(r *http.Request, model string) (Fault[K], bool) {
	if v := r.Header.Get("X-Sim-Fault"); v != "" {
		return ParseFault[K](v), true
	}
	if rest, ok := strings.CutPrefix(model, "fault-"); ok {
		return ParseFault[K](rest), true
	}
	return s.faults.Next(model)
}

// Answer runs the canned model on in with the next reply scripted for
// model; it returns that reply, nil when none was scripted.
func (s *Scripts[K, C]) Answer(model string, in Input) (Output, *Reply) {
	reply, scripted := s.replies.Next(model)
	var rp *Reply
	if scripted {
		rp = &reply
	}
	return Answer(in, rp), rp
}

// Record adds c to what was answered.
func (s *Scripts[K, C]) Record(c C) {
	s.mu.Lock()
	s.answered = append(s.answered, c)
	s.mu.Unlock()
}

// Answered lists what was answered since the last reset, oldest first.
func (s *Scripts[K, C]) Answered() []C {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]C(nil), s.answered...)
}

// Reset forgets the scripts and what was answered.
func (s *Scripts[K, C]) Reset() {
	s.faults.Clear()
	s.replies.Clear()
	s.mu.Lock()
	s.answered = nil
	s.mu.Unlock()
}

// Mount mounts the control routes: POST /reset (reset, the whole
// simulator's), POST /faults and POST /replies (the scripts), and GET
// /completions (what was answered).
func (s *Scripts[K, C]) Mount(c *simctl.Control, reset func()) {
	c.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) {
		reset()
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"reset": true})
	})
	c.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Model string `json:"model"`
			Times int    `json:"times"`
			Fault struct {
				Fault[K]
				RetryAfterMs int64 `json:"retryAfterMs"`
				DelayMs      int64 `json:"delayMs"`
			} `json:"fault"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || in.Fault.Kind == "" {
			simctl.WriteError(w, http.StatusBadRequest, "the body must be {model, times, fault:{kind,...}}")
			return
		}
		f := in.Fault.Fault
		f.RetryAfter = time.Duration(in.Fault.RetryAfterMs) * time.Millisecond
		f.Delay = time.Duration(in.Fault.DelayMs) * time.Millisecond
		s.Fail(in.Model, f, in.Times)
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"scripted": true})
	})
	c.HandleFunc("POST /replies", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Model string `json:"model"`
			Times int    `json:"times"`
			Reply Reply  `json:"reply"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil {
			simctl.WriteError(w, http.StatusBadRequest, "the body must be {model, times, reply:{...}}")
			return
		}
		s.Reply(in.Model, in.Reply, in.Times)
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"scripted": true})
	})
	c.HandleFunc("GET /completions", func(w http.ResponseWriter, _ *http.Request) {
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.Answered()})
	})
}
