package account

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Audit actions. Every writer of authority records one of them in the unit
// of work that makes the change; later domains add their own.
const (
	// ActionWorkspaceCreated: onboarding created a workspace and made its
	// creator a member. After: name, goal, selected plan, roles.
	ActionWorkspaceCreated = "workspace.created"
	// ActionMemberInvited: an invitation was sent. After: email, roles,
	// expiry (never the code).
	ActionMemberInvited = "member.invited"
	// ActionMemberJoined: an invitation was accepted. After: roles.
	ActionMemberJoined = "member.joined"
	// ActionMemberRolesChanged: a member's roles were replaced. Before and
	// after: roles.
	ActionMemberRolesChanged = "member.roles_changed"
	// ActionPlatformRoleGranted: the host's operator granted a platform
	// role (super_admin). After: role.
	ActionPlatformRoleGranted = "platform_role.granted"
	// ActionFeatureFlagSet: the host's operator turned a feature flag on or
	// off for a workspace or the platform. After: enabled.
	ActionFeatureFlagSet = "feature_flag.set"
)

// Audit target types.
const (
	// TargetUser is a user account (target id: the user id).
	TargetUser = "user"
	// TargetWorkspace is a workspace (target id: the workspace id).
	TargetWorkspace = "workspace"
	// TargetInvitation is an invitation (target id: the invited email).
	TargetInvitation = "invitation"
	// TargetFeatureFlag is a feature flag (target id: the flag's name).
	TargetFeatureFlag = "feature_flag"
)

// AuditEvent is one row of the append-only audit log: who (actor user and,
// for an API key, its id), what (action and target), when, under which
// request, and the before and after of the authority it changed. Before and
// After are JSON objects (nil when not applicable); they never carry a
// secret: no password, code, token or key.
//
// Environment is the test or live environment the event belongs to: the
// acting principal's (a session's chosen mode, an API key's environment),
// or for the platform's own work the environment of its subject. Reads are
// scoped by it, as every other record's: a test credential never reads a
// live event.
type AuditEvent struct {
	ID          string
	TenantID    string
	WorkspaceID string
	Environment access.Environment
	ActorUserID string
	ActorKeyID  string
	Action      string
	TargetType  string
	TargetID    string
	RequestID   string
	Before      json.RawMessage
	After       json.RawMessage
	CreatedAt   time.Time
}

// AuditWriter is the port the audit log is appended through. The log is
// append-only: there is no update or delete.
type AuditWriter interface {
	Now() time.Time
	NewID(prefix string) string
	// AuditInsert appends one event.
	AuditInsert(ctx context.Context, e AuditEvent) error
}

// AuditReader lists the audit log.
type AuditReader interface {
	// AuditList returns up to limit events of one tenant, workspace and
	// environment, newest first, with ids below before ("" for the newest).
	AuditList(ctx context.Context, sc access.Scope, before string, limit int) ([]AuditEvent, error)
}

// AuditEntry is what a writer of authority records; Audit fills in the
// id, the time and the actor.
type AuditEntry struct {
	// TenantID and WorkspaceID scope the event; empty means the actor's.
	TenantID    string
	WorkspaceID string
	// Environment is the environment the event belongs to; empty means the
	// actor's. Work without an actor (jobs, provider webhooks, the host's
	// operator) names it: the environment of the record it changed, or
	// access.Live for platform-level events that no environment owns.
	Environment access.Environment
	Action      string
	TargetType  string
	TargetID    string
	// RequestID is the gateway's request id ("" outside a request).
	RequestID string
	// Before and After are marshalled to JSON objects; nil is omitted.
	Before any
	After  any
}

// Audit appends one event in the caller's unit of work, so the change and
// its record commit together. actor is the principal acting (nil for the
// platform's own work and the host's operator, recorded with an empty
// actor). An event whose environment is neither given nor the actor's is
// refused (an internal error): every event belongs to test or live.
func Audit(ctx context.Context, st AuditWriter, actor *access.Principal, e AuditEntry) error {
	const op = "account.Audit"
	ev := AuditEvent{ID: st.NewID("aud_"), TenantID: e.TenantID, WorkspaceID: e.WorkspaceID, Environment: e.Environment,
		Action: e.Action, TargetType: e.TargetType, TargetID: e.TargetID, RequestID: e.RequestID, CreatedAt: st.Now()}
	if actor != nil {
		ev.ActorUserID, ev.ActorKeyID = actor.UserID, actor.KeyID
		if ev.TenantID == "" {
			ev.TenantID = actor.TenantID
		}
		if ev.WorkspaceID == "" {
			ev.WorkspaceID = actor.WorkspaceID
		}
		if ev.Environment == "" {
			ev.Environment = actor.Environment
		}
	}
	if !ev.Environment.Valid() {
		return fault.Wrap(op, fmt.Errorf("audit event %s has no environment (%q)", e.Action, ev.Environment))
	}
	var err error
	if ev.Before, err = auditJSON(e.Before); err != nil {
		return fault.Wrap(op, err)
	}
	if ev.After, err = auditJSON(e.After); err != nil {
		return fault.Wrap(op, err)
	}
	if err := st.AuditInsert(ctx, ev); err != nil {
		return fault.Wrap(op, err)
	}
	return nil
}

func auditJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// RolesState is the before or after of a role change, as the audit log
// records it.
type RolesState struct {
	Roles []access.Role `json:"roles"`
}
