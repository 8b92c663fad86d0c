package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/rewards"
)

// The reward treasury's funding on every start of the simulator: lamports
// for the payouts' fees and tokens of the deployed mint (9 decimals) that
// back the test environment's challenge pools.
const (
	rewardTreasuryLamports uint64 = 1_000_000_000          // 1 SOL
	rewardTreasuryTokens   uint64 = 10_000 * 1_000_000_000 // 10,000 TOKEN
	rewardTreasuryFile            = "reward-treasury.sealed"
)

// rewardFunding says what the reward treasury receives on every start.
func rewardFunding() string {
	return fmt.Sprintf("%s SOL and %s TOKEN", grouped(rewardTreasuryLamports/1_000_000_000), grouped(rewardTreasuryTokens/1_000_000_000))
}

// rewardDeployment is the test environment's reward treasury, as the map
// shows it: its address and where its key is sealed, never the key.
type rewardDeployment struct {
	// Treasury is the reward treasury's wallet, whose Token-2022 account
	// of the mint backs the challenge pools and pays the claims.
	Treasury string `json:"treasury"`
	// KeyFile is the treasury's key, sealed with the host's master secret.
	KeyFile string `json:"keyFile"`
	// Funding is what the treasury receives on every start.
	Funding string `json:"funding"`
}

// print writes the treasury for a person, indented under its simulator.
func (d *rewardDeployment) print(w io.Writer) {
	fmt.Fprintf(w, "              reward treasury %s (%s), key sealed in %s\n", d.Treasury, d.Funding, d.KeyFile)
}

// startRewardTreasury opens the test environment's reward treasury from
// its key sealed at keyPath with the host's master secret (generated and
// sealed there, mode 0600, on first start), and funds it on the cluster:
// lamports for fees and rewardTreasuryTokens of mint in its Token-2022
// account, so that funding reconciliation finds the pools covered. The
// signer holds the key in memory only and shows its address alone.
func startRewardTreasury(c *chaintest.Cluster, mint chain.Address, keyPath string, master []byte) (*rewards.LocalSigner, *rewardDeployment, error) {
	ring, err := secret.New(master)
	if err != nil {
		return nil, nil, err
	}
	signer, err := rewardSigner(keyPath, ring)
	if err != nil {
		return nil, nil, err
	}
	c.Airdrop(signer.Address(), rewardTreasuryLamports)
	if _, err := c.MintTo(signer.Address(), mint, rewardTreasuryTokens); err != nil {
		return nil, nil, fmt.Errorf("fund the reward treasury: %w", err)
	}
	return signer, &rewardDeployment{Treasury: signer.Address().String(), KeyFile: keyPath, Funding: rewardFunding()}, nil
}

// rewardSigner opens the reward treasury's key sealed at path
// (rewards.SealKey), or generates a key, writes it there sealed (mode
// 0600, never in the clear) and opens that.
func rewardSigner(path string, ring *secret.Keyring) (*rewards.LocalSigner, error) {
	sealed, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if sealed, err = sealNewKey(path, ring); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	signer, err := rewards.NewLocalSigner(ring, sealed)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return signer, nil
}

// sealNewKey generates an ed25519 key and writes it to path sealed,
// creating the file (mode 0600; an existing one is never overwritten). It
// returns the sealed bytes.
func sealNewKey(path string, ring *secret.Keyring) ([]byte, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the reward treasury's key: %w", err)
	}
	sealed := rewards.SealKey(ring, key)
	clear(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(sealed); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return sealed, nil
}
