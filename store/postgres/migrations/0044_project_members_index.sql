-- A project's members are read by workspace and project, in user order
-- (GET /api/v1/projects/{id}/members); the assignments' unique key is
-- (workspace, user, template, project), so without this index the read scans every assignment of
-- the workspace.
CREATE INDEX role_assignments_project ON role_assignments (workspace_id, project_id, user_id, template);
