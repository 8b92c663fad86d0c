package wallet

import (
	"context"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
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

// Holder returns the user address is linked to in tenantID, "" when it is
// linked to nobody there: a listing's payout wallet must be the seller's
// own (marketplace.Wallets).
func (l Links) Holder(ctx context.Context, tenantID string, address chain.Address) (string, error) {
	link, err := l.ReadFunc().WalletLinkGet(ctx, tenantID, Network, address.String())
	if fault.Is(err, fault.NotFound) {
		return "", nil
	}
	if err != nil {
		return "", fault.Wrap("wallet.Links.Holder", err)
	}
	return link.UserID, nil
}

// Of lists the verified wallets of userID in tenantID, oldest first.
func (l Links) Of(ctx context.Context, tenantID, userID string) ([]chain.Address, error) {
	const op = "wallet.Links.Of"
	links, err := l.ReadFunc().WalletLinksOfUser(ctx, tenantID, Network, userID)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	out := make([]chain.Address, 0, len(links))
	for _, k := range links {
		a, err := token2022.ParsePublicKey(k.Address)
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		out = append(out, a)
	}
	return out, nil
}
