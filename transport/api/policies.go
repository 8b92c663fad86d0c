package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// PolicyVersionView is one immutable version of a policy the platform knows.
type PolicyVersionView struct {
	// PolicyID is the policy's id, such as fees.marketplace.
	PolicyID string `json:"policyId" example:"fees.marketplace"`
	// Version is the version's integer number; each new content adds one.
	Version int `json:"version" example:"2"`
	// Hash is the lowercase hex SHA-256 of the version's canonical content.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Environment is the environment (test or live) the version applies in.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// Content is the policy document in canonical JSON (keys sorted), as
	// its owning domain encodes it.
	Content json.RawMessage `json:"content"`
	// CreatedAt is when the version was published.
	CreatedAt time.Time `json:"createdAt"`
	// CreatedBy is who published it: user:<user id>, key:<API key id>, or
	// the platform's own configuration (system, platform).
	CreatedBy string `json:"createdBy" example:"user:usr_01jd0000000000000000000000"`
}

// PublishPolicyRequest publishes a version of a policy the platform knows.
type PublishPolicyRequest struct {
	// PolicyID is the policy to publish: fees.marketplace,
	// pricing.generation, ai.pricing or leaderboard.scoring (windowDays
	// and an integer weight per signal). ai.routing is published through
	// PUT /api/v1/ai/routing; credits.packs, swap.tokens, swap.settings
	// and fees.swap by the host's configuration.
	PolicyID string `json:"policyId" example:"fees.marketplace"`
	// Content is the policy document, a JSON object in the owning domain's
	// shape (for fees.marketplace: feeBps, minimumFeeAtomic and an optional
	// currency); unknown fields are refused.
	Content json.RawMessage `json:"content"`
}

func policyVersionView(v policy.Version) PolicyVersionView {
	return PolicyVersionView{PolicyID: v.ID, Version: v.Version, Hash: v.Hash, Environment: string(v.Scope.Environment),
		Content: v.Content, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}
}

// policyRoutes publish and read versions of the policies the platform
// knows (spec, Architecture and operations; Architecture records: policy
// id, integer version, content hash, immutable). Versions are
// platform-wide per environment. Historical outcomes keep the versions they
// used: an order, a quote, an operation records the policy's id, version
// and hash, and a later version never rewrites it.
func policyRoutes(ps *architecture.Policies) []Route {
	if ps == nil {
		return nil
	}
	ex := PolicyVersionView{PolicyID: "fees.marketplace", Version: 2, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Environment: "live", Content: json.RawMessage(`{"feeBps":500,"minimumFeeAtomic":"0"}`),
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), CreatedBy: "user:usr_01jd0000000000000000000000"}
	return []Route{
		{Method: http.MethodPost, Pattern: "/api/v1/policies", OperationID: "publishPolicy", Tag: transport.TagArchitecture,
			Auth: transport.AuthSession, SuperAdmin: true, Private: true, Idempotency: transport.IdempotencyRequired, Status: http.StatusCreated,
			Summary: "Publish a policy version",
			Description: "Publishes a new immutable version (integer version, content hash) of a policy the platform knows, in the " +
				"caller's environment, with an audit entry. The content is validated by the policy's owning domain and stored in its " +
				"encoding, so the same content is the same version: publishing the current content again answers it with 200, any " +
				"other content (an older one included) creates the next version with 201. Needs super_admin, an Idempotency-Key " +
				"and a sign-in within the fresh-authentication window (401 REAUTHENTICATION_REQUIRED otherwise). An unknown policy id " +
				"is 404 NOT_FOUND; content the owner refuses is 400 INVALID_INPUT naming the field; a policy the host's configuration " +
				"publishes is 409 CONFLICT (reason published_by_configuration), one with its own route 409 CONFLICT (reason " +
				"published_by_owner_route, details.route). Outcomes already decided keep the version they recorded.",
			Request:  PublishPolicyRequest{PolicyID: "fees.marketplace", Content: json.RawMessage(`{"feeBps":500,"minimumFeeAtomic":"0"}`)},
			Response: ex, Policy: Policy{Fresh: transport.FreshSession},
			ExistingStatus: http.StatusOK, ExistingText: "OK: the content equals the current version, which is answered.",
			Errors: []string{string(fault.NotFound), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in PublishPolicyRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				v, created, err := ps.Publish(ctx, c.Tx, c.Principal, c.Authority, architecture.PublishInput{PolicyID: in.PolicyID,
					Content: in.Content, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return policyVersionView(v), nil
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/policies/{policyId}/current", OperationID: "getCurrentPolicy", Tag: transport.TagArchitecture,
			Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Idempotency: transport.IdempotencyNone,
			Summary: "Read a policy's current version",
			Description: "The current version of a policy the platform knows in the caller's environment: id, integer version, content " +
				"hash and content. fees.marketplace needs fee_policy.read (403 ACCESS_DENIED, details.permission, otherwise); the " +
				"pricing and leaderboard scoring policies are readable by any member or key. An unknown id, or one with no version published in the " +
				"environment (details.reason not_published), is 404 NOT_FOUND.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				v, err := ps.Current(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("policyId"))
				if err != nil {
					return nil, err
				}
				return policyVersionView(v), nil
			}},
	}
}
