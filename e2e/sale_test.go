package e2e_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// saleWindow is the deployed sale's open window around the test clock.
var saleWindow = sale.Window{Opens: storetest.Epoch.Add(-time.Hour), Closes: storetest.Epoch.Add(30 * 24 * time.Hour)}

// saleOptions deploys an open sale (presale-2026, with its contract,
// funded inventory and pool on the cluster) and a planned one with no
// on-chain side (community-2027) in the test environment.
func saleOptions() platformtest.Options {
	return platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond},
		SaleFunc: func(c *chaintest.Cluster, d tokentest.Deployment) sale.EnvConfig {
			sd, err := tokentest.DeploySale(c, d, "presale-2026", saleWindow)
			if err != nil {
				panic(err)
			}
			planned := sale.Sale{ID: "community-2027", Status: sale.StatusPlanned, TargetWindow: "2027-Q1",
				ProviderCandidates: []string{"Launch Provider", "Other Provider"}, AllocationMinAtomic: "1000000000",
				AllocationMaxAtomic: "2000000000000000", PresalePriceUSD: "0.020", InitialDexReferenceUSD: "0.030",
				Venues:    []sale.Venue{{Name: "Unapproved Pool", Kind: sale.VenuePool, Address: d.Treasury.String(), Program: d.Mint.String()}},
				UpdatedAt: storetest.Epoch.Add(-48 * time.Hour)}
			return sale.EnvConfig{Sales: []sale.Sale{sd.Sale, planned}, Current: "presale-2026",
				Jurisdictions: sale.JurisdictionPolicy{Allowed: []string{"DE", "FR"}, Blocked: []string{"KP"}},
				Disclosure:    sale.Disclosure{Version: "2026-01", URL: "https://platform.io/legal/token-sale"}}
		}}
}

// saleGet reads a sale route as key (anonymous when "").
func saleGet[T any](t *testing.T, s *platformtest.System, path, key string) T {
	t.Helper()
	v, _ := tokenGet[T](t, s, path, key)
	return v
}

// testSession signs a user up, gives them a workspace, and returns their
// session cookie; requests with it act in test mode through testMode.
func testSession(t testing.TB, s *platformtest.System, email string) person {
	t.Helper()
	p := signIn(t, s, email, "Buyer")
	onboard(t, s, &p, "Buyer Studio")
	return p
}

var testMode = map[string]string{transport.EnvironmentHeader: "test"}

// intent posts an access intent for saleID as p.
func intent(s *platformtest.System, p person, saleID string, body map[string]any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/token-sales/" + saleID + "/access-intents",
		Cookie: p.cookie, Header: testMode, Body: body})
}

// TestTokenSaleProjectionsAndAccessIntents covers the sale end to end: the
// verification job proves the open sale's contract, inventory and pool
// from the cluster, the planned sale never shows open, funded or
// executable, and access intents hand over only for the verified, open
// sale inside its window from an allowed jurisdiction.
func TestTokenSaleProjectionsAndAccessIntents(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, saleOptions(), func(t *testing.T, s *platformtest.System) {
		key := s.Boot.TestKey
		var ver api.SaleVerificationView
		waitFor(t, "the sale verification run", func() bool {
			ver = saleGet[api.SaleVerificationView](t, s, "/api/v1/token-sales/presale-2026/verification", key)
			return ver.Run != nil && ver.ProductionMint.Verified
		})
		if !ver.SaleContract.Verified || !ver.Inventory.Funded || !ver.Inventory.Reconciled || !ver.Liquidity.Verified ||
			!ver.ActivationAllowed || ver.Provider.Verified || !ver.Provider.Configured || !ver.Terms.Published {
			t.Fatalf("open sale verification = %+v", ver)
		}

		cur := saleGet[*api.SaleView](t, s, "/api/v1/token-sales/current", key)
		if cur == nil || cur.SaleID != "presale-2026" || cur.Status != "OPEN" || cur.Disclosure.Version != "2026-01" {
			t.Fatalf("current = %+v", cur)
		}
		codes := map[string]bool{}
		for _, st := range cur.Disclosure.Statements {
			codes[st.Code] = true
		}
		for _, want := range sale.RequiredStatements() {
			if !codes[want.Code] {
				t.Errorf("current lacks the %s statement", want.Code)
			}
		}
		// Anonymous callers see live, which has no sale.
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/token-sales/current"}); r.Status != 200 || !strings.Contains(string(r.Body), `"data":null`) {
			t.Fatalf("live current: %d %s", r.Status, r.Body)
		}

		planned := saleGet[api.SaleView](t, s, "/api/v1/token-sales/community-2027", key)
		if planned.Status != "PLANNED" || planned.Window != nil {
			t.Fatalf("planned sale = %+v", planned)
		}
		pv := saleGet[api.SaleVerificationView](t, s, "/api/v1/token-sales/community-2027/verification", key)
		if pv.SaleContract.Verified || pv.Inventory.Funded || pv.Inventory.Reconciled || pv.Liquidity.Verified || pv.ActivationAllowed ||
			pv.ProductionMint.Verified || pv.ActivationReason == nil || pv.Inventory.FundedReason == nil {
			t.Fatalf("planned verification = %+v", pv)
		}
		pm := saleGet[api.SaleMarketsView](t, s, "/api/v1/token-sales/community-2027/markets", key)
		if len(pm.Venues) != 0 || pm.ExchangeA.Verified || pm.ExchangeAAlpha.Verified {
			t.Fatalf("planned markets list unapproved venues: %+v", pm)
		}
		om := saleGet[api.SaleMarketsView](t, s, "/api/v1/token-sales/presale-2026/markets", key)
		if len(om.Venues) != 2 {
			t.Fatalf("open markets = %+v", om)
		}
		for _, v := range om.Venues {
			if v.Kind == "AGGREGATOR" && (v.Address != nil || v.RouteAvailable == nil) || v.Kind == "POOL" && v.Address == nil {
				t.Errorf("venue %+v", v)
			}
		}
		d := saleGet[api.SaleDisclosureView](t, s, "/api/v1/token-sales/presale-2026/disclosures", key)
		if d.SaleID != "presale-2026" || len(d.Statements) < 4 {
			t.Fatalf("disclosures = %+v", d)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/token-sales/nope/verification", Key: key}); r.Code() != "NOT_FOUND" {
			t.Fatalf("unknown sale: %d %s", r.Status, r.Body)
		}

		// Access intents.
		alice := testSession(t, s, "alice@example.test")
		r := intent(s, alice, "presale-2026", map[string]any{"jurisdiction": "DE"})
		if r.Status != http.StatusCreated {
			t.Fatalf("alice: %d %s", r.Status, r.Body)
		}
		var ai api.AccessIntentView
		r.Data(t, &ai)
		if ai.Status != "ELIGIBLE" || ai.Handoff == nil || ai.Handoff.URL == nil ||
			!strings.HasPrefix(*ai.Handoff.URL, "https://launch.platform.io/sale") || !ai.Handoff.ExpiresAt.After(s.Clock.Now()) {
			t.Fatalf("eligible intent = %+v", ai)
		}
		var got api.AccessIntentView
		g := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/token-sales/access-intents/" + ai.ID, Cookie: alice.cookie, Header: testMode})
		g.Data(t, &got)
		if g.Status != 200 || got.ID != ai.ID || got.Handoff == nil || got.Handoff.URL != nil {
			t.Fatalf("GET intent: %d %s", g.Status, g.Body)
		}
		if r := intent(s, alice, "presale-2026", map[string]any{"jurisdiction": "FR"}); r.Code() != "CONFLICT" {
			t.Fatalf("changing the jurisdiction: %d %s", r.Status, r.Body)
		}

		bob := testSession(t, s, "bob@example.test")
		r = intent(s, bob, "presale-2026", map[string]any{"jurisdiction": "KP"})
		var bi api.AccessIntentView
		r.Data(t, &bi)
		if r.Status != http.StatusCreated || bi.Status != "INELIGIBLE" || bi.Handoff != nil || !slices.Contains(bi.Reasons, "JURISDICTION_BLOCKED") {
			t.Fatalf("blocked jurisdiction: %d %s", r.Status, r.Body)
		}
		if g := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/token-sales/access-intents/" + ai.ID, Cookie: bob.cookie, Header: testMode}); g.Code() != "NOT_FOUND" {
			t.Fatalf("another user's intent: %d %s", g.Status, g.Body)
		}
		carol := testSession(t, s, "carol@example.test")
		r = intent(s, carol, "community-2027", map[string]any{"jurisdiction": "FR"})
		var ci api.AccessIntentView
		r.Data(t, &ci)
		if ci.Status != "INELIGIBLE" || ci.Handoff != nil || !slices.Contains(ci.Reasons, "SALE_NOT_VERIFIED") {
			t.Fatalf("unverified sale: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/token-sales/presale-2026/access-intents", Key: key,
			Body: map[string]any{"jurisdiction": "DE"}}); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("an API key: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, "SELECT COUNT(*) FROM sale_access_intents"); n != 3 {
			t.Fatalf("%d intents stored, want 3", n)
		}

		// After the window closes nobody is handed over.
		s.Clock.Set(saleWindow.Closes.Add(time.Minute))
		alice.cookie, _ = s.Login(alice.email, testPassword) // the old session expired meanwhile
		r = intent(s, alice, "presale-2026", nil)
		var late api.AccessIntentView
		r.Data(t, &late)
		if late.Status != "INELIGIBLE" || late.Handoff != nil {
			t.Fatalf("after the window: %d %s", r.Status, r.Body)
		}
		if cur := saleGet[*api.SaleView](t, s, "/api/v1/token-sales/current", key); cur == nil || cur.Status != "CLOSED" {
			t.Fatalf("current after the window = %+v", cur)
		}
	})
}
