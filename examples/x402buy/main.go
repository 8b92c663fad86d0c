// Command x402buy buys one use of a resource of the payment-required
// protocol (x402 version 2, scheme exact on Solana) in test mode, through
// the HTTP API, as a paying client would: on the example host started with
// its loopback Solana cluster.
//
//	go run ./examples/server                # in one shell
//	go run ./examples/x402buy               # in another
//
// It reads DATA/demo-credentials.json (the test API key) and
// DATA/demo-wallet.json (the demo wallet's keypair in the Solana CLI's
// format, which the host writes and funds with test dollars), and the
// cluster's address from DATA/services.json, then:
//
//  1. lists the resources (GET /api/v1/x402/resources) and picks -resource;
//  2. asks for its requirements (GET /api/v1/x402/requirements/{id}), which
//     answer 402 with PAYMENT-REQUIRED: standard base64 of the
//     PaymentRequired JSON (the exact amount, the asset, payTo, the
//     facilitator's fee payer and a memo bound to the key's workspace);
//  3. reads the asset's mint on the cluster (its token program), fetches a
//     blockhash, and builds the payment: SetComputeUnitLimit,
//     SetComputeUnitPrice, TransferChecked of the exact amount from the
//     wallet's token account to payTo's, and the memo; it signs it with
//     the keypair and leaves the fee payer's signature slot empty;
//  4. verifies it (POST /api/v1/x402/verify, the payment in
//     PAYMENT-SIGNATURE): every facilitator rule, nothing settled;
//  5. settles it (POST /api/v1/x402/settle with an Idempotency-Key): the
//     host co-signs as fee payer, submits and waits for confirmation, and
//     answers 200 with PAYMENT-RESPONSE and the grant of one use;
//  6. with -analyze ASSET_ID, spends the grant on an analysis of that asset
//     (POST /api/v1/sound/analyze with x402GrantId).
//
// Every request carries the test API key, so it acts in test mode. A
// failed call prints the API's error code and message; a refused payment
// prints PAYMENT-RESPONSE's errorReason. It prints the transaction's
// signature, never the keypair.
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/examples/internal/democlient"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/web3/x402"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "x402buy:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "http://127.0.0.1:8080", "the example host's base `URL`")
	data := flag.String("data", "./data", "the host's data `folder` (demo-credentials.json, demo-wallet.json, services.json)")
	resource := flag.String("resource", "sound-analysis", "the `id` of the resource to buy")
	analyze := flag.String("analyze", "", "spend the grant on an analysis of this `asset` id")
	timeout := flag.Duration("timeout", 60*time.Second, "how long the whole purchase may take")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var cred struct {
		APIKey string `json:"apiKey"`
	}
	credPath := filepath.Join(*data, "demo-credentials.json")
	b, err := os.ReadFile(credPath)
	if err != nil {
		return fmt.Errorf("read the demo credentials (start the host first): %w", err)
	}
	if err := json.Unmarshal(b, &cred); err != nil || cred.APIKey == "" {
		return fmt.Errorf("read %s: no test API key", credPath)
	}
	walletPath := filepath.Join(*data, "demo-wallet.json")
	key, err := democlient.ReadKeypair(walletPath)
	if err != nil {
		return fmt.Errorf("read the demo wallet (start the host first): %w", err)
	}
	rpcURL, err := clusterURL(*data)
	if err != nil {
		return err
	}
	c := &client{base: strings.TrimRight(*addr, "/"), key: cred.APIKey, http: &http.Client{Timeout: 45 * time.Second}}
	payer := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
	fmt.Printf("Host %s, test mode. Payer: demo wallet %s (keypair %s).\n", c.base, payer, walletPath)

	// 1. The resource.
	var list api.X402ResourcesView
	if _, err := c.call(ctx, http.MethodGet, "/api/v1/x402/resources", nil, nil, &list); err != nil {
		return fmt.Errorf("list the resources: %w", err)
	}
	if !list.Configured || !list.Verified {
		reason := ""
		if list.Reason != nil {
			reason = " (" + *list.Reason + ")"
		}
		return fmt.Errorf("the test environment does not take payments yet%s: start the host with its Solana cluster", reason)
	}
	var res *api.X402ResourceView
	for i := range list.Resources {
		if list.Resources[i].ID == *resource {
			res = &list.Resources[i]
		}
	}
	if res == nil {
		return fmt.Errorf("the host offers no resource %q", *resource)
	}
	amount, err := money.ParseAtomic(res.AmountAtomic)
	if err != nil {
		return err
	}
	fmt.Printf("Resource %s: %s\n  price %s (atomic %s) of %s, paid to %s on %s\n", res.ID, res.Description,
		money.Format(amount, res.Decimals), res.AmountAtomic, res.Asset, res.PayTo, deref(list.Network))

	// 2. The requirements: 402 with PAYMENT-REQUIRED, or 200 with the same
	// object when the workspace holds a grant not spent yet (a purchase
	// then buys one more use).
	var offered api.X402PaymentRequiredView
	hres, err := c.call(ctx, http.MethodGet, "/api/v1/x402/requirements/"+res.ID, nil, nil, &offered)
	if err != nil {
		return fmt.Errorf("read the requirements: %w", err)
	}
	required := paymentRequired(offered)
	if hres.StatusCode == http.StatusPaymentRequired {
		if err := x402.DecodeHeader(hres.Header.Get(x402.HeaderRequired), &required); err != nil {
			return fmt.Errorf("read PAYMENT-REQUIRED: %w", err)
		}
	} else if offered.Grant != nil {
		fmt.Printf("The workspace holds grant %s already; buying one more use.\n", offered.Grant.ID)
	}
	if len(required.Accepts) == 0 {
		return errors.New("the requirements accept nothing")
	}
	req := required.Accepts[0]
	fmt.Printf("Requirements: %d %s, x402Version %d, scheme %s, amount %s, fee payer %s, memo %s\n",
		hres.StatusCode, http.StatusText(hres.StatusCode), required.X402Version, req.Scheme, req.Amount, req.Extra.FeePayer, req.Extra.Memo)

	// 3. The payment, built and signed by the wallet.
	cluster := rpc.New(rpcURL)
	mint, err := solana.PublicKeyFromBase58(req.Asset)
	if err != nil {
		return fmt.Errorf("the asset: %w", err)
	}
	info, err := cluster.GetAccountInfoWithOpts(ctx, mint, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil || info.Value == nil {
		return fmt.Errorf("read the asset's mint on the cluster: %v", err)
	}
	hash, err := cluster.GetLatestBlockhash(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return fmt.Errorf("read the latest blockhash: %w", err)
	}
	pp, err := x402.BuildPayment(required, key, chain.Address(info.Value.Owner), uint8(res.Decimals), hash.Value.Blockhash.String())
	if err != nil {
		return fmt.Errorf("build the payment: %w", err)
	}
	sig, err := x402.EncodeHeader(pp)
	if err != nil {
		return err
	}
	fmt.Printf("Payment built and signed by the wallet: TransferChecked of %s to payTo's token account, blockhash %s, the fee payer's slot empty.\n",
		req.Amount, hash.Value.Blockhash)

	// 4. Verify: every rule, nothing settled.
	var verdict api.X402VerifyView
	if _, err := c.call(ctx, http.MethodPost, "/api/v1/x402/verify", map[string]string{x402.HeaderSignature: sig}, nil, &verdict); err != nil {
		return fmt.Errorf("verify the payment: %w", err)
	}
	if !verdict.IsValid {
		return fmt.Errorf("the payment is invalid: %s (%s)", verdict.InvalidReason, verdict.InvalidMessage)
	}
	fmt.Printf("Verified: valid, payer %s.\n", verdict.Payer)

	// 5. Settle: co-signed, submitted, confirmed; PAYMENT-RESPONSE on
	// success and on failure.
	var settled api.X402SettleView
	sres, err := c.call(ctx, http.MethodPost, "/api/v1/x402/settle",
		map[string]string{x402.HeaderSignature: sig, "Idempotency-Key": "x402buy-" + democlient.RandomHex(12)}, nil, &settled)
	if err != nil {
		return fmt.Errorf("settle the payment: %w", err)
	}
	var resp x402.SettleResponse
	if err := x402.DecodeHeader(sres.Header.Get(x402.HeaderResponse), &resp); err != nil {
		return fmt.Errorf("read PAYMENT-RESPONSE: %w", err)
	}
	if !resp.Success {
		return fmt.Errorf("settle: %d, PAYMENT-RESPONSE success false: %s (%s)", sres.StatusCode, resp.ErrorReason, resp.ErrorMessage)
	}
	fmt.Printf("Settled: %d %s, PAYMENT-RESPONSE success, transaction %s, amount %s on %s.\n",
		sres.StatusCode, http.StatusText(sres.StatusCode), resp.Transaction, resp.Amount, resp.Network)
	if settled.Grant == nil {
		return errors.New("the settlement carries no grant")
	}
	fmt.Printf("Grant %s (%s): one %s, settlement %s.\n", settled.Grant.ID, settled.Grant.State, settled.Grant.Kind, deref(settled.SettlementID))

	// 6. Spend it.
	if *analyze == "" {
		fmt.Printf("Spend it: POST /api/v1/sound/analyze with {\"input\":{\"assetId\":...},\"x402GrantId\":%q}.\n", settled.Grant.ID)
		return nil
	}
	var op api.SoundOperationView
	body := map[string]any{"input": map[string]string{"assetId": *analyze}, "x402GrantId": settled.Grant.ID}
	if _, err := c.call(ctx, http.MethodPost, "/api/v1/sound/analyze", map[string]string{"Idempotency-Key": "x402buy-" + democlient.RandomHex(12)},
		body, &op); err != nil {
		return fmt.Errorf("spend the grant on an analysis: %w", err)
	}
	fmt.Printf("Analysis %s (%s) accepted; grant %s spent.\n", op.ID, op.Status, settled.Grant.ID)
	return nil
}

// paymentRequired is the PaymentRequired object of the requirements
// route's data.
func paymentRequired(v api.X402PaymentRequiredView) x402.PaymentRequired {
	out := x402.PaymentRequired{X402Version: v.X402Version, Error: v.Error,
		Resource: x402.ResourceInfo{URL: v.Resource.URL, Description: v.Resource.Description, MimeType: v.Resource.MimeType}}
	for _, r := range v.Accepts {
		out.Accepts = append(out.Accepts, x402.Requirements{Scheme: r.Scheme, Network: r.Network, Amount: r.Amount, Asset: r.Asset,
			PayTo: r.PayTo, MaxTimeoutSeconds: r.MaxTimeoutSeconds, Extra: x402.Extra{FeePayer: r.Extra.FeePayer, Memo: r.Extra.Memo}})
	}
	return out
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// client calls the platform's API with the test key.
type client struct {
	base string
	key  string
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
	if len(e.Details) > 0 && string(e.Details) != "null" {
		s += " " + string(e.Details)
	}
	return s
}

// call sends one request with headers and body, and decodes the envelope's
// data into out. A 402 with a data envelope is an answer, not an error:
// the protocol's outcome.
func (c *client) call(ctx context.Context, method, path string, headers map[string]string, body, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", method, path, err)
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
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return res, fmt.Errorf("%s %s: decode the data: %w", method, path, err)
		}
	}
	return res, nil
}

// clusterURL reads the simulated cluster's URL from the map the example
// host saves in its data folder.
func clusterURL(data string) (string, error) {
	path := filepath.Join(data, "services.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the host's services map (start the host first): %w", err)
	}
	var m struct {
		Simulators []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"simulators"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	for _, s := range m.Simulators {
		if s.Name == "solana" {
			return s.URL, nil
		}
	}
	return "", fmt.Errorf("%s: the host runs no Solana cluster (it was started with -chain-sim=false)", path)
}
