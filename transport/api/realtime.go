package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/transport"
)

// RealtimePattern is the realtime endpoint's path.
const RealtimePattern = "/ws/v1"

// Defaults of RealtimeConfig.
const (
	// DefaultRealtimeReadLimit bounds one client message, in bytes.
	DefaultRealtimeReadLimit = 4096
	// DefaultRealtimePingInterval spaces the server's WebSocket pings.
	DefaultRealtimePingInterval = 30 * time.Second
	// DefaultRealtimePongTimeout is how long a ping waits for its pong
	// before the connection is taken for dead and closed.
	DefaultRealtimePongTimeout = 10 * time.Second
	// DefaultRealtimeWriteTimeout bounds one message's write.
	DefaultRealtimeWriteTimeout = 10 * time.Second
	// DefaultRealtimeRecheckInterval spaces the periodic re-check of a
	// connection's credential and subscriptions.
	DefaultRealtimeRecheckInterval = 30 * time.Second
)

// RealtimeConfig configures the realtime endpoint. Zero values take the
// defaults above.
type RealtimeConfig struct {
	// Hub is the host's realtime feed. Required.
	Hub *realtime.Hub
	// AllowedOrigins are the origins (scheme://host[:port], exact) whose
	// pages may connect with the session cookie, beside the endpoint's own
	// host. A bearer credential is never origin-checked: no page can make
	// a browser send one it does not hold.
	AllowedOrigins []string
	// ReadLimit bounds one client message, in bytes.
	ReadLimit int64
	// PingInterval spaces the server's pings; PongTimeout is how long one
	// waits for its pong.
	PingInterval, PongTimeout time.Duration
	// WriteTimeout bounds one message's write.
	WriteTimeout time.Duration
	// RecheckInterval spaces the periodic re-check of each connection's
	// credential, membership and subscriptions.
	RecheckInterval time.Duration
	// Log receives one line per connection and the causes of internal
	// errors; nil discards them.
	Log *slog.Logger
}

// Realtime serves the realtime endpoint, GET /ws/v1: a WebSocket that
// speaks package realtime's protocol, authenticated and authorized through
// the gateway (Bind). The route-table entry is Route; Close ends every
// connection with 1001 going away.
type Realtime struct {
	cfg   RealtimeConfig
	bound atomic.Pointer[realtimeBinding]

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// realtimeBinding is what Bind gives the endpoint: the gateway, the read
// routes that authorize record channels, and the policies of the order
// and workspace channels.
type realtimeBinding struct {
	gw        *transport.Gateway[Tx]
	routes    map[string]Route
	order     Route
	workspace Route
	self      Route
}

// NewRealtime returns the endpoint over cfg.Hub.
func NewRealtime(cfg RealtimeConfig) (*Realtime, error) {
	if cfg.Hub == nil {
		return nil, errors.New("api: RealtimeConfig.Hub is required")
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultRealtimeReadLimit
	}
	def(&cfg.PingInterval, DefaultRealtimePingInterval)
	def(&cfg.PongTimeout, DefaultRealtimePongTimeout)
	def(&cfg.WriteTimeout, DefaultRealtimeWriteTimeout)
	def(&cfg.RecheckInterval, DefaultRealtimeRecheckInterval)
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	for _, o := range cfg.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return nil, fmt.Errorf("api: RealtimeConfig.AllowedOrigins: %q is not an origin (scheme://host[:port])", o)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Realtime{cfg: cfg, ctx: ctx, cancel: cancel}, nil
}

// Config returns the endpoint's configuration with its defaults applied.
func (e *Realtime) Config() RealtimeConfig { return e.cfg }

// channelRoute is the read route that authorizes a record channel: a
// subscription to kind:<id> with the prefix is answered as GET of the
// route with the id as path parameter param would be.
type channelRoute struct {
	kind        realtime.Kind
	prefix      string
	operationID string
	param       string
}

// channelRoutes lists the record channels' read routes.
func channelRoutes() []channelRoute {
	return []channelRoute{
		{realtime.KindOperation, genop.IDPrefix, "getOperation", "operationId"},
		{realtime.KindOperation, sound.IDPrefix, "getSoundOperation", "operationId"},
		{realtime.KindOperation, ai.OperationIDPrefix, "getAiOperation", "id"},
		{realtime.KindIntent, "txi_", "getTransactionIntent", "id"},
		{realtime.KindOrder, marketplace.OrderPrefix, orderChannelRoute, "orderId"},
	}
}

// orderChannelRoute is the operation id of the order channel's read.
const orderChannelRoute = "readMarketplaceOrder"

// Bind gives the endpoint the gateway and the route table, whose read
// routes authorize the record channels; market reads orders for the order
// channel (nil: the channel answers NOT_FOUND). Until Bind the endpoint
// answers 503.
func (e *Realtime) Bind(gw *transport.Gateway[Tx], routes []Route, market *marketplace.Service) error {
	b := &realtimeBinding{gw: gw, routes: map[string]Route{}}
	for _, rt := range routes {
		b.routes[rt.OperationID] = rt
		if rt.Pattern == RealtimePattern {
			b.self = rt
		}
	}
	if b.self.Raw == nil {
		return errors.New("api: the route table does not hold the realtime endpoint")
	}
	// The order channel reads one order with the order list's policy: its
	// buyer and its seller, with treasury.read (key scope ledger:read).
	if market != nil {
		b.routes[orderChannelRoute] = Route{Method: http.MethodGet, Pattern: "/api/v1/marketplace/orders/{orderId}",
			OperationID: orderChannelRoute, Auth: transport.AuthSessionOrKey, Permission: access.TreasuryRead, Scope: access.ScopeLedgerRead,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return market.Order(ctx, c.Tx, c.Principal, c.PathValue("orderId"))
			}}
	}
	// The workspace channel carries what a webhook endpoint of the
	// workspace receives: it needs what reading webhook registrations
	// needs.
	b.workspace = Route{Method: http.MethodGet, Pattern: RealtimePattern, OperationID: "subscribeWorkspaceEvents",
		Auth: transport.AuthSessionOrKey, Permission: access.DeveloperWebhookRead, Scope: access.ScopeWebhooksRead}
	e.bound.Store(b)
	return nil
}

// authorize decides a subscription of p to ch, as the read route of ch
// would answer p, and returns the filter of the events ch carries.
func (b *realtimeBinding) authorize(ctx context.Context, p *access.Principal, ch realtime.Channel) (realtime.Filter, error) {
	const op = "api.Realtime.authorize"
	f := realtime.Filter{Environment: string(p.Environment), TenantID: p.TenantID, WorkspaceID: p.WorkspaceID}
	if ch.Kind == realtime.KindWorkspace {
		_, err := b.gw.Authorize(ctx, b.workspace, p, nil, nil)
		return f, err
	}
	i := slices.IndexFunc(channelRoutes(), func(cr channelRoute) bool { return cr.kind == ch.Kind && strings.HasPrefix(ch.ID, cr.prefix) })
	if i < 0 {
		return f, fault.E(op, fault.NotFound, "No record of this kind has that id.").With("channel", ch.String())
	}
	cr := channelRoutes()[i]
	rt, ok := b.routes[cr.operationID]
	if !ok {
		// The host serves no such records (the area is not configured).
		return f, fault.E(op, fault.NotFound, "No record of this kind has that id.").With("channel", ch.String())
	}
	if _, err := b.gw.Read(ctx, rt, p, map[string]string{cr.param: ch.ID}); err != nil {
		return f, err
	}
	f.AggregateID = ch.ID
	if ch.Kind == realtime.KindOrder {
		// An order's events are written in its buyer's workspace; its
		// seller, who reads the same order, follows them too.
		f.TenantID, f.WorkspaceID = "", ""
	}
	return f, nil
}

// realtimeRoutes is the realtime endpoint's entry of the route table:
// registered, served outside the JSON gateway, and described in the
// document's info.description (Realtime) rather than as an operation,
// since it answers with a protocol switch. Its access rules are what
// every connection needs: an active member of the workspace, or any key
// of it.
func realtimeRoutes(e *Realtime) []Route {
	if e == nil {
		return nil
	}
	rt := Route{Method: http.MethodGet, Pattern: RealtimePattern, OperationID: "openRealtime", Tag: transport.TagArchitecture,
		Summary: "Follow events live over a WebSocket", Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Internal: true,
		Query: []transport.Param{{Name: "environment", Description: "test or live: the mode a session acts in, as the " +
			transport.EnvironmentHeader + " header sets it (browsers cannot send headers on a WebSocket handshake).", Example: "test"}}}
	rt.Raw = e.handler(rt)
	return []Route{rt}
}

// Close ends every connection with 1001 going away and refuses new ones
// (503), waiting up to ctx for the connections to end.
func (e *Realtime) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enter counts a connection in, unless the endpoint is closed.
func (e *Realtime) enter() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.wg.Add(1)
	return true
}

// handler serves the handshake: the request's shape, its origin, the
// credential and its limits, the connection limits, then the upgrade. A
// refusal is the HTTP error envelope with the gateway's status.
func (e *Realtime) handler(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const op = "api.Realtime"
		reqID := transport.RequestID(r)
		w.Header().Set("X-Request-Id", reqID)
		w.Header().Set("Cache-Control", "private, no-store")
		fail := func(err error) { transport.WriteError(w, e.cfg.Log, reqID, err) }
		b := e.bound.Load()
		if b == nil || !e.enter() {
			fail(fault.E(op, fault.ServiceUnavailable, "The realtime endpoint is not serving."))
			return
		}
		defer e.wg.Done()
		if err := e.checkRequest(r); err != nil {
			fail(err)
			return
		}
		p, err := b.gw.Admit(r.Context(), w, r, rt)
		if err != nil {
			fail(err)
			return
		}
		conn, err := e.cfg.Hub.Open(p)
		if err != nil {
			fail(err)
			return
		}
		defer conn.Close()
		// The host's read and write timeouts were set for a request; the
		// connection keeps its own liveness (pings) instead.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{}) // http.ErrNotSupported: the server's deadlines hold
		_ = rc.SetWriteDeadline(time.Time{})
		// The origin was checked above, for the session cookie only.
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return // Accept answered the request
		}
		ws.SetReadLimit(e.cfg.ReadLimit)
		s := &session{e: e, b: b, rt: rt, ws: ws, conn: conn, cred: credentialOf(r), reqID: reqID}
		s.principal.Store(p)
		start := time.Now()
		code := s.run()
		e.cfg.Log.LogAttrs(context.Background(), slog.LevelInfo, "realtime connection", slog.String("requestId", reqID),
			slog.String("principal", p.StableID()), slog.String("environment", string(p.Environment)), slog.Int("closeCode", code),
			slog.Int64("durationMs", time.Since(start).Milliseconds()))
	})
}

// checkRequest refuses a handshake by its shape before any credential is
// read: a WebSocket upgrade only; no query parameter but environment (a
// credential in the URL would be written to logs on the way); a session
// cookie only from a page of an allowed origin.
func (e *Realtime) checkRequest(r *http.Request) error {
	const op = "api.Realtime"
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return fault.Invalid(op, "Upgrade", "GET /ws/v1 is a WebSocket endpoint: connect with a WebSocket client.")
	}
	for name := range r.URL.Query() {
		if name != "environment" {
			return fault.Invalid(op, name, "GET /ws/v1 takes no query parameter but environment; send the credential as "+
				"Authorization: Bearer <credential>, never in the URL.")
		}
	}
	if bearerOf(r) != "" {
		return nil
	}
	if _, err := r.Cookie(account.CookieName); err != nil {
		return nil // no credential: the gateway answers 401
	}
	origin := r.Header.Get("Origin")
	if origin != "" && (sameHost(origin, r.Host) || slices.Contains(e.cfg.AllowedOrigins, origin)) {
		return nil
	}
	return fault.E(op, fault.AccessDenied, "The session cookie is accepted only from a page of an allowed origin.").
		With("reason", "origin_not_allowed").With("origin", clipOrigin(origin))
}

// bearerOf returns the Authorization header's bearer credential, or "".
func bearerOf(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// sameHost reports whether origin names host (the endpoint's own).
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}

// clipOrigin bounds an origin echoed in details.
func clipOrigin(o string) string {
	if len(o) > 200 {
		return o[:200]
	}
	return o
}

// credentialOf keeps what re-authenticating the connection needs of its
// handshake: the credential headers and the requested environment. They
// stay in the connection's memory only, never written or logged.
func credentialOf(r *http.Request) *http.Request {
	c := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: RealtimePattern, RawQuery: r.URL.RawQuery}, Header: http.Header{}}
	for _, h := range []string{"Authorization", "Cookie", transport.EnvironmentHeader, transport.WorkspaceHeader} {
		if v := r.Header.Values(h); len(v) > 0 {
			c.Header[h] = slices.Clone(v)
		}
	}
	return c
}

// session is one open connection.
type session struct {
	e         *Realtime
	b         *realtimeBinding
	rt        Route
	ws        *websocket.Conn
	conn      *realtime.Conn
	cred      *http.Request
	reqID     string
	principal atomic.Pointer[access.Principal]

	closeOnce sync.Once
	code      atomic.Int32
}

// run serves the connection until it ends and returns its close code.
// The reader runs here until the connection is closed, by the client or
// by one of the other goroutines (close, abort): the writer, the pinger,
// the re-checker and the message handler.
func (s *session) run() int {
	ctx, cancel := context.WithCancel(s.e.ctx)
	frames := make(chan []byte, 16)
	var wg sync.WaitGroup
	for _, f := range []func(context.Context){s.write, s.ping, s.watch, func(ctx context.Context) { s.handle(ctx, frames) }} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	stop := context.AfterFunc(s.e.ctx, func() { s.close(websocket.StatusGoingAway, "the host is stopping") })
	s.read(ctx, frames)
	stop()
	cancel()
	wg.Wait()
	s.abort() // closed already, or broken: release it
	return int(s.code.Load())
}

// close ends the connection with code and reason, once: the close
// handshake runs beside the reader, which returns when it completes.
func (s *session) close(code websocket.StatusCode, reason string) {
	s.closeOnce.Do(func() {
		s.code.Store(int32(code))
		go s.ws.Close(code, reason) // the handshake waits for the client, a few seconds at most
	})
}

// abort ends the connection without a handshake (it is dead or broken),
// unless it was closed already.
func (s *session) abort() {
	s.closeOnce.Do(func() { s.code.Store(int32(websocket.StatusAbnormalClosure)) })
	s.ws.CloseNow()
}

// read reads the client's frames until the connection ends, handing text
// frames to handle; a binary frame closes it with 1003. It does not stop
// on ctx (that would cut a close handshake short): the connection's close
// ends it.
func (s *session) read(ctx context.Context, frames chan<- []byte) {
	for {
		typ, b, err := s.ws.Read(context.Background())
		if err != nil {
			switch st := websocket.CloseStatus(err); {
			case st != -1: // the client closed, or answered the server's close
				s.closeOnce.Do(func() { s.code.Store(int32(st)) })
			case errors.Is(err, websocket.ErrMessageTooBig): // the library closed with 1009
				s.closeOnce.Do(func() { s.code.Store(int32(websocket.StatusMessageTooBig)) })
			}
			return
		}
		if typ != websocket.MessageText {
			s.close(websocket.StatusUnsupportedData, "messages are JSON text frames")
			continue
		}
		select {
		case frames <- b:
		case <-ctx.Done():
		}
	}
}

// handle answers the client's messages, one at a time.
func (s *session) handle(ctx context.Context, frames <-chan []byte) {
	for {
		var b []byte
		select {
		case b = <-frames:
		case <-ctx.Done():
			return
		}
		if err := s.message(ctx, b); err != nil {
			return
		}
	}
}

// message answers one client message; an error means the connection is
// gone.
func (s *session) message(ctx context.Context, b []byte) error {
	m, err := realtime.DecodeClientMessage(b)
	if err != nil {
		return s.conn.Send(ctx, realtime.ErrorMessage("", err))
	}
	if m.Type == realtime.TypePing {
		return s.conn.Send(ctx, realtime.ServerMessage{Type: realtime.TypePong})
	}
	ch, err := realtime.ParseChannel(m.Channel)
	if err != nil {
		return s.conn.Send(ctx, realtime.ErrorMessage(m.Channel, err))
	}
	if m.Type == realtime.TypeUnsubscribe {
		if !s.conn.Unsubscribe(ch) {
			return s.conn.Send(ctx, realtime.ErrorMessage(ch.String(),
				fault.E("api.Realtime", fault.NotFound, "The connection holds no subscription to this channel.")))
		}
		return s.conn.Send(ctx, realtime.ServerMessage{Type: realtime.TypeUnsubscribed, Channel: ch.String()})
	}
	f, err := s.b.authorize(ctx, s.principal.Load(), ch)
	if err == nil {
		err = s.conn.Subscribe(ctx, ch, f, m.After)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.logInternal(err)
		return s.conn.Send(ctx, realtime.ErrorMessage(ch.String(), err))
	}
	return nil
}

// logInternal logs the cause of an internal error.
func (s *session) logInternal(err error) {
	if fault.CodeOf(err) == fault.Internal {
		s.e.cfg.Log.Error("realtime: internal error", "requestId", s.reqID, "err", err)
	}
}

// write writes the queued messages; when the hub drops the connection as
// a slow consumer, it closes it with that code.
func (s *session) write(ctx context.Context) {
	for {
		select {
		case b := <-s.conn.Messages():
			wctx, cancel := context.WithTimeout(ctx, s.e.cfg.WriteTimeout)
			err := s.ws.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				s.abort()
				return
			}
		case <-s.conn.Done():
			if code := s.conn.Dropped(); code != 0 {
				s.close(websocket.StatusCode(code), "slow consumer: the connection's queue filled")
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

// ping pings the client every PingInterval; a ping without a pong in
// PongTimeout ends the connection without a handshake (it is dead).
func (s *session) ping(ctx context.Context) {
	t := time.NewTicker(s.e.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, s.e.cfg.PongTimeout)
		err := s.ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				s.abort() // dead: no close frame would reach it
			}
			return
		}
	}
}

// watch re-checks the connection when an event may have changed its
// authority, and every RecheckInterval.
func (s *session) watch(ctx context.Context) {
	t := time.NewTicker(s.e.cfg.RecheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.conn.Recheck():
		}
		if s.recheck(ctx) {
			return
		}
	}
}

// recheck authenticates the connection's credential again and authorizes
// each subscription again, as of now. A credential that no longer
// authenticates closes the connection with 4001, one that lost the
// workspace with 4003, each after an error message; a subscription no
// longer authorized ends with an error message naming its channel. It
// reports whether the connection was closed. An internal failure changes
// nothing (the next re-check tries again).
func (s *session) recheck(ctx context.Context) bool {
	r := s.cred.Clone(ctx)
	p, err := s.b.gw.Reauthenticate(ctx, r, s.rt)
	if err != nil {
		code := fault.CodeOf(err)
		switch code {
		case fault.Internal:
			s.logInternal(err)
			return false
		case fault.Unauthenticated, fault.SessionExpired:
			s.end(ctx, realtime.CloseUnauthenticated, err)
		default:
			s.end(ctx, realtime.CloseAccessDenied, err)
		}
		return true
	}
	s.principal.Store(p)
	for _, ch := range s.conn.Subscriptions() {
		if _, err := s.b.authorize(ctx, p, ch); err != nil {
			if fault.CodeOf(err) == fault.Internal {
				s.logInternal(err)
				continue
			}
			if s.conn.Unsubscribe(ch) {
				_ = s.conn.Send(ctx, realtime.ErrorMessage(ch.String(), err))
			}
		}
	}
	return false
}

// end sends the error message of err, then closes with code and the
// error's code as the reason.
func (s *session) end(ctx context.Context, code int, err error) {
	wctx, cancel := context.WithTimeout(ctx, s.e.cfg.WriteTimeout)
	_ = s.ws.Write(wctx, websocket.MessageText, realtime.ErrorMessage("", err).Encode())
	cancel()
	s.close(websocket.StatusCode(code), string(fault.CodeOf(err)))
}
