package x402test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// Decimals are the payment asset's decimals: a test dollar's, as USDC's.
const Decimals = 6

// FeePayerLamports is what Deploy funds the fee payer with: 1 SOL, some
// two hundred thousand payments' fees.
const FeePayerLamports = 1_000_000_000

// Deployment is a payment asset on a loopback cluster: a classic SPL
// Token mint of Decimals decimals (as USDC is), payTo's associated token
// account of it, and a funded fee payer.
type Deployment struct {
	// Mint is the asset; TokenProgram its owner (the SPL Token program).
	Mint         chain.Address
	TokenProgram chain.Address
	// PayTo receives the payments; PayToAccount is its token account.
	PayTo        chain.Address
	PayToAccount chain.Address
	// FeePayer is the fee payer's key; FeePayerAddress its address.
	FeePayer        ed25519.PrivateKey
	FeePayerAddress chain.Address
}

// Deploy creates the asset on c: a mint at an address derived from name
// (so one cluster can hold several), payTo's empty token account of it,
// and a fee payer derived from name, funded with FeePayerLamports. The
// keys are derived, not random, so a test that deploys twice under one
// name fails loudly rather than racing.
func Deploy(c *chaintest.Cluster, name string, payTo chain.Address) (Deployment, error) {
	seed := sha256.Sum256([]byte("x402test mint " + name))
	mint := chain.Address(seed)
	prog := message.SPLTokenProgramID()
	data := token2022.EncodeMint(token2022.Mint{Decimals: Decimals, IsInitialized: true})
	if _, ok := c.Account(mint); ok {
		return Deployment{}, fmt.Errorf("x402test: a mint named %q exists", name)
	}
	c.SetAccount(mint, chaintest.Account{Owner: prog, Lamports: chaintest.RentExemptMinimum(len(data)), Data: data})
	acct, err := c.MintTo(payTo, mint, 0)
	if err != nil {
		return Deployment{}, fmt.Errorf("x402test: payTo's account: %w", err)
	}
	fpSeed := sha256.Sum256([]byte("x402test fee payer " + name))
	fp := ed25519.NewKeyFromSeed(fpSeed[:])
	var fpAddr chain.Address
	copy(fpAddr[:], fp.Public().(ed25519.PublicKey))
	c.Airdrop(fpAddr, FeePayerLamports)
	return Deployment{Mint: mint, TokenProgram: prog, PayTo: payTo, PayToAccount: acct, FeePayer: fp, FeePayerAddress: fpAddr}, nil
}

// Fund gives wallet amount atomic units of d's asset (creating its token
// account) and lamports for its own account's existence.
func (d Deployment) Fund(c *chaintest.Cluster, wallet chain.Address, amount uint64) (chain.Address, error) {
	if _, ok := c.Account(wallet); !ok {
		c.Airdrop(wallet, 10_000_000)
	}
	return c.MintTo(wallet, d.Mint, amount)
}
