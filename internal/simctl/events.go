package simctl

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Kind classifies an Event.
type Kind string

// The kinds of events a simulator records.
const (
	// KindRequest is an API request the simulator answered: Name is the
	// method and request URI, Status the status answered, Header and Body
	// what the client sent.
	KindRequest Kind = "request"
	// KindDelivery is one attempt to deliver a callback or webhook: Name is
	// its type, Subject the task or object, ID the delivery's id if it has
	// one, Header and Body what was sent, Status the receiver's answer (0
	// with Err on a transport error).
	KindDelivery Kind = "delivery"
	// KindState is a state change: Name is the new state, Subject the task
	// or object that moved.
	KindState Kind = "state"
)

// Event is one entry of a simulator's event log.
type Event struct {
	// Seq numbers the events of one log in order, from 1; it is never
	// reused, also across Reset.
	Seq uint64
	// At is the simulator's clock when the event was recorded.
	At time.Time
	// Kind classifies the event.
	Kind Kind
	// Name says what happened (see the kinds).
	Name string
	// Subject is the task, clip or object the event concerns, if any.
	Subject string
	// ID is a further identifier, if any: a delivery's id on the wire (a
	// webhook id), or the part of Subject a state change concerns (a clip
	// of a task).
	ID string
	// Status is an HTTP status: answered for a request, received for a
	// delivery.
	Status int
	// Err describes a failure (a delivery's transport error).
	Err string
	// Header is the request's or the delivery's header.
	Header http.Header
	// Body is the request's or the delivery's body (a request's up to the
	// log's BodyLimit).
	Body []byte
}

// MarshalJSON renders the event for the events route: a body that is JSON
// is embedded as is, any other body as a string.
func (e Event) MarshalJSON() ([]byte, error) {
	type out struct {
		Seq     uint64          `json:"seq"`
		At      time.Time       `json:"at"`
		Kind    Kind            `json:"kind"`
		Name    string          `json:"name"`
		Subject string          `json:"subject,omitempty"`
		ID      string          `json:"id,omitempty"`
		Status  int             `json:"status,omitempty"`
		Err     string          `json:"error,omitempty"`
		Header  http.Header     `json:"header,omitempty"`
		Body    json.RawMessage `json:"body,omitempty"`
	}
	o := out{Seq: e.Seq, At: e.At, Kind: e.Kind, Name: e.Name, Subject: e.Subject, ID: e.ID,
		Status: e.Status, Err: e.Err, Header: e.Header}
	switch {
	case len(e.Body) == 0:
	case json.Valid(e.Body):
		o.Body = json.RawMessage(e.Body)
	default:
		s, err := json.Marshal(string(e.Body))
		if err != nil {
			return nil, err
		}
		o.Body = s
	}
	return json.Marshal(o)
}

// DefaultBodyLimit is how many bytes of a request's body Events keeps when
// its BodyLimit is not set.
const DefaultBodyLimit = 64 << 10

// EventsConfig configures an Events log.
type EventsConfig struct {
	// Clock stamps events. Nil means the wall clock.
	Clock Clock
	// Limit is how many events the log keeps; zero means DefaultLimit.
	Limit int
	// BodyLimit is how many bytes of a request's body Middleware keeps;
	// zero means DefaultBodyLimit, negative none.
	BodyLimit int
}

// Events is a simulator's event log: requests, deliveries and state
// changes, in the order they were recorded. It is safe for concurrent use.
type Events struct {
	clock     Clock
	log       *Log[Event]
	bodyLimit int
}

// NewEvents returns an empty event log.
func NewEvents(cfg EventsConfig) *Events {
	e := &Events{clock: cfg.Clock, log: NewLog[Event](cfg.Limit), bodyLimit: cfg.BodyLimit}
	if e.clock == nil {
		e.clock = WallClock{}
	}
	if e.bodyLimit == 0 {
		e.bodyLimit = DefaultBodyLimit
	}
	return e
}

// Record appends ev, stamped with the next sequence number and, when ev.At
// is zero, the clock's time, and returns it as recorded.
func (e *Events) Record(ev Event) Event {
	if ev.At.IsZero() {
		ev.At = e.clock.Now()
	}
	e.log.appendFunc(func(seq uint64) Event {
		ev.Seq = seq
		return ev
	})
	return ev
}

// List returns the events held, oldest first; with kinds, only events of
// those kinds.
func (e *Events) List(kinds ...Kind) []Event {
	all := e.log.Snapshot()
	if len(kinds) == 0 {
		return all
	}
	out := all[:0]
	for _, ev := range all {
		for _, k := range kinds {
			if ev.Kind == k {
				out = append(out, ev)
				break
			}
		}
	}
	return out
}

// Len is how many events the log holds.
func (e *Events) Len() int { return e.log.Len() }

// Dropped is how many events the bound dropped since the last Reset.
func (e *Events) Dropped() uint64 { return e.log.Dropped() }

// Reset forgets every event held.
func (e *Events) Reset() { e.log.Reset() }

// Middleware records every request next answers as a KindRequest event,
// once its answer is complete, except the control routes under Prefix. It
// keeps up to the log's BodyLimit bytes of the body, read before next runs
// (next reads the whole body all the same). The response writer it hands
// next still flushes, for streaming answers.
func (e *Events) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Prefix || strings.HasPrefix(r.URL.Path, Prefix+"/") {
			next.ServeHTTP(w, r)
			return
		}
		var body []byte
		if e.bodyLimit > 0 && r.Body != nil && r.Body != http.NoBody {
			var buf bytes.Buffer
			_, err := io.CopyN(&buf, r.Body, int64(e.bodyLimit))
			body = buf.Bytes()
			rest := io.Reader(r.Body)
			if err != nil { // the body ended (or failed) within the limit
				rest = &errReader{err: err}
			}
			r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(body), rest), Closer: r.Body}
		}
		rec := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		e.Record(Event{Kind: KindRequest, Name: r.Method + " " + r.URL.RequestURI(), Status: rec.status(),
			Header: r.Header.Clone(), Body: body})
	})
}

// errReader ends a body with the error its first read met: io.EOF for a
// body shorter than the limit.
type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

type readCloser struct {
	io.Reader
	io.Closer
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what was written so far, when the underlying writer can.
func (w *statusWriter) Flush() {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// Mount serves the log on c:
//
//	GET  /_sim/events         {"object":"list","data":[event...],"dropped":n}, oldest first;
//	                          filters kind, subject and after (a sequence number)
//	POST /_sim/events/reset   forgets every event: {"reset":n} events
func (e *Events) Mount(c *Control) {
	c.HandleFunc("GET /events", e.serveList)
	c.HandleFunc("POST /events/reset", func(w http.ResponseWriter, r *http.Request) {
		n := e.Len()
		e.Reset()
		WriteJSON(w, http.StatusOK, map[string]any{"reset": n})
	})
}

func (e *Events) serveList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after uint64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			WriteError(w, http.StatusBadRequest, "after must be a sequence number")
			return
		}
		after = n
	}
	var kinds []Kind
	for _, k := range q["kind"] {
		kinds = append(kinds, Kind(k))
	}
	subject := q.Get("subject")
	out := []Event{}
	for _, ev := range e.List(kinds...) {
		if ev.Seq > after && (subject == "" || ev.Subject == subject) {
			out = append(out, ev)
		}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": out, "dropped": e.Dropped()})
}
