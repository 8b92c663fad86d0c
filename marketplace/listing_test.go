package marketplace_test

import (
	"context"
	"crypto/sha256"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
)

// addr is a deterministic address.
func addr(name string) chain.Address { return chain.Address(sha256.Sum256([]byte("market:" + name))) }

// marketWorld is seller's store with an active offer on ast_mine, a withdrawn
// one, usr_1's verified wallet and a service over the store's chain and
// wallets.
func marketWorld(t *testing.T) (*memStore, *marketplace.Service, marketplace.Offer, marketplace.Offer) {
	t.Helper()
	ctx := context.Background()
	st, v1, _ := seller(t)
	svc := marketplace.New(marketplace.Config{Mints: st, Wallets: st})
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	active, err := svc.OfferLicense(ctx, st, p, a, offerOf("ast_mine", v1.Ref))
	if err != nil {
		t.Fatal(err)
	}
	withdrawn, err := svc.OfferLicense(ctx, st, p, a, offerOf("ast_mine", v1.Ref))
	if err != nil {
		t.Fatal(err)
	}
	if withdrawn, err = svc.WithdrawLicense(ctx, st, p, a, withdrawn.ID, "req_w"); err != nil {
		t.Fatal(err)
	}
	st.mk().wallets[addr("seller").String()] = "usr_1"
	st.audits, st.events = nil, nil
	return st, svc, active, withdrawn
}

// listingOf is a listing request of ast_mine under offer.
func listingOf(offer string, price string) marketplace.ListingRequest {
	return marketplace.ListingRequest{AssetID: "ast_mine", LicenseID: offer, Title: "Night Drive", PriceAtomic: price,
		Mint: addr("mint").String(), RequestID: "req_l"}
}

// publish prepares and records a listing as the caller.
func publish(st *memStore, svc *marketplace.Service, p *access.Principal, a *access.Authority, in marketplace.ListingRequest) (marketplace.Listing, bool, error) {
	ctx := context.Background()
	l, err := svc.PrepareListing(ctx, st, p, a, in)
	if err != nil {
		return marketplace.Listing{}, false, err
	}
	return svc.RecordListing(ctx, st, p, l, in.RequestID)
}

// TestListingVersions: the first listing of an asset and offer is version
// 1, priced in the mint's decimals as the chain states them and paid out
// to the seller's only verified wallet; the same content answers that
// version and writes nothing; other content is version 2 of the same id.
func TestListingVersions(t *testing.T) {
	st, svc, offer, _ := marketWorld(t)
	p, a := member("usr_1", "ws_1", access.RoleOwner)
	st.mk().paymentFn = func(_ access.Environment, mint string) (intent.PaymentMint, error) {
		return intent.PaymentMint{Address: addr("mint"), Decimals: 6}, nil
	}
	l1, created, err := publish(st, svc, p, a, listingOf(offer.ID, "25000000"))
	if err != nil || !created || l1.Version != 1 || l1.Decimals != 6 || l1.PayoutWallet != addr("seller") || l1.PriceAtomic != 25_000_000 ||
		l1.ID == "" || l1.ContentHash != marketplace.ListingContentHash(l1) {
		t.Fatalf("first listing = %+v, %v, %v", l1, created, err)
	}
	same, created, err := publish(st, svc, p, a, listingOf(offer.ID, "25000000"))
	if err != nil || created || same.ID != l1.ID || same.Version != 1 {
		t.Fatalf("same content = %+v, created %v, %v", same, created, err)
	}
	if len(st.events) != 1 || st.events[0].Type != marketplace.EventListingPublished || len(st.audits) != 1 {
		t.Fatalf("events %+v, %d audits", st.events, len(st.audits))
	}
	l2, created, err := publish(st, svc, p, a, listingOf(offer.ID, "30000000"))
	if err != nil || !created || l2.ID != l1.ID || l2.Version != 2 || l2.PriceAtomic != 30_000_000 {
		t.Fatalf("edit = %+v, %v, %v", l2, created, err)
	}
	if len(st.mk().listings) != 2 || st.mk().listings[0].PriceAtomic != 25_000_000 {
		t.Fatalf("version 1 changed: %+v", st.mk().listings)
	}
}

// TestListingRefusals: each refusal carries its own code and field, and
// nothing is listed.
func TestListingRefusals(t *testing.T) {
	owner, ownerA := member("usr_1", "ws_1", access.RoleOwner)
	for _, c := range []struct {
		name    string
		setup   func(st *memStore, in *marketplace.ListingRequest, withdrawn string)
		p       *access.Principal
		a       *access.Authority
		code    fault.Code
		details map[string]any
	}{
		{"asset of another workspace", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.AssetID = "ast_theirs" },
			nil, nil, fault.NotFound, map[string]any{"field": "assetId"}},
		{"asset of the other environment", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.AssetID = "ast_live" },
			nil, nil, fault.NotFound, map[string]any{"field": "assetId"}},
		{"withdrawn offer", func(_ *memStore, in *marketplace.ListingRequest, w string) { in.LicenseID = w },
			nil, nil, fault.Conflict, map[string]any{"field": "licenseId", "reason": marketplace.ReasonLicenseWithdrawn}},
		{"offer of another asset", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.AssetID = "ast_hers" },
			nil, nil, fault.InvalidInput, map[string]any{"field": "licenseId", "reason": marketplace.ReasonLicenseOfOtherAsset}},
		{"unknown offer", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.LicenseID = "lic_none" },
			nil, nil, fault.NotFound, map[string]any{"field": "licenseId"}},
		{"unverified payout wallet", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.PayoutWallet = addr("nobody").String() },
			nil, nil, fault.WalletRequired, map[string]any{"field": "payoutWallet", "reason": marketplace.ReasonWalletNotVerified}},
		{"another user's payout wallet", func(st *memStore, in *marketplace.ListingRequest, _ string) {
			st.mk().wallets[addr("hers").String()] = "usr_9"
			in.PayoutWallet = addr("hers").String()
		}, nil, nil, fault.WalletMismatch, map[string]any{"field": "payoutWallet"}},
		{"no verified wallet", func(st *memStore, _ *marketplace.ListingRequest, _ string) {
			delete(st.mk().wallets, addr("seller").String())
		},
			nil, nil, fault.WalletRequired, map[string]any{"reason": marketplace.ReasonNoVerifiedWallet}},
		{"several verified wallets", func(st *memStore, _ *marketplace.ListingRequest, _ string) {
			st.mk().wallets[addr("second").String()] = "usr_1"
		},
			nil, nil, fault.WalletRequired, map[string]any{"reason": marketplace.ReasonPayoutWalletAmbiguous}},
		{"a price of zero", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.PriceAtomic = "0" },
			nil, nil, fault.InvalidAmount, map[string]any{"field": "priceAtomic"}},
		{"a price past 64 bits", func(_ *memStore, in *marketplace.ListingRequest, _ string) { in.PriceAtomic = "18446744073709551616" },
			nil, nil, fault.InvalidAmount, map[string]any{"field": "priceAtomic"}},
		{"a mint the chain refuses", func(st *memStore, _ *marketplace.ListingRequest, _ string) {
			st.mk().paymentFn = func(access.Environment, string) (intent.PaymentMint, error) {
				return intent.PaymentMint{}, fault.Invalid("chain", "mint", "not a Token-2022 mint")
			}
		}, nil, nil, fault.InvalidInput, map[string]any{"field": "mint"}},
		{"a creator listing another's asset", func(_ *memStore, in *marketplace.ListingRequest, _ string) {}, nil, nil, fault.AccessDenied, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, svc, offer, withdrawn := marketWorld(t)
			in := listingOf(offer.ID, "25000000")
			c.setup(st, &in, withdrawn.ID)
			p, a := owner, ownerA
			if c.code == fault.AccessDenied {
				p, a = member("usr_2", "ws_1", access.RoleCreator)
			}
			_, _, err := publish(st, svc, p, a, in)
			wantFault(t, c.name, err, c.code, c.details)
			if len(st.mk().listings) != 0 || len(st.events) != 0 {
				t.Fatalf("a refused listing wrote %d listings, %d events", len(st.mk().listings), len(st.events))
			}
		})
	}
	// Without a chain the listing is not served.
	st, _, offer, _ := marketWorld(t)
	_, err := marketplace.New(marketplace.Config{}).PrepareListing(context.Background(), st, owner, ownerA, listingOf(offer.ID, "1"))
	wantFault(t, "no chain", err, fault.ServiceUnavailable, nil)
}
