package rewards

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

// Ledger accounts and references of the rewards ledger.

// TreasuryAccount is the system account a pool's funding is drawn from:
// the treasury's commitment to pools of mint (negative balance: what it
// committed).
func TreasuryAccount(mint chain.Address) string { return "system:reward-treasury:" + mint.String() }

// PoolAccount is a funded pool's balance, credited by its funding and
// debited by each allocation: it can never go below zero, so allocation
// never exceeds the funded pool.
func PoolAccount(challengeID string) string { return "reward-pool:" + challengeID }

// PayableAccount is what a reward owes its recipient: credited by its
// allocation, debited by its distribution.
func PayableAccount(rewardID string) string { return "reward-payable:" + rewardID }

// DistributedAccount is the sink of distributed rewards of mint.
func DistributedAccount(mint chain.Address) string {
	return "system:reward-distributed:" + mint.String()
}

// TransferFeeAccount is what the mint withheld on payouts of mint (the
// treasury's gross-up).
func TransferFeeAccount(mint chain.Address) string {
	return "system:reward-transfer-fee:" + mint.String()
}

// FundingReference is the reference of a pool's funding movement.
func FundingReference(challengeID string) string { return "reward-funding:" + challengeID }

// AllocationReference is the reference of a reward's allocation movement.
func AllocationReference(rewardID string) string { return "reward-allocation:" + rewardID }

// FundingReader is what a funding reconciliation reads before its unit of
// work (Service.ReconcileFunding, Service.ReconcileReward): the
// challenge, or the reward and its challenge.
type FundingReader interface {
	ChallengeReader
	RewardReader
}

// FundingStore is a funding reconciliation's unit of work (RunFunc): the
// challenge locked and written by compare-and-set, the pools the
// treasury backs and their rewards (coverage), the rewards it suspends or
// opens, the funding movement in the rewards ledger and the outbox.
type FundingStore interface {
	ledger.Mover
	// ChallengeLock reads a challenge by id in env, of any tenant, locked
	// for update until the unit of work ends; NOT_FOUND when none.
	ChallengeLock(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeUpdate writes c's status, funding and its evidence,
	// version and update time when the stored version is prev. CONFLICT
	// otherwise.
	ChallengeUpdate(ctx context.Context, c Challenge, prev int64) error
	// ChallengesBacked returns every challenge of env whose pool is in
	// mint and whose funding is RESERVED, FUNDED or CLAIMABLE: the pools
	// the environment's treasury backs.
	ChallengesBacked(ctx context.Context, env access.Environment, mint chain.Address) ([]Challenge, error)
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
	// RewardGet reads a reward by id in env, of any tenant; NOT_FOUND
	// when none.
	RewardGet(ctx context.Context, env access.Environment, id string) (Reward, error)
	// RewardUpdate writes r's state, funding, intent, signature, claim
	// attempts, timestamps, version and update time when the stored
	// version is prev. CONFLICT otherwise.
	RewardUpdate(ctx context.Context, r Reward, prev int64) error
}

// env returns environment e's treasury. SERVICE_UNAVAILABLE without one.
func (s *Service) env(op string, e access.Environment) (Environment, error) {
	c, ok := s.cfg.Environments[e]
	if !ok || c.Client == nil || c.Signer == nil {
		return Environment{}, fault.E(op, fault.ServiceUnavailable, "No reward treasury is configured for this environment.").
			With("environment", string(e))
	}
	return c, nil
}

// Treasury returns environment e's reward treasury wallet, and whether
// one is configured.
func (s *Service) Treasury(e access.Environment) (chain.Address, bool) {
	c, err := s.env("rewards.Treasury", e)
	if err != nil {
		return chain.Address{}, false
	}
	return c.Signer.Address(), true
}

// reading is what a funding reconciliation read from the cluster, before
// its unit of work.
type reading struct {
	account   chain.Address
	fee       token2022.TransferFee
	final     chain.TokenAmount
	confirmed chain.TokenAmount
}

// unreadable is BALANCE_UNAVAILABLE: never zero, never a guess.
func unreadable(op, what string, err error) error {
	return &fault.Error{Op: op, Code: fault.BalanceUnavailable, Message: "The treasury's balance cannot be read from the cluster now.",
		Details: map[string]any{"reason": "cluster_unreadable", "read": what}, Err: err}
}

// read reads the treasury's token account of mint at finalized and
// confirmed commitment, and the mint's transfer fee in force. A missing
// account holds nothing (zero); any other failure is BALANCE_UNAVAILABLE.
func read(ctx context.Context, op string, e Environment, mint chain.Address) (reading, error) {
	r := reading{account: token2022.AssociatedTokenAddress(e.Signer.Address(), mint)}
	acct, err := e.Client.GetAccountInfo(ctx, mint, chain.Finalized)
	if err != nil {
		return reading{}, unreadable(op, "mint", err)
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil {
		return reading{}, unreadable(op, "mint", err)
	}
	if cfg, ok := m.TransferFeeConfig(); ok {
		ep, err := e.Client.GetEpochInfo(ctx, chain.Finalized)
		if err != nil {
			return reading{}, unreadable(op, "epochInfo", err)
		}
		r.fee = cfg.EpochFee(ep.Epoch)
	}
	for _, c := range []struct {
		into       *chain.TokenAmount
		commitment chain.Commitment
	}{{&r.final, chain.Finalized}, {&r.confirmed, chain.Confirmed}} {
		b, err := e.Client.GetTokenAccountBalance(ctx, r.account, c.commitment)
		switch {
		case errors.Is(err, chain.ErrAccountNotFound):
			b = chain.TokenAmount{Slot: b.Slot}
		case err != nil:
			return reading{}, unreadable(op, "balance."+string(c.commitment), err)
		}
		*c.into = b
	}
	return r, nil
}

// owed is what pool c still owes, grossed up for the transfer fee at the
// current epoch, each reward as its own transfer: every unpaid reward's
// gross, and the gross of the part of the pool not allocated yet.
func owed(c Challenge, rs []Reward, fee token2022.TransferFee) (uint64, error) {
	var total money.Sum
	add := func(net uint64) error {
		if net == 0 {
			return nil
		}
		g, _, err := intent.GrossUp(net, fee)
		if err != nil {
			return err
		}
		total, err = total.AddAtomic(money.Atomic(g))
		return err
	}
	var allocated uint64
	for _, r := range rs {
		allocated += r.AmountAtomic
		if !r.State.Paid() {
			if err := add(r.AmountAtomic); err != nil {
				return 0, err
			}
		}
	}
	if allocated < c.Pool.AmountAtomic {
		if err := add(c.Pool.AmountAtomic - allocated); err != nil {
			return 0, err
		}
	}
	return strconv.ParseUint(total.String(), 10, 64)
}

// required is what the treasury must hold for pool c: what c and every
// pool ahead of it in the coverage order still owe. The order is the
// order of first funding (oldest first, then id); a pool never funded
// comes after every funded one. A pool already DISTRIBUTED owes nothing.
func required(ctx context.Context, st FundingStore, c Challenge, fee token2022.TransferFee) (uint64, error) {
	backed, err := st.ChallengesBacked(ctx, c.Scope.Environment, c.Pool.Mint)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(backed, func(x Challenge) bool { return x.ID == c.ID }) {
		backed = append(backed, c)
	}
	key := func(x Challenge) (bool, int64, string) {
		return x.Pool.FundedAt.IsZero(), x.Pool.FundedAt.UnixNano(), x.ID
	}
	slices.SortFunc(backed, func(a, b Challenge) int {
		az, at, aid := key(a)
		bz, bt, bid := key(b)
		switch {
		case az != bz:
			if az {
				return 1
			}
			return -1
		case at != bt:
			if at < bt {
				return -1
			}
			return 1
		case aid < bid:
			return -1
		case aid > bid:
			return 1
		}
		return 0
	})
	var total uint64
	for _, x := range backed {
		if x.ID == c.ID {
			x = c
		}
		rs, err := st.RewardsOfChallenge(ctx, x.ID)
		if err != nil {
			return 0, err
		}
		o, err := owed(x, rs, fee)
		if err != nil {
			return 0, err
		}
		if total+o < total {
			return 0, fault.E("rewards.required", fault.InvalidAmount, "the pools' total overflows")
		}
		total += o
		if x.ID == c.ID {
			break
		}
	}
	return total, nil
}

// ReconcileFunding reads the treasury's token account of challenge id's
// mint on the environment's cluster and moves the pool's funding by what
// it shows (package doc, Funding), recording the slot, the balance and
// what was required as evidence. p is a member holding reward.reconcile
// (the challenge must be of its workspace), or internal is true (an
// internal-scope key: any challenge of its environment).
//
// Errors: NOT_FOUND; BALANCE_UNAVAILABLE when the cluster cannot be read
// (nothing changes); SERVICE_UNAVAILABLE without a treasury; CONFLICT
// when the challenge changed meanwhile.
func (s *Service) ReconcileFunding(ctx context.Context, rd FundingReader, run RunFunc, p *access.Principal, internal bool, id string) (Challenge, error) {
	const op = "rewards.ReconcileFunding"
	c, err := s.readChallenge(ctx, op, rd, p, internal, id)
	if err != nil {
		return Challenge{}, err
	}
	return s.reconcile(ctx, run, c)
}

// ReconcileReward reconciles the funding of reward id's pool
// (ReconcileFunding) and returns the reward as it stands after. The
// reward must be of p's workspace, unless internal.
func (s *Service) ReconcileReward(ctx context.Context, rd FundingReader, run RunFunc, p *access.Principal, internal bool, id string) (Reward, error) {
	const op = "rewards.ReconcileReward"
	r, err := rd.RewardGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) || err == nil && !internal && (r.Scope.TenantID != p.TenantID || r.Scope.WorkspaceID != p.WorkspaceID) {
		return Reward{}, fault.E(op, fault.NotFound, "No such reward.")
	}
	if err != nil {
		return Reward{}, fault.Wrap(op, err)
	}
	c, err := rd.ChallengeGet(ctx, r.Scope.Environment, r.ChallengeID)
	if err != nil {
		return Reward{}, fault.Wrap(op, err)
	}
	e, err := s.env(op, c.Scope.Environment)
	if err != nil {
		return Reward{}, err
	}
	reading, err := read(ctx, op, e, c.Pool.Mint)
	if err != nil {
		return Reward{}, err
	}
	err = run(ctx, func(st FundingStore) error {
		cur, err := st.ChallengeLock(ctx, c.Scope.Environment, c.ID)
		if err != nil {
			return err
		}
		if _, err := s.applyReading(ctx, st, cur, reading); err != nil {
			return err
		}
		r, err = st.RewardGet(ctx, r.Scope.Environment, r.ID)
		return err
	})
	if err != nil {
		return Reward{}, fault.Wrap(op, err)
	}
	return r, nil
}

// readChallenge reads challenge id for p: of its workspace, or of its
// environment when internal.
func (s *Service) readChallenge(ctx context.Context, op string, rd FundingReader, p *access.Principal, internal bool, id string) (Challenge, error) {
	if !internal {
		return s.Get(ctx, rd, p, id)
	}
	c, err := rd.ChallengeGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) {
		return Challenge{}, fault.E(op, fault.NotFound, "No such challenge.")
	}
	return c, fault.Wrap(op, err)
}

// reconcile reads the cluster for c's pool, then moves it in one unit of
// work.
func (s *Service) reconcile(ctx context.Context, run RunFunc, c Challenge) (Challenge, error) {
	const op = "rewards.reconcile"
	e, err := s.env(op, c.Scope.Environment)
	if err != nil {
		return Challenge{}, err
	}
	rd, err := read(ctx, op, e, c.Pool.Mint)
	if err != nil {
		return Challenge{}, err
	}
	var out Challenge
	err = run(ctx, func(st FundingStore) error {
		cur, err := st.ChallengeLock(ctx, c.Scope.Environment, c.ID)
		if err != nil {
			return err
		}
		out, err = s.applyReading(ctx, st, cur, rd)
		return err
	})
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	return out, nil
}

// applyReading moves pool c by reading rd in st's unit of work:
//   - covered at finalized: ANNOUNCED or RESERVED -> FUNDED (the funding
//     movement posted once), then CLAIMABLE with its ALLOCATED rewards
//     when it has any;
//   - short at finalized: FUNDED or CLAIMABLE -> RESERVED, its CLAIMABLE
//     rewards -> ALLOCATED (a claim in flight goes on: its transaction is
//     signed; if it fails, the reward returns to ALLOCATED); ANNOUNCED ->
//     RESERVED when the balance covers it at confirmed; a RESERVED pool
//     never funded -> ANNOUNCED when it does not;
//   - DISTRIBUTED never moves.
//
// The evidence is written whatever moved.
func (s *Service) applyReading(ctx context.Context, st FundingStore, c Challenge, rd reading) (Challenge, error) {
	const op = "rewards.applyReading"
	need, err := required(ctx, st, c, rd.fee)
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	now := st.Now()
	prev, from := c.Version, c.Pool.Funding
	c.Version, c.UpdatedAt = c.Version+1, now
	c.Pool.Evidence = Evidence{TreasuryAccount: rd.account, Slot: rd.final.Slot, BalanceAtomic: rd.final.Amount, RequiredAtomic: need,
		CheckedAt: now}
	rs, err := st.RewardsOfChallenge(ctx, c.ID)
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	covered := rd.final.Amount >= need
	var moves []FundingEvent
	var rewardMove RewardEvent
	switch f := c.Pool.Funding; {
	case f == FundingDistributed:
	case covered && (f == FundingAnnounced || f == FundingReserved):
		moves = append(moves, FundingEventFund)
		if len(rs) > 0 {
			moves, rewardMove = append(moves, FundingEventOpenClaims), RewardEventFund
		}
	case !covered && (f == FundingFunded || f == FundingClaimable):
		moves, rewardMove = append(moves, FundingEventShortfall), RewardEventSuspend
	case !covered && f == FundingAnnounced && rd.confirmed.Amount >= need:
		moves = append(moves, FundingEventReserve)
	case !covered && f == FundingReserved && c.Pool.FundedAt.IsZero() && rd.confirmed.Amount < need:
		moves = append(moves, FundingEventLapse)
	}
	for _, e := range moves {
		if c.Pool.Funding, err = FundingTransition(c.Pool.Funding, e); err != nil {
			return Challenge{}, err
		}
		if e == FundingEventFund {
			if c.Pool.FundedAt.IsZero() {
				c.Pool.FundedAt = now
			}
			if err := postFunding(ctx, st, c); err != nil {
				return Challenge{}, fault.Wrap(op, err)
			}
		}
	}
	if err := st.ChallengeUpdate(ctx, c, prev); err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if c.Pool.Funding != from {
		if err := challengeEvent(ctx, st, c, EventFundingChanged, map[string]any{"from": from, "evidence": evidenceBody(c.Pool.Evidence)}); err != nil {
			return Challenge{}, fault.Wrap(op, err)
		}
	}
	if rewardMove != "" {
		for _, r := range rs {
			want := StateAllocated
			if rewardMove == RewardEventSuspend {
				want = StateClaimable
			}
			if r.State != want {
				continue
			}
			if err := moveReward(ctx, st, &r, rewardMove); err != nil {
				return Challenge{}, err
			}
			r.Funding = c.Pool.Funding
			if err := st.RewardUpdate(ctx, r, r.Version-1); err != nil {
				return Challenge{}, fault.Wrap(op, err)
			}
		}
	}
	return c, nil
}

// evidenceBody is the outbox form of e.
func evidenceBody(e Evidence) map[string]any {
	return map[string]any{"treasuryAccount": e.TreasuryAccount.String(), "slot": e.Slot,
		"balanceAtomic": strconv.FormatUint(e.BalanceAtomic, 10), "requiredAtomic": strconv.FormatUint(e.RequiredAtomic, 10),
		"commitment": string(chain.Finalized)}
}

// postFunding posts pool c's funding movement in the rewards ledger,
// once: its reference is the pool's, so funding it again after a
// shortfall posts nothing.
func postFunding(ctx context.Context, st ledger.Mover, c Challenge) error {
	_, _, err := ledger.New().Post(ctx, st, ledger.Movement{Scope: c.Scope, Ledger: ledger.Rewards, Type: ledger.TypeGrant,
		Reference: FundingReference(c.ID), Decimals: int(c.Pool.Decimals), Postings: []ledger.Posting{
			{Account: TreasuryAccount(c.Pool.Mint), Direction: ledger.Debit, Amount: money.Atomic(c.Pool.AmountAtomic)},
			{Account: PoolAccount(c.ID), Direction: ledger.Credit, Amount: money.Atomic(c.Pool.AmountAtomic)}}})
	return err
}

// maybeDistributed moves c's pool CLAIMABLE -> DISTRIBUTED when its
// allocation is over (REWARDS_ALLOCATED or COMPLETED) and every reward of
// it is paid. c is written by the caller.
func (s *Service) maybeDistributed(ctx context.Context, st poolRewards, c *Challenge) error {
	const op = "rewards.maybeDistributed"
	if c.Pool.Funding != FundingClaimable || (c.Status != StatusRewardsAllocated && c.Status != StatusCompleted) {
		return nil
	}
	rs, err := st.RewardsOfChallenge(ctx, c.ID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if len(rs) == 0 || slices.ContainsFunc(rs, func(r Reward) bool { return !r.State.Paid() }) {
		return nil
	}
	from := c.Pool.Funding
	if c.Pool.Funding, err = FundingTransition(c.Pool.Funding, FundingEventDistribute); err != nil {
		return err
	}
	return challengeEvent(ctx, st, *c, EventFundingChanged, map[string]any{"from": from})
}

// TreasuryReader reads what funding reconciliations observed of an
// environment's treasury (Service.Payouts).
type TreasuryReader interface {
	// ChallengeNewestEvidence returns the challenge of env whose funding
	// evidence is the newest (by its CheckedAt); NOT_FOUND when no
	// reconciliation has read the treasury in env.
	ChallengeNewestEvidence(ctx context.Context, env access.Environment) (Challenge, error)
}

// Reasons of Payouts.Reason.
const (
	// ReasonNotConfigured: the environment has no reward treasury (its
	// cluster or its signer is missing).
	ReasonNotConfigured = "not_configured"
	// ReasonNotChecked: no funding reconciliation has read the current
	// treasury's token account on the cluster yet.
	ReasonNotChecked = "not_checked"
)

// Payouts is the reward payouts' state in an environment, as the feature
// view reports it: configured is not verified, and a configured signer
// alone is no observation of the treasury.
type Payouts struct {
	// Configured reports a reward treasury: a cluster and a signer.
	Configured bool
	// Verified reports that a funding reconciliation read the current
	// treasury's Token-2022 account on the environment's cluster at
	// finalized (the newest evidence of the environment is of the
	// signer's account): its state is readable there.
	Verified bool
	// Enabled reports that payouts are served: configured and verified.
	// No reward is claimable before a reconciliation funded its pool, so
	// nothing is payable before the treasury was read.
	Enabled bool
	// Reason says why not: not_configured, or not_checked when the
	// current treasury was never read; "" when enabled.
	Reason string
	// CheckedAt is when that reading was taken; zero when none.
	CheckedAt time.Time
}

// Payouts returns env's reward payouts' state: its treasury's
// configuration and the newest reading of it that funding reconciliation
// recorded, read through st. The cluster is not called. A store that
// cannot be read is an error.
func (s *Service) Payouts(ctx context.Context, st TreasuryReader, env access.Environment) (Payouts, error) {
	const op = "rewards.Payouts"
	e, err := s.env(op, env)
	if err != nil {
		return Payouts{Reason: ReasonNotConfigured}, nil
	}
	out := Payouts{Configured: true, Reason: ReasonNotChecked}
	c, err := st.ChallengeNewestEvidence(ctx, env)
	switch {
	case fault.Is(err, fault.NotFound):
	case err != nil:
		return Payouts{}, fault.Wrap(op, err)
	case !c.Pool.Evidence.CheckedAt.IsZero() && c.Pool.Evidence.TreasuryAccount == token2022.AssociatedTokenAddress(e.Signer.Address(), c.Pool.Mint):
		// A reading of another signer's account (before a key rotation)
		// proves nothing of this one.
		out = Payouts{Configured: true, Verified: true, Enabled: true, CheckedAt: c.Pool.Evidence.CheckedAt}
	}
	return out, nil
}

// Configured reports whether env has a reward treasury, so that claims
// can be paid out there.
func (s *Service) Configured(env access.Environment) bool {
	_, err := s.env("rewards.Configured", env)
	return err == nil
}
