package tool

import (
	"context"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation/operation"
)

// Get returns artifact id as p may see it: NOT_FOUND for one of another
// tenant, workspace or environment; ACCESS_DENIED (details.reason
// artifact_of_another_user) for one another user's call made.
func (r *Runner) Get(ctx context.Context, st Store, p *access.Principal, id string) (Artifact, error) {
	const op = "tool.Get"
	a, err := st.AIArtifactGet(ctx, p.Scope(), id)
	if err != nil {
		return Artifact{}, fault.Wrap(op, err)
	}
	if err := mine(op, p, a); err != nil {
		return Artifact{}, err
	}
	return a, nil
}

// mine refuses an artifact that p's user did not make: the decision on a
// proposal belongs to the user whose call it answers.
func mine(op string, p *access.Principal, a Artifact) error {
	if p.UserID == "" || a.CreatedBy.UserID != p.UserID {
		return fault.E(op, fault.AccessDenied, "Only the user whose request made this proposal can see or decide it.").
			With("reason", "artifact_of_another_user")
	}
	return nil
}

// Reject declines p's draft artifact id in st's unit of work, with its
// outbox event and audit record. Errors as Get, and
// INVALID_STATE_TRANSITION for an artifact that is no longer a draft.
func (r *Runner) Reject(ctx context.Context, st Store, p *access.Principal, id, requestID string) (Artifact, error) {
	const op = "tool.Reject"
	a, err := r.Get(ctx, st, p, id)
	if err != nil {
		return Artifact{}, err
	}
	to, err := Transition(a.Status, EventReject)
	if err != nil {
		return Artifact{}, err
	}
	next, err := r.move(ctx, st, p, a, to, EventTypeRejected)
	if err != nil {
		return Artifact{}, err
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionRejected, TargetType: TargetArtifact, TargetID: a.ID,
		RequestID: requestID, Before: map[string]any{"status": a.Status}, After: map[string]any{"status": next.Status}}); err != nil {
		return Artifact{}, err
	}
	return next, nil
}

// move writes a in status to, decided by p, with the outbox event typ. A
// lost compare-and-set is INVALID_STATE_TRANSITION: another decision
// came first.
func (r *Runner) move(ctx context.Context, st Store, p *access.Principal, a Artifact, to Status, typ string) (Artifact, error) {
	const op = "tool.move"
	now := st.Now()
	next := a
	next.Status, next.Version, next.UpdatedAt = to, a.Version+1, now
	next.DecidedBy, next.DecidedAt = ActorOf(p), &now
	if err := st.AIArtifactUpdate(ctx, next); err != nil {
		if fault.Is(err, fault.Conflict) {
			return Artifact{}, fault.E(op, fault.InvalidState, "The artifact was decided meanwhile; read it again.").
				With("from", string(a.Status))
		}
		return Artifact{}, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, next, typ); err != nil {
		return Artifact{}, err
	}
	return next, nil
}

// Pending is a confirmation checked and ready to apply (Prepare, Apply).
type Pending struct {
	artifact  Artifact
	decl      Declaration
	authority *access.Authority
	plan      operation.Plan
	done      func()
}

// Artifact returns the artifact being confirmed, as read by Prepare.
func (pd *Pending) Artifact() Artifact { return pd.artifact }

// Done ends the confirmation's admission; call it once its unit of work
// ended, committed or not.
func (pd *Pending) Done() {
	if pd.done != nil {
		pd.done()
	}
}

// Prepare checks p's confirmation of artifact id through st (the read
// pool), before its unit of work: the artifact as Get reads it, a draft
// (INVALID_STATE_TRANSITION otherwise), and p's authority, re-checked
// now as p's direct call of the tool's route with the proposed arguments
// (the route's error as it would answer it: a role, scope or feature
// taken away since the draft refuses the confirmation) and by the owning
// domain's checks (INVALID_INPUT, PROVIDER_UNAVAILABLE, ...). A
// generation is priced, routed and admitted here as its route does it;
// the caller calls Done once the unit of work ended.
func (r *Runner) Prepare(ctx context.Context, st ReadStore, p *access.Principal, id string) (*Pending, error) {
	const op = "tool.Prepare"
	a, err := r.Get(ctx, st, p, id)
	if err != nil {
		return nil, err
	}
	if _, err := Transition(a.Status, EventApprove); err != nil {
		return nil, err
	}
	d, ok := r.catalog.Lookup(a.Tool)
	if !ok {
		return nil, fault.E(op, fault.InvalidState, "The artifact's tool is no longer offered.").With("tool", a.Tool)
	}
	auth, err := r.cfg.Authorizer.Authorize(ctx, p, direct(d, a.Arguments))
	if err != nil {
		return nil, err
	}
	pd := &Pending{artifact: a, decl: d, authority: auth}
	switch d.ID {
	case ProjectCreateDraft:
		in, err := createRequest(a.Arguments, "")
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if err := r.cfg.Projects.CheckCreate(p, auth, in); err != nil {
			return nil, err
		}
	case GenerationStart:
		in, err := generationRequest(a.Arguments)
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if pd.plan, err = r.cfg.Generations.Prepare(ctx, st, p, in); err != nil {
			return nil, err
		}
		if pd.done, err = r.cfg.Generations.Admit(ctx, p, pd.plan); err != nil {
			return nil, err
		}
	default:
		return nil, fault.E(op, fault.InvalidState, "The artifact's tool applies nothing.").With("tool", a.Tool)
	}
	return pd, nil
}

// Apply approves and applies a prepared confirmation in st's unit of
// work, which the caller commits with its idempotency record: the
// artifact moves draft -> approved -> applied (compare-and-set on its
// version: of concurrent confirmations one applies, the others are
// INVALID_STATE_TRANSITION), and the owning domain's service does the
// action (project.Service.Create, operation.Service.Accept), with every
// outbox event and audit record of both. Any failure rolls all of it
// back: the artifact stays a draft.
func (r *Runner) Apply(ctx context.Context, st ApplyStore, p *access.Principal, pd *Pending, requestID string) (Artifact, error) {
	const op = "tool.Apply"
	a, err := st.AIArtifactGet(ctx, p.Scope(), pd.artifact.ID)
	if err != nil {
		return Artifact{}, fault.Wrap(op, err)
	}
	if _, err := Transition(a.Status, EventApprove); err != nil {
		return Artifact{}, err
	}
	if a.Version != pd.artifact.Version {
		return Artifact{}, fault.E(op, fault.InvalidState, "The artifact was decided meanwhile; read it again.").With("from", string(a.Status))
	}
	to, _ := Transition(a.Status, EventApprove)
	a, err = r.move(ctx, st, p, a, to, EventTypeApproved)
	if err != nil {
		return Artifact{}, err
	}
	var res Result
	switch pd.decl.ID {
	case ProjectCreateDraft:
		in, err := createRequest(a.Arguments, requestID)
		if err != nil {
			return Artifact{}, fault.Wrap(op, err)
		}
		pr, err := r.cfg.Projects.Create(ctx, st, p, pd.authority, in)
		if err != nil {
			return Artifact{}, err
		}
		res = Result{Type: "project", ID: pr.ID}
	case GenerationStart:
		o, err := r.cfg.Generations.Accept(ctx, st, p, pd.plan)
		if err != nil {
			return Artifact{}, err
		}
		res = Result{Type: "generation_operation", ID: o.ID}
	}
	to, err = Transition(a.Status, EventApply)
	if err != nil {
		return Artifact{}, err
	}
	a.Result = res
	a, err = r.move(ctx, st, p, a, to, EventTypeApplied)
	if err != nil {
		return Artifact{}, err
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionApplied, TargetType: TargetArtifact, TargetID: a.ID,
		RequestID: requestID, Before: map[string]any{"status": StatusDraft},
		After: map[string]any{"status": a.Status, "result": map[string]any{"type": res.Type, "id": res.ID}}}); err != nil {
		return Artifact{}, err
	}
	return a, nil
}
