package project

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// IDPrefix starts a project's id.
const IDPrefix = "prj_"

// The outbox event types a project writes.
const (
	// EventCreated: a project was created.
	EventCreated = "project.created"
	// EventStatusChanged: a project's status moved along the table.
	EventStatusChanged = "project.status_changed"
)

// Audit actions of projects.
const (
	// ActionCreated: a project was created. After: title, type,
	// visibility, status.
	ActionCreated = "project.created"
	// ActionStatusChanged: a project's status moved. Before and after:
	// status.
	ActionStatusChanged = "project.status_changed"
	// TargetProject is a project (target id: the project id).
	TargetProject = "project"
)

// Visibility says who reads a project (package doc, Visibility).
type Visibility string

// The visibilities.
const (
	// VisibilityWorkspace: read only inside the project's workspace.
	VisibilityWorkspace Visibility = "workspace"
	// VisibilityPublic: also read by signed-in callers of any tenant in
	// the same environment.
	VisibilityPublic Visibility = "public"
)

// Visibilities lists the visibilities.
func Visibilities() []Visibility { return []Visibility{VisibilityWorkspace, VisibilityPublic} }

// Type is what a project makes.
type Type string

// Types lists the project types.
func Types() []Type {
	return []Type{"music_video", "album", "single", "remix", "soundtrack", "other"}
}

// Field bounds, in characters.
const (
	// MaxTitle bounds a title (after trimming, at least one character).
	MaxTitle = 200
	// MaxDescription bounds a description.
	MaxDescription = 5000
)

// Project is one project: the record the status route moves by
// compare-and-set on Version.
type Project struct {
	// ID is the project's id (IDPrefix).
	ID string
	// Scope is the tenant, workspace and environment it belongs to.
	Scope access.Scope
	// OwnerUserID is the user who created it.
	OwnerUserID string
	// Title, Type, Description and Visibility are its fields.
	Title       string
	Type        Type
	Description string
	Visibility  Visibility
	// Status is where it stands (Moves).
	Status Status
	// Version counts its writes, from 1.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// Resource returns the project as the access evaluator sees it: the
// project itself, which its members (package doc, Members) are assigned to.
func (p Project) Resource() *access.Resource {
	return &access.Resource{OwnerUserID: p.OwnerUserID, ProjectID: p.ID, IsProject: true, WorkspaceID: p.Scope.WorkspaceID}
}

// Filter narrows a list.
type Filter struct {
	// Status, CreatorUserID and Type keep only matching projects; "" keeps
	// all.
	Status        Status
	CreatorUserID string
	Type          Type
	// ReaderUserID, when set, keeps only the projects owned by that user,
	// assigned to that user (a project-scoped role), or public (a caller
	// whose read grant is narrower than the workspace).
	ReaderUserID string
	// Visibility is "" to list the caller's workspace's projects, or
	// VisibilityPublic to list the public projects of every tenant in the
	// caller's environment (package doc, Lists).
	Visibility Visibility
}

// Validate returns INVALID_INPUT naming the field when f's status, type
// or visibility is not one a list takes.
func (f Filter) Validate() error {
	const op = "project.Filter"
	if f.Status != "" && !f.Status.Valid() {
		return fault.Invalid(op, "status", "status is not a project status.")
	}
	if f.Type != "" && !slices.Contains(Types(), f.Type) {
		return fault.Invalid(op, "type", "type is not a project type.")
	}
	if f.Visibility != "" && f.Visibility != VisibilityPublic {
		return fault.Invalid(op, "visibility", "visibility, when given, must be public.")
	}
	return nil
}

// Store is the port the service reads and writes through, bound to one
// unit of work (or the read pool for reads). Errors are *fault.Error:
// NOT_FOUND for a missing row, CONFLICT for a lost compare-and-set or a
// taken id.
type Store interface {
	outbox.Writer
	account.AuditWriter
	// ProjectInsert stores a new project. CONFLICT if its id exists.
	ProjectInsert(ctx context.Context, p Project) error
	// ProjectGet reads a project by id in environment env, of any
	// tenant; NOT_FOUND when none. The service decides visibility.
	ProjectGet(ctx context.Context, env access.Environment, id string) (Project, error)
	// ProjectList returns up to limit projects of sc matching f, newest
	// first, with ids below before ("" for the newest).
	ProjectList(ctx context.Context, sc access.Scope, f Filter, before string, limit int) ([]Project, error)
	// ProjectListPublic returns up to limit public projects of every
	// tenant in env matching f's status, type and creator, newest first,
	// with ids below before ("" for the newest).
	ProjectListPublic(ctx context.Context, env access.Environment, f Filter, before string, limit int) ([]Project, error)
	// ProjectSetStatus writes p's status, version and update time when
	// the stored version is p.Version-1. CONFLICT otherwise.
	ProjectSetStatus(ctx context.Context, p Project) error
}

// Service runs projects. It holds no state and is safe for concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// CreateRequest is what a project is created from.
type CreateRequest struct {
	Title       string
	Type        Type
	Description string
	// Visibility is "" for VisibilityWorkspace.
	Visibility Visibility
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// validate returns in normalized, or INVALID_INPUT naming the field.
func (in CreateRequest) validate() (CreateRequest, error) {
	const op = "project.Create"
	in.Title = strings.TrimSpace(in.Title)
	n := utf8.RuneCountInString(in.Title)
	if n == 0 || n > MaxTitle {
		return in, fault.Invalid(op, "title", "title must be 1 to 200 characters.").With("limit", MaxTitle)
	}
	if !utf8.ValidString(in.Description) || utf8.RuneCountInString(in.Description) > MaxDescription {
		return in, fault.Invalid(op, "description", "description must be at most 5000 characters.").With("limit", MaxDescription)
	}
	if !slices.Contains(Types(), in.Type) {
		return in, fault.Invalid(op, "type", "type must be one of music_video, album, single, remix, soundtrack, other.")
	}
	if in.Visibility == "" {
		in.Visibility = VisibilityWorkspace
	}
	if !slices.Contains(Visibilities(), in.Visibility) {
		return in, fault.Invalid(op, "visibility", "visibility must be workspace or public.")
	}
	return in, nil
}

// Create stores a DRAFT project of p's scope owned by p's user, with its
// outbox event and audit record. INVALID_INPUT for a bad field;
// ACCESS_DENIED when p's project.update grant does not reach a project of
// its own.
func (s *Service) Create(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in CreateRequest) (Project, error) {
	const op = "project.Create"
	in, err := in.validate()
	if err != nil {
		return Project{}, err
	}
	if err := s.mayCreate(p, a); err != nil {
		return Project{}, err
	}
	now := st.Now()
	pr := Project{ID: st.NewID(IDPrefix), Scope: p.Scope(), OwnerUserID: p.UserID, Title: in.Title, Type: in.Type,
		Description: in.Description, Visibility: in.Visibility, Status: StatusDraft, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := st.ProjectInsert(ctx, pr); err != nil {
		return Project{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, pr, EventCreated, nil); err != nil {
		return Project{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionCreated, TargetType: TargetProject, TargetID: pr.ID,
		RequestID: in.RequestID, After: map[string]any{"title": pr.Title, "type": pr.Type, "visibility": pr.Visibility,
			"status": pr.Status}}); err != nil {
		return Project{}, err
	}
	return pr, nil
}

// CheckCreate answers what Create would answer for in before it writes
// anything: INVALID_INPUT for a bad field, ACCESS_DENIED when p's
// project.update grant does not reach a project of its own; nil when
// Create would store the project. A proposal to create one (an AI tool's
// draft) is refused by it exactly as the creation would be.
func (s *Service) CheckCreate(p *access.Principal, a *access.Authority, in CreateRequest) error {
	if _, err := in.validate(); err != nil {
		return err
	}
	return s.mayCreate(p, a)
}

// mayCreate reports whether p, holding a, may create a project of its own.
func (s *Service) mayCreate(p *access.Principal, a *access.Authority) error {
	const op = "project.Create"
	if p.UserID == "" {
		return fault.E(op, fault.AccessDenied, "")
	}
	own := Project{Scope: p.Scope(), OwnerUserID: p.UserID}
	if !a.Reaches(p, access.ProjectUpdate, own.Resource()) {
		return fault.E(op, fault.AccessDenied, "").With("permission", string(access.ProjectUpdate))
	}
	return nil
}

// Get returns project id as p may read it (package doc, Visibility):
// NOT_FOUND for one of another environment, and for one p may not read.
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, a *access.Authority, id string) (Project, error) {
	const op = "project.Get"
	pr, err := st.ProjectGet(ctx, p.Environment, id)
	if err != nil {
		return Project{}, fault.Wrap(op, err)
	}
	if !pr.readableBy(p, a) {
		return Project{}, fault.E(op, fault.NotFound, "No such project.")
	}
	return pr, nil
}

// readableBy reports whether p, holding a, may read pr (package doc,
// Visibility); pr is of p's environment.
func (pr Project) readableBy(p *access.Principal, a *access.Authority) bool {
	if pr.Scope.TenantID == p.TenantID && pr.Scope.WorkspaceID == p.WorkspaceID {
		return pr.Visibility == VisibilityPublic || a.Reaches(p, access.ProjectRead, pr.Resource())
	}
	return pr.Visibility == VisibilityPublic && p.UserID != ""
}

// List returns up to limit projects matching f, newest first, with ids
// below before (package doc, Lists): those of p's workspace and
// environment, or with f.Visibility VisibilityPublic the public ones of
// every tenant in p's environment. INVALID_INPUT for a bad filter;
// ACCESS_DENIED for a public list asked by a principal without a user.
func (s *Service) List(ctx context.Context, st Store, p *access.Principal, a *access.Authority, f Filter, before string, limit int) ([]Project, error) {
	const op = "project.List"
	if err := f.Validate(); err != nil {
		return nil, err
	}
	f.ReaderUserID = ""
	var out []Project
	var err error
	if f.Visibility == VisibilityPublic {
		if p.UserID == "" {
			return nil, fault.E(op, fault.AccessDenied, "")
		}
		out, err = st.ProjectListPublic(ctx, p.Environment, f, before, limit)
	} else {
		if sc, ok := a.Has(access.ProjectRead); !ok || !sc.Covers(access.GrantWorkspace) {
			f.ReaderUserID = p.UserID
		}
		out, err = st.ProjectList(ctx, p.Scope(), f, before, limit)
	}
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// MoveRequest asks for a project's next status.
type MoveRequest struct {
	// Status is the status asked for.
	Status Status
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Move moves project id of p's workspace to in.Status along the table,
// compare-and-setting its version, with the outbox event and an audit
// record. NOT_FOUND for a project p cannot read or of another workspace;
// INVALID_INPUT for an unknown status; INVALID_STATE_TRANSITION for a
// move the table does not have, whoever asks; ACCESS_DENIED when p's
// grant of the move's permission (MovePermission) does not reach the
// project; CONFLICT when a concurrent move won.
func (s *Service) Move(ctx context.Context, st Store, p *access.Principal, a *access.Authority, id string, in MoveRequest) (Project, error) {
	const op = "project.Move"
	if !in.Status.Valid() {
		return Project{}, fault.Invalid(op, "status", "status is not a project status.")
	}
	pr, err := s.Get(ctx, st, p, a, id)
	if err != nil {
		return Project{}, err
	}
	if pr.Scope.TenantID != p.TenantID || pr.Scope.WorkspaceID != p.WorkspaceID {
		return Project{}, fault.E(op, fault.NotFound, "No such project.")
	}
	to, err := Transition(pr.Status, EventFor(in.Status))
	if err != nil {
		return Project{}, err
	}
	perm := MovePermission(to)
	if !a.Reaches(p, perm, pr.Resource()) {
		return Project{}, fault.E(op, fault.AccessDenied, "").With("permission", string(perm))
	}
	from := pr.Status
	pr.Status, pr.Version, pr.UpdatedAt = to, pr.Version+1, st.Now()
	if err := st.ProjectSetStatus(ctx, pr); err != nil {
		return Project{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, pr, EventStatusChanged, map[string]any{"from": from}); err != nil {
		return Project{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionStatusChanged, TargetType: TargetProject, TargetID: pr.ID,
		RequestID: in.RequestID, Before: map[string]any{"status": from}, After: map[string]any{"status": to}}); err != nil {
		return Project{}, err
	}
	return pr, nil
}

// event writes the outbox event typ of pr in st's unit of work.
func event(ctx context.Context, st Store, pr Project, typ string, extra map[string]any) error {
	body := map[string]any{"id": pr.ID, "status": pr.Status, "ownerUserId": pr.OwnerUserID, "type": pr.Type, "visibility": pr.Visibility}
	for k, v := range extra {
		body[k] = v
	}
	payload, _ := json.Marshal(body) // strings only
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: pr.Scope.TenantID, WorkspaceID: pr.Scope.WorkspaceID,
		Environment: string(pr.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: pr.ID,
		AggregateVersion: pr.Version, OccurredAt: st.Now(), Payload: payload})
	return err
}
