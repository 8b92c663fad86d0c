package wallet

import (
	"context"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// Links answers, from the wallet links verification wrote, whether an
// address is a verified wallet of a user: the chain payment path's
// question (chain/intent.Wallets), which pays only from such a wallet.
type Links struct {
	// ReadFunc returns a handle on the read pool. Required.
	ReadFunc func() LinkReader
}

// Verified reports whether address is linked to userID in tenantID. A link
// records the Network, so it holds in both environments. An address
// linked to another user of the tenant, or to nobody, is not verified.
func (l Links) Verified(ctx context.Context, tenantID, userID string, address chain.Address) (bool, error) {
	link, err := l.ReadFunc().WalletLinkGet(ctx, tenantID, Network, address.String())
	if fault.Is(err, fault.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, fault.Wrap("wallet.Links.Verified", err)
	}
	return link.UserID == userID, nil
}
