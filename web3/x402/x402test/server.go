// Package x402test is a loopback x402 facilitator for tests and the
// example host: the facilitator API (web3.md §1.7) on 127.0.0.1 over an
// x402.Facilitator, normally an x402.Local over a chain/chaintest cluster,
// so what it settles lands on that cluster. It also deploys a payment
// asset on a cluster (Deploy). Production binaries never import it.
//
// # Wire
//
//	GET  /supported   {kinds, extensions, signers}
//	POST /verify      {"x402Version":2,"paymentPayload":{...},"paymentRequirements":{...}} -> VerifyResponse
//	POST /settle      same body -> SettleResponse
//
// A refusal is answered 200 with isValid false or success false, as the
// reference's TypeScript facilitator does. A settle whose outcome the
// facilitator could not establish is 500 {"error":"unexpected_settle_error:
// <message>"}, as the reference's Go facilitator answers errors. Like a
// real facilitator it keeps a duplicate guard: a transaction settled, or
// being settled, within DuplicateWindow (120 seconds by default) is
// refused with duplicate_settlement, whoever sends it.
//
// # Faults
//
// Inject queues a Fault for a path (or every path), used up in order:
// Delay holds the answer (a client with a shorter deadline times out);
// Status with Body replaces it (a 500 {"error": ...}, a 429, a malformed
// answer); Forward, with Status, lets the call reach the facilitator
// first, so a settlement happens and its answer is lost. Calls counts
// requests per path.
package x402test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/web3/x402"
)

// The paths the simulator serves, the keys of Fault.Path and Calls.
const (
	PathSupported = "/supported"
	PathVerify    = "/verify"
	PathSettle    = "/settle"
)

// DefaultDuplicateWindow is how long a settled transaction is refused as a
// duplicate, about twice a blockhash's life.
const DefaultDuplicateWindow = 120 * time.Second

// Config configures a Server.
type Config struct {
	// Facilitator answers the calls. Required.
	Facilitator x402.Facilitator
	// Clock tells the duplicate guard's time; nil means the wall clock.
	Clock simctl.Clock
	// DuplicateWindow is the duplicate guard's window; zero means
	// DefaultDuplicateWindow.
	DuplicateWindow time.Duration
}

// Fault is a misbehaviour injected into the answers to a path. Delay
// shapes an answer; Status replaces it.
type Fault struct {
	// Path is PathSupported, PathVerify or PathSettle; "" means every
	// path.
	Path string
	// Times is how many calls it applies to; 0 means until ClearFaults.
	Times int
	// Delay holds the answer this long first; it honours the client's
	// disconnect.
	Delay time.Duration
	// Status, when non-zero, answers this status with Body (sent as is).
	Status int
	// Body is the replacing answer's body.
	Body string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Forward lets the call reach the facilitator before the fault
	// answers: the settlement happens, its answer is lost.
	Forward bool
}

// Server is a loopback facilitator.
type Server struct {
	cfg    Config
	srv    *http.Server
	ln     net.Listener
	faults simctl.Script[Fault]

	mu    sync.Mutex
	calls map[string]int
	seen  map[string]time.Time // transaction payload -> when it was first settled
}

// request is the body of /verify and /settle.
type request struct {
	X402Version         int                 `json:"x402Version"`
	PaymentPayload      x402.PaymentPayload `json:"paymentPayload"`
	PaymentRequirements x402.Requirements   `json:"paymentRequirements"`
}

// New starts a Server on a loopback port.
func New(cfg Config) (*Server, error) {
	if cfg.Facilitator == nil {
		return nil, errors.New("x402test: Config.Facilitator is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = simctl.WallClock{}
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = DefaultDuplicateWindow
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, calls: map[string]int{}, seen: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathSupported, s.supported)
	mux.HandleFunc("POST "+PathVerify, s.verify)
	mux.HandleFunc("POST "+PathSettle, s.settle)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Inject queues f (see the package doc).
func (s *Server) Inject(f Fault) { s.faults.Add(f.Path, f, f.Times) }

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() { s.faults.Clear() }

// Calls counts the requests to path.
func (s *Server) Calls(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// fault applies the faults of a call of path: it waits out their delays
// and returns the replacing one, if any.
func (s *Server) fault(r *http.Request, path string) (Fault, bool, error) {
	s.mu.Lock()
	s.calls[path]++
	s.mu.Unlock()
	var out Fault
	found := false
	var delay time.Duration
	s.faults.Take(path, func(f Fault) bool {
		delay += f.Delay
		if f.Status != 0 {
			out, found = f, true
			return false
		}
		return true
	})
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return Fault{}, false, r.Context().Err()
		case <-t.C:
		}
	}
	return out, found, nil
}

// answer writes a fault's replacing answer.
func answer(w http.ResponseWriter, f Fault) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, f.Body)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// failure answers the Go reference's error shape.
func failure(w http.ResponseWriter, status int, reason string, err error) {
	writeJSON(w, status, map[string]string{"error": reason + ": " + err.Error()})
}

func (s *Server) supported(w http.ResponseWriter, r *http.Request) {
	f, replace, err := s.fault(r, PathSupported)
	if err != nil {
		return
	}
	if replace && !f.Forward {
		answer(w, f)
		return
	}
	sup, err := s.cfg.Facilitator.Supported(r.Context())
	if replace {
		answer(w, f)
		return
	}
	if err != nil {
		failure(w, http.StatusInternalServerError, "unexpected_error", err)
		return
	}
	writeJSON(w, http.StatusOK, sup)
}

// decode reads a /verify or /settle body.
func decode(w http.ResponseWriter, r *http.Request) (request, bool) {
	var in request
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	if err := dec.Decode(&in); err != nil || in.X402Version != x402.Version {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_payload: the body is not a version 2 request"})
		return request{}, false
	}
	return in, true
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	f, replace, err := s.fault(r, PathVerify)
	if err != nil {
		return
	}
	if replace && !f.Forward {
		answer(w, f)
		return
	}
	in, ok := decode(w, r)
	if !ok {
		return
	}
	vr, err := s.cfg.Facilitator.Verify(r.Context(), x402.VerifyRequest{Payload: in.PaymentPayload, Requirements: in.PaymentRequirements})
	if replace {
		answer(w, f)
		return
	}
	if err != nil {
		failure(w, http.StatusInternalServerError, "unexpected_verify_error", err)
		return
	}
	writeJSON(w, http.StatusOK, vr)
}

func (s *Server) settle(w http.ResponseWriter, r *http.Request) {
	f, replace, err := s.fault(r, PathSettle)
	if err != nil {
		return
	}
	if replace && !f.Forward {
		answer(w, f)
		return
	}
	in, ok := decode(w, r)
	if !ok {
		return
	}
	key := string(bytes.TrimSpace(in.PaymentPayload.Payload))
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	for k, at := range s.seen {
		if now.Sub(at) > s.cfg.DuplicateWindow {
			delete(s.seen, k)
		}
	}
	_, dup := s.seen[key]
	if !dup {
		s.seen[key] = now
	}
	s.mu.Unlock()
	if dup {
		writeJSON(w, http.StatusOK, x402.SettleResponse{ErrorReason: x402.ReasonDuplicate, Network: in.PaymentRequirements.Network,
			ErrorMessage: "the transaction was settled within the duplicate window"})
		return
	}
	// The settlement runs to its end even when the client stops waiting,
	// as a real facilitator's does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Minute)
	defer cancel()
	resp, err := s.cfg.Facilitator.Settle(ctx, x402.SettleRequest{Payload: in.PaymentPayload, Requirements: in.PaymentRequirements})
	if replace {
		answer(w, f)
		return
	}
	if err != nil {
		failure(w, http.StatusInternalServerError, "unexpected_settle_error", err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
