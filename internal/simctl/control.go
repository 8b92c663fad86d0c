package simctl

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Prefix is the path every control route is served under.
const Prefix = "/_sim"

// The reasons Bearer refuses a request; test them with errors.Is.
var (
	// ErrNoKey means the request has no Authorization header.
	ErrNoKey = errors.New("simctl: no Authorization header")
	// ErrNotBearer means the Authorization header is not "Bearer <key>"
	// with a key.
	ErrNotBearer = errors.New("simctl: Authorization is not Bearer <key>")
	// ErrWrongKey means the request presents a key other than the one
	// expected.
	ErrWrongKey = errors.New("simctl: wrong key")
)

// Bearer checks that r presents key as "Authorization: Bearer <key>",
// comparing the keys in constant time. It returns nil, ErrNoKey,
// ErrNotBearer or ErrWrongKey. An empty key is never presented: every
// request is refused with ErrWrongKey (or the missing-header reasons).
func Bearer(r *http.Request, key string) error {
	h := r.Header.Get("Authorization")
	if h == "" {
		return ErrNoKey
	}
	got, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || got == "" {
		return ErrNotBearer
	}
	if key == "" || subtle.ConstantTimeCompare([]byte(got), []byte(key)) != 1 {
		return ErrWrongKey
	}
	return nil
}

// ControlConfig configures a Control.
type ControlConfig struct {
	// Key is the control key a request must present as a Bearer token.
	// Required: a simulator usually passes its own API or secret key.
	Key string
	// RefuseFunc answers a request that does not present Key; err is
	// ErrNoKey, ErrNotBearer or ErrWrongKey. It lets a simulator refuse in
	// its own wire's error shape. Nil answers 401 with
	// WWW-Authenticate: Bearer and the JSON body {"error": "..."}.
	RefuseFunc func(w http.ResponseWriter, r *http.Request, err error)
}

// Control mounts a simulator's control routes under Prefix on the
// simulator's mux, each behind the control key. Paths under Prefix that no
// control route matches fall through to the simulator's own routes (its
// not-found answer), as any unknown path does.
type Control struct {
	mux        *http.ServeMux
	key        string
	refuseFunc func(w http.ResponseWriter, r *http.Request, err error)
}

// NewControl returns the control routes of the simulator serving mux.
func NewControl(mux *http.ServeMux, cfg ControlConfig) (*Control, error) {
	if mux == nil {
		return nil, errors.New("simctl: control: nil mux")
	}
	if cfg.Key == "" {
		return nil, errors.New("simctl: control: empty key")
	}
	c := &Control{mux: mux, key: cfg.Key, refuseFunc: cfg.RefuseFunc}
	if c.refuseFunc == nil {
		c.refuseFunc = refuse
	}
	return c, nil
}

// refuse is the default answer to a request without the control key.
func refuse(w http.ResponseWriter, _ *http.Request, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="simulator control"`)
	WriteError(w, http.StatusUnauthorized, "control routes need Authorization: Bearer <control key>: "+err.Error())
}

// Authorized reports whether r presents the control key, answering the
// refusal itself when it does not.
func (c *Control) Authorized(w http.ResponseWriter, r *http.Request) bool {
	if err := Bearer(r, c.key); err != nil {
		c.refuseFunc(w, r, err)
		return false
	}
	return true
}

// Handle registers h for pattern under Prefix, behind the control key:
// "POST /tasks/{id}/advance" serves POST /_sim/tasks/{id}/advance. The
// pattern is a net/http pattern with an optional method and a path that
// starts with a slash; like ServeMux.Handle, Handle panics on a pattern the
// mux refuses.
func (c *Control) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	path = strings.TrimLeft(path, " \t")
	if !strings.HasPrefix(path, "/") {
		panic(fmt.Sprintf("simctl: control pattern %q: the path must start with /", pattern))
	}
	full := Prefix + path
	if method != "" {
		full = method + " " + full
	}
	c.mux.Handle(full, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.Authorized(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// HandleFunc registers f for pattern under Prefix, as Handle does.
func (c *Control) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	c.Handle(pattern, http.HandlerFunc(f))
}

// WriteJSON answers status with v as JSON, not cached.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]any{"error": "simctl: render answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// WriteError answers status with the body {"error": msg}, the error shape
// of the control routes that have no wire of their own to follow.
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, map[string]any{"error": msg})
}
