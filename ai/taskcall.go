package ai

import (
	"context"
	"fmt"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// TaskCall is one request of a structured task's route (package ai/task)
// bound to its caller: each Complete is one attempt, an operation of its
// own (endpoint task) with its credits, as Run. It keeps the attempts'
// operations so that the route answers them, and leaves the last
// attempt's operation open until the task has judged its answer:
// Commit ends it in the route's unit of work, with the answer's
// idempotency record, and Close ends it in a unit of its own when the
// answer was refused. A TaskCall serves one request and is not safe for
// concurrent use.
//
// # Idempotency
//
// With an Idempotency-Key, attempt n's operation holds the key
// TaskKey(task, n, key) with the digest of the request (the route's
// canonical body), so that a duplicate of a request still running is
// refused before it spends anything. The route's own idempotency record
// replays an accepted answer; BeginTask reads the attempts of an earlier
// request with the key and answers the rest.
type TaskCall struct {
	c    *Completions
	p    *access.Principal
	task Task
	id   Identity
	// ops are the attempts' ended operations, in order.
	ops []Operation
	// last is the last attempt, answered and not ended yet.
	last *Pending
	// refused is set when the key's earlier request made maxAttempts
	// attempts whose every answer was refused.
	refused bool
}

// TaskKey is the idempotency key attempt n (from 1) of a task request
// with Idempotency-Key key holds on its operation.
func TaskKey(t Task, n int, key string) string { return fmt.Sprintf("%s/%d/%s", t, n, key) }

// BeginTask binds a request of task t to p. Without an Idempotency-Key
// (id.Key empty) it only checks the task. With one it reads the
// operations of an earlier request with the key, attempt by attempt up
// to maxAttempts, and answers, without spending anything:
//
//   - none: a new request (the TaskCall runs it);
//   - an attempt holding the key with another request: IDEMPOTENCY_CONFLICT;
//   - an attempt running, or the last one ended less than
//     Limits.MaxDuration ago without a next one (its answer is being judged
//     or its next attempt begun): IDEMPOTENCY_IN_PROGRESS
//     (details.operationId);
//   - an attempt failed, cancelled or expired: that failure again, as a
//     replay of /ai/complete answers it;
//   - maxAttempts attempts completed: every answer was refused (an
//     accepted one commits the route's record, which replays it first);
//     Refused reports it and Operations lists them;
//   - fewer completed, none after for longer than Limits.MaxDuration: the
//     request ended without an answer before its next attempt's
//     operation (its credits did not cover it): IDEMPOTENCY_CONFLICT
//     with details.reason unanswered; a new key asks again.
func (c *Completions) BeginTask(ctx context.Context, p *access.Principal, t Task, id Identity, maxAttempts int) (*TaskCall, error) {
	const op = "ai.BeginTask"
	if !t.Valid() {
		return nil, fault.Invalid(op, "task", "Unknown task.")
	}
	tc := &TaskCall{c: c, p: p, task: t, id: id}
	if id.Key == "" {
		return tc, nil
	}
	tc.id.Body = append([]byte(string(t)+"\x00"), id.Body...)
	hash := c.cfg.Sealer.Digest(p.StableID() + "\x00" + string(EndpointTask) + "\x00" + string(tc.id.Body))
	var earlier []Operation
	err := c.cfg.BeginRunFunc(ctx, func(st BeginStore) error {
		earlier = earlier[:0]
		for n := 1; n <= maxAttempts; n++ {
			o, err := st.AIOperationByKey(ctx, p.Scope(), EndpointTask, TaskKey(t, n, id.Key))
			if fault.Is(err, fault.NotFound) {
				return nil
			}
			if err != nil {
				return fault.Wrap(op, err)
			}
			earlier = append(earlier, o)
			if o.Status != OpCompleted {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(earlier) == 0 {
		return tc, nil
	}
	for _, o := range earlier {
		if o.RequestHash != hash {
			return nil, fault.E(op, fault.IdempotencyConflict, "").With("field", "Idempotency-Key")
		}
	}
	last := earlier[len(earlier)-1]
	switch {
	case !last.Status.Terminal():
		return nil, fault.E(op, fault.IdempotencyInProgress, "").With("operationId", last.ID)
	case last.Status != OpCompleted:
		return nil, failure(op, fault.Code(last.FailureCode), last).With("operationIds", operationIDs(earlier))
	case len(earlier) == maxAttempts:
		tc.ops, tc.refused = earlier, true
		return tc, nil
	case last.EndedAt == nil || c.cfg.ReadFunc().Now().Sub(*last.EndedAt) < c.cfg.Limits.MaxDuration:
		return nil, fault.E(op, fault.IdempotencyInProgress, "").With("operationId", last.ID)
	}
	return nil, fault.E(op, fault.IdempotencyConflict, "The request with this Idempotency-Key ended without an answer; ask again with a new key.").
		With("field", "Idempotency-Key").With("reason", "unanswered").With("operationIds", operationIDs(earlier))
}

// operationIDs lists os's ids.
func operationIDs(os []Operation) []string {
	ids := make([]string, len(os))
	for i, o := range os {
		ids[i] = o.ID
	}
	return ids
}

// Refused reports whether the key's earlier request made its every
// attempt and none was accepted: the route answers GENERATION_FAILED
// again, with Operations, and runs nothing.
func (tc *TaskCall) Refused() bool { return tc.refused }

// Operations returns the attempts' ended operations, in order (an
// answered attempt not yet ended by Commit or Close is not among them).
func (tc *TaskCall) Operations() []Operation { return slices.Clone(tc.ops) }

// Complete runs one attempt of the task: it ends the previous attempt,
// whose answer the task refused (Close), then runs req as Run does, with
// the attempt's key, and keeps its operation open for Commit or Close.
// The errors of Run; IDEMPOTENCY_IN_PROGRESS when a duplicate request
// holds the attempt's key. It satisfies ai/task's Completer for the
// call's task.
func (tc *TaskCall) Complete(ctx context.Context, t Task, req Request) (Response, error) {
	const op = "ai.TaskCall"
	if t != tc.task {
		return Response{}, fault.Invalid(op, "task", "The request is bound to another task.")
	}
	if tc.refused {
		return Response{}, fault.E(op, fault.InvalidState, "The request's attempts were all made.")
	}
	if err := tc.Close(ctx); err != nil {
		return Response{}, err
	}
	pl, err := tc.c.taskPlan(op, t, req)
	if err != nil {
		return Response{}, err
	}
	id := Identity{}
	if tc.id.Key != "" {
		id = Identity{Key: TaskKey(t, len(tc.ops)+1, tc.id.Key), Body: tc.id.Body}
	}
	x, err := tc.c.begin(ctx, tc.p, pl, id)
	if err != nil {
		return Response{}, err
	}
	if x.Replayed() {
		return Response{}, fault.E(op, fault.IdempotencyInProgress, "").With("operationId", x.Operation().ID)
	}
	if _, err := x.Execute(ctx, nil); err != nil {
		// Execute ended the operation as failed or cancelled.
		tc.ops = append(tc.ops, x.Operation())
		return Response{}, err
	}
	tc.last = x
	return x.resp, nil
}

// Commit ends the last attempt, whose answer the task accepted, in st's
// unit of work (the route's, with its idempotency record): completed,
// its credits settled. It returns every attempt's operation, in order.
func (tc *TaskCall) Commit(ctx context.Context, st EndStore) ([]Operation, error) {
	if tc.last != nil {
		o, err := tc.last.Complete(ctx, st)
		if err != nil {
			return nil, err
		}
		tc.ops = append(tc.ops, o)
	}
	return slices.Clone(tc.ops), nil
}

// Close ends the last attempt, if one is open, in a unit of work of its
// own: completed (the provider answered; the task refused the answer),
// its credits settled on its usage. A route calls it when the task ends
// without an accepted answer; Complete calls it before the next attempt.
func (tc *TaskCall) Close(ctx context.Context) error {
	if tc.last == nil {
		return nil
	}
	x := tc.last
	var o Operation
	if err := tc.c.cfg.EndRunFunc(context.WithoutCancel(ctx), func(st EndStore) error {
		var err error
		o, err = x.Complete(context.WithoutCancel(ctx), st)
		return err
	}); err != nil {
		return fault.Wrap("ai.TaskCall.Close", err)
	}
	tc.last = nil
	tc.ops = append(tc.ops, o)
	return nil
}

// taskPlan validates req of task t as Run does and plans it.
func (c *Completions) taskPlan(op string, t Task, req Request) (plan, error) {
	lim := c.cfg.Limits
	if len(req.Messages) == 0 || len(req.Messages) > lim.MaxMessages {
		return plan{}, fault.Invalid(op, "messages", fmt.Sprintf("A request holds 1 to %d messages.", lim.MaxMessages))
	}
	maxOut, err := c.checkCommon(op, req.MaxOutputTokens, req.Temperature)
	if err != nil {
		return plan{}, err
	}
	req.MaxOutputTokens, req.Model = maxOut, ""
	pl := plan{endpoint: EndpointTask, task: t, mode: ModeText, request: req, tools: map[string]bool{}}
	if req.JSON {
		pl.mode, pl.needs = ModeJSON, []Capability{CapJSONOutput}
	}
	if len(req.Tools) > 0 && req.ToolChoice != ToolChoiceNone {
		pl.needs = append(pl.needs, CapTools)
	}
	return pl, nil
}
