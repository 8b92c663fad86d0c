package simmodel

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
)

// Host is a simulator's loopback server: its listener, mux, control
// routes, request log and background work.
type Host struct {
	// URL is the server's root URL, http://127.0.0.1:port.
	URL string
	// Mux serves the simulator's routes.
	Mux *http.ServeMux
	// Control mounts routes under /_sim behind the API key.
	Control *simctl.Control
	// Events is the request log.
	Events *simctl.Events
	// Redact names the request headers whose values the request log
	// replaces with "[redacted]": the API key's header, when the control
	// key is another key, so that holding the control key does not reveal
	// the API key. Set it before Serve.
	Redact []string

	ln  net.Listener
	srv *http.Server
	run *simctl.Runner

	mu     sync.Mutex
	closed bool
	ids    map[string]int
}

// NewHost listens on addr (empty means 127.0.0.1:0; it must be loopback)
// and mounts the request log's routes; refuse answers a control request
// without key in the simulator's error shape.
func NewHost(name, addr string, clock simctl.Clock, key string, refuse func(http.ResponseWriter, *http.Request, error)) (*Host, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		return nil, fmt.Errorf("%s: Addr must be a loopback address", name)
	}
	mux := http.NewServeMux()
	ctl, err := simctl.NewControl(mux, simctl.ControlConfig{Key: key, RefuseFunc: refuse})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen: %w", name, err)
	}
	h := &Host{URL: "http://" + ln.Addr().String(), Mux: mux, Control: ctl, ln: ln,
		Events: simctl.NewEvents(simctl.EventsConfig{Clock: clock}),
		run:    simctl.NewRunner(simctl.RunnerConfig{Clock: clock}), ids: map[string]int{}}
	h.Events.Mount(ctl)
	return h, nil
}

// Serve starts serving once the routes are mounted.
func (h *Host) Serve() {
	h.srv = &http.Server{Handler: h.logRequests(h.Mux), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return h.run.Context() }}
	h.run.Go(func(context.Context) { _ = h.srv.Serve(h.ln) })
}

// Close stops the server: waits in progress end, then handlers, then the
// background work.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	h.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	if err != nil {
		err = h.srv.Close()
	}
	h.run.Wait()
	return err
}

// Wait waits d of real time (d <= 0: until interrupted) and reports
// whether it lasted: the request's end or Close interrupt it.
func (h *Host) Wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-ctx.Done():
		return false
	case <-h.run.Done():
		return false
	}
}

// NextID returns prefix and the next number of that prefix, zero-padded to
// six digits: "chatcmpl-000001".
func (h *Host) NextID(prefix string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids[prefix]++
	return fmt.Sprintf("%s%06d", prefix, h.ids[prefix])
}

// NextIDs returns the next n ids of prefix (see NextID), nil for none.
func (h *Host) NextIDs(prefix string, n int) []string {
	var ids []string
	for range n {
		ids = append(ids, h.NextID(prefix))
	}
	return ids
}

// Reset empties the request log and starts every id sequence again.
func (h *Host) Reset() {
	h.Events.Reset()
	h.mu.Lock()
	h.ids = map[string]int{}
	h.mu.Unlock()
}

// maxLoggedBody is how much of a request's body the log keeps.
const maxLoggedBody = 64 << 10

// logRequests records every API request (not the control routes) in the
// request log as its answer starts, before the client can read any of it,
// so that a test that got an answer finds its request logged; a request
// that was never answered is recorded when its handler returns.
func (h *Host) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == simctl.Prefix || strings.HasPrefix(r.URL.Path, simctl.Prefix+"/") {
			next.ServeHTTP(w, r)
			return
		}
		var body []byte
		if r.Body != nil {
			b, err := io.ReadAll(io.LimitReader(r.Body, maxLoggedBody+1))
			body = b
			rest := io.Reader(r.Body)
			if err != nil || len(b) <= maxLoggedBody {
				rest = bytes.NewReader(nil)
			}
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), rest))
			if len(body) > maxLoggedBody {
				body = body[:maxLoggedBody]
			}
		}
		header := r.Header.Clone()
		for _, k := range h.Redact {
			if header.Get(k) != "" {
				header.Set(k, "[redacted]")
			}
		}
		lw := &logWriter{ResponseWriter: w, log: func(status int) {
			h.Events.Record(simctl.Event{Kind: simctl.KindRequest, Name: r.Method + " " + r.URL.RequestURI(), Status: status,
				Header: header, Body: body})
		}}
		defer lw.record(0)
		next.ServeHTTP(lw, r)
	})
}

// logWriter records its request once, at the first status written.
type logWriter struct {
	http.ResponseWriter
	log  func(status int)
	done bool
}

func (w *logWriter) record(status int) {
	if !w.done {
		w.done = true
		w.log(status)
	}
}

// WriteHeader implements http.ResponseWriter.
func (w *logWriter) WriteHeader(code int) {
	w.record(code)
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *logWriter) Write(b []byte) (int, error) {
	w.record(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (Flush).
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Request is an API request the simulator answered.
type Request struct {
	// Method and Path say what was asked.
	Method, Path string
	// Status is the status answered; 0 when the request got no answer.
	Status int
	// Header is what the client sent.
	Header http.Header
	// Body is the request's body (up to 64 KiB).
	Body []byte
}

// Requests lists the API requests answered since the last reset, oldest
// first.
func (h *Host) Requests() []Request {
	var out []Request
	for _, ev := range h.Events.List(simctl.KindRequest) {
		method, path, _ := strings.Cut(ev.Name, " ")
		out = append(out, Request{Method: method, Path: path, Status: ev.Status, Header: ev.Header, Body: ev.Body})
	}
	return out
}

// SSE writes server-sent events and flushes each.
type SSE struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// StartSSE answers 200 with an event stream and extra headers.
func StartSSE(w http.ResponseWriter, h http.Header) *SSE {
	for k, v := range h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &SSE{w: w, rc: http.NewResponseController(w)}
	_ = s.rc.Flush()
	return s
}

// Event writes one event (name may be empty) and flushes it.
func (s *SSE) Event(name, data string) error {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: " + data + "\n\n")
	return s.Raw(b.String())
}

// Comment writes a ":" keep-alive line.
func (s *SSE) Comment(text string) error { return s.Raw(": " + text + "\n\n") }

// Raw writes text as is and flushes it.
func (s *SSE) Raw(text string) error {
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	return s.rc.Flush()
}

// ErrAbort is panicked by Abort.
var ErrAbort = http.ErrAbortHandler

// Abort breaks the connection mid-answer: the client sees an unexpected
// end of the body.
func Abort() { panic(ErrAbort) }
