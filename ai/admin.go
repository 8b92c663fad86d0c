package ai

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/policy"
)

// The outbox event types the registry and routing write.
const (
	// EventModelUpdated: an administrator changed a model (enabled,
	// prices). Aggregate: ModelAggregatePrefix + the model id, at the
	// model's version.
	EventModelUpdated = "ai.model.updated"
	// EventRoutingPublished: a new version of an environment's routing
	// policy was published. Aggregate: PolicyRouting, at the version.
	EventRoutingPublished = "ai.routing.published"
)

// ModelAggregatePrefix starts the aggregate id of a model's events; the
// model id follows.
const ModelAggregatePrefix = "ai_model:"

// Audit actions and targets of the registry and routing.
const (
	// ActionModelUpdated: an administrator changed a model. Before and
	// after: enabled and prices.
	ActionModelUpdated = "ai_model.updated"
	// ActionRoutingPublished: a routing policy version was published.
	// Before: the previous version's reference (absent for the first);
	// after: the new one's, the tasks it changed and its content.
	ActionRoutingPublished = "ai_routing.published"
	// TargetModel is a model of an environment's registry (target id: the
	// model id).
	TargetModel = "ai_model"
	// TargetPolicy is a policy (target id: the policy id, ai.routing).
	TargetPolicy = "policy"
)

// UpdateModel applies an administrator's change to model id of p's
// environment, in st's unit of work, with an audit record and the
// outbox event ai.model.updated. A change that changes nothing writes
// nothing and returns the model with changed false. Who may change a
// model (super_admin) is the route's access policy, evaluated before
// this runs. The model stays the administrator's: configuration no
// longer sets its enabled flag or prices. Errors: INVALID_INPUT naming
// the field (no change asked, a malformed price); NOT_FOUND for a model
// env's registry does not list; CONFLICT when a concurrent write won.
func (s *Service) UpdateModel(ctx context.Context, st Store, p *access.Principal, id string, ch ModelChange) (RegistryModel, bool, error) {
	const op = "ai.UpdateModel"
	if ch.Enabled == nil && ch.InputPrice == nil && ch.OutputPrice == nil {
		return RegistryModel{}, false, fault.Invalid(op, "enabled", "Change at least one of enabled, inputPrice and outputPrice.")
	}
	prices := map[string]*string{"inputPrice": ch.InputPrice, "outputPrice": ch.OutputPrice}
	parsed := map[string]Price{}
	for _, name := range []string{"inputPrice", "outputPrice"} {
		if prices[name] == nil {
			continue
		}
		pr, err := ParsePrice(*prices[name])
		if err != nil {
			return RegistryModel{}, false, fault.Invalid(op, name, err.Error()+".")
		}
		parsed[name] = pr
	}
	if !ValidID(id) {
		return RegistryModel{}, false, errNoModel(op)
	}
	cur, err := st.AIModelGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) {
		return RegistryModel{}, false, errNoModel(op)
	}
	if err != nil {
		return RegistryModel{}, false, fault.Wrap(op, err)
	}
	next := cur
	if ch.Enabled != nil {
		next.Enabled = *ch.Enabled
	}
	if pr, ok := parsed["inputPrice"]; ok {
		next.InputPrice = pr
	}
	if pr, ok := parsed["outputPrice"]; ok {
		next.OutputPrice = pr
	}
	if sameModel(cur, next) {
		return cur, false, nil
	}
	next.AdminChanged = true
	next.Version, next.UpdatedAt, next.UpdatedBy = cur.Version+1, st.Now(), p.StableID()
	if err := st.AIModelUpdate(ctx, next); err != nil {
		return RegistryModel{}, false, fault.Wrap(op, err)
	}
	editable := func(m RegistryModel) map[string]any {
		return map[string]any{"enabled": m.Enabled, "inputPrice": m.InputPrice, "outputPrice": m.OutputPrice}
	}
	payload, err := json.Marshal(map[string]any{"modelId": next.ID, "providerId": next.ProviderID, "enabled": next.Enabled,
		"inputPrice": next.InputPrice, "outputPrice": next.OutputPrice, "version": next.Version})
	if err != nil {
		return RegistryModel{}, false, fault.Wrap(op, err)
	}
	if err := emit(ctx, st, p, EventModelUpdated, ModelAggregatePrefix+next.ID, next.Version, payload); err != nil {
		return RegistryModel{}, false, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionModelUpdated, TargetType: TargetModel, TargetID: next.ID,
		RequestID: ch.RequestID, Before: editable(cur), After: editable(next)}); err != nil {
		return RegistryModel{}, false, fault.Wrap(op, err)
	}
	return next, true, nil
}

// PublishRouting makes pol the routing policy of p's environment (the
// whole policy: a task it does not name is no longer routed), in st's
// unit of work. Content equal to the current version's publishes nothing
// and returns the current version with created false; any other content
// is a new immutable version (policy package), with an audit record and
// the outbox event ai.routing.published. Who may publish (super_admin)
// is the route's access policy. Errors: INVALID_INPUT naming the field
// (tasks.<task>.<field>) for a route that names an unknown task or a
// model env's registry does not list, or a malformed price, strategy or
// privacy class; CONFLICT when it kept losing races to other publishers.
func (s *Service) PublishRouting(ctx context.Context, st Store, p *access.Principal, pol RoutingPolicy, requestID string) (Routing, bool, error) {
	return s.publish(ctx, st, p, requestID, "", func(RoutingPolicy) (RoutingPolicy, error) { return pol, nil })
}

// PublishTask makes r task's route in the routing policy of p's
// environment, keeping every other task's route as the current version
// has it; otherwise as PublishRouting. NOT_FOUND for an unknown task.
// Two administrators publishing different tasks at once both land: the
// loser of the race applies its change to the winner's version.
func (s *Service) PublishTask(ctx context.Context, st Store, p *access.Principal, task Task, r TaskRoute, requestID string) (Routing, bool, error) {
	if !task.Valid() {
		return Routing{}, false, fault.E("ai.PublishTask", fault.NotFound, "No such task.").With("tasks", Tasks())
	}
	return s.publish(ctx, st, p, requestID, task, func(cur RoutingPolicy) (RoutingPolicy, error) {
		next := RoutingPolicy{Tasks: map[Task]TaskRoute{}}
		for t, tr := range cur.Tasks {
			next.Tasks[t] = tr
		}
		next.Tasks[task] = r
		return next, nil
	})
}

// publishAttempts bounds publish's retries after losing a race.
const publishAttempts = 5

// publish appends the routing policy mutate makes of the current one as
// a new version, when it differs. A publisher that loses the race for a
// version number reads the winner's version and mutates it again, so no
// concurrent change is lost.
func (s *Service) publish(ctx context.Context, st Store, p *access.Principal, requestID string, task Task,
	mutate func(RoutingPolicy) (RoutingPolicy, error)) (Routing, bool, error) {
	const op = "ai.PublishRouting"
	env := p.Environment
	scope := policy.Scope{Environment: env}
	reg, err := s.Registry(ctx, st, env)
	if err != nil {
		return Routing{}, false, fault.Wrap(op, err)
	}
	for range publishAttempts {
		cur := Routing{Environment: env, Policy: RoutingPolicy{Tasks: map[Task]TaskRoute{}}}
		v, err := st.PolicyCurrent(ctx, scope, PolicyRouting)
		switch {
		case err == nil:
			if cur, err = routingOf(env, v); err != nil {
				return Routing{}, false, fault.Wrap(op, err)
			}
		case !fault.Is(err, fault.NotFound):
			return Routing{}, false, fault.Wrap(op, err)
		}
		next, err := mutate(cur.Policy)
		if err != nil {
			return Routing{}, false, err
		}
		next = next.normalize()
		if err := next.validate(reg); err != nil {
			return Routing{}, false, err
		}
		canon, hash, err := policy.Canonicalize(next)
		if err != nil {
			return Routing{}, false, fault.Wrap(op, err)
		}
		if cur.Ref.Version > 0 && cur.Ref.Hash == hash {
			return cur, false, nil
		}
		stored, inserted, err := st.PolicyInsert(ctx, policy.Version{Scope: scope, ID: PolicyRouting, Version: cur.Ref.Version + 1,
			Hash: hash, Content: canon, CreatedBy: p.StableID()})
		if err != nil {
			return Routing{}, false, fault.Wrap(op, err)
		}
		if !inserted {
			continue // another publisher took the version: mutate theirs
		}
		out, err := routingOf(env, stored)
		if err != nil {
			return Routing{}, false, fault.Wrap(op, err)
		}
		if err := s.published(ctx, st, p, cur, out, requestID); err != nil {
			return Routing{}, false, fault.Wrap(op, err)
		}
		return out, true, nil
	}
	return Routing{}, false, fault.E(op, fault.Conflict, "The routing policy is being published concurrently; retry.")
}

// published writes the audit record and the outbox event of version out,
// which followed cur (Version 0: none).
func (s *Service) published(ctx context.Context, st Store, p *access.Principal, cur, out Routing, requestID string) error {
	changed := changedTasks(cur.Policy, out.Policy)
	payload, err := json.Marshal(map[string]any{"policyId": PolicyRouting, "version": out.Ref.Version, "hash": out.Ref.Hash,
		"changedTasks": changed})
	if err != nil {
		return err
	}
	if err := emit(ctx, st, p, EventRoutingPublished, PolicyRouting, int64(out.Ref.Version), payload); err != nil {
		return err
	}
	var before any
	if cur.Ref.Version > 0 {
		before = cur.Ref
	}
	content, err := json.Marshal(out.Policy)
	if err != nil {
		return err
	}
	return account.Audit(ctx, st, p, account.AuditEntry{Action: ActionRoutingPublished, TargetType: TargetPolicy, TargetID: PolicyRouting,
		RequestID: requestID, Before: before, After: struct {
			policy.Ref
			ChangedTasks []Task          `json:"changedTasks"`
			Content      json.RawMessage `json:"content"`
		}{out.Ref, changed, content}})
}

// changedTasks lists, in task order, the tasks whose route differs
// between a and b (added, removed or changed).
func changedTasks(a, b RoutingPolicy) []Task {
	out := []Task{}
	for _, t := range Tasks() {
		ra, okA := a.Tasks[t]
		rb, okB := b.Tasks[t]
		if okA != okB || okA && !reflect.DeepEqual(ra.normalize(), rb.normalize()) {
			out = append(out, t)
		}
	}
	return slices.Clip(out)
}

// emit writes one outbox event of p's scope in st's unit of work.
func emit(ctx context.Context, st Store, p *access.Principal, typ, aggregate string, version int64, payload []byte) error {
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment),
		Type: typ, SchemaVersion: 1, AggregateID: aggregate, AggregateVersion: version, OccurredAt: st.Now(), Payload: payload})
	return err
}
