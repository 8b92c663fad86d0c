package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/store"
)

// Epoch is where the fake clock starts in every suite case.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Exercise runs the store contract suite against databases from open. Each
// group lives in the file of the area it covers.
func Exercise(t *testing.T, open Opener) {
	t.Run("Tx", func(t *testing.T) { exerciseTx(t, open) })
	t.Run("Access", func(t *testing.T) { exerciseAccess(t, open) })
	t.Run("Jobs", func(t *testing.T) { exerciseJobs(t, open) })
	t.Run("Ledger", func(t *testing.T) { exerciseLedger(t, open) })
	t.Run("LedgerSpread", func(t *testing.T) { exerciseLedgerSpread(t, open) })
	t.Run("Policy", func(t *testing.T) { exercisePolicy(t, open) })
	t.Run("Plans", func(t *testing.T) { exercisePlans(t, open) })
	t.Run("Assets", func(t *testing.T) { exerciseAssets(t, open) })
	t.Run("Admin", func(t *testing.T) { exerciseAdmin(t, open) })
	t.Run("Accounts", func(t *testing.T) { exerciseAccounts(t, open) })
	t.Run("Billing", func(t *testing.T) { exerciseBilling(t, open) })
	t.Run("ProviderCredentials", func(t *testing.T) { exerciseCredentials(t, open) })
	t.Run("Generation", func(t *testing.T) { exerciseGeneration(t, open) })
	t.Run("Sale", func(t *testing.T) { exerciseSale(t, open) })
	t.Run("Token", func(t *testing.T) { exerciseToken(t, open) })
	t.Run("Swap", func(t *testing.T) { exerciseSwap(t, open) })
	t.Run("SwapOperations", func(t *testing.T) { exerciseSwapOperations(t, open) })
	t.Run("SwapSettlements", func(t *testing.T) { exerciseSwapSettlements(t, open) })
	t.Run("Wallet", func(t *testing.T) { exerciseWallet(t, open) })
	t.Run("Intent", func(t *testing.T) { exerciseIntent(t, open) })
	t.Run("Sound", func(t *testing.T) { exerciseSound(t, open) })
	t.Run("Project", func(t *testing.T) { exerciseProject(t, open) })
	t.Run("Submission", func(t *testing.T) { exerciseSubmission(t, open) })
	t.Run("Creator", func(t *testing.T) { exerciseCreator(t, open) })
	t.Run("CreatorGraph", func(t *testing.T) { exerciseCreatorGraph(t, open) })
	t.Run("CreatorGraphCollaborations", func(t *testing.T) { exerciseCreatorGraphCollaborations(t, open) })
	t.Run("Discover", func(t *testing.T) { exerciseDiscover(t, open) })
	t.Run("ZK", func(t *testing.T) { exerciseZK(t, open) })
	t.Run("ProjectMembers", func(t *testing.T) { exerciseProjectMembers(t, open) })
	t.Run("CCTP", func(t *testing.T) { exerciseCCTP(t, open) })
	t.Run("Marketplace", func(t *testing.T) { exerciseMarketplace(t, open) })
	t.Run("AI", func(t *testing.T) { exerciseAI(t, open) })
	t.Run("AITools", func(t *testing.T) { exerciseAITools(t, open) })
	t.Run("AIOperations", func(t *testing.T) { exerciseAIOperations(t, open) })
	t.Run("X402", func(t *testing.T) { exerciseX402(t, open) })
	t.Run("MarketplaceOrders", func(t *testing.T) { exerciseMarketplaceOrders(t, open) })
	t.Run("Release", func(t *testing.T) { exerciseRelease(t, open) })
	t.Run("Attribution", func(t *testing.T) { exerciseAttribution(t, open) })
	t.Run("Analytics", func(t *testing.T) { exerciseAnalytics(t, open) })
	t.Run("Leaderboard", func(t *testing.T) { exerciseLeaderboard(t, open) })
	t.Run("Rewards", func(t *testing.T) { exerciseRewards(t, open) })
	t.Run("Outbox", func(t *testing.T) { exerciseOutbox(t, open) })
	t.Run("Webhook", func(t *testing.T) { exerciseWebhook(t, open) })
	t.Run("Realtime", func(t *testing.T) { exerciseRealtime(t, open) })
}

// fresh opens a database on a new fake clock for one case.
func fresh(t *testing.T, open Opener) (*store.DB, *Clock) {
	t.Helper()
	clock := NewClock(Epoch)
	return open(t, clock), clock
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
