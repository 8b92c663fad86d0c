package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/action"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// actionAs posts body to path as p in test mode, with an Idempotency-Key
// when idem is set.
func actionAs(s *platformtest.System, p person, path, idem string, body any) *platformtest.Response {
	return asTest(s, p, http.MethodPost, path, idem, body)
}

// preflight answers the preflight of body as p; it must be 200.
func preflight(t *testing.T, s *platformtest.System, p person, body any) api.ActionPreflightView {
	t.Helper()
	r := actionAs(s, p, "/api/v1/actions/preflight", "", body)
	if r.Status != http.StatusOK {
		t.Fatalf("preflight: %d %s", r.Status, r.Body)
	}
	var v api.ActionPreflightView
	r.Data(t, &v)
	return v
}

// onlyFailed reports the checks of v that failed; skipped ones (whose
// inputs the failure made unknown) are not failures.
func onlyFailed(v api.ActionPreflightView) []string {
	var out []string
	for _, c := range v.Checks {
		if c.Outcome == "failed" {
			out = append(out, c.Check+":"+*c.Code)
		}
	}
	return out
}

// frozen is an intent's frozen economics: the view without what is
// unique to one intent (id, reference, memo, prepared transaction,
// business reference, economics hash over them, times).
func frozen(v api.TransactionIntentView) api.TransactionIntentView {
	v.ID, v.Reference, v.Memo, v.BusinessReference, v.EconomicsHash, v.Transaction = "", "", "", "", "", nil
	v.CreatedAt, v.ExpiresAt, v.UpdatedAt = time.Time{}, time.Time{}, time.Time{}
	return v
}

// TestActionCreditPurchaseIsTheIntentRoute: the catalog reads the
// environment's network and the credit pack policy's mints; POST
// /api/v1/actions for a credit purchase freezes the intent the intent
// route freezes for the same request, and a duplicate (same key) answers
// it again and creates nothing more.
func TestActionCreditPurchaseIsTheIntentRoute(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		p := fundedBuyer(t, s, "payer@example.test", 0)
		network, mint := s.Cluster.Network().CAIP2(), s.Token.Mint.String()

		r := asTest(s, p.person, http.MethodGet, "/api/v1/actions/definitions", "", nil)
		var defs api.ActionDefinitions
		r.Data(t, &defs)
		if r.Status != http.StatusOK || len(defs.Items) != len(action.Kinds()) {
			t.Fatalf("definitions: %d %s", r.Status, r.Body)
		}
		var checks []string
		for _, c := range action.Checks() {
			checks = append(checks, string(c))
		}
		if !slices.Equal(defs.Checks, checks) {
			t.Errorf("checks %v, want %v", defs.Checks, checks)
		}
		credit := defs.Items[0]
		if credit.Kind != "credit_purchase" || credit.Permission != "billing.manage" || !slices.Equal(credit.Networks, []string{network}) ||
			!slices.Contains(credit.Currencies, mint) || credit.Flow != "actions" {
			t.Errorf("credit_purchase definition %+v", credit)
		}
		if swap := defs.Items[3]; swap.Kind != "swap" || swap.Flow != "swap" {
			t.Errorf("swap definition %+v", swap)
		}

		body := map[string]any{"kind": "credit_purchase", "subjectId": "100", "wallet": p.wallet.addr, "network": network, "currency": mint}
		if v := preflight(t, s, p.person, body); !v.Allowed || len(onlyFailed(v)) != 0 || v.AmountAtomic == nil || *v.AmountAtomic != "1000000000" {
			t.Fatalf("preflight of a valid purchase: %+v", v)
		}
		refused(t, "no Idempotency-Key", actionAs(s, p.person, "/api/v1/actions", "", body), http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED")
		r = actionAs(s, p.person, "/api/v1/actions", "act-100", body)
		if r.Status != http.StatusCreated {
			t.Fatalf("run: %d %s", r.Status, r.Body)
		}
		var res api.ActionResultView
		r.Data(t, &res)
		r = createIntent(s, p, "intent-100", map[string]any{"purpose": "credit_purchase", "credits": "100", "mint": mint, "wallet": p.wallet.addr})
		if r.Status != http.StatusCreated {
			t.Fatalf("intent route: %d %s", r.Status, r.Body)
		}
		var direct api.TransactionIntentView
		r.Data(t, &direct)
		if res.Kind != "credit_purchase" || res.Reward != nil || res.TransactionIntent.ID == direct.ID {
			t.Fatalf("action result %+v", res)
		}
		if diff := cmp.Diff(frozen(direct), frozen(res.TransactionIntent)); diff != "" {
			t.Errorf("the action's intent differs from the intent route's (-route +action):\n%s", diff)
		}
		if res.TransactionIntent.NetAtomic != "1000000000" || res.TransactionIntent.Recipient != s.Token.Treasury.String() {
			t.Errorf("action intent %+v", res.TransactionIntent)
		}

		r = actionAs(s, p.person, "/api/v1/actions", "act-100", body)
		var again api.ActionResultView
		r.Data(t, &again)
		if r.Status != http.StatusCreated || again.TransactionIntent.ID != res.TransactionIntent.ID || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("duplicate: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents`); n != 2 {
			t.Fatalf("%d intents, want the action's and the route's", n)
		}
		other := map[string]any{"kind": "credit_purchase", "subjectId": "500", "wallet": p.wallet.addr, "network": network, "currency": mint}
		refused(t, "same key, other body", actionAs(s, p.person, "/api/v1/actions", "act-100", other), http.StatusConflict, "IDEMPOTENCY_CONFLICT")

		swap := map[string]any{"kind": "swap", "subjectId": "q", "wallet": p.wallet.addr, "network": network, "currency": mint}
		refused(t, "swap through actions", actionAs(s, p.person, "/api/v1/actions", "act-swap", swap), http.StatusUnprocessableEntity,
			"CAPABILITY_UNSUPPORTED", "reason", "quote_required")
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents`); n != 2 {
			t.Fatalf("%d intents after refusals, want 2", n)
		}
	})
}

// TestActionPreflightChecks: each check fails alone, in order (a check
// whose inputs the failure leaves unknown is skipped, never failed or
// passed), on a marketplace order; a failed run answers the first failed
// check; nothing is written.
func TestActionPreflightChecks(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		m := newMarket(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "non_exclusive")
		b := fundedBuyer(t, s, "buyer@example.test", 0)
		ac := authContext(t, s, b.cookie)
		admin := join(t, s, "admin@buyer.example", "Admin", invite(t, s, b.person, "admin@buyer.example", "ADMIN"))
		adminWallet := newWalletKey(t)
		linkWallet(t, s, admin, adminWallet)
		network, mint := s.Cluster.Network().CAIP2(), s.Token.Mint.String()
		valid := func() map[string]any {
			return map[string]any{"kind": "marketplace_order", "subjectId": m.listing.ID, "wallet": b.wallet.addr,
				"amountAtomic": strconv.Itoa(salePrice), "network": network, "currency": mint}
		}
		if v := preflight(t, s, b.person, valid()); !v.Allowed {
			t.Fatalf("a valid order: %+v", v)
		}
		cases := []struct {
			check  action.Check
			who    person
			change func(map[string]any)
			code   string
		}{
			{action.CheckFeature, b.person, nil, "FEATURE_DISABLED"},
			{action.CheckSubject, b.person, func(x map[string]any) { x["subjectId"] = "lst_01jd0000000000000000000000" }, "NOT_FOUND"},
			{action.CheckActor, admin, func(x map[string]any) { x["wallet"] = adminWallet.addr }, "ACCESS_DENIED"},
			{action.CheckDestination, b.person, func(x map[string]any) { x["wallet"] = newWalletKey(t).addr }, "WALLET_REQUIRED"},
			{action.CheckAmount, b.person, func(x map[string]any) { x["amountAtomic"] = "1" }, "INVALID_AMOUNT"},
			{action.CheckNetwork, b.person, func(x map[string]any) { x["network"] = "solana:4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZ" }, "NETWORK_MISMATCH"},
			{action.CheckCurrency, b.person, func(x map[string]any) { x["currency"] = m.payout.addr }, "TOKEN_NOT_TRUSTED"},
		}
		for i, c := range cases {
			body := valid()
			if c.change != nil {
				c.change(body)
			}
			if c.check == action.CheckFeature {
				if err := s.P.SetFeatureFlag(ctx, ac.Tenant.ID, ac.Workspace.ID, marketplace.FeatureMarketplace, false); err != nil {
					t.Fatal(err)
				}
			}
			v := preflight(t, s, c.who, body)
			if got, want := onlyFailed(v), []string{string(c.check) + ":" + c.code}; !slices.Equal(got, want) || v.Allowed {
				t.Errorf("%s alone: failed %v, want %v (%+v)", c.check, got, want, v.Checks)
			}
			if len(v.Checks) != len(action.Checks()) || v.Checks[i].Check != string(c.check) {
				t.Errorf("%s: checks out of order: %+v", c.check, v.Checks)
			}
			for _, r := range v.Checks[:i] {
				if r.Outcome != "passed" {
					t.Errorf("%s: the earlier check %s did not pass: %+v", c.check, r.Check, r)
				}
			}
			r := actionAs(s, c.who, "/api/v1/actions", "run-"+string(c.check), body)
			if r.Code() != c.code || detail(r, "check") != string(c.check) {
				t.Errorf("run with %s failing: %d %s", c.check, r.Status, r.Body)
			}
			if c.check == action.CheckFeature {
				if err := s.P.SetFeatureFlag(ctx, ac.Tenant.ID, ac.Workspace.ID, marketplace.FeatureMarketplace, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents`); n != 0 {
			t.Fatalf("preflight and refused runs wrote %d intents", n)
		}
		// The seller does not buy its own listing.
		sellerWallet := m.payout.addr
		own := valid()
		own["wallet"] = sellerWallet
		v := preflight(t, s, m.seller.person, own)
		if got := onlyFailed(v); !slices.Equal(got, []string{"actor:INVALID_INPUT"}) {
			t.Errorf("the seller buys its listing: %v", got)
		}
		// A valid order runs through the intent flow, with its order.
		r := actionAs(s, b.person, "/api/v1/actions", "order-1", valid())
		var res api.ActionResultView
		r.Data(t, &res)
		if r.Status != http.StatusCreated || res.TransactionIntent.Purpose != "marketplace_order" || len(res.TransactionIntent.Legs) != 2 {
			t.Fatalf("order: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM marketplace_orders WHERE intent_id = ?`, res.TransactionIntent.ID); n != 1 {
			t.Fatalf("%d orders of the action's intent, want 1", n)
		}
	})
}

// TestActionAuthorization: for every action route, a narrower member, a
// narrower key, another workspace, another tenant and the other
// environment get the documented answer, and nothing is written.
func TestActionAuthorization(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		b := fundedBuyer(t, s, "owner@buyer.example", 0)
		ac := authContext(t, s, b.cookie)
		viewer := join(t, s, "viewer@buyer.example", "Viewer", invite(t, s, b.person, "viewer@buyer.example", "VIEWER"))
		viewerWallet := newWalletKey(t)
		linkWallet(t, s, viewer, viewerWallet)
		outsider := fundedBuyer(t, s, "outsider@elsewhere.example", 0)
		network, mint := s.Cluster.Network().CAIP2(), s.Token.Mint.String()
		body := func(wallet string) map[string]any {
			return map[string]any{"kind": "credit_purchase", "subjectId": "100", "wallet": wallet, "network": network, "currency": mint}
		}
		narrowKey, _ := createKeyAs(t, s, b.person, map[string]any{"name": "keys only", "scopes": []string{"keys:read"}})
		readKey, _ := createKeyAs(t, s, b.person, map[string]any{"name": "reader", "scopes": []string{"read"}})
		withKey := func(key, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Key: key, Body: body, Header: h})
		}
		into := func(p person, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{"Platform-Environment": "test", "X-Workspace-Id": ac.Workspace.ID}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
		}
		live := func(p person, method, path, idem string, body any) *platformtest.Response {
			h := map[string]string{"Platform-Environment": "live"}
			if idem != "" {
				h["Idempotency-Key"] = idem
			}
			return s.Do(platformtest.Request{Method: method, Path: path, Cookie: p.cookie, Body: body, Header: h})
		}

		// Definitions.
		refused(t, "a keys:read key reads definitions", withKey(narrowKey, http.MethodGet, "/api/v1/actions/definitions", "", nil),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "another tenant into this workspace reads definitions", into(outsider.person, http.MethodGet, "/api/v1/actions/definitions", "", nil),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		refused(t, "anonymous reads definitions", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/actions/definitions"}),
			http.StatusUnauthorized, "UNAUTHENTICATED")
		if r := withKey(readKey, http.MethodGet, "/api/v1/actions/definitions", "", nil); r.Status != http.StatusOK {
			t.Errorf("a read key reads definitions: %d %s", r.Status, r.Body)
		}
		r := live(b.person, http.MethodGet, "/api/v1/actions/definitions", "", nil)
		var defs api.ActionDefinitions
		r.Data(t, &defs)
		if r.Status != http.StatusOK || len(defs.Items[0].Networks) != 0 {
			t.Errorf("live definitions name a network the live environment does not configure: %d %s", r.Status, r.Body)
		}

		// Preflight: answered, with the failing check; never a change.
		if v := preflight(t, s, viewer, body(viewerWallet.addr)); !slices.Equal(onlyFailed(v), []string{"actor:ACCESS_DENIED"}) {
			t.Errorf("a viewer's preflight: %v", onlyFailed(v))
		}
		r = withKey(readKey, http.MethodPost, "/api/v1/actions/preflight", "", body(b.wallet.addr))
		var v api.ActionPreflightView
		r.Data(t, &v)
		if r.Status != http.StatusOK || !slices.Equal(onlyFailed(v), []string{"actor:ACCESS_DENIED"}) {
			t.Errorf("a read key's preflight: %d %s", r.Status, r.Body)
		}
		refused(t, "a keys:read key preflights", withKey(narrowKey, http.MethodPost, "/api/v1/actions/preflight", "", body(b.wallet.addr)),
			http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "another tenant into this workspace preflights", into(outsider.person, http.MethodPost, "/api/v1/actions/preflight", "", body(outsider.wallet.addr)),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		if v := preflight(t, s, outsider.person, body(b.wallet.addr)); !slices.Equal(onlyFailed(v), []string{"destination:WALLET_REQUIRED"}) {
			t.Errorf("another tenant pays from this tenant's wallet: %v", onlyFailed(v))
		}
		r = live(b.person, http.MethodPost, "/api/v1/actions/preflight", "", body(b.wallet.addr))
		r.Data(t, &v)
		if r.Status != http.StatusOK || v.Checks[0].Outcome != "failed" || *v.Checks[0].Code != "SERVICE_UNAVAILABLE" {
			t.Errorf("the other environment's preflight: %d %s", r.Status, r.Body)
		}

		// Run.
		refused(t, "a viewer buys", actionAs(s, viewer, "/api/v1/actions", "v1", body(viewerWallet.addr)), http.StatusForbidden, "ACCESS_DENIED",
			"check", "actor")
		refused(t, "a key buys", withKey(readKey, http.MethodPost, "/api/v1/actions", "k1", body(b.wallet.addr)), http.StatusForbidden, "ACCESS_DENIED")
		refused(t, "another tenant into this workspace buys", into(outsider.person, http.MethodPost, "/api/v1/actions", "o1", body(outsider.wallet.addr)),
			http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
		refused(t, "another tenant pays from this tenant's wallet", actionAs(s, outsider.person, "/api/v1/actions", "o2", body(b.wallet.addr)),
			http.StatusUnprocessableEntity, "WALLET_REQUIRED", "check", "destination")
		refused(t, "the other environment buys", live(b.person, http.MethodPost, "/api/v1/actions", "l1", body(b.wallet.addr)),
			http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "check", "feature")
		claim := map[string]any{"kind": "reward_claim", "subjectId": "rwd_01jd0000000000000000000000", "wallet": b.wallet.addr, "network": network,
			"currency": mint}
		// No funding reconciliation has read the reward treasury yet, so
		// reward payouts are not checked (as GET /features says) and the
		// feature check, the first, refuses the claim.
		refused(t, "a claim before the treasury was read", actionAs(s, b.person, "/api/v1/actions", "c1", claim), http.StatusServiceUnavailable,
			"SERVICE_UNAVAILABLE", "check", "feature", "reason", "not_checked")
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents`); n != 0 {
			t.Fatalf("refused actions wrote %d intents", n)
		}
		if r := actionAs(s, b.person, "/api/v1/actions", "owner-1", body(b.wallet.addr)); r.Status != http.StatusCreated {
			t.Fatalf("the owner buys: %d %s", r.Status, r.Body)
		}
	})
}

// TestActionRewardClaim: POST /api/v1/actions hands a reward claim to the
// rewards domain's claim: one payout intent, the same one the claim route
// answers afterwards; a duplicate key replays it; another user's claim,
// and a claim to another wallet, are refused at their checks.
func TestActionRewardClaim(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		a := newArena(t, s)
		rw := a.funded(t)
		network := s.Cluster.Network().CAIP2()
		body := map[string]any{"kind": "reward_claim", "subjectId": rw.ID, "wallet": a.creator.wallet.addr, "amountAtomic": rw.AmountAtomic,
			"network": network, "currency": rw.Mint}
		if v := preflight(t, s, a.creator.person, body); !v.Allowed {
			t.Fatalf("preflight of the claim: %+v", v.Checks)
		}
		other := fundedBuyer(t, s, "other@example.test", 0)
		otherBody := map[string]any{"kind": "reward_claim", "subjectId": rw.ID, "wallet": other.wallet.addr, "network": network, "currency": rw.Mint}
		refused(t, "another user claims", actionAs(s, other.person, "/api/v1/actions", "x1", otherBody), http.StatusNotFound, "NOT_FOUND",
			"check", "subject")
		refused(t, "a claim to an unverified wallet", actionAs(s, a.creator.person, "/api/v1/actions", "x2",
			map[string]any{"kind": "reward_claim", "subjectId": rw.ID, "wallet": newWalletKey(t).addr, "network": network, "currency": rw.Mint}),
			http.StatusUnprocessableEntity, "WALLET_REQUIRED", "check", "destination")
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents WHERE purpose = 'reward_claim'`); n != 0 {
			t.Fatalf("refused claims made %d payouts", n)
		}
		r := actionAs(s, a.creator.person, "/api/v1/actions", "claim-1", body)
		var res api.ActionResultView
		r.Data(t, &res)
		if r.Status != http.StatusCreated || res.Reward == nil || res.Reward.ID != rw.ID || res.TransactionIntent.Purpose != "reward_claim" {
			t.Fatalf("claim: %d %s", r.Status, r.Body)
		}
		r = actionAs(s, a.creator.person, "/api/v1/actions", "claim-1", body)
		var again api.ActionResultView
		r.Data(t, &again)
		if again.TransactionIntent.ID != res.TransactionIntent.ID || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("duplicate: %d %s", r.Status, r.Body)
		}
		r = claim(s, a.creator.person, rw.ID)
		var direct api.RewardClaimView
		r.Data(t, &direct)
		if r.Status != http.StatusOK || direct.TransactionIntent.ID != res.TransactionIntent.ID {
			t.Fatalf("the claim route after the action: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM transaction_intents WHERE purpose = 'reward_claim'`); n != 1 {
			t.Fatalf("%d payout intents, want 1", n)
		}
	})
}
