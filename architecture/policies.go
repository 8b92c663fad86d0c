package architecture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// Publisher says how a known policy's versions are published.
type Publisher string

// The ways a policy is published.
const (
	// PublishedByAPI policies are published through POST /api/v1/policies.
	PublishedByAPI Publisher = "api"
	// PublishedByConfiguration policies are published by the host from its
	// configuration on every start, which would supersede a version
	// published through the API; the route refuses them.
	PublishedByConfiguration Publisher = "configuration"
	// PublishedByOwnerRoute policies have their own publication route in
	// their domain (Kind.Route), whose validation needs the domain's state;
	// POST /api/v1/policies refuses them.
	PublishedByOwnerRoute Publisher = "owner_route"
)

// PolicyKind is one policy id the platform knows: who owns it, how it is
// published and with what authority, and the owning domain's validator.
type PolicyKind struct {
	// ID is the policy id, such as fees.marketplace.
	ID string
	// Owner is the package path, inside the module, of the domain whose
	// decisions apply the policy.
	Owner string
	// Publisher says how versions are published.
	Publisher Publisher
	// Route names the owner's publication route of a PublishedByOwnerRoute
	// policy.
	Route string
	// SuperAdmin requires the super_admin platform role to publish (the
	// route also asks for a recent sign-in). Every policy published
	// through the API needs it: they price or charge every workspace.
	SuperAdmin bool
	// ReadPermission is the permission reading the current version needs;
	// "" lets any member read it (what the platform charges is no secret
	// to those it charges).
	ReadPermission access.Permission
	// AuditAction is the audit action a publication records.
	AuditAction string
	// DecodeFunc is the owning domain's validator: it decodes content
	// strictly into the domain's type, validates it, and returns the value
	// to publish, so a version holds the domain's own encoding and the same
	// policy always hashes the same. Required for PublishedByAPI.
	DecodeFunc func(content json.RawMessage) (any, error)
}

// Policies is the catalogue of the policy ids the platform knows, built by
// the root from each owning domain's validator.
type Policies struct {
	kinds []PolicyKind
}

// NewPolicies returns the catalogue of kinds. It refuses an id that is
// malformed or listed twice, and an API-published kind without a
// validator, super_admin or audit action.
func NewPolicies(kinds []PolicyKind) (*Policies, error) {
	seen := map[string]bool{}
	for _, k := range kinds {
		if err := policy.ValidateID(k.ID); err != nil || seen[k.ID] {
			return nil, fmt.Errorf("architecture: policy %q is malformed or listed twice", k.ID)
		}
		seen[k.ID] = true
		switch k.Publisher {
		case PublishedByAPI:
			if k.DecodeFunc == nil || !k.SuperAdmin || k.AuditAction == "" {
				return nil, fmt.Errorf("architecture: policy %s is published through the API without a validator, super_admin or audit action", k.ID)
			}
		case PublishedByConfiguration:
		case PublishedByOwnerRoute:
			if k.Route == "" {
				return nil, fmt.Errorf("architecture: policy %s names no owner route", k.ID)
			}
		default:
			return nil, fmt.Errorf("architecture: policy %s has publisher %q", k.ID, k.Publisher)
		}
	}
	return &Policies{kinds: slices.Clone(kinds)}, nil
}

// Kinds returns the catalogue, in its order.
func (p *Policies) Kinds() []PolicyKind { return slices.Clone(p.kinds) }

// Kind returns the kind of policy id. INVALID_INPUT (field policyId) for a
// malformed id; NOT_FOUND for an id the platform does not know.
func (p *Policies) Kind(id string) (PolicyKind, error) {
	const op = "architecture.Kind"
	if err := policy.ValidateID(id); err != nil {
		return PolicyKind{}, fault.Wrap(op, err)
	}
	i := slices.IndexFunc(p.kinds, func(k PolicyKind) bool { return k.ID == id })
	if i < 0 {
		return PolicyKind{}, fault.E(op, fault.NotFound, "The platform knows no policy of this id.").With("policyId", id)
	}
	return p.kinds[i], nil
}

// PolicyStore is a publication's unit of work: the policy versions and the
// audit log.
type PolicyStore interface {
	policy.Store
	account.AuditWriter
}

// PublishInput is a publication request.
type PublishInput struct {
	// PolicyID is the policy to publish a version of.
	PolicyID string
	// Content is the policy document, as the owning domain encodes it.
	Content json.RawMessage
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Publish makes in.Content the current version of a known policy in the
// principal's environment (platform-wide), on the caller's unit of work,
// with an audit record when it creates a version. The content is validated
// by the owning domain's validator and published in the domain's encoding;
// content equal to the current version publishes nothing and returns it
// (created false).
//
// Errors: INVALID_INPUT (a malformed id, or content the owner refuses;
// details.field content), NOT_FOUND (an id the platform does not know),
// ACCESS_DENIED (the policy needs super_admin), CONFLICT (reason
// published_by_configuration or published_by_owner_route, with
// details.route naming the owner's route).
func (p *Policies) Publish(ctx context.Context, st PolicyStore, pr *access.Principal, a *access.Authority, in PublishInput) (policy.Version, bool, error) {
	const op = "architecture.Publish"
	k, err := p.Kind(in.PolicyID)
	if err != nil {
		return policy.Version{}, false, fault.Wrap(op, err)
	}
	switch k.Publisher {
	case PublishedByConfiguration:
		return policy.Version{}, false, fault.E(op, fault.Conflict, "This policy is published by the host's configuration.").
			With("reason", "published_by_configuration")
	case PublishedByOwnerRoute:
		return policy.Version{}, false, fault.E(op, fault.Conflict, "This policy is published through its own route.").
			With("reason", "published_by_owner_route").With("route", k.Route)
	}
	if k.SuperAdmin && (a == nil || !a.SuperAdmin) {
		return policy.Version{}, false, fault.E(op, fault.AccessDenied, "Publishing this policy needs the super_admin role.").
			With("policyId", k.ID)
	}
	content := bytes.TrimSpace(in.Content)
	if len(content) == 0 || content[0] != '{' {
		return policy.Version{}, false, fault.Invalid(op, "content", "The policy content must be a JSON object.")
	}
	v, err := k.DecodeFunc(content)
	if err != nil {
		if fe := (*fault.Error)(nil); errors.As(err, &fe) {
			return policy.Version{}, false, fault.Wrap(op, err)
		}
		return policy.Version{}, false, fault.Invalid(op, "content", "The policy content is refused by its owner: "+err.Error())
	}
	sc := policy.Scope{Environment: pr.Environment}
	prev, err := policy.Current(ctx, st, sc, k.ID)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return policy.Version{}, false, fault.Wrap(op, err)
	}
	ver, created, err := policy.Publish(ctx, st, sc, k.ID, v, pr.StableID())
	if err != nil {
		return policy.Version{}, false, fault.Wrap(op, err)
	}
	if created {
		var before any
		if prev.Version > 0 {
			before = prev.Ref()
		}
		if err := account.Audit(ctx, st, pr, account.AuditEntry{Action: k.AuditAction, RequestID: in.RequestID, TargetType: "policy",
			TargetID: k.ID, Before: before, After: struct {
				policy.Ref
				Content json.RawMessage `json:"content"`
			}{ver.Ref(), ver.Content}}); err != nil {
			return policy.Version{}, false, fault.Wrap(op, err)
		}
	}
	return ver, created, nil
}

// Current returns the current version of a known policy in the principal's
// environment. NOT_FOUND for an unknown id or one with no version yet
// (details.reason not_published); ACCESS_DENIED (details.permission) when
// the policy's read permission is not held.
func (p *Policies) Current(ctx context.Context, st policy.Store, pr *access.Principal, a *access.Authority, id string) (policy.Version, error) {
	const op = "architecture.Current"
	k, err := p.Kind(id)
	if err != nil {
		return policy.Version{}, fault.Wrap(op, err)
	}
	if k.ReadPermission != "" {
		if _, ok := a.Has(k.ReadPermission); !ok {
			return policy.Version{}, fault.E(op, fault.AccessDenied, "Reading this policy needs a permission the caller does not hold.").
				With("permission", string(k.ReadPermission))
		}
	}
	v, err := policy.Current(ctx, st, policy.Scope{Environment: pr.Environment}, k.ID)
	if fault.Is(err, fault.NotFound) {
		return policy.Version{}, fault.E(op, fault.NotFound, "No version of this policy is published in this environment.").
			With("policyId", k.ID).With("reason", "not_published")
	}
	if err != nil {
		return policy.Version{}, fault.Wrap(op, err)
	}
	return v, nil
}

// Strict decodes content into a T, refusing unknown fields and trailing
// data, then runs validate; it is how the root builds a kind's DecodeFunc
// from a domain's type and its Validate method.
func Strict[T any](validate func(T) error) func(json.RawMessage) (any, error) {
	return func(content json.RawMessage) (any, error) {
		var v T
		dec := json.NewDecoder(bytes.NewReader(content))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%v", err)
		}
		if dec.More() {
			return nil, fmt.Errorf("trailing data after the document")
		}
		if err := validate(v); err != nil {
			return nil, err
		}
		return v, nil
	}
}
