// Package tokentest deploys, on the loopback cluster (chain/chaintest), a
// mint that meets the token policy, and returns the registry configuration
// that describes it: for tests, benchmarks and the example host. Tests
// derive deviations from Mint and write them with Cluster.SetMint.
package tokentest

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
)

// MaximumFeeAtomic is the deployed mint's maximum fee of one transfer: 5
// tokens.
const MaximumFeeAtomic uint64 = 5_000_000_000

// Supply is the deployed supply: 10,000,000,000 tokens.
const Supply uint64 = 10_000_000_000_000_000_000

// Deployment is a deployed mint and its registry configuration.
type Deployment struct {
	// Config is the registry configuration that describes the mint
	// (cluster localnet, fixed supply, the authorities below).
	Config token.Config
	// Mint is the mint's address; Treasury holds the whole supply.
	Mint     chain.Address
	Treasury chain.Address
	// FeeAuthority, WithdrawAuthority and MetadataAuthority are the
	// registry's authorities.
	FeeAuthority, WithdrawAuthority, MetadataAuthority chain.Address
}

// Deploy creates the mint on c at the current epoch (9 decimals, 200 bps
// up to MaximumFeeAtomic, mint authority revoked, no freeze authority,
// metadata embedded under a metadata authority), mints Supply to a
// treasury and returns the deployment.
func Deploy(ctx context.Context, c *chaintest.Cluster) (Deployment, error) {
	var d Deployment
	_, d.Mint = chaintest.NewKeypair()
	_, d.Treasury = chaintest.NewKeypair()
	_, d.FeeAuthority = chaintest.NewKeypair()
	_, d.WithdrawAuthority = chaintest.NewKeypair()
	_, d.MetadataAuthority = chaintest.NewKeypair()
	info, err := c.GetEpochInfo(ctx, chain.Processed)
	if err != nil {
		return Deployment{}, fmt.Errorf("tokentest: epoch: %w", err)
	}
	if err := c.CreateMint(d.Mint, d.PolicyMint(info.Epoch, 0)); err != nil {
		return Deployment{}, fmt.Errorf("tokentest: create mint: %w", err)
	}
	if _, err := c.MintTo(d.Treasury, d.Mint, Supply); err != nil {
		return Deployment{}, fmt.Errorf("tokentest: mint supply: %w", err)
	}
	d.Config = token.Config{Name: "Platform Token", Symbol: "TOKEN", Cluster: chain.Localnet, Mint: d.Mint.String(),
		MaximumFeeAtomic: fmt.Sprint(MaximumFeeAtomic), FixedSupply: true, FeeConfigAuthority: d.FeeAuthority.String(),
		WithdrawWithheldAuthority: d.WithdrawAuthority.String(), MetadataAuthority: d.MetadataAuthority.String()}
	return d, nil
}

// PolicyMint is the policy-conforming mint of the deployment with the fee
// in force from epoch and the given supply.
func (d Deployment) PolicyMint(epoch, supply uint64) token2022.Mint {
	fee := token2022.TransferFee{Epoch: epoch, MaximumFee: MaximumFeeAtomic, BasisPoints: token.LaunchFeeBps}
	return token2022.Mint{Supply: supply, Decimals: token.Decimals, IsInitialized: true, Extensions: []token2022.Extension{
		token2022.TransferFeeConfig{ConfigAuthority: d.FeeAuthority, WithdrawWithheldAuthority: d.WithdrawAuthority, Older: fee, Newer: fee},
		token2022.MetadataPointer{Authority: d.MetadataAuthority, MetadataAddress: d.Mint},
		token2022.TokenMetadata{UpdateAuthority: d.MetadataAuthority, Mint: d.Mint, Name: "Platform Token", Symbol: "TOKEN",
			URI: "https://platform.example/token.json"},
	}}
}

// SaleDeployment is a sale's on-chain side on the loopback cluster.
type SaleDeployment struct {
	// Sale is the sale's configuration: the deployment's mint, a sale
	// contract owned by SaleProgram, an inventory account funded with
	// exactly the allocation maximum, and one approved pool.
	Sale sale.Sale
	// SaleProgram owns the sale contract; PoolProgram the pool.
	SaleProgram, PoolProgram chain.Address
}

// SaleInventoryAtomic is the deployed sale's allocation maximum and
// inventory: 50,000,000 tokens.
const SaleInventoryAtomic uint64 = 50_000_000_000_000_000

// DeploySale creates, on c, the accounts of an OPEN sale of d's token in
// window: the sale contract, the funded inventory and a pool, and returns
// its configuration (provider URL canonical, terms published).
func DeploySale(c *chaintest.Cluster, d Deployment, id string, window sale.Window) (SaleDeployment, error) {
	var out SaleDeployment
	_, out.SaleProgram = chaintest.NewKeypair()
	_, out.PoolProgram = chaintest.NewKeypair()
	_, contract := chaintest.NewKeypair()
	_, pool := chaintest.NewKeypair()
	_, vault := chaintest.NewKeypair()
	bpfLoader, err := token2022.ParsePublicKey("BPFLoaderUpgradeab1e11111111111111111111111")
	if err != nil {
		return SaleDeployment{}, fmt.Errorf("tokentest: loader id: %w", err)
	}
	c.SetAccount(out.SaleProgram, chaintest.Account{Owner: bpfLoader, Lamports: chaintest.RentExemptMinimum(36), Executable: true, Data: make([]byte, 36)})
	c.SetAccount(out.PoolProgram, chaintest.Account{Owner: bpfLoader, Lamports: chaintest.RentExemptMinimum(36), Executable: true, Data: make([]byte, 36)})
	c.SetAccount(contract, chaintest.Account{Owner: out.SaleProgram, Lamports: chaintest.RentExemptMinimum(128), Data: make([]byte, 128)})
	c.SetAccount(pool, chaintest.Account{Owner: out.PoolProgram, Lamports: chaintest.RentExemptMinimum(256), Data: make([]byte, 256)})
	inventory, err := c.MintTo(vault, d.Mint, SaleInventoryAtomic)
	if err != nil {
		return SaleDeployment{}, fmt.Errorf("tokentest: fund the sale inventory: %w", err)
	}
	w := window
	out.Sale = sale.Sale{ID: id, Stage: "PRE_SALE", Status: sale.StatusOpen, TargetWindow: window.Opens.Format("2006-01"), Window: &w,
		Provider: "Launch Provider", ProviderCandidates: []string{"Launch Provider"}, ProviderURL: "https://launch.platform.io/sale",
		AllocationMinAtomic: "1000000000000000", AllocationMaxAtomic: fmt.Sprint(SaleInventoryAtomic),
		PresalePriceUSD: "0.010", InitialDexReferenceUSD: "0.015", ProductionMint: d.Mint.String(),
		SaleContract: contract.String(), SaleProgram: out.SaleProgram.String(), InventoryAccount: inventory.String(),
		Terms: sale.Terms{Published: true, Version: "2026-01"},
		Venues: []sale.Venue{{Name: "Pool One", Kind: sale.VenuePool, Status: "PLANNED", Approved: true, Address: pool.String(), Program: out.PoolProgram.String()},
			{Name: "Router", Kind: sale.VenueAggregator, Approved: true}},
		UpdatedAt: window.Opens.Add(-24 * time.Hour)}
	return out, nil
}
