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
package project
