package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai/tool"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAITools covers the artifacts of tool.Store: an artifact
// round-trips whole (arguments, creator, NULL decision), is read only in
// its own tenant, workspace and environment, is inserted once, and an
// update is a compare-and-set on the version that writes the decision and
// the result.
func exerciseAITools(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := fresh(t, open)
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	a := tool.Artifact{ID: "aiart_1", Scope: sc, Tool: tool.ProjectCreateDraft, OperationID: "aiop_1", ToolCallID: "call_1",
		Arguments: json.RawMessage(`{"title":"Night Drive","type":"single"}`),
		CreatedBy: tool.Actor{Kind: access.CredentialAPIKey, UserID: "usr_1", KeyID: "key_1"}, Status: tool.StatusDraft,
		Version: 1, CreatedAt: Epoch, UpdatedAt: Epoch}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.AIArtifactInsert(ctx, a); err != nil {
			return err
		}
		if err := tx.AIArtifactInsert(ctx, a); !fault.Is(err, fault.Conflict) {
			t.Errorf("second insert of an id: %v, want CONFLICT", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Read().AIArtifactGet(ctx, sc, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("artifact (-stored +read):\n%s", diff)
	}
	for _, other := range []access.Scope{{TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test},
		{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test}, {TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live}} {
		if _, err := db.Read().AIArtifactGet(ctx, other, a.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("read from %+v: %v, want NOT_FOUND", other, err)
		}
	}

	at := Epoch.Add(time.Minute)
	next := a
	next.Status, next.Version, next.UpdatedAt = tool.StatusApplied, 2, at
	next.Result = tool.Result{Type: "project", ID: "prj_1"}
	next.DecidedBy, next.DecidedAt = tool.Actor{Kind: access.CredentialSession, UserID: "usr_1"}, &at
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.AIArtifactUpdate(ctx, next); err != nil {
			return err
		}
		if err := tx.AIArtifactUpdate(ctx, next); !fault.Is(err, fault.Conflict) {
			t.Errorf("a stale update: %v, want CONFLICT", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err = db.Read().AIArtifactGet(ctx, sc, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(next, got); diff != "" {
		t.Errorf("updated artifact (-stored +read):\n%s", diff)
	}
}
