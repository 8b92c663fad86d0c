package access

import "context"

// Store is the port the access domain reads authority through. store.Tx
// implements it. Writers of roles, memberships, entitlements and flags live
// on the adapter and bump the authority version in the same transaction.
type Store interface {
	// AuthorityLoad returns the authority snapshot of userID in workspaceID of
	// tenantID in environment env (Environment set to env): its entitlements
	// are the workspace's rows for both environments and for env. Version is
	// set to AuthzVersion(workspaceID) read before everything else: a change
	// committed between the two reads leaves the snapshot stamped older than
	// its data, which only makes the next request reload; a snapshot is never
	// stamped newer than its data. An unknown workspace, or one of another
	// tenant, is not an error: the snapshot has an empty WorkspaceState and no membership,
	// and the evaluator refuses it with WORKSPACE_ACCESS_DENIED (no existence
	// leak). Other failures are INTERNAL.
	AuthorityLoad(ctx context.Context, tenantID, workspaceID, userID string, env Environment) (Authority, error)
	// AuthzVersion returns the authority version covering workspaceID: the
	// workspace's stamp plus the 'global' stamp (missing rows count 0). Both
	// only grow, so a change of either changes the sum. It is one cheap query.
	AuthzVersion(ctx context.Context, workspaceID string) (int64, error)
}
