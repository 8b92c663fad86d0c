package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// The tooling paths (spec, Tooling routes).
const (
	DocsPath                  = "/api/docs/"
	SpecPath                  = "/api/docs/openapi.json"
	CollectionPath            = "/api/client-collection/"
	CollectionJSONPath        = "/api/client-collection/collection.json"
	CollectionEnvironmentPath = "/api/client-collection/environment.json"
)

// DocsHandler serves Swagger UI 5 at basePath (a page at basePath and its
// assets below it), reading the document from specURL. The assets are
// embedded in the binary, so the page works offline and loads nothing from
// another host.
func DocsHandler(basePath, specURL string) http.Handler {
	return v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "platform API",
		SwaggerJSON: specURL,
		BasePath:    basePath,
		SettingsUI: map[string]string{
			"defaultModelsExpandDepth": "1",
			"persistAuthorization":     "false",
		},
	})
}

// SpecHandler serves doc as application/json with a strong ETag derived
// from its content, answering conditional requests with 304.
func SpecHandler(doc []byte) http.Handler {
	return jsonFileHandler("openapi.json", doc)
}

// jsonFileHandler serves a fixed JSON document with an ETag.
func jsonFileHandler(name string, doc []byte) http.Handler {
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	body := bytes.Clone(doc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}

// ToolingRoutes returns the spec's tooling routes for an API table: the docs
// page and its assets, the OpenAPI document, and the client collection's
// landing page, collection and environment. The document and collection are
// generated from api plus these routes, so the tooling routes document
// themselves. The asset route is Internal: registered, not documented.
func ToolingRoutes[T transport.Tx](api []transport.Route[T], info Info) ([]transport.Route[T], error) {
	tooling := toolingRoutes[T]()
	all := append(append([]transport.Route[T](nil), api...), tooling...)
	doc, err := OpenAPI(all, info)
	if err != nil {
		return nil, fmt.Errorf("transport: tooling: %w", err)
	}
	coll, err := Collection(all, info)
	if err != nil {
		return nil, fmt.Errorf("transport: tooling: %w", err)
	}
	docs := DocsHandler(DocsPath, SpecPath)
	handlers := map[string]http.Handler{
		DocsPath:                  docs,
		DocsPath + "{asset}":      docs,
		SpecPath:                  SpecHandler(doc),
		CollectionPath:            CollectionLanding(),
		CollectionJSONPath:        jsonFileHandler("collection.json", coll),
		CollectionEnvironmentPath: jsonFileHandler("environment.json", CollectionEnvironment()),
	}
	for i := range tooling {
		tooling[i].Raw = handlers[tooling[i].Pattern]
	}
	return tooling, nil
}

// toolingRoutes returns the tooling routes with placeholder handlers.
func toolingRoutes[T transport.Tx]() []transport.Route[T] {
	placeholder := http.NotFoundHandler()
	route := func(pattern, id, summary, desc string, response any) transport.Route[T] {
		return transport.Route[T]{
			Method: http.MethodGet, Pattern: pattern, OperationID: id, Tag: transport.TagTooling,
			Summary: summary, Description: desc, Auth: transport.AuthPublic, Response: response, Raw: placeholder,
		}
	}
	assets := route(DocsPath+"{asset}", "getApiDocsAsset", "Interactive docs asset", "", nil)
	assets.Internal = true
	docs := route(DocsPath, "getApiDocs", "Interactive API docs",
		"Swagger UI 5 over the OpenAPI document; its assets are embedded and served from this path.", nil)
	docs.Page = true
	landing := route(CollectionPath, "getClientCollectionLanding", "Client collection landing page",
		"Links the generated client collection and its environment template and says how to import them.", nil)
	landing.Page = true
	return []transport.Route[T]{
		docs,
		assets,
		route(SpecPath, "getOpenApiDocument", "OpenAPI 3.1 document",
			"The public, sanitized OpenAPI 3.1 projection of the route table. It carries an ETag.", map[string]any{"openapi": "3.1.0"}),
		landing,
		route(CollectionJSONPath, "getClientCollection", "Client collection",
			"A Postman collection v2.1.0 generated from the route table; examples use placeholders only.",
			map[string]any{"info": map[string]any{"schema": postmanSchema}}),
		route(CollectionEnvironmentPath, "getClientCollectionEnvironment", "Client collection environment",
			"An environment template holding baseUrl and apiKey placeholders; it carries no secret.",
			map[string]any{"name": "platform", "values": []any{}}),
	}
}
