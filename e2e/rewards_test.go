package e2e_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/rewards"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// The pool and the reward the reward tests use: 100 and 25 tokens of the
// deployed 9-decimal mint.
const (
	rewardPool   = 100_000_000_000
	rewardAmount = 25_000_000_000
)

// arena is a system with a studio whose owner leads a project with a
// challenge, and a creator of another tenant with a verified wallet that
// holds an (empty) account of the deployed mint.
type arena struct {
	s         *platformtest.System
	lead      seller
	creator   buyer
	project   api.ProjectView
	challenge api.ChallengeView
}

// newArena sets an arena up, the challenge created and moved to
// WINNERS_SELECTED, its pool announced.
func newArena(t *testing.T, s *platformtest.System) *arena {
	t.Helper()
	a := &arena{s: s, lead: newSeller(t, s, "lead@studio.example", "studio", false)}
	a.creator = fundedBuyer(t, s, "creator@example.test", 0)
	r := asTest(s, a.lead.person, http.MethodPost, "/api/v1/projects", "", map[string]any{"title": "Night Drive", "type": "remix",
		"visibility": "public"})
	if r.Status != http.StatusCreated {
		t.Fatalf("project: %d %s", r.Status, r.Body)
	}
	r.Data(t, &a.project)
	a.challenge = a.create(t, a.lead.person, http.StatusCreated)
	if a.challenge.Status != "DRAFT" || a.challenge.Pool.FundingStatus != "ANNOUNCED" || a.challenge.Pool.Funded ||
		a.challenge.Pool.Decimals != 9 || a.challenge.Pool.Evidence != nil || a.challenge.Pool.AmountAtomic != strconv.Itoa(rewardPool) {
		t.Fatalf("challenge = %+v", a.challenge)
	}
	for _, st := range []string{"SCHEDULED", "OPEN", "SUBMISSIONS_CLOSED", "REVIEW", "VOTING", "WINNERS_SELECTED"} {
		a.challenge = a.move(t, a.lead.person, st, http.StatusOK)
	}
	return a
}

// create posts the arena's challenge as p and wants status.
func (a *arena) create(t *testing.T, p person, status int) api.ChallengeView {
	t.Helper()
	now := a.s.Clock.Now()
	r := asTest(a.s, p, http.MethodPost, "/api/v1/challenges", "", map[string]any{"projectId": a.project.ID, "title": "Remix it",
		"rules": "One entry per creator.", "window": map[string]any{"opensAt": now, "closesAt": now.Add(7 * 24 * time.Hour)},
		"poolAtomic": strconv.Itoa(rewardPool), "mint": a.s.Token.Mint.String()})
	if r.Status != status {
		t.Fatalf("create challenge as %s: %d %s", p.email, r.Status, r.Body)
	}
	var v api.ChallengeView
	if status == http.StatusCreated {
		r.Data(t, &v)
	}
	return v
}

// move asks for the challenge's next status as p and wants status.
func (a *arena) move(t *testing.T, p person, to string, status int) api.ChallengeView {
	t.Helper()
	r := asTest(a.s, p, http.MethodPost, "/api/v1/challenges/"+a.challenge.ID+"/status", "", map[string]string{"status": to})
	if r.Status != status {
		t.Fatalf("move to %s as %s: %d %s", to, p.email, r.Status, r.Body)
	}
	var v api.ChallengeView
	if status == http.StatusOK {
		r.Data(t, &v)
	}
	return v
}

// reconcile reconciles the pool's funding as p.
func (a *arena) reconcile(p person) *platformtest.Response {
	return asTest(a.s, p, http.MethodPost, "/api/v1/challenges/"+a.challenge.ID+"/funding/reconcile", "", nil)
}

// allocate allocates amount to the creator's wallet as p with key.
func (a *arena) allocate(p person, key string, amount uint64) *platformtest.Response {
	return asTest(a.s, p, http.MethodPost, "/api/v1/projects/"+a.project.ID+"/rewards/allocate", key, map[string]any{
		"challengeId": a.challenge.ID, "items": []map[string]any{{"wallet": a.creator.wallet.addr, "amountAtomic": strconv.FormatUint(amount, 10),
			"reference": "first-place"}}})
}

// fund mints tokens into the reward treasury's account and finalizes it.
func (a *arena) fund(t *testing.T, tokens uint64) {
	t.Helper()
	if _, err := a.s.Cluster.MintTo(a.s.RewardTreasury, a.s.Token.Mint, tokens); err != nil {
		t.Fatal(err)
	}
	a.s.Cluster.AdvanceSlots(40)
}

// funded funds the treasury with twice the pool, reconciles and allocates
// the reward: the reward, CLAIMABLE.
func (a *arena) funded(t *testing.T) api.RewardView {
	t.Helper()
	a.fund(t, 2*rewardPool)
	if r := a.reconcile(a.lead.person); r.Status != http.StatusOK {
		t.Fatalf("reconcile: %d %s", r.Status, r.Body)
	}
	r := a.allocate(a.lead.person, "allocate-1", rewardAmount)
	if r.Status != http.StatusCreated {
		t.Fatalf("allocate: %d %s", r.Status, r.Body)
	}
	var out api.AllocationView
	r.Data(t, &out)
	return out.Items[0]
}

// claim claims reward id as p.
func claim(s *platformtest.System, p person, id string) *platformtest.Response {
	return asTest(s, p, http.MethodPost, "/api/v1/rewards/"+id+"/claim", "", nil)
}

// myReward reads reward id from p's rewards.
func myReward(t *testing.T, s *platformtest.System, p person, id string) api.RewardView {
	t.Helper()
	r := asTest(s, p, http.MethodGet, "/api/v1/rewards", "", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("my rewards: %d %s", r.Status, r.Body)
	}
	var page api.RewardPage
	r.Data(t, &page)
	for _, x := range page.Items {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("reward %s is not among %s's", id, p.email)
	return api.RewardView{}
}

// awaitReward advances the cluster and the clock until p's reward id is
// in state.
func awaitReward(t *testing.T, s *platformtest.System, p person, id, state string) api.RewardView {
	t.Helper()
	var v api.RewardView
	waitFor(t, "reward "+state, func() bool {
		s.Cluster.AdvanceSlots(4)
		s.Clock.Advance(time.Second)
		v = myReward(t, s, p, id)
		return v.State == state
	})
	return v
}

// rewardOptions run the reward tests with jobs on and a quick poll.
func rewardOptions() platformtest.Options {
	return platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}}
}

// TestRewardLifecycleOnChain runs a challenge's money end to end on the
// loopback cluster: an announced pool refuses allocation; the treasury is
// funded and reconciled (FUNDED with slot and balance evidence); a reward
// is allocated (idempotent), claimed by its creator (SUBMITTED: the claim
// marks nothing claimed), paid by the treasury's signer and finalized;
// reconciliation confirms it, and it is DISTRIBUTED once: the creator's
// account received exactly the reward, the rewards ledger agrees, the
// pool is DISTRIBUTED when the allocation is over, and the public profile
// shows it with public fields only.
func TestRewardLifecycleOnChain(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rewardOptions(), func(t *testing.T, s *platformtest.System) {
		a := newArena(t, s)
		// Announced, not funded: allocation is refused.
		if r := a.allocate(a.lead.person, "allocate-0", rewardAmount); r.Code() != "CONFLICT" || detail(r, "reason") != "pool_not_funded" {
			t.Fatalf("allocate before funding: %d %s", r.Status, r.Body)
		}
		// A reconciliation of an empty treasury records its evidence and funds nothing.
		r := a.reconcile(a.lead.person)
		var c api.ChallengeView
		r.Data(t, &c)
		if r.Status != http.StatusOK || c.Pool.FundingStatus != "ANNOUNCED" || c.Pool.Funded || c.Pool.Evidence == nil ||
			c.Pool.Evidence.BalanceAtomic != "0" || c.Pool.Evidence.Commitment != "finalized" {
			t.Fatalf("reconcile unfunded: %d %s", r.Status, r.Body)
		}
		a.fund(t, 2*rewardPool)
		r = a.reconcile(a.lead.person)
		r.Data(t, &c)
		treasuryAcct := token2022.AssociatedTokenAddress(s.RewardTreasury, s.Token.Mint)
		if r.Status != http.StatusOK || c.Pool.FundingStatus != "FUNDED" || !c.Pool.Funded || c.Pool.Evidence == nil ||
			c.Pool.Evidence.Slot == 0 || c.Pool.Evidence.BalanceAtomic != strconv.Itoa(2*rewardPool) ||
			c.Pool.Evidence.TreasuryAccount != treasuryAcct.String() || c.Pool.FundedAt == nil {
			t.Fatalf("reconcile funded: %d %s", r.Status, r.Body)
		}
		required, _ := strconv.ParseUint(c.Pool.Evidence.RequiredAtomic, 10, 64)
		if required <= rewardPool {
			t.Fatalf("required %d does not gross the pool up for the transfer fee", required)
		}
		// Allocation, idempotent by key and by reference.
		r = a.allocate(a.lead.person, "allocate-1", rewardAmount)
		var alloc api.AllocationView
		r.Data(t, &alloc)
		if r.Status != http.StatusCreated || len(alloc.Items) != 1 {
			t.Fatalf("allocate: %d %s", r.Status, r.Body)
		}
		rw := alloc.Items[0]
		if rw.State != "CLAIMABLE" || rw.CreatorState != "CLAIMABLE" || rw.Wallet != a.creator.wallet.addr ||
			rw.RecipientUserID != a.creator.userID || rw.AmountAtomic != strconv.Itoa(rewardAmount) || rw.Decimals != 9 ||
			rw.IdempotencyKey != "allocate-1" || rw.TransactionIntentID != nil || rw.ChallengeID != a.challenge.ID {
			t.Fatalf("reward = %+v", rw)
		}
		if again := a.allocate(a.lead.person, "allocate-1", rewardAmount); again.Header.Get("Idempotent-Replayed") != "true" ||
			!bytes.Contains(again.Body, []byte(rw.ID)) {
			t.Fatalf("replay: %d %s", again.Status, again.Body)
		}
		var same api.AllocationView
		if again := a.allocate(a.lead.person, "allocate-2", rewardAmount); again.Status != http.StatusCreated {
			t.Fatalf("same reference: %d %s", again.Status, again.Body)
		} else if again.Data(t, &same); same.Items[0].ID != rw.ID {
			t.Fatalf("the same reference allocated %s, want %s", same.Items[0].ID, rw.ID)
		}
		if again := a.allocate(a.lead.person, "allocate-3", rewardAmount+1); detail(again, "reason") != "allocation_exists" {
			t.Fatalf("same reference, other amount: %d %s", again.Status, again.Body)
		}
		// Never past the pool.
		over := asTest(s, a.lead.person, http.MethodPost, "/api/v1/projects/"+a.project.ID+"/rewards/allocate", "allocate-4", map[string]any{
			"challengeId": a.challenge.ID, "items": []map[string]any{{"wallet": a.creator.wallet.addr, "amountAtomic": strconv.Itoa(rewardPool),
				"reference": "second"}}})
		if over.Code() != "INVALID_AMOUNT" || detail(over, "reason") != "exceeds_pool" {
			t.Fatalf("past the pool: %d %s", over.Status, over.Body)
		}

		// The claim: SUBMITTED, one treasury-paid intent, nothing claimed yet.
		creatorAcct := token2022.AssociatedTokenAddress(mustKey(t, a.creator.wallet.addr), s.Token.Mint)
		before := balance(t, s, creatorAcct)
		r = claim(s, a.creator.person, rw.ID)
		var cv api.RewardClaimView
		r.Data(t, &cv)
		if r.Status != http.StatusOK || cv.Reward.State != "SUBMITTED" || cv.Reward.DistributedAt != nil ||
			cv.TransactionIntent.Purpose != "reward_claim" || cv.TransactionIntent.Payer != s.RewardTreasury.String() ||
			cv.TransactionIntent.NetAtomic != strconv.Itoa(rewardAmount) || len(cv.TransactionIntent.Legs) != 1 ||
			cv.TransactionIntent.Legs[0].Recipient != a.creator.wallet.addr || cv.TransactionIntent.State != "SUBMITTED" {
			t.Fatalf("claim: %d %s", r.Status, r.Body)
		}
		done := awaitReward(t, s, a.creator.person, rw.ID, "RECONCILED")
		if done.CreatorState != "RECONCILED" || done.DistributedAt == nil || done.ClaimAttempts != 1 || done.Signature == nil {
			t.Fatalf("reward after payout = %+v", done)
		}
		if got := balance(t, s, creatorAcct) - before; got != rewardAmount {
			t.Fatalf("the creator received %d, want exactly %d", got, rewardAmount)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'reward.distributed' AND aggregate_id = ?`, rw.ID); n != 1 {
			t.Fatalf("%d reward.distributed events", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents WHERE purpose = 'reward_claim'`); n != 1 {
			t.Fatalf("%d payout intents", n)
		}
		// The rewards ledger agrees: funding, allocation, distribution in the project's workspace.
		led := asTest(s, a.lead.person, http.MethodGet, "/api/v1/ledgers/rewards", "", nil)
		var page api.LedgerPage
		led.Data(t, &page)
		refs := map[string]bool{}
		for _, m := range page.Items {
			refs[m.Reference] = true
		}
		if !refs["reward-funding:"+a.challenge.ID] || !refs["reward-allocation:"+rw.ID] ||
			!refs["distribution:reward_claim:"+cv.TransactionIntent.ID] || len(page.Items) != 3 {
			t.Fatalf("rewards ledger = %s", led.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "claim:reward_claim:"+cv.TransactionIntent.ID); n != 1 {
			t.Fatalf("%d claim movements", n)
		}
		// The allocation is over: the pool is distributed.
		end := a.move(t, a.lead.person, "REWARDS_ALLOCATED", http.StatusOK)
		if end.Pool.FundingStatus != "DISTRIBUTED" {
			t.Fatalf("pool after the allocation = %+v", end.Pool)
		}
		// Claiming again is refused; nothing is paid twice.
		if r := claim(s, a.creator.person, rw.ID); r.Code() != "CONFLICT" || detail(r, "reason") != "not_claimable" {
			t.Fatalf("claim again: %d %s", r.Status, r.Body)
		}
		// The public profile: public fields only.
		pub := asTest(s, a.lead.person, http.MethodGet, "/api/v1/creators/"+a.creator.wallet.addr+"/rewards", "", nil)
		if pub.Status != http.StatusOK || bytes.Contains(pub.Body, []byte(a.project.ID)) || bytes.Contains(pub.Body, []byte(cv.TransactionIntent.ID)) ||
			!bytes.Contains(pub.Body, []byte(`"creatorState":"RECONCILED"`)) {
			t.Fatalf("public rewards: %d %s", pub.Status, pub.Body)
		}
	})
}

// TestRewardPayoutFailsThenPaysOnce: the cluster fails the payout's
// transaction; the reward returns to CLAIMABLE with the same allocation,
// a second claim makes a second intent and pays once.
func TestRewardPayoutFailsThenPaysOnce(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rewardOptions(), func(t *testing.T, s *platformtest.System) {
		a := newArena(t, s)
		rw := a.funded(t)
		s.Cluster.FailTransactions(1)
		r := claim(s, a.creator.person, rw.ID)
		if r.Status != http.StatusOK {
			t.Fatalf("claim: %d %s", r.Status, r.Body)
		}
		back := awaitReward(t, s, a.creator.person, rw.ID, "CLAIMABLE")
		if back.TransactionIntentID != nil || back.ClaimAttempts != 1 {
			t.Fatalf("released reward = %+v", back)
		}
		creatorAcct := token2022.AssociatedTokenAddress(mustKey(t, a.creator.wallet.addr), s.Token.Mint)
		before := balance(t, s, creatorAcct)
		if r := claim(s, a.creator.person, rw.ID); r.Status != http.StatusOK {
			t.Fatalf("claim again: %d %s", r.Status, r.Body)
		}
		done := awaitReward(t, s, a.creator.person, rw.ID, "RECONCILED")
		if done.ClaimAttempts != 2 {
			t.Fatalf("reward = %+v", done)
		}
		if got := balance(t, s, creatorAcct) - before; got != rewardAmount {
			t.Fatalf("the creator received %d, want %d", got, rewardAmount)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM rewards WHERE challenge_id = ?`, a.challenge.ID); n != 1 {
			t.Fatalf("%d rewards: a second allocation", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'reward.distributed' AND aggregate_id = ?`, rw.ID); n != 1 {
			t.Fatalf("%d reward.distributed events", n)
		}
	})
}

// TestRewardClaimRules: 50 concurrent claims make one intent; another
// user's claim is 404; a claimant without the wallet verified is
// WALLET_REQUIRED, with another wallet WALLET_MISMATCH; an API key cannot
// claim.
func TestRewardClaimRules(t *testing.T) {
	t.Parallel()
	lim := apikey.Limits{RequestsPerMinute: 1000, MaxConcurrentRequests: 100}
	s := platformtest.New(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true},
		SessionLimits: transport.SessionLimits{User: lim, Workspace: lim}})
	a := newArena(t, s)
	rw := a.funded(t)
	other := fundedBuyer(t, s, "other@example.test", 0)
	if r := claim(s, other.person, rw.ID); r.Status != http.StatusNotFound {
		t.Fatalf("another user's claim: %d %s", r.Status, r.Body)
	}
	var wg sync.WaitGroup
	ids := make([]string, 50)
	fails := make([]string, 50)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := claim(s, a.creator.person, rw.ID)
			var env struct {
				Data api.RewardClaimView `json:"data"`
			}
			if r.Status == http.StatusOK && json.Unmarshal(r.Body, &env) == nil {
				ids[i] = env.Data.TransactionIntent.ID
			} else {
				fails[i] = strconv.Itoa(r.Status) + " " + string(r.Body)
			}
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("claim %d answered intent %q (%s), claim 0 %q", i, id, fails[i], ids[0])
		}
	}
	if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents WHERE purpose = 'reward_claim'`); n != 1 {
		t.Fatalf("%d payout intents", n)
	}
	// Another claim, by a creator whose wallet is not (or not this one) verified.
	lone := signIn(t, s, "lone@example.test", "Lone")
	onboard(t, s, &lone, "Lone Studio")
	w := newWalletKey(t)
	linkWallet(t, s, lone, w)
	tokenAccount(t, s, w.addr, s.Token.Mint)
	s.Cluster.AdvanceSlots(40)
	r := asTest(s, a.lead.person, http.MethodPost, "/api/v1/projects/"+a.project.ID+"/rewards/allocate", "allocate-lone", map[string]any{
		"challengeId": a.challenge.ID, "items": []map[string]any{{"wallet": w.addr, "amountAtomic": "1000000000", "reference": "lone"}}})
	var alloc api.AllocationView
	r.Data(t, &alloc)
	if r.Status != http.StatusCreated {
		t.Fatalf("allocate: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	if _, err := s.DB.Read().IDB().ExecContext(ctx, `DELETE FROM wallet_links WHERE address = ?`, w.addr); err != nil {
		t.Fatal(err)
	}
	if r := claim(s, lone, alloc.Items[0].ID); r.Code() != "WALLET_REQUIRED" {
		t.Fatalf("no verified wallet: %d %s", r.Status, r.Body)
	}
	linkWallet(t, s, lone, newWalletKey(t))
	if r := claim(s, lone, alloc.Items[0].ID); r.Code() != "WALLET_MISMATCH" {
		t.Fatalf("another verified wallet: %d %s", r.Status, r.Body)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents WHERE purpose = 'reward_claim'`); n != 1 {
		t.Fatalf("%d payout intents after the refused claims", n)
	}
	// The public intent route cannot create a payout.
	if r := createIntent(s, a.creator, "payout", map[string]any{"purpose": "reward_claim", "mint": s.Token.Mint.String(),
		"wallet": a.creator.wallet.addr}); r.Status != http.StatusBadRequest || detail(r, "field") != "purpose" {
		t.Fatalf("payout through the intent route: %d %s", r.Status, r.Body)
	}
}

// TestRewardFundingFaults: an unreadable treasury balance is
// BALANCE_UNAVAILABLE and changes nothing; a balance that drops below
// coverage after FUNDED moves the pool back to RESERVED and its
// unclaimed reward to ALLOCATED (not claimable) until the treasury is
// topped up.
func TestRewardFundingFaults(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}})
	a := newArena(t, s)
	rw := a.funded(t)
	before := count(t, s, `SELECT COUNT(*) FROM outbox_events`)
	s.Cluster.Inject(chaintest.Fault{Method: "getTokenAccountBalance", HTTPStatus: http.StatusBadGateway})
	r := a.reconcile(a.lead.person)
	if r.Code() != "BALANCE_UNAVAILABLE" {
		t.Fatalf("cluster down: %d %s", r.Status, r.Body)
	}
	s.Cluster.ClearFaults()
	if after := count(t, s, `SELECT COUNT(*) FROM outbox_events`); after != before {
		t.Fatalf("a failed reconciliation wrote %d events", after-before)
	}
	// The treasury's balance drops below what the pool still owes.
	acct := token2022.AssociatedTokenAddress(s.RewardTreasury, s.Token.Mint)
	setTokenBalance(t, s, acct, rewardAmount)
	s.Cluster.AdvanceSlots(40)
	r = a.reconcile(a.lead.person)
	var c api.ChallengeView
	r.Data(t, &c)
	if r.Status != http.StatusOK || c.Pool.FundingStatus != "RESERVED" || c.Pool.Funded || c.Pool.Evidence.BalanceAtomic != strconv.Itoa(rewardAmount) {
		t.Fatalf("after the drop: %d %s", r.Status, r.Body)
	}
	if got := myReward(t, s, a.creator.person, rw.ID); got.State != "ALLOCATED" || got.FundingStatus != "RESERVED" {
		t.Fatalf("reward after the drop = %+v", got)
	}
	if r := claim(s, a.creator.person, rw.ID); r.Code() != "CONFLICT" || detail(r, "reason") != "not_claimable" {
		t.Fatalf("claim while short: %d %s", r.Status, r.Body)
	}
	a.fund(t, 2*rewardPool)
	r = asTest(s, a.lead.person, http.MethodPost, "/api/v1/rewards/"+rw.ID+"/funding/reconcile", "", nil)
	var back api.RewardView
	r.Data(t, &back)
	if r.Status != http.StatusOK || back.State != "CLAIMABLE" || back.FundingStatus != "CLAIMABLE" {
		t.Fatalf("topped up: %d %s", r.Status, r.Body)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, "reward-funding:"+a.challenge.ID); n != 1 {
		t.Fatalf("%d funding movements", n)
	}
}

// dbContains counts the text and blob values of every table of the
// system's database that contain b.
func dbContains(t *testing.T, s *platformtest.System, b []byte) int {
	t.Helper()
	ctx := context.Background()
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if s.DB.Dialect() == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	var tables []string
	if err := s.DB.Read().IDB().NewRaw(q).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, table := range tables {
		rows, err := s.DB.Read().IDB().QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if bytes.Contains(v, b) {
					n++
				}
			}
		}
		rows.Close()
	}
	return n
}

// setTokenBalance rewrites a token account's amount on the cluster.
func setTokenBalance(t *testing.T, s *platformtest.System, acct chain.Address, amount uint64) {
	t.Helper()
	ac, ok := s.Cluster.Account(acct)
	if !ok {
		t.Fatalf("no account %s", acct)
	}
	data := bytes.Clone(ac.Data)
	for i := range 8 {
		data[64+i] = byte(amount >> (8 * i))
	}
	ac.Data = data
	s.Cluster.SetAccount(acct, ac)
}

// TestRewardTreasuryKeyNeverLeaks: after a payout, the treasury's private
// key (or its seed) appears in no log line, no database row and no
// response.
func TestRewardTreasuryKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, rewardOptions())
	a := newArena(t, s)
	rw := a.funded(t)
	r := claim(s, a.creator.person, rw.ID)
	awaitReward(t, s, a.creator.person, rw.ID, "RECONCILED")
	key := s.RewardTreasuryKey
	for _, form := range [][]byte{key, key.Seed(), []byte(hex.EncodeToString(key.Seed())), []byte(token2022.EncodeBase58(key)),
		[]byte(token2022.EncodeBase58(key.Seed()))} {
		if strings.Contains(s.Log.String(), string(form)) || bytes.Contains(r.Body, form) {
			t.Fatal("the treasury key appears in the log or a response")
		}
		if n := dbContains(t, s, form); n > 0 {
			t.Fatalf("the treasury key appears in %d database values", n)
		}
	}
}

// liveReward writes a live challenge of project projectID and a reward of
// it to the bootstrap owner's wallet, as the rewards domain writes them.
func liveReward(t *testing.T, s *platformtest.System, boot platform.Bootstrap, projectID, wallet string) {
	t.Helper()
	ctx := context.Background()
	w := mustKey(t, wallet)
	now := s.Clock.Now()
	sc := access.Scope{TenantID: boot.TenantID, WorkspaceID: boot.WorkspaceID, Environment: access.Live}
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c := rewards.Challenge{ID: tx.NewID(rewards.ChallengePrefix), Version: 1, Scope: sc, ProjectID: projectID, Title: "Live challenge",
			Window: rewards.Window{OpensAt: now, ClosesAt: now.Add(time.Hour)}, Status: rewards.StatusWinnersSelected,
			Pool: rewards.Pool{AmountAtomic: 5, Mint: w, Decimals: 9, Funding: rewards.FundingClaimable, FundedAt: now}, CreatedByUserID: boot.OwnerID,
			CreatedAt: now, UpdatedAt: now}
		if err := tx.ChallengeInsert(ctx, c); err != nil {
			return err
		}
		return tx.RewardInsert(ctx, rewards.Reward{ID: tx.NewID(rewards.RewardPrefix), Version: 1, Scope: sc, ProjectID: projectID,
			ChallengeID: c.ID, AllocationKey: c.ID + ":live", Reference: "live", RecipientUserID: boot.OwnerID, Wallet: w, AmountAtomic: 5,
			Mint: w, Decimals: 9, State: rewards.StateClaimable, Funding: rewards.FundingClaimable, AllocatedByUserID: boot.OwnerID,
			AllocatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRewardRoutesAuthorization calls every reward route as principals
// that may not: a narrower member (VIEWER, CREATOR, FINANCE where it
// lacks the permission), a narrower key, another workspace of another
// tenant, the other environment, and another user; each gets the code the
// route documents and nothing changes. The permitted principals (the
// owner, FINANCE reconciling, an internal key) succeed.
func TestRewardRoutesAuthorization(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}})
	ctx := context.Background()
	owner, m := team(t, s, "arena", map[string]string{"viewer": "VIEWER", "creator": "CREATOR", "finance": "FINANCE"})
	owner.userID = authContext(t, s, owner.cookie).User.ID
	a := &arena{s: s, lead: seller{person: owner}}
	a.creator = fundedBuyer(t, s, "creator@example.test", 0)
	r := asTest(s, owner, http.MethodPost, "/api/v1/projects", "", map[string]any{"title": "Night Drive", "type": "remix", "visibility": "public"})
	r.Data(t, &a.project)
	a.challenge = a.create(t, owner, http.StatusCreated)
	outsider := fundedBuyer(t, s, "outsider@example.test", 0)
	live := func(p person, method, path string, body any) *platformtest.Response {
		return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body,
			Header: map[string]string{"Platform-Environment": "live"}})
	}
	kr, _ := createKeyAs(t, s, owner, map[string]any{"name": "narrow", "scopes": []string{"read"}})
	narrowKey := func(method, path string, body any) *platformtest.Response {
		return s.Do(platformtest.Request{Method: method, Path: path, Key: kr, Body: body})
	}
	tenant := authContext(t, s, owner.cookie).Tenant.ID
	var ws string
	if err := s.DB.Read().IDB().NewRaw(`SELECT workspace_id FROM projects WHERE id = ?`, a.project.ID).Scan(ctx, &ws); err != nil {
		t.Fatal(err)
	}
	_, internalTest, err := s.P.IssueInternalKey(ctx, tenant, ws, owner.userID, "test", "operator")
	if err != nil {
		t.Fatal(err)
	}
	ch := "/api/v1/challenges/" + a.challenge.ID
	create := map[string]any{"projectId": a.project.ID, "title": "Another", "window": map[string]any{"opensAt": s.Clock.Now(),
		"closesAt": s.Clock.Now().Add(time.Hour)}, "poolAtomic": "1", "mint": s.Token.Mint.String()}

	// Create: reward.allocate reaching the project.
	refused(t, "viewer creates", asTest(s, m["viewer"], http.MethodPost, "/api/v1/challenges", "", create), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "creator creates on the owner's project", asTest(s, m["creator"], http.MethodPost, "/api/v1/challenges", "", create),
		http.StatusForbidden, "ACCESS_DENIED", "permission", "reward.allocate")
	refused(t, "finance creates", asTest(s, m["finance"], http.MethodPost, "/api/v1/challenges", "", create), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "another tenant creates", asTest(s, outsider.person, http.MethodPost, "/api/v1/challenges", "", create), http.StatusNotFound, "NOT_FOUND")
	refused(t, "the other environment creates", live(owner, http.MethodPost, "/api/v1/challenges", create), http.StatusNotFound, "NOT_FOUND")
	// Status: each edge's permission.
	refused(t, "viewer moves", asTest(s, m["viewer"], http.MethodPost, ch+"/status", "", map[string]string{"status": "SCHEDULED"}),
		http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "narrow key moves", narrowKey(http.MethodPost, ch+"/status", map[string]string{"status": "SCHEDULED"}), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "another tenant moves", asTest(s, outsider.person, http.MethodPost, ch+"/status", "", map[string]string{"status": "SCHEDULED"}),
		http.StatusNotFound, "NOT_FOUND")
	refused(t, "the other environment moves", live(owner, http.MethodPost, ch+"/status", map[string]string{"status": "SCHEDULED"}),
		http.StatusNotFound, "NOT_FOUND")
	refused(t, "a skip", asTest(s, owner, http.MethodPost, ch+"/status", "", map[string]string{"status": "OPEN"}), http.StatusConflict,
		"INVALID_STATE_TRANSITION")
	var version int64
	if err := s.DB.Read().IDB().NewRaw(`SELECT version FROM challenges WHERE id = ?`, a.challenge.ID).Scan(ctx, &version); err != nil || version != 1 {
		t.Fatalf("refused moves changed the challenge: version %d, %v", version, err)
	}
	for _, st := range []string{"SCHEDULED", "OPEN", "SUBMISSIONS_CLOSED", "REVIEW", "VOTING", "WINNERS_SELECTED"} {
		a.challenge = a.move(t, owner, st, http.StatusOK)
	}
	// Funding reconciliation: reward.reconcile or the internal scope.
	refused(t, "creator reconciles", asTest(s, m["creator"], http.MethodPost, ch+"/funding/reconcile", "", nil), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "viewer reconciles", asTest(s, m["viewer"], http.MethodPost, ch+"/funding/reconcile", "", nil), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "narrow key reconciles", narrowKey(http.MethodPost, ch+"/funding/reconcile", nil), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "another tenant reconciles", asTest(s, outsider.person, http.MethodPost, ch+"/funding/reconcile", "", nil), http.StatusNotFound, "NOT_FOUND")
	refused(t, "the other environment reconciles", live(m["finance"], http.MethodPost, ch+"/funding/reconcile", nil), http.StatusNotFound, "NOT_FOUND")
	a.fund(t, 2*rewardPool)
	if r := asTest(s, m["finance"], http.MethodPost, ch+"/funding/reconcile", "", nil); r.Status != http.StatusOK {
		t.Fatalf("finance reconciles: %d %s", r.Status, r.Body)
	}
	if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: ch + "/funding/reconcile", Key: internalTest}); r.Status != http.StatusOK {
		t.Fatalf("the internal key reconciles: %d %s", r.Status, r.Body)
	}
	// Allocation: reward.allocate reaching the project.
	alloc := map[string]any{"challengeId": a.challenge.ID, "items": []map[string]any{{"wallet": a.creator.wallet.addr, "amountAtomic": "1"}}}
	allocPath := "/api/v1/projects/" + a.project.ID + "/rewards/allocate"
	refused(t, "finance allocates", asTest(s, m["finance"], http.MethodPost, allocPath, "x1", alloc), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "creator allocates", asTest(s, m["creator"], http.MethodPost, allocPath, "x2", alloc), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "narrow key allocates", narrowKey(http.MethodPost, allocPath, alloc), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "another tenant allocates", asTest(s, outsider.person, http.MethodPost, allocPath, "x3", alloc), http.StatusNotFound, "NOT_FOUND")
	refused(t, "the other environment allocates", s.Do(platformtest.Request{Method: http.MethodPost, Path: allocPath, Cookie: owner.cookie,
		Body: alloc, Header: map[string]string{"Platform-Environment": "live", "Idempotency-Key": "x4"}}), http.StatusNotFound, "NOT_FOUND")
	if n := count(t, s, `SELECT COUNT(*) FROM rewards`); n != 0 {
		t.Fatalf("refused allocations wrote %d rewards", n)
	}
	r = asTest(s, owner, http.MethodPost, allocPath, "ok", alloc)
	var out api.AllocationView
	r.Data(t, &out)
	rw := out.Items[0]
	// Reads.
	refused(t, "another tenant reads the project's rewards", asTest(s, outsider.person, http.MethodGet, "/api/v1/projects/"+a.project.ID+"/rewards", "", nil),
		http.StatusNotFound, "NOT_FOUND")
	if r := asTest(s, m["viewer"], http.MethodGet, "/api/v1/projects/"+a.project.ID+"/rewards", "", nil); r.Status != http.StatusOK ||
		!bytes.Contains(r.Body, []byte(rw.ID)) {
		t.Fatalf("a member reads the project's rewards: %d %s", r.Status, r.Body)
	}
	if r := asTest(s, outsider.person, http.MethodGet, "/api/v1/rewards", "", nil); r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(rw.ID)) {
		t.Fatalf("another user's rewards: %d %s", r.Status, r.Body)
	}
	if r := live(a.creator.person, http.MethodGet, "/api/v1/rewards", nil); r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(rw.ID)) {
		t.Fatalf("the other environment's rewards: %d %s", r.Status, r.Body)
	}
	if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/creators/not-a-wallet/rewards"}); r.Code() != "INVALID_INPUT" {
		t.Fatalf("a bad wallet, anonymous: %d %s", r.Status, r.Body)
	}
	// Claims: the recipient alone.
	refused(t, "the owner claims", claim(s, owner, rw.ID), http.StatusNotFound, "NOT_FOUND")
	refused(t, "another tenant claims", claim(s, outsider.person, rw.ID), http.StatusNotFound, "NOT_FOUND")
	refused(t, "the other environment claims", live(a.creator.person, http.MethodPost, "/api/v1/rewards/"+rw.ID+"/claim", nil), http.StatusNotFound, "NOT_FOUND")
	refused(t, "a key claims", narrowKey(http.MethodPost, "/api/v1/rewards/"+rw.ID+"/claim", nil), http.StatusForbidden, "ACCESS_DENIED")
	refused(t, "a reward reconcile by another tenant", asTest(s, outsider.person, http.MethodPost, "/api/v1/rewards/"+rw.ID+"/funding/reconcile", "", nil),
		http.StatusNotFound, "NOT_FOUND")
	if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents`); n != 0 {
		t.Fatalf("refused claims made %d intents", n)
	}
}

// createKeyAs creates a test-mode API key as p's session.
func createKeyAs(t *testing.T, s *platformtest.System, p person, body any) (string, api.KeySecret) {
	t.Helper()
	r := asTest(s, p, http.MethodPost, "/api/v1/api-keys", "", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var ks api.KeySecret
	r.Data(t, &ks)
	return ks.Secret, ks
}
