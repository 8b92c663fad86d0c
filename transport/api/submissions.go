package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/transport"
)

// SubmissionAssetView is one part of a submission's work: an asset URL
// and what the platform's fetch of it found, or the snapshot of the
// platform asset the submission names.
type SubmissionAssetView struct {
	// URL is the asset URL as submitted; null for a platform asset (assetId).
	URL *string `json:"url" example:"https://media.example.com/night-drive/cover.png"`
	// Status is where the platform's fetch of the URL stands: pending (not fetched yet), verified (fetched whole), refused (the URL guard refused it, or its body is empty or over 64 MiB) or unreachable (no good answer after bounded attempts). A platform asset is verified.
	Status string `json:"status" example:"verified" enum:"pending,verified,refused,unreachable"`
	// ContentType is the media type the verified URL answered with (or the platform asset's); null otherwise.
	ContentType *string `json:"contentType" example:"image/png"`
	// Bytes is the length of the verified body (or the platform asset's size); null otherwise.
	Bytes *int64 `json:"bytes" example:"482113"`
	// SHA256 is the lowercase hex SHA-256 of the verified body (or the platform asset's content hash); null otherwise.
	SHA256 *string `json:"sha256" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Reason says why a URL is refused (the URL guard's reason, such as private_address when it redirects to a private address; too_large; empty) or unreachable (http_<status>, timeout, network, unresolved_host); null otherwise.
	Reason *string `json:"reason" example:"private_address"`
	// CheckedAt is when the URL's status was recorded; null while pending and for a platform asset.
	CheckedAt *time.Time `json:"checkedAt"`
}

// SubmissionView is a community submission to a project.
type SubmissionView struct {
	// ID is the submission's id.
	ID string `json:"id" example:"sbm_01jd0000000000000000000000"`
	// Object is always "submission".
	Object string `json:"object" example:"submission"`
	// ProjectID is the project submitted to.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// SubmitterUserID is the user who submitted (the session's, or an API key's creator; never a user named in the body).
	SubmitterUserID string `json:"submitterUserId" example:"usr_01jd0000000000000000000000"`
	// Type is what the submission is.
	Type string `json:"type" example:"cover_art" enum:"music_video,artwork,animation,remix,short_video,trailer,story,cover_art,audio,other"`
	// Title is the submission's title, 1 to 200 characters.
	Title string `json:"title" example:"Night Drive cover"`
	// Description is the submission's description, at most 5000 characters.
	Description string `json:"description" example:"A neon cover for the single."`
	// Status is where the submission stands in its status table.
	Status string `json:"status" example:"SUBMITTED" enum:"DRAFT,SUBMITTED,UNDER_REVIEW,ACCEPTED,REJECTED,REVISION_REQUESTED"`
	// AssetID is the platform asset (of the submitter's workspace) the work is; null when asset URLs name it.
	AssetID *string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Assets are the work's parts, in order: one per asset URL, or one holding the platform asset's snapshot (content type, size and hash when submitted).
	Assets []SubmissionAssetView `json:"assets"`
	// RevisionOf is the submission this one revises; null for none.
	RevisionOf *string `json:"revisionOf" example:"sbm_01jc0000000000000000000000"`
	// ReviewNote is the note of the latest review move; null for none.
	ReviewNote *string `json:"reviewNote" example:"Lovely palette; the title needs more contrast."`
	// ReviewedByUserID is the user who made the latest review move; null before the first.
	ReviewedByUserID *string `json:"reviewedByUserId" example:"usr_01jd0000000000000000000001"`
	// ReviewedAt is when the latest review move was made; null before the first.
	ReviewedAt *time.Time `json:"reviewedAt"`
	// Version counts the submission's status writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the submission was made.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the submission's status last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// SubmissionPage is one page of a project's submissions, newest first.
type SubmissionPage struct {
	// Items are the page's submissions, newest first.
	Items []SubmissionView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor, with the same filters, to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"c2JtOnNibV8wMWpkOmFiYw"`
}

// CreateSubmissionRequest is the body of POST /api/v1/submissions.
type CreateSubmissionRequest struct {
	// ProjectID is the OPEN project submitted to: a public project of any tenant in the caller's environment, or one of the caller's workspace.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Type is what the submission is.
	Type string `json:"type" example:"cover_art" enum:"music_video,artwork,animation,remix,short_video,trailer,story,cover_art,audio,other"`
	// Title is the submission's title, 1 to 200 characters after trimming.
	Title string `json:"title" example:"Night Drive cover"`
	// Description is the submission's description, at most 5000 characters.
	Description string `json:"description,omitempty" example:"A neon cover for the single."`
	// AssetID names the work as a platform asset of the caller's workspace and environment; give it or assetUrls, not both.
	AssetID string `json:"assetId,omitempty" example:"ast_01jd0000000000000000000000"`
	// AssetURLs name the work as 1 to 5 public HTTPS URLs (no credentials, no loopback, private or metadata address); give them or assetId, not both.
	AssetURLs []string `json:"assetUrls,omitempty" example:"https://media.example.com/night-drive/cover.png"`
	// RevisionOf names the caller's own REVISION_REQUESTED submission to the same project that this one revises; each is revised once.
	RevisionOf string `json:"revisionOf,omitempty" example:"sbm_01jc0000000000000000000000"`
}

// ReviewSubmissionRequest is the body of POST /api/v1/submissions/{id}/review.
type ReviewSubmissionRequest struct {
	// Status is the status asked for: UNDER_REVIEW from SUBMITTED, then ACCEPTED, REJECTED or REVISION_REQUESTED.
	Status string `json:"status" example:"UNDER_REVIEW" enum:"DRAFT,SUBMITTED,UNDER_REVIEW,ACCEPTED,REJECTED,REVISION_REQUESTED"`
	// Note is the reviewer's note, at most 2000 characters, shown as reviewNote.
	Note string `json:"note,omitempty" example:"Lovely palette; the title needs more contrast."`
}

// optString is s, or nil when s is empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTime is t, or nil when t is zero.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func submissionView(s project.Submission) SubmissionView {
	v := SubmissionView{ID: s.ID, Object: "submission", ProjectID: s.ProjectID, SubmitterUserID: s.Submitter.UserID,
		Type: string(s.Type), Title: s.Title, Description: s.Description, Status: string(s.Status), Assets: []SubmissionAssetView{},
		RevisionOf: optString(s.RevisionOf), ReviewNote: optString(s.ReviewNote), ReviewedByUserID: optString(s.ReviewedByUserID),
		ReviewedAt: optTime(s.ReviewedAt), Version: s.Version, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if a := s.Asset; a != nil {
		v.AssetID = optString(a.ID)
		bytes := a.Bytes
		v.Assets = append(v.Assets, SubmissionAssetView{Status: string(project.ProbeVerified), ContentType: optString(a.ContentType),
			Bytes: &bytes, SHA256: optString(a.SHA256)})
	}
	for _, l := range s.Links {
		av := SubmissionAssetView{URL: optString(l.URL), Status: string(l.Status), Reason: optString(l.Reason), CheckedAt: optTime(l.CheckedAt)}
		if l.Status == project.ProbeVerified {
			bytes := l.Bytes
			av.ContentType, av.Bytes, av.SHA256 = optString(l.ContentType), &bytes, optString(l.SHA256)
		}
		v.Assets = append(v.Assets, av)
	}
	return v
}

func exampleSubmission() SubmissionView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	url, typ, sha := "https://media.example.com/night-drive/cover.png", "image/png", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	n := int64(482113)
	return SubmissionView{ID: "sbm_01jd0000000000000000000000", Object: "submission", ProjectID: "prj_01jd0000000000000000000000",
		SubmitterUserID: "usr_01jd0000000000000000000000", Type: "cover_art", Title: "Night Drive cover",
		Description: "A neon cover for the single.", Status: "SUBMITTED",
		Assets:  []SubmissionAssetView{{URL: &url, Status: "verified", ContentType: &typ, Bytes: &n, SHA256: &sha, CheckedAt: &t}},
		Version: 1, CreatedAt: t, UpdatedAt: t}
}

// submissionCursorPrefix marks a submission list cursor.
const submissionCursorPrefix = "sbm:"

// submissionListBinding is what a submission list cursor is bound to:
// the caller's tenant, workspace, environment and user, the project and
// the status filter, as a short digest. A cursor read under another
// binding is refused, so it never carries a position into another
// caller's or another filter's list; forging one gains nothing, since
// the list is scoped by the caller whatever the cursor says.
func submissionListBinding(p *access.Principal, projectID string, f project.SubmissionFilter) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{p.TenantID, p.WorkspaceID, string(p.Environment), p.UserID, projectID,
		string(f.Status)}, "\x00")))
	return hex.EncodeToString(sum[:8])
}

// submissionCursor returns the position a submission list cursor stands
// for: "" for none; INVALID_INPUT for a cursor this API did not return
// for this caller, project and filter.
func submissionCursor(s, binding string) (string, error) {
	if s == "" {
		return "", nil
	}
	bad := fault.Invalid("transport.submissionCursor", "cursor", "cursor is not a cursor this API returned for this list.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", bad
	}
	rest, ok := strings.CutPrefix(string(b), submissionCursorPrefix)
	pos, bind, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || bind != binding || !id.Valid(project.SubmissionIDPrefix, pos) {
		return "", bad
	}
	return pos, nil
}

func encodeSubmissionCursor(pos, binding string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(submissionCursorPrefix + pos + ":" + binding))
	return &s
}

// submissionRoutes are the community submission routes (spec, Projects
// and submissions): submit, read, list a project's, and review. Reads
// need project.read (API keys: scope read); submitting needs
// project.update (scope projects:write), reviewing project.publish,
// which no key scope stands for. Mutations take an optional
// Idempotency-Key; wake, when set, wakes the job workers after a
// submission enqueued its URL probe.
func submissionRoutes(svc *project.Submissions, wake func()) []Route {
	if svc == nil {
		return nil
	}
	route := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagProjects, transport.AuthSessionOrKey, true
		return r
	}
	read := func(r Route) Route {
		r = route(r)
		r.Permission, r.Scope, r.Idempotency = access.ProjectRead, access.ScopeRead, transport.IdempotencyNone
		return r
	}
	ex := exampleSubmission()
	return []Route{
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/submissions", OperationID: "createSubmission", Status: http.StatusCreated,
			Permission: access.ProjectUpdate, Scope: access.ScopeProjectsWrite, Idempotency: transport.IdempotencyOptional,
			OwnUnitOfWork: true,
			Summary:       "Submit work to a project",
			Description: "Submits work to an OPEN project: a public project of any tenant in the caller's environment, or a project of the " +
				"caller's workspace. The submitter is the caller's user (the session's, or an API key's creator). Needs project.update " +
				"reaching a resource of the caller's own (OWNER, ADMIN, CREATOR, MODERATOR, MEMBER; VIEWER, FINANCE and DEVELOPER are 403 " +
				"ACCESS_DENIED; an API key needs projects:write). The work is exactly one of assetId (an asset of the caller's workspace " +
				"and environment, else 404 NOT_FOUND with details.field assetId; its media type, size and SHA-256 are snapshot) and " +
				"assetUrls (1 to 5 public HTTPS URLs); both or neither is 400 INVALID_INPUT with details.field assetUrls and " +
				"details.reason both or neither. Each URL passes the URL guard before anything is stored: https only, no credentials, " +
				"a public host name whose every resolved address is public; otherwise 400 INVALID_INPUT with details.field " +
				"assetUrls[i] and details.reason (scheme, credentials, private_address for loopback, private, link-local and cloud " +
				"metadata addresses and names resolving to them, blocked_host, host_spelling, malformed_url, url_too_long, duplicate, " +
				"unresolved_host). The platform then fetches each URL in the background (at most 64 MiB, redirects judged again): its " +
				"assets item becomes verified (content type, bytes, sha256), refused (reason) or unreachable (reason). A project the " +
				"caller cannot read is 404 (details.field projectId); a readable project that is not OPEN is 409 " +
				"INVALID_STATE_TRANSITION with details.reason project_not_open and details.projectStatus. revisionOf names the " +
				"caller's own REVISION_REQUESTED submission to the same project: another user's is 403 ACCESS_DENIED, one in another " +
				"status 409 INVALID_STATE_TRANSITION (details.reason not_revision_requested), one revised already 409 CONFLICT " +
				"(details.field revisionOf). The submission is created SUBMITTED (the DRAFT -> SUBMITTED move happens in the same " +
				"unit of work). The same Idempotency-Key and body return the same submission. Writes the outbox event " +
				"submission.created and an audit record in the caller's workspace.",
			Request: CreateSubmissionRequest{ProjectID: "prj_01jd0000000000000000000000", Type: "cover_art", Title: "Night Drive cover",
				AssetURLs: []string{"https://media.example.com/night-drive/cover.png"}},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.InvalidState), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateSubmissionRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				prep, err := svc.Prepare(ctx, project.SubmitRequest{ProjectID: in.ProjectID, Type: project.SubmissionType(in.Type),
					Title: in.Title, Description: in.Description, AssetID: in.AssetID, AssetURLs: in.AssetURLs, RevisionOf: in.RevisionOf,
					RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					s, err := svc.Submit(ctx, tx, c.Principal, c.Authority, prep)
					if err != nil {
						return nil, err
					}
					if wake != nil && len(s.Links) > 0 {
						tx.AfterCommit(wake)
					}
					return submissionView(s), nil
				})
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/projects/{id}/submissions", OperationID: "listProjectSubmissions",
			Summary: "List a project's submissions",
			Description: "The submissions to a project the caller reads, newest first: every one for a caller of the project's workspace " +
				"whose project.read grant reaches the project; for any other caller who reads it (a public project), its own " +
				"submissions and the ACCEPTED ones. A project the caller cannot read is 404. status keeps one status (DRAFT, " +
				"SUBMITTED, UNDER_REVIEW, ACCEPTED, REJECTED, REVISION_REQUESTED; another is 400 INVALID_INPUT). limit is 1 to 100 " +
				"(default 20). cursor is the previous page's nextCursor: it is bound to the caller, the project and the status, and " +
				"any other cursor is 400 INVALID_INPUT.",
			Query: append(pageQuery("c2JtOnNibV8wMWpkOmFiYw"),
				transport.Param{Name: "status", Description: "Keeps submissions in this status.", Example: "ACCEPTED"}),
			Response: SubmissionPage{Items: []SubmissionView{ex}}, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				projectID := c.PathValue("id")
				f := project.SubmissionFilter{Status: project.SubmissionStatus(c.Query("status"))}
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				binding := submissionListBinding(c.Principal, projectID, f)
				before, err := submissionCursor(c.Query("cursor"), binding)
				if err != nil {
					return nil, err
				}
				subs, err := svc.List(ctx, c.Tx, c.Principal, c.Authority, projectID, f, before, limit+1)
				if err != nil {
					return nil, err
				}
				page := SubmissionPage{Items: []SubmissionView{}}
				if len(subs) > limit {
					subs = subs[:limit]
					page.HasMore, page.NextCursor = true, encodeSubmissionCursor(subs[limit-1].ID, binding)
				}
				for _, s := range subs {
					page.Items = append(page.Items, submissionView(s))
				}
				return page, nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/submissions/{id}", OperationID: "getSubmission",
			Summary: "Get a submission",
			Description: "A submission the caller submitted (from any tenant), one to a project of the caller's workspace that its " +
				"project.read grant reaches, or an ACCEPTED one of a project the caller reads. Anything else, and anything of the other " +
				"environment, is 404.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				s, err := svc.Get(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return submissionView(s), nil
			}}),
		route(Route{Method: http.MethodPost, Pattern: "/api/v1/submissions/{id}/review", OperationID: "reviewSubmission",
			Permission: access.ProjectPublish, Scope: access.ScopeProjectsWrite, Idempotency: transport.IdempotencyOptional,
			// A duplicate that fails because the first one moved the
			// status answers the first one's outcome.
			LateReplay: true,
			Summary:    "Review a submission",
			Description: "Moves a submission one step along its table: SUBMITTED -> UNDER_REVIEW (starting the review), then " +
				"UNDER_REVIEW -> ACCEPTED, REJECTED or REVISION_REQUESTED (the decision), with an optional note (at most 2000 " +
				"characters). Any other move (a jump such as SUBMITTED -> ACCEPTED, a step back, a move out of a decision) is 409 " +
				"INVALID_STATE_TRANSITION, before any check of the project's grant. Needs project.publish reaching the project, acting in " +
				"its workspace: the workspace's OWNER and ADMIN, a CREATOR on its own project, a project_lead assigned to it; a " +
				"MODERATOR, a collaborator or a VIEWER is 403 ACCESS_DENIED, and so is a submitter of another tenant; API keys hold no " +
				"scope for project.publish, so they cannot review. A submission the caller cannot read is 404. ACCEPTED needs every " +
				"asset URL verified: otherwise 409 INVALID_STATE_TRANSITION with details.reason assets_not_verified and " +
				"details.statuses; REJECTED and REVISION_REQUESTED are always allowed. Each review compare-and-sets the submission's " +
				"version: of concurrent reviews one wins and the others are 409 (CONFLICT, or INVALID_STATE_TRANSITION once the " +
				"winner's status is read); requests repeating one Idempotency-Key all answer the first one's outcome. Writes the outbox " +
				"event submission.reviewed and an audit record.",
			Request:  ReviewSubmissionRequest{Status: "UNDER_REVIEW"},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.InvalidState), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ReviewSubmissionRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				s, err := svc.Review(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"),
					project.ReviewRequest{Status: project.SubmissionStatus(in.Status), Note: in.Note, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return submissionView(s), nil
			}}),
	}
}
