package openapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform/transport"
)

// docsGet serves a GET through h.
func docsGet(h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// docsMux serves oaTable plus the tooling routes.
func docsMux(t *testing.T) http.Handler {
	t.Helper()
	api := oaTable()
	// Drop the sample tooling routes and internal receiver; tooling brings the real ones.
	api = slices.DeleteFunc(api, func(r transport.Route[transport.Tx]) bool { return r.Tag == transport.TagTooling || r.Internal })
	tooling, err := ToolingRoutes(api, Info{})
	if err != nil {
		t.Fatalf("ToolingRoutes() = %v", err)
	}
	h, err := transport.NewMux(append(api, tooling...), muxServe, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("NewMux() = %v", err)
	}
	return h
}

var assetRef = regexp.MustCompile(`(?i)<(?:script|link)[^>]*?(?:src|href)="([^"]+)"`)

func TestDocsPageIsSelfContained(t *testing.T) {
	h := docsMux(t)
	rec := docsGet(h, DocsPath)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s = %d %q", DocsPath, rec.Code, rec.Header().Get("Content-Type"))
	}
	page := rec.Body.String()
	if !strings.Contains(page, SpecPath) {
		t.Errorf("page does not point at %s", SpecPath)
	}
	refs := assetRef.FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("page references %d assets, want the Swagger UI script and styles:\n%s", len(refs), page)
	}
	for _, m := range refs {
		ref := m[1]
		if strings.Contains(ref, "//") {
			t.Errorf("asset %q is loaded from another host", ref)
			continue
		}
		got := docsGet(h, ref, "Accept-Encoding", "")
		if got.Code != http.StatusOK || got.Body.Len() == 0 {
			t.Errorf("asset %s = %d (%d bytes), want 200", ref, got.Code, got.Body.Len())
		}
	}
}

func TestSpecHandlerETag(t *testing.T) {
	h := docsMux(t)
	rec := docsGet(h, SpecPath)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s = %d %q", SpecPath, rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
		Info    struct {
			Description string `json:"description"`
		} `json:"info"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document: %v, openapi %q", err, doc.OpenAPI)
	}
	for _, p := range []string{SpecPath, CollectionJSONPath, CollectionEnvironmentPath} {
		if doc.Paths[p]["get"] == nil {
			t.Errorf("tooling route GET %s not documented", p)
		}
	}
	for _, p := range []string{DocsPath, CollectionPath} {
		if _, ok := doc.Paths[p]; ok {
			t.Errorf("page %s is listed as an operation", p)
		}
		if !strings.Contains(doc.Info.Description, "`GET "+p+"`") {
			t.Errorf("page %s is not described in info.description", p)
		}
	}
	if _, ok := doc.Paths[DocsPath+"{asset}"]; ok {
		t.Error("the asset route is documented")
	}
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if again := docsGet(h, SpecPath, "If-None-Match", etag); again.Code != http.StatusNotModified {
		t.Errorf("conditional GET = %d, want 304", again.Code)
	}
}

func TestCollectionRoutesServed(t *testing.T) {
	h := docsMux(t)
	landing := docsGet(h, CollectionPath)
	if landing.Code != http.StatusOK || !strings.Contains(landing.Body.String(), `href="collection.json"`) ||
		!strings.Contains(landing.Body.String(), `href="environment.json"`) {
		t.Errorf("landing = %d %q", landing.Code, landing.Body.String())
	}
	for _, p := range []string{CollectionJSONPath, CollectionEnvironmentPath} {
		rec := docsGet(h, p)
		if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("GET %s = %d, valid JSON %v", p, rec.Code, json.Valid(rec.Body.Bytes()))
		}
	}
}

// muxServe stands in for the gateway: it answers with the operation id.
func muxServe(rt transport.Route[transport.Tx]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(rt.OperationID))
	})
}
