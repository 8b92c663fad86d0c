// Package democlient is the small API client the example commands share:
// requests in test mode with a session cookie, an API key or neither and
// an optional Idempotency-Key, the response envelope decoded, signing in,
// verifying a wallet, and reading a Solana CLI keypair file.
package democlient

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

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// maxResponseBytes bounds a response body read.
const maxResponseBytes = 8 << 20

// Auth is how one request authenticates: a session cookie, an API key or
// nothing, and an optional Idempotency-Key.
type Auth struct {
	// Cookie is the session cookie; nil for none.
	Cookie *http.Cookie
	// APIKey is sent as a bearer token; empty for none.
	APIKey string
	// IdempotencyKey is sent as the Idempotency-Key header; empty for none.
	IdempotencyKey string
}

// WithKey is a with an Idempotency-Key made of prefix and random hex.
func (a Auth) WithKey(prefix string) Auth {
	a.IdempotencyKey = prefix + "-" + RandomHex(12)
	return a
}

// Client calls the platform's API in test mode.
type Client struct {
	// Base is the host's base URL (http://127.0.0.1:8080).
	Base string
	// HTTP sends the requests.
	HTTP *http.Client
}

// APIError is the error envelope's error.
type APIError struct {
	// Status is the HTTP status of the answer.
	Status int `json:"-"`
	// Code is error.code.
	Code string `json:"code"`
	// Message is error.message.
	Message string `json:"message"`
	// Details is error.details as it came.
	Details json.RawMessage `json:"details,omitempty"`
}

// Error is the status, code, message and details.
func (e *APIError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if len(e.Details) > 0 && string(e.Details) != "null" && string(e.Details) != "{}" {
		s += " " + string(e.Details)
	}
	return s
}

// Call sends one request with Platform-Environment: test and decodes the
// envelope's data into out; an error envelope is an *APIError.
func (c *Client) Call(ctx context.Context, method, path string, body any, a Auth, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set(transport.EnvironmentHeader, "test")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Cookie != nil {
		req.AddCookie(a.Cookie)
	}
	if a.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.APIKey)
	}
	if a.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", a.IdempotencyKey)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if err != nil {
		return res, fmt.Errorf("%s %s: read the response: %w", method, path, err)
	}
	var env struct {
		Data  json.RawMessage `json:"data"`
		Error *APIError       `json:"error"`
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

// SignIn signs email in and returns its session.
func (c *Client) SignIn(ctx context.Context, email, password string) (Auth, error) {
	var signedIn api.SignedIn
	res, err := c.Call(ctx, http.MethodPost, "/api/v1/auth/login", map[string]string{"email": email, "password": password}, Auth{}, &signedIn)
	if err != nil {
		return Auth{}, fmt.Errorf("sign in as %s: %w", email, err)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == account.CookieName && ck.Value != "" {
			return Auth{Cookie: ck}, nil
		}
	}
	return Auth{}, fmt.Errorf("sign in as %s: the response set no %s cookie", email, account.CookieName)
}

// LinkWallet verifies key's wallet for the session's user: it asks for a
// link_wallet challenge and posts the signature of its message's bytes (a
// wallet linked already keeps its link). It returns the challenge and the
// link.
func (c *Client) LinkWallet(ctx context.Context, session Auth, key ed25519.PrivateKey) (api.WalletChallengeView, api.WalletLinkView, error) {
	wallet := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	var ch api.WalletChallengeView
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/wallet/challenge",
		map[string]string{"address": wallet, "purpose": "link_wallet"}, session, &ch); err != nil {
		return ch, api.WalletLinkView{}, fmt.Errorf("ask for a wallet challenge: %w", err)
	}
	sig := ed25519.Sign(key, []byte(ch.Message))
	var link api.WalletLinkView
	if _, err := c.Call(ctx, http.MethodPost, "/api/v1/wallet/verify",
		map[string]string{"challengeId": ch.ID, "signature": solana.SignatureFromBytes(sig).String()}, session, &link); err != nil {
		return ch, link, fmt.Errorf("verify the wallet: %w", err)
	}
	return ch, link, nil
}

// ReadKeypair reads a Solana CLI keypair file: a JSON array of the 64
// bytes of an ed25519 secret key (seed, then public key).
func ReadKeypair(path string) (ed25519.PrivateKey, error) {
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

// RandomHex is n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("democlient: random: " + err.Error())
	}
	return hex.EncodeToString(b)
}
