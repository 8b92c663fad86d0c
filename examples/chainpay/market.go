package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/examples/internal/democlient"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// Market mode (-buy-listing LISTING): buy the license a marketplace
// listing sells, as a wallet app would, with the signed-in account's
// wallet, then show what the purchase left behind: the order and its
// snapshot, the license entitlement, the financial ledger's entry, and
// the asset's content, which the license lets the buyer's workspace
// download.

// buyListing creates a marketplace_order intent for listing (the server
// derives the price, the recipients and the fee from the listing and the
// fee policy), prints its review with every leg, signs and submits its
// prepared transaction, waits until it settles, and prints the order, the
// entitlement and the ledger entry, then downloads the asset (to out when
// set).
func buyListing(ctx context.Context, c *client, session auth, key ed25519.PrivateKey, listing, out string, timeout time.Duration) error {
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	var it api.TransactionIntentView
	idem := auth{Cookie: session.Cookie, IdempotencyKey: "marketbuy-" + democlient.RandomHex(12)}
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/transactions/intent",
		map[string]string{"purpose": "marketplace_order", "listingId": listing, "wallet": wallet}, idem, &it); err != nil {
		return fmt.Errorf("create the marketplace_order intent: %w", err)
	}
	r := it.Review
	fmt.Printf("Intent %s (%s): %s\n", it.ID, it.State, r.Description)
	fmt.Printf("  pay        %s (atomic %s, transfer fees %s included)\n  mint       %s (%d decimals)\n  payer      %s\n  network    %s\n",
		r.Pay, it.GrossAtomic, r.Fee, r.Mint, r.Decimals, r.Payer, r.Network)
	for _, l := range r.Legs {
		fmt.Printf("  leg %-12s %s receives %s (sent %s, fee %s)\n", l.Role, l.Recipient, l.Net, l.Pay, l.Fee)
	}
	it, err := c.signAndSubmit(ctx, session, key, it)
	if err != nil {
		return err
	}
	if it, err = c.awaitSettled(ctx, session, it, timeout, "no license was issued"); err != nil {
		return err
	}
	fmt.Printf("Settled (network %s).\n", it.NetworkState)

	var orders api.OrderPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/marketplace/orders?role=buyer&limit=20", nil, session, &orders); err != nil {
		return fmt.Errorf("read the orders: %w", err)
	}
	var order *api.OrderView
	for i := range orders.Items {
		if orders.Items[i].TransactionIntentID == it.ID {
			order = &orders.Items[i]
		}
	}
	if order == nil {
		return fmt.Errorf("no order of intent %s among the workspace's newest", it.ID)
	}
	fmt.Printf("Order %s %s: %q, listing %s v%d, %s of %s\n", order.ID, order.State, order.Title, order.ListingID, order.ListingVersion,
		order.Price, order.Mint)
	fmt.Printf("  license    %s %s (%s), terms %s v%d %s\n", order.License.ID, order.License.Name, order.License.Kind,
		order.License.PolicyID, order.License.PolicyVersion, order.License.TermsHash)
	fmt.Printf("  split      seller %s gets %s, fee recipient %s gets %s (fee policy v%d, %d bps)\n", order.Split.SellerWallet,
		order.Split.SellerNetAtomic, order.Split.FeeRecipient, order.Split.PlatformFeeAtomic, order.FeePolicy.Version, order.FeePolicy.FeeBps)

	var ents api.EntitlementPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/entitlements?limit=20", nil, session, &ents); err != nil {
		return fmt.Errorf("read the entitlements: %w", err)
	}
	for _, e := range ents.Items {
		if e.OrderID != nil && *e.OrderID == order.ID {
			fmt.Printf("Entitlement %s: %s of asset %s, source %s\n", e.ID, e.Kind, deref(e.AssetID), e.Source)
		}
	}

	var ledger api.LedgerPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/ledgers/financial?limit=20", nil, session, &ledger); err != nil {
		return fmt.Errorf("read the financial ledger: %w", err)
	}
	for _, m := range ledger.Items {
		if m.Reference != "purchase:"+it.BusinessReference {
			continue
		}
		fmt.Printf("Ledger: %s %s (reference %s)\n", m.Ledger, m.Type, m.Reference)
		for _, p := range m.Postings {
			fmt.Printf("  %-6s %s %s\n", p.Direction, p.AmountAtomic, p.Account)
		}
	}
	return download(ctx, c, session, order.AssetID, out)
}

// download reads the licensed asset's content with the session, prints
// its size and SHA-256, and writes it to out when set.
func download(ctx context.Context, c *client, session auth, assetID, out string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+"/api/v1/assets/"+url.PathEscape(assetID)+"/content", nil)
	if err != nil {
		return err
	}
	req.Header.Set(transport.EnvironmentHeader, "test")
	req.AddCookie(session.Cookie)
	res, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("download the asset: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		return fmt.Errorf("download the asset: %d %s", res.StatusCode, strings.TrimSpace(string(b)))
	}
	h := sha256.New()
	var w io.Writer = h
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = io.MultiWriter(h, f)
	}
	n, err := io.Copy(w, res.Body)
	if err != nil {
		return fmt.Errorf("download the asset: %w", err)
	}
	fmt.Printf("Downloaded asset %s: %d bytes of %s, sha256 %s", assetID, n, res.Header.Get("Content-Type"), hex.EncodeToString(h.Sum(nil)))
	if out != "" {
		fmt.Printf(", written to %s", out)
	}
	fmt.Println(".")
	return nil
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
