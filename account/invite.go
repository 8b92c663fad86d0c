package account

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// InvitationLifetime bounds an invitation code from its issue.
const InvitationLifetime = 7 * 24 * time.Hour

// PurposeInvitation codes join a workspace (payload: InvitePayload).
const PurposeInvitation Purpose = "invitation"

// Invitation is an invitation as its inviter sees it: never its code, which
// is mailed to the invited address only and stored as a digest.
type Invitation struct {
	WorkspaceID string
	// Email is the invited address, lower-cased.
	Email     string
	Roles     []access.Role
	InvitedBy string
	ExpiresAt time.Time
}

// InvitePayload is the payload of an invitation code.
type InvitePayload struct {
	Roles []access.Role `json:"roles"`
}

// InviteStore is the port of sending an invitation: the invited address
// is checked against the workspace's members, the code stored and the
// invitation audited.
type InviteStore interface {
	AuditWriter
	WorkspaceReader
	// UserGetByEmail returns the user with email; NOT_FOUND when none.
	UserGetByEmail(ctx context.Context, email string) (access.User, error)
	// MemberGet returns one member of workspaceID; NOT_FOUND otherwise.
	MemberGet(ctx context.Context, workspaceID, userID string) (Member, error)
	// CodeInsert stores a single-use code (by digest).
	CodeInsert(ctx context.Context, c Code) error
}

// JoinStore is the port of joining a workspace through an invitation: the
// caller's session and credential are read, the code consumed, and the
// membership written through the access adapter's writers (which bump
// authority versions), with its audit event.
type JoinStore interface {
	AuditWriter
	SessionReader
	CodeConsumer
	WorkspaceReader
	// CredentialGet returns the user's credential; NOT_FOUND when none.
	CredentialGet(ctx context.Context, userID string) (PasswordCredential, error)
	// UserMembershipCount counts the workspaces userID is a member of.
	UserMembershipCount(ctx context.Context, userID string) (int, error)
	// UserTenantSet moves a user and their sessions into tenantID.
	UserTenantSet(ctx context.Context, userID, tenantID string) error
	// MembershipInsert makes userID an active member with roles; CONFLICT
	// if the membership exists.
	MembershipInsert(ctx context.Context, workspaceID, userID string, roles []access.Role) error
	// SessionWorkspaceSet points a session at a workspace (after onboarding
	// or accepting an invitation): its next request acts there. NOT_FOUND
	// when the session does not exist.
	SessionWorkspaceSet(ctx context.Context, id, workspaceID string) error
}

// InviteInput is one invitation request.
type InviteInput struct {
	Email string
	Roles []access.Role
	// RequestID is the gateway's request id, recorded in the audit log.
	RequestID string
}

// Invite invites an email address to the caller's workspace with roles: a
// single-use code (InvitationLifetime) is stored as a digest and mailed as
// a link to BaseURL/invite/accept?code=..., and the invitation is audited,
// in the caller's unit of work (a failed send rolls it back). a is the
// caller's authority.
//
// Errors: INVALID_INPUT for a malformed email (details.field "email"), an
// empty role list ("roles"), or an unknown or repeated role, super_admin
// included ("roles[i]"); ACCESS_DENIED (details.field "roles[i]") for a
// role beyond the caller's authority (an ADMIN cannot invite an OWNER);
// CONFLICT (details.reason "already_member") when the address belongs to a
// member; SERVICE_UNAVAILABLE when the mail cannot be sent.
func (s *Service) Invite(ctx context.Context, st InviteStore, p *access.Principal, a *access.Authority, in InviteInput) (Invitation, error) {
	const op = "account.Invite"
	email, err := validEmail(op, "email", in.Email)
	if err != nil {
		return Invitation{}, err
	}
	if err := checkRoles(op, a, in.Roles); err != nil {
		return Invitation{}, err
	}
	roles := sortedRoles(in.Roles)
	if u, err := st.UserGetByEmail(ctx, email); err == nil {
		if _, err := st.MemberGet(ctx, p.WorkspaceID, u.ID); err == nil {
			return Invitation{}, fault.E(op, fault.Conflict, "The address belongs to a member of the workspace.").
				With("field", "email").With("reason", "already_member")
		} else if !fault.Is(err, fault.NotFound) {
			return Invitation{}, fault.Wrap(op, err)
		}
	} else if !fault.Is(err, fault.NotFound) {
		return Invitation{}, fault.Wrap(op, err)
	}
	ws, err := st.WorkspaceGet(ctx, p.TenantID, p.WorkspaceID)
	if err != nil {
		return Invitation{}, fault.Wrap(op, err)
	}
	payload, err := json.Marshal(InvitePayload{Roles: roles})
	if err != nil {
		return Invitation{}, fault.Wrap(op, err)
	}
	code, rec := NewCode(s.keys, PurposeInvitation, st.Now(), InvitationLifetime)
	rec.Email, rec.TenantID, rec.WorkspaceID, rec.CreatedBy, rec.Payload = email, p.TenantID, p.WorkspaceID, p.UserID, string(payload)
	if err := st.CodeInsert(ctx, rec); err != nil {
		return Invitation{}, fault.Wrap(op, err)
	}
	inv := Invitation{WorkspaceID: p.WorkspaceID, Email: email, Roles: roles, InvitedBy: p.UserID, ExpiresAt: rec.ExpiresAt}
	err = Audit(ctx, st, p, AuditEntry{Action: ActionMemberInvited, TargetType: TargetInvitation, TargetID: email,
		RequestID: in.RequestID, After: struct {
			Email     string        `json:"email"`
			Roles     []access.Role `json:"roles"`
			ExpiresAt time.Time     `json:"expiresAt"`
		}{email, roles, rec.ExpiresAt}})
	if err != nil {
		return Invitation{}, fault.Wrap(op, err)
	}
	// Mailed last: a failed send rolls the invitation back.
	err = s.send(ctx, Message{To: email, Subject: "You are invited to " + ws.Name,
		Text: fmt.Sprintf("You are invited to join the workspace %q.\n\nSign up or sign in with this address, then open this link within 7 days to accept:\n\n%s\n\nIf you did not expect this invitation, ignore this message.\n",
			ws.Name, s.Link("/invite/accept", code))})
	if err != nil {
		return Invitation{}, fault.Wrap(op, err)
	}
	return inv, nil
}

// Joined is the workspace a user joined, with the roles they hold in it.
type Joined struct {
	Workspace access.Workspace
	Roles     []access.Role
}

// AcceptInvite redeems an invitation code for the signed-in caller, whose
// verified email must be the invited address: the caller joins the
// workspace with the invited roles (bumping its authority version), the
// caller's session acts in that workspace from its next request, and the
// join is audited. A person who signed up alone and belongs to no
// workspace yet moves into the inviting organization (tenant); one who
// already belongs to another organization's workspace cannot join (users
// belong to one tenant).
//
// Errors: INVALID_INPUT (details.field "code", details.reason unknown,
// used or expired) for a bad code; ACCESS_DENIED with details.reason
// "email_unverified" or "email_mismatch" (the code stays unused);
// WORKSPACE_ACCESS_DENIED when the workspace is no longer active;
// CONFLICT with details.reason "already_member" or "other_organization".
func (s *Service) AcceptInvite(ctx context.Context, st JoinStore, p *access.Principal, code, requestID string) (Joined, error) {
	const op = "account.AcceptInvite"
	ses, u, err := s.CurrentSession(ctx, st, p)
	if err != nil {
		return Joined{}, err
	}
	c, err := ConsumeCode(ctx, st, s.keys, PurposeInvitation, code, "code", st.Now())
	if err != nil {
		return Joined{}, err
	}
	cred, err := st.CredentialGet(ctx, u.ID)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return Joined{}, fault.Wrap(op, err)
	}
	if err != nil || cred.EmailVerifiedAt == nil {
		return Joined{}, fault.E(op, fault.AccessDenied, "Verify your email address before accepting an invitation.").
			With("reason", "email_unverified")
	}
	if u.Email != c.Email {
		return Joined{}, fault.E(op, fault.AccessDenied, "The invitation was sent to another email address.").
			With("reason", "email_mismatch")
	}
	var pl InvitePayload
	if err := json.Unmarshal([]byte(c.Payload), &pl); err != nil {
		return Joined{}, fault.Wrap(op, fmt.Errorf("invitation payload: %w", err))
	}
	if err := access.ValidateRoles(pl.Roles); err != nil {
		return Joined{}, fault.Wrap(op, fmt.Errorf("invitation payload: %w", err))
	}
	ws, err := st.WorkspaceGet(ctx, c.TenantID, c.WorkspaceID)
	if fault.Is(err, fault.NotFound) || err == nil && ws.State != access.WorkspaceActive {
		return Joined{}, fault.E(op, fault.WorkspaceAccessDenied, "The workspace is not available.")
	}
	if err != nil {
		return Joined{}, fault.Wrap(op, err)
	}
	if u.TenantID != c.TenantID {
		n, err := st.UserMembershipCount(ctx, u.ID)
		if err != nil {
			return Joined{}, fault.Wrap(op, err)
		}
		if n > 0 {
			return Joined{}, fault.E(op, fault.Conflict, "Your account belongs to another organization's workspaces.").
				With("reason", "other_organization")
		}
		if err := st.UserTenantSet(ctx, u.ID, c.TenantID); err != nil {
			return Joined{}, fault.Wrap(op, err)
		}
	}
	if err := st.MembershipInsert(ctx, ws.ID, u.ID, pl.Roles); err != nil {
		if fault.Is(err, fault.Conflict) {
			return Joined{}, fault.E(op, fault.Conflict, "You are already a member of the workspace.").With("reason", "already_member")
		}
		return Joined{}, fault.Wrap(op, err)
	}
	if err := st.SessionWorkspaceSet(ctx, ses.ID, ws.ID); err != nil {
		return Joined{}, fault.Wrap(op, err)
	}
	err = Audit(ctx, st, p, AuditEntry{TenantID: ws.TenantID, WorkspaceID: ws.ID, Action: ActionMemberJoined,
		TargetType: TargetUser, TargetID: u.ID, RequestID: requestID, After: struct {
			Roles     []access.Role `json:"roles"`
			InvitedBy string        `json:"invitedBy"`
		}{pl.Roles, c.CreatedBy}})
	if err != nil {
		return Joined{}, fault.Wrap(op, err)
	}
	return Joined{Workspace: ws, Roles: pl.Roles}, nil
}
