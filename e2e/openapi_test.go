package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/openapi"
)

// The Redocly CLI that lints the served document lives in
// transport/openapi/openapilint (package.json and its lock, and redocly.yaml, the
// lint configuration); its node_modules are installed by
// `npm ci --prefix transport/openapi/openapilint`, which .ci/run does before the
// tests.
const (
	lintDir        = "../transport/openapi/openapilint"
	lintInstallCmd = "npm ci --prefix transport/openapi/openapilint"
	// requireJSEnv makes a missing node or node_modules fail the test
	// instead of skipping it (CI sets it).
	requireJSEnv = "PLATFORM_REQUIRE_JS"
)

// servedDocument returns the OpenAPI document s serves.
func servedDocument(t *testing.T, s *platformtest.System) []byte {
	t.Helper()
	resp, err := http.Get(s.Server.URL + openapi.SpecPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d, %v", openapi.SpecPath, resp.StatusCode, err)
	}
	return b
}

// TestOpenAPILintFindingsGone checks, without Node.js, the three errors
// Redocly's recommended ruleset found in the served document: it has
// servers, and no operation path ends in a slash (the docs page and the
// collection's landing page are described in info.description instead).
func TestOpenAPILintFindingsGone(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(servedDocument(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 || doc.Servers[0].URL == "" {
		t.Errorf("servers = %+v, want at least one with a url", doc.Servers)
	}
	for p := range doc.Paths {
		if strings.HasSuffix(p, "/") {
			t.Errorf("operation path %s ends in a slash", p)
		}
	}
	for _, page := range []string{openapi.DocsPath, openapi.CollectionPath} {
		if !strings.Contains(doc.Info.Description, "`GET "+page+"`") {
			t.Errorf("page %s is not described in info.description", page)
		}
		resp, err := http.Get(s.Server.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s = %d %s, want the HTML page", page, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// TestOpenAPIRedoclyLint runs the pinned Redocly CLI's recommended ruleset
// over the served document. It fails on any error, and on any warning of a
// rule that redocly.yaml does not accept (set to warn, with the reason in a
// comment above it).
func TestOpenAPIRedoclyLint(t *testing.T) {
	t.Parallel()
	node := requireRedocly(t)
	accepted := acceptedLintWarnings(t)
	s := platformtest.New(t, platformtest.Options{})
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, servedDocument(t, s), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.FromSlash("node_modules/@redocly/cli/bin/cli.js"),
		"lint", "--config", "redocly.yaml", "--format", "json", file)
	cmd.Dir = lintDir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // exits non-zero when it finds errors; the report says which
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
			Ignored  int `json:"ignored"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("redocly lint: %v; report unreadable: %v\nstderr:\n%s\nstdout:\n%s", runErr, err, stderr.String(), stdout.String())
	}
	t.Logf("redocly lint (recommended): %d errors, %d warnings, %d ignored", report.Totals.Errors, report.Totals.Warnings, report.Totals.Ignored)
	counts := map[string]int{}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		counts[p.Severity+" "+p.RuleID]++
		switch {
		case p.Severity == "error":
			t.Errorf("lint error %s at %s: %s", p.RuleID, where, p.Message)
		case !accepted[p.RuleID]:
			t.Errorf("lint warning %s at %s is not accepted in %s/redocly.yaml: %s", p.RuleID, where, lintDir, p.Message)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		t.Logf("  %s: %d", k, counts[k])
	}
	if report.Totals.Errors > 0 && !t.Failed() {
		t.Errorf("redocly lint reports %d errors", report.Totals.Errors)
	}
}

// requireRedocly returns the node binary, or skips the test (fails it
// under PLATFORM_REQUIRE_JS=1) when node or the pinned CLI is missing.
func requireRedocly(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := fmt.Sprintf("%s; install the linter with: %s (from the module root)", what, lintInstallCmd)
		if os.Getenv(requireJSEnv) == "1" {
			t.Fatalf("%s=1 and %s", requireJSEnv, msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js >= 20.19, which also brings npm) is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(lintDir, "node_modules", "@redocly", "cli", "package.json")); err != nil {
		missing(fmt.Sprintf("@redocly/cli is not installed in %s/node_modules", lintDir))
	}
	return node
}

// acceptedRule is a rule redocly.yaml sets to warn: "  rule-id: warn".
var acceptedRule = regexp.MustCompile(`^  ([a-z0-9-]+):\s*warn\s*$`)

// acceptedLintWarnings returns the rules redocly.yaml accepts as warnings;
// each must have a comment giving the reason on the line above it.
func acceptedLintWarnings(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(lintDir, "redocly.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	prev := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := acceptedRule.FindStringSubmatch(line); m != nil {
			if !strings.HasPrefix(strings.TrimSpace(prev), "#") {
				t.Errorf("redocly.yaml accepts %s without a reason (a comment on the line above)", m[1])
			}
			out[m[1]] = true
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenAPIDocumentStatesCodeDecisions reads, in the served document, the
// rules decided in code: the JSON body limit and each operation's own, the
// idempotency retention, the API key scopes with their permissions, the
// providers' callback timestamp windows and the event catalogue, each with
// the code's value.
func TestOpenAPIDocumentStatesCodeDecisions(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{MaxUploadBytes: 3 << 20})
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			BodyLimit   *int64 `json:"x-body-limit"`
			RequestBody *struct {
				Description string `json:"description"`
			} `json:"requestBody"`
			Parameters []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"parameters"`
		} `json:"paths"`
		Retention int64 `json:"x-idempotency-retention-seconds"`
		Scopes    []struct {
			Scope       string   `json:"scope"`
			Permissions []string `json:"permissions"`
		} `json:"x-api-key-scopes"`
		Callbacks []struct {
			Provider    string `json:"provider"`
			Environment string `json:"environment"`
			SkewSeconds int64  `json:"skewSeconds"`
		} `json:"x-provider-callbacks"`
		Events     []openapi.EventType `json:"x-event-catalogue"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(servedDocument(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	desc := doc.Info.Description

	// Body limits: the default on JSON bodies, the route's own on uploads.
	var sawDefault, sawUpload bool
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody == nil {
				continue
			}
			if op.BodyLimit == nil || !strings.Contains(op.RequestBody.Description, fmt.Sprint(*op.BodyLimit)+" bytes") {
				t.Errorf("%s %s: x-body-limit %v, requestBody.description %q", method, path, op.BodyLimit, op.RequestBody.Description)
				continue
			}
			switch *op.BodyLimit {
			case transport.DefaultBodyLimit:
				sawDefault = true
			default:
				if *op.BodyLimit > 3<<20 {
					sawUpload = true // the configured upload bound plus the multipart slack
				}
			}
		}
	}
	if !sawDefault || !sawUpload {
		t.Errorf("body limits: default seen %v, upload bound seen %v", sawDefault, sawUpload)
	}
	if !strings.Contains(desc, fmt.Sprintf("%d bytes (1 MiB)", transport.DefaultBodyLimit)) {
		t.Error("info.description does not state the default body limit")
	}

	// Idempotency retention: platform.Config's default, 24 hours.
	if doc.Retention != int64((24*time.Hour).Seconds()) || !strings.Contains(desc, "Records are kept for 24 hours") {
		t.Errorf("x-idempotency-retention-seconds = %d; stated in info.description: %v", doc.Retention, strings.Contains(desc, "24 hours"))
	}
	idem := doc.Paths["/api/v1/api-keys"]["post"]
	if i := slices.IndexFunc(idem.Parameters, func(p struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}) bool {
		return p.Name == "Idempotency-Key"
	}); i < 0 || !strings.Contains(idem.Parameters[i].Description, "24 hours") {
		t.Errorf("createApiKey's Idempotency-Key does not state the retention: %+v", idem.Parameters)
	}

	// Scopes: every row of access.Scopes, with its permissions.
	want := access.Scopes()
	if len(doc.Scopes) != len(want) {
		t.Fatalf("x-api-key-scopes has %d scopes, access.Scopes %d", len(doc.Scopes), len(want))
	}
	for i, sc := range want {
		got := doc.Scopes[i]
		if got.Scope != sc.Scope || len(got.Permissions) != len(sc.Permissions) {
			t.Errorf("scope %d = %+v, want %+v", i, got, sc)
		}
		if !strings.Contains(desc, "| `"+sc.Scope+"`") {
			t.Errorf("info.description lacks scope %s", sc.Scope)
		}
	}

	// Callbacks: the test system's provider B adapter, default window.
	wantSkew := int64(providerb.DefaultCallbackSkew / time.Second)
	if i := slices.IndexFunc(doc.Callbacks, func(c struct {
		Provider    string `json:"provider"`
		Environment string `json:"environment"`
		SkewSeconds int64  `json:"skewSeconds"`
	}) bool {
		return c.Provider == "MUSIC_PROVIDER_B" && c.Environment == "test"
	}); i < 0 || doc.Callbacks[i].SkewSeconds != wantSkew {
		t.Errorf("x-provider-callbacks = %+v, want MUSIC_PROVIDER_B test %ds", doc.Callbacks, wantSkew)
	}
	if !strings.Contains(desc, "| MUSIC_PROVIDER_B | test | ±5 minutes |") {
		t.Error("info.description does not state provider B's callback window")
	}

	// Events: the catalogue, and the outbox event's type enum.
	cat := platform.EventCatalogue()
	if len(doc.Events) != len(cat) {
		t.Fatalf("x-event-catalogue has %d types, EventCatalogue %d", len(doc.Events), len(cat))
	}
	var types []string
	for i, e := range cat {
		if doc.Events[i] != e {
			t.Errorf("x-event-catalogue[%d] = %+v, want %+v", i, doc.Events[i], e)
		}
		if !strings.Contains(desc, "| `"+e.Type+"` | 1 |") {
			t.Errorf("info.description lacks event %s", e.Type)
		}
		types = append(types, e.Type)
	}
	if got := doc.Components.Schemas["Event"].Properties["type"].Enum; !slices.Equal(got, types) {
		t.Errorf("Event.type enum = %v, want the catalogue %v", got, types)
	}
}

// TestOpenAPIEveryPropertyHasADescription counts the properties of every
// schema in the served document (components and inline) and fails on each
// one without a description, listing them. It logs the counts.
func TestOpenAPIEveryPropertyHasADescription(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{})
	var doc any
	if err := json.Unmarshal(servedDocument(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	var all, described, comps, compsDescribed int
	var missing []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for _, name := range slices.Sorted(maps.Keys(props)) {
					p, _ := props[name].(map[string]any)
					desc, _ := p["description"].(string)
					inComponents := strings.HasPrefix(path, "/components/schemas/")
					all++
					if inComponents {
						comps++
					}
					if strings.TrimSpace(desc) != "" {
						described++
						if inComponents {
							compsDescribed++
						}
					} else {
						missing = append(missing, path+"/properties/"+name)
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], path+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(doc, "")
	t.Logf("schema properties: %d in components, %d of them with a description; %d in the whole document, %d with a description",
		comps, compsDescribed, all, described)
	if len(missing) > 0 {
		t.Errorf("%d properties have no description (write the Go field's doc comment, then go generate ./transport/openapi):\n%s",
			len(missing), strings.Join(missing, "\n"))
	}
}
