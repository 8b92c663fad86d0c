package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// muxRoute returns a valid public JSON route.
func muxRoute(method, pattern, id string) Route[Tx] {
	return Route[Tx]{
		Method: method, Pattern: pattern, OperationID: id, Tag: TagTokenSale, Summary: id, Auth: AuthPublic,
		Response: struct{}{},
		Handle:   func(context.Context, *Call[Tx]) (any, error) { return nil, nil },
	}
}

// muxServe stands in for the gateway: it answers with the operation id and
// the path values named in the pattern.
func muxServe(rt Route[Tx]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := rt.OperationID
		for _, name := range PatternParams(rt.Pattern) {
			out += " " + name + "=" + r.PathValue(name)
		}
		_, _ = w.Write([]byte(out))
	})
}

// muxTable is a table with the spec's awkward shapes.
func muxTable() []Route[Tx] {
	views := func(view, id string) Route[Tx] {
		r := muxRoute(http.MethodGet, "/api/v1/token-sales/{saleId}/"+view, id)
		r.Via = "/api/v1/token-sales/{saleId}/{view}"
		return r
	}
	return []Route[Tx]{
		muxRoute(http.MethodGet, "/api/v1/token-sales/current", "getCurrentTokenSale"),
		muxRoute(http.MethodGet, "/api/v1/token-sales/{saleId}", "getTokenSale"),
		views("disclosures", "getTokenSaleDisclosures"),
		views("verification", "getTokenSaleVerification"),
		views("markets", "getTokenSaleMarkets"),
		muxRoute(http.MethodPost, "/api/v1/token-sales/{saleId}/access-intents", "createTokenSaleAccessIntent"),
		muxRoute(http.MethodGet, "/api/v1/token-sales/access-intents/{accessIntentId}", "getTokenSaleAccessIntent"),
		muxRoute(http.MethodGet, "/api/v1/api-keys", "listApiKeys"),
		muxRoute(http.MethodPost, "/api/v1/api-keys", "createApiKey"),
		muxRoute(http.MethodGet, "/api/v1/api-keys/usage", "getApiKeyUsage"),
		muxRoute(http.MethodDelete, "/api/v1/api-keys/{keyId}", "revokeApiKey"),
		{Method: http.MethodGet, Pattern: "/api/docs/", OperationID: "docs", Raw: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("docs page"))
		})},
	}
}

// newTestMux builds the mux of muxTable.
func newTestMux(t *testing.T) http.Handler {
	t.Helper()
	h, err := NewMux(muxTable(), muxServe, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("NewMux() = %v", err)
	}
	return h
}

func TestMuxResolvesMostSpecificPattern(t *testing.T) {
	h := newTestMux(t)
	tests := []struct{ method, path, want string }{
		{"GET", "/api/v1/token-sales/current", "getCurrentTokenSale"},
		{"GET", "/api/v1/token-sales/sale_1", "getTokenSale saleId=sale_1"},
		{"GET", "/api/v1/token-sales/sale_1/disclosures", "getTokenSaleDisclosures saleId=sale_1"},
		{"GET", "/api/v1/token-sales/sale_1/verification", "getTokenSaleVerification saleId=sale_1"},
		{"GET", "/api/v1/token-sales/sale_1/markets", "getTokenSaleMarkets saleId=sale_1"},
		{"POST", "/api/v1/token-sales/sale_1/access-intents", "createTokenSaleAccessIntent saleId=sale_1"},
		{"GET", "/api/v1/token-sales/access-intents/ai_1", "getTokenSaleAccessIntent accessIntentId=ai_1"},
		{"GET", "/api/v1/api-keys", "listApiKeys"},
		{"POST", "/api/v1/api-keys", "createApiKey"},
		{"GET", "/api/v1/api-keys/usage", "getApiKeyUsage"},
		{"DELETE", "/api/v1/api-keys/key_1", "revokeApiKey keyId=key_1"},
		{"GET", "/api/docs/", "docs page"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != http.StatusOK || rec.Body.String() != tt.want {
			t.Errorf("%s %s = %d %q, want 200 %q", tt.method, tt.path, rec.Code, rec.Body.String(), tt.want)
		}
	}
}

// muxFailure serves a request and decodes the error envelope.
func muxFailure(t *testing.T, h http.Handler, r *http.Request) (*httptest.ResponseRecorder, ErrorEnvelope) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, body %q: not the envelope", r.Method, r.URL.Path, ct, rec.Body.String())
	}
	var env ErrorEnvelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	return rec, env
}

func TestMuxUnknownPath(t *testing.T) {
	h := newTestMux(t)
	for _, path := range []string{
		"/nope",
		"/api/v1/api-keys/key_1/extra",
		"/api/docs/anything",              // the docs page is an exact path
		"/api/v1/token-sales/sale_1/else", // under the via pattern, no view
		"/api/v1/token-sales/access-intents/ai_1/x",
	} {
		rec, env := muxFailure(t, h, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound || env.Error.Code != fault.RouteNotFound {
			t.Errorf("GET %s = %d %s, want 404 ROUTE_NOT_FOUND", path, rec.Code, env.Error.Code)
		}
		if env.Meta.RequestID == "" || rec.Header().Get("X-Request-Id") != env.Meta.RequestID {
			t.Errorf("GET %s: request id %q, header %q", path, env.Meta.RequestID, rec.Header().Get("X-Request-Id"))
		}
	}
}

func TestMuxRedirectsToExactSlashPath(t *testing.T) {
	h := newTestMux(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/docs", nil))
	if rec.Code/100 != 3 || rec.Header().Get("Location") != "/api/docs/" {
		t.Errorf("GET /api/docs = %d to %q, want a redirect to /api/docs/", rec.Code, rec.Header().Get("Location"))
	}
}

func TestMuxWrongMethod(t *testing.T) {
	h := newTestMux(t)
	tests := []struct{ method, path, allow string }{
		{http.MethodPut, "/api/v1/api-keys", "GET, POST"},
		{http.MethodGet, "/api/v1/api-keys/key_1", "DELETE"},
		{http.MethodPost, "/api/v1/token-sales/current", "GET"},
		{http.MethodPost, "/api/v1/token-sales/sale_1/x/y", ""}, // no pattern under any method: 404
		{http.MethodDelete, "/api/v1/token-sales/sale_1/markets", "GET"},
		{http.MethodGet, "/api/v1/token-sales/sale_1/access-intents", "POST"},
		{http.MethodPost, "/api/docs/", "GET"},
	}
	for _, tt := range tests {
		rec, env := muxFailure(t, h, httptest.NewRequest(tt.method, tt.path, nil))
		if tt.allow == "" {
			if rec.Code != http.StatusNotFound || env.Error.Code != fault.RouteNotFound {
				t.Errorf("%s %s = %d %s, want 404 ROUTE_NOT_FOUND", tt.method, tt.path, rec.Code, env.Error.Code)
			}
			continue
		}
		if rec.Code != http.StatusMethodNotAllowed || env.Error.Code != fault.MethodNotAllowed {
			t.Errorf("%s %s = %d %s, want 405 METHOD_NOT_ALLOWED", tt.method, tt.path, rec.Code, env.Error.Code)
		}
		if got := rec.Header().Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
}

func TestMuxEchoesSaneRequestID(t *testing.T) {
	h := newTestMux(t)
	r := httptest.NewRequest(http.MethodGet, "/nope", nil)
	r.Header.Set("X-Request-Id", "client-id_1.2")
	if _, env := muxFailure(t, h, r); env.Meta.RequestID != "client-id_1.2" {
		t.Errorf("request id = %q, want the client's", env.Meta.RequestID)
	}
	for _, bad := range []string{"has space", strings.Repeat("a", 129), "semi;colon", "ünï"} {
		r := httptest.NewRequest(http.MethodGet, "/nope", nil)
		r.Header.Set("X-Request-Id", bad)
		if _, env := muxFailure(t, h, r); env.Meta.RequestID == bad || !strings.HasPrefix(env.Meta.RequestID, "req_") {
			t.Errorf("request id for %q = %q, want a generated one", bad, env.Meta.RequestID)
		}
	}
}

func TestRequestIDGeneratesDistinctIDs(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	a, b := RequestID(r), RequestID(r)
	if a == b || len(a) != len("req_")+32 {
		t.Errorf("RequestID() = %q, %q; want distinct req_ ids", a, b)
	}
}

func TestNewMuxRejectsBadTables(t *testing.T) {
	ok := func() Route[Tx] { return muxRoute(http.MethodGet, "/a", "getA") }
	tests := []struct {
		name   string
		routes []Route[Tx]
		want   string
	}{
		{"duplicate operation id", []Route[Tx]{ok(), muxRoute(http.MethodGet, "/b", "getA")}, "duplicate operation id"},
		{"duplicate method and pattern", []Route[Tx]{ok(), muxRoute(http.MethodGet, "/a", "getA2")}, "already registered"},
		{"bad method", []Route[Tx]{muxRoute("HEAD", "/a", "headA")}, "method"},
		{"relative pattern", []Route[Tx]{muxRoute(http.MethodGet, "a", "getA")}, "does not start with /"},
		{"explicit {$}", []Route[Tx]{muxRoute(http.MethodGet, "/a/{$}", "getA")}, "ends in {$}"},
		{"missing tag", []Route[Tx]{func() Route[Tx] { r := ok(); r.Tag = ""; return r }()}, "missing Tag"},
		{"missing summary", []Route[Tx]{func() Route[Tx] { r := ok(); r.Summary = ""; return r }()}, "missing Summary"},
		{"missing handle", []Route[Tx]{func() Route[Tx] { r := ok(); r.Handle = nil; return r }()}, "missing Handle"},
		{"missing response", []Route[Tx]{func() Route[Tx] { r := ok(); r.Response = nil; return r }()}, "missing Response"},
		{"unknown auth", []Route[Tx]{func() Route[Tx] { r := ok(); r.Auth = "magic"; return r }()}, "unknown auth"},
		{"2xx outcome", []Route[Tx]{func() Route[Tx] {
			r := ok()
			r.Outcomes = []Outcome{{Status: http.StatusAccepted, Text: "Accepted."}}
			return r
		}()}, "outcome status 202"},
		{"outcome without text", []Route[Tx]{func() Route[Tx] { r := ok(); r.Outcomes = []Outcome{{Status: http.StatusPaymentRequired}}; return r }()}, "no text"},
		{"idempotency key as a request header", []Route[Tx]{func() Route[Tx] {
			r := ok()
			r.Headers = []Param{{Name: "Idempotency-Key"}}
			return r
		}()}, "request header"},
		{"conflicting patterns", []Route[Tx]{
			muxRoute(http.MethodGet, "/s/access-intents/{id}", "getIntent"),
			muxRoute(http.MethodGet, "/s/{saleId}/markets", "getMarkets"),
		}, "conflicts"},
		{"via that does not match", []Route[Tx]{func() Route[Tx] {
			r := muxRoute(http.MethodGet, "/s/{saleId}/markets", "getMarkets")
			r.Via = "/other/{x}"
			return r
		}()}, "does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewMux(tt.routes, muxServe, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewMux() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewMuxAcceptsInternalAndRaw(t *testing.T) {
	internal := Route[Tx]{
		Method: http.MethodPost, Pattern: "/api/v1/internal/events/outbox/{id}/published", OperationID: "markOutboxPublished",
		Internal: true, Auth: AuthInternal, Handle: func(context.Context, *Call[Tx]) (any, error) { return nil, nil },
	}
	h, err := NewMux([]Route[Tx]{internal}, muxServe, nil)
	if err != nil {
		t.Fatalf("NewMux() = %v", err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/v1/internal/events/outbox/evt_1/published", nil))
	if rec.Body.String() != "markOutboxPublished id=evt_1" {
		t.Errorf("body = %q", rec.Body.String())
	}
}

func TestReplayedHeadersAreTheDocumentedOnes(t *testing.T) {
	r := muxRoute(http.MethodPost, "/pay", "pay")
	r.ResponseHeaders = map[string]string{"payment-response": "The settlement."}
	r.Outcomes = []Outcome{{Status: http.StatusPaymentRequired, Text: "Payment Required.",
		Headers: map[string]string{"PAYMENT-RESPONSE": "The failed settlement.", "Payment-Required": "The requirements."}}}
	if got, want := r.ReplayedHeaders(), []string{"Payment-Required", "Payment-Response"}; !slices.Equal(got, want) {
		t.Fatalf("ReplayedHeaders() = %v, want %v", got, want)
	}
	if got := muxRoute(http.MethodPost, "/b", "b").ReplayedHeaders(); got != nil {
		t.Fatalf("a route without documented headers keeps %v", got)
	}
}
