package access

// CanAssign reports whether principal p, holding a, may give template t to
// someone on resource r (a project: r.IsProject), or take it away: nobody
// hands out authority it does not hold itself. Every grant of t must be
// within what p holds on r:
//   - a grant at own scope acts only on the assignee's own resources, so p
//     must hold the permission itself, from a role or workspace-wide
//     assignment or from an assignment to r's project (a CREATOR holds
//     reward.claim on its own things and may give a collaborator the same);
//   - any broader grant (assigned, project, workspace) must reach r as p's
//     own grant does (Reaches): a CREATOR reaches its own project with
//     project.update and so may give it to a collaborator, but holds no
//     reward.allocate, so it may not make anyone a project lead.
//
// Denies and an API key's scopes count as in Reaches. It returns the first
// permission of t that p lacks; an unknown template is never assignable
// (missing "").
func (a *Authority) CanAssign(p *Principal, t Template, r *Resource) (missing Permission, ok bool) {
	spec, known := TemplateFor(t)
	if !known || a == nil || p == nil || r == nil {
		return "", false
	}
	for _, gr := range spec.Grants {
		if !a.holdsWithin(p, gr, r) {
			return gr.Permission, false
		}
	}
	return "", true
}

// holdsWithin reports whether p, holding a, holds grant gr of a template
// as CanAssign requires on resource r.
func (a *Authority) holdsWithin(p *Principal, gr Grant, r *Resource) bool {
	if gr.Scope != GrantOwn {
		return a.Reaches(p, gr.Permission, r)
	}
	if a.Denied(gr.Permission) || (p.Kind == CredentialAPIKey && !keyAllows(p.Scopes, gr.Permission)) {
		return false
	}
	if r.WorkspaceID != "" && r.WorkspaceID != a.WorkspaceID {
		return false
	}
	for _, held := range a.grants() {
		if held.Permission == gr.Permission && (held.ProjectID == "" || held.ProjectID == r.ProjectID) {
			return true
		}
	}
	return false
}
