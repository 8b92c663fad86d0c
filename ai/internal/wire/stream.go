package wire

import (
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// Decoder is an adapter's stream dialect.
type Decoder interface {
	// Message handles one server-sent event, reporting its content to acc.
	// done means the event ended the stream cleanly; a failure ends it.
	Message(m Message, acc *Acc) (done bool, f *ai.Failure)
	// EOF is called when the body ends before done: nil accepts the
	// stream as complete, a failure reports it broken.
	EOF(acc *Acc) *ai.Failure
}

// Acc assembles a streamed answer and queues its events.
type Acc struct {
	resp     ai.Response
	text     strings.Builder
	calls    map[int]*callParts
	queue    []ai.Event
	started  bool
	finish   ai.Finish
	hasUsage bool
}

type callParts struct {
	id, name string
	args     strings.Builder
}

// SetID records the completion's id, once.
func (a *Acc) SetID(id string) {
	if a.resp.ID == "" {
		a.resp.ID = id
	}
}

// SetModel records the executed model; the latest non-empty one wins.
func (a *Acc) SetModel(m string) {
	if m != "" {
		a.resp.Model = m
	}
}

// Text reports a piece of text.
func (a *Acc) Text(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.queue = append(a.queue, ai.Event{Kind: ai.EventText, Text: s})
	a.started = true
}

// ToolCall reports a piece of tool call d.Index.
func (a *Acc) ToolCall(d ai.ToolCallDelta) {
	if a.calls == nil {
		a.calls = map[int]*callParts{}
	}
	c := a.calls[d.Index]
	if c == nil {
		c = &callParts{}
		a.calls[d.Index] = c
	}
	if c.id == "" {
		c.id = d.ID
	}
	if c.name == "" {
		c.name = d.Name
	}
	c.args.WriteString(d.Arguments)
	a.queue = append(a.queue, ai.Event{Kind: ai.EventToolCall, ToolCall: d})
	a.started = true
}

// ToolCallCount is how many tool calls have begun.
func (a *Acc) ToolCallCount() int { return len(a.calls) }

// SetFinish records how the answer ended.
func (a *Acc) SetFinish(f ai.Finish) { a.finish = f }

// Finish is the finish recorded so far.
func (a *Acc) Finish() ai.Finish { return a.finish }

// SetUsage records the provider's usage report (the latest wins).
func (a *Acc) SetUsage(u ai.Usage) { a.resp.Usage, a.hasUsage = u, true }

// HasUsage reports whether usage came.
func (a *Acc) HasUsage() bool { return a.hasUsage }

// Usage is the usage recorded so far.
func (a *Acc) Usage() ai.Usage { return a.resp.Usage }

// Started reports whether any event was produced.
func (a *Acc) Started() bool { return a.started }

// Response is the answer assembled so far.
func (a *Acc) Response() ai.Response {
	r := a.resp
	r.Content = a.text.String()
	r.UsageReported = a.hasUsage
	if !a.hasUsage {
		r.Usage = ai.Usage{}
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		c := a.calls[i]
		r.ToolCalls = append(r.ToolCalls, ai.ToolCall{ID: c.id, Name: c.name, Arguments: Arguments(c.args.String())})
	}
	r.Finish = FinishWithCalls(a.finish, len(r.ToolCalls))
	return r
}

// FinishWithCalls reads a completed answer that carries tool calls as
// FinishToolCalls (some servers report "stop" with tool calls).
func FinishWithCalls(f ai.Finish, calls int) ai.Finish {
	if f == ai.FinishCompleted && calls > 0 {
		return ai.FinishToolCalls
	}
	return f
}

// errClosed is Next's error after Close.
var errClosed = errors.New("stream closed")

// Stream implements ai.Stream over an SSE answer.
type Stream struct {
	op    string
	c     *Client
	a     *Answer
	sse   *SSE
	dec   Decoder
	acc   Acc
	queue []ai.Event
	done  bool
	err   error
}

// NewStream reads answer a as a stream of dec's dialect.
func (c *Client) NewStream(op string, a *Answer, dec Decoder, acc Acc) *Stream {
	s := &Stream{op: op, c: c, a: a, dec: dec, acc: acc}
	s.acc.resp.UpstreamRequestID = a.RequestID
	s.sse = NewSSE(urlguard.LimitReader(a.Resp.Body, c.MaxBody, op), c.MaxEvent, a.Watch.Touch)
	return s
}

// First reads until the first event (or the end), so that a failure
// before any output is returned by the adapter's Stream call.
func (s *Stream) First() error {
	for len(s.queue) == 0 && s.err == nil && !s.done {
		s.step()
	}
	if s.err != nil && !errors.Is(s.err, io.EOF) {
		return s.err
	}
	return nil
}

// Next implements ai.Stream.
func (s *Stream) Next() (ai.Event, error) {
	for {
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue = s.queue[1:]
			return ev, nil
		}
		if s.err != nil {
			return ai.Event{}, s.err
		}
		if s.done {
			s.err = io.EOF
			s.release()
			continue
		}
		s.step()
	}
}

// step reads one message and queues what it yields.
func (s *Stream) step() {
	m, err := s.sse.Next()
	if err != nil {
		if errors.Is(err, io.EOF) && s.a.Watch.Expired() == "" && s.a.Watch.CallerErr() == nil {
			if f := s.dec.EOF(&s.acc); f != nil {
				s.fail(*f)
			} else {
				s.finish()
			}
			return
		}
		s.err = s.c.TransportErr(s.op, s.a.Watch, err, s.acc.Started(), s.a.RequestID)
		s.release()
		return
	}
	done, f := s.dec.Message(m, &s.acc)
	s.queue = append(s.queue, s.acc.queue...)
	s.acc.queue = s.acc.queue[:0]
	switch {
	case f != nil:
		s.fail(*f)
	case done:
		s.finish()
	}
}

func (s *Stream) finish() {
	r := s.acc.Response()
	s.queue = append(s.queue, ai.Event{Kind: ai.EventDone, Finish: r.Finish, Usage: r.Usage})
	s.done = true
	s.release() // nothing more is read: stop the deadlines now
}

func (s *Stream) fail(f ai.Failure) {
	f.RequestID = s.a.RequestID
	if s.acc.Started() {
		f.Class, f.Retryable = ai.ClassInterrupted, false
	}
	f.Cause = s.c.Redact.Err(f.Cause)
	s.err = f.Err(s.op)
	s.release()
}

func (s *Stream) release() {
	s.a.Watch.Stop()
	_ = s.a.Resp.Body.Close()
}

// Response implements ai.Stream.
func (s *Stream) Response() ai.Response { return s.acc.Response() }

// Close implements ai.Stream.
func (s *Stream) Close() error {
	if s.err == nil {
		s.err = fault.Wrap(s.op, errClosed)
	}
	s.queue = nil
	s.release()
	return nil
}
