// Package access owns authority: principals, environments, workspace roles,
// role templates, resource.action permissions with grant scopes,
// entitlements, feature flags, the super_admin platform role, wallet links
// and the evaluator that runs the spec's eleven access steps in order
// (Authentication 5).
package access
