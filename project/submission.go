package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/urlguard"
)

// SubmissionIDPrefix starts a submission's id.
const SubmissionIDPrefix = "sbm_"

// The outbox event types a submission writes.
const (
	// EventSubmissionCreated: a submission was created (in SUBMITTED).
	EventSubmissionCreated = "submission.created"
	// EventSubmissionReviewed: a review moved a submission's status.
	EventSubmissionReviewed = "submission.reviewed"
)

// Audit actions of submissions.
const (
	// ActionSubmissionCreated: a submission was created, in the
	// submitter's workspace. After: projectId, type, title, status.
	ActionSubmissionCreated = "submission.created"
	// ActionSubmissionReviewed: a review moved a submission's status, in
	// the reviewer's workspace. Before and after: status.
	ActionSubmissionReviewed = "submission.reviewed"
	// TargetSubmission is a submission (target id: the submission id).
	TargetSubmission = "submission"
)

// SubmissionType is what a submission is.
type SubmissionType string

// SubmissionTypes lists the submission types (spec, Projects and
// submissions).
func SubmissionTypes() []SubmissionType {
	return []SubmissionType{"music_video", "artwork", "animation", "remix", "short_video", "trailer", "story", "cover_art",
		"audio", "other"}
}

// Submission bounds.
const (
	// MaxAssetURLs bounds a submission's asset URLs (at least one when
	// the work is named by URLs).
	MaxAssetURLs = 5
	// MaxReviewNote bounds a review's note, in characters.
	MaxReviewNote = 2000
)

// Submitter is who submitted: the principal's user, with the tenant and
// workspace it acted in and, for an API key, the key.
type Submitter struct {
	UserID      string
	TenantID    string
	WorkspaceID string
	KeyID       string
}

// SubmittedAsset is the snapshot of a platform asset a submission names,
// taken when it was submitted: assets are immutable, so it stays the
// asset's.
type SubmittedAsset struct {
	// ID is the asset's id, in the submitter's workspace and environment.
	ID string
	// ContentType, Bytes and SHA256 are the asset's media type, size and
	// content hash.
	ContentType string
	Bytes       int64
	SHA256      string
}

// ProbeStatus is where the platform's fetch of one asset URL stands.
type ProbeStatus string

// The probe statuses.
const (
	// ProbePending: not fetched yet (or to be fetched again).
	ProbePending ProbeStatus = "pending"
	// ProbeVerified: fetched whole; content type, length and SHA-256
	// recorded.
	ProbeVerified ProbeStatus = "verified"
	// ProbeRefused: the URL guard refused it (a redirect to a private
	// address, say), or its body is empty or over ProbeMaxBytes; Reason
	// says which.
	ProbeRefused ProbeStatus = "refused"
	// ProbeUnreachable: no good answer after the bounded attempts; Reason
	// says what the last one met.
	ProbeUnreachable ProbeStatus = "unreachable"
)

// ProbeStatuses lists the probe statuses.
func ProbeStatuses() []ProbeStatus {
	return []ProbeStatus{ProbePending, ProbeVerified, ProbeRefused, ProbeUnreachable}
}

// AssetLink is one asset URL of a submission and what the platform's
// fetch of it found. A link leaves ProbePending once and never changes
// after.
type AssetLink struct {
	// Position is the URL's index in the submitted list, from 0.
	Position int
	// URL is the URL as submitted.
	URL string
	// Status is where its fetch stands.
	Status ProbeStatus
	// ContentType, Bytes and SHA256 are what a verified fetch read: the
	// Content-Type header, the body's length and its hex SHA-256.
	ContentType string
	Bytes       int64
	SHA256      string
	// Reason says why a link is refused or unreachable (package doc,
	// Probes); "" otherwise.
	Reason string
	// CheckedAt is when its status was recorded; zero while pending.
	CheckedAt time.Time
}

// Submission is one community submission to a project: the record the
// review route moves by compare-and-set on Version.
type Submission struct {
	// ID is the submission's id (SubmissionIDPrefix).
	ID string
	// Scope is the project's tenant, workspace and environment: the
	// submission is listed with its project.
	Scope access.Scope
	// ProjectID is the project submitted to.
	ProjectID string
	// Submitter is who submitted.
	Submitter Submitter
	// Type, Title and Description are its fields.
	Type        SubmissionType
	Title       string
	Description string
	// Asset is the platform asset the work is, or nil when Links name it.
	Asset *SubmittedAsset
	// Links are the asset URLs the work is, in order; none with Asset.
	Links []AssetLink
	// RevisionOf is the submission this one revises; "" for none.
	RevisionOf string
	// Status is where it stands (SubmissionMoves).
	Status SubmissionStatus
	// ReviewNote is the note of the latest review move; "" for none.
	ReviewNote string
	// ReviewedByUserID and ReviewedAt are the user and time of the latest
	// review move; empty and zero before the first.
	ReviewedByUserID string
	ReviewedAt       time.Time
	// Version counts its status writes, from 1. Probe results are not
	// status writes: they never race a review.
	Version int64
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// SubmissionFilter narrows a list of a project's submissions.
type SubmissionFilter struct {
	// Status keeps only submissions in it; "" keeps all.
	Status SubmissionStatus
	// ViewerUserID, when set, keeps only the submissions of that user and
	// the ACCEPTED ones (a caller who reads the project but not its
	// workspace's submissions).
	ViewerUserID string
}

// SubmissionStore is the port submissions are read and reviewed through,
// bound to one unit of work (or the read pool for reads). Errors are
// *fault.Error: NOT_FOUND for a missing row, CONFLICT for a lost
// compare-and-set or a taken id.
type SubmissionStore interface {
	outbox.Writer
	account.AuditWriter
	jobs.Enqueuer
	// ProjectGet reads a project by id in environment env, of any
	// tenant; NOT_FOUND when none (as Store's).
	ProjectGet(ctx context.Context, env access.Environment, id string) (Project, error)
	// SubmissionInsert stores a new submission with its links. CONFLICT
	// when its id exists, or when another submission already revises
	// s.RevisionOf (details.field "revisionOf").
	SubmissionInsert(ctx context.Context, s Submission) error
	// SubmissionGet reads a submission with its links by id in
	// environment env, of any tenant; NOT_FOUND when none.
	SubmissionGet(ctx context.Context, env access.Environment, id string) (Submission, error)
	// SubmissionList returns up to limit submissions to project projectID
	// of environment env matching f, newest first, with ids below before
	// ("" for the newest).
	SubmissionList(ctx context.Context, env access.Environment, projectID string, f SubmissionFilter, before string, limit int) ([]Submission, error)
	// SubmissionSetStatus writes s's status, review fields, version and
	// update time when the stored version is s.Version-1. CONFLICT
	// otherwise.
	SubmissionSetStatus(ctx context.Context, s Submission) error
}

// SubmitStore is the port a submission is created through: the
// submission store and the asset store, whose read path snapshots a
// submitted asset.
type SubmitStore interface {
	SubmissionStore
	asset.Store
}

// ProbeStore is the port the probe job reads and records through.
type ProbeStore interface {
	// Now is the unit of work's time.
	Now() time.Time
	// SubmissionGet is SubmissionStore's.
	SubmissionGet(ctx context.Context, env access.Environment, id string) (Submission, error)
	// SubmissionLinkSet records l (by its Position) on submission
	// submissionID when the stored link is still pending; false when it
	// was not.
	SubmissionLinkSet(ctx context.Context, submissionID string, l AssetLink) (bool, error)
}

// ProbeRunFunc runs fn as one unit of work, committed when fn returns nil.
type ProbeRunFunc func(ctx context.Context, fn func(st ProbeStore) error) error

// SubmissionConfig configures Submissions.
type SubmissionConfig struct {
	// Assets reads the assets submissions name. Required.
	Assets *asset.Service
	// Guard judges asset URLs when they are submitted (Guard.Check) and
	// fetches them in the probe job (Guard.Client). Required: build it
	// from ProbeGuardConfig.
	Guard *urlguard.Guard
	// ProbeRun runs the probe job's units of work and ProbeReadFunc
	// returns the read pool. Required.
	ProbeRun      ProbeRunFunc
	ProbeReadFunc func() ProbeStore
	// ProbeAttempts bounds the probe job's attempts; zero means
	// DefaultProbeAttempts.
	ProbeAttempts int
	// CheckTimeout bounds the lookup of one URL's host when it is
	// submitted; zero means DefaultCheckTimeout.
	CheckTimeout time.Duration
}

// Defaults of SubmissionConfig's zero fields.
const (
	// DefaultProbeAttempts is how many times the probe job runs before a
	// URL that keeps failing transiently is recorded unreachable.
	DefaultProbeAttempts = 5
	// DefaultCheckTimeout bounds the lookup of one URL's host at submit
	// time.
	DefaultCheckTimeout = 10 * time.Second
)

// Submissions runs community submissions to projects. It holds no
// mutable state and is safe for concurrent use.
type Submissions struct {
	cfg SubmissionConfig
	// client fetches asset URLs: the guard's, so every request, redirect
	// and connection is judged.
	client *http.Client
}

// NewSubmissions validates cfg and returns Submissions.
func NewSubmissions(cfg SubmissionConfig) (*Submissions, error) {
	if cfg.Assets == nil || cfg.Guard == nil || cfg.ProbeRun == nil || cfg.ProbeReadFunc == nil {
		return nil, errors.New("project: submissions need Assets, Guard, ProbeRun and ProbeReadFunc")
	}
	if cfg.ProbeAttempts < 0 || cfg.CheckTimeout < 0 {
		return nil, errors.New("project: submissions: negative ProbeAttempts or CheckTimeout")
	}
	if cfg.ProbeAttempts == 0 {
		cfg.ProbeAttempts = DefaultProbeAttempts
	}
	if cfg.CheckTimeout == 0 {
		cfg.CheckTimeout = DefaultCheckTimeout
	}
	return &Submissions{cfg: cfg, client: cfg.Guard.Client()}, nil
}

// SubmitRequest is what a submission is created from.
type SubmitRequest struct {
	// ProjectID is the project submitted to.
	ProjectID string
	// Type, Title and Description are the submission's fields.
	Type        SubmissionType
	Title       string
	Description string
	// AssetID names the work as a platform asset of the submitter's
	// workspace and environment; AssetURLs as 1 to MaxAssetURLs public
	// HTTPS URLs (nil: none given). Exactly one of them is set.
	AssetID   string
	AssetURLs []string
	// RevisionOf is the REVISION_REQUESTED submission this one revises;
	// "" for none.
	RevisionOf string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Prepared is a SubmitRequest whose fields are valid and whose URLs the
// URL guard admitted: Submit takes nothing else, so no submission is
// stored with a URL the guard did not judge.
type Prepared struct {
	in SubmitRequest
}

// Prepare validates in and judges each asset URL with the URL guard's
// full check (Guard.Check: https, no credentials, every address the host
// resolves to public), before any unit of work: the lookups never hold a
// transaction. INVALID_INPUT naming the field: title (1 to 200
// characters after trimming), description (at most 5000), type, projectId
// (required), assetId and assetUrls (exactly one of them; details.reason
// "both" or "neither"), assetUrls (1 to 5), and assetUrls[i] with
// details.reason: the guard's reason ("scheme", "credentials",
// "private_address", "blocked_host", ...), "duplicate", or
// "unresolved_host" when the host does not resolve.
func (s *Submissions) Prepare(ctx context.Context, in SubmitRequest) (Prepared, error) {
	const op = "project.Prepare"
	in.Title = strings.TrimSpace(in.Title)
	n := utf8.RuneCountInString(in.Title)
	switch {
	case in.ProjectID == "":
		return Prepared{}, fault.Invalid(op, "projectId", "projectId is required.")
	case n == 0 || n > MaxTitle:
		return Prepared{}, fault.Invalid(op, "title", "title must be 1 to 200 characters.").With("limit", MaxTitle)
	case !utf8.ValidString(in.Description) || utf8.RuneCountInString(in.Description) > MaxDescription:
		return Prepared{}, fault.Invalid(op, "description", "description must be at most 5000 characters.").With("limit", MaxDescription)
	case !slices.Contains(SubmissionTypes(), in.Type):
		return Prepared{}, fault.Invalid(op, "type", "type must be one of music_video, artwork, animation, remix, short_video, "+
			"trailer, story, cover_art, audio, other.")
	case in.AssetID != "" && in.AssetURLs != nil:
		return Prepared{}, fault.Invalid(op, "assetUrls", "Name the work by assetId or by assetUrls, not both.").With("reason", "both")
	case in.AssetID == "" && in.AssetURLs == nil:
		return Prepared{}, fault.Invalid(op, "assetUrls", "Name the work by assetId or by assetUrls.").With("reason", "neither")
	case in.AssetID == "" && (len(in.AssetURLs) == 0 || len(in.AssetURLs) > MaxAssetURLs):
		return Prepared{}, fault.Invalid(op, "assetUrls", "assetUrls must hold 1 to 5 URLs.").With("limit", MaxAssetURLs)
	}
	for i, raw := range in.AssetURLs {
		field := "assetUrls[" + strconv.Itoa(i) + "]"
		if slices.Contains(in.AssetURLs[:i], raw) {
			return Prepared{}, fault.Invalid(op, field, "The URL is listed twice.").With("reason", "duplicate")
		}
		if err := s.check(ctx, raw); err != nil {
			return Prepared{}, refusedURL(op, field, err)
		}
	}
	return Prepared{in: in}, nil
}

// check judges one URL with the guard's full check, its lookup bounded by
// CheckTimeout.
func (s *Submissions) check(ctx context.Context, raw string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CheckTimeout)
	defer cancel()
	_, err := s.cfg.Guard.Check(ctx, raw)
	return err
}

// refusedURL is the INVALID_INPUT of a URL field the guard refused, or
// whose host did not resolve; it never names the URL. A cancelled request
// stays the context's error.
func refusedURL(op, field string, err error) error {
	if reason := urlguard.Reason(err); reason != "" {
		_, msg, _ := fault.Public(err)
		return fault.Invalid(op, field, msg).With("reason", reason)
	}
	if errors.Is(err, context.Canceled) {
		return fault.Wrap(op, err)
	}
	return fault.Invalid(op, field, "The URL's host does not resolve.").With("reason", "unresolved_host")
}

// Submit stores in as a new submission of p's user, in the project's
// scope, moved DRAFT -> SUBMITTED in this unit of work, with its outbox
// event (submission.created), an audit record in p's workspace and, for
// asset URLs, the probe job that fetches them (JobProbe). Errors, in
// order: ACCESS_DENIED when p's project.update grant does not reach a
// resource of its own (VIEWER, FINANCE, DEVELOPER, or an API key without
// projects:write); for a resubmission (RevisionOf), NOT_FOUND when p
// cannot read the earlier submission, ACCESS_DENIED when p's user did not
// submit it, INVALID_STATE_TRANSITION (details.reason
// "not_revision_requested") when it is not REVISION_REQUESTED,
// INVALID_INPUT (projectId) when it is of another project; NOT_FOUND
// (details.field projectId) for a project p cannot read;
// INVALID_STATE_TRANSITION (details.reason "project_not_open",
// details.projectStatus) for a readable project that is not OPEN;
// NOT_FOUND (details.field assetId) for an asset that is not in p's
// workspace and environment; CONFLICT (details.field revisionOf) when the
// earlier submission was resubmitted already.
func (s *Submissions) Submit(ctx context.Context, st SubmitStore, p *access.Principal, a *access.Authority, prep Prepared) (Submission, error) {
	const op = "project.Submit"
	in := prep.in
	if in.ProjectID == "" {
		return Submission{}, fault.Wrap(op, errors.New("Submit takes the result of Prepare"))
	}
	perm := SubmissionMovePermission(SubmissionSubmitted)
	if p.UserID == "" || !a.Reaches(p, perm, &access.Resource{OwnerUserID: p.UserID, WorkspaceID: p.WorkspaceID}) {
		return Submission{}, fault.E(op, fault.AccessDenied, "").With("permission", string(perm))
	}
	if in.RevisionOf != "" {
		orig, _, err := s.read(ctx, st, p, a, in.RevisionOf)
		if fault.Is(err, fault.NotFound) {
			return Submission{}, fault.E(op, fault.NotFound, "No such submission.").With("field", "revisionOf")
		}
		if err != nil {
			return Submission{}, fault.Wrap(op, err)
		}
		switch {
		case orig.Submitter.UserID != p.UserID:
			return Submission{}, fault.E(op, fault.AccessDenied, "Only the submitter may revise a submission.").With("field", "revisionOf")
		case orig.Status != SubmissionRevisionRequested:
			return Submission{}, fault.E(op, fault.InvalidState, "Only a submission in REVISION_REQUESTED may be revised.").
				With("field", "revisionOf").With("reason", "not_revision_requested").With("status", string(orig.Status))
		case orig.ProjectID != in.ProjectID:
			return Submission{}, fault.Invalid(op, "projectId", "A revision is submitted to the project of the submission it revises.")
		}
	}
	pr, err := st.ProjectGet(ctx, p.Environment, in.ProjectID)
	if err == nil && !pr.readableBy(p, a) {
		err = fault.E(op, fault.NotFound, "")
	}
	if err != nil {
		if fault.Is(err, fault.NotFound) {
			return Submission{}, fault.E(op, fault.NotFound, "No such project.").With("field", "projectId")
		}
		return Submission{}, fault.Wrap(op, err)
	}
	if pr.Status != StatusOpen {
		return Submission{}, fault.E(op, fault.InvalidState, "The project does not take submissions: it is not OPEN.").
			With("reason", "project_not_open").With("projectStatus", string(pr.Status))
	}
	status, err := SubmissionTransition(SubmissionDraft, SubmissionEventFor(SubmissionSubmitted))
	if err != nil {
		return Submission{}, err
	}
	now := st.Now()
	sub := Submission{ID: st.NewID(SubmissionIDPrefix), Scope: pr.Scope, ProjectID: pr.ID,
		Submitter: Submitter{UserID: p.UserID, TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, KeyID: p.KeyID},
		Type:      in.Type, Title: in.Title, Description: in.Description, RevisionOf: in.RevisionOf, Status: status, Version: 1,
		CreatedAt: now, UpdatedAt: now}
	if in.AssetID != "" {
		as, err := s.cfg.Assets.Get(ctx, st, asset.Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID,
			Environment: string(p.Environment)}, in.AssetID)
		if err != nil {
			if fault.Is(err, fault.NotFound) {
				return Submission{}, fault.E(op, fault.NotFound, "No such asset.").With("field", "assetId")
			}
			return Submission{}, fault.Wrap(op, err)
		}
		sub.Asset = &SubmittedAsset{ID: as.ID, ContentType: as.MediaType, Bytes: as.Size, SHA256: as.SHA256}
	}
	for i, u := range in.AssetURLs {
		sub.Links = append(sub.Links, AssetLink{Position: i, URL: u, Status: ProbePending})
	}
	if err := st.SubmissionInsert(ctx, sub); err != nil {
		if fault.Is(err, fault.Conflict) && sub.RevisionOf != "" {
			return Submission{}, fault.E(op, fault.Conflict, "The submission was revised already.").With("field", "revisionOf")
		}
		return Submission{}, fault.Wrap(op, err)
	}
	if len(sub.Links) > 0 {
		if err := s.enqueueProbe(ctx, st, sub); err != nil {
			return Submission{}, fault.Wrap(op, err)
		}
	}
	if err := submissionEvent(ctx, st, sub, EventSubmissionCreated, map[string]any{"from": SubmissionDraft}); err != nil {
		return Submission{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionSubmissionCreated, TargetType: TargetSubmission,
		TargetID: sub.ID, RequestID: in.RequestID, After: map[string]any{"projectId": sub.ProjectID, "type": sub.Type,
			"title": sub.Title, "status": sub.Status}}); err != nil {
		return Submission{}, err
	}
	return sub, nil
}

// read returns submission id with its project as p may read it: the
// submitter (any tenant of the environment), a reader of the project in
// its workspace (project.read reaching it), or, for an ACCEPTED
// submission, anyone who reads the project (package doc, Submissions).
// NOT_FOUND otherwise.
func (s *Submissions) read(ctx context.Context, st SubmissionStore, p *access.Principal, a *access.Authority, id string) (Submission, Project, error) {
	const op = "project.GetSubmission"
	sub, err := st.SubmissionGet(ctx, p.Environment, id)
	if err != nil {
		return Submission{}, Project{}, fault.Wrap(op, err)
	}
	pr, err := st.ProjectGet(ctx, p.Environment, sub.ProjectID)
	if err != nil {
		return Submission{}, Project{}, fault.Wrap(op, err)
	}
	if p.UserID != "" && sub.Submitter.UserID == p.UserID || workspaceReader(pr, p, a) ||
		sub.Status == SubmissionAccepted && pr.readableBy(p, a) {
		return sub, pr, nil
	}
	return Submission{}, Project{}, fault.E(op, fault.NotFound, "No such submission.")
}

// workspaceReader reports whether p reads every submission of pr: p acts
// in pr's workspace and its project.read grant reaches pr.
func workspaceReader(pr Project, p *access.Principal, a *access.Authority) bool {
	return pr.Scope.TenantID == p.TenantID && pr.Scope.WorkspaceID == p.WorkspaceID && a.Reaches(p, access.ProjectRead, pr.Resource())
}

// Get returns submission id as p may read it (package doc, Submissions):
// NOT_FOUND for one of another environment and for one p may not read.
func (s *Submissions) Get(ctx context.Context, st SubmissionStore, p *access.Principal, a *access.Authority, id string) (Submission, error) {
	sub, _, err := s.read(ctx, st, p, a, id)
	return sub, err
}

// List returns up to limit submissions to project projectID matching f,
// newest first, with ids below before: every one for a reader of the
// project in its workspace, p's own and the ACCEPTED ones for any other
// caller who reads the project. NOT_FOUND for a project p cannot read;
// INVALID_INPUT (status) for an unknown status.
func (s *Submissions) List(ctx context.Context, st SubmissionStore, p *access.Principal, a *access.Authority, projectID string,
	f SubmissionFilter, before string, limit int) ([]Submission, error) {
	const op = "project.ListSubmissions"
	if f.Status != "" && !f.Status.Valid() {
		return nil, fault.Invalid(op, "status", "status is not a submission status.")
	}
	pr, err := st.ProjectGet(ctx, p.Environment, projectID)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if !pr.readableBy(p, a) {
		return nil, fault.E(op, fault.NotFound, "No such project.")
	}
	f.ViewerUserID = ""
	if !workspaceReader(pr, p, a) {
		f.ViewerUserID = p.UserID
	}
	out, err := st.SubmissionList(ctx, p.Environment, pr.ID, f, before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// ReviewRequest asks for a submission's next status.
type ReviewRequest struct {
	// Status is the status asked for.
	Status SubmissionStatus
	// Note is the reviewer's note, at most MaxReviewNote characters.
	Note string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Review moves submission id to in.Status along the table,
// compare-and-setting its version, with the outbox event
// submission.reviewed and an audit record. Errors, in order: INVALID_INPUT
// for an unknown status or a long note; NOT_FOUND for a submission p
// cannot read; INVALID_STATE_TRANSITION for a move the table does not
// have, whoever asks; ACCESS_DENIED when p does not act in the project's
// workspace or its project.publish grant does not reach the project;
// INVALID_STATE_TRANSITION (details.reason "assets_not_verified",
// details.statuses) for ACCEPTED while an asset URL is not verified;
// CONFLICT when a concurrent review won.
func (s *Submissions) Review(ctx context.Context, st SubmissionStore, p *access.Principal, a *access.Authority, id string, in ReviewRequest) (Submission, error) {
	const op = "project.Review"
	if !in.Status.Valid() {
		return Submission{}, fault.Invalid(op, "status", "status is not a submission status.")
	}
	if !utf8.ValidString(in.Note) || utf8.RuneCountInString(in.Note) > MaxReviewNote {
		return Submission{}, fault.Invalid(op, "note", "note must be at most 2000 characters.").With("limit", MaxReviewNote)
	}
	sub, pr, err := s.read(ctx, st, p, a, id)
	if err != nil {
		return Submission{}, err
	}
	to, err := SubmissionTransition(sub.Status, SubmissionEventFor(in.Status))
	if err != nil {
		return Submission{}, err
	}
	perm := SubmissionMovePermission(to)
	if pr.Scope.TenantID != p.TenantID || pr.Scope.WorkspaceID != p.WorkspaceID || !a.Reaches(p, perm, pr.Resource()) {
		return Submission{}, fault.E(op, fault.AccessDenied, "").With("permission", string(perm))
	}
	if to == SubmissionAccepted {
		if err := verified(op, sub.Links); err != nil {
			return Submission{}, err
		}
	}
	from, now := sub.Status, st.Now()
	sub.Status, sub.Version, sub.UpdatedAt = to, sub.Version+1, now
	sub.ReviewNote, sub.ReviewedByUserID, sub.ReviewedAt = in.Note, p.UserID, now
	if err := st.SubmissionSetStatus(ctx, sub); err != nil {
		return Submission{}, fault.Wrap(op, err)
	}
	if err := submissionEvent(ctx, st, sub, EventSubmissionReviewed, map[string]any{"from": from}); err != nil {
		return Submission{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionSubmissionReviewed, TargetType: TargetSubmission,
		TargetID: sub.ID, RequestID: in.RequestID, Before: map[string]any{"status": from},
		After: map[string]any{"status": to}}); err != nil {
		return Submission{}, err
	}
	return sub, nil
}

// verified refuses acceptance while a link is not verified.
func verified(op string, links []AssetLink) error {
	statuses := make([]string, len(links))
	ok := true
	for i, l := range links {
		statuses[i] = string(l.Status)
		ok = ok && l.Status == ProbeVerified
	}
	if ok {
		return nil
	}
	return fault.E(op, fault.InvalidState, "A submission is accepted only once every asset URL is verified.").
		With("reason", "assets_not_verified").With("statuses", statuses)
}

// submissionEvent writes the outbox event typ of sub, in the project's
// tenant and workspace, in st's unit of work.
func submissionEvent(ctx context.Context, st outbox.Writer, sub Submission, typ string, extra map[string]any) error {
	body := map[string]any{"id": sub.ID, "projectId": sub.ProjectID, "status": sub.Status, "type": sub.Type,
		"submitterUserId": sub.Submitter.UserID}
	for k, v := range extra {
		body[k] = v
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("submission event payload: %w", err)
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: sub.Scope.TenantID, WorkspaceID: sub.Scope.WorkspaceID,
		Environment: string(sub.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: sub.ID,
		AggregateVersion: sub.Version, OccurredAt: sub.UpdatedAt, Payload: payload})
	return err
}
