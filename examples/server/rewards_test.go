package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/internal/secret"
	"github.com/creatormusic/platform/rewards"
)

// treasurySealAAD is what package rewards binds a sealed treasury key to
// (rewards.SealKey); the tests open the sealed file with it to learn the
// key they then look for in the clear.
const treasurySealAAD = "platform/reward-treasury-key/v1"

// treasuryKey opens the reward treasury's key sealed in data under master.
func treasuryKey(t *testing.T, data string, master []byte) ed25519.PrivateKey {
	t.Helper()
	ring, err := secret.New(master)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := os.ReadFile(filepath.Join(data, rewardTreasuryFile))
	if err != nil {
		t.Fatal(err)
	}
	seed, err := ring.Open(sealed, []byte(treasurySealAAD))
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("the sealed treasury key does not open: %v", err)
	}
	return ed25519.NewKeyFromSeed(seed)
}

// keyForms are the ways a key could be written in the clear: its seed and
// whole key as bytes, hex, base64, base58, and the keypair file's JSON
// array.
func keyForms(key ed25519.PrivateKey) map[string][]byte {
	nums := make([]int, len(key))
	for i, b := range key {
		nums[i] = int(b)
	}
	arr, _ := json.Marshal(nums)
	seedNums, _ := json.Marshal(nums[:ed25519.SeedSize])
	return map[string][]byte{
		"seed bytes": key.Seed(), "key bytes": key, "seed hex": []byte(hex.EncodeToString(key.Seed())),
		"key hex": []byte(hex.EncodeToString(key)), "seed base64": []byte(base64.StdEncoding.EncodeToString(key.Seed())),
		"key base64":  []byte(base64.StdEncoding.EncodeToString(key)),
		"seed base58": []byte(solana.PublicKeyFromBytes(key.Seed()).String()),
		"key base58":  []byte(solana.PrivateKey(key).String()),
		"key array":   arr[1 : len(arr)-1], "seed array": seedNums[1 : len(seedNums)-1],
	}
}

// leaks names the clear forms of key found in b.
func leaks(b []byte, key ed25519.PrivateKey) []string {
	var out []string
	for name, form := range keyForms(key) {
		if bytes.Contains(b, form) {
			out = append(out, name)
		}
	}
	return out
}

// TestRewardTreasuryIsSealedAndFunded: with the chain simulator the test
// environment's reward treasury signs its payouts (the live environment
// has none); its key is sealed at rest in the data folder (mode 0600, the
// key in no clear form there, nor in the map), opens the same on the next
// start and under no other master secret; the treasury is funded on the
// cluster with lamports for fees and the mint's tokens at finalized, so a
// pool can be reconciled FUNDED; the map shows its address and key file.
func TestRewardTreasuryIsSealedAndFunded(t *testing.T) {
	data := t.TempDir()
	master := bytes.Repeat([]byte{7}, 32)
	s, cfg := startWired(t, simOptions{chain: true, slot: time.Hour, secret: master}, data)
	signer := cfg.Chain.Test.RewardSigner
	if signer == nil {
		t.Fatal("the test environment has no reward signer")
	}
	if cfg.Chain.Live.RewardSigner != nil {
		t.Fatal("a reward signer reached the live environment")
	}
	path := filepath.Join(data, rewardTreasuryFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sealed treasury key: %v %v, want mode 0600", fi, err)
	}
	key := treasuryKey(t, data, master)
	var addr chain.Address
	copy(addr[:], key.Public().(ed25519.PublicKey))
	if signer.Address() != addr || s.chain.reward == nil || s.chain.reward.Treasury != addr.String() || s.chain.reward.KeyFile != path {
		t.Fatalf("signer %s, deployment %+v; the sealed key's address is %s", signer.Address(), s.chain.reward, addr)
	}
	// The signer signs with the sealed key.
	msg := []byte("payout")
	sig, err := signer.Sign(context.Background(), msg)
	if err != nil || !ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("the signer does not sign with the treasury's key: %v", err)
	}
	// Nowhere in the clear: the data folder's files, the map, the signer's
	// printed forms.
	var out bytes.Buffer
	m := s.services("http://127.0.0.1:8080")
	m.print(&out)
	if err := m.save(filepath.Join(data, servicesFile)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(data, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if l := leaks(b, key); len(l) > 0 {
			t.Fatalf("%s holds the treasury key in the clear: %v", e.Name(), l)
		}
	}
	for name, b := range map[string][]byte{"the printed map": out.Bytes(), "the signer's %v": []byte(fmt.Sprintf("%v %#v %+v", signer, signer, signer))} {
		if l := leaks(b, key); len(l) > 0 {
			t.Fatalf("%s holds the treasury key: %v", name, l)
		}
	}
	if !strings.Contains(out.String(), "reward treasury "+addr.String()+" (1 SOL and 10,000 TOKEN), key sealed in "+path) {
		t.Fatalf("the map lacks the reward treasury:\n%s", out.String())
	}

	// Funded at finalized: lamports for fees and the mint's tokens.
	c := s.chain.cluster
	if a, ok := c.Account(addr); !ok || a.Lamports != rewardTreasuryLamports {
		t.Fatalf("the treasury holds %+v, want %d lamports", a, rewardTreasuryLamports)
	}
	mint := mustAddress(t, s.chain.mint)
	bal, err := c.GetTokenAccountBalance(context.Background(), token2022.AssociatedTokenAddress(addr, mint), chain.Finalized)
	if err != nil || bal.Amount != rewardTreasuryTokens {
		t.Fatalf("the treasury's token account at finalized: %+v %v, want %d", bal, err, rewardTreasuryTokens)
	}

	// The next start opens the same key; another master secret opens none.
	ring, _ := secret.New(master)
	again, err := rewardSigner(path, ring)
	if err != nil || again.Address() != addr {
		t.Fatalf("the next start reads another treasury: %v", err)
	}
	other, _ := secret.New(bytes.Repeat([]byte{8}, 32))
	if _, err := rewardSigner(path, other); err == nil {
		t.Fatal("the sealed key opened under another master secret")
	} else if l := leaks([]byte(err.Error()), key); len(l) > 0 {
		t.Fatalf("the error holds the key: %v", l)
	}
}

// TestRewardTreasuryKeyIsKeptAcrossStarts: a data folder whose sealed key
// was written before (here by the test, as rewards.SealKey seals it) keeps
// that treasury, funded again on the new cluster.
func TestRewardTreasuryKeyIsKeptAcrossStarts(t *testing.T) {
	data := t.TempDir()
	master := bytes.Repeat([]byte{9}, 32)
	ring, _ := secret.New(master)
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, rewardTreasuryFile), rewards.SealKey(ring, key), 0o600); err != nil {
		t.Fatal(err)
	}
	s, cfg := startWired(t, simOptions{chain: true, slot: time.Hour, secret: master}, data)
	want := solana.PublicKeyFromBytes(key.Public().(ed25519.PublicKey)).String()
	if got := cfg.Chain.Test.RewardSigner.Address().String(); got != want {
		t.Fatalf("treasury %s, want the sealed key's %s", got, want)
	}
	if a, ok := s.chain.cluster.Account(mustAddress(t, want)); !ok || a.Lamports != rewardTreasuryLamports {
		t.Fatalf("the kept treasury is not funded: %+v", a)
	}
}
