package api

import (
	"context"
	"net/http"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
)

// OnboardingRequest is the first-run answer of a signed-in user.
type OnboardingRequest struct {
	// Action is create (a new workspace) or join (through an invitation code).
	Action string `json:"action" example:"create" enum:"create,join"`
	// Name names the new workspace (create).
	Name string `json:"name,omitempty" example:"Night Owl Records"`
	// Goal is what the person means to do (create): it shapes the first-run
	// experience and grants nothing.
	Goal string `json:"goal,omitempty" example:"creator" enum:"creator,label,developer,team"`
	// Plan is the selected plan's id from GET /api/v1/saas/plans (create);
	// absent means free.
	Plan string `json:"plan,omitempty" example:"free"`
	// Code is the invitation code from the invitation mail (join).
	Code string `json:"code,omitempty" example:"pc_REPLACE_WITH_YOUR_CODE"`
}

// NextStep is what a client does after onboarding, when anything.
type NextStep struct {
	// Type is checkout: buy the selected paid plan.
	Type string `json:"type" example:"checkout" enum:"checkout"`
	// Plan is the plan to buy.
	Plan string `json:"plan" example:"pro"`
}

// Onboarded is the workspace the user now acts in.
type Onboarded struct {
	// Workspace is the workspace created or joined.
	Workspace WorkspaceView `json:"workspace"`
	// Roles are the user's roles in it.
	Roles []string `json:"roles" example:"OWNER"`
	// Goal and SelectedPlan are the recorded answers; null for a join.
	Goal *string `json:"goal" example:"creator"`
	// SelectedPlan is the plan the user chose; null for a join.
	SelectedPlan *string `json:"selectedPlan" example:"pro"`
	// Plan is the plan the workspace is on now (free until checkout); null
	// for a join.
	Plan *string `json:"plan" example:"free"`
	// Next is the next step (checkout for a paid plan); null when none.
	Next *NextStep `json:"next"`
}

// AcceptInviteRequest redeems an invitation code.
type AcceptInviteRequest struct {
	// Code is the invitation code from the invitation mail.
	Code string `json:"code" example:"pc_REPLACE_WITH_YOUR_CODE"`
}

// Joined is the workspace joined through an invitation.
type Joined struct {
	// Workspace is the workspace joined.
	Workspace WorkspaceView `json:"workspace"`
	// Roles are the invited roles the user now holds.
	Roles []string `json:"roles" example:"CREATOR"`
}

func workspaceView(w access.Workspace) WorkspaceView {
	return WorkspaceView{ID: w.ID, TenantID: w.TenantID, Name: w.Name, State: w.State}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// onboardingRoutes are onboarding and invitation acceptance: routes of a
// signed-in user who may not belong to any workspace yet (Route.SignedIn).
// Both point the caller's session at the workspace they create or join:
// the session's next request acts there.
func onboardingRoutes(accounts *account.Service, plans *plan.Service) []Route {
	signedIn := func(r Route) Route {
		r.Tag, r.Auth, r.SignedIn, r.Private = transport.TagAccount, transport.AuthSession, true, true
		return r
	}
	ws := WorkspaceView{ID: "ws_01jd0000000000000000000000", TenantID: "ten_01jd0000000000000000000000", Name: "Night Owl Records", State: "active"}
	goal, pro, free := "creator", "pro", "free"
	return []Route{
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/onboarding", OperationID: "onboard", Idempotency: transport.IdempotencyOptional,
			Summary: "Create or join a workspace",
			Description: "The first-run step of a signed-in user. create makes a workspace in the user's organization with the user as OWNER " +
				"(and DEVELOPER), records the goal and the selected plan, and starts the workspace on the free plan (its entitlements and " +
				"monthly credits); a paid plan answers next: {type: checkout, plan} and the workspace stays on free until that plan is bought " +
				"(POST /api/v1/saas/checkout). " +
				"A user creates one workspace here: repeating the same answers returns it again (a retry recovers), other answers are " +
				"CONFLICT (details.reason already_onboarded). join redeems an invitation code, as POST /api/v1/auth/invite/accept. " +
				"Either way the session acts in that workspace from its next request.",
			Request: OnboardingRequest{Action: "create", Name: "Night Owl Records", Goal: "creator", Plan: "pro"},
			Response: Onboarded{Workspace: ws, Roles: []string{"DEVELOPER", "OWNER"}, Goal: &goal, SelectedPlan: &pro, Plan: &free,
				Next: &NextStep{Type: "checkout", Plan: "pro"}},
			Errors: []string{string(fault.Conflict), string(fault.WorkspaceAccessDenied)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in OnboardingRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				o, err := accounts.Onboard(ctx, c.Tx, c.Tx, plans, c.Principal, account.OnboardInput{Action: in.Action, Name: in.Name,
					Goal: account.Goal(in.Goal), Plan: in.Plan, Code: in.Code, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				out := Onboarded{Workspace: workspaceView(o.Workspace), Roles: roleNames(o.Roles), Goal: optional(string(o.Goal)),
					SelectedPlan: optional(o.SelectedPlan), Plan: optional(o.ActivePlan)}
				if o.Checkout != "" {
					out.Next = &NextStep{Type: "checkout", Plan: o.Checkout}
				}
				return out, nil
			}}),
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/invite/accept", OperationID: "acceptInvitation", Idempotency: transport.IdempotencyNone,
			Summary: "Accept an invitation",
			Description: "Redeems a single-use invitation code for the signed-in user, whose verified email must be the invited address " +
				"(sign up, verify and sign in first): the user joins the workspace with the invited roles, effective at once, and the " +
				"session acts in it from its next request. A person who belongs to no workspace yet joins the inviting organization. " +
				"A used, expired or unknown code is INVALID_INPUT (details.field code, details.reason used, expired or unknown); " +
				"another or an unverified address is ACCESS_DENIED (details.reason email_mismatch or email_unverified).",
			Request:  AcceptInviteRequest{Code: "pc_REPLACE_WITH_YOUR_CODE"},
			Response: Joined{Workspace: ws, Roles: []string{"CREATOR"}},
			Errors:   []string{string(fault.Conflict), string(fault.WorkspaceAccessDenied)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AcceptInviteRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				j, err := accounts.AcceptInvite(ctx, c.Tx, c.Principal, in.Code, c.RequestID)
				if err != nil {
					return nil, err
				}
				return Joined{Workspace: workspaceView(j.Workspace), Roles: roleNames(j.Roles)}, nil
			}}),
	}
}
