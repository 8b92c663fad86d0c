package rewards

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/project"
)

// Id prefixes.
const (
	// ChallengePrefix starts a challenge's id.
	ChallengePrefix = "chl_"
	// RewardPrefix starts a reward's id.
	RewardPrefix = "rwd_"
)

// Audit actions and targets.
const (
	// ActionChallengeCreated: a challenge was created. After: its fields.
	ActionChallengeCreated = "challenge.created"
	// ActionChallengeStatusChanged: a challenge's status moved. Before
	// and after: status.
	ActionChallengeStatusChanged = "challenge.status_changed"
	// ActionRewardAllocated: a reward was allocated. After: challenge,
	// wallet, amount, mint.
	ActionRewardAllocated = "reward.allocated"
	// TargetChallenge is a challenge (target id: its id).
	TargetChallenge = "challenge"
	// TargetReward is a reward (target id: its id).
	TargetReward = "reward"
)

// Outbox event types.
const (
	// EventChallengeCreated: a challenge was created (DRAFT, ANNOUNCED).
	EventChallengeCreated = "challenge.created"
	// EventChallengeStatusChanged: a challenge's status moved one step.
	EventChallengeStatusChanged = "challenge.status_changed"
	// EventFundingChanged: a pool's funding status moved (payload: from,
	// fundingStatus and the evidence).
	EventFundingChanged = "challenge.funding_changed"
)

// RewardEventType is the outbox event type of a reward written in state
// s: "reward.allocated", "reward.claimable", ... one per state.
func RewardEventType(s State) string { return "reward." + strings.ToLower(string(s)) }

// Window is when a challenge takes submissions.
type Window struct {
	// OpensAt and ClosesAt bound it; OpensAt is before ClosesAt.
	OpensAt  time.Time
	ClosesAt time.Time
}

// Pool is a challenge's reward pool: an atomic amount of a Token-2022
// mint, the decimals read from the mint account.
type Pool struct {
	// AmountAtomic is the pool in the mint's atomic units.
	AmountAtomic uint64
	// Mint and Decimals identify the token.
	Mint     chain.Address
	Decimals uint8
	// Funding is the pool's funding status.
	Funding Funding
	// Evidence is the latest funding reconciliation's reading; zero
	// before the first that read the treasury.
	Evidence Evidence
	// FundedAt is when the pool was first FUNDED (its place in the
	// treasury's coverage order); zero before.
	FundedAt time.Time
}

// Evidence is what a funding reconciliation read: the treasury's token
// account of the mint at finalized commitment, the slot of the answer and
// the balance, and what the pools it backs (this one and those funded
// before it) require.
type Evidence struct {
	// TreasuryAccount is the token account read.
	TreasuryAccount chain.Address
	// Slot is the answer's context slot; BalanceAtomic the balance there.
	Slot          uint64
	BalanceAtomic uint64
	// RequiredAtomic is what this pool and the pools ahead of it still
	// owe, grossed up for the transfer fee.
	RequiredAtomic uint64
	// CheckedAt is when the reconciliation ran.
	CheckedAt time.Time
}

// Challenge is a project's challenge: a window, rules, a lifecycle and a
// reward pool whose funding is proven from the chain.
type Challenge struct {
	// ID is the challenge's id (ChallengePrefix); Version counts its
	// writes and is the store's compare-and-set token.
	ID      string
	Version int64
	// Scope is the project's tenant, workspace and environment;
	// ProjectID the project.
	Scope     access.Scope
	ProjectID string
	// Title and Rules describe it.
	Title string
	Rules string
	// Window is when it takes submissions.
	Window Window
	// Status is where it stands in its lifecycle (Moves).
	Status Status
	// Pool is its reward pool.
	Pool Pool
	// CreatedByUserID is who created it.
	CreatedByUserID string
	// CreatedAt and UpdatedAt bound its life so far.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreateRequest is what creating a challenge takes.
type CreateRequest struct {
	// ProjectID is the project of the caller's workspace.
	ProjectID string
	// Title is 1 to 200 characters after trimming; Rules at most 10000.
	Title string
	Rules string
	// Window is the submission window.
	Window Window
	// PoolAtomic is the pool, a positive canonical integer string of the
	// mint's atomic units; Mint a Token-2022 mint (base58).
	PoolAtomic string
	Mint       string
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Config configures a Service. Mints, Environments and Intents are needed
// by pools, funding and claims; without them those answer
// SERVICE_UNAVAILABLE.
type Config struct {
	// Mints reads a pool's mint.
	Mints Mints
	// Environments are the reward treasuries of test and live.
	Environments map[access.Environment]Environment
	// Intents creates payouts' intents.
	Intents Intents
	// Wallets answers claimants' verified wallets.
	Wallets Wallets
	// ReadFunc returns the read pool, for the purpose's pricing.
	ReadFunc func() RewardReader
	// Run runs a unit of work, for the reconciliation job.
	Run RunFunc
}

// ChallengeReader reads one challenge (Service.Get, and a funding
// reconciliation's read of its challenge).
type ChallengeReader interface {
	// ChallengeGet reads a challenge by id in env, of any tenant;
	// NOT_FOUND when none. The service decides who reads it.
	ChallengeGet(ctx context.Context, env access.Environment, id string) (Challenge, error)
}

// ChallengeLister pages a workspace's challenges (Service.List).
type ChallengeLister interface {
	// ChallengeList returns up to limit challenges of sc, newest first,
	// with ids below before ("" for the newest).
	ChallengeList(ctx context.Context, sc access.Scope, before string, limit int) ([]Challenge, error)
}

// ChallengeStore is the challenge lifecycle's unit of work (Service.Create
// and Service.Move): the project, the challenge written by
// compare-and-set, the count of its rewards before REWARDS_ALLOCATED, and
// the outbox event and audit record of each write.
type ChallengeStore interface {
	outbox.Writer
	account.AuditWriter
	projectGetter
	ChallengeReader
	// ChallengeInsert stores a new challenge. CONFLICT if its id exists.
	ChallengeInsert(ctx context.Context, c Challenge) error
	// ChallengeLock is ChallengeGet locked for update until the unit of
	// work ends.
	ChallengeLock(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeUpdate writes c's status, funding and its evidence,
	// version and update time when the stored version is prev. CONFLICT
	// otherwise.
	ChallengeUpdate(ctx context.Context, c Challenge, prev int64) error
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
}

// Service runs challenges, reward funding, allocation and claims. It
// holds no state of its own and is safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// actor checks p is a principal of a workspace.
func actor(op string, p *access.Principal) error {
	if p == nil || p.TenantID == "" || p.WorkspaceID == "" {
		return fault.E(op, fault.Unauthenticated, "")
	}
	return nil
}

// ownProject reads project id of p's workspace; NOT_FOUND for one of any
// other workspace (public or not) or environment.
func ownProject(ctx context.Context, op string, st projectGetter, p *access.Principal, id string) (project.Project, error) {
	pr, err := st.ProjectGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) || err == nil && (pr.Scope.TenantID != p.TenantID || pr.Scope.WorkspaceID != p.WorkspaceID) {
		return project.Project{}, fault.E(op, fault.NotFound, "No such project.").With("field", "projectId")
	}
	if err != nil {
		return project.Project{}, fault.Wrap(op, err)
	}
	return pr, nil
}

// reaches refuses with ACCESS_DENIED unless a lets p use perm on pr.
func reaches(op string, p *access.Principal, a *access.Authority, perm access.Permission, pr project.Project) error {
	if !a.Reaches(p, perm, pr.Resource()) {
		return fault.E(op, fault.AccessDenied, "").With("permission", string(perm))
	}
	return nil
}

// parseAtomic parses a positive canonical integer string that fits u64.
func parseAtomic(op, field, s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 || strconv.FormatUint(v, 10) != s {
		return 0, fault.Invalid(op, field, field+" is a positive integer string of the mint's atomic units.")
	}
	return v, nil
}

// Create creates a DRAFT challenge of a project of p's workspace with its
// pool ANNOUNCED: announced, never funded until a funding reconciliation
// proves it. The mint's decimals are read from the mint account on the
// environment's cluster, never taken from the caller. Needs reward.allocate
// reaching the project.
//
// Errors: INVALID_INPUT naming title, rules, window, poolAtomic or mint;
// NOT_FOUND (field projectId); ACCESS_DENIED (details.permission);
// SERVICE_UNAVAILABLE without a cluster; PROVIDER_UNAVAILABLE when the
// mint cannot be read.
func (s *Service) Create(ctx context.Context, st ChallengeStore, p *access.Principal, a *access.Authority, in CreateRequest) (Challenge, error) {
	const op = "rewards.Create"
	if err := actor(op, p); err != nil {
		return Challenge{}, err
	}
	in.Title = strings.TrimSpace(in.Title)
	switch n := utf8.RuneCountInString(in.Title); {
	case n == 0 || n > 200:
		return Challenge{}, fault.Invalid(op, "title", "title is 1 to 200 characters.")
	case utf8.RuneCountInString(in.Rules) > 10000:
		return Challenge{}, fault.Invalid(op, "rules", "rules is at most 10000 characters.")
	case in.Window.OpensAt.IsZero() || in.Window.ClosesAt.IsZero() || !in.Window.OpensAt.Before(in.Window.ClosesAt):
		return Challenge{}, fault.Invalid(op, "window", "window.opensAt and window.closesAt are required, opensAt before closesAt.")
	}
	amount, err := parseAtomic(op, "poolAtomic", in.PoolAtomic)
	if err != nil {
		return Challenge{}, err
	}
	if in.ProjectID == "" {
		return Challenge{}, fault.Invalid(op, "projectId", "projectId is required.")
	}
	pr, err := ownProject(ctx, op, st, p, in.ProjectID)
	if err != nil {
		return Challenge{}, err
	}
	if err := reaches(op, p, a, access.RewardAllocate, pr); err != nil {
		return Challenge{}, err
	}
	if s.cfg.Mints == nil {
		return Challenge{}, fault.E(op, fault.ServiceUnavailable, "No cluster is configured for reward pools.")
	}
	m, err := s.cfg.Mints.PaymentMint(ctx, p.Environment, in.Mint)
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	now := st.Now()
	c := Challenge{ID: st.NewID(ChallengePrefix), Version: 1, Scope: pr.Scope, ProjectID: pr.ID, Title: in.Title, Rules: in.Rules,
		Window: Window{OpensAt: in.Window.OpensAt.UTC(), ClosesAt: in.Window.ClosesAt.UTC()}, Status: StatusDraft,
		Pool:            Pool{AmountAtomic: amount, Mint: m.Address, Decimals: m.Decimals, Funding: FundingAnnounced},
		CreatedByUserID: p.UserID, CreatedAt: now, UpdatedAt: now}
	if err := st.ChallengeInsert(ctx, c); err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if err := challengeEvent(ctx, st, c, EventChallengeCreated, nil); err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionChallengeCreated, TargetType: TargetChallenge, TargetID: c.ID,
		RequestID: in.RequestID, After: map[string]any{"projectId": c.ProjectID, "title": c.Title, "poolAtomic": in.PoolAtomic,
			"mint": c.Pool.Mint.String(), "decimals": c.Pool.Decimals}}); err != nil {
		return Challenge{}, err
	}
	return c, nil
}

// challengeEvent writes the outbox event typ of c in its scope.
func challengeEvent(ctx context.Context, st outbox.Writer, c Challenge, typ string, extra map[string]any) error {
	body := map[string]any{"id": c.ID, "projectId": c.ProjectID, "status": c.Status, "fundingStatus": c.Pool.Funding,
		"poolAtomic": strconv.FormatUint(c.Pool.AmountAtomic, 10), "mint": c.Pool.Mint.String(), "decimals": c.Pool.Decimals}
	for k, v := range extra {
		body[k] = v
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	_, err = st.OutboxInsert(ctx, outbox.Event{TenantID: c.Scope.TenantID, WorkspaceID: c.Scope.WorkspaceID,
		Environment: string(c.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: c.ID, AggregateVersion: c.Version,
		OccurredAt: c.UpdatedAt, Payload: payload})
	return err
}

// Get returns challenge id of p's workspace; NOT_FOUND for any other.
func (s *Service) Get(ctx context.Context, st ChallengeReader, p *access.Principal, id string) (Challenge, error) {
	const op = "rewards.Get"
	if err := actor(op, p); err != nil {
		return Challenge{}, err
	}
	c, err := st.ChallengeGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) || err == nil && (c.Scope.TenantID != p.TenantID || c.Scope.WorkspaceID != p.WorkspaceID) {
		return Challenge{}, fault.E(op, fault.NotFound, "No such challenge.")
	}
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	return c, nil
}

// List returns up to limit challenges of p's workspace and environment,
// newest first, with ids below before.
func (s *Service) List(ctx context.Context, st ChallengeLister, p *access.Principal, before string, limit int) ([]Challenge, error) {
	const op = "rewards.List"
	if err := actor(op, p); err != nil {
		return nil, err
	}
	out, err := st.ChallengeList(ctx, p.Scope(), before, limit)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return out, nil
}

// MoveRequest asks for a challenge's next status.
type MoveRequest struct {
	// Status is the status asked for.
	Status Status
	// RequestID is the gateway's request id, for the audit record.
	RequestID string
}

// Move moves a challenge of p's workspace one step along its table. A
// move the table does not have is INVALID_STATE_TRANSITION whoever asks;
// a move the caller's grant does not reach on the challenge's project is
// ACCESS_DENIED (details.permission: MovePermission of the status). The
// move to REWARDS_ALLOCATED needs at least one reward allocated (CONFLICT,
// reason no_rewards_allocated). Compare-and-set on the version, with the
// outbox event challenge.status_changed and an audit record.
//
// Errors: INVALID_INPUT (field status); NOT_FOUND; INVALID_STATE_TRANSITION;
// ACCESS_DENIED; CONFLICT.
func (s *Service) Move(ctx context.Context, st ChallengeStore, p *access.Principal, a *access.Authority, id string, in MoveRequest) (Challenge, error) {
	const op = "rewards.Move"
	if !in.Status.Valid() {
		return Challenge{}, fault.Invalid(op, "status", "status is not a challenge status.")
	}
	c, err := s.Get(ctx, st, p, id)
	if err != nil {
		return Challenge{}, err
	}
	to, err := Transition(c.Status, EventFor(in.Status))
	if err != nil {
		return Challenge{}, err
	}
	pr, err := st.ProjectGet(ctx, c.Scope.Environment, c.ProjectID)
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if err := reaches(op, p, a, MovePermission(to), pr); err != nil {
		return Challenge{}, err
	}
	c, err = st.ChallengeLock(ctx, c.Scope.Environment, c.ID)
	if err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if to, err = Transition(c.Status, EventFor(in.Status)); err != nil {
		return Challenge{}, err
	}
	if to == StatusRewardsAllocated {
		rs, err := st.RewardsOfChallenge(ctx, c.ID)
		if err != nil {
			return Challenge{}, fault.Wrap(op, err)
		}
		if len(rs) == 0 {
			return Challenge{}, fault.E(op, fault.Conflict, "Allocate at least one reward before marking the rewards allocated.").
				With("reason", "no_rewards_allocated")
		}
	}
	from, prev := c.Status, c.Version
	c.Status, c.Version, c.UpdatedAt = to, c.Version+1, st.Now()
	if to == StatusRewardsAllocated || to == StatusCompleted {
		if err := s.maybeDistributed(ctx, st, &c); err != nil {
			return Challenge{}, err
		}
	}
	if err := st.ChallengeUpdate(ctx, c, prev); err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if err := challengeEvent(ctx, st, c, EventChallengeStatusChanged, map[string]any{"from": from}); err != nil {
		return Challenge{}, fault.Wrap(op, err)
	}
	if err := account.Audit(ctx, st, p, account.AuditEntry{Action: ActionChallengeStatusChanged, TargetType: TargetChallenge,
		TargetID: c.ID, RequestID: in.RequestID, Before: map[string]any{"status": from}, After: map[string]any{"status": to}}); err != nil {
		return Challenge{}, err
	}
	return c, nil
}
