package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
)

// TestAISimulatorsServeTheTestEnvironment: by default the host starts
// both AI simulators, seeds a registry of a model each (tools and JSON
// output among their capabilities, two privacy classes, prices) and a
// routing policy under which every task resolves, hands the simulators'
// keys to the platform alone, and a chat completes, streamed or not,
// lyrics and a blueprint are drafted and a tool's draft applies on
// confirmation; the map shows each simulator's control key, never its API
// key, and neither key reaches the log or the database in plaintext.
func TestAISimulatorsServeTheTestEnvironment(t *testing.T) {
	data := t.TempDir()
	s, cfg := startWired(t, simOptions{ai: aiOptions{sim: true}}, data)
	if s.ai == nil || s.ai.openai == nil || s.ai.anthropic == nil {
		t.Fatal("the AI simulators did not start")
	}
	apiKeys := []string{s.ai.openai.APIKey(), s.ai.anthropic.APIKey()}
	env := cfg.AI.Test
	if len(env.Providers) != 2 || len(env.Models) != 2 || env.Routing == nil || len(cfg.AI.TestKeys) != 2 ||
		cfg.AI.TestKeys[aiOpenAI] != apiKeys[0] || cfg.AI.TestKeys[aiAnthropic] != apiKeys[1] || len(cfg.AllowLoopback) != 2 {
		t.Fatalf("the test environment's AI configuration: %+v, %d keys, %v", env, len(cfg.AI.TestKeys), cfg.AllowLoopback)
	}
	if len(cfg.AI.Live.Providers) != 0 || len(cfg.AI.LiveKeys) != 0 {
		t.Fatalf("a simulator reached the live environment: %+v", cfg.AI.Live)
	}
	for _, m := range env.Models {
		if len(m.Capabilities) != 4 || m.InputPrice == "" || m.OutputPrice == "" {
			t.Fatalf("model %s: %+v", m.ID, m)
		}
	}
	if env.Models[0].Privacy != ai.PrivacyStandard || env.Models[1].Privacy != ai.PrivacyNoRetention {
		t.Fatalf("privacy classes: %s, %s", env.Models[0].Privacy, env.Models[1].Privacy)
	}
	for _, task := range ai.Tasks() {
		if _, ok := env.Routing.Tasks[task]; !ok {
			t.Fatalf("task %s is not routed", task)
		}
	}

	// The map and its file hold the control keys, never the API keys.
	m := s.services("http://127.0.0.1:8080")
	var out bytes.Buffer
	m.print(&out)
	if err := m.save(filepath.Join(data, servicesFile)); err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(filepath.Join(data, servicesFile))
	for _, want := range []string{s.ai.openai.ControlKey(), s.ai.anthropic.ControlKey(), s.ai.openai.URL(), s.ai.anthropic.URL()} {
		if !strings.Contains(out.String(), want) || !strings.Contains(string(saved), want) {
			t.Fatalf("the map lacks %q:\n%s", want, out.String())
		}
	}
	for _, k := range apiKeys {
		if strings.Contains(out.String(), k) || strings.Contains(string(saved), k) {
			t.Fatal("the map shows an AI provider's API key")
		}
	}

	opts := platformtest.Options{AI: cfg.AI, AllowLoopback: loopbackURLs(cfg.AllowLoopback)}
	platformtest.Dialects(t, opts, func(t *testing.T, sys *platformtest.System) {
		chat := func(stream bool) *platformtest.Response {
			return sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/chat", Key: sys.Boot.TestKey,
				Body: map[string]any{"messages": []map[string]any{{"role": "user", "content": "A title for a song about city lights."}},
					"maxOutputTokens": 64, "stream": stream}})
		}
		r := chat(false)
		var a struct {
			Data struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
				Operation struct {
					Status  string `json:"status"`
					Routing struct {
						Model string `json:"model"`
					} `json:"routing"`
				} `json:"operation"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &a); err != nil || r.Status != http.StatusOK || a.Data.Operation.Status != "completed" ||
			a.Data.Operation.Routing.Model != aiGeneral || !strings.Contains(a.Data.Message.Content, "city lights") {
			t.Fatalf("chat: %d %s", r.Status, r.Body)
		}
		r = chat(true)
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") ||
			!bytes.Contains(r.Body, []byte("event: operation")) || !bytes.Contains(r.Body, []byte("event: delta")) ||
			!bytes.Contains(r.Body, []byte("event: done")) {
			t.Fatalf("streamed chat: %d %s", r.Status, r.Body)
		}
		// Lyrics and a blueprint on the task routes, from scripted answers.
		s.ai.openai.Reply("sim-gpt", openaitest.Reply{JSON: `{"title":"Neon Rain","language":"en","sections":[` +
			`{"kind":"verse","lines":["City lights are bleeding through the glass"]},{"kind":"chorus","lines":["Neon rain"]}]}`}, 1)
		r = sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/lyrics", Key: sys.Boot.TestKey,
			Body: map[string]any{"prompt": "Rain on city streets at night.", "language": "en", "structure": []string{"verse", "chorus"}}})
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"title":"Neon Rain"`)) {
			t.Fatalf("lyrics: %d %s", r.Status, r.Body)
		}
		s.ai.openai.Reply("sim-gpt", openaitest.Reply{JSON: `{"title":"City Lights","genre":"synthwave","mood":"nostalgic",` +
			`"visualStyle":"neon","scenes":[{"number":1,"title":"Highway","description":"Lights stream by.","durationSeconds":90}],` +
			`"creativeTasks":[{"type":"music_video","title":"Shoot","description":"Film the drive."}],"estimatedProductionDays":21}`}, 1)
		r = sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects/ai-blueprint", Key: sys.Boot.TestKey,
			Body: map[string]any{"brief": "A music video: a lone driver crossing a neon city.", "scenes": 1}})
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"estimatedProductionDays":21`)) {
			t.Fatalf("blueprint: %d %s", r.Status, r.Body)
		}
		// A tool's draft, applied on confirmation.
		s.ai.openai.Reply("sim-gpt", openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{Name: "project_create_draft", Arguments: `{"title":"City Lights EP","type":"album"}`}}}, 1)
		r = sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/chat", Key: sys.Boot.TestKey,
			Body: map[string]any{"messages": []map[string]any{{"role": "user", "content": "Set up my EP."}}, "platformTools": true}})
		var tc struct {
			Data struct {
				Message struct {
					ToolCalls []struct {
						Result struct {
							ArtifactID string `json:"artifactId"`
						} `json:"result"`
					} `json:"toolCalls"`
				} `json:"message"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &tc); err != nil || r.Status != http.StatusOK || len(tc.Data.Message.ToolCalls) != 1 {
			t.Fatalf("chat with tools: %d %s", r.Status, r.Body)
		}
		r = sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/artifacts/" + tc.Data.Message.ToolCalls[0].Result.ArtifactID +
			"/confirm", Key: sys.Boot.TestKey, Header: map[string]string{"Idempotency-Key": "confirm-1"}})
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"status":"applied"`)) {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		noPlaintext(t, sys, apiKeys...)
	})
}

// TestAIOpenAIFlagsPointAtARealServer: -ai-openai-url, -ai-openai-key and
// -ai-openai-model put the server at the URL behind provider openai in
// place of its simulator (the Anthropic simulator still runs), with the
// key handed to the platform alone and the upstream model named; a chat
// reaches that server with that key and model, and the key reaches no
// log line or table in plaintext.
func TestAIOpenAIFlagsPointAtARealServer(t *testing.T) {
	const key = "sk-upstream-0123456789abcdefghijklmn"
	up := newFakeOpenAI(t, key)
	s, cfg := startWired(t, simOptions{ai: aiOptions{sim: true, url: up.URL + "/v1/", key: key, model: "llama3.2"}}, t.TempDir())
	if s.ai.openai != nil || s.ai.anthropic == nil {
		t.Fatal("-ai-openai-url should replace the OpenAI-compatible simulator and keep the Anthropic one")
	}
	p := cfg.AI.Test.Providers[0]
	g := cfg.AI.Test.Models[0]
	if p.ID != aiOpenAI || p.BaseURL != up.URL+"/v1" || p.KeyRef != aiOpenAI || p.Keyless || cfg.AI.TestKeys[aiOpenAI] != key ||
		g.ID != aiGeneral || g.Upstream != "llama3.2" || g.Privacy != ai.PrivacyLocal {
		t.Fatalf("provider %+v, model %+v", p, g)
	}
	if !strings.Contains(fmt.Sprint(cfg.AllowLoopback), strings.TrimPrefix(up.URL, "http://")) {
		t.Fatalf("the AI URL guard does not let %s through: %v", up.URL, cfg.AllowLoopback)
	}
	m := s.services("http://127.0.0.1:8080")
	var out bytes.Buffer
	m.print(&out)
	if m.AIServer == nil || m.AIServer.Model != "llama3.2" || strings.Contains(out.String(), key) ||
		!strings.Contains(out.String(), strings.TrimPrefix(up.URL, "http://")) {
		t.Fatalf("map: %+v\n%s", m.AIServer, out.String())
	}

	opts := platformtest.Options{AI: cfg.AI, AllowLoopback: loopbackURLs(cfg.AllowLoopback)}
	platformtest.Dialects(t, opts, func(t *testing.T, sys *platformtest.System) {
		r := sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/chat", Key: sys.Boot.TestKey,
			Body: map[string]any{"messages": []map[string]any{{"role": "user", "content": "Hello?"}}, "maxOutputTokens": 32}})
		if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte("Hello from the upstream server.")) ||
			!bytes.Contains(r.Body, []byte(`"upstreamModel":"llama3.2"`)) {
			t.Fatalf("chat: %d %s", r.Status, r.Body)
		}
		if got := up.last(); got.model != "llama3.2" || got.auth != "Bearer "+key {
			t.Fatalf("the server saw model %q and a key other than the configured one", got.model)
		}
		noPlaintext(t, sys, key, s.ai.anthropic.APIKey())
	})
}

// TestAIOpenAIURLWithoutKeyIsKeyless: a server that takes no key (Ollama,
// llama.cpp) is configured by URL alone, and no Authorization is sent.
func TestAIOpenAIURLWithoutKeyIsKeyless(t *testing.T) {
	up := newFakeOpenAI(t, "")
	_, cfg := startWired(t, simOptions{ai: aiOptions{url: up.URL + "/v1"}}, t.TempDir())
	if len(cfg.AI.Test.Providers) != 1 || !cfg.AI.Test.Providers[0].Keyless || cfg.AI.Test.Providers[0].KeyRef != "" ||
		len(cfg.AI.TestKeys) != 0 || cfg.AI.Test.Models[0].Upstream != defaultAIModel {
		t.Fatalf("configuration: %+v, keys %d", cfg.AI.Test, len(cfg.AI.TestKeys))
	}
	for task, r := range cfg.AI.Test.Routing.Tasks {
		if r.Primary != aiGeneral || len(r.Fallbacks) != 0 {
			t.Fatalf("task %s routes to %+v without the private model", task, r)
		}
	}
	sys := platformtest.New(t, platformtest.Options{AI: cfg.AI, AllowLoopback: loopbackURLs(cfg.AllowLoopback)})
	r := sys.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/ai/chat", Key: sys.Boot.TestKey,
		Body: map[string]any{"messages": []map[string]any{{"role": "user", "content": "Hello?"}}, "maxOutputTokens": 32}})
	if r.Status != http.StatusOK {
		t.Fatalf("chat: %d %s", r.Status, r.Body)
	}
	if got := up.last(); got.auth != "" {
		t.Fatalf("a keyless server was sent Authorization %q", got.auth)
	}
}

// TestAIOpenAIURLMustPassTheGuard: https anywhere, plain http only to a
// loopback address with its port; the key and model flags need the URL.
func TestAIOpenAIURLMustPassTheGuard(t *testing.T) {
	for _, tc := range []struct {
		url      string
		ok, loop bool
	}{
		{"https://api.openai.com/v1", true, false},
		{"https://openrouter.ai/api/v1/", true, false},
		{"http://127.0.0.1:11434/v1", true, true},
		{"http://[::1]:8000/v1", true, true},
		{"http://api.openai.com/v1", false, false},
		{"http://10.0.0.5:8000/v1", false, false},
		{"http://localhost:11434/v1", false, false},
		{"http://127.0.0.1/v1", false, false},
		{"https://user:secret@api.openai.com/v1", false, false},
		{"ftp://127.0.0.1:21/v1", false, false},
		{"api.openai.com/v1", false, false},
	} {
		u, loop, err := aiUpstreamURL(tc.url)
		if (err == nil) != tc.ok || loop != tc.loop || (err == nil && strings.HasSuffix(u.Path, "/")) {
			t.Errorf("%s: loopback %v, error %v; want ok %v, loopback %v", tc.url, loop, err, tc.ok, tc.loop)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error repeats the URL's credentials: %v", tc.url, err)
		}
	}
	for _, o := range []aiOptions{{sim: true, key: "sk-x"}, {model: "gpt-4o"}, {sim: true, url: "http://example.com/v1"}} {
		if s, err := startAI(o); err == nil {
			s.close()
			t.Errorf("%+v was accepted", o)
		}
	}
	if s, err := startAI(aiOptions{}); s != nil || err != nil {
		t.Fatalf("no simulator and no URL: %v, %v; want no AI set-up", s, err)
	}
}

// loopbackURLs are the http URLs of the loopback addresses the host lets
// through.
func loopbackURLs[T fmt.Stringer](aps []T) []string {
	var out []string
	for _, ap := range aps {
		out = append(out, "http://"+ap.String())
	}
	return out
}

// fakeOpenAI is an OpenAI-compatible server on loopback standing for a
// real one: it answers every chat with one canned completion and records
// the model and Authorization of the last request.
type fakeOpenAI struct {
	URL string
	mu  sync.Mutex
	req struct{ model, auth string }
}

// newFakeOpenAI starts a fake that requires key as a Bearer token ("" takes
// none).
func newFakeOpenAI(t *testing.T, key string) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var in struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		f.req.model, f.req.auth = in.Model, r.Header.Get("Authorization")
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
			return
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":%d,"model":%q,"choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"Hello from the upstream server."},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}}`, time.Now().Unix(), in.Model)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// last is what the last request sent.
func (f *fakeOpenAI) last() struct{ model, auth string } {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.req
}

// noPlaintext fails when one of keys, the test environment's provider
// keys, appears in the platform's log or, in plaintext, in its database
// (every text of every table), or when they are not all sealed there.
func noPlaintext(t *testing.T, s *platformtest.System, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if strings.Contains(s.Log.String(), k) {
			t.Error("the log holds a provider key")
		}
	}
	ctx := context.Background()
	var dump strings.Builder
	if s.DB.Dialect() == store.Postgres {
		var tables []string
		if err := s.DB.Read().IDB().NewRaw(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`).
			Scan(ctx, &tables); err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			var rows []string
			if err := s.DB.Read().IDB().NewRaw(fmt.Sprintf(`SELECT CAST(t AS TEXT) FROM %q t`, tb)).Scan(ctx, &rows); err != nil {
				t.Fatalf("dump %s: %v", tb, err)
			}
			dump.WriteString(strings.Join(rows, "\n"))
		}
	} else {
		var file string
		if err := s.DB.Read().IDB().NewRaw(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(ctx, &file); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{file, file + "-wal"} {
			b, err := os.ReadFile(filepath.Clean(f))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			dump.Write(b)
		}
	}
	var n int
	if err := s.DB.Read().IDB().NewRaw(`SELECT COUNT(*) FROM ai_provider_keys WHERE environment = 'test'`).Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if n != len(keys) {
		t.Errorf("sealed keys = %d, want %d", n, len(keys))
	}
	for _, k := range keys {
		if strings.Contains(dump.String(), k) {
			t.Error("the database holds a provider key in plaintext")
		}
	}
}
