package transport

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/creatormusic/platform/fault"
)

// NewMux registers every route of the table on a net/http.ServeMux and
// returns it wrapped in a fallback that answers unknown paths with 404
// ROUTE_NOT_FOUND and known paths asked with another method with 405
// METHOD_NOT_ALLOWED (and an Allow header), both in the error envelope.
//
// Routes with Raw set are registered as they are; the others are registered
// as serve(route), which runs the gateway. Routes with Via set are served
// through one handler registered at Via that dispatches to them by their own
// patterns (design.md, Router note). NewMux validates the table first and
// reports every problem it finds.
func NewMux[T Tx](routes []Route[T], serve func(Route[T]) http.Handler, log *slog.Logger) (http.Handler, error) {
	if err := validateRoutes(routes); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	m := &mux{inner: http.NewServeMux(), groups: map[string]*http.ServeMux{}, log: log}
	viaGroups := map[string]*http.ServeMux{}
	for _, r := range routes {
		h := checkedRaw(r, log)
		if h == nil {
			if serve == nil {
				return nil, fmt.Errorf("transport: route %s: no serve function for a gateway route", r.OperationID)
			}
			h = serve(r)
		}
		if r.Via == "" {
			if err := register(m.inner, muxPattern(r.Method, r.Pattern), h); err != nil {
				return nil, fmt.Errorf("transport: route %s: %w", r.OperationID, err)
			}
			continue
		}
		key := muxPattern(r.Method, r.Via)
		g := viaGroups[key]
		if g == nil {
			g = http.NewServeMux()
			viaGroups[key] = g
		}
		if err := register(g, muxPattern(r.Method, r.Pattern), h); err != nil {
			return nil, fmt.Errorf("transport: route %s: %w", r.OperationID, err)
		}
	}
	for key, g := range viaGroups {
		if err := register(m.inner, key, m.dispatch(g)); err != nil {
			return nil, fmt.Errorf("transport: via pattern %q: %w", key, err)
		}
		m.groups[key] = g
	}
	m.methods = tableMethods(routes)
	return m, nil
}

// checkedRaw returns a Raw route's handler behind the gateway's text check:
// a path value or declared query parameter holding a control character or
// invalid UTF-8 is 400 INVALID_INPUT before the route's own code runs. Nil
// for a gateway route.
func checkedRaw[T Tx](rt Route[T], log *slog.Logger) http.Handler {
	if rt.Raw == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkRequestText(r, rt); err != nil {
			reqID := RequestID(r)
			w.Header().Set("X-Request-Id", reqID)
			WriteError(w, log, reqID, err)
			return
		}
		rt.Raw.ServeHTTP(w, r)
	})
}

// mux is the registered ServeMux plus the fallback built from the table.
type mux struct {
	inner *http.ServeMux
	// groups holds, by the registered Via pattern, the mux of the routes it serves.
	groups  map[string]*http.ServeMux
	methods []string
	log     *slog.Logger
}

// ServeHTTP serves r through the registered routes, or answers 404 or 405.
func (m *mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := m.inner.Handler(r); pattern == "" {
		m.fallback(w, r)
		return
	}
	m.inner.ServeHTTP(w, r)
}

// dispatch serves a Via group: the group's own mux picks the route, and a
// path none of them serves falls back to 404 or 405.
func (m *mux) dispatch(g *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := g.Handler(r); pattern == "" {
			m.fallback(w, r)
			return
		}
		g.ServeHTTP(w, r)
	})
}

// fallback answers a request no route serves.
func (m *mux) fallback(w http.ResponseWriter, r *http.Request) {
	id := RequestID(r)
	allowed := m.allowed(r)
	if len(allowed) == 0 {
		WriteError(w, m.log, id, fault.E("transport.route", fault.RouteNotFound, ""))
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	err := fault.E("transport.route", fault.MethodNotAllowed, "").With("allowed", allowed)
	WriteError(w, m.log, id, err)
}

// allowed returns the table's methods that some route serves for r's path.
func (m *mux) allowed(r *http.Request) []string {
	var out []string
	for _, method := range m.methods {
		if method != r.Method && m.matches(method, r) {
			out = append(out, method)
		}
	}
	return out
}

// matches reports whether a route serves r's path under method.
func (m *mux) matches(method string, r *http.Request) bool {
	probe := &http.Request{Method: method, URL: r.URL, Host: r.Host, Header: http.Header{}}
	_, pattern := m.inner.Handler(probe)
	if pattern == "" {
		return false
	}
	if g, ok := m.groups[pattern]; ok {
		_, pattern = g.Handler(probe)
		return pattern != ""
	}
	return true
}

// tableMethods returns the distinct methods of the table, sorted.
func tableMethods[T Tx](routes []Route[T]) []string {
	var out []string
	for _, r := range routes {
		out = append(out, r.Method)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// muxPattern returns the ServeMux pattern of a route: the method, a space and
// the path, with {$} appended to a path ending in "/" so that it matches only
// itself.
func muxPattern(method, path string) string {
	if strings.HasSuffix(path, "/") {
		path += "{$}"
	}
	return method + " " + path
}

// register adds h under pattern, turning ServeMux's panic on an invalid or
// conflicting pattern into an error.
func register(m *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("register %q: %v", pattern, p)
		}
	}()
	m.Handle(pattern, h)
	return nil
}

// routeMethods returns the methods a route may declare.
func routeMethods() []string {
	return []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
}

// validateRoutes checks the table and joins every problem found.
func validateRoutes[T Tx](routes []Route[T]) error {
	var errs []error
	ids := map[string]bool{}
	patterns := map[string]string{}
	for i, r := range routes {
		name := r.OperationID
		if name == "" {
			name = fmt.Sprintf("#%d (%s %s)", i, r.Method, r.Pattern)
		}
		for _, p := range validateRoute(r) {
			errs = append(errs, fmt.Errorf("transport: route %s: %s", name, p))
		}
		if r.OperationID != "" {
			if ids[r.OperationID] {
				errs = append(errs, fmt.Errorf("transport: route %s: duplicate operation id", name))
			}
			ids[r.OperationID] = true
		}
		key := r.Method + " " + r.Pattern
		if prev, ok := patterns[key]; ok {
			errs = append(errs, fmt.Errorf("transport: route %s: %s already registered by %s", name, key, prev))
		} else {
			patterns[key] = name
		}
	}
	for _, r := range routes {
		if r.Via == "" {
			continue
		}
		if prev, ok := patterns[r.Method+" "+r.Via]; ok {
			errs = append(errs, fmt.Errorf("transport: route %s: via pattern %s %s is a route of its own (%s)", r.OperationID, r.Method, r.Via, prev))
		}
	}
	return errors.Join(errs...)
}

// validateRoute returns the problems of one route.
func validateRoute[T Tx](r Route[T]) []string {
	var out []string
	if !slices.Contains(routeMethods(), r.Method) {
		out = append(out, fmt.Sprintf("method %q is not one of %v", r.Method, routeMethods()))
	}
	out = append(out, validatePath("pattern", r.Pattern)...)
	if r.OperationID == "" {
		out = append(out, "missing operation id")
	}
	if r.Via != "" {
		out = append(out, validatePath("via", r.Via)...)
		if !viaServes(r.Via, r.Pattern) {
			out = append(out, fmt.Sprintf("via pattern %q does not match pattern %q", r.Via, r.Pattern))
		}
	}
	if r.Auth != "" && !slices.Contains([]AuthMode{AuthPublic, AuthSession, AuthKey, AuthSessionOrKey, AuthInternal}, r.Auth) {
		out = append(out, fmt.Sprintf("unknown auth mode %q", r.Auth))
	}
	if r.Idempotency != "" && !slices.Contains([]Idempotency{IdempotencyNone, IdempotencyOptional, IdempotencyRequired}, r.Idempotency) {
		out = append(out, fmt.Sprintf("unknown idempotency %q", r.Idempotency))
	}
	if r.Maturity != "" && !slices.Contains([]Maturity{Preview, Live, Verified}, r.Maturity) {
		out = append(out, fmt.Sprintf("unknown maturity %q", r.Maturity))
	}
	if r.Status != 0 && (r.Status < 200 || r.Status > 299) {
		out = append(out, fmt.Sprintf("success status %d is not 2xx", r.Status))
	}
	for _, o := range r.Outcomes {
		if o.Status < 300 || o.Status > 599 || o.Status == r.ExistingStatus {
			out = append(out, fmt.Sprintf("outcome status %d is not a 3xx, 4xx or 5xx status of its own", o.Status))
		}
		if o.Text == "" {
			out = append(out, fmt.Sprintf("outcome status %d has no text", o.Status))
		}
	}
	for _, h := range r.Headers {
		if h.Name == "" || strings.EqualFold(h.Name, "Idempotency-Key") || strings.EqualFold(h.Name, "Authorization") {
			out = append(out, fmt.Sprintf("request header %q is not a header of the request's own", h.Name))
		}
	}
	if r.Raw != nil && r.Handle != nil {
		out = append(out, "both Raw and Handle are set")
	}
	if r.Raw == nil && !r.Internal {
		out = append(out, missingDocs(r)...)
	}
	if r.Raw == nil && r.Internal && r.Handle == nil {
		out = append(out, "missing Handle")
	}
	if r.Stream && r.Idempotency != "" && r.Idempotency != IdempotencyNone {
		out = append(out, "a Stream route takes no Idempotency-Key")
	}
	if r.OwnUnitOfWork && r.Stream {
		out = append(out, "an OwnUnitOfWork route is not a Stream route")
	}
	if r.Stream && r.Request != nil {
		out = append(out, "a Stream route has no JSON Request")
	}
	return out
}

// missingDocs returns what a public JSON route lacks to be served and documented.
func missingDocs[T Tx](r Route[T]) []string {
	var out []string
	if r.Tag == "" {
		out = append(out, "missing Tag")
	}
	if r.Summary == "" {
		out = append(out, "missing Summary")
	}
	if r.Handle == nil {
		out = append(out, "missing Handle")
	}
	if r.Response == nil && len(r.ResponseContentTypes) == 0 {
		out = append(out, "missing Response")
	}
	if r.Auth == "" {
		out = append(out, "missing Auth")
	}
	return out
}

// validatePath checks a table path: it starts with "/", carries no method,
// and does not end in "{$}" (the mux adds it).
func validatePath(what, p string) []string {
	var out []string
	if !strings.HasPrefix(p, "/") {
		out = append(out, fmt.Sprintf("%s %q does not start with /", what, p))
	}
	if strings.ContainsAny(p, " \t") {
		out = append(out, fmt.Sprintf("%s %q contains white space", what, p))
	}
	if strings.HasSuffix(p, "{$}") {
		out = append(out, fmt.Sprintf("%s %q ends in {$}; the mux adds it", what, p))
	}
	return out
}

// viaServes reports whether the Via pattern matches the paths of pattern, by
// probing a mux holding via with a path built from pattern.
func viaServes(via, pattern string) bool {
	m := http.NewServeMux()
	if register(m, muxPattern(http.MethodGet, via), http.NotFoundHandler()) != nil {
		return false
	}
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			s = "x"
		}
		segs = append(segs, s)
	}
	req, err := http.NewRequest(http.MethodGet, strings.Join(segs, "/"), nil)
	if err != nil {
		return false
	}
	_, p := m.Handler(req)
	return p != ""
}

// RequestID returns the request's id: the client's X-Request-Id when it is
// 1 to 128 characters of [A-Za-z0-9._-], otherwise a fresh "req_" id.
func RequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); saneRequestID(id) {
		return id
	}
	return newRequestID()
}

// saneRequestID reports whether a client-sent id may be echoed.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// newRequestID returns "req_" and 32 random hex digits.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "req_" + hex.EncodeToString(b[:])
}

// wildcard matches a pattern's wildcards.
var wildcard = regexp.MustCompile(`\{([^{}]*)\}`)

// PatternParams returns the names of a pattern's wildcards, in order.
func PatternParams(pattern string) []string {
	var out []string
	for _, m := range wildcard.FindAllStringSubmatch(pattern, -1) {
		if name := strings.TrimSuffix(m[1], "..."); name != "$" && name != "" {
			out = append(out, name)
		}
	}
	return out
}
