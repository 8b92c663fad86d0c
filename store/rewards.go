package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/rewards"
)

// Tx implements the rewards' ports: the challenge lifecycle's, funding
// reconciliation's, allocation's, the reward reads', the claim's and the
// payout's units of work (with the intent domain's), and the treasury's
// newest reading.
var (
	_ rewards.ChallengeReader = (*Tx)(nil)
	_ rewards.ChallengeLister = (*Tx)(nil)
	_ rewards.ChallengeStore  = (*Tx)(nil)
	_ rewards.FundingReader   = (*Tx)(nil)
	_ rewards.FundingStore    = (*Tx)(nil)
	_ rewards.RewardReader    = (*Tx)(nil)
	_ rewards.RewardLister    = (*Tx)(nil)
	_ rewards.AllocationStore = (*Tx)(nil)
	_ rewards.ClaimReader     = (*Tx)(nil)
	_ rewards.ClaimStore      = (*Tx)(nil)
	_ rewards.PayoutStore     = (*Tx)(nil)
	_ rewards.TreasuryReader  = (*Tx)(nil)
)

type challengeRow struct {
	ID                    string     `bun:"id"`
	TenantID              string     `bun:"tenant_id"`
	WorkspaceID           string     `bun:"workspace_id"`
	Environment           string     `bun:"environment"`
	ProjectID             string     `bun:"project_id"`
	Title                 string     `bun:"title"`
	Rules                 string     `bun:"rules"`
	OpensAt               time.Time  `bun:"opens_at"`
	ClosesAt              time.Time  `bun:"closes_at"`
	Status                string     `bun:"status"`
	PoolAtomic            string     `bun:"pool_atomic"`
	Mint                  string     `bun:"mint"`
	Decimals              uint8      `bun:"decimals"`
	FundingStatus         string     `bun:"funding_status"`
	TreasuryAccount       string     `bun:"treasury_account"`
	FundingSlot           uint64     `bun:"funding_slot"`
	FundingBalanceAtomic  string     `bun:"funding_balance_atomic"`
	FundingRequiredAtomic string     `bun:"funding_required_atomic"`
	FundingCheckedAt      *time.Time `bun:"funding_checked_at"`
	FundedAt              *time.Time `bun:"funded_at"`
	CreatedByUserID       string     `bun:"created_by_user_id"`
	Version               int64      `bun:"version"`
	CreatedAt             time.Time  `bun:"created_at"`
	UpdatedAt             time.Time  `bun:"updated_at"`
}

// challengeColumns are the columns a challengeRow reads, the pool as text.
const challengeColumns = `id, tenant_id, workspace_id, environment, project_id, title, rules, opens_at, closes_at, status,
	CAST(pool_atomic AS TEXT) AS pool_atomic, mint, decimals, funding_status, treasury_account, funding_slot, funding_balance_atomic,
	funding_required_atomic, funding_checked_at, funded_at, created_by_user_id, version, created_at, updated_at`

// optTime is t as a nullable column: NULL for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// fromOpt is a nullable column as a time: zero for NULL.
func fromOpt(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// optUint parses an optional decimal column ("" is zero).
func optUint(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// optUintText is v as an optional decimal column.
func optUintText(v uint64, set bool) string {
	if !set {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

func (r challengeRow) challenge(op string) (rewards.Challenge, error) {
	c := rewards.Challenge{ID: r.ID, Version: r.Version,
		Scope:     access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		ProjectID: r.ProjectID, Title: r.Title, Rules: r.Rules,
		Window: rewards.Window{OpensAt: r.OpensAt.UTC(), ClosesAt: r.ClosesAt.UTC()}, Status: rewards.Status(r.Status),
		CreatedByUserID: r.CreatedByUserID, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	var err error
	if c.Pool.AmountAtomic, err = strconv.ParseUint(r.PoolAtomic, 10, 64); err != nil {
		return rewards.Challenge{}, corrupt(op, err)
	}
	if c.Pool.Mint, err = token2022.ParsePublicKey(r.Mint); err != nil {
		return rewards.Challenge{}, corrupt(op, err)
	}
	c.Pool.Decimals, c.Pool.Funding, c.Pool.FundedAt = r.Decimals, rewards.Funding(r.FundingStatus), fromOpt(r.FundedAt)
	if r.TreasuryAccount != "" {
		ev := rewards.Evidence{Slot: r.FundingSlot, CheckedAt: fromOpt(r.FundingCheckedAt)}
		if ev.TreasuryAccount, err = token2022.ParsePublicKey(r.TreasuryAccount); err != nil {
			return rewards.Challenge{}, corrupt(op, err)
		}
		if ev.BalanceAtomic, err = optUint(r.FundingBalanceAtomic); err != nil {
			return rewards.Challenge{}, corrupt(op, err)
		}
		if ev.RequiredAtomic, err = optUint(r.FundingRequiredAtomic); err != nil {
			return rewards.Challenge{}, corrupt(op, err)
		}
		c.Pool.Evidence = ev
	}
	return c, nil
}

// evidenceColumns returns the evidence of c as its column values.
func evidenceColumns(c rewards.Challenge) (account string, slot uint64, balance, required string, checked *time.Time) {
	e := c.Pool.Evidence
	if e.CheckedAt.IsZero() {
		return "", 0, "", "", nil
	}
	return e.TreasuryAccount.String(), e.Slot, optUintText(e.BalanceAtomic, true), optUintText(e.RequiredAtomic, true), optTime(e.CheckedAt)
}

// ChallengeInsert implements rewards.ChallengeStore.
func (tx *Tx) ChallengeInsert(ctx context.Context, c rewards.Challenge) error {
	const op = "store.ChallengeInsert"
	acct, slot, bal, req, checked := evidenceColumns(c)
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO challenges (id, tenant_id, workspace_id, environment, project_id, title, rules,
		opens_at, closes_at, status, pool_atomic, mint, decimals, funding_status, treasury_account, funding_slot, funding_balance_atomic,
		funding_required_atomic, funding_checked_at, funded_at, created_by_user_id, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		c.ID, c.Scope.TenantID, c.Scope.WorkspaceID, string(c.Scope.Environment), c.ProjectID, c.Title, c.Rules,
		c.Window.OpensAt.UTC(), c.Window.ClosesAt.UTC(), string(c.Status), strconv.FormatUint(c.Pool.AmountAtomic, 10),
		c.Pool.Mint.String(), c.Pool.Decimals, string(c.Pool.Funding), acct, slot, bal, req, checked, optTime(c.Pool.FundedAt),
		c.CreatedByUserID, c.Version, c.CreatedAt.UTC(), c.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The challenge exists.").With("challengeId", c.ID)
	}
	return nil
}

// scanChallenge reads one challenge row.
func (tx *Tx) scanChallenge(ctx context.Context, op, query string, args ...any) (rewards.Challenge, error) {
	var r challengeRow
	if err := tx.idb.NewRaw(query, args...).Scan(ctx, &r); err != nil {
		return rewards.Challenge{}, notFound(op, err)
	}
	return r.challenge(op)
}

// ChallengeGet implements rewards.ChallengeReader.
func (tx *Tx) ChallengeGet(ctx context.Context, env access.Environment, id string) (rewards.Challenge, error) {
	return tx.scanChallenge(ctx, "store.ChallengeGet", `SELECT `+challengeColumns+` FROM challenges WHERE id = ? AND environment = ?`,
		id, string(env))
}

// ChallengeLock implements the rewards' units of work (ChallengeStore, FundingStore,
// AllocationStore, PayoutStore): FOR UPDATE on PostgreSQL;
// SQLite's single writer.
func (tx *Tx) ChallengeLock(ctx context.Context, env access.Environment, id string) (rewards.Challenge, error) {
	return tx.scanChallenge(ctx, "store.ChallengeLock", `SELECT `+challengeColumns+` FROM challenges WHERE id = ? AND environment = ?`+
		tx.rowLock(), id, string(env))
}

// ChallengeUpdate implements the rewards' units of work (ChallengeStore, FundingStore,
// AllocationStore, PayoutStore).
func (tx *Tx) ChallengeUpdate(ctx context.Context, c rewards.Challenge, prev int64) error {
	const op = "store.ChallengeUpdate"
	acct, slot, bal, req, checked := evidenceColumns(c)
	res, err := tx.idb.ExecContext(ctx, `UPDATE challenges SET status = ?, funding_status = ?, treasury_account = ?, funding_slot = ?,
		funding_balance_atomic = ?, funding_required_atomic = ?, funding_checked_at = ?, funded_at = ?, version = ?, updated_at = ?
		WHERE id = ? AND version = ?`, string(c.Status), string(c.Pool.Funding), acct, slot, bal, req, checked, optTime(c.Pool.FundedAt),
		c.Version, c.UpdatedAt.UTC(), c.ID, prev)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The challenge changed meanwhile.").With("challengeId", c.ID)
	}
	return nil
}

// scanChallenges reads challenge rows.
func (tx *Tx) scanChallenges(ctx context.Context, op, query string, args ...any) ([]rewards.Challenge, error) {
	var rows []challengeRow
	if err := tx.idb.NewRaw(query, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]rewards.Challenge, 0, len(rows))
	for _, r := range rows {
		c, err := r.challenge(op)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ChallengeList implements rewards.ChallengeLister.
func (tx *Tx) ChallengeList(ctx context.Context, sc access.Scope, before string, limit int) ([]rewards.Challenge, error) {
	q := `SELECT ` + challengeColumns + ` FROM challenges WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{sc.TenantID, sc.WorkspaceID, string(sc.Environment)}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	return tx.scanChallenges(ctx, "store.ChallengeList", q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}

// ChallengeNewestEvidence implements rewards.TreasuryReader: the newest
// funding evidence of env, by its reading's time (then id).
func (tx *Tx) ChallengeNewestEvidence(ctx context.Context, env access.Environment) (rewards.Challenge, error) {
	return tx.scanChallenge(ctx, "store.ChallengeNewestEvidence", `SELECT `+challengeColumns+` FROM challenges
		WHERE environment = ? AND funding_checked_at IS NOT NULL ORDER BY funding_checked_at DESC, id DESC LIMIT 1`, string(env))
}

// ChallengesBacked implements rewards.FundingStore.
func (tx *Tx) ChallengesBacked(ctx context.Context, env access.Environment, mint chain.Address) ([]rewards.Challenge, error) {
	return tx.scanChallenges(ctx, "store.ChallengesBacked", `SELECT `+challengeColumns+` FROM challenges
		WHERE environment = ? AND mint = ? AND funding_status IN ('RESERVED', 'FUNDED', 'CLAIMABLE') ORDER BY id`, string(env), mint.String())
}

type rewardRow struct {
	ID                string     `bun:"id"`
	TenantID          string     `bun:"tenant_id"`
	WorkspaceID       string     `bun:"workspace_id"`
	Environment       string     `bun:"environment"`
	ProjectID         string     `bun:"project_id"`
	ChallengeID       string     `bun:"challenge_id"`
	AllocationKey     string     `bun:"allocation_key"`
	IdempotencyKey    string     `bun:"idempotency_key"`
	Reference         string     `bun:"reference"`
	RecipientUserID   string     `bun:"recipient_user_id"`
	Wallet            string     `bun:"wallet"`
	AmountAtomic      string     `bun:"amount_atomic"`
	Mint              string     `bun:"mint"`
	Decimals          uint8      `bun:"decimals"`
	State             string     `bun:"state"`
	FundingStatus     string     `bun:"funding_status"`
	IntentID          string     `bun:"intent_id"`
	IntentState       string     `bun:"intent_state"`
	Signature         string     `bun:"signature"`
	ClaimAttempts     int        `bun:"claim_attempts"`
	AllocatedByUserID string     `bun:"allocated_by_user_id"`
	AllocatedAt       time.Time  `bun:"allocated_at"`
	ClaimedAt         *time.Time `bun:"claimed_at"`
	DistributedAt     *time.Time `bun:"distributed_at"`
	Version           int64      `bun:"version"`
	UpdatedAt         time.Time  `bun:"updated_at"`
}

// rewardColumns are the columns a rewardRow reads, the amount as text.
const rewardColumns = `id, tenant_id, workspace_id, environment, project_id, challenge_id, allocation_key, idempotency_key, reference,
	recipient_user_id, wallet, CAST(amount_atomic AS TEXT) AS amount_atomic, mint, decimals, state, funding_status, intent_id,
	intent_state, signature, claim_attempts, allocated_by_user_id, allocated_at, claimed_at, distributed_at, version, updated_at`

func (r rewardRow) reward(op string) (rewards.Reward, error) {
	out := rewards.Reward{ID: r.ID, Version: r.Version,
		Scope:     access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		ProjectID: r.ProjectID, ChallengeID: r.ChallengeID, AllocationKey: r.AllocationKey, IdempotencyKey: r.IdempotencyKey,
		Reference: r.Reference, RecipientUserID: r.RecipientUserID, Decimals: r.Decimals, State: rewards.State(r.State),
		Funding: rewards.Funding(r.FundingStatus), IntentID: r.IntentID, IntentState: r.IntentState, Signature: r.Signature,
		ClaimAttempts: r.ClaimAttempts, AllocatedByUserID: r.AllocatedByUserID, AllocatedAt: r.AllocatedAt.UTC(),
		ClaimedAt: fromOpt(r.ClaimedAt), DistributedAt: fromOpt(r.DistributedAt), UpdatedAt: r.UpdatedAt.UTC()}
	var err error
	if out.AmountAtomic, err = strconv.ParseUint(r.AmountAtomic, 10, 64); err != nil {
		return rewards.Reward{}, corrupt(op, err)
	}
	if out.Wallet, err = token2022.ParsePublicKey(r.Wallet); err != nil {
		return rewards.Reward{}, corrupt(op, err)
	}
	if out.Mint, err = token2022.ParsePublicKey(r.Mint); err != nil {
		return rewards.Reward{}, corrupt(op, err)
	}
	return out, nil
}

// RewardInsert implements rewards.AllocationStore.
func (tx *Tx) RewardInsert(ctx context.Context, r rewards.Reward) error {
	const op = "store.RewardInsert"
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO rewards (id, tenant_id, workspace_id, environment, project_id, challenge_id,
		allocation_key, idempotency_key, reference, recipient_user_id, wallet, amount_atomic, mint, decimals, state, funding_status,
		intent_id, intent_state, signature, claim_attempts, allocated_by_user_id, allocated_at, claimed_at, distributed_at, version,
		updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.ID, r.Scope.TenantID, r.Scope.WorkspaceID, string(r.Scope.Environment), r.ProjectID, r.ChallengeID, r.AllocationKey,
		r.IdempotencyKey, r.Reference, r.RecipientUserID, r.Wallet.String(), strconv.FormatUint(r.AmountAtomic, 10), r.Mint.String(),
		r.Decimals, string(r.State), string(r.Funding), r.IntentID, r.IntentState, r.Signature, r.ClaimAttempts, r.AllocatedByUserID,
		r.AllocatedAt.UTC(), optTime(r.ClaimedAt), optTime(r.DistributedAt), r.Version, r.UpdatedAt.UTC())
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The reward or its allocation exists.").With("rewardId", r.ID).With("reason", "allocation_exists")
	}
	return nil
}

// scanReward reads one reward row.
func (tx *Tx) scanReward(ctx context.Context, op, query string, args ...any) (rewards.Reward, error) {
	var r rewardRow
	if err := tx.idb.NewRaw(query, args...).Scan(ctx, &r); err != nil {
		return rewards.Reward{}, notFound(op, err)
	}
	return r.reward(op)
}

// RewardGet implements rewards.RewardReader.
func (tx *Tx) RewardGet(ctx context.Context, env access.Environment, id string) (rewards.Reward, error) {
	return tx.scanReward(ctx, "store.RewardGet", `SELECT `+rewardColumns+` FROM rewards WHERE id = ? AND environment = ?`, id, string(env))
}

// RewardLock implements rewards.ClaimStore.
func (tx *Tx) RewardLock(ctx context.Context, env access.Environment, id string) (rewards.Reward, error) {
	return tx.scanReward(ctx, "store.RewardLock", `SELECT `+rewardColumns+` FROM rewards WHERE id = ? AND environment = ?`+tx.rowLock(),
		id, string(env))
}

// RewardByAllocation implements rewards.AllocationStore.
func (tx *Tx) RewardByAllocation(ctx context.Context, key string) (rewards.Reward, error) {
	return tx.scanReward(ctx, "store.RewardByAllocation", `SELECT `+rewardColumns+` FROM rewards WHERE allocation_key = ?`, key)
}

// RewardLockByIntent implements rewards.PayoutStore.
func (tx *Tx) RewardLockByIntent(ctx context.Context, intentID string) (rewards.Reward, error) {
	if intentID == "" {
		return rewards.Reward{}, fault.E("store.RewardLockByIntent", fault.NotFound, "")
	}
	return tx.scanReward(ctx, "store.RewardLockByIntent", `SELECT `+rewardColumns+` FROM rewards WHERE intent_id = ?`+tx.rowLock(), intentID)
}

// RewardUpdate implements the rewards' units of work (FundingStore,
// AllocationStore, ClaimStore, PayoutStore).
func (tx *Tx) RewardUpdate(ctx context.Context, r rewards.Reward, prev int64) error {
	const op = "store.RewardUpdate"
	res, err := tx.idb.ExecContext(ctx, `UPDATE rewards SET state = ?, funding_status = ?, intent_id = ?, intent_state = ?, signature = ?,
		claim_attempts = ?, claimed_at = ?, distributed_at = ?, version = ?, updated_at = ? WHERE id = ? AND version = ?`,
		string(r.State), string(r.Funding), r.IntentID, r.IntentState, r.Signature, r.ClaimAttempts, optTime(r.ClaimedAt),
		optTime(r.DistributedAt), r.Version, r.UpdatedAt.UTC(), r.ID, prev)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The reward changed meanwhile.").With("rewardId", r.ID)
	}
	return nil
}

// scanRewards reads reward rows.
func (tx *Tx) scanRewards(ctx context.Context, op, query string, args ...any) ([]rewards.Reward, error) {
	var rows []rewardRow
	if err := tx.idb.NewRaw(query, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]rewards.Reward, 0, len(rows))
	for _, r := range rows {
		x, err := r.reward(op)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// RewardList implements rewards.RewardLister.
func (tx *Tx) RewardList(ctx context.Context, env access.Environment, f rewards.RewardFilter, before string, limit int) ([]rewards.Reward, error) {
	const op = "store.RewardList"
	q := `SELECT ` + rewardColumns + ` FROM rewards WHERE environment = ?`
	args := []any{string(env)}
	switch {
	case f.ProjectID != "":
		q += ` AND tenant_id = ? AND workspace_id = ? AND project_id = ?`
		args = append(args, f.Scope.TenantID, f.Scope.WorkspaceID, f.ProjectID)
	case f.RecipientUserID != "":
		q += ` AND recipient_user_id = ?`
		args = append(args, f.RecipientUserID)
	case f.Wallet != "":
		q += ` AND wallet = ?`
		args = append(args, f.Wallet)
	default:
		return nil, fault.E(op, fault.Internal, "a reward list needs a filter")
	}
	if before != "" {
		q += ` AND id < ?`
		args = append(args, before)
	}
	return tx.scanRewards(ctx, op, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}

// RewardsOfChallenge implements the rewards' units of work (ChallengeStore,
// FundingStore, AllocationStore, PayoutStore).
func (tx *Tx) RewardsOfChallenge(ctx context.Context, challengeID string) ([]rewards.Reward, error) {
	return tx.scanRewards(ctx, "store.RewardsOfChallenge", `SELECT `+rewardColumns+` FROM rewards WHERE challenge_id = ? ORDER BY id`,
		challengeID)
}
