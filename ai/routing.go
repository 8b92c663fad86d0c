package ai

import (
	"slices"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// PolicyRouting is the policy id of an environment's routing policy: one
// immutable, versioned document holding every task's route.
const PolicyRouting = "ai.routing"

// Task is a kind of work the platform asks a model for.
type Task string

// The tasks.
const (
	// TaskChat: a conversation.
	TaskChat Task = "chat"
	// TaskComplete: one completion of a prompt with context.
	TaskComplete Task = "complete"
	// TaskMusicBrief: a structured music brief.
	TaskMusicBrief Task = "music_brief"
	// TaskLyrics: structured lyrics.
	TaskLyrics Task = "lyrics"
	// TaskPromptEnhance: a structured, improved generation prompt.
	TaskPromptEnhance Task = "prompt_enhance"
	// TaskProjectAnalyze: a structured analysis of a project.
	TaskProjectAnalyze Task = "project_analyze"
	// TaskProjectBlueprint: a structured project blueprint.
	TaskProjectBlueprint Task = "project_blueprint"
)

// Tasks lists every task.
func Tasks() []Task {
	return []Task{TaskChat, TaskComplete, TaskMusicBrief, TaskLyrics, TaskPromptEnhance, TaskProjectAnalyze, TaskProjectBlueprint}
}

// Valid reports whether t is a known task.
func (t Task) Valid() bool { return slices.Contains(Tasks(), t) }

// Needs returns the capabilities every model serving t must have: chat,
// and JSON output for the tasks that answer structured JSON.
func (t Task) Needs() []Capability {
	if t == TaskChat || t == TaskComplete {
		return []Capability{CapChat}
	}
	return []Capability{CapChat, CapJSONOutput}
}

// Strategy is how a task's route picks among the models its policy
// allows.
type Strategy string

// The strategies.
const (
	// StrategyPrimary takes the models in the policy's order: the primary,
	// then the fallbacks.
	StrategyPrimary Strategy = "primary"
	// StrategyCheapest takes the cheapest allowed model for the request's
	// units first (the policy's order breaks ties).
	StrategyCheapest Strategy = "cheapest"
	// StrategyLowestLatency takes the allowed model with the lowest
	// observed latency first; models never observed follow in the
	// policy's order.
	StrategyLowestLatency Strategy = "lowest_latency"
)

// Strategies lists the strategies.
func Strategies() []Strategy {
	return []Strategy{StrategyPrimary, StrategyCheapest, StrategyLowestLatency}
}

// Valid reports whether s is a known strategy.
func (s Strategy) Valid() bool { return slices.Contains(Strategies(), s) }

// MaxFallbacks bounds a task's fallbacks.
const MaxFallbacks = 10

// TaskRoute is one task's routing: the models it may use and the limits
// none of them may break, fallbacks included.
type TaskRoute struct {
	// Primary is the model tried first under StrategyPrimary.
	Primary string `json:"primary"`
	// Fallbacks are the other models the task may use, in order. No model
	// outside Primary and Fallbacks is ever used for the task.
	Fallbacks []string `json:"fallbacks"`
	// Privacy lists the privacy classes the task's models may have; a
	// model of another class is never used for it.
	Privacy []PrivacyClass `json:"privacyClasses"`
	// MaxInputPrice, when set, is the most one input unit may cost (the
	// budget): a model priced above it is never used for the task.
	MaxInputPrice Price `json:"maxInputPrice,omitempty"`
	// MaxOutputPrice, when set, is the most one output unit may cost.
	MaxOutputPrice Price `json:"maxOutputPrice,omitempty"`
	// Strategy is how the allowed models are ordered.
	Strategy Strategy `json:"strategy"`
}

// Models returns the route's models: the primary, then the fallbacks.
func (r TaskRoute) Models() []string { return append([]string{r.Primary}, r.Fallbacks...) }

// RoutingPolicy is the content of an environment's ai.routing policy:
// each routed task's route. A task it does not name is not routed.
type RoutingPolicy struct {
	// Tasks maps each routed task to its route.
	Tasks map[Task]TaskRoute `json:"tasks"`
}

// Routing is one published version of an environment's routing policy.
type Routing struct {
	// Environment is the policy's environment.
	Environment access.Environment
	// Ref is the version's policy id, integer version and content hash.
	Ref policy.Ref
	// Policy is the version's content.
	Policy RoutingPolicy
	// CreatedAt is when the version was published.
	CreatedAt time.Time
	// CreatedBy is who published it: a principal's stable id, or
	// Publisher for configuration.
	CreatedBy string
}

// routingOf decodes a published version.
func routingOf(env access.Environment, v policy.Version) (Routing, error) {
	var p RoutingPolicy
	if err := v.Decode(&p); err != nil {
		return Routing{}, fault.Wrap("ai.routing", err)
	}
	if p.Tasks == nil {
		p.Tasks = map[Task]TaskRoute{}
	}
	return Routing{Environment: env, Ref: v.Ref(), Policy: p, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}, nil
}

// normalize returns r in canonical form: privacy classes as a set in
// PrivacyClasses order, prices canonical, no nil fallbacks, the default
// strategy named. Two routes that mean the same are then the same JSON.
// It never fixes what validate refuses.
func (r TaskRoute) normalize() TaskRoute {
	var classes []PrivacyClass
	for _, c := range PrivacyClasses() {
		if slices.Contains(r.Privacy, c) {
			classes = append(classes, c)
		}
	}
	for _, c := range r.Privacy {
		if !c.Valid() && !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	r.Privacy = classes
	if r.Fallbacks == nil {
		r.Fallbacks = []string{}
	}
	if r.Strategy == "" {
		r.Strategy = StrategyPrimary
	}
	for _, p := range []*Price{&r.MaxInputPrice, &r.MaxOutputPrice} {
		if *p != "" {
			if c, err := ParsePrice(string(*p)); err == nil {
				*p = c
			}
		}
	}
	return r
}

// validate checks route r of task t against registry reg: its models
// must be models of the registry (retired ones included: a route names
// records, which stay); INVALID_INPUT naming the field otherwise.
func (r TaskRoute) validate(t Task, reg Registry) error {
	const op = "ai.TaskRoute"
	field := func(f string) string { return "tasks." + string(t) + "." + f }
	if !t.Valid() {
		return fault.Invalid(op, "tasks."+string(t), "Unknown task; the tasks are chat, complete, music_brief, lyrics, prompt_enhance, project_analyze and project_blueprint.")
	}
	if _, ok := reg.Model(r.Primary); !ok {
		return fault.Invalid(op, field("primary"), "The primary model is not a model of this environment's registry.")
	}
	if len(r.Fallbacks) > MaxFallbacks {
		return fault.Invalid(op, field("fallbacks"), "A task has at most 10 fallbacks.").With("limit", MaxFallbacks)
	}
	seen := map[string]bool{r.Primary: true}
	for i, m := range r.Fallbacks {
		f := field("fallbacks") + "[" + strconv.Itoa(i) + "]"
		if seen[m] {
			return fault.Invalid(op, f, "A model appears twice in the task's route.")
		}
		seen[m] = true
		if _, ok := reg.Model(m); !ok {
			return fault.Invalid(op, f, "The fallback model is not a model of this environment's registry.")
		}
	}
	if len(r.Privacy) == 0 {
		return fault.Invalid(op, field("privacyClasses"), "Name at least one privacy class the task's models may have.")
	}
	for _, c := range r.Privacy {
		if !c.Valid() {
			return fault.Invalid(op, field("privacyClasses"), "The privacy classes are standard, no_retention and local.")
		}
	}
	for name, p := range map[string]Price{"maxInputPrice": r.MaxInputPrice, "maxOutputPrice": r.MaxOutputPrice} {
		if p == "" {
			continue
		}
		if _, err := ParsePrice(string(p)); err != nil {
			return fault.Invalid(op, field(name), err.Error()+".")
		}
	}
	if !r.Strategy.Valid() {
		return fault.Invalid(op, field("strategy"), "The strategies are primary, cheapest and lowest_latency.")
	}
	return nil
}

// normalize returns p with every route in canonical form.
func (p RoutingPolicy) normalize() RoutingPolicy {
	out := RoutingPolicy{Tasks: make(map[Task]TaskRoute, len(p.Tasks))}
	for t, r := range p.Tasks {
		out.Tasks[t] = r.normalize()
	}
	return out
}

// validate checks every route of p against reg, in task order.
func (p RoutingPolicy) validate(reg Registry) error {
	ts := make([]Task, 0, len(p.Tasks))
	for t := range p.Tasks {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	for _, t := range ts {
		if err := p.Tasks[t].validate(t, reg); err != nil {
			return err
		}
	}
	return nil
}
