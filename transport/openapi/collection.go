package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/creatormusic/platform/transport"
)

// postmanSchema is the schema URL of a Postman collection v2.1.0.
const postmanSchema = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"

// The collection's variables and their placeholder values.
const (
	defaultBaseURL     = "http://127.0.0.1:8080"
	placeholderAPIKey  = "platform_test_REPLACE_ME"
	collectionBaseURL  = "{{baseUrl}}"
	collectionAPIKey   = "{{apiKey}}"
	collectionIdemGUID = "{{$guid}}"
)

// postmanCollection is the part of the Postman v2.1.0 format the collection uses.
type postmanCollection struct {
	Info     postmanInfo       `json:"info"`
	Auth     *postmanAuth      `json:"auth,omitempty"`
	Variable []postmanVariable `json:"variable,omitempty"`
	Item     []postmanFolder   `json:"item"`
}

type postmanInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Schema      string `json:"schema"`
}

type postmanAuth struct {
	Type   string            `json:"type"`
	Bearer []postmanVariable `json:"bearer,omitempty"`
}

type postmanVariable struct {
	Key         string `json:"key"`
	Value       string `json:"value"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
}

type postmanFolder struct {
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Item        []postmanItem `json:"item"`
}

type postmanItem struct {
	Name    string         `json:"name"`
	Request postmanRequest `json:"request"`
}

type postmanRequest struct {
	Method      string            `json:"method"`
	Description string            `json:"description,omitempty"`
	Header      []postmanVariable `json:"header"`
	URL         postmanURL        `json:"url"`
	Body        *postmanBody      `json:"body,omitempty"`
	Auth        *postmanAuth      `json:"auth,omitempty"`
}

type postmanURL struct {
	Raw      string            `json:"raw"`
	Host     []string          `json:"host"`
	Path     []string          `json:"path"`
	Query    []postmanVariable `json:"query,omitempty"`
	Variable []postmanVariable `json:"variable,omitempty"`
}

type postmanBody struct {
	Mode     string             `json:"mode"`
	Raw      string             `json:"raw,omitempty"`
	Formdata []postmanFormParam `json:"formdata,omitempty"`
	Options  json.RawMessage    `json:"options,omitempty"`
}

// postmanFormParam is one multipart field; Type "file" picks a file to send.
type postmanFormParam struct {
	Key  string `json:"key"`
	Type string `json:"type"`
	Src  string `json:"src"`
}

// Collection returns a Postman collection v2.1.0 of the documented (not
// Internal) routes, in folders by tag in the order of Tags. Requests use the
// {{baseUrl}} and {{apiKey}} variables, a bearer auth inherited from the
// collection (noauth on public routes), the filled Route.Request value as the
// JSON body, and an Idempotency-Key of {{$guid}} on idempotent routes. Every
// value is a placeholder; the collection carries no secret.
func Collection[T transport.Tx](routes []transport.Route[T], info Info) ([]byte, error) {
	title := info.Title
	if title == "" {
		title = "platform API"
	}
	c := postmanCollection{
		Info: postmanInfo{
			Name:        title,
			Description: "Generated from the platform's route table. Set `baseUrl` and `apiKey` (a `platform_test_` key) in the environment.",
			Schema:      postmanSchema,
		},
		Auth: &postmanAuth{Type: "bearer", Bearer: []postmanVariable{{Key: "token", Value: collectionAPIKey, Type: "string"}}},
		Variable: []postmanVariable{
			{Key: "baseUrl", Value: baseURLOf(info), Type: "string"},
			{Key: "apiKey", Value: placeholderAPIKey, Type: "string"},
		},
	}
	byTag := map[string][]postmanItem{}
	for _, r := range documented(routes) {
		item, err := collectionItem(r)
		if err != nil {
			return nil, fmt.Errorf("transport: collection: route %s: %w", r.OperationID, err)
		}
		byTag[r.Tag] = append(byTag[r.Tag], item)
	}
	for _, t := range transport.Tags() {
		if items := byTag[t.Name]; len(items) > 0 {
			c.Item = append(c.Item, postmanFolder{Name: t.Name, Description: t.Description, Item: items})
			delete(byTag, t.Name)
		}
	}
	if len(byTag) > 0 {
		unknown := slices.Sorted(maps.Keys(byTag))
		return nil, fmt.Errorf("transport: collection: unknown tags %q", unknown)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("transport: collection: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// baseURLOf returns the first server of info, or the local default.
func baseURLOf(info Info) string {
	if len(info.Servers) > 0 {
		return info.Servers[0]
	}
	return defaultBaseURL
}

// collectionItem returns the request of one route.
func collectionItem[T transport.Tx](r transport.Route[T]) (postmanItem, error) {
	req := postmanRequest{
		Method:      r.Method,
		Description: operationDescription(r),
		Header:      []postmanVariable{},
		URL:         collectionURL(r),
	}
	if r.Auth == transport.AuthPublic {
		req.Auth = &postmanAuth{Type: "noauth"}
	}
	for _, h := range r.Headers {
		value := h.Example
		if value == "" {
			value = "<" + h.Name + ">"
		}
		req.Header = append(req.Header, postmanVariable{Key: h.Name, Value: value, Description: h.Description, Disabled: !h.Required})
	}
	if r.Raw == nil && idempotencyOf(r) != transport.IdempotencyNone {
		req.Header = append(req.Header, postmanVariable{
			Key: "Idempotency-Key", Value: collectionIdemGUID, Disabled: idempotencyOf(r) == transport.IdempotencyOptional,
		})
	}
	if r.Raw == nil && r.Request != nil {
		example, err := exampleOf(r.Request)
		if err != nil {
			return postmanItem{}, err
		}
		raw, err := json.MarshalIndent(example, "", "  ")
		if err != nil {
			return postmanItem{}, fmt.Errorf("encode example: %w", err)
		}
		req.Header = append(req.Header, postmanVariable{Key: "Content-Type", Value: "application/json"})
		req.Body = &postmanBody{Mode: "raw", Raw: string(raw), Options: json.RawMessage(`{"raw":{"language":"json"}}`)}
	}
	if r.Raw == nil && len(r.RequestContentTypes) > 0 {
		req.Body = streamBodyItem(r)
	}
	name := r.Summary
	if name == "" {
		name = r.OperationID
	}
	return postmanItem{Name: name, Request: req}, nil
}

// collectionURL returns a route's URL with :name path variables.
func collectionURL[T transport.Tx](r transport.Route[T]) postmanURL {
	u := postmanURL{Host: []string{collectionBaseURL}, Path: []string{}}
	for _, seg := range strings.Split(strings.TrimPrefix(openAPIPath(r.Pattern), "/"), "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			name = strings.TrimSuffix(name, "}")
			seg = ":" + name
			u.Variable = append(u.Variable, postmanVariable{Key: name, Value: "<" + name + ">", Description: "Path parameter " + name + "."})
		}
		u.Path = append(u.Path, seg)
	}
	var query []string
	for _, q := range r.Query {
		value := q.Example
		if value == "" {
			value = "<" + q.Name + ">"
		}
		u.Query = append(u.Query, postmanVariable{Key: q.Name, Value: value, Description: q.Description, Disabled: !q.Required})
		if q.Required {
			query = append(query, q.Name+"="+value)
		}
	}
	u.Raw = collectionBaseURL + "/" + strings.Join(u.Path, "/")
	if len(query) > 0 {
		u.Raw += "?" + strings.Join(query, "&")
	}
	return u
}

// CollectionEnvironment returns a Postman environment template holding the
// baseUrl and apiKey variables with placeholder values only.
func CollectionEnvironment() []byte {
	return []byte(`{
  "name": "platform (local)",
  "values": [
    {"key": "baseUrl", "value": "` + defaultBaseURL + `", "type": "default", "enabled": true},
    {"key": "apiKey", "value": "` + placeholderAPIKey + `", "type": "secret", "enabled": true}
  ],
  "_postman_variable_scope": "environment"
}
`)
}

// landingPage is the client collection landing page; %[1]s is the docs
// path, %[2]s the document path and %[3]s the default base URL.
const landingPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>platform API client collection</title>
</head>
<body>
<h1>platform API client collection</h1>
<p>A Postman collection (format v2.1.0) generated from the same route table as the
<a href="%[1]s">API docs</a> and the <a href="%[2]s">OpenAPI document</a>.</p>
<ul>
<li><a href="collection.json" download>collection.json</a>: every public request, in folders by area.</li>
<li><a href="environment.json" download>environment.json</a>: the <code>baseUrl</code> and <code>apiKey</code> variables.</li>
</ul>
<h2>Import</h2>
<ol>
<li>In Postman (or a compatible client) choose <em>Import</em> and select both files.</li>
<li>Select the imported environment and set <code>apiKey</code> to one of your <code>platform_test_</code> keys;
set <code>baseUrl</code> if the server is not at %[3]s.</li>
<li>Send requests. Idempotent requests get a fresh <code>Idempotency-Key</code> each time; reuse a value to test replays.</li>
</ol>
<p>The files hold placeholders only; never commit a real key.</p>
</body>
</html>
`

// CollectionLanding serves a small HTML page linking collection.json and
// environment.json (relative to /api/client-collection/) and saying how to
// import them.
func CollectionLanding() http.Handler {
	page := []byte(fmt.Sprintf(landingPage, DocsPath, SpecPath, defaultBaseURL))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(page)
	})
}

// streamBodyItem is the body of a streamed upload: a multipart form with the
// file field when the route takes multipart/form-data, else a file sent raw
// with the first media type.
func streamBodyItem[T transport.Tx](r transport.Route[T]) *postmanBody {
	if slices.Contains(r.RequestContentTypes, "multipart/form-data") {
		field := r.FormFileField
		if field == "" {
			field = "file"
		}
		return &postmanBody{Mode: "formdata", Formdata: []postmanFormParam{{Key: field, Type: "file", Src: ""}}}
	}
	return &postmanBody{Mode: "file"}
}
