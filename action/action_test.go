package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/rewards"
)

// The fixture: user usr_me of ten_me/ws_me in live, owning a verified
// wallet; a listing sold by another workspace; a reward allocated to
// usr_me; a pack policy pricing 100 credits in two mints.
const (
	net      = "solana:livecluster"
	otherNet = "solana:elsewhere"
)

var (
	mintA      = addr(1)
	mintB      = addr(2)
	mintC      = addr(3) // priced nowhere
	myWallet   = addr(10)
	spare      = addr(11) // verified too, but not the reward's
	unverified = addr(12)
)

func addr(b byte) chain.Address { return chain.Address{b, 7, 7, 7} }

// fakeIntents is the intent service: configured per environment, with a
// network read from the cluster, counting what would change anything.
type fakeIntents struct {
	configured map[access.Environment]bool
	network    string
	networkErr error
	prepared   []intent.Request
	recorded   int
}

func (f *fakeIntents) Configured(env access.Environment) bool { return f.configured[env] }

func (f *fakeIntents) Network(_ context.Context, env access.Environment) (string, error) {
	if f.networkErr != nil {
		return "", f.networkErr
	}
	if !f.configured[env] {
		return "", fault.E("fake.Network", fault.ServiceUnavailable, "")
	}
	return f.network, nil
}

func (f *fakeIntents) Prepare(_ context.Context, _ *access.Principal, req intent.Request) (intent.Draft, error) {
	f.prepared = append(f.prepared, req)
	return intent.Draft{Intent: intent.Intent{ID: fmt.Sprintf("txi_%d", len(f.prepared)), Purpose: req.Purpose}}, nil
}

func (f *fakeIntents) Record(context.Context, intent.Store, intent.Draft) error {
	f.recorded++
	return nil
}

// fakeClaims is the rewards domain's claim service.
type fakeClaims struct {
	configured bool
	// unread: the treasury was never read by a funding reconciliation.
	unread  bool
	claimed []string
}

func (f *fakeClaims) Configured(access.Environment) bool { return f.configured }

func (f *fakeClaims) Payouts(context.Context, rewards.TreasuryReader, access.Environment) (rewards.Payouts, error) {
	switch {
	case !f.configured:
		return rewards.Payouts{Reason: rewards.ReasonNotConfigured}, nil
	case f.unread:
		return rewards.Payouts{Configured: true, Reason: rewards.ReasonNotChecked}, nil
	}
	return rewards.Payouts{Configured: true, Verified: true, Enabled: true}, nil
}

func (f *fakeClaims) Claim(_ context.Context, _ rewards.ClaimReader, _ rewards.ClaimRunFunc, _ *access.Principal, id string) (rewards.Reward, intent.Intent, error) {
	f.claimed = append(f.claimed, id)
	return rewards.Reward{ID: id}, intent.Intent{ID: "txi_claim"}, nil
}

// fakeWallets verifies the (tenant, user, address) triples it holds.
type fakeWallets struct {
	verified map[string]bool
	err      error
}

func (f *fakeWallets) Verified(_ context.Context, tenantID, userID string, a chain.Address) (bool, error) {
	return f.verified[tenantID+"/"+userID+"/"+a.String()], f.err
}

// fakeStore holds listings and rewards of one environment.
type fakeStore struct {
	env      access.Environment
	listings map[string]marketplace.Listing
	rewards  map[string]rewards.Reward
	err      error
}

func (f *fakeStore) ListingGet(_ context.Context, env access.Environment, id string) (marketplace.Listing, error) {
	if f.err != nil {
		return marketplace.Listing{}, f.err
	}
	l, ok := f.listings[id]
	if !ok || env != f.env {
		return marketplace.Listing{}, fault.E("fake.ListingGet", fault.NotFound, "")
	}
	return l, nil
}

func (f *fakeStore) ChallengeNewestEvidence(context.Context, access.Environment) (rewards.Challenge, error) {
	return rewards.Challenge{}, fault.E("fakeStore", fault.NotFound, "no reading")
}

func (f *fakeStore) RewardGet(_ context.Context, env access.Environment, id string) (rewards.Reward, error) {
	if f.err != nil {
		return rewards.Reward{}, f.err
	}
	r, ok := f.rewards[id]
	if !ok || env != f.env {
		return rewards.Reward{}, fault.E("fake.RewardGet", fault.NotFound, "")
	}
	return r, nil
}

// fixture is one Service over fakes, a caller and its authority.
type fixture struct {
	intents *fakeIntents
	claims  *fakeClaims
	wallets *fakeWallets
	store   *fakeStore
	packs   intent.CreditPacks
	swapNet string
	swapMs  []string
	swapOn  bool // the Swap func is configured
	p       *access.Principal
	a       *access.Authority
}

func newFixture() *fixture {
	f := &fixture{
		intents: &fakeIntents{configured: map[access.Environment]bool{access.Live: true}, network: net},
		claims:  &fakeClaims{configured: true},
		wallets: &fakeWallets{verified: map[string]bool{
			"ten_me/usr_me/" + myWallet.String(): true,
			"ten_me/usr_me/" + spare.String():    true,
		}},
		store: &fakeStore{env: access.Live,
			listings: map[string]marketplace.Listing{
				"lst_theirs": {ID: "lst_theirs", Scope: access.Scope{TenantID: "ten_seller", WorkspaceID: "ws_seller", Environment: access.Live},
					PriceAtomic: 5000, Mint: mintA},
				"lst_mine": {ID: "lst_mine", Scope: access.Scope{TenantID: "ten_me", WorkspaceID: "ws_me", Environment: access.Live},
					PriceAtomic: 5000, Mint: mintA},
			},
			rewards: map[string]rewards.Reward{
				"rwd_mine": {ID: "rwd_mine", RecipientUserID: "usr_me", Wallet: myWallet, AmountAtomic: 700, Mint: mintB,
					State: rewards.StateClaimable},
				"rwd_retry": {ID: "rwd_retry", RecipientUserID: "usr_me", Wallet: myWallet, AmountAtomic: 700, Mint: mintB,
					State: rewards.StateSubmitted, IntentID: "txi_earlier"},
				"rwd_allocated": {ID: "rwd_allocated", RecipientUserID: "usr_me", Wallet: myWallet, AmountAtomic: 700, Mint: mintB,
					State: rewards.StateAllocated},
				"rwd_theirs": {ID: "rwd_theirs", RecipientUserID: "usr_other", Wallet: spare, AmountAtomic: 900, Mint: mintB,
					State: rewards.StateClaimable},
				"rwd_zero": {ID: "rwd_zero", RecipientUserID: "usr_me", Wallet: myWallet, AmountAtomic: 0, Mint: mintB,
					State: rewards.StateClaimable},
			}},
		packs: intent.CreditPacks{Packs: []intent.CreditPack{
			{Credits: "100", Prices: map[string]string{mintA.String(): "1000", mintB.String(): "2000"}},
			{Credits: "500", Prices: map[string]string{mintA.String(): "4500"}},
		}},
		swapNet: net, swapMs: []string{mintB.String()}, swapOn: true,
		p: &access.Principal{Kind: access.CredentialSession, TenantID: "ten_me", WorkspaceID: "ws_me", Environment: access.Live,
			UserID: "usr_me", SessionID: "ses_me"},
		a: owner(),
	}
	return f
}

// owner is an active OWNER of ws_me with the marketplace and swap flags on.
func owner() *access.Authority {
	return &access.Authority{TenantID: "ten_me", WorkspaceID: "ws_me", Environment: access.Live, UserID: "usr_me",
		MembershipStatus: access.MembershipActive, Roles: []access.Role{access.RoleOwner},
		Flags: map[string]bool{marketplace.FeatureMarketplace: true, swapFlag: true}}
}

func (f *fixture) service(t *testing.T) *Service {
	t.Helper()
	cfg := Config{Intents: f.intents, Wallets: f.wallets,
		Packs: func(context.Context, access.Environment) (intent.CreditPacks, intent.PolicyRef, error) {
			return f.packs, intent.PolicyRef{}, nil
		}}
	if f.claims != nil {
		cfg.Claims = f.claims
	}
	if f.swapOn {
		cfg.Swap = func(context.Context, access.Environment) (string, []string, error) { return f.swapNet, f.swapMs, nil }
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// valid returns a request of kind k every check passes.
func valid(k Kind) Request {
	switch k {
	case KindCreditPurchase:
		return Request{Kind: k, SubjectID: "100", Wallet: myWallet.String(), AmountAtomic: "2000", Network: net, Currency: mintB.String()}
	case KindMarketplaceOrder:
		return Request{Kind: k, SubjectID: "lst_theirs", Wallet: myWallet.String(), AmountAtomic: "5000", Network: net, Currency: mintA.String()}
	case KindRewardClaim:
		return Request{Kind: k, SubjectID: "rwd_mine", Wallet: myWallet.String(), AmountAtomic: "700", Network: net, Currency: mintB.String()}
	}
	return Request{Kind: k, Wallet: myWallet.String(), Network: net, Currency: mintB.String()}
}

// outcomes renders a preflight's results as "check:outcome[:code:reason]"
// in the order they were answered.
func outcomes(p Preflight) []string {
	var out []string
	for _, r := range p.Results {
		s := string(r.Check) + ":" + string(r.Outcome)
		if r.Outcome != Passed {
			s += ":" + string(r.Code) + ":" + r.Reason
		}
		out = append(out, s)
	}
	return out
}

// expect is every check passed except those named in not (check ->
// "outcome:code:reason").
func expect(not map[Check]string) []string {
	var out []string
	for _, c := range Checks() {
		if o, ok := not[c]; ok {
			out = append(out, string(c)+":"+o)
			continue
		}
		out = append(out, string(c)+":passed")
	}
	return out
}

// TestPreflightPassesAValidRequestOfEachKind: every check answered in
// the documented order, all passed, the server's amount, network and
// currency stated, and nothing prepared, recorded or claimed.
func TestPreflightPassesAValidRequestOfEachKind(t *testing.T) {
	for _, c := range []struct {
		in       Request
		amount   string
		currency chain.Address
	}{
		{valid(KindCreditPurchase), "2000", mintB},
		{func() Request {
			r := valid(KindCreditPurchase)
			r.Currency, r.AmountAtomic = mintA.String(), ""
			return r
		}(), "1000", mintA},
		{valid(KindMarketplaceOrder), "5000", mintA},
		{valid(KindRewardClaim), "700", mintB},
		{func() Request { r := valid(KindRewardClaim); r.SubjectID = "rwd_retry"; return r }(), "700", mintB}, // a claim asked again
	} {
		f := newFixture()
		pf, err := f.service(t).Preflight(context.Background(), f.store, f.p, f.a, c.in)
		if err != nil {
			t.Fatalf("%s %s: %v", c.in.Kind, c.in.SubjectID, err)
		}
		if got := outcomes(pf); !slices.Equal(got, expect(nil)) || !pf.OK() || pf.Err() != nil {
			t.Errorf("%s %s: %v", c.in.Kind, c.in.SubjectID, got)
		}
		if pf.Kind != c.in.Kind || pf.AmountAtomic != c.amount || pf.Network != net || pf.Currency != c.currency.String() {
			t.Errorf("%s %s: amount %q network %q currency %q", c.in.Kind, c.in.SubjectID, pf.AmountAtomic, pf.Network, pf.Currency)
		}
		if len(f.intents.prepared) != 0 || f.intents.recorded != 0 || len(f.claims.claimed) != 0 {
			t.Errorf("%s: preflight changed something: %d prepared, %d recorded, %d claimed", c.in.Kind, len(f.intents.prepared),
				f.intents.recorded, len(f.claims.claimed))
		}
	}
}

// TestPreflightEachCheckFailsAlone: breaking one input of a valid request
// fails that check alone, with its documented code and reason; the only
// other checks not passed are those the failure leaves without inputs
// (skipped, never passed). Err answers the failed check.
func TestPreflightEachCheckFailsAlone(t *testing.T) {
	type tweak func(f *fixture, in *Request)
	viewer := func(f *fixture, _ *Request) { f.a.Roles = []access.Role{access.RoleViewer} }
	for _, c := range []struct {
		name  string
		kind  Kind
		tweak tweak
		want  map[Check]string
	}{
		// 1. feature
		{"an environment without the payment path", KindCreditPurchase, func(f *fixture, _ *Request) { f.intents.configured = nil },
			map[Check]string{CheckFeature: "failed:SERVICE_UNAVAILABLE:not_configured", CheckNetwork: "skipped:SERVICE_UNAVAILABLE:network_unknown"}},
		{"the marketplace flag off", KindMarketplaceOrder, func(f *fixture, _ *Request) { f.a.Flags[marketplace.FeatureMarketplace] = false },
			map[Check]string{CheckFeature: "failed:FEATURE_DISABLED:disabled_by_flag"}},
		{"no reward treasury", KindRewardClaim, func(f *fixture, _ *Request) { f.claims.configured = false },
			map[Check]string{CheckFeature: "failed:SERVICE_UNAVAILABLE:not_configured"}},
		{"no claim service", KindRewardClaim, func(f *fixture, _ *Request) { f.claims = nil },
			map[Check]string{CheckFeature: "failed:SERVICE_UNAVAILABLE:not_configured"}},
		// 2. subject
		{"a pack not offered", KindCreditPurchase, func(_ *fixture, in *Request) { in.SubjectID = "300" },
			map[Check]string{CheckSubject: "failed:NOT_FOUND:not_found", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
				CheckCurrency: "skipped:NOT_FOUND:subject_unknown"}},
		{"a pack size not canonical", KindCreditPurchase, func(_ *fixture, in *Request) { in.SubjectID = "0100" },
			map[Check]string{CheckSubject: "failed:NOT_FOUND:not_found", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
				CheckCurrency: "skipped:NOT_FOUND:subject_unknown"}},
		{"a listing of no one", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.SubjectID = "lst_missing" },
			map[Check]string{CheckSubject: "failed:NOT_FOUND:not_found", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
				CheckCurrency: "skipped:NOT_FOUND:subject_unknown"}},
		{"a listing of the other environment", KindMarketplaceOrder, func(f *fixture, _ *Request) { f.store.env = access.Test },
			map[Check]string{CheckSubject: "failed:NOT_FOUND:not_found", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
				CheckCurrency: "skipped:NOT_FOUND:subject_unknown"}},
		{"another user's reward", KindRewardClaim, func(_ *fixture, in *Request) { in.SubjectID = "rwd_theirs"; in.AmountAtomic = "" },
			map[Check]string{CheckSubject: "failed:NOT_FOUND:not_found", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
				CheckCurrency: "skipped:NOT_FOUND:subject_unknown"}},
		{"a reward not yet claimable", KindRewardClaim, func(_ *fixture, in *Request) { in.SubjectID = "rwd_allocated" },
			map[Check]string{CheckSubject: "failed:CONFLICT:not_claimable"}},
		// 3. actor
		{"an API key", KindCreditPurchase, func(f *fixture, _ *Request) {
			f.p.Kind, f.p.KeyID, f.p.Scopes = access.CredentialAPIKey, "key_me", []string{"read", "billing:write"}
		}, map[Check]string{CheckActor: "failed:ACCESS_DENIED:session_required"}},
		{"a viewer buying credits", KindCreditPurchase, viewer, map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_billing.manage"}},
		{"a viewer buying a license", KindMarketplaceOrder, viewer, map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_billing.manage"}},
		{"a viewer claiming", KindRewardClaim, viewer, map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_reward.claim"}},
		{"an explicit deny", KindRewardClaim, func(f *fixture, _ *Request) { f.a.Denies = []access.Permission{access.RewardClaim} },
			map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_reward.claim"}},
		{"a suspended member", KindCreditPurchase, func(f *fixture, _ *Request) { f.a.MembershipStatus = "suspended" },
			map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_billing.manage"}},
		{"no authority", KindCreditPurchase, func(f *fixture, _ *Request) { f.a = nil },
			map[Check]string{CheckActor: "failed:ACCESS_DENIED:permission_billing.manage"}},
		{"buying one's own listing", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.SubjectID = "lst_mine" },
			map[Check]string{CheckActor: "failed:INVALID_INPUT:own_listing"}},
		// 4. destination
		{"no wallet", KindCreditPurchase, func(_ *fixture, in *Request) { in.Wallet = "" },
			map[Check]string{CheckDestination: "failed:WALLET_REQUIRED:wallet_missing_or_malformed"}},
		{"a malformed wallet", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.Wallet = "0OIl-not-base58" },
			map[Check]string{CheckDestination: "failed:WALLET_REQUIRED:wallet_missing_or_malformed"}},
		{"an unverified wallet", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.Wallet = unverified.String() },
			map[Check]string{CheckDestination: "failed:WALLET_REQUIRED:wallet_not_verified"}},
		{"a wallet verified in another tenant", KindCreditPurchase, func(f *fixture, _ *Request) { f.p.TenantID = "ten_else" },
			map[Check]string{CheckDestination: "failed:WALLET_REQUIRED:wallet_not_verified"}},
		{"a verified wallet that is not the reward's", KindRewardClaim, func(_ *fixture, in *Request) { in.Wallet = spare.String() },
			map[Check]string{CheckDestination: "failed:WALLET_MISMATCH:not_the_reward_wallet"}},
		// 5. amount
		{"another pack price", KindCreditPurchase, func(_ *fixture, in *Request) { in.AmountAtomic = "1000" }, // mintA's price
			map[Check]string{CheckAmount: "failed:INVALID_AMOUNT:amount_differs"}},
		{"another listing price", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.AmountAtomic = "4999" },
			map[Check]string{CheckAmount: "failed:INVALID_AMOUNT:amount_differs"}},
		{"another reward amount", KindRewardClaim, func(_ *fixture, in *Request) { in.AmountAtomic = "0700" },
			map[Check]string{CheckAmount: "failed:INVALID_AMOUNT:amount_differs"}},
		{"a reward of nothing", KindRewardClaim, func(_ *fixture, in *Request) { in.SubjectID, in.AmountAtomic = "rwd_zero", "" },
			map[Check]string{CheckAmount: "failed:INVALID_AMOUNT:zero"}},
		// 6. network
		{"another network", KindCreditPurchase, func(_ *fixture, in *Request) { in.Network = otherNet },
			map[Check]string{CheckNetwork: "failed:NETWORK_MISMATCH:network_differs"}},
		{"no network stated", KindRewardClaim, func(_ *fixture, in *Request) { in.Network = "" },
			map[Check]string{CheckNetwork: "failed:NETWORK_MISMATCH:network_differs"}},
		{"a cluster that cannot be read", KindMarketplaceOrder, func(f *fixture, _ *Request) {
			f.intents.networkErr = fault.E("fake.Network", fault.ProviderUnavailable, "")
		}, map[Check]string{CheckNetwork: "skipped:SERVICE_UNAVAILABLE:network_unknown"}},
		// 7. currency
		{"a mint no pack is priced in", KindCreditPurchase, func(_ *fixture, in *Request) { in.Currency, in.AmountAtomic = mintC.String(), "" },
			map[Check]string{CheckAmount: "skipped:INVALID_AMOUNT:currency_unknown", CheckCurrency: "failed:TOKEN_NOT_TRUSTED:currency_not_allowed"}},
		{"another mint than the listing's", KindMarketplaceOrder, func(_ *fixture, in *Request) { in.Currency = mintB.String() },
			map[Check]string{CheckCurrency: "failed:TOKEN_NOT_TRUSTED:currency_not_allowed"}},
		{"another mint than the reward's", KindRewardClaim, func(_ *fixture, in *Request) { in.Currency = mintA.String() },
			map[Check]string{CheckCurrency: "failed:TOKEN_NOT_TRUSTED:currency_not_allowed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			in := valid(c.kind)
			c.tweak(f, &in)
			pf, err := f.service(t).Preflight(context.Background(), f.store, f.p, f.a, in)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := outcomes(pf), expect(c.want); !slices.Equal(got, want) {
				t.Errorf("outcomes\n got %v\nwant %v", got, want)
			}
			if pf.OK() {
				t.Error("OK with a failed check")
			}
			// Err answers the first check not passed, in check order.
			first := ""
			for _, ch := range Checks() {
				if _, ok := c.want[ch]; ok {
					first = string(ch)
					break
				}
			}
			var fe *fault.Error
			err = pf.Err()
			if !errors.As(err, &fe) {
				t.Fatalf("Err = %v", err)
			}
			parts := strings.Split(c.want[Check(first)], ":")
			code, details := fault.CodeOf(err), fe.Details
			if string(code) != parts[1] || details["check"] != first || details["reason"] != parts[2] {
				t.Errorf("Err = %s %v, want %s check %s reason %s", code, details, parts[1], first, parts[2])
			}
			if pf.AmountAtomic != "" && c.want[CheckAmount] != "" {
				t.Errorf("an amount %q answered with the amount check %s", pf.AmountAtomic, c.want[CheckAmount])
			}
			if len(f.intents.prepared) != 0 || f.intents.recorded != 0 || (f.claims != nil && len(f.claims.claimed) != 0) {
				t.Error("preflight changed something")
			}
		})
	}
}

// TestPreflightDoesNotTellAnotherUsersReward: another user's reward is
// answered as a reward of no one: the same outcomes, no amount, no
// currency, no wallet compared.
func TestPreflightDoesNotTellAnotherUsersReward(t *testing.T) {
	f := newFixture()
	s := f.service(t)
	theirs, missing := valid(KindRewardClaim), valid(KindRewardClaim)
	theirs.SubjectID, missing.SubjectID = "rwd_theirs", "rwd_missing"
	a, err := s.Preflight(context.Background(), f.store, f.p, f.a, theirs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Preflight(context.Background(), f.store, f.p, f.a, missing)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(outcomes(a), outcomes(b)) || a.AmountAtomic != "" || a.Currency != "" {
		t.Errorf("another's reward %v (amount %q, currency %q); a missing one %v", outcomes(a), a.AmountAtomic, a.Currency, outcomes(b))
	}
}

// TestPreflightSwap: a swap has no subject here (quote_required); its
// amount and currency are never passed in its place; its network is the
// swap registry's.
func TestPreflightSwap(t *testing.T) {
	f := newFixture()
	f.swapNet = "solana:swapcluster"
	in := valid(KindSwap)
	in.Network = "solana:swapcluster"
	pf, err := f.service(t).Preflight(context.Background(), f.store, f.p, f.a, in)
	if err != nil {
		t.Fatal(err)
	}
	want := expect(map[Check]string{CheckSubject: "failed:CAPABILITY_UNSUPPORTED:quote_required",
		CheckAmount: "skipped:NOT_FOUND:subject_unknown", CheckCurrency: "skipped:NOT_FOUND:subject_unknown"})
	if got := outcomes(pf); !slices.Equal(got, want) {
		t.Errorf("swap\n got %v\nwant %v", got, want)
	}

	// The swap flag off: the feature check fails first.
	f = newFixture()
	f.a.Flags[swapFlag] = false
	pf, err = f.service(t).Preflight(context.Background(), f.store, f.p, f.a, valid(KindSwap))
	if err != nil {
		t.Fatal(err)
	}
	if r := pf.Results[0]; r.Check != CheckFeature || r.Outcome != Failed || r.Code != fault.FeatureDisabled || r.Reason != "disabled_by_flag" {
		t.Errorf("swap with its flag off: %v", outcomes(pf))
	}
}

// TestPreflightSwapNotConfigured: without the swap configuration (Config
// doc: a nil Swap reports that action's feature not configured) the
// feature check fails not_configured and the network, which only the swap
// registry states, is unknown.
func TestPreflightSwapNotConfigured(t *testing.T) {
	f := newFixture()
	f.swapOn = false
	pf, err := f.service(t).Preflight(context.Background(), f.store, f.p, f.a, valid(KindSwap))
	if err != nil {
		t.Fatal(err)
	}
	want := expect(map[Check]string{CheckFeature: "failed:SERVICE_UNAVAILABLE:not_configured",
		CheckSubject: "failed:CAPABILITY_UNSUPPORTED:quote_required", CheckAmount: "skipped:NOT_FOUND:subject_unknown",
		CheckNetwork: "skipped:SERVICE_UNAVAILABLE:network_unknown", CheckCurrency: "skipped:NOT_FOUND:subject_unknown"})
	if got := outcomes(pf); !slices.Equal(got, want) {
		t.Errorf("swap without its configuration\n got %v\nwant %v", got, want)
	}
}

// TestPreflightClaimBeforeTheTreasuryWasRead: a configured treasury no
// funding reconciliation has read fails the feature check alone, with
// the reason GET /api/v1/features gives (not_checked).
func TestPreflightClaimBeforeTheTreasuryWasRead(t *testing.T) {
	f := newFixture()
	f.claims.unread = true
	pf, err := f.service(t).Preflight(context.Background(), f.store, f.p, f.a, valid(KindRewardClaim))
	if err != nil {
		t.Fatal(err)
	}
	want := expect(map[Check]string{CheckFeature: "failed:SERVICE_UNAVAILABLE:not_checked"})
	if got := outcomes(pf); !slices.Equal(got, want) {
		t.Errorf("claim before the treasury was read\n got %v\nwant %v", got, want)
	}
}

// TestPreflightErrors: an unknown kind is INVALID_INPUT (details.field
// kind) before anything is read; a store or wallet failure is an error,
// never a check's outcome; a cluster failure other than the provider
// being unavailable is an error too.
func TestPreflightErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	f.store.err = errors.New("disk on fire")
	s := f.service(t)
	_, err := s.Preflight(ctx, f.store, f.p, f.a, Request{Kind: "gift"})
	var fe *fault.Error
	if !fault.Is(err, fault.InvalidInput) || !errors.As(err, &fe) || fe.Details["field"] != "kind" {
		t.Errorf("an unknown kind: %v", err)
	}
	if _, err := s.Preflight(ctx, f.store, f.p, f.a, valid(KindMarketplaceOrder)); !fault.Is(err, fault.Internal) {
		t.Errorf("a store failure: %v", err)
	}

	f = newFixture()
	f.wallets.err = errors.New("link table gone")
	if _, err := f.service(t).Preflight(ctx, f.store, f.p, f.a, valid(KindCreditPurchase)); !fault.Is(err, fault.Internal) {
		t.Errorf("a wallet failure: %v", err)
	}

	f = newFixture()
	f.intents.networkErr = errors.New("cluster config unreadable")
	if _, err := f.service(t).Preflight(ctx, f.store, f.p, f.a, valid(KindCreditPurchase)); !fault.Is(err, fault.Internal) {
		t.Errorf("a cluster failure: %v", err)
	}

	if _, err := New(Config{Intents: &fakeIntents{}}); err == nil {
		t.Error("New without Packs and Wallets")
	}
}

// TestDefinitions: the catalog lists the four actions in order with their
// permission, feature, flags and flow, its networks and currencies read
// from the configuration alone (the cluster, the pack policy's mints, the
// swap registry's executable mints), none for what a subject fixes, and
// the same for every caller of the environment.
func TestDefinitions(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	s := f.service(t)
	ds := s.Definitions(ctx, f.p)
	var kinds []Kind
	for _, d := range ds {
		kinds = append(kinds, d.Kind)
	}
	if !slices.Equal(kinds, Kinds()) {
		t.Fatalf("kinds %v, want %v", kinds, Kinds())
	}
	packMints := []string{mintA.String(), mintB.String()}
	slices.Sort(packMints)
	for _, c := range []struct {
		d          Definition
		perm       access.Permission
		feature    string
		flags      []string
		networks   []string
		currencies []string
		flow       string
	}{
		{ds[0], access.BillingManage, FeatureChainPayments, nil, []string{net}, packMints, FlowActions},
		{ds[1], access.BillingManage, FeatureChainPayments, []string{marketplace.FeatureMarketplace}, []string{net}, nil, FlowActions},
		{ds[2], access.RewardClaim, FeatureRewardPayouts, nil, []string{net}, nil, FlowActions},
		{ds[3], access.WalletSign, FeatureChainPayments, []string{swapFlag}, []string{net}, []string{mintB.String()}, FlowSwap},
	} {
		d := c.d
		if d.Permission != c.perm || d.Feature != c.feature || !slices.Equal(d.Flags, c.flags) || !slices.Equal(d.Networks, c.networks) ||
			!slices.Equal(d.Currencies, c.currencies) || d.Flow != c.flow || d.SubjectType == "" || d.Destination == "" || d.CurrencySource == "" {
			t.Errorf("%s: %+v", d.Kind, d)
		}
	}

	// Another caller of the environment (an API key of another tenant)
	// reads the same catalog: nothing comes from a caller.
	key := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_x", WorkspaceID: "ws_x", Environment: access.Live, UserID: "usr_x",
		KeyID: "key_x", Scopes: []string{"read"}}
	if other := s.Definitions(ctx, key); fmt.Sprint(other) != fmt.Sprint(ds) {
		t.Errorf("another caller's catalog differs:\n%+v\n%+v", other, ds)
	}

	// An environment without the payment path, no claim service, no
	// swap registry: no networks, the pack mints still the policy's.
	f = newFixture()
	f.intents.configured, f.claims, f.swapOn = nil, nil, false
	for _, d := range f.service(t).Definitions(ctx, f.p) {
		want := 0
		if d.Kind == KindCreditPurchase {
			want = 2
		}
		if len(d.Networks) != 0 || len(d.Currencies) != want {
			t.Errorf("unconfigured %s: networks %v currencies %v", d.Kind, d.Networks, d.Currencies)
		}
	}
}

// TestRunHandsOffAfterPreflight: a purchase prepares through the intent
// service exactly the request the transaction intent route takes; a
// claim goes to the rewards domain; a failed check is the error and
// nothing is handed off; a swap is refused with the quote route.
func TestRunHandsOffAfterPreflight(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	s := f.service(t)
	d, err := s.Purchase(ctx, f.store, f.p, f.a, valid(KindCreditPurchase))
	if err != nil || d.ID != "txi_1" {
		t.Fatalf("purchase: %+v, %v", d, err)
	}
	if _, err := s.Purchase(ctx, f.store, f.p, f.a, valid(KindMarketplaceOrder)); err != nil {
		t.Fatal(err)
	}
	want := []intent.Request{
		{Purpose: intent.PurposeCreditPurchase, Credits: "100", Mint: mintB.String(), Wallet: myWallet.String()},
		{Purpose: marketplace.PurposeOrder, ListingID: "lst_theirs", Wallet: myWallet.String()},
	}
	if fmt.Sprint(f.intents.prepared) != fmt.Sprint(want) {
		t.Errorf("prepared %+v, want %+v", f.intents.prepared, want)
	}
	if err := s.Record(ctx, nil, d); err != nil || f.intents.recorded != 1 {
		t.Errorf("record: %v, %d recorded", err, f.intents.recorded)
	}

	// A failed check: its error, nothing prepared.
	bad := valid(KindCreditPurchase)
	bad.Network = otherNet
	_, err = s.Purchase(ctx, f.store, f.p, f.a, bad)
	var fe *fault.Error
	if !fault.Is(err, fault.NetworkMismatch) || !errors.As(err, &fe) || fe.Details["check"] != "network" || len(f.intents.prepared) != 2 {
		t.Errorf("a purchase on another network: %v (%d prepared)", err, len(f.intents.prepared))
	}
	if _, err := s.Purchase(ctx, f.store, f.p, f.a, valid(KindRewardClaim)); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("a claim as a purchase: %v", err)
	}

	// A claim.
	r, it, err := s.Claim(ctx, f.store, nil, nil, f.p, f.a, valid(KindRewardClaim))
	if err != nil || r.ID != "rwd_mine" || it.ID != "txi_claim" || !slices.Equal(f.claims.claimed, []string{"rwd_mine"}) {
		t.Errorf("claim: %+v %+v %v, claimed %v", r, it, err, f.claims.claimed)
	}
	wrong := valid(KindRewardClaim)
	wrong.Wallet = spare.String()
	if _, _, err := s.Claim(ctx, f.store, nil, nil, f.p, f.a, wrong); !fault.Is(err, fault.WalletMismatch) || len(f.claims.claimed) != 1 {
		t.Errorf("a claim to another wallet: %v, claimed %v", err, f.claims.claimed)
	}
	if _, _, err := s.Claim(ctx, f.store, nil, nil, f.p, f.a, valid(KindCreditPurchase)); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("a purchase as a claim: %v", err)
	}

	// A swap.
	err = SwapRefusal()
	if !fault.Is(err, fault.CapabilityUnsupported) || !errors.As(err, &fe) || fe.Details["reason"] != "quote_required" ||
		fe.Details["flow"] != "/api/v1/swap/quotes" {
		t.Errorf("swap refusal: %v", err)
	}
	if _, err := IntentRequest(valid(KindSwap)); !fault.Is(err, fault.InvalidInput) {
		t.Errorf("a swap's intent request: %v", err)
	}
}
