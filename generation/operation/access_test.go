package operation

import (
	"context"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
)

// operations is a Getter over operations held in memory.
type operations map[string]Operation

func (m operations) GenerationOperationGet(_ context.Context, sc access.Scope, id string) (Operation, error) {
	o, ok := m[id]
	if !ok || o.Scope != sc {
		return Operation{}, fault.E("test.get", fault.NotFound, "No such operation.")
	}
	return o, nil
}

// TestAccessChecksOfOneOperation: the resource an operation's routes
// check is its creator and workspace, in the caller's scope only; a
// cancel is refused up front once the operation completed or its delivery
// began, as Cancel itself would refuse it.
func TestAccessChecksOfOneOperation(t *testing.T) {
	ctx := context.Background()
	p := &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_2"}
	at := func(id string, snap generation.Snapshot) Operation {
		return Operation{ID: id, Scope: p.Scope(), CreatedByUserID: "usr_1", Snapshot: snap}
	}
	st := operations{
		"op_queued":     at("op_queued", generation.Snapshot{Status: generation.StatusQueued, Stage: generation.StageQueued}),
		"op_completed":  at("op_completed", generation.Snapshot{Status: generation.StatusCompleted, Stage: generation.StageFinished}),
		"op_delivering": at("op_delivering", generation.Snapshot{Status: generation.StatusProcessing, Stage: generation.StageIngesting, Outputs: []generation.Output{{AssetID: "ast_1"}, {}}}),
		"op_failed":     at("op_failed", generation.Snapshot{Status: generation.StatusFailed, Stage: generation.StageFailed}),
	}
	other := operations{"op_other": {ID: "op_other", Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}}}
	s := &Service{}

	r, err := s.Resource(ctx, st, p, "op_queued")
	if err != nil || r.OwnerUserID != "usr_1" || r.WorkspaceID != "ws_1" {
		t.Fatalf("Resource = %+v, %v; want owner usr_1 in ws_1", r, err)
	}
	if _, err := s.Resource(ctx, other, p, "op_other"); fault.CodeOf(err) != fault.NotFound {
		t.Fatalf("Resource of another workspace: %v; want NOT_FOUND", err)
	}
	for id, want := range map[string]fault.Code{"op_queued": "", "op_failed": "", "op_completed": fault.InvalidState, "op_delivering": fault.InvalidState} {
		err := s.CheckCancel(ctx, st, p, id)
		if got := fault.CodeOf(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("CheckCancel(%s) = %v; want %q", id, err, want)
		}
	}
	if err := s.CheckCancel(ctx, other, p, "op_other"); fault.CodeOf(err) != fault.NotFound {
		t.Errorf("CheckCancel of another workspace: %v; want NOT_FOUND", err)
	}
}
