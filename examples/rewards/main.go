// Command rewards runs a challenge to a paid reward in test mode, through
// the HTTP API, on the example host started with its loopback Solana
// cluster: the demo owner runs the challenge and allocates a reward to the
// guest account (the second demo creator, of its own tenant), and the
// guest claims it and sees the tokens arrive.
//
//	go run ./examples/server                # in one shell
//	go run ./examples/rewards               # in another
//
// It reads DATA/demo-credentials.json (both accounts' emails and
// passwords, the demo test key), DATA/demo-wallet-guest.json (the guest
// wallet's keypair, which the host writes and funds) and DATA/services.json
// (the cluster's address and the reward treasury, which the host funds
// with 10,000 TOKEN on every start), then, with Platform-Environment: test
// on every request:
//
//  1. signs both accounts in, and verifies the guest's wallet (a
//     link_wallet challenge signed with its keypair): a reward pays a
//     wallet some creator verified, and that creator is the recipient;
//  2. creates a project of the demo workspace (visibility workspace) and
//     opens it, or uses -project;
//  3. creates a challenge with a pool of -pool tokens of the deployed mint
//     (its pool ANNOUNCED: published, not funded) and moves it one step at
//     a time to WINNERS_SELECTED;
//  4. reconciles the pool's funding: the platform reads the reward
//     treasury's token account at finalized and records FUNDED with the
//     slot, the balance and what the pool requires;
//  5. allocates -reward tokens to the guest's wallet (reference
//     first-place; CLAIMABLE at once) and marks the challenge
//     REWARDS_ALLOCATED;
//  6. as the guest: reads the wallet's token balance on the cluster,
//     claims the reward (the platform freezes a reward_claim intent, the
//     treasury's signer signs it server-side and the platform relays it:
//     the guest signs nothing), polls the reward until reconciliation has
//     verified the payout at finalized (SUBMITTED, CONFIRMED, DISTRIBUTED,
//     RECONCILED), and prints the balance after, the difference and the
//     guest's rewards ledger movement.
//
// -claim REWARD runs step 6 alone for a reward allocated already (the
// README's walk-through allocates with curl). A failed call prints the
// API's error code and message. It prints addresses and signatures, never
// a keypair or a password.
package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/examples/internal/democlient"
	"github.com/creatormusic/platform/transport/api"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rewards:", err)
		os.Exit(1)
	}
}

// decimals are the deployed mint's; the pool and reward flags are whole
// tokens of it.
const decimals = 9

func run() error {
	addr := flag.String("addr", "http://127.0.0.1:8080", "the example host's base `URL`")
	data := flag.String("data", "./data", "the host's data `folder` (demo-credentials.json, demo-wallet-guest.json, services.json)")
	project := flag.String("project", "", "run the challenge in this project `id` of the demo workspace; empty creates one")
	pool := flag.Uint64("pool", 100, "the challenge's reward pool, in whole `tokens`")
	reward := flag.Uint64("reward", 25, "the guest's reward, in whole `tokens`")
	claimID := flag.String("claim", "", "claim this reward `id` as the guest and wait for the payout (step 6 alone)")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait for the payout to be verified and reconciled")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	cred, err := readCredentials(*data)
	if err != nil {
		return err
	}
	cm, err := readChainMap(*data)
	if err != nil {
		return err
	}
	guestPath := filepath.Join(*data, "demo-wallet-guest.json")
	guestKey, err := democlient.ReadKeypair(guestPath)
	if err != nil {
		return fmt.Errorf("read the guest wallet (start the host first): %w", err)
	}
	c := &client{&democlient.Client{Base: strings.TrimRight(*addr, "/"), HTTP: &http.Client{Timeout: 15 * time.Second}}}
	fmt.Printf("Host %s, test mode. Reward treasury %s.\n", c.Base, cm.Treasury)

	guest, err := c.SignIn(ctx, cred.Guest.Email, cred.Guest.Password)
	if err != nil {
		return err
	}
	if err := c.linkWallet(ctx, guest, guestKey); err != nil {
		return err
	}
	id := *claimID
	if id == "" {
		if *reward == 0 || *reward > *pool {
			return fmt.Errorf("-reward %d must be positive and at most -pool %d", *reward, *pool)
		}
		owner, err := c.SignIn(ctx, cred.OwnerEmail, cred.OwnerPassword)
		if err != nil {
			return err
		}
		guestWallet := solana.PublicKeyFromBytes(guestKey.Public().(ed25519.PublicKey)).String()
		if id, err = runChallenge(ctx, c, owner, cred.APIKey, *project, guestWallet, *pool, *reward); err != nil {
			return err
		}
	}
	return claim(ctx, c, guest, guestKey, cm.RPC, id, *timeout)
}

// whole is n whole tokens in atomic units.
func whole(n uint64) string {
	return new(big.Int).Mul(new(big.Int).SetUint64(n), big.NewInt(1_000_000_000)).String()
}

// runChallenge runs steps 2 to 5 as the demo owner: a project (or
// project), a challenge moved to WINNERS_SELECTED, its funding reconciled,
// reward tokens allocated to wallet, and REWARDS_ALLOCATED. It returns the
// reward's id.
func runChallenge(ctx context.Context, c *client, owner auth, key, project, wallet string, pool, reward uint64) (string, error) {
	var dep api.TokenDeploymentView
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/token/deployment", nil, auth{APIKey: key}, &dep); err != nil {
		return "", fmt.Errorf("read the test environment's token deployment: %w", err)
	}
	if dep.Mint == nil {
		return "", fmt.Errorf("the test environment has no deployed mint (state %s): start the host with its Solana cluster", dep.State)
	}
	mint := *dep.Mint
	if project == "" {
		var p api.ProjectView
		if _, err := c.Call(ctx, http.MethodPost, "/api/v1/projects", map[string]string{"title": "Rewards demo", "type": "remix",
			"visibility": "workspace"}, owner.WithKey("rewards-project"), &p); err != nil {
			return "", fmt.Errorf("create the project: %w", err)
		}
		if _, err := c.Call(ctx, http.MethodPost, "/api/v1/projects/"+url.PathEscape(p.ID)+"/status", map[string]string{"status": "OPEN"},
			owner, &p); err != nil {
			return "", fmt.Errorf("open the project: %w", err)
		}
		project = p.ID
		fmt.Printf("Project %s %q (%s), %s.\n", p.ID, p.Title, p.Visibility, p.Status)
	}

	now := time.Now().UTC().Truncate(time.Second)
	var ch api.ChallengeView
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/challenges", map[string]any{"projectId": project, "title": "Remix the rewards demo",
		"rules":      "One entry per creator; the best remix takes the reward.",
		"window":     map[string]time.Time{"opensAt": now, "closesAt": now.Add(7 * 24 * time.Hour)},
		"poolAtomic": whole(pool), "mint": mint}, owner.WithKey("rewards-challenge"), &ch); err != nil {
		return "", fmt.Errorf("create the challenge: %w", err)
	}
	fmt.Printf("Challenge %s %q %s: pool %s of %s (%s, funded %t).\n", ch.ID, ch.Title, ch.Status, ch.Pool.Amount, ch.Pool.Mint,
		ch.Pool.FundingStatus, ch.Pool.Funded)
	path := "/api/v1/challenges/" + url.PathEscape(ch.ID)
	for _, st := range []string{"SCHEDULED", "OPEN", "SUBMISSIONS_CLOSED", "REVIEW", "VOTING", "WINNERS_SELECTED"} {
		if _, err := c.Call(ctx, http.MethodPost, path+"/status", map[string]string{"status": st}, owner, &ch); err != nil {
			return "", fmt.Errorf("move the challenge to %s: %w", st, err)
		}
		fmt.Printf("  %s (version %d)\n", ch.Status, ch.Version)
	}

	if _, err := c.Call(ctx, http.MethodPost, path+"/funding/reconcile", nil, owner, &ch); err != nil {
		return "", fmt.Errorf("reconcile the pool's funding: %w", err)
	}
	ev := ch.Pool.Evidence
	if ev == nil || !ch.Pool.Funded {
		return "", fmt.Errorf("the pool is %s after reconciliation: the treasury does not cover it", ch.Pool.FundingStatus)
	}
	fmt.Printf("Funding %s: treasury account %s holds %s at slot %d (%s), the pool requires %s.\n", ch.Pool.FundingStatus, ev.TreasuryAccount,
		intent.FormatAtomic(atoi(ev.BalanceAtomic), decimals), ev.Slot, ev.Commitment, intent.FormatAtomic(atoi(ev.RequiredAtomic), decimals))

	var alloc api.AllocationView
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/projects/"+url.PathEscape(project)+"/rewards/allocate", map[string]any{
		"challengeId": ch.ID, "items": []map[string]string{{"wallet": wallet, "amountAtomic": whole(reward), "reference": "first-place"}}},
		owner.WithKey("rewards-allocate"), &alloc); err != nil {
		return "", fmt.Errorf("allocate the reward: %w", err)
	}
	if len(alloc.Items) != 1 {
		return "", fmt.Errorf("the allocation answered %d rewards, want 1", len(alloc.Items))
	}
	r := alloc.Items[0]
	fmt.Printf("Reward %s %s: %s to %s (creator %s, reference %s).\n", r.ID, r.State, r.Amount, r.Wallet, r.RecipientUserID, r.Reference)
	if _, err := c.Call(ctx, http.MethodPost, path+"/status", map[string]string{"status": "REWARDS_ALLOCATED"}, owner, &ch); err != nil {
		return "", fmt.Errorf("mark the rewards allocated: %w", err)
	}
	fmt.Printf("Challenge %s, pool %s.\n", ch.Status, ch.Pool.FundingStatus)
	return r.ID, nil
}

// claim runs step 6 as the guest: the wallet's balance, the claim, the
// wait until the payout is verified and reconciled, the balance after and
// the ledger movement.
func claim(ctx context.Context, c *client, guest auth, key ed25519.PrivateKey, rpcURL, id string, timeout time.Duration) error {
	r, err := myReward(ctx, c, guest, id)
	if err != nil {
		return err
	}
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	mint, err := token2022.ParsePublicKey(r.Mint)
	if err != nil {
		return fmt.Errorf("the reward's mint %q: %w", r.Mint, err)
	}
	ata := token2022.AssociatedTokenAddress(token2022.PublicKey(wallet), mint)
	tokenAccount := solana.PublicKey(ata)
	cluster := rpc.New(rpcURL)
	before, err := balance(ctx, cluster, tokenAccount)
	if err != nil {
		return err
	}
	fmt.Printf("Guest wallet %s holds %s of %s before (finalized).\n", wallet, intent.FormatAtomic(before, uint8(r.Decimals)), r.Mint)

	var cv api.RewardClaimView
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/rewards/"+url.PathEscape(id)+"/claim", nil, guest, &cv); err != nil {
		return fmt.Errorf("claim reward %s: %w", id, err)
	}
	it := cv.TransactionIntent
	fmt.Printf("Claimed reward %s: %s. Intent %s (%s, %s): the treasury %s pays %s (fee %s), %s receives %s.\n", id, cv.Reward.State,
		it.ID, it.Purpose, it.State, it.Payer, it.Review.Pay, it.Review.Fee, it.Recipient, it.Review.Net)
	if it.Signature != nil {
		fmt.Printf("  signed server-side by the treasury's signer: signature %s\n", *it.Signature)
	}

	deadline := time.Now().Add(timeout)
	last := cv.Reward.State + "/" + deref(cv.Reward.IntentState)
	for r = cv.Reward; r.State != "RECONCILED" && r.State != "REQUIRES_REVIEW"; {
		if time.Now().After(deadline) {
			return fmt.Errorf("reward %s is still %s (intent %s) after %s", id, r.State, deref(r.IntentState), timeout)
		}
		if r.State == "CLAIMABLE" || r.State == "ALLOCATED" {
			return fmt.Errorf("the payout of reward %s ended %s and the reward is %s again: claim it again", id, deref(r.IntentState), r.State)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if r, err = myReward(ctx, c, guest, id); err != nil {
			return err
		}
		if now := r.State + "/" + deref(r.IntentState); now != last {
			fmt.Printf("  %s (creator state %s, intent %s)\n", r.State, r.CreatorState, deref(r.IntentState))
			last = now
		}
	}
	if r.State != "RECONCILED" {
		return fmt.Errorf("reward %s ended %s: the payout did not match", id, r.State)
	}
	after, err := balance(ctx, cluster, tokenAccount)
	if err != nil {
		return err
	}
	diff := new(big.Int).Sub(new(big.Int).SetUint64(after), new(big.Int).SetUint64(before))
	fmt.Printf("Guest wallet %s holds %s after (finalized): +%s, exactly the reward of %s.\n", wallet,
		intent.FormatAtomic(after, uint8(r.Decimals)), intent.FormatAtomic(diff.Uint64(), uint8(r.Decimals)), r.Amount)
	if diff.Sign() < 0 || diff.String() != r.AmountAtomic {
		return fmt.Errorf("the wallet received %s atomic units, want %s", diff, r.AmountAtomic)
	}
	var page api.LedgerPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/ledgers/rewards?limit=20", nil, guest, &page); err != nil {
		return fmt.Errorf("read the guest's rewards ledger: %w", err)
	}
	for _, m := range page.Items {
		if m.Reference != "claim:reward_claim:"+deref(r.TransactionIntentID) {
			continue
		}
		fmt.Printf("Ledger: %s %s (reference %s)\n", m.Ledger, m.Type, m.Reference)
		for _, p := range m.Postings {
			fmt.Printf("  %-6s %s %s\n", p.Direction, p.AmountAtomic, p.Account)
		}
	}
	return nil
}

// myReward reads reward id among the guest's rewards.
func myReward(ctx context.Context, c *client, guest auth, id string) (api.RewardView, error) {
	var page api.RewardPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/rewards?limit=100", nil, guest, &page); err != nil {
		return api.RewardView{}, fmt.Errorf("read the guest's rewards: %w", err)
	}
	for _, r := range page.Items {
		if r.ID == id {
			return r, nil
		}
	}
	return api.RewardView{}, fmt.Errorf("reward %s is not among the guest's newest rewards", id)
}

// balance is a token account's balance at finalized on the cluster.
func balance(ctx context.Context, cluster *rpc.Client, account solana.PublicKey) (uint64, error) {
	res, err := cluster.GetTokenAccountBalance(ctx, account, rpc.CommitmentFinalized)
	if err != nil {
		return 0, fmt.Errorf("read token account %s on the cluster: %w", account, err)
	}
	if res == nil || res.Value == nil {
		return 0, errors.New("read token account " + account.String() + ": no value")
	}
	var n uint64
	if _, err := fmt.Sscan(res.Value.Amount, &n); err != nil {
		return 0, fmt.Errorf("token account %s: amount %q: %w", account, res.Value.Amount, err)
	}
	return n, nil
}

// atoi is an atomic amount's value; 0 when it is not one.
func atoi(s string) uint64 {
	var n uint64
	fmt.Sscan(s, &n)
	return n
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
