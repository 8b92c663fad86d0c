package openapi

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// collectionDoc is the part of a Postman collection the tests read.
type collectionDoc struct {
	Info struct {
		Schema string `json:"schema"`
	} `json:"info"`
	Auth     postmanAuth       `json:"auth"`
	Variable []postmanVariable `json:"variable"`
	Item     []struct {
		Name string `json:"name"`
		Item []struct {
			Name    string `json:"name"`
			Request struct {
				Method string            `json:"method"`
				Header []postmanVariable `json:"header"`
				URL    postmanURL        `json:"url"`
				Body   *postmanBody      `json:"body"`
				Auth   *postmanAuth      `json:"auth"`
			} `json:"request"`
		} `json:"item"`
	} `json:"item"`
}

func TestCollection(t *testing.T) {
	routes := oaTable()
	b, err := Collection(routes, Info{})
	if err != nil {
		t.Fatalf("Collection() = %v", err)
	}
	var c collectionDoc
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("collection is not JSON: %v", err)
	}
	if c.Info.Schema != "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" {
		t.Errorf("schema = %q", c.Info.Schema)
	}
	if c.Auth.Type != "bearer" || len(c.Auth.Bearer) != 1 || c.Auth.Bearer[0].Value != "{{apiKey}}" {
		t.Errorf("collection auth = %+v, want bearer {{apiKey}}", c.Auth)
	}
	vars := map[string]string{}
	for _, v := range c.Variable {
		vars[v.Key] = v.Value
	}
	if vars["baseUrl"] != "http://127.0.0.1:8080" || vars["apiKey"] != "platform_test_REPLACE_ME" {
		t.Errorf("variables = %v", vars)
	}

	public := 0
	for _, r := range routes {
		if !r.Internal {
			public++
		}
	}
	requests := map[string]int{}
	n := 0
	for _, folder := range c.Item {
		for _, item := range folder.Item {
			n++
			req := item.Request
			requests[req.Method+" "+"/"+strings.Join(req.URL.Path, "/")]++
			if req.URL.Host[0] != "{{baseUrl}}" || !strings.HasPrefix(req.URL.Raw, "{{baseUrl}}/") {
				t.Errorf("%s: url %+v not under {{baseUrl}}", item.Name, req.URL)
			}
		}
	}
	if n != public {
		t.Errorf("collection holds %d requests, want %d public routes", n, public)
	}

	create := findCollectionRequest(t, c, "POST /api/v1/api-keys")
	if create.Body == nil || !json.Valid([]byte(create.Body.Raw)) || !strings.Contains(create.Body.Raw, `"name": "CI key"`) {
		t.Errorf("create body = %+v", create.Body)
	}
	if !hasHeader(create.Header, "Idempotency-Key", "{{$guid}}") || !hasHeader(create.Header, "Content-Type", "application/json") {
		t.Errorf("create headers = %+v", create.Header)
	}
	get := findCollectionRequest(t, c, "GET /api/v1/api-keys/:keyId")
	if len(get.URL.Variable) != 1 || get.URL.Variable[0].Key != "keyId" || get.Auth != nil {
		t.Errorf("get url %+v, auth %+v", get.URL, get.Auth)
	}
	if hasHeader(get.Header, "Idempotency-Key", "{{$guid}}") {
		t.Error("a read carries an Idempotency-Key")
	}
	current := findCollectionRequest(t, c, "GET /api/v1/token-sales/current")
	if current.Auth == nil || current.Auth.Type != "noauth" {
		t.Errorf("public route auth = %+v, want noauth", current.Auth)
	}
	list := findCollectionRequest(t, c, "GET /api/v1/api-keys")
	if len(list.URL.Query) != 2 || list.URL.Query[0].Value != "20" || !list.URL.Query[0].Disabled {
		t.Errorf("list query = %+v", list.URL.Query)
	}
	findCollectionRequest(t, c, "GET /api/docs/")

	assertNoSecrets(t, "collection", b)
	assertNoSecrets(t, "environment", CollectionEnvironment())
}

func TestCollectionEnvironment(t *testing.T) {
	var env struct {
		Values []struct {
			Key, Value string
		} `json:"values"`
	}
	if err := json.Unmarshal(CollectionEnvironment(), &env); err != nil {
		t.Fatalf("environment is not JSON: %v", err)
	}
	got := map[string]string{}
	for _, v := range env.Values {
		got[v.Key] = v.Value
	}
	if len(got) != 2 || got["baseUrl"] == "" || got["apiKey"] != "platform_test_REPLACE_ME" {
		t.Errorf("environment values = %v, want baseUrl and apiKey placeholders only", got)
	}
}

// findCollectionRequest returns the request for "METHOD /path".
func findCollectionRequest(t *testing.T, c collectionDoc, want string) (req struct {
	Method string            `json:"method"`
	Header []postmanVariable `json:"header"`
	URL    postmanURL        `json:"url"`
	Body   *postmanBody      `json:"body"`
	Auth   *postmanAuth      `json:"auth"`
}) {
	t.Helper()
	for _, folder := range c.Item {
		for _, item := range folder.Item {
			if item.Request.Method+" /"+strings.Join(item.Request.URL.Path, "/") == want {
				return item.Request
			}
		}
	}
	t.Fatalf("no request %s in the collection", want)
	return req
}

// hasHeader reports whether headers hold key with value.
func hasHeader(headers []postmanVariable, key, value string) bool {
	for _, h := range headers {
		if h.Key == key && h.Value == value {
			return true
		}
	}
	return false
}

var secretLike = regexp.MustCompile(`platform_(?:test|live)_[A-Za-z0-9_]+|(?i)bearer [A-Za-z0-9._-]{12,}|sk_[A-Za-z0-9]{8,}`)

// assertNoSecrets fails when b holds a value that looks like a credential
// other than the documented placeholders.
func assertNoSecrets(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, m := range secretLike.FindAllString(string(b), -1) {
		if m != "platform_test_REPLACE_ME" && m != "platform_test_ab" {
			t.Errorf("%s holds a secret-looking value %q", what, m)
		}
	}
	if strings.Contains(string(b), "platform_live_") {
		t.Errorf("%s mentions a live key", what)
	}
}
