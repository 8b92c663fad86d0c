package intent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/policy"
)

// onLedger registers credit_purchase as the platform does: priced by the
// published credits.packs policy, settled and read back on the credit
// ledger; packs are the test environment's configured packs.
func onLedger(packs *CreditPacks) harnessOpt {
	return func(h *harness, c *Config) {
		r := NewRegistry()
		if err := r.Register(CreditPurchase(PolicyPacks(h.store.Read), SettleCredits, CreditSettlement)); err != nil {
			h.t.Fatal(err)
		}
		c.Registry = r
		e := c.Environments[access.Test]
		e.CreditPacks = packs
		c.Environments[access.Test] = e
	}
}

// packsOf prices 100 and 500 credits in the harness's mint.
func packsOf(p100, p500 string) *CreditPacks {
	mint := key("mint").String()
	return &CreditPacks{Packs: []CreditPack{
		{Credits: "100", Prices: map[string]string{mint: p100}},
		{Credits: "500", Prices: map[string]string{mint: p500}},
	}}
}

// versions returns the test environment's credits.packs versions.
func (h *harness) versions() []policy.Version {
	return h.store.committed().policies[policyKey(policy.Scope{Environment: access.Test}, CreditPacksPolicyID)]
}

// TestCreditSettlementGrantsOnce: a settled credit purchase grants its
// credits on the ledger under the intent's business reference, once: a
// replayed settlement books nothing more, the read-back finds the one
// movement, and reconciliation matches.
func TestCreditSettlementGrantsOnce(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 200, 5_000_000), onLedger(packsOf("1000000", "4500000")))
	if err := h.svc.SeedCreditPacks(ctx); err != nil {
		t.Fatal(err)
	}
	it := settledIntent(t, h)
	if it.Policy.ID != CreditPacksPolicyID || it.Policy.Version != 1 || it.Policy.Hash != h.versions()[0].Hash {
		t.Fatalf("priced by %+v", it.Policy)
	}
	scope := it.Actor.Scope()
	credited := func() money.Sum {
		t.Helper()
		d := h.store.committed()
		if len(d.movements) != 1 {
			t.Fatalf("%d movements, want one grant", len(d.movements))
		}
		return d.balance(scope, ledger.AccountWorkspaceCredits)
	}
	if got := credited(); got != money.SumOf(100) {
		t.Fatalf("balance %v, want 100", got)
	}
	m := h.store.committed().movements[0]
	if m.Reference != "grant:credit_purchase:"+it.ID || m.Type != ledger.TypeGrant || m.Ledger != ledger.Credits || m.Scope != scope ||
		m.Actor.UserID != "usr_1" {
		t.Fatalf("movement %+v", m)
	}
	// A replay of the settlement (a retried unit of work) grants nothing more.
	if err := h.store.Run(ctx, func(st Store) error { return SettleCredits(ctx, st, it) }); err != nil {
		t.Fatal(err)
	}
	if got := credited(); got != money.SumOf(100) {
		t.Fatalf("balance after a replay %v, want 100", got)
	}
	s := must[Settlement](t)(CreditSettlement(ctx, h.store.Read(), it))
	if s.Credit != ledger.AccountWorkspaceCredits || s.Debit != ledger.AccountSystemGrants || len(s.Movements) != 1 ||
		s.Movements[0].ID != m.ID || len(s.Movements[0].Postings) != 2 {
		t.Fatalf("read back %+v", s)
	}
	for _, p := range s.Movements[0].Postings {
		if p.Amount != 100 || p.Credit != (p.Account == ledger.AccountWorkspaceCredits) {
			t.Fatalf("posting %+v", p)
		}
	}
	o := must[Outcome](t)(h.svc.ReconcileSettled(ctx, it.ID, ReconcileOptions{}))
	if o.Intent.ReconciliationOutcome != OutcomeMatch {
		t.Fatalf("reconciliation %+v", o.Reconciliation)
	}

	bad := it
	bad.Quantity = "12.5"
	if err := h.store.Run(ctx, func(st Store) error { return SettleCredits(ctx, st, bad) }); err == nil {
		t.Fatal("a quantity that is not whole credits was granted")
	}
}

// TestPolicyPacksPricesFromTheCurrentVersion: without a published policy
// credits are not sold (SERVICE_UNAVAILABLE); a new version prices the
// intents created after it.
func TestPolicyPacksPricesFromTheCurrentVersion(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 0, 0), onLedger(nil))
	_, err := h.svc.Create(ctx, h.user, Request{Purpose: PurposeCreditPurchase, Credits: "100", Mint: h.mint.String(), Wallet: h.payer.String()})
	wantCode(t, err, fault.ServiceUnavailable)
	for _, price := range []string{"1000000", "2000000"} {
		if err := h.store.Run(ctx, func(st Store) error {
			_, _, err := policy.Publish(ctx, st.CreditStore(), policy.Scope{Environment: access.Test}, CreditPacksPolicyID,
				packsOf(price, "4500000"), "usr_admin")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		it := h.create()
		if want := len(h.versions()); it.Policy.Version != want || it.NetAtomic != must[uint64](t)(parseUint(price)) {
			t.Fatalf("priced at v%d net %d, want v%d net %s", it.Policy.Version, it.NetAtomic, want, price)
		}
	}
}

// parseUint parses a canonical unsigned integer.
func parseUint(s string) (uint64, error) {
	v, ok := parseCanonicalUint(s)
	if !ok {
		return 0, fault.Invalid("test", "value", "not a canonical integer")
	}
	return v, nil
}

// TestSeedCreditPacksVersions: configured packs publish a new version
// only when their content changed; default packs are published only
// while the environment has none, and never over a version published
// since; packs that do not validate stop the seed.
func TestSeedCreditPacksVersions(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, feeMint(6, 0, 0))
	store := h.store
	seed := func(packs *CreditPacks, mint chain.Address) error {
		t.Helper()
		s := newHarness(t, feeMint(6, 0, 0), func(x *harness, c *Config) {
			x.store = store
			c.Run, c.ReadFunc = store.Run, store.Read
			e := c.Environments[access.Test]
			e.PackMint = mint
			c.Environments[access.Test] = e
		}, onLedger(packs))
		return s.svc.SeedCreditPacks(ctx)
	}
	count := func(want int) policy.Version {
		t.Helper()
		vs := h.versions()
		if len(vs) != want {
			t.Fatalf("%d versions, want %d", len(vs), want)
		}
		if want == 0 {
			return policy.Version{}
		}
		return vs[want-1]
	}

	if err := seed(nil, chain.Address{}); err != nil {
		t.Fatal(err)
	}
	count(0) // neither packs nor a mint: nothing is sold, nothing published

	if err := seed(nil, h.mint); err != nil {
		t.Fatal(err)
	}
	v := count(1)
	var d CreditPacks
	if err := json.Unmarshal(v.Content, &d); err != nil || v.CreatedBy != "system:configuration" || len(d.Packs) != 3 ||
		d.Packs[0].Prices[h.mint.String()] != "1000000000" {
		t.Fatalf("default packs %s by %s: %v", v.Content, v.CreatedBy, err)
	}
	if err := seed(nil, h.mint); err != nil {
		t.Fatal(err)
	}
	count(1) // defaults again: already published

	a, b := packsOf("1000000", "4500000"), packsOf("2000000", "4500000")
	for _, step := range []struct {
		packs *CreditPacks
		want  int
	}{{a, 2}, {a, 2}, {b, 3}, {a, 4}} {
		if err := seed(step.packs, h.mint); err != nil {
			t.Fatal(err)
		}
		count(step.want)
	}
	// A version an operator published since is never overridden by the
	// defaults.
	if err := seed(nil, h.mint); err != nil {
		t.Fatal(err)
	}
	count(4)

	invalid := &CreditPacks{Packs: []CreditPack{{Credits: "100", Prices: map[string]string{h.mint.String(): "0"}}}}
	if err := seed(invalid, h.mint); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("invalid packs: %v, want INVALID_INPUT", err)
	}
	count(4)
}
