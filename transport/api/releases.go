package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/release"
	"github.com/creatormusic/platform/transport"
)

// ReleaseTargetView names what a release puts out.
type ReleaseTargetView struct {
	// Type is asset (a track) or project.
	Type string `json:"type" example:"asset" enum:"asset,project"`
	// ID is the asset's or the project's id, of the release's workspace and environment.
	ID string `json:"id" example:"ast_01jd0000000000000000000000"`
}

// ReleaseMoveView is one row of the release transition table: from a status, the move to another and the permission it needs.
type ReleaseMoveView struct {
	// From is the status the release is in.
	From string `json:"from" example:"DRAFT" enum:"DRAFT,SCHEDULED,SUBMITTED,LIVE,REJECTED,TAKEN_DOWN"`
	// Event is the event of the move: the status asked for, as the status route's body names it.
	Event string `json:"event" example:"SCHEDULED" enum:"DRAFT,SCHEDULED,SUBMITTED,LIVE,REJECTED,TAKEN_DOWN"`
	// To is the status the release moves to.
	To string `json:"to" example:"SCHEDULED" enum:"DRAFT,SCHEDULED,SUBMITTED,LIVE,REJECTED,TAKEN_DOWN"`
	// Permission is the permission the move needs, reaching the release.
	Permission string `json:"permission" example:"project.publish" enum:"project.update,project.publish"`
}

// ReleaseView is a release: a track or project of the workspace put out to external distribution. The platform calls no distributor; the status is what the workspace records.
type ReleaseView struct {
	// ID is the release's id.
	ID string `json:"id" example:"rel_01jd0000000000000000000000"`
	// Object is always "release".
	Object string `json:"object" example:"release"`
	// WorkspaceID is the release's workspace.
	WorkspaceID string `json:"workspaceId" example:"wks_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the release belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// CreatedByUserID is the user who created the release (from the session or the key's creator, never from a body).
	CreatedByUserID string `json:"createdByUserId" example:"usr_01jd0000000000000000000000"`
	// Target is what the release puts out.
	Target ReleaseTargetView `json:"target"`
	// ProjectID is the project the target belongs to: the target itself when it is a project; null for an asset.
	ProjectID *string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Title is the title the release is distributed under, 1 to 200 characters.
	Title string `json:"title" example:"Night Drive"`
	// ReleaseDate is the calendar day (YYYY-MM-DD) the release is to come out.
	ReleaseDate string `json:"releaseDate" example:"2026-03-01"`
	// Territories are the ISO 3166-1 alpha-2 codes the release is distributed in, sorted, or WW (worldwide) alone.
	Territories []string `json:"territories" example:"[\"DE\",\"FR\",\"US\"]"`
	// Distributor is the name of the distributor the release goes through; the platform does not call it.
	Distributor string `json:"distributor" example:"Example Distribution"`
	// Status is where the release stands in its transition table.
	Status string `json:"status" example:"DRAFT" enum:"DRAFT,SCHEDULED,SUBMITTED,LIVE,REJECTED,TAKEN_DOWN"`
	// NextMoves are the rows of the transition table from the release's status: where it may go next and what each move needs; empty once TAKEN_DOWN.
	NextMoves []ReleaseMoveView `json:"nextMoves"`
	// Version counts the release's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the release was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the release last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ReleasePage is one page of releases, newest first, with the release transition table.
type ReleasePage struct {
	// Items are the page's releases, newest first.
	Items []ReleaseView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor, with the same filters, to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnJlbF8wMWpkMDAwMDAwMDAwMDAwMDAwMDAwMDAwMA"`
	// Transitions is the release transition table the status route enforces, every row with the permission its move needs: the same rows the platform checks, served from them.
	Transitions []ReleaseMoveView `json:"transitions"`
}

// CreateReleaseRequest is the body of POST /api/v1/releases.
type CreateReleaseRequest struct {
	// Target is the asset or project released, of the caller's workspace and environment.
	Target ReleaseTargetView `json:"target"`
	// Title is the title the release is distributed under: one line of 1 to 200 characters after trimming.
	Title string `json:"title" example:"Night Drive"`
	// ReleaseDate is the calendar day (YYYY-MM-DD) the release is to come out: from today (UTC) to 730 days after.
	ReleaseDate string `json:"releaseDate" example:"2026-03-01"`
	// Territories are 1 to 250 distinct ISO 3166-1 alpha-2 codes in capitals, or WW (worldwide) alone.
	Territories []string `json:"territories" example:"[\"DE\",\"FR\",\"US\"]"`
	// Distributor is the name of the distributor the release goes through: one line of 1 to 100 characters after trimming. The platform makes no call to it.
	Distributor string `json:"distributor" example:"Example Distribution"`
}

// ReleaseStatusRequest is the body of POST /api/v1/releases/{id}/status.
type ReleaseStatusRequest struct {
	// Status is the status asked for: a move of the transition table from the release's status.
	Status string `json:"status" example:"SCHEDULED" enum:"DRAFT,SCHEDULED,SUBMITTED,LIVE,REJECTED,TAKEN_DOWN"`
}

// releaseMoveView returns a row of the release table with its permission.
func releaseMoveView(m release.Move) ReleaseMoveView {
	return ReleaseMoveView{From: string(m.From), Event: string(m.Event), To: string(m.To), Permission: string(release.MovePermission(m.To))}
}

// ReleaseTransitions returns the release transition table as the list
// route serves it, read from release.Moves.
func ReleaseTransitions() []ReleaseMoveView {
	out := []ReleaseMoveView{}
	for _, m := range release.Moves() {
		out = append(out, releaseMoveView(m))
	}
	return out
}

func releaseView(r release.Release) ReleaseView {
	v := ReleaseView{ID: r.ID, Object: "release", WorkspaceID: r.Scope.WorkspaceID, Environment: string(r.Scope.Environment),
		CreatedByUserID: r.CreatedByUserID, Target: ReleaseTargetView{Type: string(r.Target.Type), ID: r.Target.ID},
		Title: r.Title, ReleaseDate: r.ReleaseDate, Territories: r.Territories, Distributor: r.Distributor, Status: string(r.Status),
		NextMoves: []ReleaseMoveView{}, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.ProjectID != "" {
		v.ProjectID = &r.ProjectID
	}
	for _, m := range release.Moves() {
		if m.From == r.Status {
			v.NextMoves = append(v.NextMoves, releaseMoveView(m))
		}
	}
	return v
}

func exampleRelease() ReleaseView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return releaseView(release.Release{ID: "rel_01jd0000000000000000000000", Scope: access.Scope{WorkspaceID: "wks_01jd0000000000000000000000",
		Environment: access.Test}, CreatedByUserID: "usr_01jd0000000000000000000000",
		Target: release.Target{Type: release.TargetAsset, ID: "ast_01jd0000000000000000000000"}, Title: "Night Drive",
		ReleaseDate: "2026-03-01", Territories: []string{"DE", "FR", "US"}, Distributor: "Example Distribution",
		Status: release.StatusDraft, Version: 1, CreatedAt: t, UpdatedAt: t})
}

// releaseMovesText describes the release table and the permission of each
// move, from the table itself, for the status route's document.
func releaseMovesText() string {
	var b strings.Builder
	for i, m := range release.Moves() {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(string(m.From) + " -> " + string(m.To) + " needs " + string(release.MovePermission(m.To)))
	}
	return b.String()
}

// releaseRoutes are the release routes (spec, Architecture and
// operations: releases). Reads need project.read (API keys: scope read);
// writes need project.update (scope projects:write); moves into external
// distribution need project.publish, which no key scope stands for.
func releaseRoutes(svc *release.Service) []Route {
	if svc == nil {
		return nil
	}
	route := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagArchitecture, transport.AuthSessionOrKey, true
		return r
	}
	ex := exampleRelease()
	return []Route{
		route(Route{Method: http.MethodGet, Pattern: "/api/v1/releases", OperationID: "listReleases",
			Permission: access.ProjectRead, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "List releases",
			Description: "The releases of the caller's workspace and environment, newest first (by id), with the release transition " +
				"table (transitions: every row with the permission its move needs, read from the table the status route enforces). A " +
				"caller whose project.read grant is narrower than the workspace (MEMBER, DEVELOPER) sees the releases it created. " +
				"Filter: status; an unknown one is 400 INVALID_INPUT. limit is 1 to 100 (default 20); cursor is the previous page's " +
				"nextCursor, and any other cursor is 400 INVALID_INPUT. Nothing of another workspace or environment is listed.",
			Query: append(pageQuery("Y3Vyc29yOnJlbF8wMWpkMDAwMDAwMDAwMDAwMDAwMDAwMDAwMA"),
				transport.Param{Name: "status", Description: "Keeps releases in this status (DRAFT, SCHEDULED, SUBMITTED, LIVE, REJECTED, TAKEN_DOWN).", Example: "LIVE"}),
			Response: ReleasePage{Items: []ReleaseView{ex}, Transitions: ReleaseTransitions()},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				f := release.Filter{Status: release.Status(c.Query("status"))}
				items, more, next, err := transport.PageOf(c, release.IDPrefix, func(before string, n int) ([]release.Release, error) {
					return svc.List(ctx, c.Tx, c.Principal, c.Authority, f, before, n)
				}, func(r release.Release) string { return r.ID })
				if err != nil {
					return nil, err
				}
				page := ReleasePage{Items: []ReleaseView{}, HasMore: more, NextCursor: next, Transitions: ReleaseTransitions()}
				for _, r := range items {
					page.Items = append(page.Items, releaseView(r))
				}
				return page, nil
			}}),
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/releases", OperationID: "createRelease", Status: http.StatusCreated,
			Permission: access.ProjectUpdate, Scope: access.ScopeProjectsWrite, Idempotency: transport.IdempotencyRequired,
			Summary: "Create a release",
			Description: "Creates a DRAFT release of a track (target.type asset) or a project of the caller's workspace and environment " +
				"for external distribution. No call is made to the distributor, or anywhere else: the release records the " +
				"workspace's plan, and its status what the workspace reports (POST /api/v1/releases/{id}/status). A target the " +
				"caller's workspace and environment do not hold (another tenant's public project included) is 404 NOT_FOUND " +
				"(details.field target.id). Needs project.update reaching the target (OWNER and ADMIN any, CREATOR and MEMBER their " +
				"own, a project lead its project), else 403 ACCESS_DENIED. title is one line of 1 to 200 characters after trimming; " +
				"releaseDate a calendar day (YYYY-MM-DD) from today (UTC) to 730 days after; territories 1 to 250 distinct ISO " +
				"3166-1 alpha-2 codes in capitals, or WW (worldwide) alone (details.reason unknown_territory, duplicate, " +
				"worldwide_not_alone), answered sorted; distributor one line of 1 to 100 characters. Anything else is 400 " +
				"INVALID_INPUT naming the field. Idempotency-Key is required: the same key and body answer the same release. Writes " +
				"the outbox event release.created and an audit record.",
			Request: CreateReleaseRequest{Target: ReleaseTargetView{Type: "asset", ID: "ast_01jd0000000000000000000000"}, Title: "Night Drive",
				ReleaseDate: "2026-03-01", Territories: []string{"DE", "FR", "US"}, Distributor: "Example Distribution"},
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateReleaseRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				r, err := svc.Create(ctx, c.Tx, c.Principal, c.Authority, release.CreateRequest{
					Target: release.Target{Type: release.TargetType(in.Target.Type), ID: in.Target.ID}, Title: in.Title,
					ReleaseDate: in.ReleaseDate, Territories: in.Territories, Distributor: in.Distributor, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return releaseView(r), nil
			}}),
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/releases/{id}/status", OperationID: "setReleaseStatus",
			Permission: access.ProjectUpdate, Scope: access.ScopeProjectsWrite, Idempotency: transport.IdempotencyOptional,
			Summary: "Move a release's status",
			Description: "Moves a release of the caller's workspace and environment along its transition table (the list route " +
				"serves it as transitions): " + releaseMovesText() + ". Any other move (a jump such as DRAFT -> LIVE, a step back " +
				"the table does not have, a move out of TAKEN_DOWN, the same status) is 409 INVALID_STATE_TRANSITION for every caller " +
				"whose project.update reaches the release, checked before the move's own permission. Each move's permission must reach the release (OWNER and ADMIN any, " +
				"CREATOR and MEMBER the releases they created, a project lead those of its project), else 403 ACCESS_DENIED " +
				"(details.permission); API keys hold no scope for project.publish, so they only take releases back to DRAFT. No " +
				"distributor is called: SUBMITTED, LIVE and REJECTED record what the workspace did or was told. A release the caller's " +
				"workspace and environment do not hold is 404. Writes the outbox event release.status_changed and an audit record.",
			Request:  ReleaseStatusRequest{Status: "SCHEDULED"},
			Response: func() ReleaseView { v := exampleRelease(); v.Status, v.Version = "SCHEDULED", 2; return v }(),
			Errors:   []string{string(fault.NotFound), string(fault.InvalidState)},
			Policy: Policy{ResourceFunc: func(ctx context.Context, c *Call) (*access.Resource, error) {
				return svc.Resource(ctx, c.Tx, c.Principal, c.PathValue("id"))
			},
				TransitionFunc: func(ctx context.Context, c *Call) error {
					// The body is read leniently here; the handler's strict
					// decoding reports a bad one.
					var in ReleaseStatusRequest
					if json.Unmarshal(c.Body(), &in) != nil {
						return nil
					}
					return svc.CheckMove(ctx, c.Tx, c.Principal, c.PathValue("id"), release.Status(in.Status))
				}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ReleaseStatusRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				r, err := svc.Move(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"),
					release.MoveRequest{Status: release.Status(in.Status), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return releaseView(r), nil
			}}),
	}
}
