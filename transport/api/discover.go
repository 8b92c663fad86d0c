package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/discover"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
)

// DiscoverPage is one page of GET /api/v1/discover: one kind of public
// record, ranked.
type DiscoverPage struct {
	// Kind is what the page lists: project, track or creator.
	Kind string `json:"kind" example:"project" enum:"project,track,creator"`
	// Ranking states the ranking formula of this kind.
	Ranking string `json:"ranking" example:"score = submissions accepted into the project; score descending, then newest first"`
	// Items are the page's records, best ranked first.
	Items []DiscoverItemView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor, with the same kind and type, to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"ZGlzOjM6cHJqXzAxamQ6YWJj"`
}

// DiscoverItemView is one discovered record.
type DiscoverItemView struct {
	// Kind is what the record is.
	Kind string `json:"kind" example:"project" enum:"project,track,creator"`
	// ID is the project's id, the track's (its submission's) id, or the creator's (user) id.
	ID string `json:"id" example:"prj_01jd0000000000000000000000"`
	// Title is the project's or track's title, or the creator's display name.
	Title string `json:"title" example:"Night Drive video"`
	// Type is the project type or the track's submission type (audio or remix); null for a creator.
	Type *string `json:"type" example:"music_video"`
	// CreatorID is the project's owner, the track's submitter or the creator: the id GET /api/v1/creator-graph/{creatorId} takes.
	CreatorID string `json:"creatorId" example:"usr_01jd0000000000000000000000"`
	// Score is the ranking score (the page's ranking states it); null for a track, ranked by recency alone.
	Score *int64 `json:"score" example:"3"`
	// Environment is the record's environment: the caller's.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// CreatedAt is when the record was created (a track: submitted; a creator: the account).
	CreatedAt time.Time `json:"createdAt"`
	// Project is the project, or the one a track was accepted into; null for a creator.
	Project *DiscoverProjectView `json:"project"`
	// Track is a track's facts; null otherwise.
	Track *DiscoverTrackView `json:"track"`
	// Creator is a creator's counts and wallet; null otherwise.
	Creator *DiscoverCreatorView `json:"creator"`
}

// DiscoverProjectView is a discovered project's public facts.
type DiscoverProjectView struct {
	// ID is the project's id.
	ID string `json:"id" example:"prj_01jd0000000000000000000000"`
	// Title is the project's title.
	Title string `json:"title" example:"Night Drive video"`
	// Status is the project's status.
	Status string `json:"status" example:"OPEN" enum:"OPEN,IN_PRODUCTION,REVIEW,COMPLETED"`
	// AcceptedSubmissions counts the submissions accepted into the project.
	AcceptedSubmissions int64 `json:"acceptedSubmissions" example:"3"`
}

// DiscoverTrackView is a track's public facts.
type DiscoverTrackView struct {
	// AssetID is the platform asset the work is; null when asset URLs name it.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// AcceptedAt is when the project accepted the track.
	AcceptedAt time.Time `json:"acceptedAt"`
}

// DiscoverCreatorView is a creator's public counts and wallet.
type DiscoverCreatorView struct {
	// Wallet is the creator's earliest verified wallet (GET /api/v1/creators/{wallet} reads the profile).
	Wallet string `json:"wallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// PublicProjects counts the creator's public projects in the caller's environment, in every tenant.
	PublicProjects int64 `json:"publicProjects" example:"2"`
	// Contributions counts the creator's submissions accepted into public projects in the caller's environment.
	Contributions int64 `json:"contributions" example:"1"`
}

// discoverRanking states each kind's ranking formula.
func discoverRanking(k discover.Kind) string {
	switch k {
	case discover.KindTrack:
		return "no score; newest submission first"
	case discover.KindCreator:
		return "score = public projects owned + submissions accepted into public projects; score descending, then newest account first"
	}
	return "score = submissions accepted into the project; score descending, then newest project first"
}

func discoverItemView(it discover.Item) DiscoverItemView {
	v := DiscoverItemView{Kind: string(it.Kind), ID: it.ID, Title: it.Title, Type: optional(it.Type), CreatorID: it.CreatorID,
		Score: it.Score, Environment: string(it.Environment), CreatedAt: it.CreatedAt}
	if p := it.Project; p != nil {
		v.Project = &DiscoverProjectView{ID: p.ID, Title: p.Title, Status: string(p.Status), AcceptedSubmissions: p.AcceptedSubmissions}
	}
	if t := it.Track; t != nil {
		v.Track = &DiscoverTrackView{AssetID: optional(t.AssetID), AcceptedAt: t.AcceptedAt}
	}
	if c := it.Creator; c != nil {
		v.Creator = &DiscoverCreatorView{Wallet: c.Wallet, PublicProjects: c.PublicProjects, Contributions: c.Contributions}
	}
	return v
}

const discoverCursorPrefix = "dis:"

// discoverBinding is what a discovery cursor is bound to: the kind, the
// type and the caller's environment. A cursor read under another binding
// is INVALID_INPUT.
func discoverBinding(p *access.Principal, q discover.Query) string {
	return cursorBinding("discover", string(q.Kind), q.Type, string(p.Environment))
}

// discoverCursor returns the position a discovery cursor stands for: nil
// for none; INVALID_INPUT for a cursor this API did not return for this
// caller, kind and type.
func discoverCursor(s, binding string) (*discover.Position, error) {
	if s == "" {
		return nil, nil
	}
	bad := fault.Invalid("transport.discoverCursor", "cursor", "cursor is not a cursor this API returned for this list.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(strings.TrimPrefix(string(b), discoverCursorPrefix), ":")
	if !strings.HasPrefix(string(b), discoverCursorPrefix) || len(parts) != 3 || parts[2] != binding || parts[1] == "" {
		return nil, bad
	}
	score, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || score < 0 {
		return nil, bad
	}
	return &discover.Position{Score: score, ID: parts[1]}, nil
}

func encodeDiscoverCursor(p discover.Position, binding string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(discoverCursorPrefix + strconv.FormatInt(p.Score, 10) + ":" + p.ID + ":" + binding))
	return &s
}

// discoverRoutes serve public discovery (spec, Architecture and
// operations: GET /api/v1/discover). Any signed-in caller reads it (a
// session of an active member, or an API key with scope read), in the
// caller's environment.
func discoverRoutes(svc *discover.Service) []Route {
	if svc == nil {
		return nil
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ex := DiscoverPage{Kind: "project", Ranking: discoverRanking(discover.KindProject), Items: []DiscoverItemView{{Kind: "project",
		ID: "prj_01jd0000000000000000000000", Title: "Night Drive video", Type: new("music_video"), CreatorID: "usr_01jd0000000000000000000000",
		Score: new(int64(3)), Environment: "live", CreatedAt: t, Project: &DiscoverProjectView{ID: "prj_01jd0000000000000000000000",
			Title: "Night Drive video", Status: "OPEN", AcceptedSubmissions: 3}}}}
	return []Route{{Method: http.MethodGet, Pattern: "/api/v1/discover", OperationID: "listDiscover", Tag: transport.TagArchitecture,
		Summary: "Discover public projects, tracks and creators",
		Description: "One kind of public record of the caller's environment, in every tenant, from stored rows only, ranked. kind " +
			"project (the default): public projects in status OPEN, IN_PRODUCTION, REVIEW or COMPLETED; score = the number of " +
			"submissions ACCEPTED into the project. kind track: a track is a submission of type audio or remix ACCEPTED into a " +
			"public project (a workspace's own assets, pending or rejected submissions and submissions to workspace projects never " +
			"appear); no score, newest submission first. kind creator: users with a verified wallet who own a public project or " +
			"have a submission accepted into one; score = public projects + accepted contributions, both counted in the caller's " +
			"environment. Every list is ordered by score descending, then id descending (ids are time-sortable: newest first); " +
			"the page's ranking field states the formula. type keeps projects of one project type or tracks of one track type " +
			"(audio, remix); creators take none; an unknown kind or type is 400 INVALID_INPUT. limit is 1 to 100 (default 20). " +
			"cursor is the previous page's nextCursor, a keyset position (score, id) bound to the kind, the type and the caller's " +
			"environment; any other cursor is 400 INVALID_INPUT. A record whose score changed between two pages may be skipped or " +
			"seen twice, never invented.",
		Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
		Query: append(pageQuery("ZGlzOjM6cHJqXzAxamQ6YWJj"),
			transport.Param{Name: "kind", Description: "What to list: project (default), track or creator.", Example: "project"},
			transport.Param{Name: "type", Description: "Keeps projects of this project type, or tracks of this type (audio, remix).", Example: "music_video"}),
		Response: ex,
		Handle: func(ctx context.Context, c *Call) (any, error) {
			q := discover.Query{Kind: discover.Kind(c.Query("kind")), Type: c.Query("type")}
			if q.Kind == "" {
				q.Kind = discover.KindProject
			}
			if err := q.Validate(); err != nil {
				return nil, err
			}
			limit, err := transport.PageLimit(c)
			if err != nil {
				return nil, err
			}
			binding := discoverBinding(c.Principal, q)
			if q.After, err = discoverCursor(c.Query("cursor"), binding); err != nil {
				return nil, err
			}
			q.Limit = limit + 1
			items, err := svc.List(ctx, c.Tx, c.Principal, q)
			if err != nil {
				return nil, err
			}
			page := DiscoverPage{Kind: string(q.Kind), Ranking: discoverRanking(q.Kind), Items: []DiscoverItemView{}}
			if len(items) > limit {
				items = items[:limit]
				last := items[limit-1]
				pos := discover.Position{ID: last.ID}
				if last.Score != nil {
					pos.Score = *last.Score
				}
				page.HasMore, page.NextCursor = true, encodeDiscoverCursor(pos, binding)
			}
			for _, it := range items {
				page.Items = append(page.Items, discoverItemView(it))
			}
			return page, nil
		}}}
}
