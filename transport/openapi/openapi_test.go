package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/transport"

	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

type oaLimits struct {
	RatePerMinute int `json:"ratePerMinute" doc:"Requests per minute." example:"60"`
	Concurrency   int `json:"concurrency,omitempty"`
}

type oaCreateKey struct {
	Name        string    `json:"name" example:"CI key"`
	Environment string    `json:"environment" enum:"test,live"`
	Limits      *oaLimits `json:"limits,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
}

type oaAPIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Secret     string     `json:"secret,omitempty" doc:"Shown once, on creation."`
	Limits     oaLimits   `json:"limits"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	Digest     []byte     `json:"digest,omitempty"`
}

type oaSale struct {
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Labels map[string]string `json:"labels,omitempty"`
}

type oaPage[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// oaNoop is a handler for documentation tests.
func oaNoop(context.Context, *transport.Call[transport.Tx]) (any, error) { return nil, nil }

// oaTable is a small table covering the document's features.
func oaTable() []transport.Route[transport.Tx] {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := oaAPIKey{ID: "key_01", Name: "CI key", Prefix: "platform_test_ab", Limits: oaLimits{RatePerMinute: 60}, Scopes: []string{"sound:write"}, CreatedAt: created}
	markets := transport.Route[transport.Tx]{
		Method: http.MethodGet, Pattern: "/api/v1/token-sales/{saleId}/markets", Via: "/api/v1/token-sales/{saleId}/{view}",
		OperationID: "getTokenSaleMarkets", Tag: transport.TagTokenSale, Summary: "Sale markets", Auth: transport.AuthPublic,
		Response: []oaSale{{ID: "sale_1", Status: "PLANNED"}}, Handle: oaNoop,
	}
	return []transport.Route[transport.Tx]{
		{
			Method: http.MethodPost, Pattern: "/api/v1/api-keys", OperationID: "createApiKey", Tag: transport.TagDeveloper,
			Summary: "Create an API key", Description: "Creates a key; the secret is shown once.",
			Auth: transport.AuthSession, Permission: access.Permission("developer.key.create"), Roles: []access.Role{access.RoleDeveloper},
			Idempotency: transport.IdempotencyRequired, SealResponse: true, Status: http.StatusCreated,
			Request:  oaCreateKey{Name: "CI key", Environment: "test"},
			Response: func() oaAPIKey { k := key; k.Secret = "platform_test_REPLACE_ME"; return k }(),
			Errors:   []string{string(fault.ReauthenticationRequired)},
			Handle:   oaNoop,
		},
		{
			Method: http.MethodGet, Pattern: "/api/v1/api-keys", OperationID: "listApiKeys", Tag: transport.TagDeveloper,
			Summary: "List API keys", Auth: transport.AuthSessionOrKey, Scope: "keys:read",
			Query:    []transport.Param{{Name: "limit", Description: "Page size.", Example: "20"}, {Name: "cursor"}},
			Response: oaPage[oaAPIKey]{Items: []oaAPIKey{key}}, Handle: oaNoop,
		},
		{
			Method: http.MethodGet, Pattern: "/api/v1/api-keys/{keyId}", OperationID: "getApiKey", Tag: transport.TagDeveloper,
			Summary: "Get an API key", Auth: transport.AuthKey, Maturity: transport.Live, Response: &key, Handle: oaNoop,
		},
		{
			Method: http.MethodGet, Pattern: "/api/v1/token-sales/current", OperationID: "getCurrentTokenSale", Tag: transport.TagTokenSale,
			Summary: "Current sale", Auth: transport.AuthPublic, Response: (*oaSale)(nil), Handle: oaNoop,
		},
		markets,
		{
			Method: http.MethodGet, Pattern: "/api/docs/", OperationID: "getApiDocs", Tag: transport.TagTooling, Summary: "Docs",
			Auth: transport.AuthPublic, Raw: http.NotFoundHandler(), Page: true,
		},
		{
			Method: http.MethodGet, Pattern: "/api/docs/openapi.json", OperationID: "getOpenApiDocument", Tag: transport.TagTooling,
			Summary: "Document", Auth: transport.AuthPublic, Raw: http.NotFoundHandler(),
		},
		{
			Method: http.MethodPost, Pattern: "/api/v1/internal/callbacks/{provider}", OperationID: "receiveProviderCallback",
			Internal: true, Auth: transport.AuthPublic, Raw: http.NotFoundHandler(),
		},
	}
}

// oaModel generates and parses the document of oaTable.
func oaModel(t *testing.T) ([]byte, *v3.Document) {
	t.Helper()
	doc, err := OpenAPI(oaTable(), Info{Title: "platform API", Description: "Test document."})
	if err != nil {
		t.Fatalf("OpenAPI() = %v", err)
	}
	parsed, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("libopenapi.NewDocument() = %v", err)
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		t.Fatalf("BuildV3Model() = %v", err)
	}
	return doc, &model.Model
}

func TestOpenAPIDocumentsExactlyThePublicRoutes(t *testing.T) {
	_, model := oaModel(t)
	if model.Version != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", model.Version)
	}
	if model.Info.Version != transport.ContractVersion {
		t.Errorf("info.version = %q, want %s", model.Info.Version, transport.ContractVersion)
	}
	var got []string
	for path, item := range model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			got = append(got, strings.ToUpper(method)+" "+path)
		}
	}
	var want []string
	for _, r := range oaTable() {
		if !r.Internal && !r.Page {
			want = append(want, r.Method+" "+r.Pattern)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documented operations (-want +got):\n%s", diff)
	}
	for _, op := range got {
		if strings.Contains(op, "internal") {
			t.Errorf("internal route documented: %s", op)
		}
	}
}

func TestOpenAPIOperationDetails(t *testing.T) {
	_, model := oaModel(t)
	create := model.Paths.PathItems.GetOrZero("/api/v1/api-keys").Post
	if create == nil {
		t.Fatal("POST /api/v1/api-keys missing")
	}
	if create.OperationId != "createApiKey" || !slices.Equal(create.Tags, []string{transport.TagDeveloper}) {
		t.Errorf("operation id %q, tags %v", create.OperationId, create.Tags)
	}
	var idem bool
	for _, p := range create.Parameters {
		if p.Name == "Idempotency-Key" && p.In == "header" && p.Required != nil && *p.Required {
			idem = true
		}
	}
	if !idem {
		t.Error("required Idempotency-Key header parameter missing")
	}
	// A session-only route answers 429 too: sessions have limits per user
	// and per workspace.
	for _, status := range []string{"201", "400", "401", "403", "409", "413", "415", "429", "500"} {
		if _, ok := create.Responses.Codes.Get(status); !ok {
			t.Errorf("createApiKey lacks response %s", status)
		}
	}
	r401, _ := create.Responses.Codes.Get("401")
	if !strings.Contains(r401.Description, "REAUTHENTICATION_REQUIRED") || !strings.Contains(r401.Description, "UNAUTHENTICATED") {
		t.Errorf("401 description = %q, want the codes", r401.Description)
	}
	for _, ext := range []string{"x-maturity", "x-auth", "x-permission", "x-idempotency"} {
		if _, ok := create.Extensions.Get(ext); !ok {
			t.Errorf("extension %s missing", ext)
		}
	}
	if len(create.Security) != 2 {
		t.Errorf("session route security = %d requirements, want cookie and bearer", len(create.Security))
	}
	current := model.Paths.PathItems.GetOrZero("/api/v1/token-sales/current").Get
	if current.Security == nil || len(current.Security) != 0 {
		t.Errorf("public route security = %v, want []", current.Security)
	}
	get := model.Paths.PathItems.GetOrZero("/api/v1/api-keys/{keyId}").Get
	if len(get.Parameters) == 0 || get.Parameters[0].Name != "keyId" || get.Parameters[0].In != "path" {
		t.Errorf("path parameter keyId missing: %v", get.Parameters)
	}
	if _, ok := get.Responses.Codes.Get("429"); !ok {
		t.Error("a key route lacks 429")
	}
	if model.Paths.PathItems.GetOrZero("/api/docs/") != nil {
		t.Error("the docs page is listed as an operation")
	}
	if !strings.Contains(model.Info.Description, "`GET /api/docs/`: Docs.") {
		t.Errorf("info.description does not describe the docs page:\n%s", model.Info.Description)
	}
	spec := model.Paths.PathItems.GetOrZero("/api/docs/openapi.json").Get
	ok200, _ := spec.Responses.Codes.Get("200")
	if _, ok := ok200.Content.Get("text/html"); !ok {
		t.Error("a Raw route without Response is not documented as text/html")
	}
	var tags []string
	for _, tag := range model.Tags {
		tags = append(tags, tag.Name)
		if v, ok := tag.Extensions.Get("x-contract-version"); !ok || v.Value == "" {
			t.Errorf("tag %s lacks x-contract-version", tag.Name)
		}
	}
	if len(tags) != 16 || !slices.Contains(tags, "Sound Engine") {
		t.Errorf("tags = %v, want the 16 areas", tags)
	}
}

func TestOpenAPIIsDeterministic(t *testing.T) {
	a, _ := oaModel(t)
	b, _ := oaModel(t)
	if !bytes.Equal(a, b) {
		t.Error("two generations differ")
	}
}

// oaExchange builds a request and a JSON response for the validator.
func oaExchange(method, path string, status int, body string) (*http.Request, *http.Response) {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer platform_test_REPLACE_ME")
	resp := &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}
	return req, resp
}

func TestOpenAPIValidatesResponses(t *testing.T) {
	_, model := oaModel(t)
	v := validator.NewValidatorFromV3Model(model)
	key := `{"id":"key_1","name":"CI","prefix":"platform_test_ab","limits":{"ratePerMinute":60},"scopes":["a"],` +
		`"createdAt":"2026-01-02T03:04:05.000Z","lastUsedAt":null}`
	tests := []struct {
		name   string
		path   string
		status int
		body   string
		valid  bool
	}{
		{"valid key", "/api/v1/api-keys/key_1", 200, `{"data":` + key + `,"meta":{"requestId":"req_1"}}`, true},
		{"missing required field", "/api/v1/api-keys/key_1", 200,
			`{"data":` + strings.Replace(key, `"name":"CI",`, "", 1) + `,"meta":{"requestId":"req_1"}}`, false},
		{"wrong field type", "/api/v1/api-keys/key_1", 200,
			`{"data":` + strings.Replace(key, `"ratePerMinute":60`, `"ratePerMinute":"60"`, 1) + `,"meta":{"requestId":"req_1"}}`, false},
		{"unknown field", "/api/v1/api-keys/key_1", 200,
			`{"data":` + strings.Replace(key, `"id":`, `"extra":1,"id":`, 1) + `,"meta":{"requestId":"req_1"}}`, false},
		{"missing meta", "/api/v1/api-keys/key_1", 200, `{"data":` + key + `}`, false},
		{"null sale", "/api/v1/token-sales/current", 200, `{"data":null,"meta":{"requestId":"req_1"}}`, true},
		{"sale list", "/api/v1/token-sales/sale_1/markets", 200, `{"data":[{"id":"s","status":"PLANNED"}],"meta":{"requestId":"req_1"}}`, true},
		{"error envelope", "/api/v1/api-keys/key_1", 404, `{"error":{"code":"NOT_FOUND","message":"gone"},"meta":{"requestId":"req_1"}}`, true},
		{"unknown error code", "/api/v1/api-keys/key_1", 404, `{"error":{"code":"NOPE","message":"gone"},"meta":{"requestId":"req_1"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, resp := oaExchange(http.MethodGet, tt.path, tt.status, tt.body)
			ok, errs := v.ValidateHttpResponse(req, resp)
			if ok != tt.valid {
				t.Errorf("valid = %v, want %v; errors: %v", ok, tt.valid, validationMessages(errs))
			}
		})
	}
}

func TestOpenAPIValidatesRealEnvelope(t *testing.T) {
	_, model := oaModel(t)
	v := validator.NewValidatorFromV3Model(model)
	table := oaTable()
	create := table[0]
	body, _ := json.Marshal(create.Request)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/api-keys", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "idem-1")
	req.AddCookie(&http.Cookie{Name: DefaultSessionCookie, Value: "s"})
	if ok, errs := v.ValidateHttpRequest(req); !ok {
		t.Errorf("request invalid: %v", validationMessages(errs))
	}
	rec := httptest.NewRecorder()
	transport.WriteData(rec, http.StatusCreated, "req_1", create.Response)
	resp := rec.Result()
	req = httptest.NewRequest(http.MethodPost, "/api/v1/api-keys", bytes.NewReader(body))
	if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
		t.Errorf("WriteData output invalid: %v", validationMessages(errs))
	}
	rec = httptest.NewRecorder()
	transport.WriteError(rec, nil, "req_2", fault.E("x", fault.IdempotencyConflict, ""))
	req = httptest.NewRequest(http.MethodPost, "/api/v1/api-keys", bytes.NewReader(body))
	if ok, errs := v.ValidateHttpResponse(req, rec.Result()); !ok {
		t.Errorf("WriteError output invalid: %v", validationMessages(errs))
	}
}

// validationMessages flattens validator errors for test output.
func validationMessages[E interface{ Error() string }](errs []E) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestOpenAPIRejectsUnknownTagAndCode(t *testing.T) {
	r := oaTable()[2]
	r.Tag = "Nope"
	if _, err := OpenAPI([]transport.Route[transport.Tx]{r}, Info{}); err == nil || !strings.Contains(err.Error(), "unknown tag") {
		t.Errorf("OpenAPI(unknown tag) = %v", err)
	}
	r = oaTable()[2]
	r.Errors = []string{"NOT_A_CODE"}
	if _, err := OpenAPI([]transport.Route[transport.Tx]{r}, Info{}); err == nil || !strings.Contains(err.Error(), "unknown error code") {
		t.Errorf("OpenAPI(unknown code) = %v", err)
	}
}

func TestOpenAPIPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/api-keys/{keyId}":            "/api/v1/api-keys/{keyId}",
		"/files/{path...}":                    "/files/{path}",
		"/api/docs/":                          "/api/docs/",
		"/api/v1/token-sales/{saleId}/{view}": "/api/v1/token-sales/{saleId}/{view}",
	} {
		if got := openAPIPath(in); got != want {
			t.Errorf("openAPIPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSchemaNames(t *testing.T) {
	g := newSchemaGen(docTypes(oaTable()), nil)
	ref := g.schema(reflectTypeOf(oaPage[oaAPIKey]{}))
	if got := ref["$ref"]; got != "#/components/schemas/oaPage_oaAPIKey" {
		t.Errorf("generic ref = %v", got)
	}
}

// reflectTypeOf is reflect.TypeOf, named for readability in tests.
func reflectTypeOf(v any) reflect.Type { return reflect.TypeOf(v) }

// TestOpenAPIStatesRateLimits: the document states every credential's
// limits, from the values the host enforces.
func TestOpenAPIStatesRateLimits(t *testing.T) {
	rl := RateLimits{Sessions: transport.SessionLimits{}.WithDefaults(),
		KeyDefaults: apikey.Limits{RequestsPerMinute: 600, MaxConcurrentRequests: 16, MonthlyRequestBudget: 1_000_000}}
	b, err := OpenAPI(oaTable(), Info{Title: "platform API", RateLimits: &rl})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		RateLimits map[string]apikey.Limits `json:"x-rate-limits"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Rate limits", "| API key | key (a new key's defaults) | 600 | 16 | 1,000,000 |",
		"| Session or access token | user | 600 | 32 | 1,000,000 |", "| Session or access token | workspace | 3,000 | 128 | 10,000,000 |",
		"Retry-After", "details.subject"} {
		if !strings.Contains(doc.Info.Description, want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	if doc.RateLimits["sessionWorkspace"] != rl.Sessions.Workspace || doc.RateLimits["sessionUser"] != rl.Sessions.User ||
		doc.RateLimits["apiKeyDefaults"] != rl.KeyDefaults {
		t.Errorf("x-rate-limits = %+v", doc.RateLimits)
	}
}

// TestOpenAPIOutcomesAndRequestHeaders documents a route that answers a
// 402 outcome with its success body and reads a request header: the
// outcome's status with its own headers beside the success, and the
// header as a header parameter.
func TestOpenAPIOutcomesAndRequestHeaders(t *testing.T) {
	rt := transport.Route[transport.Tx]{
		Method: http.MethodPost, Pattern: "/api/v1/x402/settle", OperationID: "settlePayment", Tag: transport.TagWeb3,
		Summary: "Settle", Auth: transport.AuthSessionOrKey, Idempotency: transport.IdempotencyRequired,
		Headers:         []transport.Param{{Name: "PAYMENT-SIGNATURE", Description: "The payment payload.", Example: "eyJ9"}},
		ResponseHeaders: map[string]string{"PAYMENT-RESPONSE": "The settlement."},
		Outcomes: []transport.Outcome{{Status: http.StatusPaymentRequired, Text: "Payment Required: the settlement failed.",
			Headers: map[string]string{"PAYMENT-RESPONSE": "The failed settlement."}}},
		Request: oaSale{ID: "sale_1"}, Response: oaSale{ID: "sale_1"}, Handle: oaNoop,
	}
	doc, err := OpenAPI([]transport.Route[transport.Tx]{rt}, Info{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	model, err := parsed.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	op := model.Model.Paths.PathItems.GetOrZero("/api/v1/x402/settle").Post
	var header bool
	for _, p := range op.Parameters {
		if p.Name == "PAYMENT-SIGNATURE" && p.In == "header" && (p.Required == nil || !*p.Required) {
			header = true
		}
	}
	if !header {
		t.Error("the PAYMENT-SIGNATURE header parameter is missing")
	}
	for _, status := range []string{"200", "402"} {
		r, ok := op.Responses.Codes.Get(status)
		if !ok {
			t.Fatalf("response %s missing", status)
		}
		if _, ok := r.Headers.Get("PAYMENT-RESPONSE"); !ok {
			t.Errorf("response %s does not document PAYMENT-RESPONSE", status)
		}
		if _, ok := r.Content.Get("application/json"); !ok {
			t.Errorf("response %s has no JSON body", status)
		}
	}
	if r, _ := op.Responses.Codes.Get("402"); !strings.HasPrefix(r.Description, "Payment Required") {
		t.Errorf("402 description %q", r.Description)
	}
	// An outcome may not share the status of the route's error codes.
	clash := rt
	clash.Outcomes = []transport.Outcome{{Status: http.StatusConflict, Text: "Conflict."}}
	if _, err := OpenAPI([]transport.Route[transport.Tx]{clash}, Info{Title: "t"}); err == nil {
		t.Error("an outcome on an error status was documented")
	}
}
