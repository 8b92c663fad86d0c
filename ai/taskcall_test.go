package ai_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

func taskRequest() ai.Request {
	return ai.Request{Messages: []ai.Message{{Role: ai.RoleSystem, Content: "Answer JSON."}, {Role: ai.RoleUser, Content: "x"}},
		JSON: true, JSONSchema: json.RawMessage(`{"type":"object"}`), MaxOutputTokens: 100}
}

// TestTaskCallAttemptsAndKeys: each attempt is an operation of its own;
// a refused attempt ends before the next; an accepted one ends in the
// caller's unit; a duplicate of the key is answered from the earlier
// request's operations without a provider call.
func TestTaskCallAttemptsAndKeys(t *testing.T) {
	f := newOpsFixture(t, nil, ai.Limits{})
	ctx := context.Background()
	body := []byte(`{"prompt":"p"}`)

	// Two attempts, both refused by the task: both completed and charged.
	tc, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k1", Body: body}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := tc.Complete(ctx, ai.TaskComplete, taskRequest()); err != nil {
			t.Fatal(err)
		}
	}
	// A duplicate while the second answer is being judged.
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k1", Body: body}, 2); !fault.Is(err, fault.IdempotencyInProgress) {
		t.Fatalf("while judging: %v", err)
	}
	if err := tc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ops := tc.Operations()
	if len(ops) != 2 || ops[0].Status != ai.OpCompleted || ops[1].Status != ai.OpCompleted || ops[0].Settled() != 2 || ops[1].Settled() != 2 {
		t.Fatalf("operations %+v", ops)
	}
	if credits, reserved := f.balance(t); credits != "996" || reserved != "0" {
		t.Fatalf("balance %s reserved %s", credits, reserved)
	}
	again, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k1", Body: body}, 2)
	if err != nil || !again.Refused() || len(again.Operations()) != 2 || again.Operations()[1].ID != ops[1].ID {
		t.Fatalf("replay of a refused request: %+v %v", again, err)
	}
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k1", Body: []byte(`{"prompt":"q"}`)}, 2); !fault.Is(err, fault.IdempotencyConflict) {
		t.Fatalf("another body: %v", err)
	}
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskLyrics, ai.Identity{Key: "k1", Body: body}, 2); err != nil {
		t.Fatalf("the key of another task is another request: %v", err)
	}

	// One accepted attempt ends in the caller's unit of work.
	tc, err = f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k2", Body: body}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Complete(ctx, ai.TaskComplete, taskRequest()); err != nil {
		t.Fatal(err)
	}
	if err := f.db.InTx(ctx, func(tx *store.Tx) (err error) { ops, err = tc.Commit(ctx, tx); return err }); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Status != ai.OpCompleted || ops[0].IdempotencyKey != ai.TaskKey(ai.TaskComplete, 1, "k2") {
		t.Fatalf("committed %+v", ops)
	}
	// Without the route's record (lost), a duplicate is in progress for a
	// while, then refused as unanswered.
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k2", Body: body}, 2); !fault.Is(err, fault.IdempotencyInProgress) {
		t.Fatalf("right after: %v", err)
	}
	f.clock.Advance(6 * time.Minute)
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k2", Body: body}, 2); !fault.Is(err, fault.IdempotencyConflict) {
		t.Fatalf("long after: %v", err)
	}

	// A failed attempt answers its failure again, and nothing is called.
	f.provs["pa"].script = []call{{err: ai.Failure{Code: fault.InvalidInput, Class: ai.ClassRequest}.Err("fake")}}
	tc, err = f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k3", Body: body}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Complete(ctx, ai.TaskComplete, taskRequest()); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("failed attempt: %v", err)
	}
	if ops := tc.Operations(); len(ops) != 1 || ops[0].Status != ai.OpFailed {
		t.Fatalf("failed operations %+v", ops)
	}
	asked := len(f.provs["pa"].asked)
	if _, err := f.ops.BeginTask(ctx, f.p, ai.TaskComplete, ai.Identity{Key: "k3", Body: body}, 2); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("replay of a failure: %v", err)
	}
	if len(f.provs["pa"].asked) != asked {
		t.Fatal("a replay called the provider")
	}
}
