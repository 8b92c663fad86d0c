package marketplace

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// Allowance says whether a licensee may do something.
type Allowance string

// The allowances.
const (
	// Allowed: the licensee may.
	Allowed Allowance = "allowed"
	// Prohibited: the licensee may not.
	Prohibited Allowance = "prohibited"
)

// Allowances lists the allowances.
func Allowances() []Allowance { return []Allowance{Allowed, Prohibited} }

// Redistribution says how a licensee may pass the asset on.
type Redistribution string

// The redistribution rules.
const (
	// RedistributionProhibited: the asset is not passed on at all.
	RedistributionProhibited Redistribution = "prohibited"
	// RedistributionInDerivativeWorks: only as part of a work that adds to
	// it (a video with the track under it), never as the asset alone.
	RedistributionInDerivativeWorks Redistribution = "in_derivative_works"
	// RedistributionAllowed: also as the asset alone.
	RedistributionAllowed Redistribution = "allowed"
)

// Redistributions lists the redistribution rules.
func Redistributions() []Redistribution {
	return []Redistribution{RedistributionProhibited, RedistributionInDerivativeWorks, RedistributionAllowed}
}

// Attribution says whether a licensee must credit the creator.
type Attribution string

// The attribution rules.
const (
	// AttributionRequired: every use credits the creator (with
	// Rules.AttributionText when it is set).
	AttributionRequired Attribution = "required"
	// AttributionNotRequired: no credit is owed.
	AttributionNotRequired Attribution = "not_required"
)

// Attributions lists the attribution rules.
func Attributions() []Attribution { return []Attribution{AttributionRequired, AttributionNotRequired} }

// MaxAttributionText bounds Rules.AttributionText, in characters.
const MaxAttributionText = 200

// Rules are the content of a rights policy version: what a license under
// it lets the licensee do (spec, Rights and marketplace). Every field is
// required; the JSON form is the policy content whose canonical hash is
// the version's content hash (the terms hash a license offer quotes).
type Rules struct {
	// CommercialUse: may the asset be used in commercial work.
	CommercialUse Allowance `json:"commercialUse"`
	// Monetization: may the licensee earn from works that use the asset
	// (ads, streaming payouts). Allowed needs CommercialUse allowed.
	Monetization Allowance `json:"monetization"`
	// Redistribution: how the asset may be passed on.
	Redistribution Redistribution `json:"redistribution"`
	// Modification: may the asset be edited, cut or remixed.
	Modification Allowance `json:"modification"`
	// Attribution: must uses credit the creator.
	Attribution Attribution `json:"attribution"`
	// AttributionText is the credit line uses must show, one line of at
	// most MaxAttributionText characters; "" for the creator's name as the
	// platform shows it. Set only with AttributionRequired.
	AttributionText string `json:"attributionText"`
	// SourceResale: may the licensee sell or sublicense the asset itself
	// (the source file). Allowed needs Redistribution allowed.
	SourceResale Allowance `json:"sourceResale"`
}

// Validate returns r normalized (attribution text trimmed), or
// INVALID_INPUT naming the field ("rules.monetization") with
// details.reason for a rule that contradicts another.
func (r Rules) Validate() (Rules, error) {
	const op = "marketplace.Rules.Validate"
	bad := func(field, msg string) *fault.Error { return fault.Invalid(op, "rules."+field, msg) }
	switch {
	case !oneOf(r.CommercialUse, Allowances()):
		return r, bad("commercialUse", "commercialUse must be allowed or prohibited.")
	case !oneOf(r.Monetization, Allowances()):
		return r, bad("monetization", "monetization must be allowed or prohibited.")
	case !oneOf(r.Redistribution, Redistributions()):
		return r, bad("redistribution", "redistribution must be prohibited, in_derivative_works or allowed.")
	case !oneOf(r.Modification, Allowances()):
		return r, bad("modification", "modification must be allowed or prohibited.")
	case !oneOf(r.Attribution, Attributions()):
		return r, bad("attribution", "attribution must be required or not_required.")
	case !oneOf(r.SourceResale, Allowances()):
		return r, bad("sourceResale", "sourceResale must be allowed or prohibited.")
	case r.Monetization == Allowed && r.CommercialUse != Allowed:
		return r, bad("monetization", "Monetization needs commercial use allowed.").With("reason", "requires_commercial_use")
	case r.SourceResale == Allowed && r.Redistribution != RedistributionAllowed:
		return r, bad("sourceResale", "Reselling the source needs redistribution allowed.").With("reason", "requires_redistribution")
	}
	r.AttributionText = strings.TrimSpace(r.AttributionText)
	if !utf8.ValidString(r.AttributionText) || utf8.RuneCountInString(r.AttributionText) > MaxAttributionText ||
		strings.ContainsFunc(r.AttributionText, unicode.IsControl) {
		return r, bad("attributionText", "attributionText is one line of at most 200 characters.").With("limit", MaxAttributionText)
	}
	if r.AttributionText != "" && r.Attribution != AttributionRequired {
		return r, bad("attributionText", "attributionText is set only when attribution is required.").
			With("reason", "attribution_not_required")
	}
	return r, nil
}

func oneOf[T comparable](v T, set []T) bool {
	for _, x := range set {
		if x == v {
			return true
		}
	}
	return false
}

// rightsPrefix starts every rights policy id.
const rightsPrefix = "rights."

// MaxRightsName bounds a rights policy's name.
const MaxRightsName = 24

// namePattern is the form of a rights policy's name.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// RightsPolicyID returns the policy id of workspace's rights policy name:
// "rights.<workspace id>.<name>". Versions live in the workspace's tenant
// and environment (policy.Scope), so the id names one workspace's policy.
func RightsPolicyID(workspaceID, name string) string { return rightsPrefix + workspaceID + "." + name }

// rightsName returns the name in id when id is a rights policy id of
// workspace.
func rightsName(id, workspaceID string) (string, bool) {
	name, ok := strings.CutPrefix(id, rightsPrefix+workspaceID+".")
	return name, ok && namePattern.MatchString(name) && len(name) <= MaxRightsName
}

// RightsScope is the policy scope of the rights policies of sc's
// workspace: its tenant and environment (the workspace is in the id).
func RightsScope(sc access.Scope) policy.Scope {
	return policy.Scope{Environment: sc.Environment, TenantID: sc.TenantID}
}

// RightsPolicy is one immutable version of a workspace's rights policy.
type RightsPolicy struct {
	// Ref is the version's policy id, integer version and content hash.
	Ref policy.Ref
	// Scope is the workspace it belongs to.
	Scope access.Scope
	// Name is the policy's name within the workspace.
	Name string
	// Rules are the version's content.
	Rules Rules
	// CreatedAt is when the version was published; CreatedBy the user who
	// published it.
	CreatedAt time.Time
	CreatedBy string
}

// rightsPolicy decodes version v of sc's workspace.
func rightsPolicy(sc access.Scope, v policy.Version) (RightsPolicy, error) {
	name, _ := rightsName(v.ID, sc.WorkspaceID)
	rp := RightsPolicy{Ref: v.Ref(), Scope: sc, Name: name, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}
	if err := v.Decode(&rp.Rules); err != nil {
		return RightsPolicy{}, fault.Wrap("marketplace.rightsPolicy", err)
	}
	return rp, nil
}

// PublishRequest asks for a rights policy version.
type PublishRequest struct {
	// Name is the policy's name within the workspace: 1 to MaxRightsName
	// characters of a-z, 0-9 and _, starting with a letter.
	Name string
	// Rules are the content.
	Rules Rules
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// PublishRights makes in.Rules the current version of p's workspace's
// rights policy in.Name, in p's environment, through package policy: new
// content appends version N+1 (created true, with an audit record);
// content equal to the current version's publishes nothing and returns
// that version (created false), so a retry never makes a second version.
// Content equal to an older version is a new decision and appends a new
// version (policy.Publish). Earlier versions stay readable (RightsVersion).
//
// Errors: INVALID_INPUT naming the field (name, rules.*); ACCESS_DENIED
// when p's marketplace.create_listing grant does not reach a resource of
// its own; CONFLICT when concurrent publishers kept winning.
func (s *Service) PublishRights(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in PublishRequest) (RightsPolicy, bool, error) {
	const op = "marketplace.PublishRights"
	if len(in.Name) == 0 || len(in.Name) > MaxRightsName || !namePattern.MatchString(in.Name) {
		return RightsPolicy{}, false, fault.Invalid(op, "name", "name is 1 to 24 characters of a-z, 0-9 and _, starting with a letter.").
			With("limit", MaxRightsName)
	}
	rules, err := in.Rules.Validate()
	if err != nil {
		return RightsPolicy{}, false, err
	}
	if err := canSell(op, p, a); err != nil {
		return RightsPolicy{}, false, err
	}
	sc, id := p.Scope(), RightsPolicyID(p.WorkspaceID, in.Name)
	prev, err := policy.Current(ctx, st, RightsScope(sc), id)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return RightsPolicy{}, false, fault.Wrap(op, err)
	}
	v, created, err := policy.Publish(ctx, st, RightsScope(sc), id, rules, p.UserID)
	if err != nil {
		return RightsPolicy{}, false, fault.Wrap(op, err)
	}
	rp, err := rightsPolicy(sc, v)
	if err != nil {
		return RightsPolicy{}, false, err
	}
	if created {
		var before any
		if prev.Version > 0 {
			before = prev.Ref()
		}
		if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionRightsPublished, TargetType: TargetRightsPolicy,
			TargetID: id, RequestID: in.RequestID, Before: before, After: struct {
				policy.Ref
				Rules Rules `json:"rules"`
			}{v.Ref(), rp.Rules}}); err != nil {
			return RightsPolicy{}, false, fault.Wrap(op, err)
		}
	}
	return rp, created, nil
}

// RightsVersion returns version of rights policy id of sc's workspace;
// every version stays readable. NOT_FOUND (details.field "policyId") for
// an id that is not a rights policy of that workspace or has no version,
// (details.field "policyVersion") for a version it does not have.
func RightsVersion(ctx context.Context, st policy.Store, sc access.Scope, id string, version int) (RightsPolicy, error) {
	const op = "marketplace.RightsVersion"
	notFound := func(field string) error {
		return fault.E(op, fault.NotFound, "No such rights policy version.").With("field", field)
	}
	if _, ok := rightsName(id, sc.WorkspaceID); !ok {
		return RightsPolicy{}, notFound("policyId")
	}
	if version < 1 {
		return RightsPolicy{}, fault.Invalid(op, "policyVersion", "Policy versions start at 1.")
	}
	v, err := policy.Get(ctx, st, RightsScope(sc), id, version)
	if fault.Is(err, fault.NotFound) {
		if _, err := policy.Current(ctx, st, RightsScope(sc), id); fault.Is(err, fault.NotFound) {
			return RightsPolicy{}, notFound("policyId")
		}
		return RightsPolicy{}, notFound("policyVersion")
	}
	if err != nil {
		return RightsPolicy{}, fault.Wrap(op, err)
	}
	return rightsPolicy(sc, v)
}

// ResolveRights returns the version ref names in sc's workspace and checks
// that its content hash is ref.Hash: what a license offer, a listing or an
// order snapshot quotes is exactly the content the caller saw. Errors as
// RightsVersion's, and TERMS_MISMATCH (details.field "termsHash",
// details.policyHash the version's) when the hashes differ.
func ResolveRights(ctx context.Context, st policy.Store, sc access.Scope, ref policy.Ref) (RightsPolicy, error) {
	rp, err := RightsVersion(ctx, st, sc, ref.ID, ref.Version)
	if err != nil {
		return RightsPolicy{}, err
	}
	if rp.Ref.Hash != ref.Hash {
		return RightsPolicy{}, fault.E("marketplace.ResolveRights", fault.TermsMismatch,
			"The terms hash differs from the rights policy version's content hash.").
			With("field", "termsHash").With("policyHash", rp.Ref.Hash)
	}
	return rp, nil
}

// canSell refuses p unless its marketplace.create_listing grant reaches a
// resource of its own in its workspace (OWNER and ADMIN hold it
// workspace-wide, CREATOR on its own; VIEWER, MEMBER, MODERATOR, FINANCE
// and DEVELOPER not at all).
func canSell(op string, p *access.Principal, a *access.Authority) error {
	if p.UserID == "" || !a.Reaches(p, access.MarketplaceCreateListing, &access.Resource{OwnerUserID: p.UserID, WorkspaceID: p.WorkspaceID}) {
		return fault.E(op, fault.AccessDenied, "").With("permission", string(access.MarketplaceCreateListing))
	}
	return nil
}
