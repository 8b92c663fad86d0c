package tool_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/fsm"
)

// TestCatalogValidate: a call names a declared tool by function name or
// id and nothing else; its arguments must satisfy the schema, extra fields
// refused, with details naming the argument and the keyword.
func TestCatalogValidate(t *testing.T) {
	c, err := tool.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, d := range c.Declarations() {
		if !name.MatchString(d.Name) || d.Route == "" || len(d.RequiredPermissions) == 0 || d.Domain == "" {
			t.Errorf("declaration %+v", d)
		}
		if d.Mutating != d.RequiresConfirmation {
			t.Errorf("%s: every mutating tool needs confirmation", d.ID)
		}
	}
	cases := []struct {
		name, args    string
		field, reason string
	}{
		{"project_read", `{"projectId":"prj_1"}`, "", ""},
		{"project.read", `{"projectId":"prj_1"}`, "", ""},
		{"project_create_draft", `{"title":"Night Drive","type":"single"}`, "", ""},
		{"generation_start", `{"prompt":"synth-pop","model":"v5"}`, "", ""},
		{"project-read", `{"projectId":"prj_1"}`, "name", "unknown_tool"},
		{"admin_delete_everything", `{}`, "name", "unknown_tool"},
		{"project_read", `{}`, "projectId", "required"},
		{"project_read", `{"projectId":"prj_1","workspaceId":"ws_2"}`, "workspaceId", "additionalProperties"},
		{"project_read", `{"projectId":7}`, "projectId", "type"},
		{"project_read", `"read prj_1 please"`, "", "type"},
		{"project_read", `{"projectId":`, "", "malformed"},
		{"project_create_draft", `{"title":"x","type":"podcast"}`, "type", "enum"},
		{"project_create_draft", `{"title":"","type":"single"}`, "title", "minLength"},
		{"generation_start", `{"prompt":"x","providerPolicy":{"preferred":"MUSIC_PROVIDER_A"}}`, "providerPolicy", "additionalProperties"},
	}
	for _, tc := range cases {
		_, args, err := c.Validate(ai.ToolCall{ID: "call_1", Name: tc.name, Arguments: json.RawMessage(tc.args)})
		if tc.field == "" && tc.reason == "" {
			if err != nil || len(args) == 0 {
				t.Errorf("%s %s: %v", tc.name, tc.args, err)
			}
			continue
		}
		var fe *fault.Error
		if !fault.Is(err, fault.InvalidInput) || !asFault(err, &fe) || fe.Details["field"] != tc.field || fe.Details["reason"] != tc.reason {
			t.Errorf("%s %s: %v %v, want field %q reason %q", tc.name, tc.args, err, detailsOf(err), tc.field, tc.reason)
		}
	}
}

func asFault(err error, fe **fault.Error) bool {
	e, ok := err.(*fault.Error)
	*fe = e
	return ok
}

func detailsOf(err error) map[string]any {
	_, _, d := fault.Public(err)
	return d
}

// TestCatalogSubset: a catalog holds only the tools asked for.
func TestCatalogSubset(t *testing.T) {
	c, err := tool.NewCatalog(tool.ProjectRead)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Lookup("generation_start"); ok || len(c.Functions()) != 1 {
		t.Errorf("catalog of project.read holds %v", c.Declarations())
	}
	if _, err := tool.NewCatalog("project.delete"); err == nil {
		t.Error("an unknown tool id made a catalog")
	}
}

// TestArtifactMoves: the status table is well formed and Transition
// follows it exactly.
func TestArtifactMoves(t *testing.T) {
	tb := fsm.New("tool", "an artifact", tool.Moves())
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Enforced(tool.Transition); err != nil {
		t.Fatal(err)
	}
	for _, s := range []tool.Status{tool.StatusApplied, tool.StatusRejected} {
		for _, e := range []tool.Event{tool.EventApprove, tool.EventApply, tool.EventReject} {
			if _, err := tool.Transition(s, e); !fault.Is(err, fault.InvalidState) {
				t.Errorf("%s on %s: %v, want INVALID_STATE_TRANSITION", e, s, err)
			}
		}
	}
}
