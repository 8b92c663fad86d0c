package e2e_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// The sale the marketplace tests make: 25 tokens of the deployed 9-decimal
// mint, a 5% platform fee.
const (
	salePrice    = 25_000_000_000
	saleFee      = 1_250_000_000
	saleSellerTo = salePrice - saleFee
)

// market is a system with the loopback cluster, a studio seller whose
// verified payout wallet holds an account of the deployed mint, a rights
// policy, an uploaded asset with its content, an active offer on it, the
// test environment's fee policy and a listing of the asset.
type market struct {
	s       *platformtest.System
	seller  seller
	payout  walletKey
	asset   string
	content []byte
	offer   api.LicenseOfferView
	rights  api.RightsPolicyView
	listing api.ListingView
}

// publishFees publishes the test environment's marketplace fee policy as
// the platform's configuration would.
func publishFees(t *testing.T, s *platformtest.System, f billing.FeePolicy) {
	t.Helper()
	ctx := context.Background()
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := policy.Publish(ctx, tx, policy.Scope{Environment: access.Test}, billing.FeePolicyID, f, "system:test")
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// tokenAccount gives wallet a Token-2022 account of mint (empty), as a
// wallet app does before it can be paid.
func tokenAccount(t testing.TB, s *platformtest.System, wallet string, mint chain.Address) chain.Address {
	t.Helper()
	w, err := token2022.ParsePublicKey(wallet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cluster.MintTo(w, mint, 0); err != nil {
		t.Fatal(err)
	}
	return token2022.AssociatedTokenAddress(w, mint)
}

// postListing posts a listing as p in test mode.
func postListing(s *platformtest.System, p person, body map[string]any) *platformtest.Response {
	return asTest(s, p, http.MethodPost, "/api/v1/marketplace/listings", "", body)
}

// newMarket sets a market up with the fee policy f.
func newMarket(t *testing.T, s *platformtest.System, f billing.FeePolicy, kind string) *market {
	t.Helper()
	m := &market{s: s, seller: newSeller(t, s, "seller@studio.example", "studio", true), payout: newWalletKey(t)}
	linkWallet(t, s, m.seller.person, m.payout)
	tokenAccount(t, s, m.payout.addr, s.Token.Mint)
	s.Cluster.AdvanceSlots(40)
	m.rights = wantRights(t, "rights", publishRights(s, m.seller.person, "", map[string]any{"name": "standard", "rules": rulesBody()}),
		http.StatusCreated)
	m.content = pcmWAV(48000, 4800, func(i int) float64 { return 0.3 * math.Sin(float64(i)/7) })
	m.asset = uploadAs(t, s, m.seller.person, m.content)
	body := offerBody(m.asset, m.rights)
	body["kind"] = kind
	r := offerLicense(s, m.seller.person, "", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("offer: %d %s", r.Status, r.Body)
	}
	r.Data(t, &m.offer)
	publishFees(t, s, f)
	r = postListing(s, m.seller.person, map[string]any{"assetId": m.asset, "licenseId": m.offer.ID, "title": "Night Drive",
		"priceAtomic": strconv.Itoa(salePrice), "mint": s.Token.Mint.String()})
	if r.Status != http.StatusCreated {
		t.Fatalf("listing: %d %s", r.Status, r.Body)
	}
	r.Data(t, &m.listing)
	return m
}

// buy creates a marketplace_order intent for the listing as b.
func (m *market) buy(t *testing.T, b buyer, key string) api.TransactionIntentView {
	t.Helper()
	r := createIntent(m.s, b, key, map[string]any{"purpose": "marketplace_order", "listingId": m.listing.ID, "wallet": b.wallet.addr})
	if r.Status != http.StatusCreated {
		t.Fatalf("order intent: %d %s", r.Status, r.Body)
	}
	var iv api.TransactionIntentView
	r.Data(t, &iv)
	return iv
}

// orders lists p's workspace's orders in test mode (role may be empty).
func orders(t *testing.T, s *platformtest.System, cookie, role string) []api.OrderView {
	t.Helper()
	path := "/api/v1/marketplace/orders"
	if role != "" {
		path += "?role=" + role
	}
	r := s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Cookie: cookie, Header: testMode})
	if r.Status != http.StatusOK {
		t.Fatalf("orders: %d %s", r.Status, r.Body)
	}
	var p api.OrderPage
	r.Data(t, &p)
	return p.Items
}

// orderOf is the order intent pays, as cookie's workspace lists it.
func orderOf(t *testing.T, s *platformtest.System, cookie, intentID string) api.OrderView {
	t.Helper()
	for _, o := range orders(t, s, cookie, "") {
		if o.TransactionIntentID == intentID {
			return o
		}
	}
	t.Fatalf("no order of intent %s", intentID)
	return api.OrderView{}
}

// balance is the confirmed balance of a token account.
func balance(t testing.TB, s *platformtest.System, account chain.Address) uint64 {
	t.Helper()
	b, err := s.Cluster.GetTokenAccountBalance(context.Background(), account, chain.Confirmed)
	if err != nil {
		t.Fatal(err)
	}
	return b.Amount
}

// download reads an asset's content as cookie's workspace in test mode.
func download(s *platformtest.System, cookie, assetID string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/assets/" + assetID + "/content", Cookie: cookie, Header: testMode})
}

// TestMarketplaceSaleOnChain sells a license end to end on the loopback
// cluster: the seller lists, a buyer of another tenant creates a
// marketplace_order intent and pays its prepared transaction, the chain
// confirms, and the order moves PAYMENT_PENDING -> SUBMITTED ->
// CONFIRMING -> PAID -> LICENSE_ISSUED -> FULFILLED (an outbox event
// each). The seller's payout wallet and the fee recipient receive exactly
// their legs, the financial ledger agrees to the atomic unit, the buyer's
// workspace holds one license entitlement and downloads the asset, and
// another workspace cannot. A listing edited after the order was made
// leaves its snapshot as it was; a key reused with another listing is a
// conflict.
func TestMarketplaceSaleOnChain(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			ctx := context.Background()
			m := newMarket(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "non_exclusive")
			if m.listing.Version != 1 || m.listing.Decimals != 9 || m.listing.PayoutWallet != m.payout.addr || m.listing.Price != "25" {
				t.Fatalf("listing = %+v", m.listing)
			}
			b := fundedBuyer(t, s, "buyer@example.test", 100_000_000_000)
			iv := m.buy(t, b, "buy-1")
			treasury := s.Token.Treasury.String()
			if iv.Purpose != "marketplace_order" || iv.NetAtomic != strconv.Itoa(salePrice) || iv.Quantity != "1" || len(iv.Legs) != 2 ||
				iv.Legs[0].Role != "seller" || iv.Legs[0].Recipient != m.payout.addr || iv.Legs[0].NetAtomic != strconv.Itoa(saleSellerTo) ||
				iv.Legs[1].Role != "platform_fee" || iv.Legs[1].Recipient != treasury || iv.Legs[1].NetAtomic != strconv.Itoa(saleFee) ||
				iv.Policy.ID != billing.FeePolicyID {
				t.Fatalf("intent = %+v", iv)
			}
			// The same key with another listing is another request.
			other := offerBody(m.asset, m.rights)
			other["name"] = "Broadcast license"
			r := offerLicense(s, m.seller.person, "", other)
			var otherOffer api.LicenseOfferView
			r.Data(t, &otherOffer)
			r = postListing(s, m.seller.person, map[string]any{"assetId": m.asset, "licenseId": otherOffer.ID, "title": "Night Drive (broadcast)",
				"priceAtomic": "1000000000", "mint": s.Token.Mint.String()})
			var second api.ListingView
			r.Data(t, &second)
			if r.Status != http.StatusCreated || second.ID == m.listing.ID {
				t.Fatalf("second listing: %d %s", r.Status, r.Body)
			}
			if r := createIntent(s, b, "buy-1", map[string]any{"purpose": "marketplace_order", "listingId": second.ID,
				"wallet": b.wallet.addr}); r.Code() != "IDEMPOTENCY_CONFLICT" {
				t.Fatalf("the key with another listing: %d %s", r.Status, r.Body)
			}

			ord := orderOf(t, s, b.cookie, iv.ID)
			if ord.State != "PAYMENT_PENDING" || ord.Role != "buyer" || ord.ListingID != m.listing.ID || ord.ListingVersion != 1 ||
				ord.PriceAtomic != strconv.Itoa(salePrice) || ord.Decimals != 9 || ord.Mint != s.Token.Mint.String() || ord.Title != "Night Drive" ||
				ord.AssetID != m.asset || ord.SellerWorkspaceID != m.seller.workspaceID || ord.CreatorUserID != m.seller.userID ||
				ord.License.ID != m.offer.ID || ord.License.PolicyVersion != 1 || ord.License.TermsHash != m.rights.ContentHash ||
				ord.FeePolicy.Version != 1 || ord.FeePolicy.FeeBps != 500 || ord.Split.SellerNetAtomic != strconv.Itoa(saleSellerTo) ||
				ord.Split.PlatformFeeAtomic != strconv.Itoa(saleFee) || ord.Split.FeeRecipient != treasury || ord.EntitlementID != nil {
				t.Fatalf("order = %+v", ord)
			}
			// The seller edits the listing: a new version; the order keeps its snapshot.
			r = postListing(s, m.seller.person, map[string]any{"assetId": m.asset, "licenseId": m.offer.ID, "title": "Night Drive (remaster)",
				"priceAtomic": "40000000000", "mint": s.Token.Mint.String()})
			var edited api.ListingView
			r.Data(t, &edited)
			if r.Status != http.StatusCreated || edited.ID != m.listing.ID || edited.Version != 2 {
				t.Fatalf("edit: %d %s", r.Status, r.Body)
			}
			if again := orderOf(t, s, b.cookie, iv.ID); again.ListingVersion != 1 || again.PriceAtomic != strconv.Itoa(salePrice) ||
				again.Title != "Night Drive" || again.Split != ord.Split || again.ListingHash != ord.ListingHash {
				t.Fatalf("the edit rewrote the order: %+v", again)
			}

			sellerAcct := token2022.AssociatedTokenAddress(mustKey(t, m.payout.addr), s.Token.Mint)
			treasuryAcct := token2022.AssociatedTokenAddress(s.Token.Treasury, s.Token.Mint)
			sellerBefore, treasuryBefore := balance(t, s, sellerAcct), balance(t, s, treasuryAcct)
			sig, wire := signIntent(t, b, iv)
			if r := submit(s, b, iv.ID, sig, wire); r.Status != http.StatusOK {
				t.Fatalf("submit: %d %s", r.Status, r.Body)
			}
			final := awaitState(t, s, b, iv.ID, "RECONCILED", time.Second)
			if final.Reconciliation == nil || final.Reconciliation.Outcome != "MATCH" {
				t.Fatalf("reconciliation = %+v", final.Reconciliation)
			}
			checks := map[string]bool{}
			for _, c := range final.Reconciliation.Evidence {
				checks[c.Check] = c.Passed
			}
			if !checks["settlement.legs[0].amount"] || !checks["settlement.legs[1].amount"] {
				t.Fatalf("the reconciliation did not check each leg's account: %+v", final.Reconciliation.Evidence)
			}
			// Each recipient received exactly its leg.
			if got := balance(t, s, sellerAcct) - sellerBefore; got != saleSellerTo {
				t.Fatalf("the seller's wallet received %d, want %d", got, saleSellerTo)
			}
			if got := balance(t, s, treasuryAcct) - treasuryBefore; got != saleFee {
				t.Fatalf("the fee recipient received %d, want %d", got, saleFee)
			}

			done := orderOf(t, s, b.cookie, iv.ID)
			if done.State != "FULFILLED" || done.EntitlementID == nil {
				t.Fatalf("order after settlement = %+v", done)
			}
			var types []string
			if err := s.DB.Read().IDB().NewRaw(`SELECT type FROM outbox_events WHERE aggregate_id = ? ORDER BY aggregate_version`,
				done.ID).Scan(ctx, &types); err != nil {
				t.Fatal(err)
			}
			want := []string{"marketplace_order.created", "marketplace_order.quote_locked", "marketplace_order.payment_pending",
				"marketplace_order.submitted", "marketplace_order.confirming", "marketplace_order.paid", "marketplace_order.license_issued",
				"marketplace_order.fulfilled"}
			if !slices.Equal(types, want) {
				t.Fatalf("order events %v, want %v", types, want)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'entitlement.issued' AND aggregate_id = ?`, *done.EntitlementID); n != 1 {
				t.Fatalf("%d entitlement.issued events", n)
			}

			// The ledger agrees to the atomic unit: the buyer's movement and the seller's.
			buyerTenant := authContextIn(t, s, b.cookie).Tenant.ID
			legs := map[string]money.Atomic{}
			for _, l := range iv.Legs {
				n, _ := strconv.ParseUint(l.NetAtomic, 10, 64)
				legs[l.Role] = money.Atomic(n)
			}
			gross, _ := strconv.ParseUint(iv.GrossAtomic, 10, 64)
			withheld, _ := strconv.ParseUint(iv.FeeAtomic, 10, 64)
			purchase := movement(t, s, buyerTenant, "purchase:marketplace_order:"+iv.ID)
			wantPostings(t, "purchase", purchase, map[string]ledger.Posting{
				marketplace.BuyerPaidAccount(s.Token.Mint):                                 {Direction: ledger.Debit, Amount: money.Atomic(gross)},
				marketplace.SellerProceedsAccount(mustKey(t, m.payout.addr), s.Token.Mint): {Direction: ledger.Credit, Amount: saleSellerTo},
				marketplace.PlatformFeeAccount(s.Token.Treasury, s.Token.Mint):             {Direction: ledger.Credit, Amount: saleFee},
				marketplace.TransferFeeAccount(s.Token.Mint):                               {Direction: ledger.Credit, Amount: money.Atomic(withheld)},
			})
			if legs["seller"] != saleSellerTo || legs["platform_fee"] != saleFee || purchase.Ledger != ledger.Financial {
				t.Fatalf("legs %v, movement %+v", legs, purchase)
			}
			sale := movement(t, s, m.seller.tenantID, "sale:marketplace_order:"+iv.ID)
			wantPostings(t, "sale", sale, map[string]ledger.Posting{
				marketplace.SalesAccount(s.Token.Mint):                                     {Direction: ledger.Debit, Amount: salePrice},
				marketplace.SellerProceedsAccount(mustKey(t, m.payout.addr), s.Token.Mint): {Direction: ledger.Credit, Amount: saleSellerTo},
				marketplace.PlatformFeeAccount(s.Token.Treasury, s.Token.Mint):             {Direction: ledger.Credit, Amount: saleFee},
			})
			// The buyer reads its purchase in its financial ledger.
			r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/ledgers/financial", Cookie: b.cookie, Header: testMode})
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "purchase:marketplace_order:"+iv.ID) {
				t.Fatalf("the buyer's financial ledger: %d %s", r.Status, r.Body)
			}

			// One license entitlement, listed with the workspace's features.
			r = s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/entitlements", Cookie: b.cookie, Header: testMode})
			var ents api.EntitlementPage
			r.Data(t, &ents)
			var licenses []api.EntitlementView
			for _, e := range ents.Items {
				if e.Kind == "license" {
					licenses = append(licenses, e)
				}
			}
			if r.Status != http.StatusOK || len(licenses) != 1 || licenses[0].ID != *done.EntitlementID || *licenses[0].AssetID != m.asset ||
				*licenses[0].LicenseID != m.offer.ID || *licenses[0].PolicyVersion != 1 || *licenses[0].TermsHash != m.rights.ContentHash ||
				*licenses[0].OrderID != done.ID || licenses[0].Source != "order:"+done.ID || len(ents.Items) == len(licenses) {
				t.Fatalf("entitlements: %d %s", r.Status, r.Body)
			}
			// The buyer downloads the asset; another workspace cannot.
			if r := download(s, b.cookie, m.asset); r.Status != http.StatusOK || !bytes.Equal(r.Body, m.content) {
				t.Fatalf("the buyer's download: %d, %d bytes", r.Status, len(r.Body))
			}
			if r := asTest(s, b.person, http.MethodGet, "/api/v1/assets/"+m.asset+"/provenance", "", nil); r.Status != http.StatusOK {
				t.Fatalf("the buyer's provenance read: %d %s", r.Status, r.Body)
			}
			stranger := testSession(t, s, "stranger@example.test")
			if r := download(s, stranger.cookie, m.asset); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
				t.Fatalf("another workspace's download: %d %s", r.Status, r.Body)
			}
			// The seller sees the sale.
			sold := orders(t, s, m.seller.cookie, "seller")
			if len(sold) != 1 || sold[0].ID != done.ID || sold[0].Role != "seller" || sold[0].State != "FULFILLED" {
				t.Fatalf("the seller's orders: %+v", sold)
			}
			if got := orders(t, s, m.seller.cookie, "buyer"); len(got) != 0 {
				t.Fatalf("the seller bought %+v", got)
			}
		})
}

// mustKey parses a base58 address.
func mustKey(t testing.TB, s string) chain.Address {
	t.Helper()
	k, err := token2022.ParsePublicKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// movement reads the one movement of tenantID with reference.
func movement(t *testing.T, s *platformtest.System, tenantID, reference string) ledger.Posted {
	t.Helper()
	ms, err := s.DB.Read().LedgerMovementsByReference(context.Background(), tenantID, reference)
	if err != nil || len(ms) != 1 {
		t.Fatalf("movements %s: %+v, %v; want one", reference, ms, err)
	}
	return ms[0]
}

// wantPostings fails unless m's postings are exactly want, by account.
func wantPostings(t *testing.T, what string, m ledger.Posted, want map[string]ledger.Posting) {
	t.Helper()
	if len(m.Postings) != len(want) {
		t.Fatalf("%s postings %+v, want %d", what, m.Postings, len(want))
	}
	for _, p := range m.Postings {
		w, ok := want[p.Account]
		if !ok || w.Direction != p.Direction || w.Amount != p.Amount {
			t.Fatalf("%s posting %+v, want %+v", what, p, w)
		}
	}
}

// payWith signs and sends, as b's wallet, a payment of iv built by leg
// (each leg's transfer), after the memo, with the reference on each
// transfer, and reports its signature to the platform as a wallet that
// broadcast it itself would.
func payWith(t *testing.T, s *platformtest.System, b buyer, iv api.TransactionIntentView,
	leg func(i int, l api.IntentLegView) message.Instruction) {
	t.Helper()
	ctx := context.Background()
	ixs := []message.Instruction{message.Memo(iv.Memo)}
	for i, l := range iv.Legs {
		ix := leg(i, l)
		ix.Accounts = append(ix.Accounts, message.AccountMeta{Key: mustKey(t, iv.Reference)})
		ixs = append(ixs, ix)
	}
	msg, err := message.CompileLegacy(mustKey(t, iv.Payer), iv.Transaction.Blockhash, ixs)
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(b.wallet.priv, msg)
	wire := append(append(message.AppendCompactU16(nil, 1), sig...), msg...)
	if _, err := s.RPC.SendTransaction(ctx, wire, chain.SendOptions{PreflightCommitment: chain.Processed}); err != nil {
		t.Fatalf("the cluster refused the payment: %v", err)
	}
	s.Cluster.AdvanceSlots(2)
	if r := submit(s, b, iv.ID, token2022.EncodeBase58(sig), ""); r.Status != http.StatusOK {
		t.Fatalf("submit the signature: %d %s", r.Status, r.Body)
	}
}

// checkStatus runs the chain-status check of intent id with the
// operator's internal key.
func checkStatus(s *platformtest.System, key, id string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/transactions/" + id + "/chain-status", Key: key})
}

// TestMarketplaceOrderMismatch: a payment that lands but does not match
// its order (one leg short by one atomic unit, one leg paid to the wrong
// wallet, one leg in the wrong mint) puts the intent and the order in
// REQUIRES_REVIEW: no ledger entry, no entitlement, no download.
func TestMarketplaceOrderMismatch(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		m := newMarket(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "non_exclusive")
		b := fundedBuyer(t, s, "buyer@example.test", 100_000_000_000)
		// Another fee mint the buyer holds, with every recipient's account.
		otherMint := mustKey(t, newWalletKey(t).addr)
		fee := token2022.TransferFee{MaximumFee: 5_000_000_000, BasisPoints: 200}
		if err := s.Cluster.CreateMint(otherMint, token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1e15,
			Extensions: []token2022.Extension{token2022.TransferFeeConfig{Older: fee, Newer: fee}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Cluster.MintTo(mustKey(t, b.wallet.addr), otherMint, 100_000_000_000); err != nil {
			t.Fatal(err)
		}
		tokenAccount(t, s, m.payout.addr, otherMint)
		tokenAccount(t, s, s.Token.Treasury.String(), otherMint)
		stranger := newWalletKey(t)
		strangerAcct := tokenAccount(t, s, stranger.addr, s.Token.Mint)
		s.Cluster.AdvanceSlots(40)
		key := internalKey(t, s)
		transfer := func(iv api.TransactionIntentView, l api.IntentLegView, mint, dst chain.Address, gross, fee uint64) message.Instruction {
			src := token2022.AssociatedTokenAddress(mustKey(t, iv.Payer), mint)
			return message.TransferCheckedWithFee(src, mint, dst, mustKey(t, iv.Payer), gross, uint8(iv.Decimals), fee)
		}
		u := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
		for i, c := range []struct {
			name string
			leg  func(iv api.TransactionIntentView, i int, l api.IntentLegView) message.Instruction
			want string
		}{
			{"short by one atomic unit", func(iv api.TransactionIntentView, i int, l api.IntentLegView) message.Instruction {
				gross := u(l.GrossAtomic)
				if i == 0 {
					gross--
				}
				return transfer(iv, l, s.Token.Mint, mustKey(t, l.RecipientTokenAccount), gross, feeOf(gross))
			}, "legs[0].net"},
			{"paid to the wrong wallet", func(iv api.TransactionIntentView, i int, l api.IntentLegView) message.Instruction {
				dst := mustKey(t, l.RecipientTokenAccount)
				if i == 1 {
					dst = strangerAcct
				}
				return transfer(iv, l, s.Token.Mint, dst, u(l.GrossAtomic), u(l.FeeAtomic))
			}, "legs[1].destination"},
			{"in the wrong mint", func(iv api.TransactionIntentView, i int, l api.IntentLegView) message.Instruction {
				mint := s.Token.Mint
				if i == 0 {
					mint = otherMint
				}
				return transfer(iv, l, mint, token2022.AssociatedTokenAddress(mustKey(t, l.Recipient), mint), u(l.GrossAtomic), u(l.FeeAtomic))
			}, "legs[0].mint"},
		} {
			iv := m.buy(t, b, "mismatch-"+strconv.Itoa(i))
			payWith(t, s, b, iv, func(i int, l api.IntentLegView) message.Instruction { return c.leg(iv, i, l) })
			var got api.TransactionIntentView
			waitFor(t, c.name+": review", func() bool {
				var cs api.ChainStatusView
				checkStatus(s, key, iv.ID).Data(t, &cs)
				got = cs.Intent
				return got.State == "REQUIRES_REVIEW" || got.State == "SETTLED" || got.State == "FAILED"
			})
			var fields []string
			for _, e := range got.Evidence {
				fields = append(fields, e.Field)
			}
			if got.State != "REQUIRES_REVIEW" || !slices.Contains(fields, c.want) {
				t.Fatalf("%s: intent %s, evidence %v; want REQUIRES_REVIEW naming %s", c.name, got.State, fields, c.want)
			}
			ord := orderOf(t, s, b.cookie, iv.ID)
			if ord.State != "REQUIRES_REVIEW" || ord.EntitlementID != nil {
				t.Fatalf("%s: order %s", c.name, ord.State)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM marketplace_entitlements WHERE order_id = ?`, ord.ID); n != 0 {
				t.Fatalf("%s: %d entitlements", c.name, n)
			}
			if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference LIKE ?`, "%marketplace_order:"+iv.ID); n != 0 {
				t.Fatalf("%s: %d ledger movements", c.name, n)
			}
		}
		if r := download(s, b.cookie, m.asset); r.Status != http.StatusNotFound {
			t.Fatalf("a reviewed order opened the asset: %d", r.Status)
		}
	})
}

// feeOf is the deployed mint's transfer fee on amount: 200 bps rounded up,
// at most 5 tokens.
func feeOf(amount uint64) uint64 {
	return min((amount*200+9_999)/10_000, 5_000_000_000)
}

// TestMarketplaceSettlesOnce: 50 concurrent chain-status checks of one
// paid order settle it once: one entitlement, one buyer's and one
// seller's movement, the order FULFILLED.
func TestMarketplaceSettlesOnce(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		m := newMarket(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "exclusive")
		b := fundedBuyer(t, s, "buyer@example.test", 100_000_000_000)
		iv := m.buy(t, b, "once")
		// An exclusive license has one live order at a time.
		other := fundedBuyer(t, s, "second@example.test", 100_000_000_000)
		r := createIntent(s, other, "second", map[string]any{"purpose": "marketplace_order", "listingId": m.listing.ID, "wallet": other.wallet.addr})
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), marketplace.ReasonExclusiveTaken) {
			t.Fatalf("a second order of an exclusive license: %d %s", r.Status, r.Body)
		}
		u := func(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }
		payWith(t, s, b, iv, func(_ int, l api.IntentLegView) message.Instruction {
			return message.TransferCheckedWithFee(mustKey(t, iv.SourceTokenAccount), s.Token.Mint, mustKey(t, l.RecipientTokenAccount),
				mustKey(t, iv.Payer), u(l.GrossAtomic), uint8(iv.Decimals), u(l.FeeAtomic))
		})
		// Five operator keys, ten checks each: under a key's concurrency limit.
		var keys []string
		for range 5 {
			keys = append(keys, internalKey(t, s))
		}
		key := keys[0]
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := checkStatus(s, keys[i%len(keys)], iv.ID)
				if r.Status != http.StatusOK && r.Code() != "CONFLICT" {
					t.Errorf("a concurrent check: %d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		waitFor(t, "settled", func() bool {
			var cs api.ChainStatusView
			checkStatus(s, key, iv.ID).Data(t, &cs)
			return cs.Intent.State == "SETTLED"
		})
		ord := orderOf(t, s, b.cookie, iv.ID)
		if ord.State != "FULFILLED" {
			t.Fatalf("order %s", ord.State)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM marketplace_entitlements WHERE order_id = ?`, ord.ID); n != 1 {
			t.Fatalf("%d entitlements, want one", n)
		}
		for _, ref := range []string{"purchase:marketplace_order:" + iv.ID, "sale:marketplace_order:" + iv.ID} {
			if n := count(t, s, `SELECT COUNT(*) FROM ledger_movements WHERE reference = ?`, ref); n != 1 {
				t.Fatalf("%d movements %s, want one", n, ref)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'marketplace_order.paid'`, ord.ID); n != 1 {
			t.Fatalf("%d paid events", n)
		}
	})
}

// TestMarketplaceListingRefusals: withdrawing an offer is its maker's
// (or an owner's or admin's) move, once; an asset of another workspace, a
// withdrawn offer, a payout wallet nobody verified or another user
// verified, a plan without marketplace.sell and a role without
// marketplace.create_listing are each refused with their own code, and
// nothing is listed; a buyer cannot order its own workspace's listing,
// nor any without a fee policy in force.
func TestMarketplaceListingRefusals(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		ada := newSeller(t, s, "ada@studio.example", "studio", true)
		wallet := newWalletKey(t)
		linkWallet(t, s, ada.person, wallet)
		v := wantRights(t, "rights", publishRights(s, ada.person, "", map[string]any{"name": "standard", "rules": rulesBody()}), http.StatusCreated)
		asset := uploadAs(t, s, ada.person, pcmWAV(48000, 4800, func(i int) float64 { return 0.2 * math.Sin(float64(i)/9) }))
		var offer, withdrawn api.LicenseOfferView
		offerLicense(s, ada.person, "", offerBody(asset, v)).Data(t, &offer)
		offerLicense(s, ada.person, "", offerBody(asset, v)).Data(t, &withdrawn)
		bob := newSeller(t, s, "bob@studio.example", "studio", true)
		linkWallet(t, s, bob.person, newWalletKey(t))
		bobAsset := uploadAs(t, s, bob.person, pcmWAV(8000, 800, func(int) float64 { return 0.1 }))
		// A member of Ada's workspace with a wallet of their own, and a viewer.
		code := invite(t, s, ada.person, "cleo@studio.example", "CREATOR")
		cleo := join(t, s, "cleo@studio.example", "Cleo", code)
		cleoWallet := newWalletKey(t)
		linkWallet(t, s, cleo, cleoWallet)
		code = invite(t, s, ada.person, "vera@studio.example", "VIEWER")
		vera := join(t, s, "vera@studio.example", "Vera", code)
		pro := newSeller(t, s, "pro@studio.example", "pro", false)

		// Withdrawing: only a caller reaching the offer, once.
		withdraw := func(p person, id string) *platformtest.Response {
			return asTest(s, p, "POST", "/api/v1/licenses/"+id+"/withdraw", "", nil)
		}
		for _, c := range []struct {
			name   string
			as     person
			status int
			code   string
		}{
			{"a viewer", vera, http.StatusForbidden, "ACCESS_DENIED"},
			{"a creator who did not make it", cleo, http.StatusForbidden, "ACCESS_DENIED"},
			{"another workspace", bob.person, http.StatusNotFound, "NOT_FOUND"},
		} {
			if r := withdraw(c.as, withdrawn.ID); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s withdraws: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			}
		}
		if r := as(s, ada.person, access.Live, "POST", "/api/v1/licenses/"+withdrawn.ID+"/withdraw", "", nil); r.Status != http.StatusNotFound {
			t.Errorf("the maker in the other environment withdraws: %d %s", r.Status, r.Body)
		}
		var w api.LicenseOfferView
		r := withdraw(ada.person, withdrawn.ID)
		r.Data(t, &w)
		if r.Status != http.StatusOK || w.State != "withdrawn" || w.Version != 2 {
			t.Fatalf("withdraw: %d %s", r.Status, r.Body)
		}
		if r := withdraw(ada.person, withdrawn.ID); r.Status != http.StatusConflict || r.Code() != "INVALID_STATE_TRANSITION" {
			t.Fatalf("withdraw again: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'license.withdrawn'`, withdrawn.ID); n != 1 {
			t.Fatalf("%d license.withdrawn events, want one", n)
		}

		body := func(change func(map[string]any)) map[string]any {
			b := map[string]any{"assetId": asset, "licenseId": offer.ID, "title": "Night Drive", "priceAtomic": "1000", "mint": s.Token.Mint.String()}
			if change != nil {
				change(b)
			}
			return b
		}
		for _, c := range []struct {
			name   string
			as     person
			body   map[string]any
			status int
			code   string
			field  string
		}{
			{"an asset of another workspace", ada.person, body(func(b map[string]any) { b["assetId"] = bobAsset }), http.StatusNotFound, "NOT_FOUND", "assetId"},
			{"a withdrawn offer", ada.person, body(func(b map[string]any) { b["licenseId"] = withdrawn.ID }), http.StatusConflict, "CONFLICT", "licenseId"},
			{"an unverified payout wallet", ada.person, body(func(b map[string]any) { b["payoutWallet"] = newWalletKey(t).addr }),
				http.StatusUnprocessableEntity, "WALLET_REQUIRED", "payoutWallet"},
			{"another member's payout wallet", ada.person, body(func(b map[string]any) { b["payoutWallet"] = cleoWallet.addr }),
				http.StatusUnprocessableEntity, "WALLET_MISMATCH", "payoutWallet"},
			{"a mint that is no mint", ada.person, body(func(b map[string]any) { b["mint"] = newWalletKey(t).addr }),
				http.StatusBadRequest, "INVALID_INPUT", "mint"},
			{"a plan without marketplace.sell", pro.person, body(nil), http.StatusForbidden, "ENTITLEMENT_REQUIRED", ""},
			{"a viewer, whatever the plan", vera, body(nil), http.StatusForbidden, "ACCESS_DENIED", ""},
		} {
			r := postListing(s, c.as, c.body)
			if r.Status != c.status || r.Code() != c.code || c.field != "" && !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
				t.Errorf("%s: %d %s, want %d %s naming %s", c.name, r.Status, r.Body, c.status, c.code, c.field)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM marketplace_listings`); n != 0 {
			t.Fatalf("refusals listed %d versions", n)
		}

		// A listing, then orders that cannot be: no fee policy, own listing.
		r = postListing(s, ada.person, body(nil))
		var l api.ListingView
		r.Data(t, &l)
		if r.Status != http.StatusCreated || l.PayoutWallet != wallet.addr {
			t.Fatalf("listing: %d %s", r.Status, r.Body)
		}
		if r := postListing(s, ada.person, body(nil)); r.Status != http.StatusOK {
			t.Fatalf("the same listing again: %d %s", r.Status, r.Body)
		}
		b := fundedBuyer(t, s, "buyer@example.test", 1_000_000_000)
		order := func(p buyer, key string) *platformtest.Response {
			return createIntent(s, p, key, map[string]any{"purpose": "marketplace_order", "listingId": l.ID, "wallet": p.wallet.addr})
		}
		if r := order(b, "no-fees"); r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), marketplace.ReasonFeePolicyMissing) {
			t.Fatalf("without a fee policy: %d %s", r.Status, r.Body)
		}
		publishFees(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"})
		self := buyer{person: ada.person, wallet: wallet}
		if r := order(self, "own"); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), marketplace.ReasonOwnListing) {
			t.Fatalf("buying one's own listing: %d %s", r.Status, r.Body)
		}
		if r := createIntent(s, b, "unknown", map[string]any{"purpose": "marketplace_order", "listingId": "lst_nope", "wallet": b.wallet.addr}); r.Status != http.StatusNotFound {
			t.Fatalf("an unknown listing: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM marketplace_orders`); n != 0 {
			t.Fatalf("%d orders made", n)
		}
	})
}

// TestMarketplaceOrderExpires: an order whose intent expires unpaid is
// EXPIRED, issuing nothing, and frees the exclusive license it held for
// another buyer's order.
func TestMarketplaceOrderExpires(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}}, func(t *testing.T, s *platformtest.System) {
		m := newMarket(t, s, billing.FeePolicy{FeeBps: 500, MinimumFeeAtomic: "0"}, "exclusive")
		first := fundedBuyer(t, s, "first@example.test", 100_000_000_000)
		iv := m.buy(t, first, "first")
		second := fundedBuyer(t, s, "second@example.test", 100_000_000_000)
		order := func() *platformtest.Response {
			return createIntent(s, second, "second-"+strconv.FormatInt(s.Clock.Now().Unix(), 10),
				map[string]any{"purpose": "marketplace_order", "listingId": m.listing.ID, "wallet": second.wallet.addr})
		}
		if r := order(); r.Status != http.StatusConflict {
			t.Fatalf("while the first order is live: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(16 * time.Minute)
		var cs api.ChainStatusView
		checkStatus(s, internalKey(t, s), iv.ID).Data(t, &cs)
		if cs.Intent.State != "EXPIRED" {
			t.Fatalf("intent %s, want EXPIRED", cs.Intent.State)
		}
		ord := orderOf(t, s, first.cookie, iv.ID)
		if ord.State != "EXPIRED" || ord.EntitlementID != nil {
			t.Fatalf("order %+v", ord)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ? AND type = 'marketplace_order.expired'`, ord.ID); n != 1 {
			t.Fatalf("%d expired events", n)
		}
		if r := order(); r.Status != http.StatusCreated {
			t.Fatalf("after the first order expired: %d %s", r.Status, r.Body)
		}
	})
}
