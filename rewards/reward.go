package rewards

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// MaxAllocations bounds the items of one allocation request.
const MaxAllocations = 50

// Reward is one reward allocated from a challenge's pool to a creator
// (spec, Challenges and rewards: a reward record).
type Reward struct {
	// ID is the reward's durable identity (RewardPrefix); Version counts
	// its writes and is the store's compare-and-set token.
	ID      string
	Version int64
	// Scope is the project's tenant, workspace and environment;
	// ProjectID and ChallengeID what it was allocated for.
	Scope       access.Scope
	ProjectID   string
	ChallengeID string
	// AllocationKey is the allocation's identity (challenge and
	// reference): one reward per key, so repeating an allocation
	// allocates nothing twice. Reference is the allocation's own name of
	// the reward (a submission id, "1st place"; the wallet by default);
	// IdempotencyKey the Idempotency-Key of the request that allocated it.
	AllocationKey  string
	Reference      string
	IdempotencyKey string
	// RecipientUserID is the creator behind Wallet when it was allocated;
	// Wallet the recipient's verified wallet, the only one it pays.
	RecipientUserID string
	Wallet          chain.Address
	// AmountAtomic, Mint and Decimals are what it pays: exactly the
	// amount reaches the recipient's account (the treasury grosses up the
	// transfer fee).
	AmountAtomic uint64
	Mint         chain.Address
	Decimals     uint8
	// State is its claim state; Funding its pool's funding status as the
	// reward last saw it.
	State   State
	Funding Funding
	// IntentID is the current payout's transaction intent ("" when
	// none), IntentState that intent's state and Signature its
	// transaction's signature; ClaimAttempts counts the claims that
	// created an intent.
	IntentID      string
	IntentState   string
	Signature     string
	ClaimAttempts int
	// AllocatedByUserID is who allocated it.
	AllocatedByUserID string
	// AllocatedAt, ClaimedAt (the payout's intent created), DistributedAt
	// (paid and posted) and UpdatedAt are its timestamps (zero until
	// reached).
	AllocatedAt   time.Time
	ClaimedAt     time.Time
	DistributedAt time.Time
	UpdatedAt     time.Time
}

// RewardReader reads one reward (Service.GetReward, a claim's and a
// funding reconciliation's read, and the payout's pricing).
type RewardReader interface {
	// RewardGet reads a reward by id in env, of any tenant; NOT_FOUND
	// when none. The service decides who reads it.
	RewardGet(ctx context.Context, env access.Environment, id string) (Reward, error)
}

// RewardFilter narrows a reward list; exactly one of its keys is set.
type RewardFilter struct {
	// Scope and ProjectID keep one project's rewards.
	Scope     access.Scope
	ProjectID string
	// RecipientUserID keeps one recipient's rewards, in every tenant.
	RecipientUserID string
	// Wallet keeps the rewards paid to one wallet, in every tenant.
	Wallet string
}

// RewardLister lists rewards to their readers (Service.Mine, OfProject,
// OfCreator): the project or the creator asked for, and the page.
type RewardLister interface {
	projectGetter
	// CreatorByWallet returns the creator behind the wallet link that
	// stands for q (package creator); NOT_FOUND when none holds it.
	CreatorByWallet(ctx context.Context, q creator.Lookup) (creator.Creator, error)
	// RewardList returns up to limit rewards of env matching f, newest
	// first, with ids below before.
	RewardList(ctx context.Context, env access.Environment, f RewardFilter, before string, limit int) ([]Reward, error)
}

// AllocationStore is an allocation's unit of work (Service.Allocate): the
// project and the recipient creator, the challenge locked and written by
// compare-and-set, its rewards by allocation key, the allocation
// movements in the rewards ledger, the outbox and the audit log.
type AllocationStore interface {
	ledger.Mover
	account.AuditWriter
	projectGetter
	// CreatorByWallet returns the creator behind the wallet link that
	// stands for q (package creator); NOT_FOUND when none holds it.
	CreatorByWallet(ctx context.Context, q creator.Lookup) (creator.Creator, error)
	// ChallengeLock reads a challenge by id in env, of any tenant, locked
	// for update until the unit of work ends; NOT_FOUND when none.
	ChallengeLock(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeUpdate writes c's status, funding and its evidence,
	// version and update time when the stored version is prev. CONFLICT
	// otherwise.
	ChallengeUpdate(ctx context.Context, c Challenge, prev int64) error
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
	// RewardByAllocation reads the reward of an allocation key; NOT_FOUND
	// when none.
	RewardByAllocation(ctx context.Context, key string) (Reward, error)
	// RewardInsert stores a new reward. CONFLICT when its id or its
	// allocation key is taken.
	RewardInsert(ctx context.Context, r Reward) error
	// RewardUpdate writes r's state, funding, intent, signature, claim
	// attempts, timestamps, version and update time when the stored
	// version is prev. CONFLICT otherwise.
	RewardUpdate(ctx context.Context, r Reward, prev int64) error
}

// rewardEvent writes the outbox event of r as written.
func rewardEvent(ctx context.Context, st outbox.Writer, r Reward) error {
	payload, err := json.Marshal(map[string]any{"id": r.ID, "challengeId": r.ChallengeID, "projectId": r.ProjectID, "state": r.State,
		"fundingStatus": r.Funding, "recipientUserId": r.RecipientUserID, "wallet": r.Wallet.String(),
		"amountAtomic": strconv.FormatUint(r.AmountAtomic, 10), "mint": r.Mint.String(), "decimals": r.Decimals,
		"intentId": r.IntentID, "signature": r.Signature})
	if err != nil {
		return err
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: r.Scope.TenantID, WorkspaceID: r.Scope.WorkspaceID,
		Environment: string(r.Scope.Environment), Type: RewardEventType(r.State), SchemaVersion: 1, AggregateID: r.ID,
		AggregateVersion: r.Version, OccurredAt: r.UpdatedAt, Payload: payload})
	return err
}

// clock is a unit of work's single timestamp.
type clock interface{ Now() time.Time }

// moveReward applies e to r, one step of the table, with its outbox
// event; the caller writes the row (RewardUpdate with r.Version-1).
func moveReward(ctx context.Context, st interface {
	outbox.Writer
	clock
}, r *Reward, e RewardEvent) error {
	to, err := RewardTransition(r.State, e)
	if err != nil {
		return err
	}
	r.State, r.Version, r.UpdatedAt = to, r.Version+1, st.Now()
	return rewardEvent(ctx, st, *r)
}

// Allocation is one item of an allocation request.
type Allocation struct {
	// Wallet is the recipient's wallet: a creator must have verified it.
	Wallet string
	// AmountAtomic is the reward, a positive integer string of the
	// pool's mint's atomic units.
	AmountAtomic string
	// Reference names the reward within the challenge (a submission id);
	// "" means the wallet.
	Reference string
}

// AllocateRequest is what allocating rewards takes.
type AllocateRequest struct {
	// ChallengeID is the challenge of the project whose pool pays.
	ChallengeID string
	// Items are the rewards, 1 to MaxAllocations.
	Items []Allocation
	// IdempotencyKey is the request's Idempotency-Key, recorded on each
	// reward; RequestID the gateway's request id.
	IdempotencyKey string
	RequestID      string
}

// Allocate allocates rewards from the pool of a challenge of project
// projectID of p's workspace (package doc, Allocation). Needs
// reward.allocate reaching the project. Idempotent per item: an item whose
// allocation key (challenge and reference) has a reward already returns
// it when the wallet and amount are the same.
//
// Errors: INVALID_INPUT naming challengeId, items or items[i].<field>;
// NOT_FOUND (field projectId or challengeId); ACCESS_DENIED;
// INVALID_STATE_TRANSITION when the challenge is not WINNERS_SELECTED;
// CONFLICT (reason pool_not_funded) before the pool is FUNDED, (reason
// allocation_exists) for a reference already allocated otherwise;
// INVALID_AMOUNT (reason exceeds_pool) past the funded pool;
// WALLET_REQUIRED (field items[i].wallet) for a wallet no creator verified.
func (s *Service) Allocate(ctx context.Context, st AllocationStore, p *access.Principal, a *access.Authority, projectID string, in AllocateRequest) ([]Reward, error) {
	const op = "rewards.Allocate"
	if err := actor(op, p); err != nil {
		return nil, err
	}
	pr, err := ownProject(ctx, op, st, p, projectID)
	if err != nil {
		return nil, err
	}
	if err := reaches(op, p, a, access.RewardAllocate, pr); err != nil {
		return nil, err
	}
	switch {
	case in.ChallengeID == "":
		return nil, fault.Invalid(op, "challengeId", "challengeId is required.")
	case len(in.Items) == 0 || len(in.Items) > MaxAllocations:
		return nil, fault.Invalid(op, "items", "items holds 1 to 50 rewards.")
	}
	type item struct {
		wallet chain.Address
		amount uint64
		ref    string
	}
	items := make([]item, len(in.Items))
	seen := map[string]bool{}
	for i, it := range in.Items {
		field := "items[" + strconv.Itoa(i) + "]"
		w, err := token2022.ParsePublicKey(it.Wallet)
		if err != nil {
			return nil, fault.Invalid(op, field+".wallet", "wallet is a Solana public key, base58 text of 32 bytes.")
		}
		amt, err := parseAtomic(op, field+".amountAtomic", it.AmountAtomic)
		if err != nil {
			return nil, err
		}
		ref := it.Reference
		if ref == "" {
			ref = w.String()
		}
		if len(ref) > 200 {
			return nil, fault.Invalid(op, field+".reference", "reference is at most 200 bytes.")
		}
		if seen[ref] {
			return nil, fault.Invalid(op, field+".reference", "two items have the same reference.")
		}
		seen[ref] = true
		items[i] = item{wallet: w, amount: amt, ref: ref}
	}
	c, err := st.ChallengeLock(ctx, p.Environment, in.ChallengeID)
	if fault.Is(err, fault.NotFound) || err == nil && c.ProjectID != pr.ID {
		return nil, fault.E(op, fault.NotFound, "No such challenge of this project.").With("field", "challengeId")
	}
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if c.Status != StatusWinnersSelected {
		return nil, fault.E(op, fault.InvalidState, "Rewards are allocated while the challenge's winners are selected.").
			With("status", string(c.Status))
	}
	if c.Pool.Funding != FundingFunded && c.Pool.Funding != FundingClaimable {
		return nil, fault.E(op, fault.Conflict, "The pool is not funded: reconcile its funding once the treasury covers it.").
			With("reason", "pool_not_funded").With("fundingStatus", string(c.Pool.Funding))
	}
	existing, err := st.RewardsOfChallenge(ctx, c.ID)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	var allocated uint64
	for _, r := range existing {
		allocated += r.AmountAtomic
	}
	out := make([]Reward, 0, len(items))
	now := st.Now()
	opened := false
	for i, it := range items {
		field := "items[" + strconv.Itoa(i) + "]"
		key := c.ID + ":" + it.ref
		if r, err := st.RewardByAllocation(ctx, key); err == nil {
			if r.Wallet != it.wallet || r.AmountAtomic != it.amount {
				return nil, fault.E(op, fault.Conflict, "This reference is allocated already, to another wallet or amount.").
					With("field", field+".reference").With("reason", "allocation_exists").With("rewardId", r.ID)
			}
			out = append(out, r)
			continue
		} else if !fault.Is(err, fault.NotFound) {
			return nil, fault.Wrap(op, err)
		}
		if allocated+it.amount < allocated || allocated+it.amount > c.Pool.AmountAtomic {
			return nil, fault.E(op, fault.InvalidAmount, "The rewards exceed the funded pool.").With("field", field+".amountAtomic").
				With("reason", "exceeds_pool").With("poolAtomic", strconv.FormatUint(c.Pool.AmountAtomic, 10)).
				With("allocatedAtomic", strconv.FormatUint(allocated, 10))
		}
		allocated += it.amount
		cr, err := st.CreatorByWallet(ctx, creator.Lookup{Network: wallet.Network, Address: it.wallet.String(), ReaderTenantID: pr.Scope.TenantID})
		if fault.Is(err, fault.NotFound) {
			return nil, fault.E(op, fault.WalletRequired, "No creator has verified this wallet.").With("field", field+".wallet")
		}
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		r := Reward{ID: st.NewID(RewardPrefix), Version: 1, Scope: c.Scope, ProjectID: c.ProjectID, ChallengeID: c.ID,
			AllocationKey: key, Reference: it.ref, IdempotencyKey: in.IdempotencyKey, RecipientUserID: cr.UserID, Wallet: it.wallet,
			AmountAtomic: it.amount, Mint: c.Pool.Mint, Decimals: c.Pool.Decimals, State: StateAllocated, Funding: FundingClaimable,
			AllocatedByUserID: p.UserID, AllocatedAt: now, UpdatedAt: now}
		if err := st.RewardInsert(ctx, r); err != nil {
			return nil, fault.Wrap(op, err)
		}
		if err := rewardEvent(ctx, st, r); err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, _, err := ledger.New().Post(ctx, st, ledger.Movement{Scope: c.Scope, Ledger: ledger.Rewards, Type: ledger.TypeReserve,
			Reference: AllocationReference(r.ID), Decimals: int(c.Pool.Decimals), Actor: ledger.ActorOf(p), Postings: []ledger.Posting{
				{Account: PoolAccount(c.ID), Direction: ledger.Debit, Amount: money.Atomic(r.AmountAtomic)},
				{Account: PayableAccount(r.ID), Direction: ledger.Credit, Amount: money.Atomic(r.AmountAtomic)}}}); err != nil {
			return nil, fault.Wrap(op, err)
		}
		// The pool's funding is verified: the reward is claimable at once.
		if err := moveReward(ctx, st, &r, RewardEventFund); err != nil {
			return nil, err
		}
		if err := st.RewardUpdate(ctx, r, r.Version-1); err != nil {
			return nil, fault.Wrap(op, err)
		}
		if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionRewardAllocated, TargetType: TargetReward, TargetID: r.ID,
			RequestID: in.RequestID, After: map[string]any{"challengeId": c.ID, "wallet": r.Wallet.String(),
				"amountAtomic": strconv.FormatUint(r.AmountAtomic, 10), "mint": r.Mint.String(), "reference": r.Reference}}); err != nil {
			return nil, err
		}
		out = append(out, r)
		opened = true
	}
	if opened && c.Pool.Funding == FundingFunded {
		prev, from := c.Version, c.Pool.Funding
		if c.Pool.Funding, err = FundingTransition(c.Pool.Funding, FundingEventOpenClaims); err != nil {
			return nil, err
		}
		c.Version, c.UpdatedAt = c.Version+1, now
		if err := st.ChallengeUpdate(ctx, c, prev); err != nil {
			return nil, fault.Wrap(op, err)
		}
		if err := challengeEvent(ctx, st, c, EventFundingChanged, map[string]any{"from": from}); err != nil {
			return nil, fault.Wrap(op, err)
		}
	}
	return out, nil
}

// Mine returns up to limit of the rewards allocated to p's user, in p's
// environment and every tenant, newest first, with ids below before.
func (s *Service) Mine(ctx context.Context, st RewardLister, p *access.Principal, before string, limit int) ([]Reward, error) {
	const op = "rewards.Mine"
	if p == nil || p.UserID == "" {
		return nil, fault.E(op, fault.Unauthenticated, "")
	}
	out, err := st.RewardList(ctx, p.Environment, RewardFilter{RecipientUserID: p.UserID}, before, limit)
	return out, fault.Wrap(op, err)
}

// OfProject returns up to limit rewards of project projectID of p's
// workspace, newest first: members whose project.read reaches the project.
// NOT_FOUND for a project of another workspace; ACCESS_DENIED otherwise.
func (s *Service) OfProject(ctx context.Context, st RewardLister, p *access.Principal, a *access.Authority, projectID, before string, limit int) ([]Reward, error) {
	const op = "rewards.OfProject"
	if err := actor(op, p); err != nil {
		return nil, err
	}
	pr, err := ownProject(ctx, op, st, p, projectID)
	if err != nil {
		return nil, err
	}
	if err := reaches(op, p, a, access.ProjectRead, pr); err != nil {
		return nil, err
	}
	out, err := st.RewardList(ctx, p.Environment, RewardFilter{Scope: pr.Scope, ProjectID: pr.ID}, before, limit)
	return out, fault.Wrap(op, err)
}

// OfCreator returns up to limit rewards paid to wallet in p's environment,
// in every tenant, newest first: the creator profile's rewards, whose
// public fields only the route shows. INVALID_INPUT (field wallet) for a
// wallet that is not a public key, before any store call; NOT_FOUND when
// no creator verified the wallet.
func (s *Service) OfCreator(ctx context.Context, st RewardLister, p *access.Principal, walletText, before string, limit int) ([]Reward, error) {
	const op = "rewards.OfCreator"
	addr, err := creator.ParseWallet(walletText)
	if err != nil {
		return nil, err
	}
	if p == nil || p.UserID == "" {
		return nil, fault.E(op, fault.Unauthenticated, "")
	}
	if _, err := st.CreatorByWallet(ctx, creator.Lookup{Network: wallet.Network, Address: addr, ReaderTenantID: p.TenantID}); err != nil {
		if fault.Is(err, fault.NotFound) {
			return nil, fault.E(op, fault.NotFound, "No creator has verified this wallet.")
		}
		return nil, fault.Wrap(op, err)
	}
	out, err := st.RewardList(ctx, p.Environment, RewardFilter{Wallet: addr}, before, limit)
	return out, fault.Wrap(op, err)
}

// GetReward returns reward id as p reads it: its recipient, or a member
// of its project's workspace. NOT_FOUND otherwise.
func (s *Service) GetReward(ctx context.Context, st RewardReader, p *access.Principal, id string) (Reward, error) {
	const op = "rewards.GetReward"
	if p == nil || p.UserID == "" && p.WorkspaceID == "" {
		return Reward{}, fault.E(op, fault.Unauthenticated, "")
	}
	r, err := st.RewardGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) || err == nil && r.RecipientUserID != p.UserID &&
		(r.Scope.TenantID != p.TenantID || r.Scope.WorkspaceID != p.WorkspaceID) {
		return Reward{}, fault.E(op, fault.NotFound, "No such reward.")
	}
	return r, fault.Wrap(op, err)
}
