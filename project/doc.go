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
// # Lists
//
// List returns the caller's workspace's projects in its environment,
// newest first (by id: ids order by their creation millisecond),
// keyset-paginated by id: a caller whose project.read grant
// is narrower than the workspace (own, assigned) sees its own and the
// public ones.
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
