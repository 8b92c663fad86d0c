package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/transport"
)

// ChallengeWindowView is when a challenge takes submissions.
type ChallengeWindowView struct {
	// OpensAt is when submissions open.
	OpensAt time.Time `json:"opensAt"`
	// ClosesAt is when submissions close; after opensAt.
	ClosesAt time.Time `json:"closesAt"`
}

// FundingEvidenceView is what the latest funding reconciliation read from the cluster.
type FundingEvidenceView struct {
	// TreasuryAccount is the reward treasury's Token-2022 account of the pool's mint, the account read.
	TreasuryAccount string `json:"treasuryAccount" example:"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"`
	// Commitment is the commitment the balance was read at: always finalized.
	Commitment string `json:"commitment" example:"finalized" enum:"finalized"`
	// Slot is the context slot of the balance read.
	Slot uint64 `json:"slot" example:"123456"`
	// BalanceAtomic is the account's balance at that slot, in atomic units.
	BalanceAtomic string `json:"balanceAtomic" example:"1000000000000"`
	// RequiredAtomic is what this pool and every pool funded before it still owe, grossed up for the mint's transfer fee.
	RequiredAtomic string `json:"requiredAtomic" example:"102040817"`
	// CheckedAt is when the reconciliation ran.
	CheckedAt time.Time `json:"checkedAt"`
}

// RewardPoolView is a challenge's reward pool.
type RewardPoolView struct {
	// AmountAtomic is the pool, an integer string of the mint's atomic units.
	AmountAtomic string `json:"amountAtomic" example:"100000000000"`
	// Amount is the pool in the token's units, for display.
	Amount string `json:"amount" example:"100"`
	// Mint is the pool's Token-2022 mint.
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals are the mint's decimals, read from the mint account.
	Decimals int `json:"decimals" example:"9"`
	// FundingStatus is the pool's funding status; FUNDED and after only with evidence read at finalized.
	FundingStatus string `json:"fundingStatus" example:"FUNDED" enum:"ANNOUNCED,RESERVED,FUNDED,CLAIMABLE,DISTRIBUTED"`
	// Funded is true while the latest reconciliation proved the treasury covers the pool (FUNDED, CLAIMABLE, DISTRIBUTED).
	Funded bool `json:"funded" example:"true"`
	// Evidence is the latest funding reconciliation's reading; null before the first.
	Evidence *FundingEvidenceView `json:"evidence"`
	// FundedAt is when the pool was first funded (its place in the treasury's coverage order); null before.
	FundedAt *time.Time `json:"fundedAt"`
}

// ChallengeView is a challenge.
type ChallengeView struct {
	// ID is the challenge's id.
	ID string `json:"id" example:"chl_01jd0000000000000000000000"`
	// Object is always "challenge".
	Object string `json:"object" example:"challenge"`
	// ProjectID is the challenge's project.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the challenge belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Title is the challenge's title.
	Title string `json:"title" example:"Night Drive remix challenge"`
	// Rules are the challenge's rules.
	Rules string `json:"rules" example:"Remix the stems; one entry per creator."`
	// Window is when it takes submissions.
	Window ChallengeWindowView `json:"window"`
	// Status is where the challenge stands in its lifecycle.
	Status string `json:"status" example:"OPEN" enum:"DRAFT,SCHEDULED,OPEN,SUBMISSIONS_CLOSED,REVIEW,VOTING,WINNERS_SELECTED,REWARDS_ALLOCATED,COMPLETED"`
	// Pool is the reward pool.
	Pool RewardPoolView `json:"pool"`
	// Version counts the challenge's writes, from 1.
	Version int64 `json:"version" example:"3"`
	// CreatedAt is when the challenge was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ChallengePage is one page of challenges, newest first.
type ChallengePage struct {
	// Items are the page's challenges.
	Items []ChallengeView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmNobF8wMWpk"`
}

// CreateChallengeRequest is the body of POST /api/v1/challenges.
type CreateChallengeRequest struct {
	// ProjectID is a project of the caller's workspace.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Title is 1 to 200 characters after trimming.
	Title string `json:"title" example:"Night Drive remix challenge"`
	// Rules are at most 10000 characters.
	Rules string `json:"rules" example:"Remix the stems; one entry per creator."`
	// Window is the submission window; opensAt before closesAt.
	Window ChallengeWindowView `json:"window"`
	// PoolAtomic is the reward pool, a positive integer string of the mint's atomic units.
	PoolAtomic string `json:"poolAtomic" example:"100000000000"`
	// Mint is the pool's Token-2022 mint; its decimals are read from the chain.
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
}

// ChallengeStatusRequest is the body of POST /api/v1/challenges/{id}/status.
type ChallengeStatusRequest struct {
	// Status is the next status of the lifecycle.
	Status string `json:"status" example:"SCHEDULED" enum:"DRAFT,SCHEDULED,OPEN,SUBMISSIONS_CLOSED,REVIEW,VOTING,WINNERS_SELECTED,REWARDS_ALLOCATED,COMPLETED"`
}

// RewardView is a reward as its recipient and its project's members read it.
type RewardView struct {
	// ID is the reward's durable id.
	ID string `json:"id" example:"rwd_01jd0000000000000000000000"`
	// Object is always "reward".
	Object string `json:"object" example:"reward"`
	// ChallengeID is the challenge whose pool pays it.
	ChallengeID string `json:"challengeId" example:"chl_01jd0000000000000000000000"`
	// ProjectID is the challenge's project.
	ProjectID string `json:"projectId" example:"prj_01jd0000000000000000000000"`
	// Environment is the environment (test or live) the reward belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Reference is the reward's name within its challenge, its allocation identity with the challenge.
	Reference string `json:"reference" example:"first-place"`
	// RecipientUserID is the creator the reward was allocated to.
	RecipientUserID string `json:"recipientUserId" example:"usr_01jd0000000000000000000000"`
	// Wallet is the recipient's verified wallet, the only one it pays.
	Wallet string `json:"wallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// AmountAtomic is the reward, an integer string of the mint's atomic units: exactly what reaches the wallet.
	AmountAtomic string `json:"amountAtomic" example:"25000000000"`
	// Amount is the reward in the token's units, for display.
	Amount string `json:"amount" example:"25"`
	// Mint is the reward's Token-2022 mint.
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals are the mint's decimals.
	Decimals int `json:"decimals" example:"9"`
	// State is the reward's claim state.
	State string `json:"state" example:"CLAIMABLE" enum:"ALLOCATED,CLAIMABLE,SUBMITTED,CONFIRMED,DISTRIBUTED,RECONCILED,REQUIRES_REVIEW"`
	// CreatorState is the reward as its creator sees it.
	CreatorState string `json:"creatorState" example:"CLAIMABLE" enum:"ESTIMATED,ELIGIBLE,ALLOCATED,CLAIMABLE,SUBMITTED,CONFIRMED,SETTLED,RECONCILED"`
	// FundingStatus is its pool's funding status as the reward last saw it.
	FundingStatus string `json:"fundingStatus" example:"CLAIMABLE" enum:"ANNOUNCED,RESERVED,FUNDED,CLAIMABLE,DISTRIBUTED"`
	// TransactionIntentID is the current payout's transaction intent; null when none.
	TransactionIntentID *string `json:"transactionIntentId" example:"txi_0123456789abcdef0123456789abcdef"`
	// IntentState is that intent's state; null when none.
	IntentState *string `json:"intentState" example:"SUBMITTED"`
	// Signature is the payout transaction's signature; null before one.
	Signature *string `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	// ClaimAttempts counts the claims that created a payout intent.
	ClaimAttempts int `json:"claimAttempts" example:"1"`
	// IdempotencyKey is the Idempotency-Key of the allocation request that created it.
	IdempotencyKey string `json:"idempotencyKey" example:"allocate-1"`
	// AllocatedAt is when it was allocated.
	AllocatedAt time.Time `json:"allocatedAt"`
	// ClaimedAt is when the current payout's intent was created; null before.
	ClaimedAt *time.Time `json:"claimedAt"`
	// DistributedAt is when the payout was verified at finalized and posted; null before.
	DistributedAt *time.Time `json:"distributedAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// RewardPage is one page of rewards, newest first.
type RewardPage struct {
	// Items are the page's rewards.
	Items []RewardView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnJ3ZF8wMWpk"`
}

// PublicRewardView is a reward on a creator's public profile: public fields only.
type PublicRewardView struct {
	// ID is the reward's id.
	ID string `json:"id" example:"rwd_01jd0000000000000000000000"`
	// Object is always "reward".
	Object string `json:"object" example:"reward"`
	// AmountAtomic is the reward, an integer string of the mint's atomic units.
	AmountAtomic string `json:"amountAtomic" example:"25000000000"`
	// Amount is the reward in the token's units.
	Amount string `json:"amount" example:"25"`
	// Mint is the reward's mint.
	Mint string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// Decimals are the mint's decimals.
	Decimals int `json:"decimals" example:"9"`
	// CreatorState is the reward as its creator sees it.
	CreatorState string `json:"creatorState" example:"SETTLED" enum:"ESTIMATED,ELIGIBLE,ALLOCATED,CLAIMABLE,SUBMITTED,CONFIRMED,SETTLED,RECONCILED"`
	// AllocatedAt is when it was allocated.
	AllocatedAt time.Time `json:"allocatedAt"`
	// DistributedAt is when it was paid; null before.
	DistributedAt *time.Time `json:"distributedAt"`
}

// PublicRewardPage is one page of a creator's public rewards, newest first.
type PublicRewardPage struct {
	// Items are the page's rewards.
	Items []PublicRewardView `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOnJ3ZF8wMWpk"`
}

// AllocationItemRequest is one reward of an allocation.
type AllocationItemRequest struct {
	// Wallet is the recipient's wallet, one a creator verified.
	Wallet string `json:"wallet" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// AmountAtomic is the reward, a positive integer string of the pool's mint's atomic units.
	AmountAtomic string `json:"amountAtomic" example:"25000000000"`
	// Reference names the reward within the challenge (a submission id, a place); the wallet when omitted.
	Reference string `json:"reference,omitempty" example:"first-place"`
}

// AllocateRewardsRequest is the body of POST /api/v1/projects/{id}/rewards/allocate.
type AllocateRewardsRequest struct {
	// ChallengeID is the project's challenge whose pool pays.
	ChallengeID string `json:"challengeId" example:"chl_01jd0000000000000000000000"`
	// Items are the rewards, 1 to 50.
	Items []AllocationItemRequest `json:"items"`
}

// AllocationView is the answer of an allocation.
type AllocationView struct {
	// Items are the allocation's rewards, in the request's order.
	Items []RewardView `json:"items"`
}

// RewardClaimView is a claim's answer: the reward and its payout's transaction intent.
type RewardClaimView struct {
	// Reward is the claimed reward, SUBMITTED.
	Reward RewardView `json:"reward"`
	// TransactionIntent is the payout's intent, signed by the treasury and submitted.
	TransactionIntent TransactionIntentView `json:"transactionIntent"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func challengeView(c rewards.Challenge) ChallengeView {
	v := ChallengeView{ID: c.ID, Object: "challenge", ProjectID: c.ProjectID, Environment: string(c.Scope.Environment), Title: c.Title,
		Rules: c.Rules, Window: ChallengeWindowView{OpensAt: c.Window.OpensAt, ClosesAt: c.Window.ClosesAt}, Status: string(c.Status),
		Pool: RewardPoolView{AmountAtomic: strconv.FormatUint(c.Pool.AmountAtomic, 10), Amount: intent.FormatAtomic(c.Pool.AmountAtomic, c.Pool.Decimals),
			Mint: c.Pool.Mint.String(), Decimals: int(c.Pool.Decimals), FundingStatus: string(c.Pool.Funding), Funded: c.Pool.Funding.Covered(),
			FundedAt: timeOrNil(c.Pool.FundedAt)},
		Version: c.Version, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if e := c.Pool.Evidence; !e.CheckedAt.IsZero() {
		v.Pool.Evidence = &FundingEvidenceView{TreasuryAccount: e.TreasuryAccount.String(), Commitment: string(chain.Finalized), Slot: e.Slot,
			BalanceAtomic: strconv.FormatUint(e.BalanceAtomic, 10), RequiredAtomic: strconv.FormatUint(e.RequiredAtomic, 10), CheckedAt: e.CheckedAt}
	}
	return v
}

func rewardView(r rewards.Reward) RewardView {
	return RewardView{ID: r.ID, Object: "reward", ChallengeID: r.ChallengeID, ProjectID: r.ProjectID, Environment: string(r.Scope.Environment),
		Reference: r.Reference, RecipientUserID: r.RecipientUserID, Wallet: r.Wallet.String(), AmountAtomic: strconv.FormatUint(r.AmountAtomic, 10),
		Amount: intent.FormatAtomic(r.AmountAtomic, r.Decimals), Mint: r.Mint.String(), Decimals: int(r.Decimals), State: string(r.State),
		CreatorState: string(r.State.Creator()), FundingStatus: string(r.Funding), TransactionIntentID: optional(r.IntentID),
		IntentState: optional(r.IntentState), Signature: optional(r.Signature), ClaimAttempts: r.ClaimAttempts, IdempotencyKey: r.IdempotencyKey,
		AllocatedAt: r.AllocatedAt, ClaimedAt: timeOrNil(r.ClaimedAt), DistributedAt: timeOrNil(r.DistributedAt), UpdatedAt: r.UpdatedAt}
}

func publicRewardView(r rewards.Reward) PublicRewardView {
	return PublicRewardView{ID: r.ID, Object: "reward", AmountAtomic: strconv.FormatUint(r.AmountAtomic, 10),
		Amount: intent.FormatAtomic(r.AmountAtomic, r.Decimals), Mint: r.Mint.String(), Decimals: int(r.Decimals),
		CreatorState: string(r.State.Creator()), AllocatedAt: r.AllocatedAt, DistributedAt: timeOrNil(r.DistributedAt)}
}

func exampleChallenge() ChallengeView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return ChallengeView{ID: "chl_01jd0000000000000000000000", Object: "challenge", ProjectID: "prj_01jd0000000000000000000000",
		Environment: "test", Title: "Night Drive remix challenge", Rules: "Remix the stems; one entry per creator.",
		Window: ChallengeWindowView{OpensAt: t, ClosesAt: t.Add(14 * 24 * time.Hour)}, Status: "OPEN",
		Pool: RewardPoolView{AmountAtomic: "100000000000", Amount: "100", Mint: "Mint111111111111111111111111111111111111111", Decimals: 9,
			FundingStatus: "FUNDED", Funded: true, FundedAt: &t, Evidence: &FundingEvidenceView{TreasuryAccount: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
				Commitment: "finalized", Slot: 123456, BalanceAtomic: "1000000000000", RequiredAtomic: "102040817", CheckedAt: t}},
		Version: 3, CreatedAt: t, UpdatedAt: t}
}

func exampleReward() RewardView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return RewardView{ID: "rwd_01jd0000000000000000000000", Object: "reward", ChallengeID: "chl_01jd0000000000000000000000",
		ProjectID: "prj_01jd0000000000000000000000", Environment: "test", Reference: "first-place", RecipientUserID: "usr_01jd0000000000000000000000",
		Wallet: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", AmountAtomic: "25000000000", Amount: "25",
		Mint: "Mint111111111111111111111111111111111111111", Decimals: 9, State: "CLAIMABLE", CreatorState: "CLAIMABLE",
		FundingStatus: "CLAIMABLE", ClaimAttempts: 0, IdempotencyKey: "allocate-1", AllocatedAt: t, UpdatedAt: t}
}

func examplePublicReward() PublicRewardView {
	r := exampleReward()
	t := r.AllocatedAt.Add(time.Hour)
	return PublicRewardView{ID: r.ID, Object: "reward", AmountAtomic: r.AmountAtomic, Amount: r.Amount, Mint: r.Mint, Decimals: r.Decimals,
		CreatorState: "SETTLED", AllocatedAt: r.AllocatedAt, DistributedAt: &t}
}

// challengeMovesText describes the challenge table and the permission of
// each move, from the table itself, for the status route's document.
func challengeMovesText() string {
	var b strings.Builder
	for i, m := range rewards.Moves() {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(string(m.From) + " -> " + string(m.To) + " needs " + string(rewards.MovePermission(m.To)))
	}
	return b.String()
}

// rewardsRoutes are the challenge and reward routes (spec, Challenges,
// creators, rewards). Funding reconciliation and claims read the cluster
// and sign outside any transaction, so they run their own units of work.
func rewardsRoutes(svc *rewards.Service) []Route {
	if svc == nil {
		return nil
	}
	tag := func(r Route) Route {
		r.Tag, r.Private = transport.TagChallenges, true
		return r
	}
	runOf := func(c *Call) rewards.RunFunc {
		return func(ctx context.Context, fn func(st rewards.FundingStore) error) error {
			return c.Commit(ctx, func(tx Tx) error { return fn(tx) })
		}
	}
	claimRunOf := func(c *Call) rewards.ClaimRunFunc {
		return func(ctx context.Context, fn func(st rewards.ClaimStore, intents intent.Store) error) error {
			return c.Commit(ctx, func(tx Tx) error { return fn(tx, tx) })
		}
	}
	internal := func(c *Call) bool {
		return c.Principal.Kind == access.CredentialAPIKey && c.Principal.HasScope(access.ScopeInternal)
	}
	rewardPage := func(c *Call, list func(before string, n int) ([]rewards.Reward, error)) (any, error) {
		limit, err := transport.PageLimit(c)
		if err != nil {
			return nil, err
		}
		before, err := transport.DecodeCursor(c, rewards.RewardPrefix)
		if err != nil {
			return nil, err
		}
		rs, err := list(before, limit+1)
		if err != nil {
			return nil, err
		}
		page := RewardPage{Items: []RewardView{}}
		if len(rs) > limit {
			rs, page.HasMore = rs[:limit], true
			page.NextCursor = transport.EncodeCursor(rs[limit-1].ID)
		}
		for _, r := range rs {
			page.Items = append(page.Items, rewardView(r))
		}
		return page, nil
	}
	const reconcileDesc = "Reads the environment's reward treasury's Token-2022 account of the pool's mint at finalized commitment and moves " +
		"the pool's funding by what it shows, recording the slot, the balance and what was required as evidence: a balance covering what " +
		"this pool and every pool funded before it still owe (unpaid rewards and the unallocated rest, each grossed up for the mint's " +
		"transfer fee) moves it ANNOUNCED or RESERVED -> FUNDED, and CLAIMABLE with its allocated rewards; covered at confirmed only, " +
		"ANNOUNCED -> RESERVED; a treasury short of what a FUNDED or CLAIMABLE pool still owes moves it back to RESERVED and its unclaimed " +
		"rewards to ALLOCATED (not claimable) until a reconciliation finds it covered again. An unreadable balance is 503 " +
		"BALANCE_UNAVAILABLE and nothing changes. Needs reward.reconcile (OWNER, ADMIN, FINANCE; API key scope rewards:read) for a " +
		"challenge of the caller's workspace, or an API key holding the internal scope (the host's operator), for any of its environment."
	ex := exampleChallenge()
	return []Route{
		tag(Route{Method: http.MethodGet, Pattern: "/api/v1/challenges", OperationID: "listChallenges", Auth: transport.AuthSessionOrKey,
			Permission: access.ProjectRead, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary:     "List challenges",
			Description: "The challenges of the caller's workspace and environment, newest first (by id). limit is 1 to 100 (default 20); cursor is the previous page's nextCursor.",
			Query:       pageQuery("Y3Vyc29yOmNobF8wMWpk"),
			Response:    ChallengePage{Items: []ChallengeView{ex}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, rewards.ChallengePrefix)
				if err != nil {
					return nil, err
				}
				cs, err := svc.List(ctx, c.Tx, c.Principal, before, limit+1)
				if err != nil {
					return nil, err
				}
				page := ChallengePage{Items: []ChallengeView{}}
				if len(cs) > limit {
					cs, page.HasMore = cs[:limit], true
					page.NextCursor = transport.EncodeCursor(cs[limit-1].ID)
				}
				for _, x := range cs {
					page.Items = append(page.Items, challengeView(x))
				}
				return page, nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/challenges", OperationID: "createChallenge", Status: http.StatusCreated,
			Auth: transport.AuthSession, Permission: access.RewardAllocate, Idempotency: transport.IdempotencyOptional,
			Summary: "Create a challenge",
			Description: "Creates a DRAFT challenge of a project of the caller's workspace with a reward pool ANNOUNCED: an atomic amount of a " +
				"Token-2022 mint, whose decimals are read from the mint account on the environment's cluster, never taken from the caller. " +
				"A published pool is not funded: only funding reconciliation moves it to FUNDED, with evidence. Needs reward.allocate reaching " +
				"the project (OWNER and ADMIN any; a project lead its project), else 403 ACCESS_DENIED; a project of another workspace is 404. " +
				"title is 1 to 200 characters, rules at most 10000, window.opensAt before window.closesAt, poolAtomic a positive integer " +
				"string; anything else is 400 INVALID_INPUT naming the field. Writes the outbox event challenge.created and an audit record.",
			Request: CreateChallengeRequest{ProjectID: "prj_01jd0000000000000000000000", Title: "Night Drive remix challenge",
				Rules: "Remix the stems; one entry per creator.", Window: ex.Window, PoolAtomic: "100000000000",
				Mint: "Mint111111111111111111111111111111111111111"},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateChallengeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				ch, err := svc.Create(ctx, c.Tx, c.Principal, c.Authority, rewards.CreateRequest{ProjectID: in.ProjectID, Title: in.Title,
					Rules: in.Rules, Window: rewards.Window{OpensAt: in.Window.OpensAt, ClosesAt: in.Window.ClosesAt}, PoolAtomic: in.PoolAtomic,
					Mint: in.Mint, RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return challengeView(ch), nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/challenges/{id}/status", OperationID: "setChallengeStatus",
			Auth: transport.AuthSessionOrKey, Permission: access.ProjectUpdate, Scope: access.ScopeProjectsWrite,
			Idempotency: transport.IdempotencyOptional,
			Summary:     "Move a challenge's status",
			Description: "Moves a challenge of the caller's workspace one step along its lifecycle, each move with the permission it needs " +
				"reaching the challenge's project: " + challengeMovesText() + ". Any other move (a skip, a step back) is 409 " +
				"INVALID_STATE_TRANSITION whoever asks; a move the caller's grant does not reach is 403 ACCESS_DENIED (details.permission). " +
				"REWARDS_ALLOCATED needs at least one reward allocated (409 CONFLICT, reason no_rewards_allocated). A challenge of another " +
				"workspace is 404. Writes the outbox event challenge.status_changed and an audit record.",
			Request:  ChallengeStatusRequest{Status: "SCHEDULED"},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.InvalidState), string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ChallengeStatusRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				ch, err := svc.Move(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"),
					rewards.MoveRequest{Status: rewards.Status(in.Status), RequestID: c.RequestID})
				if err != nil {
					return nil, err
				}
				return challengeView(ch), nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/challenges/{id}/funding/reconcile", OperationID: "reconcileChallengeFunding",
			Auth: transport.AuthSessionOrKey, Permission: access.RewardReconcile, AlsoInternal: true, Idempotency: transport.IdempotencyNone,
			OwnUnitOfWork: true, Summary: "Reconcile a challenge pool's funding", Description: reconcileDesc,
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.BalanceUnavailable), string(fault.ServiceUnavailable),
				string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ch, err := svc.ReconcileFunding(ctx, c.Tx, runOf(c), c.Principal, internal(c), c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				if err := commitReceipt(ctx, c); err != nil {
					return nil, err
				}
				return challengeView(ch), nil
			}}),
		tag(Route{Method: http.MethodGet, Pattern: "/api/v1/rewards", OperationID: "listRewards", Auth: transport.AuthSession, AnyMember: true,
			Idempotency: transport.IdempotencyNone, Summary: "List my rewards",
			Description: "The rewards allocated to the signed-in user, in every tenant of the caller's environment, newest first, with their " +
				"claim state and creator state. limit is 1 to 100 (default 20); cursor is the previous page's nextCursor.",
			Query: pageQuery("Y3Vyc29yOnJ3ZF8wMWpk"), Response: RewardPage{Items: []RewardView{exampleReward()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return rewardPage(c, func(before string, n int) ([]rewards.Reward, error) {
					return svc.Mine(ctx, c.Tx, c.Principal, before, n)
				})
			}}),
		tag(Route{Method: http.MethodGet, Pattern: "/api/v1/projects/{id}/rewards", OperationID: "listProjectRewards",
			Auth: transport.AuthSessionOrKey, Permission: access.ProjectRead, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			Summary: "List a project's rewards",
			Description: "The rewards allocated from the challenges of a project of the caller's workspace, newest first, to members whose " +
				"project.read reaches the project (403 ACCESS_DENIED otherwise); a project of another workspace is 404.",
			Query: pageQuery("Y3Vyc29yOnJ3ZF8wMWpk"), Response: RewardPage{Items: []RewardView{exampleReward()}},
			Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return rewardPage(c, func(before string, n int) ([]rewards.Reward, error) {
					return svc.OfProject(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"), before, n)
				})
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/projects/{id}/rewards/allocate", OperationID: "allocateProjectRewards",
			Status: http.StatusCreated, Auth: transport.AuthSession, Permission: access.RewardAllocate, Idempotency: transport.IdempotencyRequired,
			Summary: "Allocate rewards",
			Description: "Allocates rewards from the pool of a challenge of the project, in WINNERS_SELECTED (else 409 INVALID_STATE_TRANSITION), " +
				"whose pool is FUNDED or CLAIMABLE (else 409 CONFLICT, reason pool_not_funded): each item pays a wallet some creator verified " +
				"(else 422 WALLET_REQUIRED naming items[i].wallet) an atomic amount of the pool's mint. The allocation never exceeds the pool " +
				"(422 INVALID_AMOUNT, reason exceeds_pool). Each reward records its identity, project, recipient and wallet, amount, mint, " +
				"decimals, funding status, intent and signature status, timestamps and this request's Idempotency-Key, is posted in the " +
				"rewards ledger (reward-pool -> reward-payable) and is CLAIMABLE at once. An item's reference (default: its wallet) is its " +
				"identity in the challenge: the same reference again returns its reward, with another wallet or amount is 409 CONFLICT " +
				"(reason allocation_exists). Needs reward.allocate reaching the project (OWNER, ADMIN, its project lead). Writes the outbox " +
				"events reward.allocated and reward.claimable and an audit record per reward.",
			Request: AllocateRewardsRequest{ChallengeID: "chl_01jd0000000000000000000000", Items: []AllocationItemRequest{{
				Wallet: "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", AmountAtomic: "25000000000", Reference: "first-place"}}},
			Response: AllocationView{Items: []RewardView{exampleReward()}},
			Errors: []string{string(fault.NotFound), string(fault.InvalidState), string(fault.Conflict), string(fault.WalletRequired),
				string(fault.InvalidAmount)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AllocateRewardsRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := rewards.AllocateRequest{ChallengeID: in.ChallengeID, IdempotencyKey: c.Request.Header.Get("Idempotency-Key"), RequestID: c.RequestID}
				for _, it := range in.Items {
					req.Items = append(req.Items, rewards.Allocation{Wallet: it.Wallet, AmountAtomic: it.AmountAtomic, Reference: it.Reference})
				}
				rs, err := svc.Allocate(ctx, c.Tx, c.Principal, c.Authority, c.PathValue("id"), req)
				if err != nil {
					return nil, err
				}
				out := AllocationView{Items: []RewardView{}}
				for _, r := range rs {
					out.Items = append(out.Items, rewardView(r))
				}
				return out, nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/rewards/{id}/funding/reconcile", OperationID: "reconcileRewardFunding",
			Auth: transport.AuthSessionOrKey, Permission: access.RewardReconcile, AlsoInternal: true, Idempotency: transport.IdempotencyNone,
			OwnUnitOfWork: true, Summary: "Reconcile a reward's funding",
			Description: "Reconciles the funding of the reward's pool, as the challenge route does, and answers the reward. " + reconcileDesc,
			Response:    exampleReward(), Errors: []string{string(fault.NotFound), string(fault.BalanceUnavailable), string(fault.ServiceUnavailable),
				string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				r, err := svc.ReconcileReward(ctx, c.Tx, runOf(c), c.Principal, internal(c), c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				if err := commitReceipt(ctx, c); err != nil {
					return nil, err
				}
				return rewardView(r), nil
			}}),
		tag(Route{Method: http.MethodPost, Pattern: "/api/v1/rewards/{id}/claim", OperationID: "claimReward",
			Auth: transport.AuthSession, Permission: access.RewardClaim, Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true,
			Summary: "Claim a reward",
			Description: "Claims a CLAIMABLE reward allocated to the signed-in user (another user's is 404), whose wallet is verified on the " +
				"caller's account (422 WALLET_REQUIRED when the account verified no wallet, WALLET_MISMATCH when not this one). The claim " +
				"creates a transaction intent of purpose reward_claim: the reward treasury pays exactly the reward to the wallet's Token-2022 " +
				"account (grossing up any transfer fee), threshold finalized; the treasury's signer signs it server-side and the platform " +
				"relays it. The claim alone marks nothing claimed: the reward is SUBMITTED, and becomes CONFIRMED then DISTRIBUTED (claimed, " +
				"posted in the rewards ledger) only when reconciliation sees the transaction finalized and the wallet's account received " +
				"exactly the amount. A payout that fails or expires returns the reward to CLAIMABLE, with the same allocation; claim again. " +
				"Claiming a SUBMITTED reward answers its current intent: concurrent claims make one intent. Any other state is 409 CONFLICT " +
				"(reason not_claimable).",
			Response: RewardClaimView{Reward: exampleReward(), TransactionIntent: exampleIntent()},
			Errors: []string{string(fault.NotFound), string(fault.WalletRequired), string(fault.WalletMismatch), string(fault.Conflict),
				string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				r, it, err := svc.Claim(ctx, c.Tx, claimRunOf(c), c.Principal, c.PathValue("id"))
				if err != nil {
					return nil, err
				}
				if err := commitReceipt(ctx, c); err != nil {
					return nil, err
				}
				return RewardClaimView{Reward: rewardView(r), TransactionIntent: intentView(it)}, nil
			}}),
		tag(Route{Method: http.MethodGet, Pattern: "/api/v1/creators/{wallet}/rewards", OperationID: "listCreatorRewards",
			Auth: transport.AuthSessionOrKey, AnyMember: true, Scope: access.ScopeRead, Idempotency: transport.IdempotencyNone,
			AdmitFunc: admitWallet, Summary: "List a creator's rewards",
			Description: "The rewards paid to a creator's verified wallet in every tenant of the caller's environment, newest first, with " +
				"public fields only: amount, mint, decimals, creator state and the allocation and distribution times (no project, challenge, " +
				"recipient, intent or tenant). The wallet is a Solana public key, base58 text of 32 bytes; anything else is 400 INVALID_INPUT " +
				"(details.field wallet), answered first, before the credential is read or any database work. An address no account has " +
				"verified is 404.",
			Query: pageQuery("Y3Vyc29yOnJ3ZF8wMWpk"), Response: PublicRewardPage{Items: []PublicRewardView{examplePublicReward()}},
			Errors: []string{string(fault.NotFound)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				limit, err := transport.PageLimit(c)
				if err != nil {
					return nil, err
				}
				before, err := transport.DecodeCursor(c, rewards.RewardPrefix)
				if err != nil {
					return nil, err
				}
				rs, err := svc.OfCreator(ctx, c.Tx, c.Principal, c.PathValue("wallet"), before, limit+1)
				if err != nil {
					return nil, err
				}
				page := PublicRewardPage{Items: []PublicRewardView{}}
				if len(rs) > limit {
					rs, page.HasMore = rs[:limit], true
					page.NextCursor = transport.EncodeCursor(rs[limit-1].ID)
				}
				for _, r := range rs {
					page.Items = append(page.Items, publicRewardView(r))
				}
				return page, nil
			}}),
	}
}
