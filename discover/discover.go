package discover

import (
	"context"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// Kind is what a discovery list holds.
type Kind string

// The kinds of discovery list.
const (
	// KindProject lists public projects.
	KindProject Kind = "project"
	// KindTrack lists public tracks.
	KindTrack Kind = "track"
	// KindCreator lists creators.
	KindCreator Kind = "creator"
)

// Kinds lists every Kind.
func Kinds() []Kind { return []Kind{KindProject, KindTrack, KindCreator} }

// TrackTypes are the submission types whose accepted work is a track.
func TrackTypes() []project.SubmissionType { return []project.SubmissionType{"audio", "remix"} }

// ProjectStatuses are the statuses of a discoverable public project.
func ProjectStatuses() []project.Status {
	return []project.Status{project.StatusOpen, project.StatusInProduction, project.StatusReview, project.StatusCompleted}
}

// Position is a place in a ranked list: the last item's score and id.
type Position struct {
	// Score is the item's score (0 for tracks, which have none).
	Score int64
	// ID is the item's id.
	ID string
}

// Query asks for one page of one kind.
type Query struct {
	// Kind is what to list.
	Kind Kind
	// Type keeps projects of this project type or tracks of this
	// submission type (one of TrackTypes); "" keeps all. Creators take
	// none.
	Type string
	// After is the position the page starts after; nil for the first.
	After *Position
	// Limit is how many items to read.
	Limit int
}

// Validate reports an unknown kind or type as INVALID_INPUT.
func (q Query) Validate() error {
	const op = "discover.Query"
	switch q.Kind {
	case KindProject:
		if q.Type != "" && !slices.Contains(project.Types(), project.Type(q.Type)) {
			return fault.Invalid(op, "type", "type must be one of music_video, album, single, remix, soundtrack, other for projects.")
		}
	case KindTrack:
		if q.Type != "" && !slices.Contains(TrackTypes(), project.SubmissionType(q.Type)) {
			return fault.Invalid(op, "type", "type must be audio or remix for tracks.")
		}
	case KindCreator:
		if q.Type != "" {
			return fault.Invalid(op, "type", "creators take no type.")
		}
	default:
		return fault.Invalid(op, "kind", "kind must be project, track or creator.")
	}
	return nil
}

// Item is one discovered record.
type Item struct {
	// Kind is what the item is.
	Kind Kind
	// ID is the project's, the track's (its submission's) or the
	// creator's (user) id.
	ID string
	// Title is the project's or track's title, or the creator's display
	// name.
	Title string
	// Type is the project type or the track's submission type; "" for a
	// creator.
	Type string
	// CreatorID is the project's owner, the track's submitter, or the
	// creator.
	CreatorID string
	// Score is the ranking score; nil for a track.
	Score *int64
	// Environment is the record's environment.
	Environment access.Environment
	// CreatedAt is when the record was created (a track: submitted).
	CreatedAt time.Time
	// Project is set on a project and a track: the project, or the one
	// the track was accepted into.
	Project *ProjectFacts
	// Track is set on a track.
	Track *TrackFacts
	// Creator is set on a creator.
	Creator *CreatorFacts
}

// ProjectFacts are a project's public facts.
type ProjectFacts struct {
	// ID and Title name the project.
	ID, Title string
	// Status is the project's status.
	Status project.Status
	// AcceptedSubmissions counts submissions accepted into it.
	AcceptedSubmissions int64
}

// TrackFacts are a track's public facts.
type TrackFacts struct {
	// AssetID is the platform asset the work is, "" when asset URLs name
	// it.
	AssetID string
	// AcceptedAt is when the project accepted it.
	AcceptedAt time.Time
}

// CreatorFacts are a creator's public counts and wallet.
type CreatorFacts struct {
	// Wallet is the creator's earliest verified wallet link's address.
	Wallet string
	// PublicProjects counts the creator's public projects.
	PublicProjects int64
	// Contributions counts the creator's submissions accepted into public
	// projects.
	Contributions int64
}

// Store is what the package reads; store.Tx implements it on the read
// pool. Each method returns up to q.Limit items of env ranked as the
// package doc says, after q.After. Errors are *fault.Error.
type Store interface {
	// DiscoverProjects lists discoverable public projects.
	DiscoverProjects(ctx context.Context, env access.Environment, q Query) ([]Item, error)
	// DiscoverTracks lists public tracks.
	DiscoverTracks(ctx context.Context, env access.Environment, q Query) ([]Item, error)
	// DiscoverCreators lists creators.
	DiscoverCreators(ctx context.Context, env access.Environment, q Query) ([]Item, error)
}

// Service reads discovery lists. It holds no state and is safe for
// concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// List returns one page of q in p's environment. INVALID_INPUT for an
// unknown kind or type, before any store call.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, q Query) ([]Item, error) {
	const op = "discover.List"
	if p == nil {
		return nil, fault.E(op, fault.Unauthenticated, "")
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	var (
		out []Item
		err error
	)
	switch q.Kind {
	case KindProject:
		out, err = st.DiscoverProjects(ctx, p.Environment, q)
	case KindTrack:
		out, err = st.DiscoverTracks(ctx, p.Environment, q)
	default:
		out, err = st.DiscoverCreators(ctx, p.Environment, q)
	}
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}
