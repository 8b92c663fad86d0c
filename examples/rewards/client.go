package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// credentials are the fields of demo-credentials.json the command uses.
type credentials struct {
	APIKey        string `json:"apiKey"`
	OwnerEmail    string `json:"ownerEmail"`
	OwnerPassword string `json:"ownerPassword"`
	// Guest is the guest account, of its own tenant.
	Guest *struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"guest"`
}

// readCredentials reads the demo credentials the host wrote in data.
func readCredentials(data string) (credentials, error) {
	var cred credentials
	path := filepath.Join(data, "demo-credentials.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return cred, fmt.Errorf("read the demo credentials (start the host first): %w", err)
	}
	if err := json.Unmarshal(b, &cred); err != nil {
		return cred, fmt.Errorf("read %s: %w", path, err)
	}
	if cred.OwnerEmail == "" || cred.OwnerPassword == "" || cred.APIKey == "" {
		return cred, fmt.Errorf("%s holds no demo owner's email, password and key", path)
	}
	if cred.Guest == nil || cred.Guest.Email == "" || cred.Guest.Password == "" {
		return cred, fmt.Errorf("%s holds no guest account: restart the host to add it", path)
	}
	return cred, nil
}

// chainMap is what the command reads of the services map the host saves
// in its data folder: the cluster's address and the reward treasury.
type chainMap struct {
	// RPC is the simulated cluster's JSON-RPC URL.
	RPC string
	// Treasury is the test environment's reward treasury.
	Treasury string
}

// readChainMap reads the simulated cluster from DATA/services.json.
func readChainMap(data string) (chainMap, error) {
	path := filepath.Join(data, "services.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return chainMap{}, fmt.Errorf("read the host's services map (start the host first): %w", err)
	}
	var m struct {
		Simulators []struct {
			Name  string `json:"name"`
			URL   string `json:"url"`
			Chain *struct {
				Rewards *struct {
					Treasury string `json:"treasury"`
				} `json:"rewards"`
			} `json:"chain"`
		} `json:"simulators"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return chainMap{}, fmt.Errorf("read %s: %w", path, err)
	}
	for _, s := range m.Simulators {
		if s.Name != "solana" {
			continue
		}
		if s.Chain == nil || s.Chain.Rewards == nil {
			return chainMap{}, fmt.Errorf("%s: the host's cluster has no reward treasury (restart the host with this version)", path)
		}
		return chainMap{RPC: s.URL, Treasury: s.Chain.Rewards.Treasury}, nil
	}
	return chainMap{}, fmt.Errorf("%s: the host runs no Solana cluster (it was started with -chain-sim=false)", path)
}

// readKeypair reads a Solana CLI keypair file: a JSON array of the 64
// bytes of an ed25519 secret key (seed, then public key).
func readKeypair(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nums []int
	if err := json.Unmarshal(b, &nums); err != nil {
		return nil, fmt.Errorf("%s is not a keypair file (a JSON array of 64 bytes): %w", path, err)
	}
	if len(nums) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%s holds %d bytes, want %d", path, len(nums), ed25519.PrivateKeySize)
	}
	raw := make([]byte, len(nums))
	for i, n := range nums {
		if n < 0 || n > 255 {
			return nil, fmt.Errorf("%s: %d is not a byte", path, n)
		}
		raw[i] = byte(n)
	}
	key := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
	if !key.Equal(ed25519.PrivateKey(raw)) {
		return nil, errors.New(path + ": the public key does not match the secret key")
	}
	return key, nil
}

// auth is how one request authenticates: a session cookie, an API key or
// nothing, and an optional Idempotency-Key.
type auth struct {
	cookie         *http.Cookie
	apiKey         string
	idempotencyKey string
}

// with is a with an Idempotency-Key made of prefix and random hex.
func (a auth) with(prefix string) auth {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("rewards: random: " + err.Error())
	}
	a.idempotencyKey = prefix + "-" + hex.EncodeToString(b)
	return a
}

// client calls the platform's API in test mode.
type client struct {
	base string
	http *http.Client
}

// apiError is the error envelope's error.
type apiError struct {
	Status  int             `json:"-"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if len(e.Details) > 0 && string(e.Details) != "null" && string(e.Details) != "{}" {
		s += " " + string(e.Details)
	}
	return s
}

// call sends one request with Platform-Environment: test and decodes the
// envelope's data into out; an error envelope is an *apiError.
func (c *client) call(ctx context.Context, method, path string, body any, a auth, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set(transport.EnvironmentHeader, "test")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	if a.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.apiKey)
	}
	if a.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", a.idempotencyKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return res, fmt.Errorf("%s %s: read the response: %w", method, path, err)
	}
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *apiError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return res, fmt.Errorf("%s %s: %d, not an API envelope: %.200q", method, path, res.StatusCode, raw)
	}
	if env.Error != nil {
		env.Error.Status = res.StatusCode
		return res, fmt.Errorf("%s %s: %w", method, path, env.Error)
	}
	if res.StatusCode >= 300 {
		return res, fmt.Errorf("%s %s: status %d without an error", method, path, res.StatusCode)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return res, fmt.Errorf("%s %s: decode the data: %w", method, path, err)
		}
	}
	return res, nil
}

// signIn signs email in and returns the session.
func (c *client) signIn(ctx context.Context, email, password string) (auth, error) {
	var signedIn api.SignedIn
	res, err := c.call(ctx, http.MethodPost, "/api/v1/auth/login", map[string]string{"email": email, "password": password}, auth{}, &signedIn)
	if err != nil {
		return auth{}, fmt.Errorf("sign in as %s: %w", email, err)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == account.CookieName && ck.Value != "" {
			fmt.Printf("Signed in as %s.\n", email)
			return auth{cookie: ck}, nil
		}
	}
	return auth{}, fmt.Errorf("sign in as %s: the response set no %s cookie", email, account.CookieName)
}

// linkWallet verifies key's wallet for the session's user: a link_wallet
// challenge whose message it signs (a wallet linked already keeps its
// link).
func (c *client) linkWallet(ctx context.Context, session auth, key ed25519.PrivateKey) error {
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	var ch api.WalletChallengeView
	if _, err := c.call(ctx, http.MethodPost, "/api/v1/wallet/challenge",
		map[string]string{"address": wallet, "purpose": "link_wallet"}, session, &ch); err != nil {
		return fmt.Errorf("ask for a wallet challenge: %w", err)
	}
	sig := ed25519.Sign(key, []byte(ch.Message))
	var link api.WalletLinkView
	if _, err := c.call(ctx, http.MethodPost, "/api/v1/wallet/verify",
		map[string]string{"challengeId": ch.ID, "signature": solana.SignatureFromBytes(sig).String()}, session, &link); err != nil {
		return fmt.Errorf("verify the wallet: %w", err)
	}
	fmt.Printf("Wallet %s verified (link %s, since %s).\n", wallet, link.LinkID, link.LinkedAt.Format(time.RFC3339))
	return nil
}
