package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// The AI tools run a model's calls under the caller's own authority
// (spec, Authentication 11). No chat route exists yet, so these tests run
// the calls as the completion path will, in process through
// Platform.Tools, for the principal a request's credential stands for,
// and decide the drafts through the artifact routes.

// runTool runs a model's call of name with args as req's principal.
func runTool(t *testing.T, s *platformtest.System, req platformtest.Request, name string, args any) tool.Outcome {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.P.Tools().Run(context.Background(), s.Principal(req), "aiop_test", ai.ToolCall{ID: "call_" + name, Name: name, Arguments: raw})
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return o
}

// toolError is the error a refused call's content tells the model.
type toolError struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// sameRefusal runs the call as req's principal and req itself as the
// direct call, and fails unless both are refused with the same code,
// status and details, and the model is told so.
func sameRefusal(t *testing.T, s *platformtest.System, req platformtest.Request, name string, args any, want string) {
	t.Helper()
	o := runTool(t, s, req, name, args)
	direct := s.Do(req)
	if o.Refusal == nil || o.Artifact != nil {
		t.Fatalf("%s as %s ran: %s (direct %d %s)", name, credentialName(req), o.Content, direct.Status, direct.Body)
	}
	code := fault.CodeOf(o.Refusal)
	if string(code) != want || direct.Code() != want || transport.StatusOf(code) != direct.Status {
		t.Fatalf("%s as %s: tool %s (%d), direct %d %s; want %s", name, credentialName(req), code, transport.StatusOf(code), direct.Status, direct.Body, want)
	}
	var told toolError
	if err := json.Unmarshal(o.Content, &told); err != nil || told.Error.Code != want {
		t.Fatalf("the model was told %s", o.Content)
	}
	var env struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(direct.Body, &env); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(told.Error.Details, env.Error.Details) {
		t.Fatalf("%s as %s: tool details %v, direct details %v", name, credentialName(req), told.Error.Details, env.Error.Details)
	}
}

// artifactRoute calls an artifact route as req's credential.
func artifactRoute(s *platformtest.System, req platformtest.Request, method, id, action, idem string) *platformtest.Response {
	req.Method, req.Path, req.Body = method, "/api/v1/ai/artifacts/"+id, nil
	if action != "" {
		req.Path += "/" + action
	}
	if idem != "" {
		h := map[string]string{"Idempotency-Key": idem}
		for k, v := range req.Header {
			h[k] = v
		}
		req.Header = h
	}
	return s.Do(req)
}

// TestAIToolRefusedAsDirectRoute: a call the caller may not make is
// refused with exactly the code, status and details of the direct route,
// for a narrower member, a narrower key, a project of another workspace
// and one of the other environment, and nothing is stored.
func TestAIToolRefusedAsDirectRoute(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "tools.owner@example.com", "Owner")
		onboard(t, s, &owner, "Tools Studio")
		viewer := join(t, s, "tools.viewer@example.com", "Viewer", invite(t, s, owner, "tools.viewer@example.com", "VIEWER"))
		outsider := signIn(t, s, "tools.outsider@example.com", "Outsider")
		onboard(t, s, &outsider, "Elsewhere")
		hidden := createProject(t, s, owner.cookie, map[string]any{"title": "Hidden", "type": "single"})
		draft := map[string]any{"title": "Night Drive", "type": "single"}
		projects := count(t, s, `SELECT COUNT(*) FROM projects`)

		// A narrower member: a VIEWER holds no project.update.
		sameRefusal(t, s, platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: viewer.cookie, Body: draft},
			"project_create_draft", draft, "ACCESS_DENIED")
		// A narrower key: read only, no projects:write.
		_, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		sameRefusal(t, s, platformtest.Request{Method: "POST", Path: "/api/v1/projects", Key: narrow.Secret, Body: draft},
			"project_create_draft", draft, "ACCESS_DENIED")
		// Another tenant's key: the owner's workspace project is not found.
		sameRefusal(t, s, platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + hidden.ID, Key: narrow.Secret},
			"project_read", map[string]any{"projectId": hidden.ID}, "NOT_FOUND")
		// Another workspace: the owner's workspace project is not found.
		sameRefusal(t, s, platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + hidden.ID, Cookie: outsider.cookie},
			"project_read", map[string]any{"projectId": hidden.ID}, "NOT_FOUND")
		// The other environment: the owner's live project from test mode.
		sameRefusal(t, s, platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + hidden.ID, Cookie: owner.cookie,
			Header: map[string]string{transport.EnvironmentHeader: "test"}}, "project_read", map[string]any{"projectId": hidden.ID}, "NOT_FOUND")
		// A workspace named in the request is never the model's to choose:
		// arguments beyond the schema are refused before any check.
		o := runTool(t, s, platformtest.Request{Cookie: owner.cookie}, "project_read", map[string]any{"projectId": hidden.ID, "workspaceId": "wks_other"})
		if fault.CodeOf(o.Refusal) != fault.InvalidInput {
			t.Fatalf("an extra argument: %s", o.Content)
		}
		o = runTool(t, s, platformtest.Request{Cookie: owner.cookie}, "project_delete", map[string]any{"projectId": hidden.ID})
		if fault.CodeOf(o.Refusal) != fault.InvalidInput || o.Tool != "" {
			t.Fatalf("an undeclared tool: %s", o.Content)
		}

		// What the caller may do runs: the owner reads its project.
		o = runTool(t, s, platformtest.Request{Cookie: owner.cookie}, "project_read", map[string]any{"projectId": hidden.ID})
		var read struct {
			Project struct{ ID, Title string } `json:"project"`
		}
		if o.Refusal != nil || json.Unmarshal(o.Content, &read) != nil || read.Project.ID != hidden.ID || read.Project.Title != "Hidden" {
			t.Fatalf("the owner's read: %s", o.Content)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ai_artifacts`); n != 0 {
			t.Errorf("%d artifacts stored by refused calls and a read", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects`); n != projects {
			t.Errorf("projects = %d, want %d", n, projects)
		}
	})
}

// TestAIToolDraftNeedsConfirmation: a mutating tool makes a draft and
// nothing else; another user's confirmation is refused and changes
// nothing; concurrent confirmations, with one key or several, apply once;
// the applied artifact names its project and cannot be decided again.
func TestAIToolDraftNeedsConfirmation(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "drafts.owner@example.com", "Owner")
		onboard(t, s, &owner, "Drafts Studio")
		admin := join(t, s, "drafts.admin@example.com", "Admin", invite(t, s, owner, "drafts.admin@example.com", "ADMIN"))
		outsider := signIn(t, s, "drafts.outsider@example.com", "Outsider")
		onboard(t, s, &outsider, "Elsewhere")
		me := platformtest.Request{Cookie: owner.cookie}

		o := runTool(t, s, me, "project_create_draft", map[string]any{"title": "Night Drive", "type": "single", "visibility": "public"})
		if o.Refusal != nil || o.Artifact == nil || o.Artifact.Status != tool.StatusDraft {
			t.Fatalf("draft: %+v %s", o.Artifact, o.Content)
		}
		id := o.Artifact.ID
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE title = 'Night Drive'`); n != 0 {
			t.Fatalf("a draft created %d projects", n)
		}
		r := artifactRoute(s, me, "GET", id, "", "")
		var v api.AIArtifactView
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Status != "draft" || v.OperationID != "aiop_test" || v.CreatedBy.UserID != owner.userID ||
			v.Arguments["title"] != "Night Drive" || v.Result != nil {
			t.Fatalf("read the draft: %d %s", r.Status, r.Body)
		}

		// Another user of the workspace, even an ADMIN, neither reads nor
		// decides it; another workspace does not find it.
		for _, action := range []string{"confirm", "reject"} {
			r := artifactRoute(s, platformtest.Request{Cookie: admin.cookie}, "POST", id, action, "other-"+action)
			if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" || detail(r, "reason") != "artifact_of_another_user" {
				t.Fatalf("%s by another user: %d %s", action, r.Status, r.Body)
			}
			r = artifactRoute(s, platformtest.Request{Cookie: outsider.cookie}, "POST", id, action, "outsider-"+action)
			if r.Status != http.StatusNotFound {
				t.Fatalf("%s from another workspace: %d %s", action, r.Status, r.Body)
			}
		}
		testMode := platformtest.Request{Cookie: owner.cookie, Header: map[string]string{transport.EnvironmentHeader: "test"}}
		for _, action := range []string{"", "confirm", "reject"} {
			method := "POST"
			if action == "" {
				method = "GET"
			}
			if r := artifactRoute(s, testMode, method, id, action, "test-mode-"+action); r.Status != http.StatusNotFound {
				t.Fatalf("%s %s of a live draft in test mode: %d %s", method, action, r.Status, r.Body)
			}
		}
		if r := artifactRoute(s, platformtest.Request{Cookie: admin.cookie}, "GET", id, "", ""); r.Status != http.StatusForbidden {
			t.Fatalf("read by another user: %d %s", r.Status, r.Body)
		}
		if r := artifactRoute(s, me, "POST", id, "confirm", ""); r.Status != http.StatusBadRequest || r.Code() != "IDEMPOTENCY_KEY_REQUIRED" {
			t.Fatalf("confirm without a key: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ai_artifacts WHERE id = ? AND status = 'draft' AND version = 1`, id); n != 1 {
			t.Fatal("the refused decisions changed the draft")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE title = 'Night Drive'`); n != 0 {
			t.Fatalf("refused confirmations created %d projects", n)
		}

		// Concurrent confirmations: two share a key, the others each
		// have their own. One applies; the shared key's twin replays it.
		const n = 6
		var wg sync.WaitGroup
		answers := make([]*platformtest.Response, n)
		for i := range n {
			wg.Go(func() {
				key := fmt.Sprintf("confirm-%d", i)
				if i == 1 {
					key = "confirm-0"
				}
				answers[i] = artifactRoute(s, me, "POST", id, "confirm", key)
			})
		}
		wg.Wait()
		applied := ""
		for i, r := range answers {
			switch {
			case r.Status == http.StatusOK:
				var v api.AIArtifactView
				r.Data(t, &v)
				if v.Status != "applied" || v.Result == nil || v.Result.Type != "project" || (applied != "" && v.Result.ID != applied) {
					t.Fatalf("confirmation %d: %s", i, r.Body)
				}
				applied = v.Result.ID
			case r.Status == http.StatusConflict && r.Code() == "INVALID_STATE_TRANSITION":
			default:
				t.Fatalf("confirmation %d: %d %s", i, r.Status, r.Body)
			}
		}
		if applied == "" {
			t.Fatal("no confirmation applied")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE title = 'Night Drive'`); n != 1 {
			t.Fatalf("concurrent confirmations created %d projects", n)
		}
		for typ, want := range map[string]int{tool.EventTypeDrafted: 1, tool.EventTypeApproved: 1, tool.EventTypeApplied: 1, tool.EventTypeRejected: 0} {
			if got := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ? AND aggregate_id = ?`, typ, id); got != want {
				t.Errorf("%s events = %d, want %d", typ, got, want)
			}
		}
		if got := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'project.created' AND aggregate_id = ?`, applied); got != 1 {
			t.Errorf("project.created events = %d", got)
		}
		p := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/projects/" + applied, Cookie: owner.cookie})
		var pv api.ProjectView
		p.Data(t, &pv)
		if pv.OwnerUserID != owner.userID || pv.Visibility != "public" || pv.Status != "DRAFT" {
			t.Fatalf("the applied project: %s", p.Body)
		}
		if r := artifactRoute(s, me, "POST", id, "confirm", "again"); r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" {
			t.Fatalf("confirm an applied artifact: %d %s", r.Status, r.Body)
		}
		if r := artifactRoute(s, me, "POST", id, "reject", ""); r.Status != http.StatusConflict {
			t.Fatalf("reject an applied artifact: %d %s", r.Status, r.Body)
		}

		// A rejected draft is never applied.
		o = runTool(t, s, me, "project_create_draft", map[string]any{"title": "Declined", "type": "album"})
		if r := artifactRoute(s, me, "POST", o.Artifact.ID, "reject", ""); r.Status != http.StatusOK {
			t.Fatalf("reject: %d %s", r.Status, r.Body)
		}
		if r := artifactRoute(s, me, "POST", o.Artifact.ID, "confirm", "late"); r.Status != http.StatusConflict {
			t.Fatalf("confirm a rejected artifact: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE title = 'Declined'`); n != 0 {
			t.Fatalf("a rejected draft created %d projects", n)
		}
	})
}

// TestAIToolAuthorityRechecked: a draft made while the caller could make
// it is refused at confirmation once that authority is gone (a role taken
// away, a key narrower than the session), with the direct route's error,
// and nothing changes.
func TestAIToolAuthorityRechecked(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		owner := signIn(t, s, "recheck.owner@example.com", "Owner")
		onboard(t, s, &owner, "Recheck Studio")
		creator := join(t, s, "recheck.creator@example.com", "Creator", invite(t, s, owner, "recheck.creator@example.com", "CREATOR"))
		me := platformtest.Request{Cookie: creator.cookie}
		o := runTool(t, s, me, "project_create_draft", map[string]any{"title": "Revoked", "type": "single"})
		if o.Artifact == nil {
			t.Fatalf("draft: %s", o.Content)
		}
		if r := setRoles(s, owner, creator.userID, "VIEWER"); r.Status != http.StatusOK {
			t.Fatalf("take the role away: %d %s", r.Status, r.Body)
		}
		direct := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/projects", Cookie: creator.cookie, Body: map[string]any{"title": "x", "type": "single"}})
		r := artifactRoute(s, me, "POST", o.Artifact.ID, "confirm", "after-revoke")
		if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" || r.Status != direct.Status || r.Code() != direct.Code() {
			t.Fatalf("confirm after the role went: %d %s (direct %d %s)", r.Status, r.Body, direct.Status, direct.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ai_artifacts WHERE id = ? AND status = 'draft' AND version = 1`, o.Artifact.ID); n != 1 {
			t.Fatal("the refused confirmation changed the draft")
		}
		if n := count(t, s, `SELECT COUNT(*) FROM projects WHERE title = 'Revoked'`); n != 0 {
			t.Fatal("the refused confirmation created a project")
		}
		// Given back, the same confirmation applies.
		if r := setRoles(s, owner, creator.userID, "CREATOR"); r.Status != http.StatusOK {
			t.Fatalf("give the role back: %d %s", r.Status, r.Body)
		}
		if r := artifactRoute(s, me, "POST", o.Artifact.ID, "confirm", "after-restore"); r.Status != http.StatusOK {
			t.Fatalf("confirm with the role back: %d %s", r.Status, r.Body)
		}

		// A draft made by the bootstrap key, confirmed by a narrower key
		// of the same user: the narrower key's scopes decide.
		wide := platformtest.Request{Key: s.Boot.TestKey}
		o = runTool(t, s, wide, "project_create_draft", map[string]any{"title": "Scoped", "type": "single"})
		if o.Artifact == nil {
			t.Fatalf("key draft: %s", o.Content)
		}
		_, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		r = artifactRoute(s, platformtest.Request{Key: narrow.Secret}, "POST", o.Artifact.ID, "confirm", "narrow")
		if r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" || detail(r, "scope") != access.ScopeProjectsWrite {
			t.Fatalf("confirm with a narrower key: %d %s", r.Status, r.Body)
		}
		if r := artifactRoute(s, wide, "POST", o.Artifact.ID, "confirm", "wide"); r.Status != http.StatusOK {
			t.Fatalf("confirm with the drafting key: %d %s", r.Status, r.Body)
		}
	})
}

// TestAIToolGenerationStart: generation.start is refused as the generate
// route refuses it (a key without music:generate), drafts without
// starting anything or reserving credits, and on confirmation is accepted
// by the generation service as the route accepts it: one operation, its
// credits reserved, in the confirmation's transaction.
func TestAIToolGenerationStart(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, genOptions(), func(t *testing.T, s *platformtest.System) {
		grantTestCredits(t, s, "ai-tools", 1000)
		args := map[string]any{"prompt": "An upbeat synth-pop track about city lights", "model": "v5"}
		_, narrow := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "read only", "scopes": []string{"read"}}, "")
		sameRefusal(t, s, platformtest.Request{Method: "POST", Path: "/api/v1/music/generate", Key: narrow.Secret, Body: args,
			Header: map[string]string{"Idempotency-Key": "direct-narrow"}}, "generation_start", args, "ACCESS_DENIED")
		bad := map[string]any{"prompt": "x", "model": "v9"}
		if o := runTool(t, s, platformtest.Request{Key: s.Boot.TestKey}, "generation_start", bad); fault.CodeOf(o.Refusal) != fault.InvalidInput {
			t.Fatalf("an unknown model: %s", o.Content)
		}

		before := creditInt(t, s, "workspace:credits")
		me := platformtest.Request{Key: s.Boot.TestKey}
		o := runTool(t, s, me, "generation_start", args)
		if o.Artifact == nil {
			t.Fatalf("draft: %s", o.Content)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_operations`); n != 0 || creditInt(t, s, "workspace:credits") != before {
			t.Fatalf("a draft started %d operations or moved credits", n)
		}
		r := artifactRoute(s, me, "POST", o.Artifact.ID, "confirm", "start-1")
		var v api.AIArtifactView
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Result == nil || v.Result.Type != "generation_operation" {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
		again := artifactRoute(s, me, "POST", o.Artifact.ID, "confirm", "start-1")
		if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM generation_operations WHERE id = ?`, v.Result.ID); n != 1 {
			t.Fatalf("operations = %d", n)
		}
		if got := creditInt(t, s, "workspace:credits"); got >= before {
			t.Fatalf("credits %d after the confirmation, %d before: nothing reserved", got, before)
		}
		op := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/operations/" + v.Result.ID, Key: s.Boot.TestKey})
		if op.Status != http.StatusOK {
			t.Fatalf("the started operation: %d %s", op.Status, op.Body)
		}
	})
}
