package ai

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// ModelConfig is one model as the host's configuration lists it (see
// RegistryModel for the fields).
type ModelConfig struct {
	// ID names the model on the platform.
	ID string
	// ProviderID is one of the environment's providers.
	ProviderID string
	// Upstream is the model's name at the provider.
	Upstream string
	// Capabilities must include chat.
	Capabilities []Capability
	// ContextWindow is in units (tokens), 1..MaxContextWindow.
	ContextWindow int64
	// Privacy is the model's privacy class.
	Privacy PrivacyClass
	// InputPrice and OutputPrice are decimal strings of US dollars per
	// unit ("0.00000015").
	InputPrice, OutputPrice string
	// Disabled seeds the model out of service.
	Disabled bool
}

// Environment is one environment's AI configuration.
type Environment struct {
	// Providers are the environment's upstream providers.
	Providers []ProviderConfig
	// Models seed the environment's registry at start (Seed). An
	// environment that lists none keeps its registry as it is.
	Models []ModelConfig
	// Routing is published as the environment's ai.routing policy at
	// start when it has none; a published policy (an administrator's
	// included) is never overridden by configuration.
	Routing *RoutingPolicy
}

// Config configures a Service.
type Config struct {
	// Environments maps test and live to their configuration; an
	// environment without one has no providers and keeps its registry.
	Environments map[access.Environment]Environment
	// Health says when a failing model cools down.
	Health HealthPolicy
}

// Service runs the model registry, its health and the routing policy.
// It holds only its configuration and is safe for concurrent use: every
// read goes to the store, so a change made on one host is seen by the
// next request on every host.
type Service struct {
	cfg Config
	// models are each environment's configured models, validated and
	// normalized, in id order.
	models map[access.Environment][]RegistryModel
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	cfg.Health = cfg.Health.withDefaults()
	s := &Service{cfg: cfg, models: map[access.Environment][]RegistryModel{}}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("ai: unknown environment %q", env)
		}
		seen := map[string]bool{}
		for _, p := range e.Providers {
			if err := p.validate(); err != nil {
				return nil, fmt.Errorf("ai: %s: %w", env, err)
			}
			if seen[p.ID] {
				return nil, fmt.Errorf("ai: %s: provider %s is configured twice", env, p.ID)
			}
			seen[p.ID] = true
		}
		if len(e.Models) > MaxModels {
			return nil, fmt.Errorf("ai: %s: at most %d models", env, MaxModels)
		}
		var ms []RegistryModel
		for _, mc := range e.Models {
			m, err := mc.model(env)
			if err == nil {
				err = m.validate(e.Providers)
			}
			if err != nil {
				return nil, fmt.Errorf("ai: %s: %w", env, err)
			}
			if slices.ContainsFunc(ms, func(x RegistryModel) bool { return x.ID == m.ID }) {
				return nil, fmt.Errorf("ai: %s: model %s is configured twice", env, m.ID)
			}
			ms = append(ms, m)
		}
		slices.SortFunc(ms, func(a, b RegistryModel) int { return cmp.Compare(a.ID, b.ID) })
		s.models[env] = ms
		if e.Routing != nil {
			reg := Registry{Environment: env, Providers: e.Providers, Models: ms}
			if err := e.Routing.normalize().validate(reg); err != nil {
				return nil, fmt.Errorf("ai: %s routing: %w", env, err)
			}
		}
	}
	return s, nil
}

// model returns mc as a registry model of env, its prices canonical.
func (mc ModelConfig) model(env access.Environment) (RegistryModel, error) {
	in, err := ParsePrice(mc.InputPrice)
	if err != nil {
		return RegistryModel{}, fmt.Errorf("model %s: input price %q: %w", mc.ID, mc.InputPrice, err)
	}
	out, err := ParsePrice(mc.OutputPrice)
	if err != nil {
		return RegistryModel{}, fmt.Errorf("model %s: output price %q: %w", mc.ID, mc.OutputPrice, err)
	}
	return RegistryModel{Environment: env, ID: mc.ID, ProviderID: mc.ProviderID, Upstream: mc.Upstream, Capabilities: mc.Capabilities,
		ContextWindow: mc.ContextWindow, Privacy: mc.Privacy, InputPrice: in, OutputPrice: out, Enabled: !mc.Disabled}.normalize(), nil
}

// Publisher is the principal recorded on what the platform writes from
// its configuration.
const Publisher = "platform"

// HealthPolicy returns the service's cooldown policy, defaults applied.
func (s *Service) HealthPolicy() HealthPolicy { return s.cfg.Health }

// RunFunc runs fn in one unit of work of the store, committed when fn
// returns nil (store.Runner[ai.Store]).
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// seedAttempts bounds Seed's retries after losing a race to another host.
const seedAttempts = 3

// Seed makes env's registry match its configuration (see seed), in its
// own unit of work run. Hosts starting together race to seed: the one
// that loses the race for a model's row seeds again, over the winner's
// rows, which then usually needs no write at all.
func (s *Service) Seed(ctx context.Context, run RunFunc, env access.Environment) error {
	var err error
	for range seedAttempts {
		if err = run(ctx, func(st Store) error { return s.seed(ctx, st, env) }); !fault.Is(err, fault.Conflict) {
			return err
		}
	}
	return err
}

// seed makes env's registry match its configuration, in st's unit of
// work: a configured model missing from the store is added; a stored one
// takes the configuration's provider, upstream name, capabilities,
// context window and privacy class, and its enabled flag and prices too
// unless an administrator changed it (then those stay the
// administrator's); a stored model the configuration no longer lists is
// retired (kept, never routed to) and comes back when listed again. An
// environment whose configuration lists no model is left as it is. The
// configured routing policy is published when env has none. Every host
// seeds on start; seeding twice changes nothing. CONFLICT when another
// unit of work wrote a model meanwhile.
func (s *Service) seed(ctx context.Context, st Store, env access.Environment) error {
	const op = "ai.Seed"
	e := s.cfg.Environments[env]
	if len(e.Models) == 0 {
		return nil
	}
	stored, err := st.AIModelList(ctx, env)
	if err != nil {
		return fault.Wrap(op, err)
	}
	now := st.Now()
	for _, m := range s.models[env] {
		i := slices.IndexFunc(stored, func(x RegistryModel) bool { return x.ID == m.ID })
		if i < 0 {
			m.Version, m.CreatedAt, m.UpdatedAt, m.UpdatedBy = 1, now, now, Publisher
			if err := st.AIModelInsert(ctx, m); err != nil {
				return fault.Wrap(op, err)
			}
			continue
		}
		cur := stored[i]
		next := cur
		next.ProviderID, next.Upstream, next.Capabilities, next.ContextWindow, next.Privacy = m.ProviderID, m.Upstream, m.Capabilities, m.ContextWindow, m.Privacy
		next.Retired = false
		if !cur.AdminChanged {
			next.Enabled, next.InputPrice, next.OutputPrice = m.Enabled, m.InputPrice, m.OutputPrice
		}
		if err := s.write(ctx, st, cur, next, now); err != nil {
			return fault.Wrap(op, err)
		}
	}
	for _, cur := range stored {
		if cur.Retired || slices.ContainsFunc(s.models[env], func(m RegistryModel) bool { return m.ID == cur.ID }) {
			continue
		}
		next := cur
		next.Retired = true
		if err := s.write(ctx, st, cur, next, now); err != nil {
			return fault.Wrap(op, err)
		}
	}
	if e.Routing == nil {
		return nil
	}
	switch _, err := st.PolicyCurrent(ctx, policy.Scope{Environment: env}, PolicyRouting); {
	case fault.Is(err, fault.NotFound):
		if _, _, err := policy.Publish(ctx, st, policy.Scope{Environment: env}, PolicyRouting, e.Routing.normalize(), Publisher); err != nil {
			return fault.Wrap(op, err)
		}
	case err != nil:
		return fault.Wrap(op, err)
	}
	return nil
}

// write stores next as the configuration's change of cur, when it
// differs.
func (s *Service) write(ctx context.Context, st Store, cur, next RegistryModel, now time.Time) error {
	if sameModel(cur, next) {
		return nil
	}
	next.Version, next.UpdatedAt, next.UpdatedBy = cur.Version+1, now, Publisher
	return st.AIModelUpdate(ctx, next)
}

// sameModel reports whether a and b hold the same registry fields.
func sameModel(a, b RegistryModel) bool {
	return a.ProviderID == b.ProviderID && a.Upstream == b.Upstream && slices.Equal(a.Capabilities, b.Capabilities) &&
		a.ContextWindow == b.ContextWindow && a.Privacy == b.Privacy && a.InputPrice == b.InputPrice && a.OutputPrice == b.OutputPrice &&
		a.Enabled == b.Enabled && a.Retired == b.Retired
}

// Providers returns env's configured providers, in id order.
func (s *Service) Providers(env access.Environment) []ProviderConfig {
	ps := slices.Clone(s.cfg.Environments[env].Providers)
	slices.SortFunc(ps, func(a, b ProviderConfig) int { return cmp.Compare(a.ID, b.ID) })
	return ps
}

// Registry reads env's registry: its models from the store, its
// providers from configuration.
func (s *Service) Registry(ctx context.Context, st Store, env access.Environment) (Registry, error) {
	ms, err := st.AIModelList(ctx, env)
	if err != nil {
		return Registry{}, fault.Wrap("ai.Registry", err)
	}
	return Registry{Environment: env, Providers: s.Providers(env), Models: ms}, nil
}

// Model reads model id of env's registry; NOT_FOUND for one it does not
// list or that its configuration retired.
func (s *Service) Model(ctx context.Context, st Store, env access.Environment, id string) (RegistryModel, error) {
	const op = "ai.RegistryModel"
	if !ValidID(id) {
		return RegistryModel{}, errNoModel(op)
	}
	m, err := st.AIModelGet(ctx, env, id)
	if fault.Is(err, fault.NotFound) || err == nil && m.Retired {
		return RegistryModel{}, errNoModel(op)
	}
	if err != nil {
		return RegistryModel{}, fault.Wrap(op, err)
	}
	return m, nil
}

// Health returns the health of every model of reg, in reg's order: the
// stored record, or an empty one (never observed) for a model without.
func (s *Service) Health(ctx context.Context, st Store, reg Registry) ([]Health, error) {
	hs, err := st.AIHealthList(ctx, reg.Environment)
	if err != nil {
		return nil, fault.Wrap("ai.Health", err)
	}
	out := make([]Health, 0, len(reg.Models))
	for _, m := range reg.Models {
		h := Health{Environment: reg.Environment, ModelID: m.ID}
		if i := slices.IndexFunc(hs, func(x Health) bool { return x.ModelID == m.ID }); i >= 0 {
			h = hs[i]
		}
		out = append(out, h)
	}
	return out, nil
}

// Routing reads env's current routing policy; NOT_FOUND when none was
// published.
func (s *Service) Routing(ctx context.Context, st Store, env access.Environment) (Routing, error) {
	const op = "ai.Routing"
	v, err := policy.Current(ctx, st, policy.Scope{Environment: env}, PolicyRouting)
	if err != nil {
		return Routing{}, fault.Wrap(op, err)
	}
	return routingOf(env, v)
}

// Route resolves task for c on env's current routing policy, registry
// and health, read from st (Resolve decides; c.At defaults to st's
// time). Errors: Resolve's, and PROVIDER_UNAVAILABLE with details.reason
// no_routing_policy when env has no routing policy.
func (s *Service) Route(ctx context.Context, st Store, task Task, c Caller) (Resolution, error) {
	const op = "ai.Route"
	if c.At.IsZero() {
		c.At = st.Now()
	}
	rt, err := s.Routing(ctx, st, c.Environment)
	if fault.Is(err, fault.NotFound) {
		return Resolution{Task: task, Environment: c.Environment}, fault.E(op, fault.ProviderUnavailable,
			"No routing policy is published in this environment.").With("reason", "no_routing_policy").With("task", string(task))
	}
	if err != nil {
		return Resolution{}, err
	}
	reg, err := s.Registry(ctx, st, c.Environment)
	if err != nil {
		return Resolution{}, err
	}
	hs, err := st.AIHealthList(ctx, c.Environment)
	if err != nil {
		return Resolution{}, fault.Wrap(op, err)
	}
	health := make(map[string]Health, len(hs))
	for _, h := range hs {
		health[h.ModelID] = h
	}
	return Resolve(task, rt, reg, health, c)
}

// healthAttempts bounds RecordOutcome's retries after losing a race.
const healthAttempts = 8

// RecordOutcome records how one call to model o.Model of env ended
// (Observe under the service's HealthPolicy) in st's unit of work, and
// returns the model's health afterwards. Concurrent observations of a
// model are all counted: the store compare-and-sets the record's version
// and a loser reads again. The completion path calls it after every
// provider call, success or failure (OutcomeOf classifies the adapter's
// error); a cancelled call is not recorded. INVALID_INPUT for an unknown
// outcome or an observation without a time; CONFLICT when it kept losing
// races.
func (s *Service) RecordOutcome(ctx context.Context, st Store, env access.Environment, o Observation) (Health, error) {
	const op = "ai.RecordOutcome"
	if !o.Outcome.Valid() {
		return Health{}, fault.Invalid(op, "outcome", "Unknown outcome.")
	}
	if o.At.IsZero() || !env.Valid() || !ValidID(o.Model) {
		return Health{}, fault.Invalid(op, "observation", "An observation needs an environment, a model and a time.")
	}
	for range healthAttempts {
		cur, err := st.AIHealthGet(ctx, env, o.Model)
		if fault.Is(err, fault.NotFound) {
			cur, err = Health{Environment: env, ModelID: o.Model}, nil
		}
		if err != nil {
			return Health{}, fault.Wrap(op, err)
		}
		if o.Outcome == OutcomeCancelled {
			return cur, nil // the caller gave up: nothing to record
		}
		next := Observe(cur, o, s.cfg.Health)
		err = st.AIHealthPut(ctx, next)
		if err == nil {
			return next, nil
		}
		if !fault.Is(err, fault.Conflict) {
			return Health{}, fault.Wrap(op, err)
		}
	}
	return Health{}, fault.E(op, fault.Conflict, "The model's health is being recorded concurrently; retry.")
}
