package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatormusic/platform/store"
)

// Epoch is where the fake clock starts in every suite case.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Exercise runs the store contract suite against databases from open. Each
// group lives in the file of the area it covers; the groups run in
// parallel.
func Exercise(t *testing.T, open Opener) {
	// The groups run in parallel (up to go test's -parallel): every case
	// opens its own database, on PostgreSQL its own schema, so they share
	// nothing but the server, and a PostgreSQL case mostly waits on it.
	group := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t)
		})
	}
	group("Tx", func(t *testing.T) { exerciseTx(t, open) })
	group("Access", func(t *testing.T) { exerciseAccess(t, open) })
	group("Jobs", func(t *testing.T) { exerciseJobs(t, open) })
	group("Ledger", func(t *testing.T) { exerciseLedger(t, open) })
	group("LedgerSpread", func(t *testing.T) { exerciseLedgerSpread(t, open) })
	group("Policy", func(t *testing.T) { exercisePolicy(t, open) })
	group("Plans", func(t *testing.T) { exercisePlans(t, open) })
	group("Assets", func(t *testing.T) { exerciseAssets(t, open) })
	group("Admin", func(t *testing.T) { exerciseAdmin(t, open) })
	group("Accounts", func(t *testing.T) { exerciseAccounts(t, open) })
	group("Billing", func(t *testing.T) { exerciseBilling(t, open) })
	group("ProviderCredentials", func(t *testing.T) { exerciseCredentials(t, open) })
	group("Generation", func(t *testing.T) { exerciseGeneration(t, open) })
	group("Sale", func(t *testing.T) { exerciseSale(t, open) })
	group("Token", func(t *testing.T) { exerciseToken(t, open) })
	group("Swap", func(t *testing.T) { exerciseSwap(t, open) })
	group("SwapOperations", func(t *testing.T) { exerciseSwapOperations(t, open) })
	group("SwapSettlements", func(t *testing.T) { exerciseSwapSettlements(t, open) })
	group("Wallet", func(t *testing.T) { exerciseWallet(t, open) })
	group("Intent", func(t *testing.T) { exerciseIntent(t, open) })
	group("Sound", func(t *testing.T) { exerciseSound(t, open) })
	group("Project", func(t *testing.T) { exerciseProject(t, open) })
	group("Submission", func(t *testing.T) { exerciseSubmission(t, open) })
	group("Creator", func(t *testing.T) { exerciseCreator(t, open) })
	group("CreatorGraph", func(t *testing.T) { exerciseCreatorGraph(t, open) })
	group("CreatorGraphCollaborations", func(t *testing.T) { exerciseCreatorGraphCollaborations(t, open) })
	group("Discover", func(t *testing.T) { exerciseDiscover(t, open) })
	group("ZK", func(t *testing.T) { exerciseZK(t, open) })
	group("ProjectMembers", func(t *testing.T) { exerciseProjectMembers(t, open) })
	group("CCTP", func(t *testing.T) { exerciseCCTP(t, open) })
	group("Marketplace", func(t *testing.T) { exerciseMarketplace(t, open) })
	group("AI", func(t *testing.T) { exerciseAI(t, open) })
	group("AITools", func(t *testing.T) { exerciseAITools(t, open) })
	group("AIOperations", func(t *testing.T) { exerciseAIOperations(t, open) })
	group("X402", func(t *testing.T) { exerciseX402(t, open) })
	group("MarketplaceOrders", func(t *testing.T) { exerciseMarketplaceOrders(t, open) })
	group("Release", func(t *testing.T) { exerciseRelease(t, open) })
	group("Attribution", func(t *testing.T) { exerciseAttribution(t, open) })
	group("Analytics", func(t *testing.T) { exerciseAnalytics(t, open) })
	group("Leaderboard", func(t *testing.T) { exerciseLeaderboard(t, open) })
	group("Rewards", func(t *testing.T) { exerciseRewards(t, open) })
	group("Outbox", func(t *testing.T) { exerciseOutbox(t, open) })
	group("Webhook", func(t *testing.T) { exerciseWebhook(t, open) })
	group("Realtime", func(t *testing.T) { exerciseRealtime(t, open) })
}

// fresh opens a database on a new fake clock for one case.
func fresh(t *testing.T, open Opener) (*store.DB, *Clock) {
	t.Helper()
	clock := NewClock(Epoch)
	return open(t, clock), clock
}

// pageIDs walks a keyset-paged listing: list answers up to n items after
// the id before ("" = the first page), and a page shorter than n is the
// last. It returns every item's id in listing order, failing t on an
// error or a listing that does not end.
func pageIDs[T any](t *testing.T, n int, list func(before string, n int) ([]T, error), id func(T) string) []string {
	t.Helper()
	var ids []string
	before := ""
	for range 1000 {
		items, err := list(before, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			ids = append(ids, id(it))
		}
		if len(items) < n {
			return ids
		}
		before = id(items[len(items)-1])
	}
	t.Fatal("the listing does not end")
	return nil
}

// seedTenants creates tenants ten_1..ten_n, each with workspace ws_N
// ("Studio") and user usr_N (usr_N@example.com, "User N"), in that order,
// so the users' ids order as their accounts' ages.
func seedTenants(ctx context.Context, tx *store.Tx, n int) error {
	for i := 1; i <= n; i++ {
		ten, ws, usr := fmt.Sprintf("ten_%d", i), fmt.Sprintf("ws_%d", i), fmt.Sprintf("usr_%d", i)
		if err := tx.TenantInsert(ctx, ten, "Tenant"); err != nil {
			return err
		}
		if err := tx.WorkspaceInsert(ctx, ws, ten, "Studio"); err != nil {
			return err
		}
		if err := tx.UserInsert(ctx, usr, ten, usr+"@example.com", fmt.Sprintf("User %d", i)); err != nil {
			return err
		}
	}
	return nil
}

// seedWorkspaces creates tenant ten_1 with workspaces ws_1 and ws_2, the
// fixture the scoped-store cases share.
func seedWorkspaces(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_1", "Tenant One"); err != nil {
			return err
		}
		for _, ws := range []struct{ id, name string }{{"ws_1", "One"}, {"ws_2", "Two"}} {
			if err := tx.WorkspaceInsert(ctx, ws.id, "ten_1", ws.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
}
