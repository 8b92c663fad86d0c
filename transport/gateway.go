package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/idempotency"
	"github.com/creatormusic/platform/internal/secret"
)

// WorkspaceHeader names a workspace the caller means to act in. A key is
// bound to one workspace; naming another is WORKSPACE_ACCESS_DENIED.
const WorkspaceHeader = "X-Workspace-Id"

// Gateway runs every JSON route's request through the spec's order
// (Authentication 4): request id, credential, credential state and expiry,
// workspace authority, permission or scope, the credential's limits, idempotency,
// the handler in its unit of work with the durable receipt, usage.
type Gateway[T Tx] struct {
	// DB is the store every call runs in.
	DB Store[T]
	// Sessions authenticates session cookies and access tokens.
	Sessions *account.Authenticator
	// Keys authenticates API keys.
	Keys *apikey.Service
	// Keyring hashes idempotent requests and seals one-time secrets.
	Keyring *secret.Keyring
	// Authz caches authority snapshots, stamped by version.
	Authz *access.Cache
	// Limiter enforces the limits of keys, users and workspaces.
	Limiter *Limiter
	// Log receives one line per request and the causes of INTERNAL errors.
	Log *slog.Logger
	// IdempotencyTTL is how long idempotency records are kept.
	IdempotencyTTL time.Duration
	// Offers tells the entitlement step what a paid plan would grant
	// (the plan catalog); nil reports every missing entitlement as
	// ENTITLEMENT_REQUIRED.
	Offers access.Offers
	// FreshWindow is how recent a sign-in must be on routes whose
	// Policy.Fresh asks for one.
	FreshWindow time.Duration
}

// errDuplicate aborts a unit of work whose idempotency key is already taken.
var errDuplicate = errors.New("idempotency key already recorded")

// isMutation reports whether method changes state.
func isMutation(method string) bool { return method != http.MethodGet && method != http.MethodHead }

// Serve returns the handler of one JSON route.
func (g *Gateway[T]) Serve(rt Route[T]) http.Handler {
	status := rt.Status
	if status == 0 {
		status = http.StatusOK
	}
	limit := rt.BodyLimit
	if limit == 0 {
		limit = DefaultBodyLimit
	}
	fields := &fieldIndex{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		reqID := RequestID(r)
		w.Header().Set("X-Request-Id", reqID)
		if rt.Private || rt.Auth != AuthPublic {
			w.Header().Set("Cache-Control", "private, no-store")
		}
		c := &Call[T]{RequestID: reqID, Request: r, fields: fields}
		code, err := g.serve(w, r, rt, c, status, limit)
		if err != nil {
			WriteError(w, g.Log, reqID, err)
			code = StatusOf(fault.CodeOf(err))
		}
		if !g.Log.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		attrs := []slog.Attr{slog.String("requestId", reqID), slog.String("method", r.Method),
			slog.String("operation", rt.OperationID), slog.Int("status", code),
			slog.Int64("durationMs", time.Since(start).Milliseconds())}
		if p := c.Principal; p != nil {
			attrs = append(attrs, slog.String("principal", p.StableID()), slog.String("environment", string(p.Environment)))
		}
		g.Log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}

// serve runs the chain and writes a success response; an error it returns
// is written by the caller.
func (g *Gateway[T]) serve(w http.ResponseWriter, r *http.Request, rt Route[T], c *Call[T], status int, limit int64) (int, error) {
	ctx := r.Context()
	if rt.AdmitFunc != nil {
		if err := rt.AdmitFunc(r, g.DB.Now()); err != nil {
			return 0, err
		}
	}
	if err := checkRequestText(r, rt); err != nil {
		return 0, err
	}
	if rt.Stream {
		// An upload may take longer than the host's ReadTimeout and
		// WriteTimeout allow an ordinary request: it gets its own
		// deadlines, from its size bound.
		extendDeadlines(w, true, TransferDeadline(limit))
		if err := streamBody(w, r, limit); err != nil {
			return 0, err
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodDelete || r.ContentLength > 0 {
		body, err := readBody(r, limit)
		if err != nil {
			return 0, err
		}
		c.body = body
	}

	authRoute := rt
	if rt.Auth == AuthPublic && rt.OptionalAuth && (bearer(r) != "" || g.sessionCookie(r) != "") {
		authRoute.Auth, authRoute.SignedIn = AuthSessionOrKey, true
		w.Header().Set("Cache-Control", "private, no-store")
	}
	if rt.OptionalAuth {
		w.Header().Add("Vary", "Authorization, Cookie")
	}
	if authRoute.Auth != AuthPublic && !isMutation(r.Method) && !rt.Stream {
		return g.serveRead(ctx, w, r, rt, authRoute, c, status)
	}
	if authRoute.Auth != AuthPublic {
		if err := g.authenticate(ctx, r, authRoute, c, w, g.DB.Read()); err != nil {
			return 0, err
		}
		hd, err := g.limit(ctx, w, c)
		if err != nil {
			return 0, err
		}
		defer hd.release()
	}

	if rt.Stream {
		if err := checkStreamType(r, rt.RequestContentTypes); err != nil {
			return 0, err
		}
		if isMutation(r.Method) {
			return g.stream(ctx, w, rt, c, status)
		}
	}
	if rt.OwnUnitOfWork && isMutation(r.Method) {
		return g.stream(ctx, w, rt, c, status)
	}
	if !isMutation(r.Method) {
		c.Tx = g.DB.Read()
		data, err := rt.Handle(ctx, c)
		if err != nil {
			return 0, err
		}
		return g.write(w, c, status, data)
	}
	return g.mutate(ctx, w, rt, c, status)
}

// serveRead serves an authenticated read. It authenticates ahead
// (Store.ReadAhead): the credential comes from memory at once, and the
// read of the other hosts' changes runs beside the access steps and the
// handler instead of before them. Before it answers, it confirms that no
// change was applied meanwhile; if one was, the answer is dropped and the
// request served again with exact lookups, from the credential steps on,
// its limits included. A read has no effects, so serving it twice is
// safe, and it counts once: the first pass's admission is refunded.
func (g *Gateway[T]) serveRead(ctx context.Context, w http.ResponseWriter, r *http.Request, rt, authRoute Route[T], c *Call[T], status int) (int, error) {
	read, confirm := g.DB.ReadAhead()
	data, hd, err := g.readOnce(ctx, w, r, rt, authRoute, c, read)
	if ok, cerr := confirm(ctx); cerr != nil || !ok {
		hd.refund()
		w.Header().Del("WWW-Authenticate")
		*c = Call[T]{RequestID: c.RequestID, Request: c.Request, body: c.body, fields: c.fields}
		data, hd, err = g.readOnce(ctx, w, r, rt, authRoute, c, g.DB.Read())
	}
	defer hd.release()
	if err != nil {
		return 0, err
	}
	return g.write(w, c, status, data)
}

// readOnce authenticates the read through read, applies the credential's
// limits and runs the handler. The hold's functions do nothing when the
// limits took none.
func (g *Gateway[T]) readOnce(ctx context.Context, w http.ResponseWriter, r *http.Request, rt, authRoute Route[T], c *Call[T], read T) (any, hold, error) {
	none := hold{release: func() {}, refund: func() {}}
	if err := g.authenticate(ctx, r, authRoute, c, w, read); err != nil {
		return nil, none, err
	}
	hd, err := g.limit(ctx, w, c)
	if err != nil {
		return nil, none, err
	}
	c.Tx = read
	data, err := rt.Handle(ctx, c)
	return data, hd, err
}

// authenticate resolves the credential, loads the authority and evaluates
// the route's access policy.
func (g *Gateway[T]) authenticate(ctx context.Context, r *http.Request, rt Route[T], c *Call[T], w http.ResponseWriter, read T) error {
	const op = "transport.authenticate"
	env, err := requestedEnvironment(r, rt)
	if err != nil {
		return err
	}
	var (
		p       *access.Principal
		version int64
	)
	token := bearer(r)
	switch {
	case strings.HasPrefix(token, apikey.TestPrefix) || strings.HasPrefix(token, apikey.LivePrefix):
		if err := admitsCredential(rt, access.CredentialAPIKey); err != nil {
			return err
		}
		rec := apikey.AuthRecord{}
		p, rec, err = g.Keys.Authenticate(ctx, read, token)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="platform", error="invalid_token"`)
			return err
		}
		if env != "" && env != p.Environment {
			return fault.Invalid(op, EnvironmentHeader, "An API key acts only in its own environment.")
		}
		c.key, version = rec.Key, rec.AuthzVersion
	case token != "" || g.sessionCookie(r) != "":
		if err := admitsCredential(rt, access.CredentialSession); err != nil {
			return err
		}
		cred := account.Credential{Token: token, Environment: env}
		if token == "" {
			cred.Cookie = g.sessionCookie(r)
			if isMutation(r.Method) && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				return fault.E(op, fault.AccessDenied, "Cross-site requests cannot use the session cookie.")
			}
		}
		sa := account.SessionAuth{}
		p, sa, err = g.Sessions.Authenticate(ctx, read, cred)
		if err != nil {
			return err
		}
		version = sa.AuthzVersion
	default:
		w.Header().Set("WWW-Authenticate", `Bearer realm="platform"`)
		return fault.E(op, fault.Unauthenticated, "Send an API key or access token as Authorization: Bearer <credential>, or sign in.").
			With("credential", "none").With("reason", "missing")
	}
	p.AuthzVersion = version
	c.Principal = p
	if rt.SignedIn {
		return nil // any signed-in user; the handler needs no workspace authority
	}
	return g.evaluate(ctx, rt, c, read, r.Header.Get(WorkspaceHeader), func(p *access.Principal) (access.Authority, error) {
		return g.Authz.GetAt(ctx, read, p.TenantID, p.WorkspaceID, p.UserID, p.Environment, version)
	})
}

// admitsCredential refuses a credential of a kind the route does not take:
// an API key on a session route, a session or access token on a key or
// internal route (ACCESS_DENIED, details.credential).
func admitsCredential[T Tx](rt Route[T], kind access.CredentialKind) error {
	const op = "transport.authenticate"
	switch {
	case kind == access.CredentialAPIKey && rt.Auth == AuthSession:
		return fault.E(op, fault.AccessDenied, "This route needs a signed-in user; API keys are not accepted.").With("credential", "api_key")
	case kind != access.CredentialAPIKey && (rt.Auth == AuthKey || rt.Auth == AuthInternal):
		return fault.E(op, fault.AccessDenied, "This route needs an API key.").With("credential", "session")
	}
	return nil
}

// evaluate runs the access evaluator on c's principal for rt: the route's
// declared access rules and Policy, with the authority load returns (for
// the principal's workspace), and the workspace the caller names. It sets
// c.Authority.
func (g *Gateway[T]) evaluate(ctx context.Context, rt Route[T], c *Call[T], read T, workspace string,
	load func(p *access.Principal) (access.Authority, error)) error {
	const op = "transport.authenticate"
	p := c.Principal
	in := &access.Input{
		Principal:            p,
		RequestedWorkspaceID: workspace,
		Permission:           rt.Permission,
		RequiredRoles:        rt.Roles,
		Scope:                rt.Scope,
		RequireSuperAdmin:    rt.SuperAdmin,
		AnyMember:            rt.AnyMember,
		Offers:               g.Offers,
	}
	g.policyInput(ctx, rt.Policy, c, in, read)
	internal := rt.AlsoInternal && p.Kind == access.CredentialAPIKey && p.HasScope(access.ScopeInternal)
	if rt.Auth == AuthInternal || internal {
		in.Permission, in.Scope = access.InternalEvents, access.ScopeInternal
	}
	if !((rt.Auth == AuthInternal || internal) && p.HasScope(access.ScopeInternal)) && p.WorkspaceID != "" {
		a, err := load(p)
		if err != nil && !fault.Is(err, fault.NotFound) {
			return fault.Wrap(op, err)
		}
		if err == nil {
			c.Authority = &a
			in.Authority = &a
		}
	}
	if d := access.Evaluate(in); !d.Allowed {
		return d.Err
	}
	return nil
}

// Authorize evaluates rt's access for p, a principal authenticated by an
// earlier request, as the gateway evaluates a direct call of rt with the
// given path values and body: the credential kinds the route takes, the
// workspace authority, the route's permission, scope and roles, and its
// declared Policy (feature, entitlement, resource scope, workflow, fresh
// sign-in), through the same evaluator. The authority is loaded at the
// workspace's current authority version, not the one p was read with, so
// a change of who may act applies at once. It returns that authority, or
// the error the direct call would answer with. It applies no limits and
// keeps no idempotency record or receipt: the request that carries the
// call did. The AI control plane runs a model's tool calls through it,
// under the authority of the route each tool stands for (spec,
// Authentication 11).
func (g *Gateway[T]) Authorize(ctx context.Context, rt Route[T], p *access.Principal, path map[string]string, body []byte) (*access.Authority, error) {
	const op = "transport.Authorize"
	if p == nil {
		return nil, fault.E(op, fault.Unauthenticated, "")
	}
	if rt.Auth == AuthPublic {
		return nil, nil
	}
	if err := admitsCredential(rt, p.Kind); err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(ctx, rt.Method, rt.Pattern, bytes.NewReader(body))
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	for k, v := range path {
		r.SetPathValue(k, v)
	}
	if len(body) > 0 {
		r.Header.Set("Content-Type", "application/json")
	}
	c := &Call[T]{Principal: p, Request: r, body: body, fields: &fieldIndex{}}
	if rt.SignedIn {
		return nil, nil
	}
	read := g.DB.Read()
	err = g.evaluate(ctx, rt, c, read, "", func(p *access.Principal) (access.Authority, error) {
		return g.Authz.Get(ctx, read, p.TenantID, p.WorkspaceID, p.UserID, p.Environment)
	})
	if err != nil {
		return nil, err
	}
	return c.Authority, nil
}

// policyInput feeds the route's declared Policy to the evaluator's input.
// Its request functions read through c.Tx, the read handle until the
// handler's unit of work begins.
func (g *Gateway[T]) policyInput(ctx context.Context, pol Policy[T], c *Call[T], in *access.Input, read T) {
	c.Tx = read
	in.Feature, in.Entitlement = pol.Feature, pol.Entitlement
	if pol.EntitlementFunc != nil {
		in.Entitlement = pol.EntitlementFunc(c)
	}
	if pol.ScopesFunc != nil {
		in.ExtraScopes = pol.ScopesFunc(c)
	}
	if pol.ResourceFunc != nil {
		in.ResourceFunc = func() (*access.Resource, error) { return pol.ResourceFunc(ctx, c) }
	}
	if pol.TransitionFunc != nil {
		in.TransitionFunc = func() error { return pol.TransitionFunc(ctx, c) }
	}
	if pol.Fresh != FreshNever {
		in.VerifyFunc = func() error { return g.fresh(pol, c) }
	}
}

// fresh applies the route's Freshness to the call: a session principal
// whose last sign-in is older than FreshWindow is
// REAUTHENTICATION_REQUIRED.
func (g *Gateway[T]) fresh(pol Policy[T], c *Call[T]) error {
	p := c.Principal
	if p.Kind == access.CredentialAPIKey {
		return nil
	}
	if pol.Fresh == FreshLive {
		env := p.Environment
		if pol.FreshEnvironmentFunc != nil {
			if e := pol.FreshEnvironmentFunc(c); e != "" {
				env = e
			}
		}
		if env != access.Live {
			return nil
		}
	}
	return account.RequireFresh(p, g.DB.Now(), g.FreshWindow)
}

// EnvironmentHeader asks for test or live mode. Sessions act in live mode
// unless a request sends "Platform-Environment: test", as a dashboard's
// test-mode toggle does; an API key acts only in its own environment, and a
// header naming the other one is INVALID_INPUT.
const EnvironmentHeader = "Platform-Environment"

func requestedEnvironment[T Tx](r *http.Request, rt Route[T]) (access.Environment, error) {
	v := r.Header.Get(EnvironmentHeader)
	if v == "" && r.Method == http.MethodGet && rt.takesQuery("environment") {
		// Browser navigations (a payment provider's return to the read-only
		// checkout route) cannot send headers; routes that document it take
		// the mode as a query parameter instead.
		v = r.URL.Query().Get("environment")
	}
	if v == "" {
		return "", nil
	}
	env := access.Environment(strings.ToLower(strings.TrimSpace(v)))
	if !env.Valid() {
		return "", fault.Invalid("transport.environment", EnvironmentHeader, "Platform-Environment must be test or live.")
	}
	return env, nil
}

// takesQuery reports whether the route documents the query parameter name.
func (rt Route[T]) takesQuery(name string) bool {
	for _, q := range rt.Query {
		if q.Name == name {
			return true
		}
	}
	return false
}

// bearer returns the Authorization header's bearer credential, or "".
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// sessionCookie returns the session cookie's value, or "".
func (g *Gateway[T]) sessionCookie(r *http.Request) string {
	ck, err := r.Cookie(account.CookieName)
	if err != nil {
		return ""
	}
	return ck.Value
}

// limit applies the credential's limits: an API key's own, or for a
// session or access token its user's and its workspace's (Limiter). It
// returns the admission's hold.
func (g *Gateway[T]) limit(ctx context.Context, w http.ResponseWriter, c *Call[T]) (hold, error) {
	var (
		hd  hold
		h   RateHeaders
		err error
	)
	if p := c.Principal; p.Kind == access.CredentialAPIKey {
		hd, h, err = g.Limiter.acquireKey(ctx, g.DB.Read(), c.key)
	} else {
		hd, h, err = g.Limiter.acquireSession(ctx, g.DB.Read(), p.UserID, p.WorkspaceID)
	}
	h.set(w.Header())
	return hd, err
}

// mutate runs a mutation in one unit of work with its idempotency record
// and receipt, or replays the recorded answer.
func (g *Gateway[T]) mutate(ctx context.Context, w http.ResponseWriter, rt Route[T], c *Call[T], status int) (int, error) {
	const op = "transport.mutate"
	rec, code, done, err := g.idempotencyRecord(w, rt, c)
	if done || err != nil {
		return code, err
	}

	var data []byte
	err = g.DB.InTx(ctx, func(tx T) error {
		c.Tx = tx
		out, err := rt.Handle(ctx, c)
		if err != nil {
			return err
		}
		code, data, err = g.complete(ctx, tx, rt, c, rec, status, out)
		return err
	})
	if errors.Is(err, errDuplicate) {
		return g.replayDuplicate(w, c, rec)
	}
	if err != nil {
		if code, done, rerr := g.lateReplay(w, rt, c, rec); done || rerr != nil {
			return code, rerr
		}
		g.failedReceipt(ctx, rt, c, err)
		return 0, err
	}
	for k, vs := range c.header {
		w.Header()[k] = vs
	}
	WriteData(w, code, c.RequestID, json.RawMessage(data))
	return code, nil
}

// idempotencyRecord prepares the idempotency record of a mutation (nil when
// the route or request takes none) and replays a completed one: done is
// true when the answer was written.
func (g *Gateway[T]) idempotencyRecord(w http.ResponseWriter, rt Route[T], c *Call[T]) (*idempotency.Record, int, bool, error) {
	const op = "transport.idempotency"
	if rt.Idempotency == IdempotencyNone || c.Principal == nil {
		return nil, 0, false, nil
	}
	key := c.Request.Header.Get(idempotency.Header)
	if key == "" && rt.Idempotency == IdempotencyRequired {
		return nil, 0, false, fault.E(op, fault.IdempotencyKeyRequired, "").With("field", idempotency.Header)
	}
	if key == "" {
		return nil, 0, false, nil
	}
	if err := idempotency.ValidKey(key); err != nil {
		return nil, 0, false, err
	}
	canon, err := idempotency.Canonical(c.body)
	if err != nil {
		// The handler's strict decoder reports the precise error.
		canon = c.body
	}
	rec := &idempotency.Record{
		Scope:       g.scope(c.Principal),
		Endpoint:    rt.OperationID,
		Key:         key,
		RequestHash: idempotency.RequestHash(g.Keyring, c.Principal.StableID(), rt.OperationID, append(pathParams(rt, c), headerParams(rt, c)...), canon),
	}
	if rt.LateReplay {
		return rec, 0, false, nil
	}
	// Fast path: a completed record replays without taking the writer.
	code, done, err := g.replay(w, c, rec)
	return rec, code, done, err
}

// lateReplay answers a failed request of a LateReplay route from a
// completed record of its key, as the read before the handler would have;
// done is false when there is none (the failure is the answer).
func (g *Gateway[T]) lateReplay(w http.ResponseWriter, rt Route[T], c *Call[T], rec *idempotency.Record) (int, bool, error) {
	if rec == nil || !rt.LateReplay {
		return 0, false, nil
	}
	return g.replay(w, c, rec)
}

// complete encodes the response and writes the receipt and, for an
// idempotent request, the idempotency record with the response (sealed
// when it carries a one-time secret), all in the unit of work. The record
// is the handler's last write (only the unit's BeforeCommit functions, such
// as a credit reservation, write after it): when another request holds the
// key it returns errDuplicate and the whole unit rolls back.
func (g *Gateway[T]) complete(ctx context.Context, tx T, rt Route[T], c *Call[T], rec *idempotency.Record, status int, out any) (int, []byte, error) {
	code := status
	if c.status != 0 {
		code = c.status
	}
	data, err := json.Marshal(out)
	if err != nil {
		return 0, nil, fault.Wrap("transport.complete", err)
	}
	if err := tx.ReceiptInsert(ctx, g.receipt(rt, c, code)); err != nil {
		return 0, nil, err
	}
	if rec != nil {
		r := *rec
		r.ID, r.ExpiresAt, r.Status, r.Body = tx.NewID("idem_"), tx.Now().Add(g.IdempotencyTTL), code, data
		r.Headers = storedHeaders(rt, c)
		if rt.SealResponse {
			r.Body, r.Sealed = g.Keyring.Seal(data, []byte(r.ID)), true
		}
		// On PostgreSQL the insert may go to the server with a later
		// statement of the unit; a taken key then fails that statement (or
		// the commit) with errDuplicate, and the unit rolls back all the same.
		if err := tx.IdempotencyInsertLater(ctx, r, errDuplicate); err != nil {
			return 0, nil, err
		}
	}
	return code, data, nil
}

// replayDuplicate answers a request whose key another request committed
// first.
func (g *Gateway[T]) replayDuplicate(w http.ResponseWriter, c *Call[T], rec *idempotency.Record) (int, error) {
	code, done, err := g.replay(w, c, rec)
	if err != nil || done {
		return code, err
	}
	return 0, fault.E("transport.replay", fault.IdempotencyInProgress, "")
}

// replay answers from a completed record: its stored response (status,
// body and the documented headers the first answer carried) when the
// request hash matches, 409 IDEMPOTENCY_CONFLICT when it does not. done is
// false when no completed record exists.
func (g *Gateway[T]) replay(w http.ResponseWriter, c *Call[T], rec *idempotency.Record) (int, bool, error) {
	const op = "transport.replay"
	got, err := g.DB.Read().IdempotencyGet(c.Request.Context(), rec.Scope, rec.Endpoint, rec.Key)
	if fault.Is(err, fault.NotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if got.RequestHash != rec.RequestHash {
		return 0, true, fault.E(op, fault.IdempotencyConflict, "").With("field", idempotency.Header)
	}
	body := got.Body
	if got.Sealed {
		if body, err = g.Keyring.Open(got.Body, []byte(got.ID)); err != nil {
			return 0, true, fault.Wrap(op, err)
		}
	}
	for k, v := range got.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set(idempotency.ReplayedHeader, "true")
	WriteData(w, got.Status, c.RequestID, json.RawMessage(body))
	return got.Status, true, nil
}

func (g *Gateway[T]) scope(p *access.Principal) idempotency.Scope {
	return idempotency.Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment)}
}

// headerParams lists the route's documented request headers
// (Route.Headers) with their values, in table order: a header that
// carries part of the request joins its hash.
func headerParams[T Tx](rt Route[T], c *Call[T]) []string {
	var out []string
	for _, h := range rt.Headers {
		out = append(out, "header:"+http.CanonicalHeaderKey(h.Name)+"="+c.Request.Header.Get(h.Name))
	}
	return out
}

// storedHeaders are the documented response headers c set, which its
// idempotency record keeps (Route.ReplayedHeaders); nil when none.
func storedHeaders[T Tx](rt Route[T], c *Call[T]) map[string]string {
	var out map[string]string
	for _, name := range rt.ReplayedHeaders() {
		if v := c.header.Get(name); v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

// pathParams lists the route's path values in pattern order.
func pathParams[T Tx](rt Route[T], c *Call[T]) []string {
	var out []string
	for _, seg := range strings.Split(rt.Pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			name := strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}")
			out = append(out, name+"="+c.Request.PathValue(name))
		}
	}
	return out
}

func (g *Gateway[T]) receipt(rt Route[T], c *Call[T], code int) idempotency.Receipt {
	r := idempotency.Receipt{RequestID: c.RequestID, Method: c.Request.Method, OperationID: rt.OperationID, Status: code}
	if p := c.Principal; p != nil {
		r.TenantID, r.WorkspaceID, r.Environment, r.Principal = p.TenantID, p.WorkspaceID, string(p.Environment), p.StableID()
	}
	return r
}

// failedReceipt records a mutation that did not commit, in its own unit of
// work, so the receipt trail shows refused and failed requests too.
func (g *Gateway[T]) failedReceipt(ctx context.Context, rt Route[T], c *Call[T], cause error) {
	if c.Principal == nil {
		return
	}
	code := StatusOf(fault.CodeOf(cause))
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx T) error {
		return tx.ReceiptInsert(ctx, g.receipt(rt, c, code))
	})
	if err != nil {
		g.Log.Error("receipt write failed", "requestId", c.RequestID, "err", err)
	}
}

// write answers a read (or a streamed mutation): the envelope around data,
// or what data writes when it is a Writer.
func (g *Gateway[T]) write(w http.ResponseWriter, c *Call[T], status int, data any) (int, error) {
	if c.status != 0 {
		status = c.status
	}
	for k, vs := range c.header {
		w.Header()[k] = vs
	}
	if wr, ok := data.(Writer); ok {
		return wr.WriteResponse(&deadlineWriter{ResponseWriter: w}, c.Request), nil
	}
	meta := Meta{RequestID: c.RequestID}
	if !c.timestamp.IsZero() {
		meta.Timestamp = &c.timestamp
	}
	WriteDataMeta(w, status, meta, data)
	return status, nil
}

// streamBody bounds the body of a Stream route without reading it: a
// declared length over limit is 413 at once, a longer stream fails the
// handler's read with *http.MaxBytesError (see StreamReadError).
func streamBody(w http.ResponseWriter, r *http.Request, limit int64) error {
	if r.ContentLength > limit {
		return TooLarge("transport.streamBody", limit)
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return nil
}

// TooLarge is the 413 of a body over limit.
func TooLarge(op string, limit int64) error {
	return fault.E(op, fault.PayloadTooLarge, fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit)).With("limit", limit)
}

// StreamReadError maps a Stream handler's body read failure: over the
// route's BodyLimit (*http.MaxBytesError) is PAYLOAD_TOO_LARGE with
// details.limit; any other error is returned as is.
func StreamReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return TooLarge("transport.StreamReadError", mbe.Limit)
	}
	return err
}

// checkStreamType admits a Stream route's body only in one of its media
// types; anything else is UNSUPPORTED_MEDIA_TYPE.
func checkStreamType(r *http.Request, accepted []string) error {
	if len(accepted) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && slices.Contains(accepted, mt) {
		return nil
	}
	return fault.E("transport.checkStreamType", fault.UnsupportedMediaType, "The request body's content type is not one this route takes.").
		With("contentType", ct).With("accepted", accepted)
}

// stream runs a Stream or OwnUnitOfWork mutation: the handler runs outside
// any transaction and calls c.Commit once for its unit of work, which writes the
// receipt in the same transaction. No idempotency record is kept.
func (g *Gateway[T]) stream(ctx context.Context, w http.ResponseWriter, rt Route[T], c *Call[T], status int) (int, error) {
	const op = "transport.stream"
	rec, code, done, err := g.idempotencyRecord(w, rt, c)
	if done || err != nil {
		return code, err
	}
	c.Tx = g.DB.Read()
	code = status
	var data []byte
	c.commitFunc = func(ctx context.Context, fn func(tx T) (any, error)) (any, error) {
		var out any
		err := g.DB.InTx(ctx, func(tx T) error {
			c.Tx = tx
			var err error
			if out, err = fn(tx); err != nil {
				return err
			}
			if out == nil {
				// Commit (not CommitResult): the handler's return value is
				// the response; only the receipt is written here.
				if rec != nil {
					return fault.Wrap(op, fmt.Errorf("route %s takes an Idempotency-Key but committed without CommitResult", rt.OperationID))
				}
				if c.status != 0 {
					code = c.status
				}
				return tx.ReceiptInsert(ctx, g.receipt(rt, c, code))
			}
			code, data, err = g.complete(ctx, tx, rt, c, rec, status, out)
			return err
		})
		c.Tx = g.DB.Read()
		if err == nil {
			c.committed = true
		}
		return out, err
	}
	if rt.EventStream != "" {
		c.events = &EventStream{w: w, rc: http.NewResponseController(w), header: func() http.Header { return c.header }, reqID: c.RequestID}
	}
	out, err := rt.Handle(ctx, c)
	if c.events.Started() {
		// The answer is the stream the handler wrote: nothing follows it.
		if err != nil {
			g.Log.LogAttrs(ctx, slog.LevelWarn, "event stream ended with an error", slog.String("requestId", c.RequestID),
				slog.String("operation", rt.OperationID), slog.String("err", err.Error()))
		}
		return http.StatusOK, nil
	}
	if errors.Is(err, errDuplicate) {
		return g.replayDuplicate(w, c, rec)
	}
	if err != nil {
		if c.committed {
			return 0, err
		}
		if code, done, rerr := g.lateReplay(w, rt, c, rec); done || rerr != nil {
			return code, rerr
		}
		g.failedReceipt(ctx, rt, c, err)
		return 0, err
	}
	if !c.committed {
		return 0, fault.Wrap(op, fmt.Errorf("route %s returned without committing its unit of work", rt.OperationID))
	}
	if data != nil {
		for k, vs := range c.header {
			w.Header()[k] = vs
		}
		WriteData(w, code, c.RequestID, json.RawMessage(data))
		return code, nil
	}
	return g.write(w, c, code, out)
}

// Large transfers. A host bounds ordinary requests with its server's
// ReadTimeout and WriteTimeout (the example host: 30 and 60 seconds, ample
// for JSON bodies of at most a few MiB). Two kinds of request move more
// and get deadlines of their own, set through http.ResponseController:
//   - Stream routes (uploads): read and write deadlines of
//     TransferDeadline(the route's BodyLimit) from the request's start;
//   - responses a handler streams itself (Writer: asset downloads): a write
//     deadline of TransferDeadline(its Content-Length) from when its
//     headers are written.
//
// A connection whose server cannot set deadlines keeps the server's.
const (
	// TransferGrace is the fixed part of a large transfer's deadline.
	TransferGrace = time.Minute
	// MinTransferRate is the slowest transfer, in bytes per second, that a
	// large transfer's deadline allows for: 256 KiB/s (about 2 Mbit/s).
	MinTransferRate = 256 << 10
)

// TransferDeadline is how long a transfer of n bytes may take:
// TransferGrace plus n at MinTransferRate (a 200 MiB upload: 14 minutes
// 20 seconds).
func TransferDeadline(n int64) time.Duration {
	return TransferGrace + time.Duration(max(n, 0)/MinTransferRate)*time.Second
}

// extendDeadlines sets w's connection's write deadline, and its read
// deadline when read is set, to d from now.
func extendDeadlines(w http.ResponseWriter, read bool, d time.Duration) {
	rc := http.NewResponseController(w)
	at := time.Now().Add(d)
	if read {
		_ = rc.SetReadDeadline(at) // http.ErrNotSupported: the server's deadline holds
	}
	_ = rc.SetWriteDeadline(at)
}

// deadlineWriter gives a streamed response a write deadline from its
// Content-Length when its headers are written.
type deadlineWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

// WriteHeader sets the deadline, then writes the headers.
func (d *deadlineWriter) WriteHeader(code int) {
	if !d.wroteHeader && code >= http.StatusOK {
		d.wroteHeader = true
		if n, err := strconv.ParseInt(d.Header().Get("Content-Length"), 10, 64); err == nil && n > 0 {
			extendDeadlines(d.ResponseWriter, false, TransferDeadline(n))
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

// Write writes the headers first if the handler did not.
func (d *deadlineWriter) Write(b []byte) (int, error) {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(b)
}

// ReadFrom copies through the connection's own ReaderFrom.
func (d *deadlineWriter) ReadFrom(r io.Reader) (int64, error) {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	return io.Copy(d.ResponseWriter, r)
}

// Unwrap returns the connection's writer, for http.ResponseController.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
