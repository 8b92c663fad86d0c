package release

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// IDPrefix starts a release's id.
const IDPrefix = "rel_"

// The outbox event types a release writes.
const (
	// EventCreated: a release was created (in DRAFT).
	EventCreated = "release.created"
	// EventStatusChanged: a release's status moved along the table.
	EventStatusChanged = "release.status_changed"
)

// Audit actions of releases.
const (
	// ActionCreated: a release was created. After: target, title,
	// release date, territories, distributor, status.
	ActionCreated = "release.created"
	// ActionStatusChanged: a release's status moved. Before and after:
	// status.
	ActionStatusChanged = "release.status_changed"
	// TargetRelease is a release (target id: the release id).
	TargetRelease = "release"
)

// TargetType is what a release puts out: a track (an asset) or a
// project.
type TargetType string

// The target types.
const (
	// TargetAsset: a track, an asset of the workspace.
	TargetAsset TargetType = "asset"
	// TargetProject: a project of the workspace.
	TargetProject TargetType = "project"
)

// TargetTypes lists the target types.
func TargetTypes() []TargetType { return []TargetType{TargetAsset, TargetProject} }

// Field bounds.
const (
	// MaxTitle bounds a title, in characters (one line, at least one
	// after trimming).
	MaxTitle = 200
	// MaxDistributor bounds a distributor's name, in characters (one
	// line, at least one after trimming).
	MaxDistributor = 100
	// MaxTerritories bounds the territories a release names.
	MaxTerritories = 250
	// MaxLeadDays bounds how far after its creation day a release date
	// may be.
	MaxLeadDays = 730
)

// DateLayout is the layout of a release date: a calendar day.
const DateLayout = time.DateOnly

// Target names what a release puts out.
type Target struct {
	// Type is TargetAsset or TargetProject.
	Type TargetType
	// ID is the asset's or the project's id.
	ID string
}

// Release is one release: the record the status route moves by
// compare-and-set on Version.
type Release struct {
	// ID is the release's id (IDPrefix).
	ID string
	// Scope is the tenant, workspace and environment it belongs to.
	Scope access.Scope
	// CreatedByUserID is the user of the principal that created it.
	CreatedByUserID string
	// Target is what it puts out, of its workspace and environment.
	Target Target
	// ProjectID is the project its target belongs to: the target itself
	// for a project, "" for an asset.
	ProjectID string
	// Title is the title it is distributed under.
	Title string
	// ReleaseDate is the calendar day it is to come out (DateLayout).
	ReleaseDate string
	// Territories are the ISO 3166-1 alpha-2 codes it is distributed
	// in, sorted, or Worldwide alone.
	Territories []string
	// Distributor is the name of the distributor it goes through.
	Distributor string
	// Status is where it stands (Moves).
	Status Status
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// Resource returns the release as the access evaluator sees it: owned by
// its creator, inside its target's project when the target is one (so a
// project lead's project-bound grants reach it).
func (r Release) Resource() *access.Resource {
	return &access.Resource{OwnerUserID: r.CreatedByUserID, ProjectID: r.ProjectID, WorkspaceID: r.Scope.WorkspaceID}
}

// Filter narrows a list.
type Filter struct {
	// Status keeps only releases in it; "" keeps all.
	Status Status
	// ReaderUserID, when set, keeps only the releases that user created
	// (a caller whose read grant is narrower than the workspace).
	ReaderUserID string
}

// Store is the port the service reads and writes through, bound to one
// unit of work (or the read handle for reads). Errors are *fault.Error:
// NOT_FOUND for a missing row, CONFLICT for a lost compare-and-set or a
// taken id.
type Store interface {
	outbox.Writer
	account.AuditWriter
	// ReleaseInsert stores a new release. CONFLICT if its id exists.
	ReleaseInsert(ctx context.Context, r Release) error
	// ReleaseGet reads release id of sc; NOT_FOUND when sc holds none.
	ReleaseGet(ctx context.Context, sc access.Scope, id string) (Release, error)
	// ReleaseList returns up to limit releases of sc matching f, newest
	// first, with ids below before ("" for the newest).
	ReleaseList(ctx context.Context, sc access.Scope, f Filter, before string, limit int) ([]Release, error)
	// ReleaseSetStatus writes r's status, version and update time when
	// the stored version is r.Version-1. CONFLICT otherwise.
	ReleaseSetStatus(ctx context.Context, r Release) error
	// AssetGet reads an asset of scope s; NOT_FOUND when s holds none.
	AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error)
	// ProjectGet reads a project by id in env, of any tenant; NOT_FOUND
	// when none.
	ProjectGet(ctx context.Context, env access.Environment, id string) (project.Project, error)
}

// Service runs releases. It holds no state and is safe for concurrent
// use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// CreateRequest is what a release is created from.
type CreateRequest struct {
	// Target is the asset or project released, of the caller's workspace
	// and environment.
	Target Target
	Title  string
	// ReleaseDate is a calendar day (DateLayout).
	ReleaseDate string
	// Territories are ISO 3166-1 alpha-2 codes, or Worldwide alone.
	Territories []string
	Distributor string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// oneLine reports whether s is valid text of 1 to limit characters with
// no control character.
func oneLine(s string, limit int) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n > 0 && n <= limit && !strings.ContainsFunc(s, unicode.IsControl)
}

// validate returns in normalized (title and distributor trimmed,
// territories sorted), or INVALID_INPUT naming the field. today is the
// creation day.
func (in CreateRequest) validate(today time.Time) (CreateRequest, error) {
	const op = "release.Create"
	if !slices.Contains(TargetTypes(), in.Target.Type) {
		return in, fault.Invalid(op, "target.type", "target.type must be asset or project.")
	}
	if in.Target.ID == "" {
		return in, fault.Invalid(op, "target.id", "target.id is required.")
	}
	in.Title = strings.TrimSpace(in.Title)
	if !oneLine(in.Title, MaxTitle) {
		return in, fault.Invalid(op, "title", "title is one line of 1 to 200 characters.").With("limit", MaxTitle)
	}
	day, err := time.Parse(DateLayout, in.ReleaseDate)
	if err != nil {
		return in, fault.Invalid(op, "releaseDate", "releaseDate must be a calendar day, YYYY-MM-DD.")
	}
	today = time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	if day.Before(today) || day.After(today.AddDate(0, 0, MaxLeadDays)) {
		return in, fault.Invalid(op, "releaseDate", "releaseDate must be from today (UTC) to 730 days after.").
			With("min", today.Format(DateLayout)).With("max", today.AddDate(0, 0, MaxLeadDays).Format(DateLayout))
	}
	if n := len(in.Territories); n == 0 || n > MaxTerritories {
		return in, fault.Invalid(op, "territories", "territories must name 1 to 250 territories.").With("limit", MaxTerritories)
	}
	in.Territories = slices.Clone(in.Territories)
	for i, t := range in.Territories {
		field := "territories[" + strconv.Itoa(i) + "]"
		switch {
		case t == Worldwide && len(in.Territories) > 1:
			return in, fault.Invalid(op, field, "WW (worldwide) stands alone.").With("reason", "worldwide_not_alone")
		case t != Worldwide && !knownTerritory(t):
			return in, fault.Invalid(op, field, "A territory is an ISO 3166-1 alpha-2 code in capitals, or WW alone.").
				With("reason", "unknown_territory")
		case slices.Contains(in.Territories[:i], t):
			return in, fault.Invalid(op, field, "A territory is named once.").With("reason", "duplicate")
		}
	}
	slices.Sort(in.Territories)
	in.Distributor = strings.TrimSpace(in.Distributor)
	if !oneLine(in.Distributor, MaxDistributor) {
		return in, fault.Invalid(op, "distributor", "distributor is one line of 1 to 100 characters.").With("limit", MaxDistributor)
	}
	return in, nil
}

// Create stores a DRAFT release of in.Target by p, with its outbox event
// and audit record. INVALID_INPUT for a bad field; NOT_FOUND (details.field
// target.id) for a target p's workspace and environment do not hold;
// ACCESS_DENIED (details.permission project.update) when p's grant does
// not reach the target.
func (s *Service) Create(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in CreateRequest) (Release, error) {
	const op = "release.Create"
	in, err := in.validate(st.Now())
	if err != nil {
		return Release{}, err
	}
	if p.UserID == "" {
		return Release{}, fault.E(op, fault.AccessDenied, "")
	}
	res, projectID, err := target(ctx, st, p, in.Target)
	if err != nil {
		return Release{}, err
	}
	if !a.Reaches(p, access.ProjectUpdate, res) {
		return Release{}, fault.E(op, fault.AccessDenied, "").With("permission", string(access.ProjectUpdate))
	}
	now := st.Now()
	r := Release{ID: st.NewID(IDPrefix), Scope: p.Scope(), CreatedByUserID: p.UserID, Target: in.Target, ProjectID: projectID,
		Title: in.Title, ReleaseDate: in.ReleaseDate, Territories: in.Territories, Distributor: in.Distributor,
		Status: StatusDraft, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := st.ReleaseInsert(ctx, r); err != nil {
		return Release{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, r, EventCreated, nil); err != nil {
		return Release{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionCreated, TargetType: TargetRelease, TargetID: r.ID,
		RequestID: in.RequestID, After: map[string]any{"targetType": r.Target.Type, "targetId": r.Target.ID, "title": r.Title,
			"releaseDate": r.ReleaseDate, "territories": r.Territories, "distributor": r.Distributor, "status": r.Status}}); err != nil {
		return Release{}, err
	}
	return r, nil
}

// target reads t in p's workspace and environment and returns it as the
// access evaluator sees it, with the project it belongs to ("" for an
// asset). NOT_FOUND (details.field target.id) when p's workspace and
// environment do not hold it: another workspace's public project is not
// the caller's to release.
func target(ctx context.Context, st Store, p *access.Principal, t Target) (*access.Resource, string, error) {
	const op = "release.Create"
	missing := fault.E(op, fault.NotFound, "No such target in the workspace.").With("field", "target.id")
	switch t.Type {
	case TargetAsset:
		as, err := st.AssetGet(ctx, asset.Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment)}, t.ID)
		if fault.Is(err, fault.NotFound) {
			return nil, "", missing
		}
		if err != nil {
			return nil, "", fault.Wrap(op, err)
		}
		return &access.Resource{OwnerUserID: as.CreatedBy.UserID, WorkspaceID: as.Scope.WorkspaceID}, "", nil
	default:
		pr, err := st.ProjectGet(ctx, p.Environment, t.ID)
		if fault.Is(err, fault.NotFound) {
			return nil, "", missing
		}
		if err != nil {
			return nil, "", fault.Wrap(op, err)
		}
		if pr.Scope.TenantID != p.TenantID || pr.Scope.WorkspaceID != p.WorkspaceID {
			return nil, "", missing
		}
		return pr.Resource(), pr.ID, nil
	}
}

// List returns up to limit releases of p's workspace and environment
// matching f, newest first, with ids below before: all of them for a
// caller whose project.read grant covers the workspace, else those p
// created. INVALID_INPUT for an unknown status.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, a *access.Authority, f Filter, before string, limit int) ([]Release, error) {
	const op = "release.List"
	if f.Status != "" && !f.Status.Valid() {
		return nil, fault.Invalid(op, "status", "status is not a release status.")
	}
	f.ReaderUserID = ""
	if sc, ok := a.Has(access.ProjectRead); !ok || !sc.Covers(access.GrantWorkspace) {
		f.ReaderUserID = p.UserID
		if p.UserID == "" {
			return []Release{}, nil
		}
	}
	out, err := st.ReleaseList(ctx, p.Scope(), f, before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// Resource returns release id of p's workspace and environment as the
// access evaluator sees it (the status route's resource-scope step).
// NOT_FOUND when p's workspace and environment hold none.
func (s *Service) Resource(ctx context.Context, st Store, p *access.Principal, id string) (*access.Resource, error) {
	r, err := st.ReleaseGet(ctx, p.Scope(), id)
	if err != nil {
		return nil, fault.Wrap("release.Resource", err)
	}
	return r.Resource(), nil
}

// CheckMove answers whether the table moves release id of p's workspace
// and environment to status to, before anything is written (the status
// route's workflow step): INVALID_STATE_TRANSITION when it has no such
// move; NOT_FOUND for a release p's workspace and environment do not
// hold. An unknown status is left to Move (INVALID_INPUT).
func (s *Service) CheckMove(ctx context.Context, st Store, p *access.Principal, id string, to Status) error {
	if !to.Valid() {
		return nil
	}
	r, err := st.ReleaseGet(ctx, p.Scope(), id)
	if err != nil {
		return fault.Wrap("release.CheckMove", err)
	}
	_, err = Transition(r.Status, EventFor(to))
	return err
}

// MoveRequest asks for a release's next status.
type MoveRequest struct {
	// Status is the status asked for.
	Status Status
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Move moves release id of p's workspace and environment to in.Status
// along the table, compare-and-setting its version, with the outbox event
// and an audit record. No distributor is called: the move records what
// the workspace did or was told. INVALID_INPUT for an unknown status;
// NOT_FOUND for a release p's workspace and environment do not hold;
// INVALID_STATE_TRANSITION (details from and event) for a move the table
// does not have, whoever asks; ACCESS_DENIED (details.permission) when p's
// grant of the move's permission (MovePermission) does not reach the
// release; CONFLICT when a concurrent move won.
func (s *Service) Move(ctx context.Context, st Store, p *access.Principal, a *access.Authority, id string, in MoveRequest) (Release, error) {
	const op = "release.Move"
	if !in.Status.Valid() {
		return Release{}, fault.Invalid(op, "status", "status is not a release status.")
	}
	r, err := st.ReleaseGet(ctx, p.Scope(), id)
	if err != nil {
		return Release{}, fault.Wrap(op, err)
	}
	to, err := Transition(r.Status, EventFor(in.Status))
	if err != nil {
		return Release{}, err
	}
	perm := MovePermission(to)
	if !a.Reaches(p, perm, r.Resource()) {
		return Release{}, fault.E(op, fault.AccessDenied, "").With("permission", string(perm))
	}
	from := r.Status
	r.Status, r.Version, r.UpdatedAt = to, r.Version+1, st.Now()
	if err := st.ReleaseSetStatus(ctx, r); err != nil {
		return Release{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, r, EventStatusChanged, map[string]any{"from": from}); err != nil {
		return Release{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionStatusChanged, TargetType: TargetRelease, TargetID: r.ID,
		RequestID: in.RequestID, Before: map[string]any{"status": from}, After: map[string]any{"status": to}}); err != nil {
		return Release{}, err
	}
	return r, nil
}

// event writes the outbox event typ of r in st's unit of work.
func event(ctx context.Context, st Store, r Release, typ string, extra map[string]any) error {
	body := map[string]any{"id": r.ID, "status": r.Status, "targetType": r.Target.Type, "targetId": r.Target.ID,
		"releaseDate": r.ReleaseDate, "distributor": r.Distributor}
	for k, v := range extra {
		body[k] = v
	}
	payload, _ := json.Marshal(body) // strings only
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: r.Scope.TenantID, WorkspaceID: r.Scope.WorkspaceID,
		Environment: string(r.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: r.ID,
		AggregateVersion: r.Version, OccurredAt: st.Now(), Payload: payload})
	return err
}
