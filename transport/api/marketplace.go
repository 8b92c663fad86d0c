package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/transport"
)

// RightsRules are what a license under a rights policy lets the licensee
// do. The policy's content hash is the SHA-256 of this object's canonical
// JSON (keys sorted, no insignificant white space).
type RightsRules struct {
	// CommercialUse says whether the asset may be used in commercial work.
	CommercialUse string `json:"commercialUse" example:"allowed" enum:"allowed,prohibited"`
	// Monetization says whether the licensee may earn from works that use the asset (ads, streaming payouts); allowed needs commercialUse allowed.
	Monetization string `json:"monetization" example:"allowed" enum:"allowed,prohibited"`
	// Redistribution says how the asset may be passed on: not at all, only inside a work that adds to it, or also alone.
	Redistribution string `json:"redistribution" example:"in_derivative_works" enum:"prohibited,in_derivative_works,allowed"`
	// Modification says whether the asset may be edited, cut or remixed.
	Modification string `json:"modification" example:"allowed" enum:"allowed,prohibited"`
	// Attribution says whether every use must credit the creator.
	Attribution string `json:"attribution" example:"required" enum:"required,not_required"`
	// AttributionText is the credit line uses must show: one line of at most 200 characters, set only when attribution is required; empty for the creator's name as the platform shows it.
	AttributionText string `json:"attributionText" example:"Music by Night Drive Studio"`
	// SourceResale says whether the licensee may sell or sublicense the asset itself (the source file); allowed needs redistribution allowed.
	SourceResale string `json:"sourceResale" example:"prohibited" enum:"allowed,prohibited"`
}

// RightsPolicyRequest is the body of POST /api/v1/rights/policies.
type RightsPolicyRequest struct {
	// Name is the policy's name within the workspace: 1 to 24 characters of a-z, 0-9 and _, starting with a letter.
	Name string `json:"name" example:"standard"`
	// Rules are the version's content; every field is required.
	Rules RightsRules `json:"rules"`
}

// RightsPolicyView is one immutable version of a workspace's rights policy.
type RightsPolicyView struct {
	// Object is always "rights_policy".
	Object string `json:"object" example:"rights_policy"`
	// PolicyID is the policy's id: rights.<workspace id>.<name>.
	PolicyID string `json:"policyId" example:"rights.ws_01jd0000000000000000000000.standard"`
	// Name is the policy's name within the workspace.
	Name string `json:"name" example:"standard"`
	// Version is the version's integer number, from 1.
	Version int `json:"version" example:"1"`
	// ContentHash is the hex SHA-256 of the canonical JSON of rules: the terms hash a license offer quotes.
	ContentHash string `json:"contentHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Rules are the version's content.
	Rules RightsRules `json:"rules"`
	// WorkspaceID is the workspace the policy belongs to.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the policy belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// CreatedByUserID is the user who published the version.
	CreatedByUserID string `json:"createdByUserId" example:"usr_01jd0000000000000000000000"`
	// CreatedAt is when the version was published.
	CreatedAt time.Time `json:"createdAt"`
}

// LicenseOfferRequest is the body of POST /api/v1/licenses.
type LicenseOfferRequest struct {
	// AssetID is the licensed asset, of the caller's workspace and environment.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// PolicyID is the rights policy the offer is made under, of the caller's workspace.
	PolicyID string `json:"policyId" example:"rights.ws_01jd0000000000000000000000.standard"`
	// PolicyVersion is the version of that policy, from 1; any version that exists, not only the current one.
	PolicyVersion int `json:"policyVersion" example:"1"`
	// TermsHash is that version's content hash, quoted so that the offer is made on exactly the terms the caller read.
	TermsHash string `json:"termsHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Name is what the offer is called: one line of 1 to 100 characters.
	Name string `json:"name" example:"Sync license"`
	// Kind says whether the asset is licensed to any number of licensees or to one.
	Kind string `json:"kind" example:"non_exclusive" enum:"non_exclusive,exclusive"`
}

// LicenseOfferView is a license offer.
type LicenseOfferView struct {
	// ID is the offer's id.
	ID string `json:"id" example:"lic_01jd0000000000000000000000"`
	// Object is always "license_offer".
	Object string `json:"object" example:"license_offer"`
	// AssetID is the licensed asset.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// PolicyID is the rights policy the offer is made under.
	PolicyID string `json:"policyId" example:"rights.ws_01jd0000000000000000000000.standard"`
	// PolicyVersion is the version of that policy.
	PolicyVersion int `json:"policyVersion" example:"1"`
	// TermsHash is the content hash of that version.
	TermsHash string `json:"termsHash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Name is what the offer is called.
	Name string `json:"name" example:"Sync license"`
	// Kind says whether the asset is licensed to any number of licensees or to one.
	Kind string `json:"kind" example:"non_exclusive" enum:"non_exclusive,exclusive"`
	// State is active, or withdrawn once the seller withdraws it (terminal).
	State string `json:"state" example:"active" enum:"active,withdrawn"`
	// Version counts the offer's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// WorkspaceID is the seller's workspace.
	WorkspaceID string `json:"workspaceId" example:"ws_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the offer belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// CreatedByUserID is the user who made the offer.
	CreatedByUserID string `json:"createdByUserId" example:"usr_01jd0000000000000000000000"`
	// CreatedAt is when the offer was made.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when its state last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ProvenanceParentView is an asset another asset was computed from.
type ProvenanceParentView struct {
	// AssetID is the parent asset's id.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000001"`
	// SHA256 is the parent's content hash (a source hash of the child); null when unknown.
	SHA256 *string `json:"sha256" example:"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"`
}

// AssetProvenanceView is where an asset's bytes came from.
type AssetProvenanceView struct {
	// Object is always "asset_provenance".
	Object string `json:"object" example:"asset_provenance"`
	// AssetID is the asset the record describes.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Environment is the asset's environment (test or live).
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Origin says how the bytes came to be: uploaded by a client, generated by a music provider, remixed from other assets, or derived from them by the sound engine.
	Origin string `json:"origin" example:"derived" enum:"uploaded,generated,remixed,derived"`
	// CreatorUserID is the user who made the asset, or on whose behalf an API key or operation did; null when unknown.
	CreatorUserID *string `json:"creatorUserId" example:"usr_01jd0000000000000000000000"`
	// Provider is the music provider that generated the audio; null for other origins and when unknown.
	Provider *string `json:"provider" example:"MUSIC_PROVIDER_A"`
	// Model is the platform model id the generation asked for; null for other origins and when unknown.
	Model *string `json:"model" example:"v5"`
	// OperationID is the generation or sound operation that made the asset; null for uploads and when unknown.
	OperationID *string `json:"operationId" example:"snd_01jd0000000000000000000000"`
	// Parents are the assets the bytes were computed from, in order, with their content hashes (the source hashes); empty when none.
	Parents []ProvenanceParentView `json:"parents"`
	// OutputSHA256 is the asset's own content hash (the output hash).
	OutputSHA256 string `json:"outputSha256" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Basis is creation for a record written when the asset was made, backfill for one rebuilt from older records (whose unknown parts are null).
	Basis string `json:"basis" example:"creation" enum:"creation,backfill"`
	// RecordedAt is when a creation record was written (the asset's creation); null for a backfilled one.
	RecordedAt *time.Time `json:"recordedAt"`
}

func rightsRulesView(r marketplace.Rules) RightsRules {
	return RightsRules{CommercialUse: string(r.CommercialUse), Monetization: string(r.Monetization),
		Redistribution: string(r.Redistribution), Modification: string(r.Modification), Attribution: string(r.Attribution),
		AttributionText: r.AttributionText, SourceResale: string(r.SourceResale)}
}

func (r RightsRules) rules() marketplace.Rules {
	return marketplace.Rules{CommercialUse: marketplace.Allowance(r.CommercialUse), Monetization: marketplace.Allowance(r.Monetization),
		Redistribution: marketplace.Redistribution(r.Redistribution), Modification: marketplace.Allowance(r.Modification),
		Attribution: marketplace.Attribution(r.Attribution), AttributionText: r.AttributionText,
		SourceResale: marketplace.Allowance(r.SourceResale)}
}

func rightsPolicyView(p marketplace.RightsPolicy) RightsPolicyView {
	return RightsPolicyView{Object: "rights_policy", PolicyID: p.Ref.ID, Name: p.Name, Version: p.Ref.Version, ContentHash: p.Ref.Hash,
		Rules: rightsRulesView(p.Rules), WorkspaceID: p.Scope.WorkspaceID, Environment: string(p.Scope.Environment),
		CreatedByUserID: p.CreatedBy, CreatedAt: p.CreatedAt}
}

func licenseOfferView(o marketplace.Offer) LicenseOfferView {
	return LicenseOfferView{ID: o.ID, Object: "license_offer", AssetID: o.AssetID, PolicyID: o.Rights.ID, PolicyVersion: o.Rights.Version,
		TermsHash: o.Rights.Hash, Name: o.Name, Kind: string(o.Kind), State: string(o.State), Version: o.Version,
		WorkspaceID: o.Scope.WorkspaceID, Environment: string(o.Scope.Environment), CreatedByUserID: o.CreatedByUserID,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
}

func provenanceView(p asset.Provenance) AssetProvenanceView {
	v := AssetProvenanceView{Object: "asset_provenance", AssetID: p.AssetID, Environment: p.Scope.Environment, Origin: string(p.Origin),
		CreatorUserID: optional(p.CreatorUserID), Provider: optional(p.Provider), Model: optional(p.Model),
		OperationID: optional(p.OperationID), Parents: []ProvenanceParentView{}, OutputSHA256: p.OutputSHA256, Basis: string(p.Basis)}
	for _, parent := range p.Parents {
		v.Parents = append(v.Parents, ProvenanceParentView{AssetID: parent.AssetID, SHA256: optional(parent.SHA256)})
	}
	if !p.RecordedAt.IsZero() {
		t := p.RecordedAt
		v.RecordedAt = &t
	}
	return v
}

func exampleRules() RightsRules {
	return RightsRules{CommercialUse: "allowed", Monetization: "allowed", Redistribution: "in_derivative_works", Modification: "allowed",
		Attribution: "required", AttributionText: "Music by Night Drive Studio", SourceResale: "prohibited"}
}

func exampleProvenance() AssetProvenanceView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return AssetProvenanceView{Object: "asset_provenance", AssetID: "ast_01jd0000000000000000000000", Environment: "test",
		Origin: "derived", CreatorUserID: optional("usr_01jd0000000000000000000000"), OperationID: optional("snd_01jd0000000000000000000000"),
		Parents: []ProvenanceParentView{{AssetID: "ast_01jd0000000000000000000001",
			SHA256: optional("2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae")}},
		OutputSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Basis: "creation", RecordedAt: &t}
}

// marketplaceRoutes are the rights routes of the marketplace (spec, Rights
// and marketplace): publishing a rights policy version, offering a license
// and reading an asset's provenance. The two mutations need a signed-in
// session holding marketplace.create_listing, the workspace entitlement
// marketplace.sell and the feature flag marketplace, all declared here so
// the gateway evaluates them in the spec's order; they take an optional
// Idempotency-Key. The provenance read is an asset read (project.read,
// API key scope read).
func marketplaceRoutes(svc *marketplace.Service) []Route {
	if svc == nil {
		return nil
	}
	sell := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagMarketplace, transport.AuthSession, true
		r.Permission, r.Idempotency = access.MarketplaceCreateListing, transport.IdempotencyOptional
		r.Policy.Feature, r.Policy.Entitlement = marketplace.FeatureMarketplace, marketplace.EntitlementSell
		return r
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hash := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	exPolicy := RightsPolicyView{Object: "rights_policy", PolicyID: "rights.ws_01jd0000000000000000000000.standard", Name: "standard",
		Version: 1, ContentHash: hash, Rules: exampleRules(), WorkspaceID: "ws_01jd0000000000000000000000", Environment: "test",
		CreatedByUserID: "usr_01jd0000000000000000000000", CreatedAt: t}
	exOffer := LicenseOfferView{ID: "lic_01jd0000000000000000000000", Object: "license_offer", AssetID: "ast_01jd0000000000000000000000",
		PolicyID: exPolicy.PolicyID, PolicyVersion: 1, TermsHash: hash, Name: "Sync license", Kind: "non_exclusive", State: "active",
		Version: 1, WorkspaceID: exPolicy.WorkspaceID, Environment: "test", CreatedByUserID: exPolicy.CreatedByUserID, CreatedAt: t, UpdatedAt: t}
	return []Route{
		sell(Route{Method: http.MethodPost, Pattern: "/api/v1/rights/policies", OperationID: "publishRightsPolicy", Status: http.StatusCreated,
			Summary: "Publish a rights policy version",
			Description: "Publishes the rules of the caller's workspace's rights policy `name` as an immutable policy version in the " +
				"caller's environment: policy id `rights.<workspace id>.<name>`, integer version from 1, and contentHash, the hex " +
				"SHA-256 of the canonical JSON of rules (keys sorted, no insignificant white space), so the same rules hash the same " +
				"however they are spelled. Rules other than the current version's make version N+1 (201), a revert to an older " +
				"version's included; rules equal to the current version's publish nothing and answer that version (200). Earlier " +
				"versions never change, and a license offer may quote any of them. Every rule is required: commercialUse, " +
				"monetization, modification and sourceResale are allowed or prohibited; redistribution prohibited, " +
				"in_derivative_works or allowed; attribution required or not_required; attributionText one line of at most 200 " +
				"characters. An unknown field or value, monetization allowed without commercial use (details.reason " +
				"requires_commercial_use), sourceResale allowed without redistribution allowed (requires_redistribution), or " +
				"attributionText without required attribution (attribution_not_required) is 400 INVALID_INPUT naming the field. " +
				"Needs marketplace.create_listing reaching a resource of the caller's own (OWNER, ADMIN, CREATOR): without it 403 " +
				"ACCESS_DENIED whatever the plan; with it, a workspace without marketplace.sell is 403 ENTITLEMENT_REQUIRED " +
				"(SUBSCRIPTION_REQUIRED without a paid plan). API keys hold no scope for it. A new version writes an audit record.",
			Request:  RightsPolicyRequest{Name: "standard", Rules: exampleRules()},
			Response: exPolicy, ExistingStatus: http.StatusOK,
			ExistingText: "OK: the rules equal the current version's; nothing is published and that version is answered.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in RightsPolicyRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				p, created, err := svc.PublishRights(ctx, c.Tx, c.Principal, c.Authority,
					marketplace.PublishRequest{Name: in.Name, Rules: in.Rules.rules(), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return rightsPolicyView(p), nil
			}}),
		sell(Route{Method: http.MethodPost, Pattern: "/api/v1/licenses", OperationID: "createLicenseOffer", Status: http.StatusCreated,
			Summary: "Offer a license on an asset",
			Description: "Makes an active license offer on an asset of the caller's workspace and environment under one version of a " +
				"rights policy of that workspace, quoted by policyId, policyVersion and termsHash (that version's contentHash). " +
				"An offer is never edited: a change of terms is a new offer. It carries no price (a listing sets one). An asset the " +
				"caller's workspace and environment do not hold is 404 NOT_FOUND (details.field assetId); a policy or version the " +
				"workspace does not have is 404 NOT_FOUND (details.field policyId or policyVersion); a termsHash that is not the " +
				"version's contentHash is 409 TERMS_MISMATCH (details.field termsHash, details.policyHash). Needs " +
				"marketplace.create_listing reaching the asset (OWNER and ADMIN any asset of the workspace, CREATOR its own, else " +
				"403 ACCESS_DENIED) and the entitlement marketplace.sell, as for rights policies. The same Idempotency-Key and body " +
				"answer the same offer. Writes the outbox event license.offered and an audit record.",
			Request: LicenseOfferRequest{AssetID: "ast_01jd0000000000000000000000", PolicyID: exPolicy.PolicyID, PolicyVersion: 1,
				TermsHash: hash, Name: "Sync license", Kind: "non_exclusive"},
			Response: exOffer, Errors: []string{string(fault.NotFound), string(fault.TermsMismatch)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in LicenseOfferRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				o, err := svc.OfferLicense(ctx, c.Tx, c.Principal, c.Authority, marketplace.OfferRequest{AssetID: in.AssetID,
					Rights: policy.Ref{ID: in.PolicyID, Version: in.PolicyVersion, Hash: in.TermsHash}, Name: in.Name,
					Kind: marketplace.Kind(in.Kind), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return licenseOfferView(o), nil
			}}),
		sell(Route{Method: http.MethodPost, Pattern: "/api/v1/licenses/{licenseId}/withdraw", OperationID: "withdrawLicenseOffer",
			Status: http.StatusOK, Summary: "Withdraw a license offer",
			Description: "Withdraws an active license offer of the caller's workspace and environment: its only move (active -> " +
				"withdrawn); the offer is otherwise never edited. From then on no listing may be published under it and no new " +
				"marketplace order may price it (409 CONFLICT, details.reason license_withdrawn); orders already created keep " +
				"their snapshot, and licenses already issued under it keep their terms. An offer the caller's workspace and " +
				"environment do not hold is 404 NOT_FOUND; an offer already withdrawn is 409 INVALID_STATE_TRANSITION. Needs " +
				"marketplace.create_listing reaching the offer (OWNER and ADMIN any offer of the workspace, CREATOR the offers it " +
				"made, else 403 ACCESS_DENIED) and the entitlement marketplace.sell, as for making it. The same Idempotency-Key " +
				"answers the same result. Writes the outbox event license.withdrawn and an audit record.",
			Response: func() LicenseOfferView { o := exOffer; o.State, o.Version = "withdrawn", 2; return o }(),
			Policy: Policy{ResourceFunc: func(ctx context.Context, c *Call) (*access.Resource, error) {
				return svc.LicenseResource(ctx, c.Tx, c.Principal, c.PathValue("licenseId"))
			},
				TransitionFunc: func(ctx context.Context, c *Call) error {
					o, err := marketplace.License(ctx, c.Tx, c.Principal.Scope(), c.PathValue("licenseId"))
					if err != nil {
						return err
					}
					_, err = marketplace.Transition(o.State, marketplace.EventWithdraw)
					return err
				}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.WithdrawLicense(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("licenseId"), c.RequestID)
				if err != nil {
					return nil, err
				}
				return licenseOfferView(o), nil
			}}),
		{Method: http.MethodGet, Pattern: "/api/v1/assets/{assetId}/provenance", OperationID: "getAssetProvenance",
			Tag: transport.TagMarketplace, Auth: transport.AuthSessionOrKey, Private: true,
			Permission: access.ProjectRead, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "Get an asset's provenance",
			Description: "Where the asset's bytes came from: origin (uploaded, generated, remixed, derived), creator, the provider " +
				"and model of generated audio, the operation that made it, its parents with their content hashes (the source " +
				"hashes) and its own content hash (the output hash). The record is written with the asset and never changes; assets " +
				"made before provenance was recorded have a backfilled one (basis backfill) whose unknown parts are null. Readable " +
				"by the asset's workspace (project.read, API key scope read) and by workspaces holding a license entitlement to the " +
				"asset (a settled marketplace order: GET /api/v1/entitlements); any other asset, and any asset of the other " +
				"environment, is 404.",
			Response: exampleProvenance(), Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				p, err := svc.Provenance(ctx, c.Tx, c.Principal, c.PathValue("assetId"))
				if err != nil {
					return nil, err
				}
				return provenanceView(p), nil
			}},
	}
}
