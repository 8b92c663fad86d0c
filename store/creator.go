package store

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/creator"
)

var _ creator.Store = (*Tx)(nil)

// CreatorByWallet implements creator.Store: among the links of the
// address on the network, the reader's tenant's first, else the earliest
// verified (ties by link id), joined to its user. It reads across tenants
// through wallet_links_address.
func (tx *Tx) CreatorByWallet(ctx context.Context, q creator.Lookup) (creator.Creator, error) {
	var r struct {
		UserID      string    `bun:"user_id"`
		DisplayName string    `bun:"display_name"`
		CreatedAt   time.Time `bun:"created_at"`
		Network     string    `bun:"network"`
		Address     string    `bun:"address"`
		VerifiedAt  time.Time `bun:"verified_at"`
	}
	err := tx.idb.NewRaw(`SELECT l.user_id, u.display_name, u.created_at, l.network, l.address, l.verified_at
		FROM wallet_links l JOIN users u ON u.id = l.user_id
		WHERE l.network = ? AND l.address = ?
		ORDER BY CASE WHEN l.tenant_id = ? THEN 0 ELSE 1 END, l.verified_at, l.id
		LIMIT 1`, q.Network, q.Address, q.ReaderTenantID).Scan(ctx, &r)
	if err != nil {
		return creator.Creator{}, notFound("store.CreatorByWallet", err)
	}
	return creator.Creator{UserID: r.UserID, DisplayName: r.DisplayName, CreatedAt: r.CreatedAt.UTC(),
		Wallet: creator.Wallet{Address: r.Address, Network: r.Network, VerifiedAt: r.VerifiedAt.UTC()}}, nil
}

// CreatorCounts implements creator.Store: counts of rows, through
// projects_public_owner.
func (tx *Tx) CreatorCounts(ctx context.Context, env access.Environment, userID string) (creator.Counts, error) {
	var c creator.Counts
	err := tx.idb.NewRaw(`SELECT COUNT(*) FROM projects WHERE visibility = 'public' AND owner_user_id = ? AND environment = ?`,
		userID, string(env)).Scan(ctx, &c.PublicProjects)
	return c, errf("store.CreatorCounts", err)
}
