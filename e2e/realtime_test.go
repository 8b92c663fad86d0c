package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/store"
)

// rtOptions are a System's options with a quick realtime feed: a short
// poll and re-check, so that tests wait milliseconds, not seconds.
func rtOptions(o platformtest.Options) platformtest.Options {
	o.Realtime.PollInterval = 20 * time.Millisecond
	o.Realtime.RecheckInterval = 200 * time.Millisecond
	return o
}

// wsURL is the realtime endpoint of a host's base URL.
func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/ws/v1" }

// rtClient is a WebSocket client of the realtime endpoint.
type rtClient struct {
	t  testing.TB
	ws *websocket.Conn
}

// dial connects to the endpoint at base with the bearer credential, and
// fails the test on a refusal.
func dial(t testing.TB, base, credential string) *rtClient {
	t.Helper()
	c, status, body := tryDial(t, base, http.Header{"Authorization": {"Bearer " + credential}})
	if c == nil {
		t.Fatalf("dial: %d %s", status, body)
	}
	return c
}

// tryDial connects with the given headers; on a refusal it returns the
// status and body of the answer.
func tryDial(t testing.TB, url string, h http.Header) (*rtClient, int, string) {
	t.Helper()
	if !strings.HasPrefix(url, "ws") {
		url = wsURL(url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s: %v", url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, string(b)
	}
	ws.SetReadLimit(1 << 20)
	c := &rtClient{t: t, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	return c, http.StatusSwitchingProtocols, ""
}

func (c *rtClient) send(m realtime.ClientMessage) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("send %s: %v", b, err)
	}
}

// next reads the next message; err is the connection's end (a
// websocket.CloseError when the server closed it).
func (c *rtClient) next(d time.Duration) (realtime.ServerMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return realtime.ServerMessage{}, err
	}
	var m realtime.ServerMessage
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("message %s: %v", b, err)
	}
	return m, nil
}

// must reads the next message, failing the test when none comes.
func (c *rtClient) must() realtime.ServerMessage {
	c.t.Helper()
	m, err := c.next(15 * time.Second)
	if err != nil {
		c.t.Fatalf("no message: %v", err)
	}
	return m
}

// subscribe subscribes to channel (after an event id when set) and
// expects subscribed.
func (c *rtClient) subscribe(channel, after string) {
	c.t.Helper()
	c.send(realtime.ClientMessage{Type: realtime.TypeSubscribe, Channel: channel, After: after})
	if m := c.must(); m.Type != realtime.TypeSubscribed || m.Channel != channel {
		c.t.Fatalf("subscribe %s: %+v (%v)", channel, m, errorOf(m))
	}
}

// refused subscribes to channel and returns the error it is refused with.
func (c *rtClient) refused(channel string) realtime.ErrorBody {
	c.t.Helper()
	c.send(realtime.ClientMessage{Type: realtime.TypeSubscribe, Channel: channel})
	m := c.must()
	if m.Type != realtime.TypeError || m.Channel != channel || m.Error == nil {
		c.t.Fatalf("subscribe %s: %+v, want an error", channel, m)
	}
	return *m.Error
}

// events reads event messages until one has a type in until, failing on
// anything but events.
func (c *rtClient) events(until ...string) []outbox.Event {
	c.t.Helper()
	var out []outbox.Event
	for {
		m := c.must()
		if m.Type != realtime.TypeEvent || m.Event == nil || m.ID != m.Event.ID {
			c.t.Fatalf("message %+v (%v), want an event", m, errorOf(m))
		}
		out = append(out, *m.Event)
		if slices.Contains(until, m.Event.Type) {
			return out
		}
	}
}

// quiet asserts that no message arrives for a moment.
func (c *rtClient) quiet() {
	c.t.Helper()
	if m, err := c.next(300 * time.Millisecond); err == nil {
		c.t.Fatalf("unexpected message %+v", m)
	}
}

// closedWith reads until the server closes the connection and returns the
// close code and the last error message before it.
func (c *rtClient) closedWith() (websocket.StatusCode, *realtime.ErrorBody) {
	c.t.Helper()
	var last *realtime.ErrorBody
	for {
		m, err := c.next(15 * time.Second)
		if err != nil {
			return websocket.CloseStatus(err), last
		}
		if m.Type == realtime.TypeError {
			last = m.Error
		}
	}
}

func errorOf(m realtime.ServerMessage) any {
	if m.Error == nil {
		return nil
	}
	return *m.Error
}

func types(evs []outbox.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// TestRealtimeFollowsGeneration follows a generation over the WebSocket
// from its acceptance to its completion: subscribed just after the 202,
// the client sees the accepted event (the record's history), then the
// completion, each once, as the outbox holds them.
func TestRealtimeFollowsGeneration(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rtOptions(genOptions()), func(t *testing.T, s *platformtest.System) {
		acc := acceptedID(t, generate(s, "rt-gen-1", map[string]any{"prompt": "A calm piano piece", "duration": 90}))
		c := dial(t, s.Server.URL, s.Boot.TestKey)
		ch := "operation:" + acc.OperationID
		c.subscribe(ch, "")
		accepted := c.events("generation.operation.accepted")
		if len(accepted) != 1 {
			t.Fatalf("before the accepted event: %v", types(accepted))
		}
		a := accepted[0]
		var p struct {
			OperationID     string `json:"operationId"`
			Status          string `json:"status"`
			CreditsReserved string `json:"creditsReserved"`
		}
		if err := json.Unmarshal(a.Payload, &p); err != nil || a.AggregateID != acc.OperationID || a.WorkspaceID != s.Boot.WorkspaceID ||
			a.Environment != "test" || p.OperationID != acc.OperationID || p.Status != "queued" || p.CreditsReserved != "15" {
			t.Fatalf("accepted event = %+v, payload %s", a, a.Payload)
		}
		waitTasksA(t, s, 1)
		if err := s.ProviderA.Complete(s.ProviderA.Tasks()[0].ID); err != nil {
			t.Fatal(err)
		}
		done := c.events("generation.operation.completed")
		if got := types(done); !slices.Equal(got, []string{"generation.operation.completed"}) {
			t.Fatalf("events after accepted = %v", got)
		}
		if v := getOp(t, s, acc.OperationID); v.Status != "completed" {
			t.Fatalf("the operation reads %s after its completed event", v.Status)
		}
		// Each message is the outbox row it projects.
		for _, e := range append(accepted, done...) {
			if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE id = ? AND type = ? AND aggregate_id = ?`, e.ID, e.Type,
				acc.OperationID); n != 1 {
				t.Fatalf("event %s %s is not in the outbox", e.ID, e.Type)
			}
		}
		c.quiet()
	})
}

// TestRealtimeChannelAuthorization: a subscription is refused exactly as
// the HTTP read of the same record: another workspace's or tenant's
// operation, and the other environment's, are NOT_FOUND as GET answers;
// a narrower key gets the GET's refusal too, and the workspace channel
// needs webhooks:read. The handshake refuses a missing credential, a
// credential in the URL, a session cookie from a foreign or missing
// origin and anything but a WebSocket upgrade.
func TestRealtimeChannelAuthorization(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rtOptions(genOptions()), func(t *testing.T, s *platformtest.System) {
		acc := acceptedID(t, generate(s, "rt-auth-1", map[string]any{"prompt": "A quiet ambient piece"}))
		other := s.Bootstrap("Elsewhere")
		_, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "keys only", "scopes": []string{"keys:read"}}, "")
		ch := "operation:" + acc.OperationID
		for _, c := range []struct {
			who, key string
		}{{"another tenant's key", other.TestKey}, {"the other environment's key", s.Boot.LiveKey}, {"a narrower key", narrow.Secret}} {
			get := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + acc.OperationID, Key: c.key})
			if get.Status < 400 {
				t.Fatalf("%s reads the operation: %d", c.who, get.Status)
			}
			e := dial(t, s.Server.URL, c.key).refused(ch)
			if string(e.Code) != get.Code() {
				t.Errorf("%s: subscribe refused with %s, GET with %s", c.who, e.Code, get.Code())
			}
		}
		if e := dial(t, s.Server.URL, other.TestKey).refused(ch); e.Code != "NOT_FOUND" {
			t.Errorf("another workspace's operation: %s, want NOT_FOUND", e.Code)
		}
		// The workspace channel needs webhooks:read; unknown channels and
		// ids are refused without ending the connection.
		n := dial(t, s.Server.URL, narrow.Secret)
		if e := n.refused("workspace"); e.Code != "ACCESS_DENIED" {
			t.Errorf("workspace channel without webhooks:read: %s", e.Code)
		}
		if e := n.refused("account:usr_1"); e.Code != "INVALID_INPUT" || e.Details["field"] != "channel" {
			t.Errorf("unknown channel kind: %+v", e)
		}
		if e := n.refused("order:ord_unknown"); e.Code != "ACCESS_DENIED" {
			t.Errorf("an order without treasury.read: %+v", e)
		}
		own := dial(t, s.Server.URL, s.Boot.TestKey)
		if e := own.refused("order:ord_01jd0000000000000000000000"); e.Code != "NOT_FOUND" {
			t.Errorf("an unknown order: %+v", e)
		}
		// Transaction intents are read by signed-in users only, as GET
		// /api/v1/transactions/{id} is.
		if e := own.refused("intent:txi_unknown"); e.Code != "ACCESS_DENIED" || e.Details["credential"] != "api_key" {
			t.Errorf("an intent with an API key: %+v", e)
		}
		own.send(realtime.ClientMessage{Type: realtime.TypePing})
		if m := own.must(); m.Type != realtime.TypePong {
			t.Fatalf("ping: %+v", m)
		}
		own.subscribe("workspace", "")

		// Handshake refusals, with the error envelope.
		for _, c := range []struct {
			what   string
			url    string
			h      http.Header
			status int
			code   string
		}{
			{"no credential", s.Server.URL, http.Header{}, 401, "UNAUTHENTICATED"},
			{"a malformed key", s.Server.URL, http.Header{"Authorization": {"Bearer platform_test_nope"}}, 401, "UNAUTHENTICATED"},
			{"a credential in the URL", wsURL(s.Server.URL) + "?access_token=" + s.Boot.TestKey, http.Header{}, 400, "INVALID_INPUT"},
			{"a cookie without an origin", s.Server.URL, http.Header{"Cookie": {"platform_session=x"}}, 403, "ACCESS_DENIED"},
			{"a cookie from another site", s.Server.URL, http.Header{"Cookie": {"platform_session=x"}, "Origin": {"https://evil.example"}}, 403, "ACCESS_DENIED"},
			{"a forged cookie from the host's own page", s.Server.URL, http.Header{"Cookie": {"platform_session=x"},
				"Origin": {s.Server.URL}}, 401, "UNAUTHENTICATED"},
		} {
			c2, status, body := tryDial(t, c.url, c.h)
			if c2 != nil || status != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
				t.Errorf("%s: %d %s, want %d %s", c.what, status, body, c.status, c.code)
			}
		}
		r, err := http.Get(s.Server.URL + "/ws/v1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 400 || !strings.Contains(string(b), `"field":"Upgrade"`) {
			t.Errorf("a plain GET: %d %s", r.StatusCode, b)
		}
	})
}

// TestRealtimeSessions: members connect with their access token or, from
// the host's own page, their session cookie. A MEMBER is refused the
// workspace channel a DEVELOPER holds; when the developer's role is taken
// away the subscription ends at the next re-check, and when the developer
// signs out the connection closes with 4001.
func TestRealtimeSessions(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rtOptions(platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		owner, people := team(t, s, "rt", map[string]string{"dev": "DEVELOPER", "member": "MEMBER"})
		dev, member := people["dev"], people["member"]
		d := dial(t, s.Server.URL, dev.token)
		d.subscribe("workspace", "")
		m, _, _ := tryDial(t, s.Server.URL, http.Header{"Cookie": {"platform_session=" + member.cookie}, "Origin": {s.Server.URL}})
		if m == nil {
			t.Fatal("a member's cookie from the host's own page was refused")
		}
		if e := m.refused("workspace"); e.Code != "ACCESS_DENIED" {
			t.Fatalf("a MEMBER's workspace channel: %+v", e)
		}
		if r := setRoles(s, owner, dev.userID, "MEMBER"); r.Status != 200 {
			t.Fatalf("set roles: %d %s", r.Status, r.Body)
		}
		// The change's own events may arrive first; then the subscription
		// ends.
		msg := d.must()
		for msg.Type == realtime.TypeEvent {
			msg = d.must()
		}
		if msg.Type != realtime.TypeError || msg.Channel != "workspace" || msg.Error == nil || msg.Error.Code != "ACCESS_DENIED" {
			t.Fatalf("after the role change: %+v", msg)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/auth/logout", Cookie: dev.cookie}); r.Status >= 300 {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		code, last := d.closedWith()
		if code != realtime.CloseUnauthenticated || last == nil || last.Code != "UNAUTHENTICATED" {
			t.Fatalf("after sign-out: close %d, last error %+v", code, last)
		}
	})
}

// TestRealtimeRevokedKeyDisconnects: a key revoked while its connection
// is open is disconnected (4001) on the revocation's event, on every host.
func TestRealtimeRevokedKeyDisconnects(t *testing.T) {
	t.Parallel()
	opts := rtOptions(platformtest.Options{})
	opts.Realtime.RecheckInterval = time.Hour // only the revocation's event can trigger the re-check
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		_, k := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "follower", "scopes": []string{"webhooks:read"}}, "")
		host2 := s.AnotherHost()
		here, there := dial(t, s.Server.URL, k.Secret), dial(t, host2.URL, k.Secret)
		here.subscribe("workspace", "")
		there.subscribe("workspace", "")
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/revoke", Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		for name, c := range map[string]*rtClient{"this host": here, "another host": there} {
			code, last := c.closedWith()
			if code != realtime.CloseUnauthenticated || last == nil || last.Code != "UNAUTHENTICATED" || last.Details["reason"] != "revoked" {
				t.Errorf("%s: close %d, last error %+v", name, code, last)
			}
		}
		if _, status, _ := tryDial(t, s.Server.URL, http.Header{"Authorization": {"Bearer " + k.Secret}}); status != 401 {
			t.Errorf("reconnecting with the revoked key: %d", status)
		}
	})
}

// TestRealtimeResumeWithoutGapOrDuplicate: a client reads part of a
// workspace's events, disconnects, and reconnects with after set to the
// last id it saw while keys keep being created on two hosts: it gets every
// later event once, in the order the feed holds them, then live ones.
func TestRealtimeResumeWithoutGapOrDuplicate(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rtOptions(platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		host2 := s.AnotherHost()
		newKey := func(base string, i int) {
			r := s.DoAt(base, platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: s.Boot.TestKey,
				Body: map[string]any{"name": fmt.Sprintf("k%d", i), "scopes": []string{"keys:read"}}})
			if r.Status != 201 {
				t.Errorf("create key %d: %d %s", i, r.Status, r.Body)
			}
		}
		raiseKeyLimits(t, s)
		c := dial(t, s.Server.URL, s.Boot.TestKey)
		c.subscribe("workspace", "")
		for i := range 4 {
			newKey(s.Server.URL, i)
		}
		var seen []string
		for range 2 {
			evs := c.events("api_key.created")
			seen = append(seen, evs[len(evs)-1].ID)
		}
		c.ws.Close(websocket.StatusNormalClosure, "")
		// Keys keep being made on both hosts while the client reconnects.
		var wg sync.WaitGroup
		for h, base := range []string{s.Server.URL, host2.URL} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					newKey(base, 100*(h+1)+i)
				}
			}()
		}
		r := dial(t, host2.URL, s.Boot.TestKey)
		r.subscribe("workspace", seen[len(seen)-1])
		wg.Wait()
		newKey(s.Server.URL, 999) // live, after the replay
		want := feedIDs(t, s, seen[0], 4+20+1)
		got := append([]string(nil), seen...)
		for len(got) < len(want) {
			evs := r.events("api_key.created")
			got = append(got, evs[len(evs)-1].ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events seen across the reconnect:\n got %v\nwant %v", got, want)
		}
		r.quiet()
	})
}

// feedIDs waits until the test workspace's test-mode feed holds n
// api_key.created events from event first on, and returns their ids in
// feed order.
func feedIDs(t *testing.T, s *platformtest.System, first string, n int) []string {
	t.Helper()
	var ids []string
	waitFor(t, fmt.Sprintf("%d settled api_key.created events", n), func() bool {
		es, err := s.DB.Read().RealtimeRead(context.Background(), realtime.ReadParams{Environment: "test", TenantID: s.Boot.TenantID,
			WorkspaceID: s.Boot.WorkspaceID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		ids = ids[:0]
		for _, e := range es {
			if e.Event.Type == "api_key.created" && (len(ids) > 0 || e.Event.ID == first) {
				ids = append(ids, e.Event.ID)
			}
		}
		return len(ids) >= n
	})
	return ids
}

// TestRealtimeSlowConsumerDropped: a client that stops reading while a
// burst of events arrives is closed with 4008 once its queue fills; the
// host keeps no more than the queue for it, and closes it.
func TestRealtimeSlowConsumerDropped(t *testing.T) {
	t.Parallel()
	opts := rtOptions(platformtest.Options{})
	opts.Realtime.QueueSize = 4
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		c := dial(t, s.Server.URL, s.Boot.TestKey)
		c.subscribe("workspace", "")
		// A burst the client does not read: one unit of work of ledger
		// movement events, large enough to outrun any socket buffer.
		ctx := context.Background()
		pad := strings.Repeat("x", 16<<10)
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			for i := range 400 {
				if _, err := tx.OutboxInsert(ctx, outbox.Event{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID,
					Environment: string(access.Test), Type: "ledger.movement.posted", AggregateID: fmt.Sprintf("mov_burst%04d", i),
					AggregateVersion: 1, Payload: json.RawMessage(`{"pad":"` + pad + `"}`)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the slow consumer dropped", func() bool { return s.P.Realtime().Connections() == 0 })
		if code, _ := c.closedWith(); code != realtime.CloseSlowConsumer {
			t.Fatalf("close code %d, want %d", code, realtime.CloseSlowConsumer)
		}
	})
}

// TestRealtimeTwoHosts: a client on one host follows events committed
// through another host of the same database.
func TestRealtimeTwoHosts(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rtOptions(platformtest.Options{}), func(t *testing.T, s *platformtest.System) {
		host2 := s.AnotherHost()
		c := dial(t, host2.URL, s.Boot.TestKey)
		c.subscribe("workspace", "")
		_, k := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "made on host 1", "scopes": []string{"keys:read"}}, "")
		evs := c.events("api_key.created")
		if last := evs[len(evs)-1]; last.AggregateID != k.Key.ID || last.WorkspaceID != s.Boot.WorkspaceID {
			t.Fatalf("host 2's client saw %+v", last)
		}
	})
}

// TestRealtimeDocumented: the OpenAPI document's description carries the
// realtime endpoint's protocol with this host's settings (its channels,
// messages and close codes), and lists no operation for it.
func TestRealtimeDocumented(t *testing.T) {
	t.Parallel()
	opts := rtOptions(platformtest.Options{})
	opts.Realtime.QueueSize, opts.Realtime.AllowedOrigins = 64, []string{"https://studio.example"}
	s := platformtest.New(t, opts)
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/docs/openapi.json"})
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.Info.Description
	i, j := strings.Index(d, "## Realtime"), strings.Index(d, "## Events")
	if i < 0 || j < i {
		t.Fatalf("no Realtime section before Events in info.description")
	}
	sec := d[i:j]
	for _, want := range []string{"`GET /ws/v1`", "`operation:<id>`", "`intent:<id>`", "`order:<id>`", "`workspace`",
		`{"type":"subscribe","channel":`, `"after":"evt_…"`, `{"type":"event","channel":"…","id":"evt_…","event":{…}}`,
		`{"type":"error","channel":"…","error":{"code":"…"`, "| 4001 |", "| 4003 |", "| 4008 |", "| 1001 |",
		"at most 64 messages", "`https://studio.example`", "every 200ms"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the Realtime section lacks %q", want)
		}
	}
	if _, ok := doc.Paths["/ws/v1"]; ok {
		t.Error("/ws/v1 is listed as an operation")
	}
}
