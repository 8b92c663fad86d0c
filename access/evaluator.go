package access

import (
	"errors"
	"slices"

	"github.com/creatormusic/platform/fault"
)

// Input is one access question: who asks (Principal, Authority), for which
// workspace, under which route policy, on which resource.
//
// For API-key principals, Authority is the authority of the key's creator
// in the key's workspace, loaded now: a key's authority is its scopes
// intersected with what its creator holds at the time of the request, so it
// never exceeds what the creator could grant when the key was made (checked
// by ValidateScopes at creation) nor what the creator holds today.
type Input struct {
	// Principal is the authenticated caller; nil means unauthenticated.
	Principal *Principal
	// Authority is the principal's authority snapshot (for keys, the
	// creator's); nil when none was loaded, which fails the workspace step.
	Authority *Authority
	// RequestedWorkspaceID is a workspace the caller names (path or query);
	// "" means the principal's own.
	RequestedWorkspaceID string

	// Route policy. At least one of Permission, Scope, RequiredRoles,
	// RequireSuperAdmin or AnyMember must be set, or the route-policy step
	// fails closed.

	// Permission is the permission the route requires.
	Permission Permission
	// RequiredRoles, when set, requires one of these workspace roles
	// (DEVELOPER for the developer portal).
	RequiredRoles []Role
	// Scope is the API key scope that admits a key to the route.
	Scope string
	// RequireSuperAdmin requires the super_admin platform role, in addition
	// to Permission when both are set. super_admin grants no permission by
	// itself: only routes that ask for it admit it.
	RequireSuperAdmin bool
	// AnyMember admits every active member of the workspace; it is the
	// policy of routes such as the auth context that need no permission.
	AnyMember bool
	// ExtraScopes are scopes this request needs beyond Scope, because of
	// what it asks for (providers:select for a generation that chooses its
	// providers): an API key must hold each; any principal's authority must
	// hold every permission each stands for. The permission step checks
	// them.
	ExtraScopes []string
	// Feature is a feature flag the route needs on.
	Feature string
	// Entitlement is an entitlement the workspace needs.
	Entitlement string
	// Offers, when set, tells the entitlement step what a subscription
	// would grant, so that a missing entitlement is reported as
	// SUBSCRIPTION_REQUIRED to a workspace without a paid plan that a paid
	// plan would give it, and as ENTITLEMENT_REQUIRED otherwise.
	Offers Offers
	// Resource is the resource acted on, for the resource-scope step.
	Resource *Resource
	// ResourceFunc, when Resource is nil, loads the resource acted on. The
	// resource-scope step calls it once, only when every earlier step
	// passed; its error (NOT_FOUND for a resource the caller cannot see) is
	// reported as is.
	ResourceFunc func() (*Resource, error)
	// TransitionFunc checks the domain's workflow transition; its error
	// (INVALID_STATE_TRANSITION) is reported as is, whatever the caller's role.
	TransitionFunc func() error
	// VerifyFunc checks extra verification or approval (fresh
	// authentication, a second approver); its error is reported as is.
	VerifyFunc func() error
}

// Step names, in evaluation order (spec, Authentication 5).
const (
	StepAuthenticated = "authenticated"
	StepWorkspace     = "workspace"
	StepMembership    = "membership"
	StepRoutePolicy   = "route_policy"
	StepFeature       = "feature"
	StepEntitlement   = "entitlement"
	StepPermission    = "permission"
	StepResourceScope = "resource_scope"
	StepWorkflow      = "workflow"
	StepVerification  = "verification"
	StepAllow         = "allow"
)

// Step is one named step of the evaluation. CheckFunc returns nil when the step
// passes.
type Step struct {
	Name      string
	CheckFunc func(*Input) *fault.Error
}

// Steps returns the eleven steps in the order the spec runs them.
func Steps() []Step {
	return []Step{
		{StepAuthenticated, checkAuthenticated},
		{StepWorkspace, checkWorkspace},
		{StepMembership, checkMembership},
		{StepRoutePolicy, checkRoutePolicy},
		{StepFeature, checkFeature},
		{StepEntitlement, checkEntitlement},
		{StepPermission, checkPermission},
		{StepResourceScope, checkResourceScope},
		{StepWorkflow, checkWorkflow},
		{StepVerification, checkVerification},
		{StepAllow, func(*Input) *fault.Error { return nil }},
	}
}

// Decision is the outcome of Evaluate: allowed, or the step that failed and
// its error.
type Decision struct {
	Allowed bool
	// Step is the deciding step: StepAllow when allowed.
	Step string
	Err  *fault.Error
}

// upgradeStep reports a step whose failure could send a client to an
// upgrade surface.
func upgradeStep(name string) bool { return name == StepFeature || name == StepEntitlement }

// authzStep reports a step whose failure outranks an upgrade step's (the
// tie rule).
func authzStep(name string) bool { return name == StepPermission || name == StepResourceScope }

// Evaluate runs the steps in order and reports the first failure, with one
// tie rule: when a feature or entitlement step fails, the permission and
// resource-scope steps still run, and if one of them fails too it is
// reported, as ACCESS_DENIED, instead (nobody is sent to an upgrade that
// would not help; spec, Authentication 7 and Errors 4). An explicit deny of
// the route's permission fails the permission step, whatever the roles.
func Evaluate(in *Input) Decision {
	const op = "access.Evaluate"
	steps := Steps()
	for i, s := range steps {
		err := s.CheckFunc(in)
		if err == nil {
			continue
		}
		if upgradeStep(s.Name) {
			for _, later := range steps[i+1:] {
				if !authzStep(later.Name) {
					continue
				}
				if aerr := later.CheckFunc(in); aerr != nil {
					return Decision{Step: later.Name, Err: denied(op, aerr)}
				}
			}
		}
		return Decision{Step: s.Name, Err: err}
	}
	return Decision{Allowed: true, Step: StepAllow}
}

// denied returns err as ACCESS_DENIED; a resource the caller cannot see
// stays NOT_FOUND, which leaks nothing.
func denied(op string, err *fault.Error) *fault.Error {
	if err.Code == fault.AccessDenied || err.Code == fault.NotFound {
		return err
	}
	return &fault.Error{Op: op, Code: fault.AccessDenied, Details: err.Details, Err: err}
}

// isInternalCall reports an API key with ScopeInternal calling a route that
// requires InternalEvents. Such keys are issued by the host's operator and
// carry no membership: they skip the workspace and membership steps.
func isInternalCall(in *Input) bool {
	p := in.Principal
	return p != nil && p.Kind == CredentialAPIKey && in.Permission == InternalEvents && p.HasScope(ScopeInternal)
}

func checkAuthenticated(in *Input) *fault.Error {
	const op = "access.authenticated"
	p := in.Principal
	if p == nil {
		return fault.E(op, fault.Unauthenticated, "")
	}
	switch p.Kind {
	case CredentialAPIKey:
		if p.KeyID == "" {
			return fault.E(op, fault.Unauthenticated, "")
		}
	case CredentialSession, CredentialAccessToken:
		if p.UserID == "" {
			return fault.E(op, fault.Unauthenticated, "")
		}
	default:
		return fault.E(op, fault.Unauthenticated, "")
	}
	return nil
}

func checkWorkspace(in *Input) *fault.Error {
	const op = "access.workspace"
	p, a := in.Principal, in.Authority
	if p == nil {
		return fault.E(op, fault.Unauthenticated, "")
	}
	if in.RequestedWorkspaceID != "" && in.RequestedWorkspaceID != p.WorkspaceID {
		return fault.E(op, fault.WorkspaceAccessDenied, "")
	}
	if isInternalCall(in) {
		return nil
	}
	if a == nil || a.TenantID != p.TenantID || a.WorkspaceID != p.WorkspaceID || a.UserID != p.UserID {
		return fault.E(op, fault.WorkspaceAccessDenied, "")
	}
	if a.WorkspaceState != WorkspaceActive {
		return fault.E(op, fault.WorkspaceAccessDenied, "")
	}
	return nil
}

func checkMembership(in *Input) *fault.Error {
	if isInternalCall(in) {
		return nil
	}
	if in.Authority == nil || in.Authority.MembershipStatus != MembershipActive {
		return fault.E("access.membership", fault.WorkspaceAccessDenied, "")
	}
	return nil
}

func checkRoutePolicy(in *Input) *fault.Error {
	const op = "access.route_policy"
	if in.Permission == "" && in.Scope == "" && len(in.RequiredRoles) == 0 && !in.RequireSuperAdmin && !in.AnyMember {
		return fault.E(op, fault.AccessDenied, "")
	}
	if in.Permission != "" && !in.Permission.Valid() {
		return fault.E(op, fault.AccessDenied, "")
	}
	if in.Scope != "" {
		if _, ok := ScopePermissions(in.Scope); !ok {
			return fault.E(op, fault.AccessDenied, "")
		}
	}
	for _, r := range in.RequiredRoles {
		if !slices.Contains(GatingRoles(), r) {
			return fault.E(op, fault.AccessDenied, "")
		}
	}
	return nil
}

func checkFeature(in *Input) *fault.Error {
	if in.Feature != "" && !in.Authority.FlagEnabled(in.Feature) {
		return fault.E("access.feature", fault.FeatureDisabled, "").With("feature", in.Feature)
	}
	return nil
}

// Offers is what the plan catalog tells the entitlement step.
type Offers interface {
	// Paid reports whether planID is a paid plan ("" is none).
	Paid(planID string) bool
	// Granting returns the paid plans that grant entitlement, in catalog
	// order; none when no plan does.
	Granting(entitlement string) []string
}

// checkEntitlement reports a missing entitlement: SUBSCRIPTION_REQUIRED when
// the workspace holds no paid plan in the snapshot's environment and a paid
// plan grants it (subscribing helps), ENTITLEMENT_REQUIRED otherwise (the
// plan it pays for lacks it, or no plan grants it). details.entitlement
// names it and details.plans, when any, the paid plans that grant it.
func checkEntitlement(in *Input) *fault.Error {
	const op = "access.entitlement"
	e := in.Entitlement
	if e == "" || in.Authority.HasEntitlement(e) {
		return nil
	}
	var plans []string
	if in.Offers != nil {
		plans = in.Offers.Granting(e)
	}
	code := fault.EntitlementRequired
	if len(plans) > 0 && in.Authority != nil && !in.Offers.Paid(in.Authority.Plan) {
		code = fault.SubscriptionRequired
	}
	err := fault.E(op, code, "").With("entitlement", e)
	if len(plans) > 0 {
		err = err.With("plans", plans)
	}
	return err
}

// checkPermission checks, in this order: the explicit deny, the required
// roles, super_admin, the key's scope, then the permission. For API keys
// the route's Scope must be among the key's scopes (or, on a route without
// one, some scope of the key must stand for the permission), and the
// creator's current authority must still hold the permission and roles.
func checkPermission(in *Input) *fault.Error {
	const op = "access.permission"
	deny := func() *fault.Error { return fault.E(op, fault.AccessDenied, "") }
	p, a := in.Principal, in.Authority
	if isInternalCall(in) {
		return nil
	}
	if p == nil || a == nil {
		return deny()
	}
	if in.Permission != "" && a.Denied(in.Permission) {
		return deny().With("permission", string(in.Permission))
	}
	if len(in.RequiredRoles) > 0 && !slices.ContainsFunc(in.RequiredRoles, a.HasRole) {
		return deny()
	}
	if in.RequireSuperAdmin && !a.SuperAdmin {
		return deny()
	}
	if p.Kind == CredentialAPIKey {
		if in.Scope != "" && !p.HasScope(in.Scope) {
			return deny().With("scope", in.Scope)
		}
		if in.Scope == "" && in.Permission != "" && !keyAllows(p.Scopes, in.Permission) {
			return deny().With("permission", string(in.Permission))
		}
	}
	if in.Permission != "" {
		if _, ok := a.Has(in.Permission); !ok {
			return deny().With("permission", string(in.Permission))
		}
	}
	for _, sc := range in.ExtraScopes {
		if p.Kind == CredentialAPIKey && !p.HasScope(sc) {
			return deny().With("scope", sc)
		}
		ps, ok := ScopePermissions(sc)
		if !ok {
			return deny().With("scope", sc)
		}
		for _, perm := range ps {
			if _, ok := a.Has(perm); !ok {
				return deny().With("scope", sc).With("permission", string(perm))
			}
		}
	}
	return nil
}

func checkResourceScope(in *Input) *fault.Error {
	if in.Permission == "" || isInternalCall(in) {
		return nil
	}
	if in.Resource == nil && in.ResourceFunc != nil {
		r, err := in.ResourceFunc()
		if err != nil {
			return asFault("access.resource_scope", err)
		}
		// Loaded once: the tie rule may run this step again.
		in.Resource, in.ResourceFunc = r, nil
	}
	if in.Resource == nil {
		return nil
	}
	if in.Authority == nil || !in.Authority.reaches(in.Permission, in.Resource) {
		return fault.E("access.resource_scope", fault.AccessDenied, "")
	}
	return nil
}

func checkWorkflow(in *Input) *fault.Error {
	if in.TransitionFunc == nil {
		return nil
	}
	return asFault("access.workflow", in.TransitionFunc())
}

func checkVerification(in *Input) *fault.Error {
	if in.VerifyFunc == nil {
		return nil
	}
	return asFault("access.verification", in.VerifyFunc())
}

// asFault returns err as a *fault.Error: itself when it is one, otherwise
// wrapped (and so INTERNAL).
func asFault(op string, err error) *fault.Error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Code != "" {
		return fe
	}
	return &fault.Error{Op: op, Code: fault.CodeOf(err), Err: err}
}
