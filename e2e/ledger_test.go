package e2e_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// ledgerSeed posts, in units of work as a domain would: six credit grants by
// the owner, one financial, one provider-cost and one rewards movement.
func ledgerSeed(t *testing.T, s *platformtest.System) {
	t.Helper()
	ctx := context.Background()
	svc := ledger.New()
	sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
	owner := ledger.Actor{UserID: s.Boot.OwnerID}
	post := func(m ledger.Movement) {
		t.Helper()
		m.Scope, m.Actor = sc, owner
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error { _, _, err := svc.Post(ctx, tx, m); return err }); err != nil {
			t.Fatalf("post %s: %v", m.Reference, err)
		}
	}
	for i := range 6 {
		s.Clock.Advance(time.Millisecond) // identifiers sort by time
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := svc.Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: fmt.Sprintf("%s:2026-%02d", sc.WorkspaceID, i+1),
				Amount: 500, Actor: owner})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	two := func(from, to string, amount money.Atomic) []ledger.Posting {
		return []ledger.Posting{{Account: from, Direction: ledger.Debit, Amount: amount}, {Account: to, Direction: ledger.Credit, Amount: amount}}
	}
	post(ledger.Movement{Ledger: ledger.Financial, Type: ledger.TypeTransfer, Reference: "order:ord_1", Decimals: 6,
		Postings: two("system:buyer_payments", "seller:usr_1", 12_500_000)})
	post(ledger.Movement{Ledger: ledger.ProviderCost, Type: ledger.TypeTransfer, Reference: "usage:op_1", Decimals: 0,
		Postings: two("system:provider_a", "cost:generation", 12)})
	post(ledger.Movement{Ledger: ledger.Rewards, Type: ledger.TypeTransfer, Reference: "fund:chl_1", Decimals: 9,
		Postings: two("system:treasury", "pool:chl_1", 18_446_000_000_000_000_000)})
}

func ledgerPage(t *testing.T, s *platformtest.System, key, path string) (*platformtest.Response, api.LedgerPage) {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: path, Key: key})
	var p api.LedgerPage
	if r.Status == 200 {
		r.Data(t, &p)
	}
	return r, p
}

func TestLedgerReads(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ledgerSeed(t, s)
		key := s.Boot.TestKey

		// Activity: a key without audit:read sees the movements its creator
		// caused (the owner's six grants, not the platform's plan grants),
		// newest first, paged by cursor.
		_, own := createKey(t, s, key, map[string]any{"name": "own activity", "scopes": []string{"read"}}, "")
		var all []api.LedgerMovement
		path := "/api/v1/ledgers/activity?limit=4"
		for pages := 0; ; pages++ {
			r, p := ledgerPage(t, s, own.Secret, path)
			if r.Status != 200 || pages > 3 {
				t.Fatalf("activity: %d %s", r.Status, r.Body)
			}
			all = append(all, p.Items...)
			if !p.HasMore {
				if p.NextCursor != nil {
					t.Error("last page has a cursor")
				}
				break
			}
			path = "/api/v1/ledgers/activity?limit=4&cursor=" + url.QueryEscape(*p.NextCursor)
		}
		if len(all) != 6 {
			t.Fatalf("activity: %d movements, want 6", len(all))
		}
		newest := all[0]
		if newest.Reference != "grant:"+s.Boot.WorkspaceID+":2026-06" || newest.Ledger != "credits" || newest.Type != "grant" ||
			newest.Actor.UserID != s.Boot.OwnerID || len(newest.Postings) != 2 ||
			newest.Postings[1] != (api.LedgerPosting{Account: "workspace:credits", AmountAtomic: "500", Decimals: 0, Direction: "credit"}) {
			t.Errorf("newest = %+v", newest)
		}

		// Financial and rewards: the bootstrap key holds every scope its owner may
		// grant, ledger:read and rewards:read included.
		r, fin := ledgerPage(t, s, key, "/api/v1/ledgers/financial")
		if r.Status != 200 || len(fin.Items) != 2 {
			t.Fatalf("financial: %d %s", r.Status, r.Body)
		}
		r, rew := ledgerPage(t, s, key, "/api/v1/ledgers/rewards")
		if r.Status != 200 || len(rew.Items) != 1 {
			t.Fatalf("rewards: %d %s", r.Status, r.Body)
		}
		if p := rew.Items[0].Postings[1]; p.AmountAtomic != "18446000000000000000" || p.Decimals != 9 {
			t.Errorf("rewards posting = %+v", p)
		}

		// A key with only the read scope: activity yes, financial and rewards no.
		cr, readOnly := createKey(t, s, key, map[string]any{"name": "read only", "scopes": []string{access.ScopeRead}}, "")
		if cr.Status != 201 {
			t.Fatalf("create read key: %d %s", cr.Status, cr.Body)
		}
		if r, p := ledgerPage(t, s, readOnly.Secret, "/api/v1/ledgers/activity"); r.Status != 200 || len(p.Items) != 6 {
			t.Errorf("read key activity: %d %s", r.Status, r.Body)
		}
		for _, path := range []string{"/api/v1/ledgers/financial", "/api/v1/ledgers/rewards"} {
			if r, _ := ledgerPage(t, s, readOnly.Secret, path); r.Code() != "ACCESS_DENIED" {
				t.Errorf("read key %s: %d %s", path, r.Status, r.Body)
			}
		}
		// rewards:read alone opens rewards, not financial.
		cr, rewardsKey := createKey(t, s, key, map[string]any{"name": "rewards", "scopes": []string{access.ScopeRewardsRead}}, "")
		if cr.Status != 201 {
			t.Fatalf("create rewards key: %d %s", cr.Status, cr.Body)
		}
		if r, p := ledgerPage(t, s, rewardsKey.Secret, "/api/v1/ledgers/rewards"); r.Status != 200 || len(p.Items) != 1 {
			t.Errorf("rewards key rewards: %d %s", r.Status, r.Body)
		}
		if r, _ := ledgerPage(t, s, rewardsKey.Secret, "/api/v1/ledgers/financial"); r.Code() != "ACCESS_DENIED" {
			t.Errorf("rewards key financial: %d %s", r.Status, r.Body)
		}

		// Malformed paging is INVALID_INPUT.
		for _, q := range []string{"cursor=Zm9yZ2Vk", "cursor=" + url.QueryEscape(*encodeTestCursor("key_01jd0000000000000000000000")), "limit=0", "limit=101"} {
			if r, _ := ledgerPage(t, s, key, "/api/v1/ledgers/activity?"+q); r.Status != 400 || r.Code() != "INVALID_INPUT" {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}

		// The live environment sees none of the test movements.
		for _, path := range []string{"/api/v1/ledgers/activity", "/api/v1/ledgers/financial", "/api/v1/ledgers/rewards"} {
			r, p := ledgerPage(t, s, s.Boot.LiveKey, path)
			if r.Status != 200 {
				t.Errorf("live %s: %d %s", path, r.Status, r.Body)
			}
			for _, m := range p.Items { // only the live plan grant may be there
				if !strings.HasPrefix(m.Reference, "grant:plan-grant:"+s.Boot.WorkspaceID+":live:") {
					t.Errorf("live %s shows %s", path, m.Reference)
				}
			}
		}
		// Nor does another tenant.
		other := s.Bootstrap("Other")
		r, p := ledgerPage(t, s, other.TestKey, "/api/v1/ledgers/activity")
		if r.Status != 200 {
			t.Errorf("other tenant: %d %s", r.Status, r.Body)
		}
		for _, m := range p.Items {
			if strings.Contains(m.Reference, s.Boot.WorkspaceID) || !strings.Contains(m.Reference, other.WorkspaceID) {
				t.Errorf("other tenant sees %s", m.Reference)
			}
		}
	})
}

// encodeTestCursor builds a well-formed cursor for another resource's id,
// which the ledger routes must refuse.
func encodeTestCursor(id string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte("cursor:" + id))
	return &s
}

func TestLedgerDeveloperRefusedTreasury(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ledgerSeed(t, s)
		ctx := context.Background()
		kr, err := secret.New(platformtest.SecretKey)
		if err != nil {
			t.Fatal(err)
		}
		keys := apikey.New(apikey.Config{}, kr)
		var devKey string
		err = s.DB.InTx(ctx, func(tx *store.Tx) error {
			uid := tx.NewID("usr_")
			if err := tx.UserInsert(ctx, uid, s.Boot.TenantID, "dev@example.test", "Developer"); err != nil {
				return err
			}
			if err := tx.MembershipInsert(ctx, s.Boot.WorkspaceID, uid, []access.Role{access.RoleDeveloper}); err != nil {
				return err
			}
			a, err := tx.AuthorityLoad(ctx, s.Boot.TenantID, s.Boot.WorkspaceID, uid, access.Test)
			if err != nil {
				return err
			}
			p := &access.Principal{Kind: access.CredentialSession, TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID,
				Environment: access.Test, UserID: uid}
			caller := apikey.Caller{Principal: p, Grantable: access.ScopesFor(&a)}
			// A developer cannot even put ledger:read on a key.
			if _, err := keys.Create(ctx, tx, caller, apikey.CreateInput{Name: "dev", Scopes: []string{access.ScopeLedgerRead}}); err == nil {
				t.Error("a DEVELOPER granted ledger:read")
			}
			cr, err := keys.Create(ctx, tx, caller, apikey.CreateInput{Name: "dev", Scopes: access.ScopesFor(&a)})
			devKey = cr.Secret
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/api/v1/ledgers/financial", "/api/v1/ledgers/rewards"} {
			if r, _ := ledgerPage(t, s, devKey, path); r.Status != 403 || r.Code() != "ACCESS_DENIED" {
				t.Errorf("developer %s: %d %s", path, r.Status, r.Body)
			}
		}
		// Activity shows only the developer's own movements: none.
		if r, p := ledgerPage(t, s, devKey, "/api/v1/ledgers/activity"); r.Status != 200 || len(p.Items) != 0 {
			t.Errorf("developer activity: %d %s", r.Status, r.Body)
		}
	})
}
