// Package access owns authority: principals, environments, workspace roles,
// role templates, resource.action permissions with grant scopes,
// entitlements, feature flags, the super_admin platform role, wallet links
// and the evaluator that runs the spec's eleven access steps in order
// (Authentication 5-8, 12; Errors: Access and rule 4).
//
// # Data, not code
//
// Permissions (permission.go), the grants of the eight workspace roles and
// of the nine role templates (grant.go), the API key scopes (scope.go) and
// the evaluation steps (evaluator.go) are tables. The roles route and the
// architecture route can serve them as they are; tests read them.
//
// # Authority
//
// An Authority is the snapshot of one user in one workspace: membership
// status, roles, template assignments, explicit denies, the workspace's
// entitlements and flags, the super_admin platform role and the count of
// verified wallets. Its grants are the union of its roles' and templates'
// grants; a project-scoped assignment's grants are capped at GrantProject and
// reach only that project, and its holder counts as assigned to the project
// itself (Resource.IsProject), so a collaborator's assigned project.read
// and project.update reach it; an explicit deny removes a permission
// whatever grants it. Nobody gives or takes a template holding more than
// itself holds on the project (Authority.CanAssign). Entitlements never grant authority. super_admin grants no
// permission: routes that need it say so (Input.RequireSuperAdmin).
//
// # Freshness
//
// Every change of role, membership, assignment, deny, entitlement,
// subscription or flag bumps an authority version in the same transaction
// (the store's authz_versions: one row per workspace and a 'global' row).
// Cache reads the version on every request (one cheap query) and reloads the
// snapshot only when it changed, so the next request on any host sees the
// change. There is no TTL.
//
// # Evaluation
//
// Evaluate runs Steps in order and reports the first failing step, except
// that a permission or resource-scope failure outranks a feature or
// entitlement failure of the same request, and is reported as ACCESS_DENIED:
// an upgrade would not help. A missing entitlement is SUBSCRIPTION_REQUIRED
// when the workspace holds no paid plan and a paid plan would grant it
// (Input.Offers), else ENTITLEMENT_REQUIRED; both name the plans that grant
// it. A broad role never passes an invalid workflow state: the workflow
// step runs for every role. The resource is loaded (Input.ResourceFunc)
// only when the resource-scope step is reached. The developer portal's
// routes set RequiredRoles to DEVELOPER and Permission to
// developer.portal.read; key mutations need developer.api_key.manage.
// Routes may require only the gating roles (GatingRoles); everything else
// is a permission.
//
// # API keys
//
// A key's authority is its scopes (ScopeSpec maps each to permissions). At
// creation, ValidateScopes keeps them within ScopesFor(creator's authority).
// At each request the evaluator also loads the creator's authority now and
// requires it to hold the route's permission: a key never exceeds what its
// creator holds today. Authority.Covers tells whether another member holds
// a key's authority in full (the key service lets administrators rotate
// such keys only). ScopeInternal keys, issued by the host's operator,
// are the only holders of internal.events and skip the membership steps on
// routes requiring it.
//
// The package imports only the standard library and fault; its Store port
// is implemented by package store.
package access
