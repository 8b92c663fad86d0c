package realtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// fakeStore is the feed in memory: events take positions in the order
// they are appended, and only the first settled of them are read, as
// PostgreSQL holds back events behind an open older transaction.
type fakeStore struct {
	mu      sync.Mutex
	entries []Entry
	settled int
	// held, when set, keeps appends unsettled until settle is called.
	held bool
}

func (s *fakeStore) append(evs ...outbox.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range evs {
		s.entries = append(s.entries, Entry{Position: Position{Seq: int64(len(s.entries) + 1)}, Event: e})
	}
	if !s.held {
		s.settled = len(s.entries)
	}
}

func (s *fakeStore) settle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.settled = false, len(s.entries)
}

func (s *fakeStore) RealtimeRead(ctx context.Context, p ReadParams) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for _, e := range s.entries[:s.settled] {
		if !p.After.Less(e.Position) || !p.Through.IsZero() && p.Through.Less(e.Position) {
			continue
		}
		f := Filter{Environment: p.Environment, TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, AggregateID: p.AggregateID}
		if p.Environment == "" {
			f.Environment = e.Event.Environment
		}
		if !f.Match(e.Event) {
			continue
		}
		out = append(out, e)
		if len(out) == p.Limit {
			break
		}
	}
	return out, nil
}

func (s *fakeStore) RealtimeHead(ctx context.Context) (Position, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settled == 0 {
		return Position{}, nil
	}
	return s.entries[s.settled-1].Position, nil
}

func (s *fakeStore) RealtimePosition(ctx context.Context, env, id string) (Position, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries[:s.settled] {
		if e.Event.ID == id && e.Event.Environment == env {
			return e.Position, nil
		}
	}
	return Position{}, fault.E("fake", fault.NotFound, "")
}

var seq atomic.Int64

func ev(ws, agg, typ string) outbox.Event {
	return outbox.Event{ID: fmt.Sprintf("evt_%04d", seq.Add(1)), TenantID: "ten_1", WorkspaceID: ws, Environment: "test", Type: typ,
		SchemaVersion: 1, AggregateID: agg, AggregateVersion: 1, Payload: json.RawMessage(`{}`)}
}

// start runs a hub on st until the test ends.
func start(t *testing.T, st *fakeStore, cfg Config) *Hub {
	t.Helper()
	cfg.ReadFunc = func() Store { return st }
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Millisecond
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	<-h.Ready()
	return h
}

var key = &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test,
	UserID: "usr_1", KeyID: "key_1"}

// next reads the connection's next message, failing after a while.
func next(t *testing.T, c *Conn) ServerMessage {
	t.Helper()
	select {
	case b := <-c.Messages():
		var m ServerMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	return ServerMessage{}
}

// events reads messages until it has n events, and returns their ids.
func events(t *testing.T, c *Conn, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		m := next(t, c)
		if m.Type == TypeEvent {
			out = append(out, m.ID)
		}
	}
	return out
}

// quiet asserts that no message arrives for a moment.
func quiet(t *testing.T, c *Conn) {
	t.Helper()
	select {
	case b := <-c.Messages():
		t.Fatalf("unexpected message %s", b)
	case <-time.After(50 * time.Millisecond):
	}
}

func wsFilter() Filter { return Filter{Environment: "test", TenantID: "ten_1", WorkspaceID: "ws_1"} }

func TestLiveDeliveryMatchesFilters(t *testing.T) {
	st := &fakeStore{}
	st.append(ev("ws_1", "op_old", "x.done"))
	h := start(t, st, Config{})
	c, err := h.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(context.Background(), Channel{Kind: KindWorkspace}, wsFilter(), ""); err != nil {
		t.Fatal(err)
	}
	if m := next(t, c); m.Type != TypeSubscribed || m.Channel != "workspace" {
		t.Fatalf("first message = %+v", m)
	}
	mine, other, live := ev("ws_1", "op_1", "x.done"), ev("ws_2", "op_2", "x.done"), ev("ws_1", "op_3", "x.done")
	live.Environment = "live"
	st.append(mine, other, live)
	h.Wake()
	m := next(t, c)
	if m.Type != TypeEvent || m.Channel != "workspace" || m.ID != mine.ID || m.Event == nil || m.Event.AggregateID != "op_1" {
		t.Fatalf("event message = %+v", m)
	}
	quiet(t, c)
}

// TestResumeWithoutGapOrRepeat subscribes with after while events keep
// being appended, some held back unsettled meanwhile: the subscription
// sees every event after the named one exactly once, in order.
func TestResumeWithoutGapOrRepeat(t *testing.T) {
	st := &fakeStore{}
	var all []string
	for range 20 {
		e := ev("ws_1", "op_1", "x.step")
		st.append(e)
		all = append(all, e.ID)
	}
	h := start(t, st, Config{BatchSize: 3})
	c, err := h.Open(key)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			st.mu.Lock()
			st.held = i%4 == 0
			st.mu.Unlock()
			e := ev("ws_1", "op_1", "x.step")
			st.append(e)
			if i%4 == 1 {
				st.settle()
			}
			h.Wake()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	if err := c.Subscribe(context.Background(), Channel{Kind: KindOperation, ID: "op_1"},
		Filter{Environment: "test", TenantID: "ten_1", WorkspaceID: "ws_1", AggregateID: "op_1"}, all[4]); err != nil {
		t.Fatal(err)
	}
	got := events(t, c, 60)
	close(stop)
	wg.Wait()
	st.settle()
	st.mu.Lock()
	var want []string
	for _, e := range st.entries {
		want = append(want, e.Event.ID)
	}
	st.mu.Unlock()
	if !slices.Equal(got, want[5:65]) {
		t.Fatalf("resumed after %s:\n got %v\nwant %v", all[4], got, want[5:65])
	}
}

func TestRecordChannelReplaysItsHistory(t *testing.T) {
	st := &fakeStore{}
	a1, b1, a2 := ev("ws_1", "op_a", "x.accepted"), ev("ws_1", "op_b", "x.accepted"), ev("ws_1", "op_a", "x.step")
	st.append(a1, b1, a2)
	h := start(t, st, Config{})
	c, _ := h.Open(key)
	defer c.Close()
	f := Filter{Environment: "test", TenantID: "ten_1", WorkspaceID: "ws_1", AggregateID: "op_a"}
	if err := c.Subscribe(context.Background(), Channel{Kind: KindOperation, ID: "op_a"}, f, ""); err != nil {
		t.Fatal(err)
	}
	a3 := ev("ws_1", "op_a", "x.completed")
	st.append(a3)
	h.Wake()
	if got := events(t, c, 3); !slices.Equal(got, []string{a1.ID, a2.ID, a3.ID}) {
		t.Fatalf("events = %v", got)
	}
	// The workspace channel starts with the next event.
	if err := c.Subscribe(context.Background(), Channel{Kind: KindWorkspace}, wsFilter(), ""); err != nil {
		t.Fatal(err)
	}
	next(t, c) // subscribed
	quiet(t, c)
	// An unknown after is INVALID_INPUT naming after.
	err := c.Subscribe(context.Background(), Channel{Kind: KindOperation, ID: "op_b"}, f, "evt_unknown")
	if fault.CodeOf(err) != fault.InvalidInput {
		t.Fatalf("unknown after: %v", err)
	}
	// Unsubscribed: nothing more.
	if !c.Unsubscribe(Channel{Kind: KindWorkspace}) || !c.Unsubscribe(Channel{Kind: KindOperation, ID: "op_a"}) {
		t.Fatal("unsubscribe found no subscription")
	}
	st.append(ev("ws_1", "op_a", "x.more"))
	h.Wake()
	quiet(t, c)
}

func TestSlowConsumerDropped(t *testing.T) {
	st := &fakeStore{}
	h := start(t, st, Config{QueueSize: 4})
	c, _ := h.Open(key)
	defer c.Close()
	if err := c.Subscribe(context.Background(), Channel{Kind: KindWorkspace}, wsFilter(), ""); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		st.append(ev("ws_1", "op_1", "x.step"))
	}
	h.Wake()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a connection that read nothing was not dropped")
	}
	if c.Dropped() != CloseSlowConsumer || len(c.Messages()) > 4 || h.Connections() != 0 {
		t.Fatalf("dropped %d with %d queued, %d connections open", c.Dropped(), len(c.Messages()), h.Connections())
	}
}

func TestConnectionLimits(t *testing.T) {
	h := start(t, &fakeStore{}, Config{MaxConnectionsPerKey: 2, MaxConnectionsPerWorkspace: 3})
	var open []*Conn
	for range 2 {
		c, err := h.Open(key)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	_, err := h.Open(key)
	if fe, ok := err.(*fault.Error); !ok || fe.Code != fault.RateLimited || fe.Details["subject"] != "key" {
		t.Fatalf("third connection of a key: %v", err)
	}
	other := *key
	other.KeyID = "key_2"
	if _, err := h.Open(&other); err != nil {
		t.Fatal(err)
	}
	_, err = h.Open(&other)
	if fe, ok := err.(*fault.Error); !ok || fe.Code != fault.RateLimited || fe.Details["subject"] != "workspace" {
		t.Fatalf("fourth connection of a workspace: %v", err)
	}
	open[0].Close()
	if _, err := h.Open(key); err != nil {
		t.Fatalf("after a close: %v", err)
	}
}

func TestAuthorityEventsSignalRecheck(t *testing.T) {
	st := &fakeStore{}
	h := start(t, st, Config{})
	c, _ := h.Open(key)
	defer c.Close()
	other := *key
	other.KeyID, other.WorkspaceID = "key_9", "ws_9"
	d, _ := h.Open(&other)
	defer d.Close()
	signalled := func(c *Conn) bool {
		select {
		case <-c.Recheck():
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
	st.append(ev("ws_1", "key_1", "api_key.revoked"))
	h.Wake()
	if !signalled(c) || signalled(d) {
		t.Fatal("a revocation signalled the wrong connections")
	}
	st.append(ev("ws_9", "prj_1", "project.member_changed"))
	h.Wake()
	if signalled(c) || !signalled(d) {
		t.Fatal("a member change signalled the wrong connections")
	}
}

func TestDecodeClientMessage(t *testing.T) {
	for _, c := range []struct {
		in    string
		field string
	}{
		{`{"type":"subscribe","channel":"workspace"}`, ""},
		{`{"type":"subscribe","channel":"operation:op_1","after":"evt_1"}`, ""},
		{`{"type":"ping"}`, ""},
		{`{"type":"subscribe"}`, "channel"},
		{`{"type":"subscribe","channel":"workspace","extra":1}`, "body"},
		{`{"type":"shout"}`, "type"},
		{`{"type":"unsubscribe","channel":"workspace","after":"evt_1"}`, "after"},
		{`{"type":"subscribe","channel":"workspace","after":"evt_1?x"}`, "after"},
		{`[1]`, "body"},
	} {
		_, err := DecodeClientMessage([]byte(c.in))
		field := ""
		if fe, ok := err.(*fault.Error); ok {
			field, _ = fe.Details["field"].(string)
		}
		if field != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.in, field, c.field, err)
		}
	}
	for name, want := range map[string]string{"workspace": "workspace", "operation:op_1": "operation:op_1", "order:ord_1": "order:ord_1"} {
		ch, err := ParseChannel(name)
		if err != nil || ch.String() != want {
			t.Errorf("ParseChannel(%q) = %v, %v", name, ch, err)
		}
	}
	for _, name := range []string{"", "workspace:ws_1", "operation:", "operation:OP_1", "account:usr_1", "operation"} {
		if _, err := ParseChannel(name); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("ParseChannel(%q) = %v, want INVALID_INPUT", name, err)
		}
	}
}
