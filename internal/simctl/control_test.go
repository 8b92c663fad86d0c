package simctl

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBearer(t *testing.T) {
	cases := []struct {
		header string
		want   error
	}{
		{"", ErrNoKey},
		{"Basic a2V5", ErrNotBearer},
		{"Bearer ", ErrNotBearer},
		{"bearer sk_sim", ErrNotBearer},
		{"Bearer sk_sim2", ErrWrongKey},
		{"Bearer sk_si", ErrWrongKey},
		{"Bearer  sk_sim", ErrWrongKey},
		{"Bearer sk_sim", nil},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if err := Bearer(r, "sk_sim"); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("Bearer(%q) = %v, want %v", c.header, err, c.want)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer ")
	if err := Bearer(r, ""); err == nil {
		t.Fatal("an empty key let a request through")
	}
}

// do sends a request to h and returns the status and body.
func do(t *testing.T, h http.Handler, method, target, key string, body io.Reader) (int, string) {
	t.Helper()
	r := httptest.NewRequest(method, target, body)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func TestControlRefusesWithoutTheKey(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "sim not found", http.StatusNotFound) })
	c, err := NewControl(mux, ControlConfig{Key: "ctl-key"})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	c.HandleFunc("POST /tasks/{id}/advance", func(w http.ResponseWriter, r *http.Request) {
		ran++
		WriteJSON(w, http.StatusOK, map[string]any{"task": r.PathValue("id")})
	})
	for _, key := range []string{"", "other-key", "ctl-ke"} {
		status, body := do(t, mux, http.MethodPost, "/_sim/tasks/t1/advance", key, nil)
		if status != http.StatusUnauthorized || !strings.Contains(body, `"error"`) {
			t.Fatalf("key %q: %d %s", key, status, body)
		}
	}
	if ran != 0 {
		t.Fatalf("the handler ran %d times without the key", ran)
	}
	status, body := do(t, mux, http.MethodPost, "/_sim/tasks/t1/advance", "ctl-key", nil)
	if status != http.StatusOK || strings.TrimSpace(body) != `{"task":"t1"}` || ran != 1 {
		t.Fatalf("with the key: %d %s (ran %d)", status, body, ran)
	}
	// A path no control route serves is the simulator's own not-found,
	// with or without the key, and the route is not served off Prefix.
	for _, target := range []string{"/_sim/nothing", "/tasks/t1/advance"} {
		if status, body := do(t, mux, http.MethodPost, target, "ctl-key", nil); status != http.StatusNotFound || !strings.Contains(body, "sim not found") {
			t.Fatalf("%s: %d %s", target, status, body)
		}
	}
}

func TestControlRefuseFuncAnswersInTheSimulatorsShape(t *testing.T) {
	mux := http.NewServeMux()
	var reasons []error
	c, err := NewControl(mux, ControlConfig{Key: "k", RefuseFunc: func(w http.ResponseWriter, r *http.Request, err error) {
		reasons = append(reasons, err)
		w.WriteHeader(http.StatusTeapot)
	}})
	if err != nil {
		t.Fatal(err)
	}
	c.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, h := range []string{"", "Token k", "Bearer x"} {
		r := httptest.NewRequest(http.MethodGet, "/_sim/events", nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusTeapot {
			t.Fatalf("%q: %d", h, w.Code)
		}
	}
	if len(reasons) != 3 || !errors.Is(reasons[0], ErrNoKey) || !errors.Is(reasons[1], ErrNotBearer) || !errors.Is(reasons[2], ErrWrongKey) {
		t.Fatalf("reasons = %v", reasons)
	}
	if status, _ := do(t, mux, http.MethodGet, "/_sim/events", "k", nil); status != http.StatusNoContent {
		t.Fatalf("with the key: %d", status)
	}
}

func TestNewControlNeedsAKey(t *testing.T) {
	if _, err := NewControl(http.NewServeMux(), ControlConfig{}); err == nil {
		t.Fatal("a control without a key was made")
	}
	if _, err := NewControl(nil, ControlConfig{Key: "k"}); err == nil {
		t.Fatal("a control without a mux was made")
	}
}
