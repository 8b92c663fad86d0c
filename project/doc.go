// Package project holds projects: the records a creator's music becomes a
// collaboration in. A project belongs to one tenant, workspace and
// environment; its owner is the user of the principal that created it
// (never a user named in a request body).
//
// # Visibility
//
// A project is VisibilityWorkspace (the default) or VisibilityPublic. A
// workspace project is read only inside its workspace, by callers whose
// project.read grant reaches it (own, assigned, project or workspace).
// A public project is also read by any signed-in caller of any tenant in
// the same environment: community submissions need a project that other
// tenants' creators can find. Nothing of another environment is ever
// read: a test credential never sees a live project. Reads of a project
// the caller may not see are NOT_FOUND, which says nothing about whether
// it exists. Only the owning workspace moves a project.
//
// # Status
//
// The status machine is one table (Moves): DRAFT -> OPEN -> IN_PRODUCTION
// -> REVIEW -> COMPLETED -> ARCHIVED, one step forward at a time and no
// other move. Each row names the permission its move needs: opening
// (DRAFT -> OPEN, publishing the project to the community) needs
// project.publish; the other moves need project.update. A move the table
// does not have is INVALID_STATE_TRANSITION whoever asks; a move the
// table has that the caller's grant does not reach for this project is
// ACCESS_DENIED. Every move compare-and-sets the project's version and
// writes the outbox event project.status_changed and an audit record in
// the same unit of work.
//
// # Fields
//
// Title is 1 to 200 characters after trimming; description at most 5000;
// type one of Types (music_video, album, single, remix, soundtrack,
// other).
//
// # Members
//
// A project's members are the workspace members holding a project-scoped
// role template on it: Project Lead, Creator or Collaborator
// (MemberTemplates), one per member and project. They are
// role_assignments rows, so a member's authority (package access) sees
// them: the project is the resource its members are assigned to
// (Project.Resource sets access.Resource.IsProject), so a collaborator's
// assigned project.read and project.update reach the project, and a
// project lead's project-bound grants (project.publish among them) reach
// it and no other project.
//
// Members lists a project's members by user id, keyset-paginated, to
// whoever's project.read grant reaches the project in its workspace
// (NOT_FOUND for a project of another workspace, public or not, or one
// the caller cannot read; ACCESS_DENIED for a public project of the
// workspace the caller's grant does not reach). SetMember sets a
// member's role, replacing the one it held in the same unit of work;
// RemoveMember removes it. A change needs, in this order:
//   - a template of MemberTemplates (INVALID_INPUT, details.field template);
//   - a project of the caller's workspace that the caller reads (NOT_FOUND);
//   - someone else's role (ACCESS_DENIED, details.reason
//     self_role_change): nobody changes their own;
//   - the caller's project.publish reaching the project: workspace OWNER
//     and ADMIN, a CREATOR owning it, a project lead of it (ACCESS_DENIED,
//     details.permission project.publish). No API key scope stands for
//     project.publish, so keys cannot change roles;
//   - no escalation: the caller must hold on the project every
//     permission of the role it gives and of the role it replaces or
//     removes (access.Authority.CanAssign; ACCESS_DENIED, details.reason
//     template_exceeds_caller, details.template and details.permission):
//     a CREATOR owning the project may make collaborators and creators
//     but no project lead, which carries reward.allocate;
//   - an active member of the project's workspace for SetMember, a
//     member holding a role on the project for RemoveMember (NOT_FOUND,
//     details.field userId); a user of another workspace or tenant is
//     never one.
//
// Changes of one member run one after the other (the store locks the
// membership), so concurrent sets end in one role. Setting the role a
// member holds changes nothing and writes nothing. Every other change
// writes, in its unit of work, an audit record (ActionMemberChanged;
// target the project; before and after: userId and template), the
// outbox event EventMemberChanged (aggregate: the project; version: the
// workspace's authority version after the change) and the authority
// version bump that applies it from the member's very next request, on
// every host. Who made an assignment is in its audit record.
//
// # Lists
//
// List returns the caller's workspace's projects in its environment,
// newest first (by id: ids order by their creation millisecond),
// keyset-paginated by id: a caller whose project.read grant
// is narrower than the workspace (own, assigned) sees its own, those it
// holds a project role on (Members), and the public ones.
//
// With Filter.Visibility VisibilityPublic, List returns instead the public
// projects of every tenant in the caller's environment, in the same order
// and with the same status, type and creator filters: the community's
// listing, where creators of other tenants find the projects they may
// take part in. Any signed-in caller with project.read reads it; a
// workspace project never appears in it, whoever asks, and neither does
// anything of the other environment. Public projects of other tenants are
// also read by id.
//
// # Submissions
//
// A submission (Submissions, submission.go) is a creator's work offered
// to a project by its community: a type (SubmissionTypes: music_video,
// artwork, animation, remix, short_video, trailer, story, cover_art,
// audio, other), a title (1 to 200 characters after trimming), a
// description (at most 5000), and the work itself, named either by
// assetId, a platform asset of the submitter's own workspace and
// environment read through the asset domain's read path (asset.Service.
// Get), whose media type, size and SHA-256 are snapshot into the
// submission, or by assetUrls, one to five public HTTPS URLs; never both
// and never neither (INVALID_INPUT, details.field assetUrls,
// details.reason both or neither).
//
// Who submits: a signed-in user (a session, or an API key holding
// projects:write) whose project.update grant reaches a resource of its
// own (so not VIEWER, FINANCE or DEVELOPER: ACCESS_DENIED), to a project
// it reads (else NOT_FOUND, details.field projectId): a public project of
// any tenant in its environment, or a project of its own workspace. The
// project must be OPEN: a readable project in any other status is
// INVALID_STATE_TRANSITION with details.reason "project_not_open" and
// details.projectStatus (the submission is a workflow move the project's
// state does not allow, whatever the caller's role). The submitter is the
// principal's user; its tenant, workspace and API key are recorded. The
// submission belongs to the project's tenant, workspace and environment,
// where it is listed.
//
// Reads: a submission is read by its submitter (any tenant), by a reader
// of the project in the project's workspace (project.read reaching the
// project), and, once ACCEPTED, by anyone who reads the project; anyone
// else gets NOT_FOUND. A project's list shows every submission to the
// workspace's readers, and to any other caller who reads the project its
// own submissions and the ACCEPTED ones: a list item is always readable
// by id. Lists are newest first, keyset-paginated by id.
//
// # Submission status
//
// The status machine is one table (SubmissionMoves), served from the same
// values SubmissionTransition enforces: DRAFT -> SUBMITTED (creation: the
// create unit of work records the move, so a stored submission starts
// SUBMITTED), SUBMITTED -> UNDER_REVIEW (the review route, starting the
// review), UNDER_REVIEW -> ACCEPTED, REJECTED or REVISION_REQUESTED (the
// review route, the reviewer's decision), and no other move: a jump
// (SUBMITTED -> ACCEPTED), a step back or a move out of a decision is
// INVALID_STATE_TRANSITION whoever asks. A review names the target
// status, as the project status route does, with an optional note (at
// most 2000 characters). It needs project.publish reaching the project
// (its owner holding it at own scope, a project_lead assigned to it, the
// workspace's OWNER or ADMIN), acting in the project's workspace; a
// MODERATOR or a collaborator is ACCESS_DENIED, and so is a submitter of
// another tenant who reads the public project; a caller who cannot read
// the submission gets NOT_FOUND. Accepting needs every asset URL
// verified: otherwise INVALID_STATE_TRANSITION with details.reason
// "assets_not_verified" and details.statuses, each URL's probe status;
// rejecting and requesting a revision are always allowed. Every review
// compare-and-sets the submission's version, so of concurrent reviews one
// wins and the others are CONFLICT (or INVALID_STATE_TRANSITION once the
// winner's status is read); each move writes the outbox event
// submission.reviewed and an audit record in the reviewer's workspace,
// as creation writes submission.created and an audit record in the
// submitter's.
//
// A REVISION_REQUESTED submission is revised by a new submission naming
// it in revisionOf, to the same project: only by its submitter (another
// reader is ACCESS_DENIED), only from REVISION_REQUESTED
// (INVALID_STATE_TRANSITION, details.reason "not_revision_requested"),
// and only once: a unique constraint makes a second revision CONFLICT.
// The earlier record is not changed: submissions are immutable history.
//
// # Probes
//
// Submitted URLs are judged twice. When submitted, each passes the URL
// guard's full check (urlguard.Guard.Check: https only, no credentials,
// a public host name whose every resolved address is public), else the
// request is INVALID_INPUT with details.field "assetUrls[i]" and the
// guard's details.reason (scheme, credentials, private_address,
// blocked_host, host_spelling, ...), "duplicate", or "unresolved_host",
// and nothing is stored. Then the durable job submission.probe (JobProbe,
// outbound class, one workspace's one at a time) fetches each URL through
// the guard's pinned client (ProbeGuardConfig): one bounded GET (at most ProbeMaxBytes, 64 MiB,
// hashed as it streams and never stored; ProbeTimeout per GET), whose
// redirects are judged again, hop by hop and at connect time. Each URL
// ends, once, in one status: verified (content type, byte length and
// SHA-256 of the body recorded), refused (reason: the guard's, so a
// redirect to a private address is private_address; "too_large";
// "empty"), or unreachable (reason http_<status>, timeout, network or
// unresolved_host) after the job's bounded attempts (DefaultProbeAttempts,
// retried with the jobs package's backoff while the failure is transient:
// a transport error, 408, 429 or 5xx; other statuses end at once). The
// job honours its context: cancelled, it stops within the fetch it is in.
package project
