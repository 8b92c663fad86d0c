package rewards

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// PurposeClaim is the transaction intent purpose of a reward's payout:
// the environment's reward treasury pays the recipient, settled at
// finalized.
const PurposeClaim = "reward_claim"

// RoleRecipient is the payout's one leg.
const RoleRecipient = "recipient"

// ClaimReader is what a claim reads before its unit of work: the reward,
// and the intent of a reward already SUBMITTED.
type ClaimReader interface {
	RewardReader
	// Intent returns the intent id. NOT_FOUND when none.
	Intent(ctx context.Context, id string) (intent.Intent, error)
}

// ClaimStore is the rewards' part of a claim's unit of work: the reward
// locked and written by compare-and-set, with its outbox event. The
// payout's intent is recorded in the same unit of work through the intent
// domain's port, which ClaimRunFunc hands beside it.
type ClaimStore interface {
	outbox.Writer
	RewardReader
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// RewardLock is RewardGet locked for update until the unit of work
	// ends.
	RewardLock(ctx context.Context, env access.Environment, id string) (Reward, error)
	// RewardUpdate writes r's state, funding, intent, signature, claim
	// attempts, timestamps, version and update time when the stored
	// version is prev. CONFLICT otherwise.
	RewardUpdate(ctx context.Context, r Reward, prev int64) error
}

// PayoutStore is the reward_claim purpose's port in the intent's unit of
// work (Claims: Track, Settle and Settlement): the reward its intent pays,
// locked and written by compare-and-set, its challenge's pool, and the
// payout's movements in the rewards ledger, posted and read back.
type PayoutStore interface {
	ledger.Mover
	// LedgerMovementsByReference returns every movement of tenantID whose
	// reference is reference, with its postings; none is an empty list.
	LedgerMovementsByReference(ctx context.Context, tenantID, reference string) ([]ledger.Posted, error)
	// RewardLockByIntent reads the reward intentID pays, locked for update
	// until the unit of work ends; NOT_FOUND when none.
	RewardLockByIntent(ctx context.Context, intentID string) (Reward, error)
	// RewardUpdate writes r's state, funding, intent, signature, claim
	// attempts, timestamps, version and update time when the stored
	// version is prev. CONFLICT otherwise.
	RewardUpdate(ctx context.Context, r Reward, prev int64) error
	// RewardsOfChallenge returns every reward of a challenge, oldest
	// first.
	RewardsOfChallenge(ctx context.Context, challengeID string) ([]Reward, error)
	// ChallengeLock reads a challenge by id in env, of any tenant, locked
	// for update until the unit of work ends; NOT_FOUND when none.
	ChallengeLock(ctx context.Context, env access.Environment, id string) (Challenge, error)
	// ChallengeUpdate writes c's status, funding and its evidence,
	// version and update time when the stored version is prev. CONFLICT
	// otherwise.
	ChallengeUpdate(ctx context.Context, c Challenge, prev int64) error
}

// ClaimRunFunc runs fn as one unit of work (one transaction) that claims a
// reward, handing it the same transaction as two ports: the rewards'
// ClaimStore and the intent domain's intent.Store, in which the payout's
// intent is read and recorded. Together they are wider than one port may
// be, so they are passed separately rather than as one port that is both
// (as billing's SettleRunFunc); the platform's store implements both.
type ClaimRunFunc func(ctx context.Context, fn func(st ClaimStore, intents intent.Store) error) error

// Claim claims reward id for p: p's user is its recipient, the reward's
// wallet is verified on p's account, and the reward is CLAIMABLE. It
// freezes the payout's transaction intent (purpose reward_claim: the
// treasury pays exactly the amount to the wallet's Token-2022 account,
// grossing up any transfer fee), has the treasury signer sign it, and in
// one unit of work (run) moves the reward CLAIMABLE -> SUBMITTED and
// records the intent submitted with its signed bytes, which the intent's
// relay job sends. Nothing is marked claimed here: the payout is verified
// from the chain at finalized (package doc, Claims).
//
// A reward already SUBMITTED (a concurrent or repeated claim) answers its
// current intent: two claims never make two intents.
//
// Errors: UNAUTHENTICATED; ACCESS_DENIED for an API key; NOT_FOUND for a
// reward that is not p's; WALLET_REQUIRED when p has verified no wallet,
// WALLET_MISMATCH when not this one; CONFLICT (reason not_claimable,
// details state) in any other state; SERVICE_UNAVAILABLE without a
// treasury; PROVIDER_UNAVAILABLE when the cluster cannot be read.
func (s *Service) Claim(ctx context.Context, rd ClaimReader, run ClaimRunFunc, p *access.Principal, id string) (Reward, intent.Intent, error) {
	const op = "rewards.Claim"
	if p == nil || p.UserID == "" {
		return Reward{}, intent.Intent{}, fault.E(op, fault.Unauthenticated, "")
	}
	if p.Kind != access.CredentialSession && p.Kind != access.CredentialAccessToken {
		return Reward{}, intent.Intent{}, fault.E(op, fault.AccessDenied, "A reward is claimed by its creator signed in, not by an API key.")
	}
	r, err := s.claimable(ctx, op, rd, p, id)
	if err != nil {
		return Reward{}, intent.Intent{}, err
	}
	if r.State == StateSubmitted && r.IntentID != "" {
		it, err := rd.Intent(ctx, r.IntentID)
		return r, it, fault.Wrap(op, err)
	}
	e, err := s.env(op, r.Scope.Environment)
	if err != nil {
		return Reward{}, intent.Intent{}, err
	}
	if s.cfg.Intents == nil {
		return Reward{}, intent.Intent{}, fault.E(op, fault.ServiceUnavailable, "Payouts are not configured.")
	}
	d, err := s.cfg.Intents.PreparePayout(ctx, p, intent.Request{Purpose: PurposeClaim, RewardID: r.ID, Mint: r.Mint.String(),
		Wallet: r.Wallet.String()}, e.Signer.Address())
	if err != nil {
		return Reward{}, intent.Intent{}, fault.Wrap(op, err)
	}
	sig, err := e.Signer.Sign(ctx, d.Transaction.Message)
	if err != nil {
		return Reward{}, intent.Intent{}, &fault.Error{Op: op, Code: fault.ServiceUnavailable, Message: "The treasury signer did not sign.", Err: err}
	}
	if len(sig) != message.SignatureSize || !message.VerifySignature(e.Signer.Address(), d.Transaction.Message, sig) {
		return Reward{}, intent.Intent{}, fault.E(op, fault.Internal, "The treasury signer's signature does not verify.")
	}
	signed := message.Unsigned(d.Transaction.Message)
	copy(signed[1:], sig)
	var out intent.Intent
	err = run(ctx, func(st ClaimStore, intents intent.Store) error {
		cur, err := st.RewardLock(ctx, r.Scope.Environment, r.ID)
		if err != nil {
			return err
		}
		if cur.State == StateSubmitted && cur.IntentID != "" {
			// Another claim won: converge on its intent.
			r = cur
			out, err = intents.Intent(ctx, cur.IntentID)
			return err
		}
		if cur.State != StateClaimable {
			return notClaimable(op, cur)
		}
		r = cur
		if err := moveReward(ctx, st, &r, RewardEventClaim); err != nil {
			return err
		}
		r.IntentID, r.IntentState, r.ClaimAttempts, r.ClaimedAt = d.ID, string(intent.StateSubmitted), r.ClaimAttempts+1, st.Now()
		r.Signature = ""
		if err := st.RewardUpdate(ctx, r, r.Version-1); err != nil {
			return err
		}
		if out, err = s.cfg.Intents.RecordSigned(ctx, intents, d, signed); err != nil {
			return err
		}
		// The intent's Track hook recorded its state and signature.
		r, err = st.RewardGet(ctx, r.Scope.Environment, r.ID)
		return err
	})
	if err != nil {
		return Reward{}, intent.Intent{}, fault.Wrap(op, err)
	}
	return r, out, nil
}

// claimable reads reward id and checks p may claim it now.
func (s *Service) claimable(ctx context.Context, op string, st RewardReader, p *access.Principal, id string) (Reward, error) {
	r, err := st.RewardGet(ctx, p.Environment, id)
	if fault.Is(err, fault.NotFound) || err == nil && r.RecipientUserID != p.UserID {
		return Reward{}, fault.E(op, fault.NotFound, "No such reward of yours.")
	}
	if err != nil {
		return Reward{}, fault.Wrap(op, err)
	}
	if s.cfg.Wallets == nil {
		return Reward{}, fault.E(op, fault.ServiceUnavailable, "Wallet verification is not configured.")
	}
	ws, err := s.cfg.Wallets.Of(ctx, p.TenantID, p.UserID)
	if err != nil {
		return Reward{}, fault.Wrap(op, err)
	}
	switch {
	case len(ws) == 0:
		return Reward{}, fault.E(op, fault.WalletRequired, "Verify the reward's wallet on your account to claim it.").
			With("wallet", r.Wallet.String())
	case !slices.Contains(ws, r.Wallet):
		return Reward{}, fault.E(op, fault.WalletMismatch, "The reward pays a wallet your account has not verified.").
			With("wallet", r.Wallet.String())
	}
	if r.State == StateSubmitted && r.IntentID != "" {
		return r, nil
	}
	if r.State != StateClaimable {
		return Reward{}, notClaimable(op, r)
	}
	return r, nil
}

// notClaimable is CONFLICT naming the reward's state.
func notClaimable(op string, r Reward) error {
	return fault.E(op, fault.Conflict, "The reward is not claimable in its state.").With("reason", "not_claimable").
		With("state", string(r.State)).With("fundingStatus", string(r.Funding))
}

// Claims is the reward_claim purpose. storeFunc returns the payout's
// port of an intent's unit of work.
type Claims struct {
	svc       *Service
	storeFunc func(st intent.Store) (PayoutStore, error)
}

// Purpose returns the reward_claim purpose, to register with the intent
// registry: the treasury pays (TreasuryPays), settled at finalized.
// storeFunc returns the payout's port bound to an intent's unit of work.
func (s *Service) Purpose(storeFunc func(st intent.Store) (PayoutStore, error)) intent.Purpose {
	c := &Claims{svc: s, storeFunc: storeFunc}
	return intent.Purpose{Name: PurposeClaim, Threshold: chain.Finalized, TreasuryPays: true, Price: c.price, Track: c.track,
		Settle: c.settle, Settlement: c.settlement}
}

// store returns the payout's port of st's unit of work.
func (c *Claims) store(op string, st intent.Store) (PayoutStore, error) {
	rs, err := c.storeFunc(st)
	if err != nil {
		return nil, &fault.Error{Op: op, Code: fault.Internal, Message: "the unit of work holds no rewards store", Err: err}
	}
	return rs, nil
}

// price derives a payout from the reward the request names, never from
// the caller: one leg paying the reward's amount to its wallet, in its
// mint. The policy reference is the reward's allocation (id "reward:" and
// the reward id, version 1, the hash of its allocation).
func (c *Claims) price(ctx context.Context, in intent.PriceInput) (intent.Price, error) {
	const op = "rewards.Claims.Price"
	req := in.Request
	if req.RewardID == "" {
		return intent.Price{}, fault.Invalid(op, "rewardId", "rewardId is required.")
	}
	if c.svc.cfg.ReadFunc == nil {
		return intent.Price{}, fault.E(op, fault.ServiceUnavailable, "Payouts are not configured.")
	}
	r, err := c.svc.cfg.ReadFunc().RewardGet(ctx, in.Actor.Environment, req.RewardID)
	if fault.Is(err, fault.NotFound) || err == nil && r.RecipientUserID != in.Actor.UserID {
		return intent.Price{}, fault.E(op, fault.NotFound, "No such reward of yours.").With("field", "rewardId")
	}
	if err != nil {
		return intent.Price{}, fault.Wrap(op, err)
	}
	if req.Wallet != r.Wallet.String() || req.Mint != r.Mint.String() {
		return intent.Price{}, fault.E(op, fault.WalletMismatch, "The payout goes to the reward's wallet, in its mint.")
	}
	sum := sha256.Sum256([]byte(r.AllocationKey + "\n" + r.Wallet.String() + "\n" + strconv.FormatUint(r.AmountAtomic, 10) + "\n" + r.Mint.String()))
	amount := strconv.FormatUint(r.AmountAtomic, 10)
	return intent.Price{Mint: r.Mint, Legs: []intent.PriceLeg{{Role: RoleRecipient, Recipient: r.Wallet, NetAtomic: r.AmountAtomic}},
		Quantity: amount, Description: "Reward " + r.ID + " (" + intent.FormatAtomic(r.AmountAtomic, r.Decimals) + ")",
		Policy: intent.PolicyRef{ID: "reward:" + r.ID, Version: 1, Hash: hex.EncodeToString(sum[:])}}, nil
}

// track moves a reward with its payout's intent, in the intent's unit of
// work: the intent's state is recorded; a FAILED or EXPIRED intent
// releases the reward (CLAIMABLE again, without a second allocation, or
// ALLOCATED when its pool's coverage was lost meanwhile), REQUIRES_REVIEW
// sends it to review, and a RECONCILED intent ends it RECONCILED (outcome
// MATCH) or in review. An intent no reward holds any more (released
// before) moves nothing.
func (c *Claims) track(ctx context.Context, st intent.Store, it intent.Intent) error {
	const op = "rewards.Claims.Track"
	rs, err := c.store(op, st)
	if err != nil {
		return err
	}
	r, err := rs.RewardLockByIntent(ctx, it.ID)
	if fault.Is(err, fault.NotFound) {
		return nil
	}
	if err != nil {
		return fault.Wrap(op, err)
	}
	prev := r.Version
	r.IntentState, r.Signature = string(it.State), it.Signature
	var events []RewardEvent
	switch it.State {
	case intent.StateExpired, intent.StateFailed:
		if r.State == StateSubmitted {
			events = append(events, RewardEventRelease)
			if !r.Funding.Covered() {
				events = append(events, RewardEventSuspend)
			}
		}
	case intent.StateRequiresReview:
		if r.State == StateSubmitted || r.State == StateDistributed {
			events = append(events, RewardEventReview)
		}
	case intent.StateReconciled:
		if r.State == StateDistributed {
			if it.ReconciliationOutcome == intent.OutcomeMatch {
				events = append(events, RewardEventReconcile)
			} else {
				events = append(events, RewardEventReview)
			}
		}
	}
	for _, e := range events {
		if err := moveReward(ctx, rs, &r, e); err != nil {
			return err
		}
	}
	if len(events) == 0 {
		r.Version++
		r.UpdatedAt = rs.Now()
	}
	if slices.Contains(events, RewardEventRelease) {
		r.IntentID, r.Signature = "", ""
	}
	return fault.Wrap(op, rs.RewardUpdate(ctx, r, prev))
}

// ClaimReference is the reference of a payout's settlement movement in
// the claimant's scope, which reconciliation reads back:
// "claim:reward_claim:<intent id>".
func ClaimReference(it intent.Intent) string { return "claim:" + it.BusinessReference }

// DistributionReference is the reference of a payout's movement in the
// reward's own scope: "distribution:reward_claim:<intent id>".
func DistributionReference(it intent.Intent) string { return "distribution:" + it.BusinessReference }

// ClaimsPaidAccount is the system account debited with what the treasury
// sent for payouts of mint (gross), in the claimant's scope.
func ClaimsPaidAccount(mint chain.Address) string {
	return "system:reward-claims-paid:" + mint.String()
}

// ReceivedAccount is what a recipient wallet received of mint, in the
// claimant's scope.
func ReceivedAccount(wallet, mint chain.Address) string {
	return "reward-received:" + wallet.String() + ":" + mint.String()
}

// ClaimFeeAccount is what the mint withheld on payouts of mint, in the
// claimant's scope.
func ClaimFeeAccount(mint chain.Address) string { return "system:reward-claim-fee:" + mint.String() }

// settle runs in the unit of work that moves the payout's intent to
// SETTLED, once, after the intent domain verified at finalized that the
// recipient's account received exactly the amount: the reward SUBMITTED
// -> CONFIRMED -> DISTRIBUTED with the two ledger movements (the
// claimant's settlement, the reward's distribution), and its pool
// DISTRIBUTED when that was the last reward of a finished allocation.
func (c *Claims) settle(ctx context.Context, st intent.Store, it intent.Intent) error {
	const op = "rewards.Claims.Settle"
	rs, err := c.store(op, st)
	if err != nil {
		return err
	}
	r, err := rs.RewardLockByIntent(ctx, it.ID)
	if err != nil {
		return &fault.Error{Op: op, Code: fault.Internal, Message: "the settled payout pays no reward", Err: err}
	}
	if r.State.Paid() {
		return nil
	}
	legs := it.PaymentLegs()
	if len(legs) != 1 || legs[0].Recipient != r.Wallet || legs[0].NetAtomic != r.AmountAtomic || it.Mint != r.Mint {
		return fault.E(op, fault.Internal, "the payout's intent differs from its reward").With("rewardId", r.ID)
	}
	svc := ledger.New()
	claim := []ledger.Posting{{Account: ClaimsPaidAccount(r.Mint), Direction: ledger.Debit, Amount: money.Atomic(it.GrossAtomic)},
		{Account: ReceivedAccount(r.Wallet, r.Mint), Direction: ledger.Credit, Amount: money.Atomic(r.AmountAtomic)}}
	dist := []ledger.Posting{{Account: PayableAccount(r.ID), Direction: ledger.Debit, Amount: money.Atomic(r.AmountAtomic)},
		{Account: DistributedAccount(r.Mint), Direction: ledger.Credit, Amount: money.Atomic(r.AmountAtomic)}}
	if it.FeeAtomic > 0 {
		claim = append(claim, ledger.Posting{Account: ClaimFeeAccount(r.Mint), Direction: ledger.Credit, Amount: money.Atomic(it.FeeAtomic)})
		dist = append(dist, ledger.Posting{Account: TreasuryAccount(r.Mint), Direction: ledger.Debit, Amount: money.Atomic(it.FeeAtomic)},
			ledger.Posting{Account: TransferFeeAccount(r.Mint), Direction: ledger.Credit, Amount: money.Atomic(it.FeeAtomic)})
	}
	if _, _, err := svc.Post(ctx, rs, ledger.Movement{Scope: it.Actor.Scope(), Ledger: ledger.Rewards, Type: ledger.TypeTransfer,
		Reference: ClaimReference(it), Decimals: int(r.Decimals), Postings: claim, Actor: ledger.Actor{UserID: it.Actor.UserID}}); err != nil {
		return fault.Wrap(op, err)
	}
	if _, _, err := svc.Post(ctx, rs, ledger.Movement{Scope: r.Scope, Ledger: ledger.Rewards, Type: ledger.TypeSettle,
		Reference: DistributionReference(it), Decimals: int(r.Decimals), Postings: dist}); err != nil {
		return fault.Wrap(op, err)
	}
	prev := r.Version
	r.IntentState, r.Signature = string(it.State), it.Signature
	for _, e := range []RewardEvent{RewardEventConfirm, RewardEventDistribute} {
		if err := moveReward(ctx, rs, &r, e); err != nil {
			return err
		}
	}
	r.Funding, r.DistributedAt = FundingDistributed, rs.Now()
	if err := rs.RewardUpdate(ctx, r, prev); err != nil {
		return fault.Wrap(op, err)
	}
	ch, err := rs.ChallengeLock(ctx, r.Scope.Environment, r.ChallengeID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	cprev, before := ch.Version, ch.Pool.Funding
	if err := c.svc.maybeDistributed(ctx, rs, &ch); err != nil {
		return err
	}
	if ch.Pool.Funding != before {
		ch.Version, ch.UpdatedAt = ch.Version+1, rs.Now()
		return fault.Wrap(op, rs.ChallengeUpdate(ctx, ch, cprev))
	}
	return nil
}

// settlement reads back the claimant's settlement movement of a payout,
// for reconciliation: it credits the recipient's account with the leg's
// net (LegCredits).
func (c *Claims) settlement(ctx context.Context, st intent.Store, it intent.Intent) (intent.Settlement, error) {
	const op = "rewards.Claims.Settlement"
	rs, err := c.store(op, st)
	if err != nil {
		return intent.Settlement{}, err
	}
	posted, err := rs.LedgerMovementsByReference(ctx, it.Actor.TenantID, ClaimReference(it))
	if err != nil {
		return intent.Settlement{}, fault.Wrap(op, err)
	}
	out := intent.Settlement{Debit: ClaimsPaidAccount(it.Mint), LegCredits: map[string]string{}}
	for _, l := range it.PaymentLegs() {
		out.LegCredits[l.Role] = ReceivedAccount(l.Recipient, it.Mint)
	}
	for _, m := range posted {
		sm := intent.SettlementMovement{ID: m.ID, Reference: m.Reference, Scope: m.Scope}
		for _, p := range m.Postings {
			sm.Postings = append(sm.Postings, intent.SettlementPosting{Account: p.Account, Credit: p.Direction == ledger.Credit, Amount: p.Amount})
		}
		out.Movements = append(out.Movements, sm)
	}
	return out, nil
}
