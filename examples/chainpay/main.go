// Command chainpay buys platform credits in test mode with the demo wallet,
// through the HTTP API, as a wallet app would: on the example host started
// with the loopback Solana cluster.
//
//	go run ./examples/server                # in one shell
//	go run ./examples/chainpay              # in another
//
// It reads DATA/demo-credentials.json (the demo owner's email and password,
// the test API key) and DATA/demo-wallet.json (the demo wallet's keypair in
// the Solana CLI's format, which the host writes and funds), then, with
// Platform-Environment: test on every request:
//
//  1. signs in as the demo owner (POST /api/v1/auth/login) and keeps the
//     session cookie;
//  2. verifies the wallet: asks for a link_wallet challenge, signs the
//     message's bytes with the keypair and posts the signature (a wallet
//     linked already returns its existing link);
//  3. reads the workspace's credits (GET /api/v1/saas/me);
//  4. creates a credit_purchase intent for -credits paid in -mint (by
//     default the deployed mint, read from GET /api/v1/token/deployment
//     with the test key) and prints its review: what the wallet pays, the
//     transfer fee, what the treasury receives, the recipient and network;
//  5. signs the prepared message, builds the signed wire transaction and
//     submits it with its signature for the platform to relay;
//  6. polls the intent every 100ms until it is SETTLED (or RECONCILED,
//     which follows) or ends otherwise
//     (at most -timeout), then prints the credits after, the difference and
//     the ledger movement that granted them.
//
// -account guest acts as the host's second demo account (its own tenant,
// the guest wallet DATA/demo-wallet-guest.json) in every mode.
//
// Market mode: -buy-listing LISTING buys the license a marketplace
// listing sells instead of credits. After signing in and verifying the
// wallet it creates a marketplace_order intent naming only the listing
// (the server derives the price, the seller's and the platform fee's legs
// and the mint), prints the review with each leg, signs and submits the
// prepared transaction, polls until it settles, then prints the order
// (its state, snapshot and split), the license entitlement and the
// financial ledger's entry, and downloads the asset's content, which the
// license opens to the buyer's workspace (to -out FILE when set):
//
//	go run ./examples/chainpay -account guest -buy-listing lst_... -out licensed.mp3
//
// Flags: -addr (default http://127.0.0.1:8080), -data (default ./data),
// -credits (a pack of the credits.packs policy: 100, 500 or 2000 by
// default), -mint, -timeout. A failed call prints the API's error code and
// message. It prints the transaction's signature, never the keypair or the
// password.
//
// Wallet modes play only the wallet's part, so that a shell can drive the
// API with curl (the README's walk-through does): -wallet-address prints
// the demo wallet's address; -sign-message TEXT prints the base58
// signature of TEXT (a Sign-In With Solana challenge's message);
// -sign-transaction MESSAGE signs an intent's prepared message (base64)
// and prints the JSON body of POST /api/v1/transactions/{id}/submit;
// -pay-uri URI builds the transfer a Solana Pay transfer request names (a
// memo, then Token-2022 TransferChecked with the references appended),
// signs it and sends it to the host's simulated cluster, whose address it
// reads from DATA/services.json, and prints the signature.
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/examples/internal/democlient"
	"github.com/creatormusic/platform/transport/api"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chainpay:", err)
		os.Exit(1)
	}
}

// credentials are the fields of demo-credentials.json chainpay uses.
type credentials struct {
	APIKey        string `json:"apiKey"`
	OwnerEmail    string `json:"ownerEmail"`
	OwnerPassword string `json:"ownerPassword"`
	// Guest is the guest account, of its own tenant.
	Guest *struct {
		APIKey   string `json:"apiKey"`
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"guest"`
}

// as narrows cred to the account named (owner or guest).
func (cred credentials) as(account string) (credentials, error) {
	switch account {
	case "owner":
		return cred, nil
	case "guest":
		if cred.Guest == nil {
			return cred, errors.New("the demo credentials hold no guest account: restart the host to add it")
		}
		return credentials{APIKey: cred.Guest.APIKey, OwnerEmail: cred.Guest.Email, OwnerPassword: cred.Guest.Password}, nil
	}
	return cred, fmt.Errorf("-account %q: want owner or guest", account)
}

// walletFile returns the keypair file of account's wallet in data.
func walletFile(data, account string) string {
	if account == "guest" {
		return filepath.Join(data, "demo-wallet-guest.json")
	}
	return filepath.Join(data, "demo-wallet.json")
}

func run() error {
	addr := flag.String("addr", "http://127.0.0.1:8080", "the example host's base `URL`")
	data := flag.String("data", "./data", "the host's data `folder` (demo-credentials.json, demo-wallet.json)")
	credits := flag.String("credits", "100", "the credit pack to buy")
	mint := flag.String("mint", "", "the payment mint (base58); empty means the test environment's deployed mint")
	timeout := flag.Duration("timeout", 60*time.Second, "how long to wait for the payment to settle (with -pay-uri: for the cluster)")
	address := flag.Bool("wallet-address", false, "wallet mode: print the demo wallet's address and exit")
	message := flag.String("sign-message", "", "wallet mode: print the base58 signature of this `text` and exit")
	prepared := flag.String("sign-transaction", "", "wallet mode: sign this prepared `message` (base64) and print the submit route's JSON body")
	payURI := flag.String("pay-uri", "", "wallet mode: pay this Solana Pay transfer request `URI` on the host's cluster and print the signature")
	acct := flag.String("account", "owner", "the demo `account` to act as: owner (the demo owner and demo-wallet.json) or guest (the guest account and demo-wallet-guest.json)")
	listing := flag.String("buy-listing", "", "market mode: buy the license this marketplace listing `id` sells (purpose marketplace_order) instead of credits")
	out := flag.String("out", "", "market mode: write the licensed asset's content to this `file`")
	flag.Parse()
	if *acct != "owner" && *acct != "guest" {
		return fmt.Errorf("-account %q: want owner or guest", *acct)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if *address || *message != "" || *prepared != "" || *payURI != "" {
		ctx, cancel := context.WithTimeout(ctx, *timeout) // -pay-uri's calls to the cluster
		defer cancel()
		return wallet(ctx, *data, *acct, *address, *message, *prepared, *payURI)
	}

	var cred credentials
	credPath := filepath.Join(*data, "demo-credentials.json")
	b, err := os.ReadFile(credPath)
	if err != nil {
		return fmt.Errorf("read the demo credentials (start the host first): %w", err)
	}
	if err := json.Unmarshal(b, &cred); err != nil {
		return fmt.Errorf("read %s: %w", credPath, err)
	}
	if cred, err = cred.as(*acct); err != nil {
		return err
	}
	if cred.OwnerEmail == "" || cred.OwnerPassword == "" {
		return fmt.Errorf("%s holds no %s email and password", credPath, *acct)
	}
	walletPath := walletFile(*data, *acct)
	key, err := democlient.ReadKeypair(walletPath)
	if err != nil {
		return fmt.Errorf("read the demo wallet (start the host first): %w", err)
	}
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()

	c := &client{&democlient.Client{Base: strings.TrimRight(*addr, "/"), HTTP: &http.Client{Timeout: 15 * time.Second}}}
	fmt.Printf("Host %s, test mode. Demo wallet %s (keypair %s).\n", c.Base, wallet, walletPath)

	if *mint == "" && *listing == "" {
		var dep api.TokenDeploymentView
		if _, err := c.Call(ctx, http.MethodGet, "/api/v1/token/deployment", nil, auth{APIKey: cred.APIKey}, &dep); err != nil {
			return fmt.Errorf("read the test environment's token deployment: %w", err)
		}
		if dep.Mint == nil {
			return fmt.Errorf("the test environment has no deployed mint (state %s): start the host with its Solana cluster (not -chain-sim=false)", dep.State)
		}
		*mint = *dep.Mint
		fmt.Printf("Token: mint %s, %s.\n", *mint, dep.State)
	}

	// 1. Sign in; the session cookie authenticates the rest.
	session, err := c.signIn(ctx, cred)
	if err != nil {
		return err
	}
	// 2. Verify the wallet: sign the challenge's message bytes.
	if err := c.linkWallet(ctx, session, key); err != nil {
		return err
	}
	if *listing != "" {
		return buyListing(ctx, c, session, key, *listing, *out, *timeout)
	}

	// 3. The workspace's credits before.
	before, err := c.creditBalance(ctx, session)
	if err != nil {
		return err
	}
	fmt.Printf("Workspace credits before: %s\n", before)

	// 4. Create the intent; the server derives every economic item.
	var it api.TransactionIntentView
	idem := auth{Cookie: session.Cookie, IdempotencyKey: "chainpay-" + democlient.RandomHex(12)}
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/transactions/intent",
		map[string]string{"purpose": "credit_purchase", "credits": *credits, "mint": *mint, "wallet": wallet}, idem, &it); err != nil {
		return fmt.Errorf("create the credit_purchase intent: %w", err)
	}
	if it.Transaction == nil {
		return fmt.Errorf("intent %s (%s) carries no prepared transaction", it.ID, it.State)
	}
	r := it.Review
	fmt.Printf("Intent %s (%s): %s\n", it.ID, it.State, r.Description)
	fmt.Printf("  pay        %s (atomic %s)\n  fee        %s (atomic %s, the token's transfer fee)\n  net        %s (atomic %s, what the recipient receives)\n",
		r.Pay, it.GrossAtomic, r.Fee, it.FeeAtomic, r.Net, it.NetAtomic)
	fmt.Printf("  mint       %s (%d decimals)\n  payer      %s\n  recipient  %s\n  network    %s\n  expires    %s\n",
		r.Mint, r.Decimals, r.Payer, r.Recipient, r.Network, r.ExpiresAt.Format(time.RFC3339))

	// 5. Sign the prepared message and submit the signed transaction.
	if it, err = c.signAndSubmit(ctx, session, key, it); err != nil {
		return err
	}
	submitted := time.Now()

	// 6. Poll until the payment settles (or is reconciled already) or ends
	// otherwise.
	if it, err = c.awaitSettled(ctx, session, it, *timeout, "no credits were granted"); err != nil {
		return err
	}
	slot := ""
	if it.Slot != nil {
		slot = fmt.Sprintf(" in slot %d", *it.Slot)
	}
	// The poll interval bounds the figure's resolution (100ms).
	fmt.Printf("Settled%s (network %s), %s after the submit answered.\n", slot, it.NetworkState,
		time.Since(submitted).Round(time.Millisecond))

	after, err := c.creditBalance(ctx, session)
	if err != nil {
		return err
	}
	diff, err := difference(before, after)
	if err != nil {
		return err
	}
	fmt.Printf("Workspace credits after: %s (%s)\n", after, diff)
	if grant, err := c.grantOf(ctx, session, it.BusinessReference); err != nil {
		return err
	} else if grant != "" {
		fmt.Println(grant)
	}
	return nil
}

// wallet runs one wallet mode with the demo keypair in data.
func wallet(ctx context.Context, data, account string, address bool, message, prepared, payURI string) error {
	key, err := democlient.ReadKeypair(walletFile(data, account))
	if err != nil {
		return fmt.Errorf("read the demo wallet (start the host first): %w", err)
	}
	switch {
	case address:
		walletAddress(os.Stdout, key)
		return nil
	case message != "":
		signMessage(os.Stdout, key, message)
		return nil
	case prepared != "":
		return signTransaction(os.Stdout, key, prepared)
	}
	rpcURL, err := clusterURL(data)
	if err != nil {
		return err
	}
	return payTransferRequest(ctx, os.Stdout, key, rpcURL, payURI)
}

// signIn signs cred's account in and returns the session.
func (c *client) signIn(ctx context.Context, cred credentials) (auth, error) {
	session, err := c.SignIn(ctx, cred.OwnerEmail, cred.OwnerPassword)
	if err != nil {
		return auth{}, err
	}
	fmt.Printf("Signed in as %s.\n", cred.OwnerEmail)
	return session, nil
}

// linkWallet verifies key's wallet for the session's user: it asks for a
// link_wallet challenge and posts the signature of its message's bytes (a
// wallet linked already returns its existing link).
func (c *client) linkWallet(ctx context.Context, session auth, key ed25519.PrivateKey) error {
	ch, link, err := c.LinkWallet(ctx, session, key)
	if err != nil {
		return err
	}
	if link.LinkedAt.Before(link.VerifiedAt) {
		fmt.Printf("Wallet verified again (challenge %s, chain id %s); linked since %s (%s).\n",
			ch.ID, ch.SignInInput.ChainID, link.LinkedAt.Format(time.RFC3339), link.LinkID)
	} else {
		fmt.Printf("Wallet verified (challenge %s, chain id %s) and linked: %s.\n", ch.ID, ch.SignInInput.ChainID, link.LinkID)
	}
	return nil
}

// signAndSubmit signs it's prepared message with key and submits the
// signature and the signed transaction for the platform to relay.
func (c *client) signAndSubmit(ctx context.Context, session auth, key ed25519.PrivateKey, it api.TransactionIntentView) (api.TransactionIntentView, error) {
	if it.Transaction == nil {
		return it, fmt.Errorf("intent %s (%s) carries no prepared transaction", it.ID, it.State)
	}
	msg, err := base64.StdEncoding.DecodeString(it.Transaction.MessageBase64)
	if err != nil {
		return it, fmt.Errorf("decode the prepared message: %w", err)
	}
	sig := ed25519.Sign(key, msg)
	// The wire transaction: the signature count (compact-u16 1), the
	// signature, the message.
	wire := make([]byte, 0, 1+len(sig)+len(msg))
	wire = append(append(append(wire, 1), sig...), msg...)
	signature := solana.SignatureFromBytes(sig).String()
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/transactions/"+url.PathEscape(it.ID)+"/submit",
		map[string]string{"signature": signature, "signedTransactionBase64": base64.StdEncoding.EncodeToString(wire)}, session, &it); err != nil {
		return it, fmt.Errorf("submit the signed transaction: %w", err)
	}
	fmt.Printf("Submitted: signature %s (%s, network %s)\n", signature, it.State, it.NetworkState)
	return it, nil
}

// awaitSettled polls it every 100ms until it settles (or is reconciled
// already), printing each change, and fails when it ends otherwise (with
// nothing, as unsettled says) or timeout passes.
func (c *client) awaitSettled(ctx context.Context, session auth, it api.TransactionIntentView, timeout time.Duration, unsettled string) (api.TransactionIntentView, error) {
	deadline := time.Now().Add(timeout)
	last := it.State + "/" + it.NetworkState
	for !terminal(it.State) {
		if time.Now().After(deadline) {
			return it, fmt.Errorf("intent %s is still %s (network %s) after %s", it.ID, it.State, it.NetworkState, timeout)
		}
		select {
		case <-ctx.Done():
			return it, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := c.Call(ctx, http.MethodGet, "/api/v1/transactions/"+url.PathEscape(it.ID), nil, session, &it); err != nil {
			return it, fmt.Errorf("read intent %s: %w", it.ID, err)
		}
		if now := it.State + "/" + it.NetworkState; now != last {
			fmt.Printf("  %s (network %s)\n", it.State, it.NetworkState)
			last = now
		}
	}
	if it.State != "SETTLED" && it.State != "RECONCILED" { // RECONCILED follows SETTLED
		detail := ""
		if it.ChainError != nil {
			detail += ", chain error " + *it.ChainError
		}
		for _, m := range it.Evidence {
			detail += fmt.Sprintf(", %s expected %s got %s", m.Field, m.Expected, m.Actual)
		}
		return it, fmt.Errorf("intent %s ended %s (network %s%s): %s", it.ID, it.State, it.NetworkState, detail, unsettled)
	}
	return it, nil
}

// terminal reports whether an intent's business state is final.
func terminal(state string) bool {
	switch state {
	case "SETTLED", "RECONCILED", "EXPIRED", "FAILED", "REQUIRES_REVIEW":
		return true
	}
	return false
}

// difference is after - before of two integer strings, signed.
func difference(before, after string) (string, error) {
	b, ok := new(big.Int).SetString(before, 10)
	if !ok {
		return "", fmt.Errorf("credits %q are not an integer", before)
	}
	a, ok := new(big.Int).SetString(after, 10)
	if !ok {
		return "", fmt.Errorf("credits %q are not an integer", after)
	}
	d := new(big.Int).Sub(a, b)
	if d.Sign() >= 0 {
		return "+" + d.String(), nil
	}
	return d.String(), nil
}

// auth is how one request authenticates (democlient.Auth).
type auth = democlient.Auth

// client calls the platform's API in test mode.
type client struct{ *democlient.Client }

// creditBalance is the workspace's credit balance in test mode.
func (c *client) creditBalance(ctx context.Context, a auth) (string, error) {
	var me api.SaasMe
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/saas/me", nil, a, &me); err != nil {
		return "", fmt.Errorf("read the workspace's credits: %w", err)
	}
	return me.Credits, nil
}

// grantOf describes the credits ledger's movement that settled the
// intent with business reference ref, among the newest movements; "" when
// it is not among them.
func (c *client) grantOf(ctx context.Context, a auth, ref string) (string, error) {
	var page api.LedgerPage
	if _, err := c.Call(ctx, http.MethodGet, "/api/v1/ledgers/activity?limit=20", nil, a, &page); err != nil {
		return "", fmt.Errorf("read the credit activity: %w", err)
	}
	for _, m := range page.Items {
		if m.Reference != ref && !strings.HasSuffix(m.Reference, ":"+ref) {
			continue
		}
		for _, p := range m.Postings {
			if p.Account == "workspace:credits" {
				return fmt.Sprintf("Ledger: %s %s of %s credits to %s (reference %s).", m.Ledger, m.Type, p.AmountAtomic, p.Account, m.Reference), nil
			}
		}
		return fmt.Sprintf("Ledger: %s %s (reference %s).", m.Ledger, m.Type, m.Reference), nil
	}
	return "", nil
}
