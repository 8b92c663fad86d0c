// Package architecture owns the platform's description of itself (spec,
// Architecture and operations; Versioning: architecture model v2.1): the
// model GET /api/v1/architecture serves, the rule by which GET
// /api/v1/features combines a workspace's flags with each feature's
// availability as its owning domain reports it (Gate), and the catalogue
// of policies POST /api/v1/policies and GET
// /api/v1/policies/{policyId}/current serve. Its rule is the spec's: nothing is fabricated.
//
// The model holds three things:
//
//   - the bounded contexts: the module's domain packages, as the root's one
//     list of domains names them (platform.Domains), so what a client reads
//     is the list the dependency tests hold to their import rules;
//   - the authoritative-state matrix (Facts): for each fact the platform
//     reports, which system is its authority (the database, the chain, a
//     music or AI provider, the payment provider, the blob store) and
//     where the platform keeps its own record of it;
//   - every state machine's transition table, converted from the rows the
//     owning domain enforces (Rows takes a domain's fsm rows as they are),
//     so the map a client reads is the table the code moves records by.
//     The root lists the machines (platform.StateMachines), and a root test
//     scans the module for fsm tables, so a table left out of the list
//     fails it.
//
// The catalogue of policies (Policies) lists each policy id the platform
// knows with its owning domain, how it is published (through the API, by
// the host's configuration, or by its owner's own route), the authority
// publishing and reading it need and the owner's validator; Publish
// appends an immutable version (policy.Publish: integer version, content
// hash; the same content is the same version) with an audit record. The
// root builds the catalogue from each domain's own types and Validate
// methods, so no rule of a domain is copied here. Outcomes that applied a
// policy keep the policy.Ref they recorded (orders, quotes, operations);
// a later version never rewrites them.
//
// The package is a domain: it imports no transport, store, root or SDK,
// and reads no clock.
package architecture

import (
	"fmt"
	"slices"

	"github.com/creatormusic/platform/fsm"
)

// ModelVersion is the architecture model's version (spec, Versioning).
const ModelVersion = "v2.1"

// Kind says what part a package plays in the architecture.
type Kind string

// The kinds of package.
const (
	// KindContext is a bounded context: a domain that owns records and
	// their rules.
	KindContext Kind = "bounded_context"
	// KindShared is a shared kernel package every context builds on (the
	// error type, state tables, money, policy versions, idempotency,
	// outbox, jobs).
	KindShared Kind = "shared_kernel"
)

// Context is one domain package of the module.
type Context struct {
	// Package is the package's path inside the module, such as project or
	// chain/intent.
	Package string `json:"package" example:"project"`
	// Kind is bounded_context for a domain owning records and their rules,
	// shared_kernel for a package every context builds on.
	Kind Kind `json:"kind" example:"bounded_context" enum:"bounded_context,shared_kernel"`
	// Summary says what the package owns.
	Summary string `json:"summary" example:"projects and their community submissions"`
}

// Transition is one row of a state machine's table: on Event, a record in
// From moves to To (To equal to From is an accepted no-op).
type Transition struct {
	// From is the state the record is in.
	From string `json:"from" example:"DRAFT"`
	// Event is what asks for the move.
	Event string `json:"event" example:"OPEN"`
	// To is the state the record moves to; equal to from for a no-op.
	To string `json:"to" example:"OPEN"`
}

// Machine is one state machine of a domain, as its table stands.
type Machine struct {
	// Name names the machine: its package's name and the record it moves,
	// such as project.project or rewards.funding.
	Name string `json:"name" example:"project.project"`
	// Domain is the package path, inside the module, of the package that
	// owns and enforces the table.
	Domain string `json:"domain" example:"project"`
	// Subject is the record the machine moves.
	Subject string `json:"subject" example:"project"`
	// Source names the domain's function whose rows the table is, such as
	// project.Moves.
	Source string `json:"source" example:"project.Moves"`
	// States are the states the table names, in the order they first
	// appear in it.
	States []string `json:"states" example:"DRAFT"`
	// Transitions are the table's rows, in the domain's order. A pair of
	// state and event with no row is refused (INVALID_STATE_TRANSITION).
	Transitions []Transition `json:"transitions"`
}

// Rows converts a domain's fsm rows to the model's transitions, in their
// order, changing nothing.
func Rows[S, E ~string](rows []fsm.Row[S, E]) []Transition {
	out := make([]Transition, 0, len(rows))
	for _, r := range rows {
		out = append(out, Transition{From: string(r.From), Event: string(r.Event), To: string(r.To)})
	}
	return out
}

// NewMachine returns the machine named name whose table is rows, owned by
// the package at domain and read from its function source.
func NewMachine[S, E ~string](name, domain, subject, source string, rows []fsm.Row[S, E]) Machine {
	m := Machine{Name: name, Domain: domain, Subject: subject, Source: source, Transitions: Rows(rows)}
	for _, t := range m.Transitions {
		for _, s := range []string{t.From, t.To} {
			if !slices.Contains(m.States, s) {
				m.States = append(m.States, s)
			}
		}
	}
	return m
}

// Model is the architecture model GET /api/v1/architecture serves.
type Model struct {
	// Version is the architecture model's version, v2.1.
	Version string `json:"version" example:"v2.1"`
	// Contexts are the module's domain packages: the bounded contexts and
	// the shared kernel they build on.
	Contexts []Context `json:"contexts"`
	// Facts is the authoritative-state matrix: for each fact, the system
	// that is its authority and where the platform records it.
	Facts []Fact `json:"facts"`
	// Machines are every state machine's transition table, read from the
	// rows the owning domain enforces.
	Machines []Machine `json:"machines"`
}

// New returns the model of contexts and machines with the platform's
// authoritative-state matrix. It refuses a context listed twice, a machine
// named twice or with no rows, and a machine or fact whose domain is not a
// listed context.
func New(contexts []Context, machines []Machine) (Model, error) {
	known := map[string]bool{}
	for _, c := range contexts {
		if c.Package == "" || known[c.Package] {
			return Model{}, fmt.Errorf("architecture: context %q is empty or listed twice", c.Package)
		}
		if c.Kind != KindContext && c.Kind != KindShared {
			return Model{}, fmt.Errorf("architecture: context %s has kind %q", c.Package, c.Kind)
		}
		known[c.Package] = true
	}
	names := map[string]bool{}
	for _, m := range machines {
		switch {
		case m.Name == "" || names[m.Name]:
			return Model{}, fmt.Errorf("architecture: machine %q is unnamed or named twice", m.Name)
		case len(m.Transitions) == 0:
			return Model{}, fmt.Errorf("architecture: machine %s has no rows", m.Name)
		case !known[m.Domain]:
			return Model{}, fmt.Errorf("architecture: machine %s belongs to %q, which is no listed context", m.Name, m.Domain)
		}
		names[m.Name] = true
	}
	facts := Facts()
	for _, f := range facts {
		if !known[f.Domain] {
			return Model{}, fmt.Errorf("architecture: fact %s belongs to %q, which is no listed context", f.Fact, f.Domain)
		}
	}
	return Model{Version: ModelVersion, Contexts: slices.Clone(contexts), Facts: facts, Machines: slices.Clone(machines)}, nil
}

// Machine returns the machine named name.
func (m Model) Machine(name string) (Machine, bool) {
	i := slices.IndexFunc(m.Machines, func(x Machine) bool { return x.Name == name })
	if i < 0 {
		return Machine{}, false
	}
	return m.Machines[i], true
}
