package realtime

import (
	"context"
	"errors"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Conn is one client connection's state on its hub: its subscriptions and
// its bounded queue of encoded messages waiting to be written. The
// transport writes what Messages yields and closes the connection when
// Done is closed (Dropped says with which close code).
type Conn struct {
	hub       *Hub
	principal *access.Principal
	queue     chan []byte
	done      chan struct{}
	recheck   chan struct{}

	// Guarded by hub.mu.
	subs   map[string]*sub
	closed bool
	code   int
}

// sub is one subscription of a connection.
type sub struct {
	conn    *Conn
	channel Channel
	filter  Filter
	// last is the position of the last event the subscription was handed
	// (or, before any, where it starts): it is handed only events after
	// it, so none twice.
	last Position
	// replaying is set while the subscription reads its past events from
	// the store; the hub hands it nothing meanwhile.
	replaying bool
}

// Principal returns the principal the connection was opened for.
func (c *Conn) Principal() *access.Principal { return c.principal }

// Messages yields the encoded messages to write, in order.
func (c *Conn) Messages() <-chan []byte { return c.queue }

// Done is closed when the hub dropped the connection (Dropped) or it was
// closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Dropped returns the close code the hub dropped the connection with
// (CloseSlowConsumer), or 0.
func (c *Conn) Dropped() int {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	return c.code
}

// Recheck is signalled when an event may have changed the connection's
// authority (its API key changed, a member of its workspace changed): the
// transport re-evaluates the credential and each subscription.
func (c *Conn) Recheck() <-chan struct{} { return c.recheck }

func (c *Conn) signalRecheck() {
	select {
	case c.recheck <- struct{}{}:
	default:
	}
}

// offer queues b without waiting; a full queue drops the connection as a
// slow consumer. The caller holds hub.mu.
func (c *Conn) offer(b []byte) {
	if c.closed {
		return
	}
	select {
	case c.queue <- b:
	default:
		c.closeLocked(CloseSlowConsumer)
	}
}

// Send queues m, waiting while the queue is full until ctx ends or the
// connection closes: replies and replayed events pace themselves to the
// client's reading, while live events never wait (a full queue drops the
// connection).
func (c *Conn) Send(ctx context.Context, m ServerMessage) error {
	return c.send(ctx, m.Encode())
}

func (c *Conn) send(ctx context.Context, b []byte) error {
	select {
	case <-c.done:
		return errClosed
	default:
	}
	select {
	case c.queue <- b:
		return nil
	case <-c.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errClosed is returned by calls on a closed connection.
var errClosed = errors.New("realtime: the connection is closed")

// Close unregisters the connection and ends its subscriptions. It is safe
// to call more than once.
func (c *Conn) Close() {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	c.closeLocked(0)
}

// closeLocked closes c with code (0: by the transport). The caller holds
// hub.mu.
func (c *Conn) closeLocked(code int) {
	if c.closed {
		return
	}
	c.closed, c.code = true, code
	for _, s := range c.subs {
		m, k := c.hub.index(s.filter)
		remove(m, k, s)
	}
	c.subs = map[string]*sub{}
	h, p := c.hub, c.principal
	delete(h.conns, c)
	remove(h.byWorkspace, workspaceKey(p.TenantID, p.WorkspaceID), c)
	if p.KeyID != "" {
		remove(h.byKey, p.KeyID, c)
	}
	close(c.done)
}

// Subscriptions returns the channels the connection is subscribed to.
func (c *Conn) Subscriptions() []Channel {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	out := make([]Channel, 0, len(c.subs))
	for _, s := range c.subs {
		out = append(out, s.channel)
	}
	return out
}

// Subscribe subscribes the connection to ch, whose events f selects (the
// caller authorized ch for the connection's principal and chose f), and
// queues subscribed. Then:
//   - with after (an event id), the events f selects after that event are
//     replayed from the store, then live ones follow;
//   - without after, a record's channel (f.AggregateID set) replays the
//     record's events so far, then live ones follow; the workspace
//     channel starts with the next event.
//
// The hand-over from replay to live misses nothing and repeats nothing:
// every event is handed to the subscription once, in feed order. A
// subscription to a channel the connection already holds replaces it.
// An after that names no settled event of the principal's environment
// is INVALID_INPUT (details.field after); past MaxSubscriptions,
// INVALID_INPUT with details.limit. Replay waits while the queue is full.
func (c *Conn) Subscribe(ctx context.Context, ch Channel, f Filter, after string) error {
	const op = "realtime.Subscribe"
	h := c.hub
	select {
	case <-h.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	var start Position
	if after != "" {
		p, err := h.cfg.ReadFunc().RealtimePosition(ctx, f.Environment, after)
		if fault.Is(err, fault.NotFound) {
			return fault.Invalid(op, "after", "after names no event of the stream; subscribe without it and read the record's state.").
				With("after", clip(after))
		}
		if err != nil {
			return fault.Wrap(op, err)
		}
		start = p
	}
	name := ch.String()
	s := &sub{conn: c, channel: ch, filter: f, replaying: after != "" || f.AggregateID != ""}
	h.mu.Lock()
	if c.closed {
		h.mu.Unlock()
		return errClosed
	}
	old, had := c.subs[name]
	if !had && len(c.subs) >= h.cfg.MaxSubscriptions {
		h.mu.Unlock()
		return fault.Invalid(op, "channel", "The connection holds as many subscriptions as it may; unsubscribe from one first.").
			With("limit", h.cfg.MaxSubscriptions)
	}
	if had {
		m, k := h.index(old.filter)
		remove(m, k, old)
	}
	if s.replaying {
		s.last = start
	} else {
		s.last = h.cursor
	}
	c.subs[name] = s
	m, k := h.index(f)
	add(m, k, s)
	h.mu.Unlock()

	if err := c.Send(ctx, ServerMessage{Type: TypeSubscribed, Channel: name}); err != nil {
		return err
	}
	if !s.replaying {
		return nil
	}
	return c.replay(ctx, s)
}

// replay hands s its events from the store, up to the hub's cursor, then
// makes it live. The store is read through the cursor as it stood; if
// the hub moved on meanwhile, the rest is read too, until the cursor
// stands still at the moment s goes live under the hub's lock, so the hub
// hands s exactly the events after it.
func (c *Conn) replay(ctx context.Context, s *sub) error {
	h := c.hub
	for {
		h.mu.Lock()
		until, last, current := h.cursor, s.last, c.subs[s.channel.String()] == s
		h.mu.Unlock()
		if !current {
			return nil // unsubscribed or replaced meanwhile
		}
		for last.Less(until) {
			es, err := h.cfg.ReadFunc().RealtimeRead(ctx, s.filter.params(last, until, h.cfg.BatchSize))
			if err != nil {
				return fault.Wrap("realtime.replay", err)
			}
			for _, e := range es {
				if s.filter.Match(e.Event) {
					ev := e.Event
					if err := c.Send(ctx, ServerMessage{Type: TypeEvent, Channel: s.channel.String(), ID: ev.ID, Event: &ev}); err != nil {
						return err
					}
				}
				last = e.Position
			}
			if len(es) < h.cfg.BatchSize {
				last = until // nothing more s selects through until
			}
		}
		h.mu.Lock()
		s.last = maxPosition(s.last, last)
		if h.cursor == until {
			s.replaying = false
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
	}
}

// Unsubscribe ends the subscription to ch and reports whether there was
// one.
func (c *Conn) Unsubscribe(ch Channel) bool {
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := c.subs[ch.String()]
	if !ok {
		return false
	}
	delete(c.subs, ch.String())
	m, k := h.index(s.filter)
	remove(m, k, s)
	return true
}
