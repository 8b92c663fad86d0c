package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
)

// EventStreamType is the media type of a server-sent event stream.
const EventStreamType = "text/event-stream"

// EventStream writes a success answer as server-sent events
// (text/event-stream), for an OwnUnitOfWork route that documents its
// events (Route.EventStream). Nothing is written until the first Send:
// until then the handler may still fail with an error envelope. Once an
// event was sent the answer is the stream: the gateway writes nothing
// after the handler returns, and logs a handler error instead of
// answering it (the handler sends its own error event first).
type EventStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	header  func() http.Header
	reqID   string
	maxAge  time.Duration
	started bool
	failed  error
}

// Events returns the call's event stream; d bounds how long the stream
// may stay open (the connection's write deadline is set to d from the
// first event). Only for OwnUnitOfWork routes with Route.EventStream set:
// other calls get an error.
func (c *Call[T]) Events(d time.Duration) (*EventStream, error) {
	if c.events == nil {
		return nil, fault.Wrap("transport.Events", fmt.Errorf("the route does not stream events"))
	}
	c.events.maxAge = d
	return c.events, nil
}

// Started reports whether an event was sent: the answer is the stream.
func (e *EventStream) Started() bool { return e != nil && e.started }

// Send writes one event named event with data as its JSON payload, and
// flushes it. The first Send writes the status (200) and the headers
// (the call's own, X-Request-Id, Content-Type text/event-stream,
// Cache-Control no-store). An error means the client is gone; every later
// Send returns it.
func (e *EventStream) Send(event string, data any) error {
	if e.failed != nil {
		return e.failed
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fault.Wrap("transport.EventStream.Send", err)
	}
	if !e.started {
		h := e.w.Header()
		for k, vs := range e.header() {
			h[k] = vs
		}
		h.Set("Content-Type", EventStreamType)
		h.Set("Cache-Control", "private, no-store")
		h.Set("X-Accel-Buffering", "no")
		h.Set("X-Request-Id", e.reqID)
		if e.maxAge > 0 {
			_ = e.rc.SetWriteDeadline(time.Now().Add(e.maxAge)) // http.ErrNotSupported: the server's deadline holds
		}
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	var sb strings.Builder
	sb.WriteString("event: ")
	sb.WriteString(event)
	sb.WriteString("\ndata: ")
	sb.Write(b)
	sb.WriteString("\n\n")
	if _, err := e.w.Write([]byte(sb.String())); err != nil {
		e.failed = fault.Wrap("transport.EventStream.Send", err)
		return e.failed
	}
	if err := e.rc.Flush(); err != nil {
		e.failed = fault.Wrap("transport.EventStream.Send", err)
		return e.failed
	}
	return nil
}
