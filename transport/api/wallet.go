package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/fault"
)

// WalletChallengeRequest is the body of POST /api/v1/wallet/challenge.
type WalletChallengeRequest struct {
	Address string `json:"address" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T" doc:"The base58 ed25519 public key (32 bytes) that will sign."`
	Purpose string `json:"purpose" example:"link_wallet" doc:"A registered purpose; link_wallet is always registered."`
}

// WalletSignInInput is the challenge's message as fields: the wallet
// standard's SolanaSignInInput, to pass to a wallet's signIn, which then
// signs exactly the challenge's message.
type WalletSignInInput struct {
	// Domain is the app's domain the wallet shows and signs (RFC 3986 authority).
	Domain string `json:"domain" example:"app.example.com"`
	// Address is the wallet address that must sign (base58).
	Address string `json:"address" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// Statement is the human-readable statement of the message.
	Statement string `json:"statement" example:"Link this wallet to your platform account for link_wallet. This request will not trigger a blockchain transaction or cost any fees."`
	// URI is the app's URI the sign-in is for.
	URI string `json:"uri" example:"https://app.example.com"`
	// Version is the Sign-In With Solana message version, always 1.
	Version string `json:"version" example:"1"`
	ChainID string `json:"chainId,omitempty" example:"solana:devnet" doc:"The wallet-standard chain id of the environment's cluster; absent when none is configured."`
	// Nonce is the challenge's single-use random nonce.
	Nonce string `json:"nonce" example:"K7QH3VZ2M5XN4B6C8D2F3G4H5J"`
	// IssuedAt is when the challenge was issued, an RFC 3339 time with milliseconds.
	IssuedAt string `json:"issuedAt" example:"2026-01-02T03:04:05.000Z"`
	// ExpirationTime is when the challenge expires, an RFC 3339 time with milliseconds.
	ExpirationTime string `json:"expirationTime" example:"2026-01-02T03:09:05.000Z"`
	// RequestID is the challenge's id, carried in the message.
	RequestID string `json:"requestId" example:"wch_01JD0000000000000000000000"`
}

// WalletChallengeView answers POST /api/v1/wallet/challenge.
type WalletChallengeView struct {
	// ID is the challenge's id.
	ID string `json:"id" example:"wch_01JD0000000000000000000000"`
	// Object is always "wallet_challenge".
	Object string `json:"object" example:"wallet_challenge"`
	// Address is the wallet address that must sign (base58).
	Address string `json:"address" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	// Purpose is the purpose the verified wallet will serve.
	Purpose string `json:"purpose" example:"link_wallet"`
	// Message is the exact text to sign: its UTF-8 bytes, LF-separated, no
	// trailing newline.
	Message string `json:"message" doc:"The exact Sign-In With Solana message to sign (its UTF-8 bytes)."`
	// IssuedAt is when the challenge was issued.
	IssuedAt time.Time `json:"issuedAt"`
	// ExpiresAt is when the challenge expires; verify before then.
	ExpiresAt time.Time `json:"expiresAt"`
	// SignInInput is the message as fields, for a wallet's signIn.
	SignInInput WalletSignInInput `json:"signInInput"`
}

// WalletVerifyRequest is the body of POST /api/v1/wallet/verify.
type WalletVerifyRequest struct {
	// ChallengeID is the challenge the signature answers.
	ChallengeID string `json:"challengeId" example:"wch_01JD0000000000000000000000"`
	Signature   string `json:"signature" example:"REPLACE_WITH_BASE58_SIGNATURE" doc:"The 64-byte ed25519 signature over the message, base58 or padded standard base64."`
	// SignedMessage is optional: what the wallet reports it signed.
	SignedMessage string `json:"signedMessage,omitempty" doc:"Optional: the message the wallet signed (signIn's signedMessage), as UTF-8 text or standard base64; it must equal the challenge's message byte for byte."`
}

// WalletLinkView answers POST /api/v1/wallet/verify: the wallet link the
// verification recorded, or the existing one of a wallet the user had
// linked already.
type WalletLinkView struct {
	// LinkID is the wallet link's id.
	LinkID string `json:"linkId" example:"wl_01JD0000000000000000000000"`
	// Object is always "wallet_link".
	Object string `json:"object" example:"wallet_link"`
	// WalletAddress is the verified wallet address (base58).
	WalletAddress string `json:"walletAddress" example:"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"`
	Network       string `json:"network" example:"solana" doc:"Always solana: a link holds on every cluster and in both environments."`
	// Purpose is the purpose the challenge named.
	Purpose string `json:"purpose" example:"link_wallet"`
	// ChallengeID is the challenge this verification answered.
	ChallengeID string    `json:"challengeId" example:"wch_01JD0000000000000000000000"`
	VerifiedAt  time.Time `json:"verifiedAt" doc:"When this verification happened."`
	LinkedAt    time.Time `json:"linkedAt" doc:"When the link was first recorded."`
}

func walletChallengeView(is wallet.Issued) WalletChallengeView {
	m := is.Input
	return WalletChallengeView{ID: is.ID, Object: "wallet_challenge", Address: is.Address, Purpose: is.Purpose, Message: is.Message,
		IssuedAt: is.IssuedAt, ExpiresAt: is.ExpiresAt,
		SignInInput: WalletSignInInput{Domain: m.Domain, Address: m.Address, Statement: m.Statement, URI: m.URI, Version: m.Version,
			ChainID: m.ChainID, Nonce: m.Nonce, IssuedAt: m.IssuedAt, ExpirationTime: m.ExpirationTime, RequestID: m.RequestID}}
}

func walletLinkView(v wallet.Verified) WalletLinkView {
	return WalletLinkView{LinkID: v.Link.ID, Object: "wallet_link", WalletAddress: v.Link.Address, Network: v.Link.Network,
		Purpose: v.Purpose, ChallengeID: v.ChallengeID, VerifiedAt: v.VerifiedAt, LinkedAt: v.Link.VerifiedAt}
}

// walletUnit adapts an OwnUnitOfWork call's Commit to the wallet service.
// A unit committed for a failure (a counted rejected attempt) records the
// failure's status in the request's receipt.
func walletUnit(c *Call) wallet.UnitOfWork {
	return func(ctx context.Context, failure error, fn func(st wallet.Store) error) error {
		if failure != nil {
			c.SetStatus(transport.StatusOf(fault.CodeOf(failure)))
		}
		return c.Commit(ctx, func(tx Tx) error { return fn(tx) })
	}
}

// walletRoutes are the wallet verification routes (spec, Endpoints: Wallet
// verification; chain.md §6). Both need a signed-in user (a session cookie
// or an access token; the gateway refuses an API key with 403
// ACCESS_DENIED) of a tenant, and no workspace authority (SignedIn).
// The challenge runs in the route's unit of work and takes an optional
// Idempotency-Key. Verify commits its own units of work (OwnUnitOfWork), so
// that a rejected signature's attempt count is kept although the call
// fails; it takes no Idempotency-Key: a repeated verification of a consumed
// challenge is 409 CONFLICT, and the link it made stays.
func walletRoutes(svc *wallet.Service) []Route {
	if svc == nil {
		return nil
	}
	signedIn := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.SignedIn, r.Private = http.MethodPost, transport.TagWallet, transport.AuthSession, true, true
		return r
	}
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const addr, id = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T", "wch_01JD0000000000000000000000"
	exInput := wallet.Message{Domain: "app.example.com", Address: addr, Statement: wallet.DefaultStatement(wallet.PurposeLinkWallet),
		URI: "https://app.example.com", Version: "1", ChainID: "solana:devnet", Nonce: "K7QH3VZ2M5XN4B6C8D2F3G4H5J",
		IssuedAt: wallet.FormatTime(t), ExpirationTime: wallet.FormatTime(t.Add(wallet.DefaultTTL)), RequestID: id}
	exChallenge := walletChallengeView(wallet.Issued{Challenge: wallet.Challenge{ID: id, Address: addr, Purpose: wallet.PurposeLinkWallet,
		Message: exInput.Text(), IssuedAt: t, ExpiresAt: t.Add(wallet.DefaultTTL)}, Input: exInput})
	exLink := WalletLinkView{LinkID: "wl_01JD0000000000000000000000", Object: "wallet_link", WalletAddress: addr, Network: wallet.Network,
		Purpose: wallet.PurposeLinkWallet, ChallengeID: id, VerifiedAt: t.Add(time.Minute), LinkedAt: t.Add(time.Minute)}
	return []Route{
		signedIn(Route{Pattern: "/api/v1/wallet/challenge", OperationID: "createWalletChallenge", Status: http.StatusCreated,
			Idempotency: transport.IdempotencyOptional,
			Summary:     "Create a wallet challenge",
			Description: "Issues a short-lived, purpose-bound, single-use Sign-In With Solana (v1.0.0) challenge for the signed-in user " +
				"and one address. message is the exact text to sign: the wallet signs its UTF-8 bytes (signMessage), or signIn with " +
				"signInInput returns it as signedMessage. It names the platform's domain and URI, the purpose's statement, Version 1, " +
				"the environment's chain id (solana:mainnet, solana:devnet, solana:testnet, or localnet), a fresh nonce, Issued At, " +
				"Expiration Time (five minutes unless configured) and the challenge id as Request ID. An address that is not a base58 " +
				"32-byte key, or an unregistered purpose (details.allowed lists them), is 422 INVALID_INPUT. An API key is 403 " +
				"ACCESS_DENIED, as is an account without a tenant (details.reason no_tenant).",
			Request:  WalletChallengeRequest{Address: addr, Purpose: wallet.PurposeLinkWallet},
			Response: exChallenge, Errors: []string{string(fault.InvalidInput)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in WalletChallengeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				is, err := svc.Challenge(ctx, c.Tx, c.Principal, wallet.ChallengeRequest{Address: in.Address, Purpose: in.Purpose})
				if err != nil {
					return nil, err
				}
				return walletChallengeView(is), nil
			}}),
		signedIn(Route{Pattern: "/api/v1/wallet/verify", OperationID: "verifyWallet", Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true,
			Summary: "Verify a wallet challenge",
			Description: "Checks the ed25519 signature over the exact bytes of the caller's challenge message with the challenge's " +
				"address and records a server-owned wallet link for the user and tenant (network solana). It creates no session, role " +
				"or entitlement. In order: a signature that is not 64 bytes in base58 or padded base64 is 422 INVALID_INPUT; an " +
				"unknown challenge, or another account's, is 404 NOT_FOUND; a used challenge is 409 CONFLICT (details.reason " +
				"challenge_consumed, or attempts_exhausted); an expired one is 410 QUOTE_EXPIRED (details.reason challenge_expired); " +
				"a signedMessage that differs from the message by one byte is 422 SIGNATURE_REJECTED (details.reason " +
				"message_mismatch), as is a signature that does not verify (signature_invalid). A rejected attempt consumes nothing " +
				"(details.attemptsRemaining) until the fifth, which consumes the challenge. Success consumes the challenge once: a " +
				"concurrent or repeated verification is 409 CONFLICT. A wallet linked to another user of the tenant is 409 CONFLICT " +
				"(details.reason wallet_linked_elsewhere); relinking the caller's own wallet returns the existing link.",
			Request: WalletVerifyRequest{ChallengeID: id, Signature: "REPLACE_WITH_BASE58_SIGNATURE"}, Response: exLink,
			Errors: []string{string(fault.InvalidInput), string(fault.NotFound), string(fault.Conflict), string(fault.QuoteExpired),
				string(fault.SignatureRejected)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in WalletVerifyRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				v, err := svc.Verify(ctx, c.Tx, walletUnit(c), c.Principal,
					wallet.VerifyRequest{ChallengeID: in.ChallengeID, Signature: in.Signature, SignedMessage: in.SignedMessage})
				if err != nil {
					return nil, err
				}
				return walletLinkView(v), nil
			}}),
	}
}
