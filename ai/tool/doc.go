// Package tool runs the platform actions a model may propose during an AI
// operation (spec, AI control plane, Tool declaration and Artifact status;
// Authentication 11; ai.md §5): the tool catalog, the authorization of
// each call under its caller's own authority, and the artifacts that
// mutating tools leave for their caller's decision.
//
// # Catalog
//
// Each tool is a Declaration: an id (domain.action), the domain that owns
// it, the permissions and API key scope of the direct route it stands
// for, whether it mutates and whether it needs its caller's confirmation,
// and the JSON Schema (2020-12) of its arguments. The catalog declares
// project.read (getProject), project.create_draft (createProject) and
// generation.start (generateMusic). A model names a tool by its function
// name (the id with underscores, as both wires require) or its id, and
// nothing else; its arguments are validated against the schema, extra
// fields refused, before anything reads them.
//
// # Authority
//
// The model only proposes. A call is authorized as its caller's direct
// call of the tool's route, with the arguments as that route's path values
// or body: the host's Authorizer runs the route's declared access policy
// (credential kinds, workspace authority, permission, scope, feature,
// entitlement, resource scope) through the same evaluator as the gateway,
// with the caller's authority as it stands at that moment; then the
// owning domain's service applies its own checks, as the route's handler
// would (project.Service.Get and CheckCreate, operation.Service.Prepare).
// A refused call is refused with exactly the error the direct route
// answers with, and a model, provider or prompt never widens what the
// caller may do. The principal is always the caller of the AI request,
// never anything in the model's text.
//
// # Artifacts
//
// A read tool runs at once and its result goes back to the model. A
// mutating tool never runs when called: Run stores a draft Artifact with
// the validated arguments, the creating principal and its provenance (the
// AI operation and the model's call id), and tells the model it awaits
// confirmation. The caller decides:
//
//   - Confirm (Prepare, then Apply in the confirmation's unit of work with
//     its idempotency record) re-checks the caller's authority at that
//     moment, then moves the artifact draft -> approved -> applied and has
//     the owning domain's service do the action (project.Service.Create,
//     operation.Service.Accept: never a path around it), with every outbox
//     event and audit record, in one transaction. Concurrent confirmations
//     apply once (compare-and-set on the artifact's version); a failure
//     leaves the draft as it was.
//   - Reject moves draft -> rejected.
//
// Only the user whose request made the draft sees or decides it
// (ACCESS_DENIED, details.reason artifact_of_another_user, for another
// user of the workspace; NOT_FOUND outside the workspace and
// environment). The status table is Moves; every transition writes an
// outbox event (ai_artifact.drafted, approved, applied, rejected), and
// the draft, the application and the rejection an audit record. Drafts do
// not expire.
package tool
