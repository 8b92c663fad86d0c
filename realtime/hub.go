package realtime

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Defaults of Config.
const (
	// DefaultPollInterval is how often a hub reads the outbox when no
	// local commit woke it: the delay, at most, before an event committed
	// on another host reaches this host's clients.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultBatchSize bounds one read of the outbox.
	DefaultBatchSize = 500
	// DefaultQueueSize is how many messages a connection may have waiting
	// to be written before it is dropped as a slow consumer.
	DefaultQueueSize = 256
	// DefaultMaxConnectionsPerKey bounds the open connections of one API
	// key on one host.
	DefaultMaxConnectionsPerKey = 16
	// DefaultMaxConnectionsPerWorkspace bounds the open connections of one
	// workspace (all its credentials together) on one host.
	DefaultMaxConnectionsPerWorkspace = 1000
	// DefaultMaxSubscriptions bounds the subscriptions of one connection.
	DefaultMaxSubscriptions = 100
)

// Config configures a Hub. Zero values take the defaults above.
type Config struct {
	// ReadFunc returns a read handle on the store. Required.
	ReadFunc func() Store
	// PollInterval is how often the hub reads the outbox without a wake.
	PollInterval time.Duration
	// BatchSize bounds one read of the outbox.
	BatchSize int
	// QueueSize is a connection's queue of unsent messages.
	QueueSize int
	// MaxConnectionsPerKey bounds one API key's connections on this host.
	MaxConnectionsPerKey int
	// MaxConnectionsPerWorkspace bounds one workspace's connections on
	// this host.
	MaxConnectionsPerWorkspace int
	// MaxSubscriptions bounds one connection's subscriptions.
	MaxSubscriptions int
	// Log receives read failures; nil discards them.
	Log *slog.Logger
}

// withDefaults returns c with its zero values set to the defaults.
func (c Config) withDefaults() Config {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	set(&c.BatchSize, DefaultBatchSize)
	set(&c.QueueSize, DefaultQueueSize)
	set(&c.MaxConnectionsPerKey, DefaultMaxConnectionsPerKey)
	set(&c.MaxConnectionsPerWorkspace, DefaultMaxConnectionsPerWorkspace)
	set(&c.MaxSubscriptions, DefaultMaxSubscriptions)
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Hub is one host's realtime feed: it reads the outbox in feed order
// (polling, and at once when Wake says a local unit of work committed
// events) and hands each event to the subscriptions it matches, and each
// change of authority to the connections it concerns. It is safe for
// concurrent use.
type Hub struct {
	cfg   Config
	wake  chan struct{}
	ready chan struct{}

	mu sync.Mutex
	// cursor is the position of the last event the hub dispatched: every
	// live subscription has been handed every matching event through it.
	cursor Position
	// conns holds the open connections; byKey and byWorkspace index them
	// for the connection limits and the authority triggers.
	conns       map[*Conn]struct{}
	byKey       map[string]map[*Conn]struct{}
	byWorkspace map[string]map[*Conn]struct{}
	// byRecord and byScope index the subscriptions: those of one record
	// by its id, the workspace channels by workspace and environment.
	byRecord map[string]map[*sub]struct{}
	byScope  map[string]map[*sub]struct{}
}

// New returns a hub; Run starts its feed.
func New(cfg Config) (*Hub, error) {
	if cfg.ReadFunc == nil {
		return nil, errors.New("realtime: Config.ReadFunc is required")
	}
	return &Hub{cfg: cfg.withDefaults(), wake: make(chan struct{}, 1), ready: make(chan struct{}),
		conns: map[*Conn]struct{}{}, byKey: map[string]map[*Conn]struct{}{}, byWorkspace: map[string]map[*Conn]struct{}{},
		byRecord: map[string]map[*sub]struct{}{}, byScope: map[string]map[*sub]struct{}{}}, nil
}

// Config returns the hub's configuration with its defaults applied.
func (h *Hub) Config() Config { return h.cfg }

// Wake makes the hub read the outbox now: a unit of work that wrote
// events has committed. It never blocks.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run reads the feed until ctx ends: first the head (the feed starts at
// the last settled event, so a new hub replays nothing), then every event
// after it, on each wake and every PollInterval. Subscriptions wait until
// the head is read. It returns when ctx ends.
func (h *Hub) Run(ctx context.Context) {
	for {
		head, err := h.cfg.ReadFunc().RealtimeHead(ctx)
		if err == nil {
			h.mu.Lock()
			h.cursor = head
			h.mu.Unlock()
			close(h.ready)
			break
		}
		h.cfg.Log.Error("realtime: read the feed's head", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.cfg.PollInterval):
		}
	}
	t := time.NewTicker(h.cfg.PollInterval)
	defer t.Stop()
	for {
		h.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-t.C:
		}
	}
}

// Ready is closed once the hub has read the feed's head.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// poll reads and dispatches the events after the cursor, a batch at a
// time, until it has read them all.
func (h *Hub) poll(ctx context.Context) {
	for ctx.Err() == nil {
		h.mu.Lock()
		after := h.cursor
		h.mu.Unlock()
		es, err := h.cfg.ReadFunc().RealtimeRead(ctx, ReadParams{After: after, Limit: h.cfg.BatchSize})
		if err != nil {
			if ctx.Err() == nil {
				h.cfg.Log.Error("realtime: read the feed", "err", err)
			}
			return
		}
		h.mu.Lock()
		for _, e := range es {
			h.dispatch(e)
			h.cursor = e.Position
		}
		h.mu.Unlock()
		if len(es) < h.cfg.BatchSize {
			return
		}
	}
}

// dispatch hands e to the live subscriptions it matches, as one message
// per channel, and signals the connections whose authority it may change.
// The caller holds h.mu.
func (h *Hub) dispatch(e Entry) {
	var frames map[string][]byte
	deliver := func(s *sub) {
		if s.replaying || !s.last.Less(e.Position) || !s.filter.Match(e.Event) {
			return
		}
		s.last = e.Position
		name := s.channel.String()
		b, ok := frames[name]
		if !ok {
			if frames == nil {
				frames = map[string][]byte{}
			}
			ev := e.Event
			b = ServerMessage{Type: TypeEvent, Channel: name, ID: ev.ID, Event: &ev}.Encode()
			frames[name] = b
		}
		s.conn.offer(b)
	}
	for s := range h.byRecord[e.Event.AggregateID] {
		deliver(s)
	}
	for s := range h.byScope[scopeKey(e.Event.TenantID, e.Event.WorkspaceID, e.Event.Environment)] {
		deliver(s)
	}
	h.authorityChanged(e)
}

// authorityChanged signals the connections whose authority e may have
// changed: an API key event (revoked, deleted, rotated, scopes updated)
// to the key's connections; a project member change to its workspace's.
// Changes that write no event (a session signed out, a workspace member
// removed) are found by the connections' periodic re-check.
func (h *Hub) authorityChanged(e Entry) {
	var conns map[*Conn]struct{}
	switch {
	case strings.HasPrefix(e.Event.Type, "api_key."):
		conns = h.byKey[e.Event.AggregateID]
	case e.Event.Type == "project.member_changed":
		conns = h.byWorkspace[workspaceKey(e.Event.TenantID, e.Event.WorkspaceID)]
	}
	for c := range conns {
		c.signalRecheck()
	}
}

func workspaceKey(tenant, workspace string) string { return tenant + "/" + workspace }

func scopeKey(tenant, workspace, env string) string { return tenant + "/" + workspace + "/" + env }

// Open registers a connection of p, within the connection limits: over
// MaxConnectionsPerKey for p's API key, or MaxConnectionsPerWorkspace for
// its workspace, it is RATE_LIMITED with details.limit
// maxRealtimeConnections and details.subject key or workspace. Close
// unregisters it.
func (h *Hub) Open(p *access.Principal) (*Conn, error) {
	const op = "realtime.Open"
	h.mu.Lock()
	defer h.mu.Unlock()
	ws := workspaceKey(p.TenantID, p.WorkspaceID)
	refuse := func(subject string, limit int) error {
		return fault.E(op, fault.RateLimited, "Too many realtime connections are open; close one first.").
			With("limit", "maxRealtimeConnections").With("subject", subject).With("max", limit)
	}
	if p.KeyID != "" && len(h.byKey[p.KeyID]) >= h.cfg.MaxConnectionsPerKey {
		return nil, refuse("key", h.cfg.MaxConnectionsPerKey)
	}
	if len(h.byWorkspace[ws]) >= h.cfg.MaxConnectionsPerWorkspace {
		return nil, refuse("workspace", h.cfg.MaxConnectionsPerWorkspace)
	}
	pc := *p
	c := &Conn{hub: h, principal: &pc, queue: make(chan []byte, h.cfg.QueueSize), done: make(chan struct{}),
		recheck: make(chan struct{}, 1), subs: map[string]*sub{}}
	h.conns[c] = struct{}{}
	add(h.byWorkspace, ws, c)
	if p.KeyID != "" {
		add(h.byKey, p.KeyID, c)
	}
	return c, nil
}

// Connections returns how many connections are open.
func (h *Hub) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// add puts v in the set m[k].
func add[V comparable](m map[string]map[V]struct{}, k string, v V) {
	s := m[k]
	if s == nil {
		s = map[V]struct{}{}
		m[k] = s
	}
	s[v] = struct{}{}
}

// remove takes v out of the set m[k], and the set out of m when empty.
func remove[V comparable](m map[string]map[V]struct{}, k string, v V) {
	s := m[k]
	delete(s, v)
	if len(s) == 0 {
		delete(m, k)
	}
}

// index returns the index and key a subscription of f is kept under.
func (h *Hub) index(f Filter) (map[string]map[*sub]struct{}, string) {
	if f.AggregateID != "" {
		return h.byRecord, f.AggregateID
	}
	return h.byScope, scopeKey(f.TenantID, f.WorkspaceID, f.Environment)
}
