// Package release holds releases: a track (an asset) or a project of a
// workspace put out to external distribution (spec, Architecture and
// operations: GET and POST /api/v1/releases, POST
// /api/v1/releases/{id}/status). A release belongs to one tenant,
// workspace and environment; its creator is the user of the principal
// that created it.
//
// # No external call
//
// The platform calls no distributor. A release records the workspace's
// distribution plan (title, release date, territories, the distributor's
// name) and the status it reports: the workspace delivers the work to
// its distributor itself, then records SUBMITTED, and records LIVE or
// REJECTED as the distributor answers. A status here is the workspace's
// statement, never proof that a store lists the work.
//
// # Fields
//
// The target is an asset or a project of the caller's workspace and
// environment (anything else, another tenant's public project included,
// is NOT_FOUND with details.field target.id). Title is one line of 1 to
// 200 characters after trimming; releaseDate a calendar day (YYYY-MM-DD)
// from the creation day (UTC) to MaxLeadDays after; territories 1 to 250
// distinct ISO 3166-1 alpha-2 codes (Territories), or WW (worldwide)
// alone, stored sorted; distributor one line of 1 to 100 characters.
// Every refusal is INVALID_INPUT naming the field.
//
// # Status
//
// The spec leaves release states open and asks that their changes be
// checked against a formal transition map. The map is one table (Moves),
// served from the same values Transition enforces:
//
//	DRAFT -> SCHEDULED -> SUBMITTED -> LIVE -> TAKEN_DOWN
//	SCHEDULED -> DRAFT; SUBMITTED -> REJECTED -> DRAFT
//
// and no other move: a jump, a step back the table does not have, a move
// out of TAKEN_DOWN (terminal) or to the same status is
// INVALID_STATE_TRANSITION whoever asks. Each row's move needs a
// permission (MovePermission) reaching the release: every move into
// external distribution (SCHEDULED, SUBMITTED, LIVE, REJECTED,
// TAKEN_DOWN) needs project.publish, taking a release back to DRAFT
// project.update. No API key scope stands for project.publish, so keys
// create drafts and take them back but never schedule.
//
// # Who may
//
// Creating needs project.update reaching the target: OWNER and ADMIN any
// target of the workspace, CREATOR and MEMBER the assets and projects
// they own, a project lead the project it leads. A release's resource is
// owned by its creator and belongs to its target's project, so a
// project's lead reaches its releases. Lists need project.read: the
// workspace's releases to a grant covering the workspace, only the
// caller's own to a narrower one (MEMBER, DEVELOPER). Nothing of another
// workspace or environment is ever read.
//
// Every change compare-and-sets the release's version and writes, in the
// same unit of work, the outbox event (release.created,
// release.status_changed) and an audit record.
//
// The package imports no transport, store or SDK; package store
// implements Store.
package release
