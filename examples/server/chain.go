package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/token/tokentest"
)

// The demo wallet's funding on every start of the simulator: lamports for
// fees and tokens of the deployed mint (9 decimals) to pay with.
const (
	demoWalletLamports uint64 = 2_000_000_000         // 2 SOL
	demoWalletTokens   uint64 = 1_000 * 1_000_000_000 // 1,000 tokens
)

// demoFunding says what the demo wallet receives on every start.
func demoFunding() string {
	return fmt.Sprintf("%s SOL, %s TOKEN and %s %s", grouped(demoWalletLamports/1_000_000_000), grouped(demoWalletTokens/1_000_000_000),
		grouped(demoWalletDollars/1_000_000), dollarSymbol)
}

// guestFunding says what the guest wallet receives on every start.
func guestFunding() string {
	return fmt.Sprintf("%s SOL and %s TOKEN", grouped(guestWalletLamports/1_000_000_000), grouped(guestWalletTokens/1_000_000_000))
}

// grouped writes n with its thousands separated by commas.
func grouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// demoWalletFile is the demo wallet's keypair file in the data folder,
// guestWalletFile the guest account's.
const (
	demoWalletFile  = "demo-wallet.json"
	guestWalletFile = "demo-wallet-guest.json"
)

// The guest wallet's funding on every start: lamports for fees and tokens
// of the deployed mint to buy with.
const (
	guestWalletLamports uint64 = 2_000_000_000       // 2 SOL
	guestWalletTokens   uint64 = 500 * 1_000_000_000 // 500 tokens
)

// chainSim is the loopback Solana cluster the host started (-chain-sim).
type chainSim struct {
	cluster *chaintest.Cluster
	stop    func()
	mint    string
	// treasury is the wallet chain payments of the test environment pay.
	treasury string
	// wallet is the demo wallet's address, walletPath its keypair file.
	wallet, walletPath string
	// guest is the guest account's wallet address, guestPath its keypair
	// file.
	guest, guestPath string
	// swap is the swap set-up on the cluster and its aggregator.
	swap *swapSim
	// x402 is the payment-required protocol's set-up.
	x402 *x402Deployment
	// reward is the test environment's reward treasury.
	reward *rewardDeployment
}

// close stops the cluster's clock, the aggregator that reads the cluster,
// and the cluster.
func (c *chainSim) close() {
	if c == nil {
		return
	}
	c.stop()
	c.swap.close()
	c.cluster.Close()
}

// startChainSim starts the loopback cluster, deploys a mint that meets the
// token policy and an open token sale with its accounts (contract, funded
// inventory, a pool), sets up swaps (startSwapSim: a test dollar, a pool
// of the two tokens and the loopback aggregator), funds the demo wallet
// (its keypair in data, created on first use) and the reward treasury
// (startRewardTreasury: its key sealed in data), advances a slot every slot
// interval, and returns the test environment's chain configuration: the
// cluster reached over HTTP through the solana-go adapter, as a real
// cluster would be, with the deployment's treasury (which holds the
// supply) as the wallet chain payments pay, the swap configuration and
// the reward treasury's signer.
func startChainSim(ctx context.Context, slot time.Duration, data string, master []byte) (*chainSim, platform.ChainEnvironment, error) {
	if slot <= 0 {
		return nil, platform.ChainEnvironment{}, fmt.Errorf("-chain-sim-slot must be positive")
	}
	walletPath := filepath.Join(data, demoWalletFile)
	walletKey, err := demoWallet(walletPath)
	if err != nil {
		return nil, platform.ChainEnvironment{}, err
	}
	var walletAddr chain.Address
	copy(walletAddr[:], walletKey.Public().(ed25519.PublicKey))
	guestPath := filepath.Join(data, guestWalletFile)
	guestKey, err := demoWallet(guestPath)
	if err != nil {
		return nil, platform.ChainEnvironment{}, err
	}
	var guestAddr chain.Address
	copy(guestAddr[:], guestKey.Public().(ed25519.PublicKey))
	// Slot 0 is now, so block times and the cluster's lag read true.
	now := time.Now().UTC().Truncate(time.Second)
	c, err := chaintest.New(chaintest.Config{Start: now})
	if err != nil {
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: %w", err)
	}
	d, err := tokentest.Deploy(ctx, c)
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: deploy the mint: %w", err)
	}
	sd, err := tokentest.DeploySale(c, d, "presale-demo", sale.Window{Opens: now.Add(-time.Hour), Closes: now.Add(30 * 24 * time.Hour)})
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: deploy the sale: %w", err)
	}
	// The cluster lives in memory: the demo wallet is funded on every start.
	c.Airdrop(walletAddr, demoWalletLamports)
	if _, err := c.MintTo(walletAddr, d.Mint, demoWalletTokens); err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: fund the demo wallet: %w", err)
	}
	c.Airdrop(guestAddr, guestWalletLamports)
	if _, err := c.MintTo(guestAddr, d.Mint, guestWalletTokens); err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: fund the guest wallet: %w", err)
	}
	ss, swapEnv, err := startSwapSim(c, d, walletAddr)
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: swaps: %w", err)
	}
	x402Env, x402Dep, err := startX402Sim(c, d.Treasury, ss.dollar, filepath.Join(data, x402FeePayerFile), master)
	if err != nil {
		ss.close()
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: x402: %w", err)
	}
	payer, rewardDep, err := startRewardTreasury(c, d.Mint, filepath.Join(data, rewardTreasuryFile), master)
	if err != nil {
		ss.close()
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator: reward treasury: %w", err)
	}
	c.AdvanceSlots(40) // the deployment and the funding are finalized before the first run
	hc, err := simClient(c.URL())
	if err != nil {
		ss.close()
		c.Close()
		return nil, platform.ChainEnvironment{}, err
	}
	client, err := solanarpc.New(solanarpc.Config{URL: c.URL(), Timeout: 5 * time.Second, HTTPClient: hc})
	if err != nil {
		ss.close()
		c.Close()
		return nil, platform.ChainEnvironment{}, fmt.Errorf("chain simulator client: %w", err)
	}
	// Each start deploys a new mint: the packs are configured, so the
	// credits.packs policy gets a new version priced in it.
	packs := intent.DefaultCreditPacks(map[chain.Address]uint8{d.Mint: 9})
	env := platform.ChainEnvironment{Client: client, Token: d.Config, Treasury: d.Treasury.String(), CreditPacks: &packs, Sale: sale.EnvConfig{
		Sales: []sale.Sale{sd.Sale}, Current: sd.Sale.ID,
		Jurisdictions: sale.JurisdictionPolicy{Allowed: []string{"DE", "FR", "GB", "NL", "ES", "IT"}, Blocked: []string{"KP", "IR"}},
		Disclosure:    sale.Disclosure{Version: "demo-1"}}, Swap: swapEnv, X402: x402Env, RewardSigner: payer}
	return &chainSim{cluster: c, stop: c.Run(slot), mint: d.Mint.String(), treasury: d.Treasury.String(),
		wallet: walletAddr.String(), walletPath: walletPath, guest: guestAddr.String(), guestPath: guestPath, swap: ss, x402: x402Dep,
		reward: rewardDep}, env, nil
}

// demoWallet reads the demo wallet's keypair from path, or generates one
// and writes it there (mode 0600) in the Solana CLI's keypair format: a
// JSON array of the 64 bytes of the ed25519 secret key (seed, then public
// key), as solana-keygen writes it.
func demoWallet(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		var raw []byte
		var nums []int
		if err := json.Unmarshal(b, &nums); err != nil {
			return nil, fmt.Errorf("read %s: not a keypair file (a JSON array of 64 bytes): %w", path, err)
		}
		for _, n := range nums {
			if n < 0 || n > 255 {
				return nil, fmt.Errorf("read %s: %d is not a byte", path, n)
			}
			raw = append(raw, byte(n))
		}
		if len(raw) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("read %s: %d bytes, want %d", path, len(raw), ed25519.PrivateKeySize)
		}
		key := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
		if !key.Equal(ed25519.PrivateKey(raw)) {
			return nil, fmt.Errorf("read %s: the public key does not match the secret key", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the demo wallet: %w", err)
	}
	nums := make([]int, len(key))
	for i, x := range key {
		nums[i] = int(x)
	}
	out, err := json.Marshal(nums)
	if err != nil {
		return nil, fmt.Errorf("encode the demo wallet: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return key, nil
}
