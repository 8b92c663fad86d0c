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
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// OfferPrefix starts a license offer's id.
const OfferPrefix = "lic_"

// Kind is how many licensees an offer admits.
type Kind string

// The kinds.
const (
	// KindNonExclusive offers may license the asset to any number of
	// licensees.
	KindNonExclusive Kind = "non_exclusive"
	// KindExclusive offers license it to one licensee (enforced by the
	// orders that issue licenses).
	KindExclusive Kind = "exclusive"
)

// Kinds lists the kinds.
func Kinds() []Kind { return []Kind{KindNonExclusive, KindExclusive} }

// MaxOfferName bounds an offer's name, in characters.
const MaxOfferName = 100

// hashPattern is a lower-case hex SHA-256.
var hashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Offer is a license offer: the terms (one rights policy version, quoted
// by id, version and content hash) under which an asset of the seller's
// workspace may be licensed. It is never edited: a change of terms is a
// new offer; its state moves only along Moves. A price is not part of it
// (a listing sets one).
type Offer struct {
	// ID is the offer's id (OfferPrefix).
	ID string
	// Scope is the seller's tenant, workspace and environment.
	Scope access.Scope
	// AssetID is the licensed asset, of Scope.
	AssetID string
	// Rights is the rights policy version the offer is made under.
	Rights policy.Ref
	// Name is what the offer is called ("Sync license"), 1 to
	// MaxOfferName characters.
	Name string
	// Kind is non-exclusive or exclusive.
	Kind Kind
	// State is where the offer stands (Moves).
	State State
	// Version counts the offer's writes, from 1.
	Version int64
	// CreatedByUserID is the user who made the offer.
	CreatedByUserID string
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt, UpdatedAt time.Time
}

// OfferRequest asks for a license offer.
type OfferRequest struct {
	// AssetID is the asset, of the caller's workspace and environment.
	AssetID string
	// Rights quotes the rights policy version: id, version and its
	// content hash (the terms hash).
	Rights policy.Ref
	// Name and Kind are the offer's.
	Name string
	Kind Kind
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// validate returns in normalized, or INVALID_INPUT naming the field.
func (in OfferRequest) validate() (OfferRequest, error) {
	const op = "marketplace.OfferLicense"
	in.Name = strings.TrimSpace(in.Name)
	n := utf8.RuneCountInString(in.Name)
	switch {
	case in.AssetID == "":
		return in, fault.Invalid(op, "assetId", "assetId is required.")
	case in.Rights.ID == "":
		return in, fault.Invalid(op, "policyId", "policyId is required.")
	case in.Rights.Version < 1:
		return in, fault.Invalid(op, "policyVersion", "policyVersion is an integer from 1.")
	case !hashPattern.MatchString(in.Rights.Hash):
		return in, fault.Invalid(op, "termsHash", "termsHash is the version's content hash: 64 lower-case hex digits.")
	case !utf8.ValidString(in.Name) || n == 0 || n > MaxOfferName || strings.ContainsFunc(in.Name, unicode.IsControl):
		return in, fault.Invalid(op, "name", "name is one line of 1 to 100 characters.").With("limit", MaxOfferName)
	case !oneOf(in.Kind, Kinds()):
		return in, fault.Invalid(op, "kind", "kind must be non_exclusive or exclusive.")
	}
	return in, nil
}

// OfferLicense makes an active license offer on an asset of p's
// workspace under a rights policy version of that workspace, with its
// outbox event license.offered and an audit record, in st's unit of work.
//
// Errors: INVALID_INPUT naming the field; NOT_FOUND (details.field
// "assetId") for an asset p's workspace and environment do not hold;
// ACCESS_DENIED when p's marketplace.create_listing grant does not reach
// the asset (a CREATOR offers its own assets only); NOT_FOUND
// (details.field "policyId" or "policyVersion") for a rights policy or
// version the workspace does not have; TERMS_MISMATCH (details.field
// "termsHash") when the terms hash is not that version's content hash.
func (s *Service) OfferLicense(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in OfferRequest) (Offer, error) {
	const op = "marketplace.OfferLicense"
	in, err := in.validate()
	if err != nil {
		return Offer{}, err
	}
	sc := p.Scope()
	as, err := st.AssetGet(ctx, asset.Scope{TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: string(sc.Environment)}, in.AssetID)
	if fault.Is(err, fault.NotFound) {
		return Offer{}, fault.E(op, fault.NotFound, "No such asset.").With("field", "assetId")
	}
	if err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	if p.UserID == "" || !a.Reaches(p, access.MarketplaceCreateListing, &access.Resource{OwnerUserID: as.CreatedBy.UserID, WorkspaceID: sc.WorkspaceID}) {
		return Offer{}, fault.E(op, fault.AccessDenied, "").With("permission", string(access.MarketplaceCreateListing))
	}
	rp, err := ResolveRights(ctx, st, sc, in.Rights)
	if err != nil {
		return Offer{}, err
	}
	now := st.Now()
	o := Offer{ID: st.NewID(OfferPrefix), Scope: sc, AssetID: as.ID, Rights: rp.Ref, Name: in.Name, Kind: in.Kind,
		State: StateActive, Version: 1, CreatedByUserID: p.UserID, CreatedAt: now, UpdatedAt: now}
	if err := st.LicenseOfferInsert(ctx, o); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, o, EventLicenseOffered); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionLicenseOffered, TargetType: TargetLicense, TargetID: o.ID,
		RequestID: in.RequestID, After: map[string]any{"assetId": o.AssetID, "rightsPolicy": o.Rights, "name": o.Name,
			"kind": o.Kind, "state": o.State}}); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	return o, nil
}

// WithdrawLicense withdraws offer id of p's workspace (active ->
// withdrawn), compare-and-setting its version, with the outbox event
// license.withdrawn and an audit record. Licenses already issued under it
// keep their terms. No route calls it yet: listings will.
//
// Errors: NOT_FOUND for an offer p's workspace and environment do not
// hold; ACCESS_DENIED when p's marketplace.create_listing grant does not
// reach it (a CREATOR withdraws its own offers); INVALID_STATE_TRANSITION
// for a withdrawn one; CONFLICT when a concurrent write won.
func (s *Service) WithdrawLicense(ctx context.Context, st Store, p *access.Principal, a *access.Authority, id, requestID string) (Offer, error) {
	const op = "marketplace.WithdrawLicense"
	o, err := st.LicenseOfferGet(ctx, p.Scope(), id)
	if err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	to, err := Transition(o.State, EventWithdraw)
	if err != nil {
		return Offer{}, err
	}
	if p.UserID == "" || !a.Reaches(p, access.MarketplaceCreateListing, &access.Resource{OwnerUserID: o.CreatedByUserID, WorkspaceID: o.Scope.WorkspaceID}) {
		return Offer{}, fault.E(op, fault.AccessDenied, "").With("permission", string(access.MarketplaceCreateListing))
	}
	from := o.State
	o.State, o.Version, o.UpdatedAt = to, o.Version+1, st.Now()
	if err := st.LicenseOfferSetState(ctx, o); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	if err := event(ctx, st, o, EventLicenseWithdrawn); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionLicenseWithdrawn, TargetType: TargetLicense, TargetID: o.ID,
		RequestID: requestID, Before: map[string]any{"state": from}, After: map[string]any{"state": o.State}}); err != nil {
		return Offer{}, fault.Wrap(op, err)
	}
	return o, nil
}

// LicenseResource returns offer id of p's workspace and environment as the
// resource the access evaluator's resource-scope step checks (its maker
// owns it); NOT_FOUND for any other offer.
func (s *Service) LicenseResource(ctx context.Context, st Store, p *access.Principal, id string) (*access.Resource, error) {
	o, err := st.LicenseOfferGet(ctx, p.Scope(), id)
	if err != nil {
		return nil, fault.Wrap("marketplace.LicenseResource", err)
	}
	return &access.Resource{OwnerUserID: o.CreatedByUserID, WorkspaceID: o.Scope.WorkspaceID}, nil
}

// License returns offer id of sc's workspace; NOT_FOUND otherwise. A
// listing reads the offer it lists through it.
func License(ctx context.Context, st Store, sc access.Scope, id string) (Offer, error) {
	o, err := st.LicenseOfferGet(ctx, sc, id)
	if err != nil {
		return Offer{}, fault.Wrap("marketplace.License", err)
	}
	return o, nil
}
