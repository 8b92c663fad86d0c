package creatorgraph

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// IDPrefix prefixes declared relation ids.
const IDPrefix = "crl_"

// MaxActiveDeclared bounds a creator's active declared relations in one
// environment.
const MaxActiveDeclared = 1000

// MaxPerKind bounds the relations of each kind a graph read returns.
const MaxPerKind = 100

// Kind is a relation's kind.
type Kind string

// The relation kinds.
const (
	// KindCollaborated: both had submissions accepted into one project.
	KindCollaborated Kind = "collaborated"
	// KindRemixed: an asset of one has a provenance parent of the other.
	KindRemixed Kind = "remixed"
	// KindFollows: declared by the follower.
	KindFollows Kind = "follows"
)

// Kinds lists every Kind.
func Kinds() []Kind { return []Kind{KindCollaborated, KindRemixed, KindFollows} }

// DeclaredKinds are the kinds a creator may declare.
func DeclaredKinds() []Kind { return []Kind{KindFollows} }

// State is a declared relation's state.
type State string

// The declared relation states.
const (
	// StateActive relations are shown.
	StateActive State = "active"
	// StateRemoved relations were withdrawn and are not shown.
	StateRemoved State = "removed"
)

// States lists every State.
func States() []State { return []State{StateActive, StateRemoved} }

// Direction says how a relation points from the graph's creator.
type Direction string

// The directions.
const (
	// Mutual relations hold both ways (collaborated).
	Mutual Direction = "mutual"
	// Outgoing relations go from the creator to the other.
	Outgoing Direction = "outgoing"
	// Incoming relations go from the other to the creator.
	Incoming Direction = "incoming"
)

// Declared is a declared relation's row.
type Declared struct {
	// ID is the relation's id (IDPrefix).
	ID string
	// Scope is the declaring principal's tenant, workspace and
	// environment; the relation holds in that environment.
	Scope access.Scope
	// FromUserID declared it; ToUserID is its target.
	FromUserID, ToUserID string
	// Kind is the declared kind.
	Kind Kind
	// State is active or removed.
	State State
	// Version counts changes, from 1.
	Version int64
	// DeclaredAt is when it was first declared; UpdatedAt when its state
	// last changed.
	DeclaredAt, UpdatedAt time.Time
}

// Source is the record a relation comes from.
type Source struct {
	// Declared is true for a declared relation.
	Declared bool
	// ProjectID and the two submission ids (the creator's, the other's)
	// are a collaboration's.
	ProjectID, SubmissionID, OtherSubmissionID string
	// AssetID and ParentAssetID are a remix's: the remixing asset and the
	// parent it names.
	AssetID, ParentAssetID string
	// RelationID and DeclaredAt are a declaration's.
	RelationID string
	DeclaredAt time.Time
	// Public is true when the facts are public (package doc, What a
	// reader sees).
	Public bool
}

// Relation is one edge of a creator's graph.
type Relation struct {
	// Kind is the relation's kind.
	Kind Kind
	// Direction is how it points from the graph's creator.
	Direction Direction
	// OtherUserID is the other creator.
	OtherUserID string
	// Source is where it comes from.
	Source Source
}

// Graph is a creator's relations in one environment.
type Graph struct {
	// CreatorID is the graph's creator.
	CreatorID string
	// Environment is the caller's.
	Environment access.Environment
	// Relations are collaborations, remixes, then declared relations.
	Relations []Relation
	// Truncated is true when a kind had more than MaxPerKind relations.
	Truncated bool
}

// Viewer is who reads a graph: the caller's tenant and workspace, whose
// records' relations it sees although they are not public.
type Viewer struct {
	TenantID, WorkspaceID string
	// ReaderUserID, when set, is the caller's user, whose project read is
	// narrower than the workspace: of the workspace's projects that are
	// not public it reads only those it owns or is assigned to, so only
	// their collaborations are its to see (as the project list keeps
	// them).
	ReaderUserID string
}

// ViewerOf returns the viewer p is, holding a: p's tenant and workspace,
// with ReaderUserID set unless a holds project.read across the
// workspace.
func ViewerOf(p *access.Principal, a *access.Authority) Viewer {
	v := Viewer{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID}
	if sc, ok := a.Has(access.ProjectRead); !ok || !sc.Covers(access.GrantWorkspace) {
		v.ReaderUserID = p.UserID
	}
	return v
}

// ReadStore is what a graph read needs; store.Tx implements it. Each
// list returns up to limit relations of userID in env that v may see,
// newest record first. Errors are *fault.Error.
type ReadStore interface {
	// CreatorExists reports whether userID has a verified wallet link.
	CreatorExists(ctx context.Context, userID string) (bool, error)
	// GraphCollaborations lists userID's collaborations.
	GraphCollaborations(ctx context.Context, env access.Environment, userID string, v Viewer, limit int) ([]Relation, error)
	// GraphRemixes lists userID's remixes, both directions.
	GraphRemixes(ctx context.Context, env access.Environment, userID string, v Viewer, limit int) ([]Relation, error)
	// GraphDeclared lists the active declared relations from or to userID.
	GraphDeclared(ctx context.Context, env access.Environment, userID string, limit int) ([]Declared, error)
}

// Store is what a declaration needs, in its unit of work.
type Store interface {
	ReadStore
	outbox.Writer
	// Now is the unit of work's time.
	Now() time.Time
	// NewID returns a new id with prefix.
	NewID(prefix string) string
	// RelationGet reads the declared relation of env, from, kind and to;
	// NOT_FOUND when none.
	RelationGet(ctx context.Context, env access.Environment, from string, kind Kind, to string) (Declared, error)
	// RelationCountActive counts from's active declared relations in env.
	RelationCountActive(ctx context.Context, env access.Environment, from string) (int, error)
	// RelationInsert stores a new declared relation; CONFLICT when one of
	// the same env, from, kind and to exists.
	RelationInsert(ctx context.Context, d Declared) error
	// RelationUpdate writes d's state, version and update time when the
	// stored version is d.Version-1; CONFLICT otherwise.
	RelationUpdate(ctx context.Context, d Declared) error
}

// Service runs the creator graph. It holds no state and is safe for
// concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// Get returns creatorID's graph as p, holding a, sees it (package doc,
// What a reader sees). NOT_FOUND when creatorID is no creator and not p's
// own user.
func (s *Service) Get(ctx context.Context, st ReadStore, p *access.Principal, a *access.Authority, creatorID string) (Graph, error) {
	const op = "creatorgraph.Get"
	if p == nil || p.UserID == "" {
		return Graph{}, fault.E(op, fault.Unauthenticated, "")
	}
	if creatorID != p.UserID {
		ok, err := st.CreatorExists(ctx, creatorID)
		if err != nil {
			return Graph{}, fault.Wrap(op, err)
		}
		if !ok {
			return Graph{}, fault.E(op, fault.NotFound, "No creator has this id.")
		}
	}
	g := Graph{CreatorID: creatorID, Environment: p.Environment, Relations: []Relation{}}
	v := ViewerOf(p, a)
	for _, list := range []func() ([]Relation, error){
		func() ([]Relation, error) {
			return st.GraphCollaborations(ctx, p.Environment, creatorID, v, MaxPerKind+1)
		},
		func() ([]Relation, error) { return st.GraphRemixes(ctx, p.Environment, creatorID, v, MaxPerKind+1) },
		func() ([]Relation, error) {
			ds, err := st.GraphDeclared(ctx, p.Environment, creatorID, MaxPerKind+1)
			out := make([]Relation, 0, len(ds))
			for _, d := range ds {
				out = append(out, declaredRelation(creatorID, d))
			}
			return out, err
		},
	} {
		rs, err := list()
		if err != nil {
			return Graph{}, fault.Wrap(op, err)
		}
		if len(rs) > MaxPerKind {
			rs, g.Truncated = rs[:MaxPerKind], true
		}
		g.Relations = append(g.Relations, rs...)
	}
	return g, nil
}

// declaredRelation is d as an edge of creatorID's graph.
func declaredRelation(creatorID string, d Declared) Relation {
	r := Relation{Kind: d.Kind, Direction: Outgoing, OtherUserID: d.ToUserID,
		Source: Source{Declared: true, RelationID: d.ID, DeclaredAt: d.UpdatedAt, Public: true}}
	if d.ToUserID == creatorID {
		r.Direction, r.OtherUserID = Incoming, d.FromUserID
	}
	return r
}

// Declaration is what a creator declares about themselves.
type Declaration struct {
	// TargetID is the other creator.
	TargetID string
	// Kind is one of DeclaredKinds.
	Kind Kind
	// State is active (declare) or removed (withdraw).
	State State
}

// Validate reports a bad kind or state as INVALID_INPUT.
func (d Declaration) Validate() error {
	const op = "creatorgraph.Declaration"
	if d.TargetID == "" {
		return fault.Invalid(op, "creatorId", "creatorId names the creator the relation is about.")
	}
	if d.Kind != KindFollows {
		return fault.Invalid(op, "kind", "kind must be follows.")
	}
	if d.State != StateActive && d.State != StateRemoved {
		return fault.Invalid(op, "state", "state must be active or removed.")
	}
	return nil
}

// Declare records p's declaration about themselves in p's environment
// (package doc, Declared relations). It returns the relation and whether
// a row was created. INVALID_INPUT for a bad declaration or oneself;
// NOT_FOUND for a target that is no creator or for withdrawing a relation
// never declared; CONFLICT past MaxActiveDeclared.
func (s *Service) Declare(ctx context.Context, st Store, p *access.Principal, in Declaration) (Declared, bool, error) {
	const op = "creatorgraph.Declare"
	if p == nil || p.UserID == "" {
		return Declared{}, false, fault.E(op, fault.Unauthenticated, "")
	}
	if err := in.Validate(); err != nil {
		return Declared{}, false, err
	}
	if in.TargetID == p.UserID {
		return Declared{}, false, fault.Invalid(op, "creatorId", "A creator cannot follow themselves.")
	}
	ok, err := st.CreatorExists(ctx, in.TargetID)
	if err != nil {
		return Declared{}, false, fault.Wrap(op, err)
	}
	if !ok {
		return Declared{}, false, fault.E(op, fault.NotFound, "No creator has this id.")
	}
	cur, err := st.RelationGet(ctx, p.Environment, p.UserID, in.Kind, in.TargetID)
	found := err == nil
	if err != nil && !fault.Is(err, fault.NotFound) {
		return Declared{}, false, fault.Wrap(op, err)
	}
	if found && cur.State == in.State {
		return cur, false, nil // idempotent: nothing changes
	}
	if !found && in.State == StateRemoved {
		return Declared{}, false, fault.E(op, fault.NotFound, "There is no such relation to remove.")
	}
	if in.State == StateActive {
		n, err := st.RelationCountActive(ctx, p.Environment, p.UserID)
		if err != nil {
			return Declared{}, false, fault.Wrap(op, err)
		}
		if n >= MaxActiveDeclared {
			return Declared{}, false, fault.E(op, fault.Conflict, "A creator declares at most 1000 active relations.").With("limit", MaxActiveDeclared)
		}
	}
	now := st.Now()
	if !found {
		cur = Declared{ID: st.NewID(IDPrefix), Scope: p.Scope(), FromUserID: p.UserID, ToUserID: in.TargetID, Kind: in.Kind,
			State: in.State, Version: 1, DeclaredAt: now, UpdatedAt: now}
		if err := st.RelationInsert(ctx, cur); fault.Is(err, fault.Conflict) {
			// A concurrent declaration of the same relation committed
			// first: converge on its row.
			if won, gerr := st.RelationGet(ctx, p.Environment, p.UserID, in.Kind, in.TargetID); gerr == nil && won.State == in.State {
				return won, false, nil
			}
			return Declared{}, false, fault.Wrap(op, err)
		} else if err != nil {
			return Declared{}, false, fault.Wrap(op, err)
		}
	} else {
		cur.State, cur.Version, cur.UpdatedAt = in.State, cur.Version+1, now
		if err := st.RelationUpdate(ctx, cur); err != nil {
			return Declared{}, false, fault.Wrap(op, err)
		}
	}
	if err := relationEvent(ctx, st, p, cur); err != nil {
		return Declared{}, false, fault.Wrap(op, err)
	}
	return cur, !found, nil
}

// EventType is the outbox event type of a declared relation written in
// state st: creator_relation.declared or creator_relation.removed.
func EventType(st State) string {
	if st == StateRemoved {
		return "creator_relation.removed"
	}
	return "creator_relation.declared"
}

// relationEvent writes d's outbox event in p's scope.
func relationEvent(ctx context.Context, st Store, p *access.Principal, d Declared) error {
	payload, _ := json.Marshal(map[string]any{"id": d.ID, "kind": d.Kind, "state": d.State, "fromUserId": d.FromUserID,
		"toUserId": d.ToUserID}) // strings only
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment),
		Type: EventType(d.State), SchemaVersion: 1, AggregateID: d.ID, AggregateVersion: d.Version, OccurredAt: d.UpdatedAt, Payload: payload})
	return err
}
