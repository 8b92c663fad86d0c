package tool

import (
	"context"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// Store is the artifacts' port, bound to one unit of work (or the read
// pool for reads): drafts, their decisions, and the outbox events and
// audit records of both. Errors are *fault.Error: NOT_FOUND for a missing
// row, CONFLICT for a lost compare-and-set or a taken id. It is the seam
// between this package and SQL, not a stable API.
type Store interface {
	outbox.Writer
	account.AuditWriter
	// AIArtifactInsert stores a new artifact (Version 1); CONFLICT when
	// its id exists.
	AIArtifactInsert(ctx context.Context, a Artifact) error
	// AIArtifactGet reads artifact id of scope sc; NOT_FOUND when none.
	AIArtifactGet(ctx context.Context, sc access.Scope, id string) (Artifact, error)
	// AIArtifactUpdate writes a's status, result, decision and update
	// time when the stored version is a.Version-1; CONFLICT otherwise.
	AIArtifactUpdate(ctx context.Context, a Artifact) error
}

// ReadStore is what running a read tool and checking a proposal read,
// through the read pool: artifacts, projects, and the pricing policy and
// credentials a generation is priced and routed with.
type ReadStore interface {
	Store
	project.Store
	operation.PlanReader
}

// ApplyStore is what applying a confirmed artifact writes, in one unit
// of work: the artifact, and a project or a generation operation with its
// dispatch job and credit reservation.
type ApplyStore interface {
	Store
	project.Store
	operation.AcceptStore
}

// RunFunc runs fn in one unit of work of the store, committed when fn
// returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// ReadFunc returns the store's read pool.
type ReadFunc func() ReadStore

// Direct is a call of a direct route: the operation id of the route a
// tool stands for, its path values and the JSON body it would send.
type Direct struct {
	// Route is the route's operation id (Declaration.Route).
	Route string
	// Path are the route's path values by name.
	Path map[string]string
	// Body is the request body the direct call would send; nil for none.
	Body []byte
}

// Authorizer evaluates a direct route's declared access policy for a
// principal, as the gateway does for a direct call of that route: same
// evaluator, same route policy, scopes, workspace and environment, with
// the principal's authority as it stands now. The host implements it
// over its route table.
type Authorizer interface {
	// Authorize returns p's authority if p may make d, or the error the
	// direct call would answer with (UNAUTHENTICATED,
	// WORKSPACE_ACCESS_DENIED, ACCESS_DENIED, FEATURE_DISABLED,
	// ENTITLEMENT_REQUIRED, NOT_FOUND, ...). An unknown route is an
	// internal error: nothing is authorized by default.
	Authorize(ctx context.Context, p *access.Principal, d Direct) (*access.Authority, error)
}

// Projects is the project domain's service as the tools use it
// (*project.Service).
type Projects interface {
	// Get reads a project as p may read it.
	Get(ctx context.Context, st project.Store, p *access.Principal, a *access.Authority, id string) (project.Project, error)
	// CheckCreate answers what Create would, without writing.
	CheckCreate(p *access.Principal, a *access.Authority, in project.CreateRequest) error
	// Create creates a project of p's own.
	Create(ctx context.Context, st project.Store, p *access.Principal, a *access.Authority, in project.CreateRequest) (project.Project, error)
}

// Generations is the generation domain's service as the tools use it
// (*operation.Service): the generate route's three steps.
type Generations interface {
	// Prepare validates, prices and routes a request (reads only).
	Prepare(ctx context.Context, st operation.PlanReader, p *access.Principal, in operation.Request) (operation.Plan, error)
	// Admit waits until the plan may be accepted; done is called once
	// its unit of work ended.
	Admit(ctx context.Context, p *access.Principal, plan operation.Plan) (done func(), err error)
	// Accept writes the operation, its dispatch job and its credit
	// reservation in st's unit of work.
	Accept(ctx context.Context, st operation.AcceptStore, p *access.Principal, plan operation.Plan) (operation.Operation, error)
}
