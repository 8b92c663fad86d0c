package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/transport/api"
)

// TestDocumentListsExactlyThePublicRoutes compares the served OpenAPI
// document with the route table, and calls every documented operation to
// prove the mux serves it.
func TestDocumentListsExactlyThePublicRoutes(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	resp, err := http.Get(s.Server.URL + "/api/docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	var documented, public []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range s.P.Routes() {
		if !r.Internal && !r.Page {
			public = append(public, r.Method+" "+r.Pattern)
		}
	}
	sort.Strings(documented)
	sort.Strings(public)
	if diff := cmp.Diff(public, documented); diff != "" {
		t.Fatalf("document and route table differ (-table +document):\n%s", diff)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = param.ReplaceAllString(path, "key_01jd0000000000000000000000")
		r := s.Do(platformtest.Request{Method: method, Path: path, Key: s.Boot.TestKey})
		if c := r.Code(); c == "ROUTE_NOT_FOUND" || c == "METHOD_NOT_ALLOWED" {
			t.Errorf("%s is documented but not served: %d %s", op, r.Status, r.Body)
		}
	}
}

func TestToolingRoutes(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(s.Server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, []byte(b.String())
	}
	resp, page := get("/api/docs/")
	if resp.StatusCode != 200 || !strings.Contains(string(page), "openapi.json") {
		t.Fatalf("docs page: %d %s", resp.StatusCode, page)
	}
	resp, body := get("/api/client-collection/collection.json")
	var coll struct {
		Info struct {
			Schema string `json:"schema"`
		} `json:"info"`
		Auth struct {
			Type string `json:"type"`
		} `json:"auth"`
	}
	if err := json.Unmarshal(body, &coll); err != nil || resp.StatusCode != 200 ||
		coll.Info.Schema != "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" || coll.Auth.Type != "bearer" {
		t.Fatalf("collection: %d %v %s", resp.StatusCode, err, body[:min(200, len(body))])
	}
	if !strings.Contains(string(body), "{{baseUrl}}") || !strings.Contains(string(body), "{{apiKey}}") {
		t.Fatal("collection lacks the baseUrl and apiKey variables")
	}
	resp, env := get("/api/client-collection/environment.json")
	if resp.StatusCode != 200 || strings.Contains(string(env), "platform_test_") && !strings.Contains(string(env), "REPLACE") {
		t.Fatalf("environment: %d %s", resp.StatusCode, env)
	}
	if strings.Contains(string(body), s.Boot.TestKey) || strings.Contains(string(env), s.Boot.TestKey) {
		t.Fatal("a real key leaked into the tooling artifacts")
	}
	if resp, _ := get("/api/client-collection/"); resp.StatusCode != 200 {
		t.Fatalf("collection landing: %d", resp.StatusCode)
	}
}

// TestMonthlyBudgetSurvivesRestart spends a key's budget, restarts the
// platform on the same database, and finds the budget still spent.
func TestMonthlyBudgetSurvivesRestart(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	if r := s.Do(platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys/" + s.Boot.KeyID + "/limits", Key: s.Boot.TestKey,
		Body: map[string]any{"requestsPerMinute": 600, "maxConcurrentRequests": 4, "monthlyRequestBudget": 4}}); r.Status != 200 {
		t.Fatalf("set limits: %d %s", r.Status, r.Body)
	}
	call := func(h http.Handler) int {
		req, _ := http.NewRequest("GET", "/api/v1/auth/context", nil)
		req.Header.Set("Authorization", "Bearer "+s.Boot.TestKey)
		w := &recorder{header: http.Header{}}
		h.ServeHTTP(w, req)
		return w.status
	}
	// The limits call counted one request; three more spend the budget.
	for i := 0; i < 3; i++ {
		if st := call(s.P.Handler()); st != 200 {
			t.Fatalf("request %d: %d", i, st)
		}
	}
	if st := call(s.P.Handler()); st != 429 {
		t.Fatalf("over budget: %d", st)
	}
	s.P.Close() // flushes the counts
	p2, err := platform.New(context.Background(), platform.Config{Store: s.DB, SecretKey: platformtest.SecretKey, BlobDir: s.BlobDir,
		Mailer: s.Mail, Passwords: platformtest.CheapPasswords()})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if st := call(p2.Handler()); st != 429 {
		t.Fatalf("after restart: %d, want 429", st)
	}
	// A new month starts a new budget.
	s.Clock.Set(time.Date(storetest.Epoch.Year(), storetest.Epoch.Month()+1, 1, 0, 0, 0, 0, time.UTC))
	if st := call(p2.Handler()); st != 200 {
		t.Fatalf("next month: %d", st)
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = 200
	}
	return len(b), nil
}
func (r *recorder) WriteHeader(s int) { r.status = s }

func TestReceiptsAndRequestIDs(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r, _ := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "r", "scopes": []string{"read"}}, "")
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		r, _ = createKey(t, s, s.Boot.TestKey, map[string]any{"name": "", "scopes": []string{"read"}}, "")
		if r.Code() != "INVALID_INPUT" || !strings.Contains(string(r.Body), `"field":"name"`) {
			t.Fatalf("empty name: %d %s", r.Status, r.Body)
		}
		n, err := s.DB.Read().ReceiptCount(context.Background(), s.Boot.WorkspaceID, "createApiKey")
		if err != nil || n != 2 {
			t.Fatalf("receipts = %d, %v; want one for the success and one for the refusal", n, err)
		}
		// A sane client request id is echoed, in the header and in meta.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey, Header: map[string]string{"X-Request-Id": "client-req-42"}})
		if r.Header.Get("X-Request-Id") != "client-req-42" || !strings.Contains(string(r.Body), `"requestId":"client-req-42"`) {
			t.Fatalf("request id not echoed: %v %s", r.Header, r.Body)
		}
		// An unsafe one is replaced by a server id (compared whole: a random
		// hex id may contain any short substring of the rejected value).
		const unsafe = "unsafe id\twith tab"
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey, Header: map[string]string{"X-Request-Id": unsafe}})
		if got := r.Header.Get("X-Request-Id"); got == unsafe || strings.ContainsAny(got, " \t") || !strings.HasPrefix(got, "req_") {
			t.Fatalf("an unsafe request id was echoed or not replaced: %q", got)
		}
	})
}

// TestIdempotencyRecordsArePruned checks that the prune job, run by the
// platform's own worker pool, removes records past their retention: the same
// key then executes again.
func TestIdempotencyRecordsArePruned(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	body := map[string]any{"name": "once", "scopes": []string{"read"}}
	_, first := createKey(t, s, s.Boot.TestKey, body, "prune-me")
	if r, replay := createKey(t, s, s.Boot.TestKey, body, "prune-me"); r.Status != 201 || replay.Key.ID != first.Key.ID {
		t.Fatalf("replay within retention: %d %s", r.Status, r.Body)
	}
	s.Clock.Advance(25 * time.Hour)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, again := createKey(t, s, s.Boot.TestKey, body, "prune-me")
		if r.Status != 201 {
			t.Fatalf("create after retention: %d %s", r.Status, r.Body)
		}
		if again.Key.ID != first.Key.ID {
			break // the record was pruned: the key executed anew
		}
		if time.Now().After(deadline) {
			t.Fatal("the idempotency record was not pruned after its retention")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWorkspaceActivityShowsPlanGrants checks that a key holding audit:read
// (the bootstrap key: its owner holds audit.read) sees the platform's monthly
// test-credit grant in the workspace's activity, written by the job pool.
func TestWorkspaceActivityShowsPlanGrants(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/ledgers/activity?limit=10", Key: s.Boot.TestKey})
		var page api.LedgerPage
		r.Data(t, &page)
		if len(page.Items) > 0 {
			m := page.Items[0]
			if m.Type != "grant" || m.Ledger != "credits" || !strings.Contains(m.Reference, s.Boot.WorkspaceID) {
				t.Fatalf("activity = %+v", m)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the free plan's test-credit grant never appeared in the workspace's activity")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
