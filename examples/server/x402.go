package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/web3/x402"
)

// The resource the host sells per use in test mode: one analysis by the
// sound engine for 0.25 TESTUSD.
const (
	x402ResourceID   = "sound-analysis"
	x402PriceAtomic  = 250_000 // 0.25 TESTUSD (6 decimals)
	x402Price        = "0.25 TESTUSD"
	x402FeePayerSOL  = 1_000_000_000 // 1 SOL of fees, funded on every start
	x402FeePayerFile = "x402-fee-payer.sealed"
)

// x402Deployment is the payment-required protocol's set-up on the
// simulated cluster, as the map shows it.
type x402Deployment struct {
	// Resource is the resource sold, Price its price.
	Resource string `json:"resource"`
	Price    string `json:"price"`
	// Asset is the mint the price is paid in; PayTo the wallet whose
	// token account receives it.
	Asset string `json:"asset"`
	PayTo string `json:"payTo"`
	// FeePayer is the local facilitator's fee payer; its key is sealed at
	// rest in FeePayerFile.
	FeePayer     string `json:"feePayer"`
	FeePayerFile string `json:"feePayerFile"`
}

// print writes the set-up for a person, indented under its simulator.
func (d *x402Deployment) print(w io.Writer) {
	fmt.Fprintf(w, "              x402: %s for %s (asset %s) to %s\n", d.Resource, d.Price, d.Asset, d.PayTo)
	fmt.Fprintf(w, "              x402 fee payer %s (key sealed in %s)\n", d.FeePayer, d.FeePayerFile)
}

// startX402Sim configures the payment-required protocol in the test
// environment: the resource priced in the test dollar, paid to the
// treasury (whose token account of the dollar it creates), settled by the
// local facilitator with the host's fee payer, funded on every start. The
// fee payer's key lives in the data folder sealed with the host's master
// secret (created on first start); the platform holds it in memory only.
func startX402Sim(c *chaintest.Cluster, treasury, dollar chain.Address, keyPath string, master []byte) (platform.X402Environment, *x402Deployment, error) {
	key, err := feePayerKey(keyPath, master)
	if err != nil {
		return platform.X402Environment{}, nil, err
	}
	signer, err := x402.NewKeySigner(key)
	if err != nil {
		return platform.X402Environment{}, nil, err
	}
	c.Airdrop(signer.Address(), x402FeePayerSOL)
	if _, err := c.MintTo(treasury, dollar, 0); err != nil {
		return platform.X402Environment{}, nil, fmt.Errorf("the treasury's test dollar account: %w", err)
	}
	env := platform.X402Environment{Asset: dollar.String(), Decimals: dollarDecimals, FeePayer: signer,
		Resources: []x402.Resource{{ID: x402ResourceID, Kind: x402.KindSoundAnalysis,
			Description: "One analysis of an audio asset by the sound engine, bought per use.", Amount: money.Atomic(x402PriceAtomic)}}}
	return env, &x402Deployment{Resource: x402ResourceID, Price: x402Price, Asset: dollar.String(), PayTo: treasury.String(),
		FeePayer: signer.Address().String(), FeePayerFile: keyPath}, nil
}

// feePayerKey reads the fee payer's key, sealed at path with the host's
// master secret, or generates one and writes it there sealed (mode 0600).
func feePayerKey(path string, master []byte) (ed25519.PrivateKey, error) {
	ring, err := secret.New(master)
	if err != nil {
		return nil, err
	}
	aad := []byte("examples/server x402 fee payer v1")
	b, err := os.ReadFile(path)
	if err == nil {
		seed, err := ring.Open(b, aad)
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("read %s: not a fee payer sealed with this host's secret", path)
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, ring.Seal(seed, aad), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
