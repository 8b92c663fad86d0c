package solanarpc_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeNode is a tiny JSON-RPC endpoint whose answers the test scripts
// byte for byte, for the envelopes chaintest never produces.
type fakeNode struct {
	srv *httptest.Server

	mu       sync.Mutex
	answers  map[string]func(id json.RawMessage) (int, string)
	requests []fakeRequest
}

// fakeRequest is a request the fake node received.
type fakeRequest struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	HasParams bool            `json:"-"`
	RawQuery  string          `json:"-"`
	// Auth is the Authorization header.
	Auth string `json:"-"`
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	f := &fakeNode{answers: map[string]func(json.RawMessage) (int, string){}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		fakeRequest
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(body, &keys)
	_, req.HasParams = keys["params"]
	req.RawQuery = r.URL.RawQuery
	req.Auth = r.Header.Get("Authorization")
	f.mu.Lock()
	f.requests = append(f.requests, req.fakeRequest)
	answer := f.answers[req.Method]
	f.mu.Unlock()
	if answer == nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":`+string(req.ID)+`}`)
		return
	}
	status, out := answer(req.ID)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, out)
}

// result scripts a success envelope with the given raw result.
func (f *fakeNode) result(method, result string) {
	f.raw(method, func(id json.RawMessage) (int, string) {
		return http.StatusOK, `{"jsonrpc":"2.0","result":` + result + `,"id":` + string(id) + `}`
	})
}

// rpcError scripts an error envelope with the given raw error object.
func (f *fakeNode) rpcError(method, errObj string) {
	f.raw(method, func(id json.RawMessage) (int, string) {
		return http.StatusOK, `{"jsonrpc":"2.0","error":` + errObj + `,"id":` + string(id) + `}`
	})
}

func (f *fakeNode) raw(method string, fn func(id json.RawMessage) (int, string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method] = fn
}

func (f *fakeNode) last(t *testing.T) fakeRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		t.Fatal("fake node received no request")
	}
	return f.requests[len(f.requests)-1]
}
