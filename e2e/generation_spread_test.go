package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// TestGenerationConcurrentAcceptsReportExactCredits races 40 generate
// requests of one workspace that has credit for all of them: every one is
// accepted, and the credits the API reports (GET /api/v1/saas/me) fall by
// exactly what they reserved, although on PostgreSQL the workspace's
// balances are kept in parts that the accepts changed side by side. The
// movements still name the workspace's two accounts, and every balance
// equals its postings.
func TestGenerationConcurrentAcceptsReportExactCredits(t *testing.T) {
	t.Parallel()
	opts := genOptions()
	opts.Jobs = platform.JobsConfig{Disabled: true} // no dispatch settles meanwhile
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s)
		grantTestCredits(t, s, "spread", 1000)
		// The test clock stands still, and identifiers of one millisecond
		// from separate transactions do not sort in the order they were
		// made: the reservations start one millisecond after the grant.
		s.Clock.Advance(time.Millisecond)
		meCredits := func() int64 {
			t.Helper()
			r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/saas/me", Key: s.Boot.TestKey})
			var me api.SaasMe
			r.Data(t, &me)
			n, err := strconv.ParseInt(me.Credits, 10, 64)
			if err != nil {
				t.Fatalf("credits %q: %v", me.Credits, err)
			}
			return n
		}
		before := meCredits()
		if before != creditInt(t, s, ledger.AccountWorkspaceCredits) {
			t.Fatalf("saas/me reports %d credits, the ledger holds %d", before, creditInt(t, s, ledger.AccountWorkspaceCredits))
		}
		reservedBefore := creditInt(t, s, ledger.AccountWorkspaceReserved)
		const n, price = 40, 10 // model v4
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := generate(s, fmt.Sprintf("spread-%d", i), map[string]any{"prompt": fmt.Sprintf("Song %d", i), "model": "v4"})
				if r.Status != http.StatusAccepted {
					t.Errorf("generate %d: %d %s", i, r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		if got := meCredits(); got != before-n*price {
			t.Errorf("saas/me credits = %d, want %d", got, before-n*price)
		}
		if got := creditInt(t, s, ledger.AccountWorkspaceReserved); got != reservedBefore+n*price {
			t.Errorf("reserved = %d, want %d", got, reservedBefore+n*price)
		}
		if s.DB.Dialect() == store.Postgres {
			if c := count(t, s, `SELECT COUNT(*) FROM ledger_account_slots WHERE name = ? AND balance <> 0`,
				ledger.AccountWorkspaceCredits); c < 2 {
				t.Errorf("the credits are held in %d slots, want them spread", c)
			}
		}
		sc := ledger.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
		drift, err := ledger.New().Audit(context.Background(), s.DB.Read(), sc, ledger.Credits,
			[]string{ledger.AccountWorkspaceCredits, ledger.AccountWorkspaceReserved, ledger.AccountSystemGrants})
		if err != nil || len(drift) != 0 {
			t.Errorf("audit: %+v, %v", drift, err)
		}
		_, page := ledgerPage(t, s, s.Boot.TestKey, "/api/v1/ledgers/activity?limit=1")
		if len(page.Items) != 1 || page.Items[0].Type != "reserve" || len(page.Items[0].Postings) != 2 {
			t.Fatalf("newest movement = %+v", page.Items)
		}
		for _, p := range page.Items[0].Postings {
			if p.Account != ledger.AccountWorkspaceCredits && p.Account != ledger.AccountWorkspaceReserved {
				t.Errorf("a reservation posted to %q", p.Account)
			}
		}
	})
}
