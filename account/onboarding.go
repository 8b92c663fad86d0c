package account

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
)

// Goal is what a person means to do with the platform, asked at onboarding.
// It shapes the first-run experience only; it grants nothing.
type Goal string

// The onboarding goals.
const (
	// GoalCreator makes and publishes music.
	GoalCreator Goal = "creator"
	// GoalLabel runs a label: artists, releases, rights.
	GoalLabel Goal = "label"
	// GoalDeveloper builds on the API.
	GoalDeveloper Goal = "developer"
	// GoalTeam works with others in a shared workspace.
	GoalTeam Goal = "team"
)

// Goals returns the onboarding goals.
func Goals() []Goal { return []Goal{GoalCreator, GoalLabel, GoalDeveloper, GoalTeam} }

// Valid reports whether g is one of Goals.
func (g Goal) Valid() bool {
	for _, x := range Goals() {
		if g == x {
			return true
		}
	}
	return false
}

// Onboarding is the record of a workspace created through onboarding: who
// created it, the goal they chose and the plan they selected (which may be
// a paid plan still to be bought at checkout).
type Onboarding struct {
	WorkspaceID string
	// WorkspaceName is read with the record; it is not stored with it.
	WorkspaceName string
	UserID        string
	Goal          Goal
	SelectedPlan  string
	CreatedAt     time.Time
}

// OnboardingRecords is the port of onboarding records.
type OnboardingRecords interface {
	// OnboardingInsert stores a record.
	OnboardingInsert(ctx context.Context, o Onboarding) error
	// OnboardingByUser returns the first workspace userID created through
	// onboarding; NOT_FOUND when none.
	OnboardingByUser(ctx context.Context, userID string) (Onboarding, error)
}

// Onboarding actions.
const (
	// OnboardCreate creates a workspace.
	OnboardCreate = "create"
	// OnboardJoin joins a workspace through an invitation code.
	OnboardJoin = "join"
)

// OnboardInput is one onboarding answer.
type OnboardInput struct {
	// Action is OnboardCreate or OnboardJoin.
	Action string
	// Name names the new workspace (create).
	Name string
	// Goal is what the person means to do (create; required).
	Goal Goal
	// Plan is the selected plan's id (create); "" means plan.FreeID.
	Plan string
	// Code is the invitation code (join).
	Code string
	// RequestID is the gateway's request id, recorded in the audit log.
	RequestID string
}

// Onboarded is the outcome of onboarding.
type Onboarded struct {
	Workspace access.Workspace
	// Roles are the caller's roles in the workspace.
	Roles []access.Role
	// Goal and SelectedPlan are the recorded answers ("" for a join).
	Goal         Goal
	SelectedPlan string
	// ActivePlan is the plan the workspace is on now in the principal's
	// environment ("" for a join).
	ActivePlan string
	// Checkout names the paid plan still to be bought at checkout; "" when
	// none.
	Checkout string
}

// CreatorRoles are the roles of a workspace's creator: OWNER, and
// DEVELOPER so that the creator can use the developer portal (a member
// cannot grant roles to themselves), as the bootstrapped owner does.
func CreatorRoles() []access.Role { return []access.Role{access.RoleDeveloper, access.RoleOwner} }

// PlanStarter puts a new workspace on the free plan in the unit of work
// that creates it (entitlements and monthly grants); *plan.Service
// satisfies it.
type PlanStarter interface {
	Start(ctx context.Context, st plan.Store, tenantID, workspaceID string) error
}

// OnboardingStore is the account side of onboarding: joining (JoinStore),
// and creating a workspace with its first membership and onboarding
// record. The plan side (the offered plans, the new workspace's plan and
// grants) is a plan.Store of the same unit of work, passed beside it: the
// two together are wider than one port should be.
type OnboardingStore interface {
	JoinStore
	OnboardingRecords
	// WorkspaceInsert creates an active workspace in tenantID.
	WorkspaceInsert(ctx context.Context, id, tenantID, name string) error
}

// Onboard runs the first-run step of a signed-in user, in the caller's
// unit of work: st is its account side and ps its plan side (the same unit
// of work, as two ports).
//
// Create makes a workspace in the user's tenant with the user as OWNER
// (CreatorRoles), records the goal and the selected plan, puts the
// workspace on the free plan through plans (its entitlements and this
// month's credit grants follow) and, for a paid plan, names it in
// Onboarded.Checkout: the workspace stays on free until the client buys
// that plan at checkout (POST /api/v1/saas/checkout, package billing), whose
// paid subscription then activates it. The user's session acts in the new
// workspace from its next request, and the creation is audited. A user
// creates one workspace through onboarding: repeating the same answers
// returns that workspace again (a retry recovers, with or without an
// Idempotency-Key), other answers are CONFLICT (details.reason
// "already_onboarded").
//
// Join is AcceptInvite with Code.
//
// Errors: INVALID_INPUT with details.field "action", "name" (1 to 100
// characters), "goal" (one of Goals) or "plan" (not an offered plan), and
// those of AcceptInvite for a join.
func (s *Service) Onboard(ctx context.Context, st OnboardingStore, ps plan.Store, plans PlanStarter, p *access.Principal, in OnboardInput) (Onboarded, error) {
	const op = "account.Onboard"
	switch in.Action {
	case OnboardJoin:
		if strings.TrimSpace(in.Code) == "" {
			return Onboarded{}, fault.Invalid(op, "code", "An invitation code is required to join a workspace.")
		}
		j, err := s.AcceptInvite(ctx, st, p, in.Code, in.RequestID)
		if err != nil {
			return Onboarded{}, err
		}
		return Onboarded{Workspace: j.Workspace, Roles: j.Roles}, nil
	case OnboardCreate:
	default:
		return Onboarded{}, fault.Invalid(op, "action", "action must be create or join.").With("allowed", []string{OnboardCreate, OnboardJoin})
	}
	name := strings.TrimSpace(in.Name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 {
		return Onboarded{}, fault.Invalid(op, "name", "The workspace name must be 1 to 100 characters.")
	}
	if !in.Goal.Valid() {
		return Onboarded{}, fault.Invalid(op, "goal", "Unknown goal.").With("allowed", Goals())
	}
	planID := in.Plan
	if planID == "" {
		planID = plan.FreeID
	}
	pl, err := ps.PlanGet(ctx, planID)
	if fault.Is(err, fault.NotFound) || err == nil && !pl.Active {
		return Onboarded{}, fault.Invalid(op, "plan", "The plan is not offered.")
	}
	if err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	ses, u, err := s.CurrentSession(ctx, st, p)
	if err != nil {
		return Onboarded{}, err
	}
	out := Onboarded{Roles: CreatorRoles(), Goal: in.Goal, SelectedPlan: planID, ActivePlan: plan.FreeID}
	if planID != plan.FreeID {
		out.Checkout = planID
	}
	prev, err := st.OnboardingByUser(ctx, u.ID)
	switch {
	case err == nil:
		if prev.WorkspaceName != name || prev.Goal != in.Goal || prev.SelectedPlan != planID {
			return Onboarded{}, fault.E(op, fault.Conflict, "You have already created a workspace.").
				With("reason", "already_onboarded").With("workspaceId", prev.WorkspaceID)
		}
		ws, err := st.WorkspaceGet(ctx, u.TenantID, prev.WorkspaceID)
		if err != nil {
			return Onboarded{}, fault.Wrap(op, err)
		}
		if err := st.SessionWorkspaceSet(ctx, ses.ID, ws.ID); err != nil {
			return Onboarded{}, fault.Wrap(op, err)
		}
		if a, err := ps.WorkspacePlanGet(ctx, ws.ID, p.Environment); err == nil {
			out.ActivePlan = a.PlanID
		}
		out.Workspace = ws
		return out, nil
	case !fault.Is(err, fault.NotFound):
		return Onboarded{}, fault.Wrap(op, err)
	}

	wsID := st.NewID("ws_")
	if err := st.WorkspaceInsert(ctx, wsID, u.TenantID, name); err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	if err := plans.Start(ctx, ps, u.TenantID, wsID); err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	if err := st.MembershipInsert(ctx, wsID, u.ID, out.Roles); err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	if err := st.OnboardingInsert(ctx, Onboarding{WorkspaceID: wsID, UserID: u.ID, Goal: in.Goal, SelectedPlan: planID,
		CreatedAt: st.Now()}); err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	if err := st.SessionWorkspaceSet(ctx, ses.ID, wsID); err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	err = Audit(ctx, st, p, AuditEntry{TenantID: u.TenantID, WorkspaceID: wsID, Action: ActionWorkspaceCreated,
		TargetType: TargetWorkspace, TargetID: wsID, RequestID: in.RequestID, After: struct {
			Name         string        `json:"name"`
			Goal         Goal          `json:"goal"`
			SelectedPlan string        `json:"selectedPlan"`
			Roles        []access.Role `json:"roles"`
		}{name, in.Goal, planID, out.Roles}})
	if err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	ws, err := st.WorkspaceGet(ctx, u.TenantID, wsID)
	if err != nil {
		return Onboarded{}, fault.Wrap(op, err)
	}
	out.Workspace = ws
	return out, nil
}
