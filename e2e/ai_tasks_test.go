package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/openai/openaitest"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// aiTaskOptions are aiOpsOptions with every structured task routed to
// sim-small (OpenAI wire), or, when dear, to sim-pricey, whose
// reservation the free credits do not cover.
func aiTaskOptions(t *testing.T, dear bool) (platformtest.Options, aiSims) {
	t.Helper()
	opts, sims := aiOpsOptions(t)
	model := "sim-small"
	if dear {
		model = "sim-pricey"
	}
	both := []ai.PrivacyClass{ai.PrivacyStandard, ai.PrivacyNoRetention}
	routes := map[ai.Task]ai.TaskRoute{}
	for tk, r := range opts.AI.Test.Routing.Tasks {
		routes[tk] = r
	}
	for _, tk := range []ai.Task{ai.TaskMusicBrief, ai.TaskLyrics, ai.TaskPromptEnhance, ai.TaskProjectAnalyze, ai.TaskProjectBlueprint} {
		routes[tk] = ai.TaskRoute{Primary: model, Privacy: both}
	}
	opts.AI.Test.Routing = &ai.RoutingPolicy{Tasks: routes}
	return opts, sims
}

// aiTaskCase is one structured task route: its path (a project's for
// analyze), a request, an answer valid for it and the result that
// answer reads as.
type aiTaskCase struct {
	name, object string
	path         func(project string) string
	body         map[string]any
	valid        string
	want         any
}

func aiTaskCases() []aiTaskCase {
	return []aiTaskCase{
		{name: "music_brief", object: "ai_music_brief", path: func(string) string { return "/api/v1/ai/music/brief" },
			body: map[string]any{"prompt": "A night drive.", "instrumental": true, "durationSeconds": 180},
			valid: `{"title":"Night Drive","genre":"synthwave","mood":"nostalgic","tempoBpm":98,"key":"A minor","vocals":"none",` +
				`"instruments":["analog synth","drum machine"],"structure":["intro","verse","chorus","outro"],"durationSeconds":180,` +
				`"description":"A slow neon cruise.","generationPrompt":"instrumental synthwave, 98 bpm"}`,
			want: api.AIMusicBriefView{Title: "Night Drive", Genre: "synthwave", Mood: "nostalgic", TempoBPM: 98, Key: "A minor", Vocals: "none",
				Instruments: []string{"analog synth", "drum machine"}, Structure: []string{"intro", "verse", "chorus", "outro"}, DurationSeconds: 180,
				Description: "A slow neon cruise.", GenerationPrompt: "instrumental synthwave, 98 bpm"}},
		{name: "lyrics", object: "ai_lyrics", path: func(string) string { return "/api/v1/ai/lyrics" },
			body: map[string]any{"prompt": "Rain in the city.", "language": "en", "structure": []string{"verse", "chorus"}},
			valid: `{"title":"Neon Rain","language":"en","sections":[{"kind":"verse","lines":["City lights are bleeding","Through the glass"]},` +
				`{"kind":"chorus","lines":["Neon rain","Neon rain"]}]}`,
			want: api.AILyricsView{Title: "Neon Rain", Language: "en", Sections: []api.AILyricSectionView{
				{Kind: "verse", Lines: []string{"City lights are bleeding", "Through the glass"}}, {Kind: "chorus", Lines: []string{"Neon rain", "Neon rain"}}}}},
		{name: "prompt_enhance", object: "ai_enhanced_prompt", path: func(string) string { return "/api/v1/ai/prompts/enhance" },
			body:  map[string]any{"prompt": "chill beat"},
			valid: `{"prompt":"Warm lo-fi hip hop, 80 bpm","negativePrompt":"","tags":["lo-fi","rhodes"],"rationale":"Named the tempo."}`,
			want: api.AIEnhancedPromptView{Prompt: "Warm lo-fi hip hop, 80 bpm", NegativePrompt: "", Tags: []string{"lo-fi", "rhodes"},
				Rationale: "Named the tempo."}},
		{name: "project_analyze", object: "ai_project_analysis", path: func(p string) string { return "/api/v1/ai/projects/" + p + "/analyze" },
			body: map[string]any{"focus": "What is missing?"},
			valid: `{"summary":"A draft with a clear idea.","readiness":30,"strengths":["A strong concept"],"risks":[],` +
				`"nextSteps":[{"type":"cover_art","title":"Cover art","description":"A square cover."}]}`,
			want: api.AIProjectAnalysisView{Summary: "A draft with a clear idea.", Readiness: 30, Strengths: []string{"A strong concept"},
				Risks: []string{}, NextSteps: []api.AICreativeTaskView{{Type: "cover_art", Title: "Cover art", Description: "A square cover."}}}},
		{name: "project_blueprint", object: "ai_project_blueprint", path: func(string) string { return "/api/v1/projects/ai-blueprint" },
			body: map[string]any{"brief": "A music video for Night Drive.", "scenes": 2},
			valid: `{"title":"Night Drive","genre":"synthwave","mood":"nostalgic","visualStyle":"neon-lit film grain","scenes":[` +
				`{"number":1,"title":"Garage","description":"The car wakes.","durationSeconds":30},` +
				`{"number":2,"title":"Highway","description":"City lights stream by.","durationSeconds":90}],` +
				`"creativeTasks":[{"type":"music_video","title":"Shoot the drive","description":"Film the highway."}],"estimatedProductionDays":21}`,
			want: api.AIProjectBlueprintView{Title: "Night Drive", Genre: "synthwave", Mood: "nostalgic", VisualStyle: "neon-lit film grain",
				Scenes: []api.AISceneView{{Number: 1, Title: "Garage", Description: "The car wakes.", DurationSeconds: 30},
					{Number: 2, Title: "Highway", Description: "City lights stream by.", DurationSeconds: 90}},
				CreativeTasks:           []api.AICreativeTaskView{{Type: "music_video", Title: "Shoot the drive", Description: "Film the highway."}},
				EstimatedProductionDays: 21}},
	}
}

// taskAnswer is the shape every task route answers.
type taskAnswer struct {
	Object string            `json:"object"`
	Result json.RawMessage   `json:"result"`
	Run    api.AITaskRunView `json:"run"`
}

// createTestProject creates a project with key and returns its id.
func createTestProject(t *testing.T, s *platformtest.System, key, title string) string {
	t.Helper()
	r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/projects", Key: key,
		Body: map[string]any{"title": title, "type": "music_video", "description": "A lone driver crosses a neon city."}})
	var p api.ProjectView
	aiOK(t, "create project", r, http.StatusCreated, &p)
	return p.ID
}

// errorDetails reads an error answer's details.
func errorDetails(t *testing.T, r *platformtest.Response) map[string]any {
	t.Helper()
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Data != nil {
		t.Fatalf("an error answer holds data: %s", r.Body)
	}
	return env.Error.Details
}

// checkTaskLedger checks that every operation of ids completed, was
// charged exactly once through the ledger, and that the workspace's
// balance fell by exactly what they settled.
func checkTaskLedger(t *testing.T, s *platformtest.System, before int64, ids []string) {
	t.Helper()
	var settled int64
	for _, id := range ids {
		o := aiOp(t, s, id)
		if o.Status != "completed" || o.Endpoint != "task" || o.Usage.CreditsSettled == nil || *o.Usage.CreditsSettled == "0" ||
			o.Usage.Source == nil || *o.Usage.Source != "reported" {
			t.Fatalf("operation %s: %+v", id, o)
		}
		var n int64
		fmt.Sscan(*o.Usage.CreditsSettled, &n)
		settled += n
		for _, typ := range []string{"reserve", "settle"} {
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, typ+":"+id); c != 1 {
				t.Fatalf("%s: %d %s movements, want 1", id, c, typ)
			}
		}
	}
	if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before-settled {
		t.Fatalf("balance %d, want %d - %d", got, before, settled)
	}
	if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != 0 {
		t.Fatalf("reserved %d, want 0", got)
	}
}

// TestAITaskRoutesAnswerValidResults: each task route answers the typed
// result of a scripted valid answer, with its one attempt's operation
// (completed, endpoint task, charged once on reported usage); the
// provider was asked for JSON against the task's schema; a replay of the
// key answers the same without another call; the blueprint creates no
// project.
func TestAITaskRoutesAnswerValidResults(t *testing.T) {
	t.Parallel()
	opts, sims := aiTaskOptions(t, false)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		project := createTestProject(t, s, s.Boot.TestKey, "Night Drive")
		projects := count(t, s, `SELECT COUNT(*) FROM projects`)
		for _, tc := range aiTaskCases() {
			sims.openai.Reset()
			before := creditInt(t, s, ledger.AccountWorkspaceCredits)
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, 1)
			r := aiPost(s, s.Boot.TestKey, tc.path(project), "task-"+tc.name, tc.body)
			var a taskAnswer
			aiOK(t, tc.name, r, http.StatusOK, &a)
			got := reflect.New(reflect.TypeOf(tc.want))
			if err := json.Unmarshal(a.Result, got.Interface()); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if v, ok := want.(api.AIProjectAnalysisView); ok {
				v.ProjectID = project
				want = v
			}
			if !reflect.DeepEqual(got.Elem().Interface(), want) || a.Object != tc.object {
				t.Fatalf("%s: %s %+v, want %+v", tc.name, a.Object, got.Elem().Interface(), want)
			}
			if a.Run.Task != tc.name || len(a.Run.OperationIDs) != 1 || len(a.Run.Operations) != 1 || a.Run.Operations[0].ID != a.Run.OperationIDs[0] ||
				a.Run.Operations[0].Task != tc.name || a.Run.CreditsSettled != *a.Run.Operations[0].Usage.CreditsSettled {
				t.Fatalf("%s run: %+v", tc.name, a.Run)
			}
			checkTaskLedger(t, s, before, a.Run.OperationIDs)
			reqs := sent(t, sims)
			if len(reqs) != 1 || !strings.Contains(string(reqs[0]), `"json_schema"`) || strings.Contains(string(reqs[0]), `"tools"`) {
				t.Fatalf("%s: provider requests %s", tc.name, reqs)
			}
			// The replay answers the recorded answer; nothing is asked.
			r = aiPost(s, s.Boot.TestKey, tc.path(project), "task-"+tc.name, tc.body)
			var again taskAnswer
			aiOK(t, tc.name+" replay", r, http.StatusOK, &again)
			if r.Header.Get("Idempotent-Replayed") != "true" || string(again.Result) != string(a.Result) ||
				again.Run.OperationIDs[0] != a.Run.OperationIDs[0] || len(sent(t, sims)) != 1 {
				t.Fatalf("%s replay: %s", tc.name, r.Body)
			}
			r = aiPost(s, s.Boot.TestKey, tc.path(project), "task-"+tc.name, map[string]any{"prompt": "other", "brief": "other"})
			if r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
				t.Fatalf("%s: same key, other body: %d %s", tc.name, r.Status, r.Body)
			}
		}
		if c := count(t, s, `SELECT COUNT(*) FROM projects`); c != projects {
			t.Fatalf("projects = %d, want %d: a blueprint created a project", c, projects)
		}
	})
}

// sent is the bodies of the chat completion requests the OpenAI
// simulator received.
func sent(t *testing.T, sims aiSims) [][]byte {
	t.Helper()
	var out [][]byte
	for _, rq := range sims.openai.Requests() {
		if strings.HasSuffix(rq.Path, "/chat/completions") {
			out = append(out, rq.Body)
		}
	}
	return out
}

// TestAITaskRetryThenGenerationFailed: an invalid answer then a valid
// one answers the result with two operations, both charged, the ledger
// exact, the retry carrying the platform's problems; two invalid
// answers are 502 GENERATION_FAILED with no result, both attempts
// charged and named in details.operationIds, and the key's retry answers
// the same without asking; the blueprint never creates a project.
func TestAITaskRetryThenGenerationFailed(t *testing.T) {
	t.Parallel()
	opts, sims := aiTaskOptions(t, false)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		project := createTestProject(t, s, s.Boot.TestKey, "Night Drive")
		projects := count(t, s, `SELECT COUNT(*) FROM projects`)
		const invalid = `{"title":"only a title"}`
		for _, tc := range aiTaskCases() {
			sims.openai.Reset()
			before := creditInt(t, s, ledger.AccountWorkspaceCredits)
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: invalid}, 1)
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: tc.valid}, 1)
			r := aiPost(s, s.Boot.TestKey, tc.path(project), "", tc.body)
			var a taskAnswer
			aiOK(t, tc.name+" retried", r, http.StatusOK, &a)
			if len(a.Run.OperationIDs) != 2 || a.Run.OperationIDs[0] == a.Run.OperationIDs[1] {
				t.Fatalf("%s run: %+v", tc.name, a.Run)
			}
			checkTaskLedger(t, s, before, a.Run.OperationIDs)
			reqs := sent(t, sims)
			if len(reqs) != 2 || !strings.Contains(string(reqs[1]), "The platform refused that answer") {
				t.Fatalf("%s: provider requests %s", tc.name, reqs)
			}

			// Two invalid answers.
			sims.openai.Reset()
			before = creditInt(t, s, ledger.AccountWorkspaceCredits)
			sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: invalid}, 2)
			r = aiPost(s, s.Boot.TestKey, tc.path(project), "fail-"+tc.name, tc.body)
			if r.Status != http.StatusBadGateway || r.Code() != "GENERATION_FAILED" {
				t.Fatalf("%s: %d %s", tc.name, r.Status, r.Body)
			}
			d := errorDetails(t, r)
			ids, _ := d["operationIds"].([]any)
			if d["task"] != tc.name || d["reason"] != "invalid_answer" || d["attempts"] != float64(2) || len(ids) != 2 {
				t.Fatalf("%s details: %v", tc.name, d)
			}
			checkTaskLedger(t, s, before, []string{ids[0].(string), ids[1].(string)})
			if n := len(sent(t, sims)); n != 2 {
				t.Fatalf("%s: %d provider calls, want 2", tc.name, n)
			}
			// The key's retry answers the failure again without asking.
			r = aiPost(s, s.Boot.TestKey, tc.path(project), "fail-"+tc.name, tc.body)
			if r.Status != http.StatusBadGateway || r.Code() != "GENERATION_FAILED" || len(sent(t, sims)) != 2 {
				t.Fatalf("%s: retry of the failure: %d %s", tc.name, r.Status, r.Body)
			}
			checkTaskLedger(t, s, before, []string{ids[0].(string), ids[1].(string)})
		}
		if c := count(t, s, `SELECT COUNT(*) FROM projects`); c != projects {
			t.Fatalf("projects = %d, want %d: a blueprint created a project", c, projects)
		}
	})
}

// TestAITaskInsufficientCreditsBeforeAnyCall: a task whose route's model
// the free credits cannot reserve is 422 INSUFFICIENT_CREDITS on every
// route; no provider was called, no operation written, the balance is
// unchanged.
func TestAITaskInsufficientCreditsBeforeAnyCall(t *testing.T) {
	t.Parallel()
	opts, sims := aiTaskOptions(t, true)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		project := createTestProject(t, s, s.Boot.TestKey, "Night Drive")
		sims.openai.Reset()
		before := creditInt(t, s, ledger.AccountWorkspaceCredits)
		for _, tc := range aiTaskCases() {
			r := aiPost(s, s.Boot.TestKey, tc.path(project), "", tc.body)
			if r.Status != http.StatusUnprocessableEntity || r.Code() != "INSUFFICIENT_CREDITS" {
				t.Fatalf("%s: %d %s", tc.name, r.Status, r.Body)
			}
		}
		if n := len(sent(t, sims)); n != 0 {
			t.Fatalf("the provider was called %d times", n)
		}
		if c := count(t, s, `SELECT COUNT(*) FROM ai_operations`); c != 0 {
			t.Fatalf("operations = %d, want 0", c)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceCredits); got != before {
			t.Fatalf("balance %d, want %d", got, before)
		}
	})
}

// TestAITaskAuthorization: every task route between principals. A
// VIEWER (no track.generate) and a key without ai:use are ACCESS_DENIED;
// another tenant naming this workspace is WORKSPACE_ACCESS_DENIED; the
// live environment has no model for the tasks. Analyze reads the
// project exactly as GET /api/v1/projects/{id} does: another workspace's
// project, the other environment's, and one a MEMBER's assigned grant
// does not reach answer what that route answers (NOT_FOUND), and a key with
// ai:use but not read is ACCESS_DENIED. None of it calls a provider,
// writes an operation or moves credits.
func TestAITaskAuthorization(t *testing.T) {
	t.Parallel()
	opts, sims := aiTaskOptions(t, false)
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		owner := bootstrapOwner(t, s, "Studio")
		op := person{email: owner.email, cookie: owner.cookie}
		viewer := join(t, s, "viewer@example.com", "Viewer", invite(t, s, op, "viewer@example.com", "VIEWER"))
		member := join(t, s, "member@example.com", "Member", invite(t, s, op, "member@example.com", "MEMBER"))
		other := bootstrapOwner(t, s, "Elsewhere")
		oth := person{email: other.email, cookie: other.cookie}
		_, narrow := createKey(t, s, owner.boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		_, aiOnly := createKey(t, s, owner.boot.TestKey, map[string]any{"name": "ai only", "scopes": []string{"ai:use"}}, "")
		settle(t, s, "plan.monthly_grant")
		mine := createTestProject(t, s, owner.boot.TestKey, "Owner's video")
		theirs := createTestProject(t, s, other.boot.TestKey, "Their video")
		sims.openai.Reset()
		calls := len(sent(t, sims))
		ops := count(t, s, `SELECT COUNT(*) FROM ai_operations`)
		movements := count(t, s, `SELECT COUNT(*) FROM ledger_movements`)

		key := func(k, method, path string, body any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: method, Path: path, Key: k, Body: body})
		}
		into := func(p person, path string, body any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPost, Path: path, Cookie: p.cookie, Body: body,
				Header: map[string]string{transport.EnvironmentHeader: "test", transport.WorkspaceHeader: owner.boot.WorkspaceID}})
		}
		for _, tc := range aiTaskCases() {
			path := tc.path(mine)
			for name, c := range map[string]struct {
				r    *platformtest.Response
				code string
			}{
				"viewer":                            {as(s, viewer, access.Test, http.MethodPost, path, "", tc.body), "ACCESS_DENIED"},
				"key without ai:use":                {key(narrow.Secret, http.MethodPost, path, tc.body), "ACCESS_DENIED"},
				"another tenant into the workspace": {into(oth, path, tc.body), "WORKSPACE_ACCESS_DENIED"},
			} {
				if c.r.Code() != c.code {
					t.Errorf("%s %s: %d %s, want %s", tc.name, name, c.r.Status, c.r.Body, c.code)
				}
			}
			if tc.name != "project_analyze" {
				// The live environment routes no task: refused before any
				// reservation, in its own environment.
				if r := key(owner.boot.LiveKey, http.MethodPost, path, tc.body); r.Code() != "PROVIDER_UNAVAILABLE" {
					t.Errorf("%s live key: %d %s", tc.name, r.Status, r.Body)
				}
				continue
			}
			// Analyze refuses exactly as the project read does.
			for name, c := range map[string]struct {
				analyze, read func() *platformtest.Response
				code          string
			}{
				"another workspace's project": {
					func() *platformtest.Response {
						return key(owner.boot.TestKey, http.MethodPost, tc.path(theirs), tc.body)
					},
					func() *platformtest.Response {
						return key(owner.boot.TestKey, http.MethodGet, "/api/v1/projects/"+theirs, nil)
					},
					"NOT_FOUND"},
				"another tenant's session": {
					func() *platformtest.Response { return as(s, oth, access.Test, http.MethodPost, path, "", tc.body) },
					func() *platformtest.Response {
						return as(s, oth, access.Test, http.MethodGet, "/api/v1/projects/"+mine, "", nil)
					},
					"NOT_FOUND"},
				"live key, test project": {
					func() *platformtest.Response { return key(owner.boot.LiveKey, http.MethodPost, path, tc.body) },
					func() *platformtest.Response {
						return key(owner.boot.LiveKey, http.MethodGet, "/api/v1/projects/"+mine, nil)
					},
					"NOT_FOUND"},
				"live session, test project": {
					func() *platformtest.Response { return as(s, op, access.Live, http.MethodPost, path, "", tc.body) },
					func() *platformtest.Response {
						return as(s, op, access.Live, http.MethodGet, "/api/v1/projects/"+mine, "", nil)
					},
					"NOT_FOUND"},
				"member, a project not assigned to it": {
					func() *platformtest.Response { return as(s, member, access.Test, http.MethodPost, path, "", tc.body) },
					func() *platformtest.Response {
						return as(s, member, access.Test, http.MethodGet, "/api/v1/projects/"+mine, "", nil)
					},
					"NOT_FOUND"},
				"unknown project": {
					func() *platformtest.Response {
						return key(owner.boot.TestKey, http.MethodPost, tc.path("prj_missing"), tc.body)
					},
					func() *platformtest.Response {
						return key(owner.boot.TestKey, http.MethodGet, "/api/v1/projects/prj_missing", nil)
					},
					"NOT_FOUND"},
			} {
				a, rd := c.analyze(), c.read()
				if a.Code() != c.code || rd.Code() != c.code || a.Status != rd.Status {
					t.Errorf("analyze, %s: %d %s; read: %d %s; want %s", name, a.Status, a.Body, rd.Status, rd.Body, c.code)
				}
			}
			if r := key(aiOnly.Secret, http.MethodPost, path, tc.body); r.Code() != "ACCESS_DENIED" {
				t.Errorf("analyze with a key without read: %d %s", r.Status, r.Body)
			}
		}
		if got := len(sent(t, sims)); got != calls {
			t.Fatalf("refused requests reached the provider: %d calls, want %d", got, calls)
		}
		if got := count(t, s, `SELECT COUNT(*) FROM ai_operations`); got != ops {
			t.Fatalf("refused requests wrote operations: %d, want %d", got, ops)
		}
		if got := count(t, s, `SELECT COUNT(*) FROM ledger_movements`); got != movements {
			t.Fatalf("refused requests moved credits: %d movements, want %d", got, movements)
		}
		// The owner analyzes its project; the key with ai:use alone asks
		// the other tasks.
		sims.openai.Reply("sim-gpt", openaitest.Reply{JSON: aiTaskCases()[3].valid}, 1)
		aiOK(t, "owner analyzes", key(owner.boot.TestKey, http.MethodPost, "/api/v1/ai/projects/"+mine+"/analyze", map[string]any{}), http.StatusOK, nil)
		aiOK(t, "ai-only key, brief", key(aiOnly.Secret, http.MethodPost, "/api/v1/ai/music/brief", map[string]any{"prompt": "A song."}), http.StatusOK, nil)
	})
}
