package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/policy"
)

// FeePolicyView is a version of the marketplace fee policy.
type FeePolicyView struct {
	// PolicyID is the policy's id, always fees.marketplace.
	PolicyID string `json:"policyId" example:"fees.marketplace"`
	// Version is the policy version's number; each change adds one.
	Version int `json:"version" example:"1"`
	// Hash is the lowercase hex SHA-256 of the version's canonical content.
	Hash string `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Environment is the environment (test or live) the version applies in.
	Environment string `json:"environment" example:"live"`
	// FeeBps is the fee rate in basis points, 0 to 10000.
	FeeBps int `json:"feeBps" example:"500"`
	// MinimumFeeAtomic is an integer string of atomic units.
	MinimumFeeAtomic string `json:"minimumFeeAtomic" example:"0"`
	// Currency is the currency of the minimum fee; absent means the sale's currency.
	Currency string `json:"currency,omitempty" example:"USD"`
	// CreatedAt is when the version was created.
	CreatedAt time.Time `json:"createdAt"`
	// CreatedBy is who created the version: user:<user id> or key:<API key id>.
	CreatedBy string `json:"createdBy" example:"user:usr_01jd0000000000000000000000"`
}

// FeePolicyPage lists fee policy versions, newest first.
type FeePolicyPage struct {
	// Items are the page's policy versions, newest first.
	Items []FeePolicyView `json:"items"`
	// HasMore is true when older versions follow.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read older versions; null on the last.
	NextCursor *string `json:"nextCursor" example:"Mw"`
}

// FeePolicyRequest is a new marketplace fee policy.
type FeePolicyRequest struct {
	// FeeBps is the fee rate in basis points, 0 to 10000.
	FeeBps int `json:"feeBps" example:"500"`
	// MinimumFeeAtomic is the smallest fee per sale, an integer string of atomic units (0 for
	// none), at most 1000000000000000000 (10^18).
	MinimumFeeAtomic string `json:"minimumFeeAtomic" example:"0"`
	// Currency is the currency of the minimum fee; absent means the sale's currency.
	Currency string `json:"currency,omitempty" example:"USD"`
}

func feeView(v policy.Version) (FeePolicyView, error) {
	var f billing.FeePolicy
	if err := v.Decode(&f); err != nil {
		return FeePolicyView{}, fault.Wrap("transport.feeView", err)
	}
	return FeePolicyView{PolicyID: v.ID, Version: v.Version, Hash: v.Hash, Environment: string(v.Scope.Environment), FeeBps: f.FeeBps,
		MinimumFeeAtomic: f.MinimumFeeAtomic, Currency: f.Currency, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy}, nil
}

// feeRoutes are the marketplace fee policy routes (spec, Administration
// and fee policy). Policies are platform-wide per environment. Reading the
// current version needs fee_policy.read; the version history is an
// administration surface for super_admin; publishing needs super_admin, an
// Idempotency-Key and a recent sign-in (Policy.Fresh), and is audited.
func feeRoutes(svc *billing.Service) []Route {
	if svc == nil {
		return nil
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ex := FeePolicyView{PolicyID: billing.FeePolicyID, Version: 2, Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Environment: "live", FeeBps: 500, MinimumFeeAtomic: "0", CreatedAt: t, CreatedBy: "user:usr_01jd0000000000000000000000"}
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/fees/marketplace", OperationID: "getMarketplaceFees", Tag: transport.TagMarketplace,
			Auth: transport.AuthSession, Permission: access.FeePolicyRead, Private: true, Idempotency: transport.IdempotencyNone,
			Summary:     "Read the marketplace fee policy",
			Description: "The current version of the marketplace fee policy in the caller's environment (policy id, integer version, content hash, content). NOT_FOUND until one is published. Needs fee_policy.read.",
			Response:    ex, Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				v, err := svc.CurrentFees(ctx, c.Tx, c.Principal.Environment)
				if err != nil {
					return nil, err
				}
				return feeView(v)
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/admin/fees", OperationID: "listFeePolicyVersions", Tag: transport.TagAccount,
			Auth: transport.AuthSession, SuperAdmin: true, Private: true, Idempotency: transport.IdempotencyNone,
			Summary:     "List the fee policy's versions",
			Description: "Every version of the marketplace fee policy in the caller's environment, newest first; earlier versions stay readable and never change. Needs super_admin.",
			Query:       []transport.Param{{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"}, {Name: "cursor", Description: "The nextCursor of the previous page.", Example: "dmVyc2lvbjoz"}},
			Response:    FeePolicyPage{Items: []FeePolicyView{ex}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				vs, more, next, err := transport.PageOfVersions(c, func(before, n int) ([]policy.Version, error) {
					return svc.FeeHistory(ctx, c.Tx, c.Principal.Environment, before, n)
				}, func(v policy.Version) int { return v.Version })
				if err != nil {
					return nil, err
				}
				page := FeePolicyPage{Items: []FeePolicyView{}, HasMore: more, NextCursor: next}
				for _, v := range vs {
					fv, err := feeView(v)
					if err != nil {
						return nil, err
					}
					page.Items = append(page.Items, fv)
				}
				return page, nil
			}},
		{Method: http.MethodPut, Pattern: "/api/v1/admin/fees/marketplace", OperationID: "publishMarketplaceFees", Tag: transport.TagAccount,
			Auth: transport.AuthSession, SuperAdmin: true, Private: true, Idempotency: transport.IdempotencyRequired, Status: http.StatusCreated,
			Summary: "Publish a marketplace fee policy version",
			Description: "Creates a new immutable version of the marketplace fee policy in the caller's environment (integer version, content " +
				"hash) with an audit entry. Needs super_admin, an Idempotency-Key (a replay answers the first response: one version) and a " +
				"sign-in within the fresh-authentication window (401 REAUTHENTICATION_REQUIRED otherwise). Publishing the current content " +
				"again answers the current version with 200. feeBps is 0..10000; minimumFeeAtomic a non-negative integer string of " +
				"at most " + strconv.FormatInt(billing.MaxMinimumFeeAtomic, 10) + " (10^18) atomic units, so that it fits the " +
				"platform's 64-bit amounts; beyond it is 400 INVALID_INPUT with details.field minimumFeeAtomic and details.max.",
			Request: FeePolicyRequest{FeeBps: 500, MinimumFeeAtomic: "0"}, Response: ex,
			Policy:         Policy{Fresh: transport.FreshSession},
			ExistingStatus: http.StatusOK, ExistingText: "OK: the content equals the current version, which is answered.",
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in FeePolicyRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				v, created, err := svc.PublishFees(ctx, c.Tx, c.Principal, billing.PublishFeeInput{RequestID: c.RequestID,
					Policy: billing.FeePolicy{FeeBps: in.FeeBps, MinimumFeeAtomic: in.MinimumFeeAtomic, Currency: in.Currency}})
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return feeView(v)
			}},
	}
}
