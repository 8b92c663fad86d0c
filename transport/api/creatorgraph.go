package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
)

// CreatorGraphView is a creator's graph in the caller's environment.
type CreatorGraphView struct {
	// CreatorID is the graph's creator (a user id).
	CreatorID string `json:"creatorId" example:"usr_01jd0000000000000000000000"`
	// Environment is the caller's environment, the one every relation is of.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Relations are the creator's collaborations, remixes and declared relations, in that order, each newest record first.
	Relations []CreatorRelationView `json:"relations"`
	// LimitPerKind is how many relations of each kind are answered at most.
	LimitPerKind int `json:"limitPerKind" example:"100"`
	// Truncated is true when a kind had more relations than limitPerKind.
	Truncated bool `json:"truncated" example:"false"`
}

// CreatorRelationView is one relation of a creator.
type CreatorRelationView struct {
	// Kind is collaborated (both had submissions accepted into one project), remixed (an asset of one has a provenance parent of the other) or follows (declared).
	Kind string `json:"kind" example:"collaborated" enum:"collaborated,remixed,follows"`
	// Direction is mutual (collaborated), outgoing (the creator remixed or follows the other) or incoming (the other remixed or follows the creator).
	Direction string `json:"direction" example:"mutual" enum:"mutual,outgoing,incoming"`
	// CreatorID is the other creator (a user id).
	CreatorID string `json:"creatorId" example:"usr_01jd0000000000000000000001"`
	// Source is the record the relation comes from.
	Source CreatorRelationSourceView `json:"source"`
}

// CreatorRelationSourceView is where a relation comes from: derived from
// a record, or declared at a time.
type CreatorRelationSourceView struct {
	// Type is derived (read from stored records) or declared (stated by the follower).
	Type string `json:"type" example:"derived" enum:"derived,declared"`
	// Record is the kind of record: submissions (a collaboration), asset_provenance (a remix) or declaration.
	Record string `json:"record" example:"submissions" enum:"submissions,asset_provenance,declaration"`
	// ProjectID is a collaboration's project; null otherwise.
	ProjectID *string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// SubmissionID is the creator's earliest submission accepted into that project; null otherwise.
	SubmissionID *string `json:"submissionId" example:"sbm_01jd0000000000000000000000"`
	// OtherSubmissionID is the other creator's earliest submission accepted into it; null otherwise.
	OtherSubmissionID *string `json:"otherSubmissionId" example:"sbm_01jd0000000000000000000001"`
	// AssetID is a remix's remixing asset, whose provenance names the remixer; null otherwise.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000001"`
	// ParentAssetID is the provenance parent it names, whose provenance names the remixed creator; null otherwise.
	ParentAssetID *string `json:"parentAssetId" example:"ast_01jd0000000000000000000000"`
	// RelationID is a declaration's id; null otherwise.
	RelationID *string `json:"relationId" example:"crl_01jd0000000000000000000000"`
	// DeclaredAt is when the declaration was last made active; null otherwise.
	DeclaredAt *time.Time `json:"declaredAt"`
	// Public is true when the facts are public; false only for a caller in the workspace that holds the records.
	Public bool `json:"public" example:"true"`
}

// DeclareRelationRequest is POST /api/v1/creator-graph/relations: a
// relation the signed-in creator declares about themselves.
type DeclareRelationRequest struct {
	// CreatorID is the other creator (a user id); the declaring creator is always the session's user.
	CreatorID string `json:"creatorId" example:"usr_01jd0000000000000000000001"`
	// Kind is the declared kind: follows.
	Kind string `json:"kind" example:"follows" enum:"follows"`
	// State is active (declare, the default) or removed (withdraw).
	State string `json:"state,omitempty" example:"active" enum:"active,removed"`
}

// DeclaredRelationView is a declared relation.
type DeclaredRelationView struct {
	// ID is the relation's id.
	ID string `json:"id" example:"crl_01jd0000000000000000000000"`
	// Object is always "creator_relation".
	Object string `json:"object" example:"creator_relation"`
	// Kind is the declared kind.
	Kind string `json:"kind" example:"follows" enum:"follows"`
	// FromCreatorID is the declaring creator: the caller.
	FromCreatorID string `json:"fromCreatorId" example:"usr_01jd0000000000000000000000"`
	// ToCreatorID is the other creator.
	ToCreatorID string `json:"toCreatorId" example:"usr_01jd0000000000000000000001"`
	// State is active or removed.
	State string `json:"state" example:"active" enum:"active,removed"`
	// Environment is the environment the relation holds in: the caller's.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Version counts the relation's changes, from 1.
	Version int64 `json:"version" example:"1"`
	// DeclaredAt is when the relation was first declared.
	DeclaredAt time.Time `json:"declaredAt"`
	// UpdatedAt is when its state last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

func declaredView(d creatorgraph.Declared) DeclaredRelationView {
	return DeclaredRelationView{ID: d.ID, Object: "creator_relation", Kind: string(d.Kind), FromCreatorID: d.FromUserID,
		ToCreatorID: d.ToUserID, State: string(d.State), Environment: string(d.Scope.Environment), Version: d.Version,
		DeclaredAt: d.DeclaredAt, UpdatedAt: d.UpdatedAt}
}

func relationView(r creatorgraph.Relation) CreatorRelationView {
	v := CreatorRelationView{Kind: string(r.Kind), Direction: string(r.Direction), CreatorID: r.OtherUserID}
	s := r.Source
	src := CreatorRelationSourceView{Type: "derived", Public: s.Public}
	switch {
	case s.Declared:
		src.Type, src.Record, src.RelationID = "declared", "declaration", optional(s.RelationID)
		at := s.DeclaredAt
		src.DeclaredAt = &at
	case r.Kind == creatorgraph.KindCollaborated:
		src.Record, src.ProjectID = "submissions", optional(s.ProjectID)
		src.SubmissionID, src.OtherSubmissionID = optional(s.SubmissionID), optional(s.OtherSubmissionID)
	default:
		src.Record, src.AssetID, src.ParentAssetID = "asset_provenance", optional(s.AssetID), optional(s.ParentAssetID)
	}
	v.Source = src
	return v
}

// creatorGraphRoutes serve the creator graph (spec, Architecture and
// operations): a creator's relations, and the relations a signed-in
// creator declares about themselves.
func creatorGraphRoutes(svc *creatorgraph.Service) []Route {
	if svc == nil {
		return nil
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ex := CreatorGraphView{CreatorID: "usr_01jd0000000000000000000000", Environment: "live", LimitPerKind: creatorgraph.MaxPerKind,
		Relations: []CreatorRelationView{{Kind: "collaborated", Direction: "mutual", CreatorID: "usr_01jd0000000000000000000001",
			Source: CreatorRelationSourceView{Type: "derived", Record: "submissions", ProjectID: new("prj_01jd0000000000000000000000"),
				SubmissionID: new("sbm_01jd0000000000000000000000"), OtherSubmissionID: new("sbm_01jd0000000000000000000001"), Public: true}}}}
	dex := DeclaredRelationView{ID: "crl_01jd0000000000000000000000", Object: "creator_relation", Kind: "follows",
		FromCreatorID: "usr_01jd0000000000000000000000", ToCreatorID: "usr_01jd0000000000000000000001", State: "active",
		Environment: "live", Version: 1, DeclaredAt: t, UpdatedAt: t}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/creator-graph/{creatorId}", OperationID: "getCreatorGraph", Tag: transport.TagArchitecture,
			Summary: "Get a creator's graph",
			Description: "The creator's relations in the caller's environment, each with its kind, direction and source. Derived from " +
				"stored records at read time: collaborated (mutual) when the creator and another user each had a submission ACCEPTED " +
				"into the same project (one relation per other user and project; source: the project and each one's earliest accepted " +
				"submission); remixed when an asset whose provenance names one of them has a provenance parent whose provenance names " +
				"the other (outgoing: the creator remixed the other; source: the asset and the parent). Declared: follows, stated by " +
				"the follower (outgoing or incoming; source: the declaration and when it was made active). Declarations are public; " +
				"a derived relation is shown outside the workspace holding its records only when its facts are public (the project is " +
				"public; both assets are the work of submissions accepted into public projects), and to a caller of that workspace " +
				"who reads those records with public false (a collaboration of a project that is not public only to a caller who " +
				"reads that project: a MEMBER never assigned to it is not shown it). Each kind answers at most limitPerKind relations, newest record first; truncated says when more " +
				"exist. creatorId is a user id: a user with a verified wallet, or the caller; any other is 404 NOT_FOUND. Any signed-in " +
				"caller reads it (a session of an active member, or an API key with scope read).",
			Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				g, err := svc.Get(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("creatorId"))
				if err != nil {
					return nil, err
				}
				v := CreatorGraphView{CreatorID: g.CreatorID, Environment: string(g.Environment), Relations: []CreatorRelationView{},
					LimitPerKind: creatorgraph.MaxPerKind, Truncated: g.Truncated}
				for _, r := range g.Relations {
					v.Relations = append(v.Relations, relationView(r))
				}
				return v, nil
			}},
		{Method: http.MethodPost, Pattern: "/api/v1/creator-graph/relations", OperationID: "declareCreatorRelation",
			Tag: transport.TagArchitecture, Summary: "Declare a relation about yourself", Status: http.StatusCreated,
			ExistingStatus: http.StatusOK, ExistingText: "OK: the relation existed; it is answered, changed to the state asked when it had another.",
			Description: "The signed-in creator declares a relation about themselves, in the session's environment: kind follows, " +
				"toward creatorId (a user with a verified wallet; any other is 404 NOT_FOUND). The declaring creator is always the " +
				"session's user; the body names no other subject (an unknown field is 400 INVALID_INPUT), so no one declares on " +
				"another's behalf, and an API key cannot declare. Following oneself is 400 INVALID_INPUT (details.field creatorId). " +
				"state removed withdraws the relation (the record stays with state removed; declaring it again makes it active); " +
				"withdrawing one never declared is 404 NOT_FOUND. The call is idempotent: the state a relation already has changes " +
				"nothing and writes no event (200). A new relation is 201; a change of state 200, with version raised. A creator " +
				"holds at most 1000 active declared relations per environment: past it 409 CONFLICT with details.limit. Each change " +
				"writes the outbox event creator_relation.declared or creator_relation.removed in the same transaction.",
			Auth: transport.AuthSession, AnyMember: true, Private: true, Idempotency: transport.IdempotencyOptional,
			Request:  DeclareRelationRequest{CreatorID: "usr_01jd0000000000000000000001", Kind: "follows", State: "active"},
			Response: dex, Errors: []string{string(fault.NotFound), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in DeclareRelationRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				if in.State == "" {
					in.State = string(creatorgraph.StateActive)
				}
				d, created, err := svc.Declare(ctx, c.Tx, c.Principal, creatorgraph.Declaration{TargetID: in.CreatorID,
					Kind: creatorgraph.Kind(in.Kind), State: creatorgraph.State(in.State)})
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return declaredView(d), nil
			}},
	}
}
