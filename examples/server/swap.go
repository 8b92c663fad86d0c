package main

import (
	"fmt"
	"io"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/swap/jupiter"
	"github.com/creatormusic/platform/swap/jupiter/jupitertest"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/tokentest"
)

// The test dollar the host deploys beside the platform token: a
// Token-2022 mint with 6 decimals and no transfer fee, as a stablecoin
// would have, under a mint authority, with its name and symbol embedded.
const (
	dollarDecimals = 6
	dollarSymbol   = "TESTUSD"
	dollarName     = "Test Dollar"
)

// The pool between the platform token (MintA) and the test dollar
// (MintB): 10,000,000 TOKEN against 150,000 TESTUSD, so 1 TOKEN = 0.015
// TESTUSD (the sale's DEX reference price) and 1 TESTUSD ≈ 66.67 TOKEN;
// a swap of a few hundred TESTUSD moves the price by well under 1%. The
// venue fee is 30 bps of the input.
const (
	poolTokenReserve  uint64 = 10_000_000 * 1_000_000_000 // 9 decimals
	poolDollarReserve uint64 = 150_000 * 1_000_000        // 6 decimals
	poolFeeBps        uint16 = 30
	// poolPrice is the pool's starting price, as the map prints it.
	poolPrice = "1 TOKEN = 0.015 TESTUSD"
)

// demoWalletDollars is the demo wallet's test dollars on every start of
// the simulator: 1,000 TESTUSD.
const demoWalletDollars uint64 = 1_000 * 1_000_000

// swapSim is the swap set-up on the simulated cluster: the test dollar, a
// pool of it and the platform token with its lookup table, the loopback
// aggregator routing through that pool, and the wallet receiving the
// platform's service fee.
type swapSim struct {
	aggregator *jupitertest.Server
	// tokens are the registry's entries: the platform token, then the
	// test dollar; listed says what sets each apart, for the map.
	tokens      []swap.Token
	listed      []swapToken
	pool        chaintest.Pool
	lookupTable chain.Address
	// feeRecipient holds an associated token account of each mint.
	feeRecipient chain.Address
	// dollar is the test dollar's mint.
	dollar chain.Address
}

// close stops the aggregator.
func (s *swapSim) close() {
	if s != nil {
		s.aggregator.Close()
	}
}

// startSwapSim deploys, on c, the test dollar beside d's platform token, a
// constant-product pool between them and a lookup table holding the
// pool's accounts, creates the fee recipient's token accounts of both
// mints, gives wallet (the demo wallet) test dollars, and starts the
// loopback aggregator on the pool. It returns the test environment's swap
// configuration: the aggregator reached over HTTP through the Jupiter
// adapter with a guarded client that lets exactly its loopback address
// through, both tokens as the registry, and the fee recipient.
func startSwapSim(c *chaintest.Cluster, d tokentest.Deployment, wallet chain.Address) (s *swapSim, env platform.SwapEnvironment, err error) {
	_, dollar := chaintest.NewKeypair()
	_, dollarAuthority := chaintest.NewKeypair()
	if err := c.CreateMint(dollar, token2022.Mint{MintAuthority: &dollarAuthority, Decimals: dollarDecimals, IsInitialized: true,
		Extensions: []token2022.Extension{
			token2022.MetadataPointer{Authority: dollarAuthority, MetadataAddress: dollar},
			token2022.TokenMetadata{UpdateAuthority: dollarAuthority, Mint: dollar, Name: dollarName, Symbol: dollarSymbol},
		}}); err != nil {
		return nil, env, fmt.Errorf("deploy the test dollar: %w", err)
	}
	pool, err := c.CreatePool(chaintest.PoolConfig{MintA: d.Mint, MintB: dollar, ReserveA: poolTokenReserve,
		ReserveB: poolDollarReserve, FeeBps: poolFeeBps})
	if err != nil {
		return nil, env, fmt.Errorf("create the pool: %w", err)
	}
	_, tableAuthority := chaintest.NewKeypair()
	table, err := c.CreateLookupTable(tableAuthority, poolAccounts(pool))
	if err != nil {
		return nil, env, fmt.Errorf("create the pool's lookup table: %w", err)
	}
	_, fee := chaintest.NewKeypair()
	for _, mint := range []chain.Address{d.Mint, dollar} {
		if _, err := c.MintTo(fee, mint, 0); err != nil {
			return nil, env, fmt.Errorf("create the fee recipient's token account of %s: %w", mint, err)
		}
	}
	if _, err := c.MintTo(wallet, dollar, demoWalletDollars); err != nil {
		return nil, env, fmt.Errorf("fund the demo wallet with test dollars: %w", err)
	}
	program := token2022.ProgramID().String()
	s = &swapSim{pool: pool, lookupTable: table, feeRecipient: fee, dollar: dollar, tokens: []swap.Token{
		{Mint: d.Mint.String(), TokenProgram: program, Decimals: token.Decimals, Symbol: d.Config.Symbol, Name: d.Config.Name},
		{Mint: dollar.String(), TokenProgram: program, Decimals: dollarDecimals, Symbol: dollarSymbol, Name: dollarName},
	}}
	feeNote := fmt.Sprintf("%d bps transfer fee up to %d %s", token.LaunchFeeBps, tokentest.MaximumFeeAtomic/1_000_000_000, d.Config.Symbol)
	for i, note := range []string{feeNote, "no transfer fee"} {
		t := s.tokens[i]
		s.listed = append(s.listed, swapToken{Symbol: t.Symbol, Mint: t.Mint, Decimals: t.Decimals, About: note})
	}
	if s.aggregator, err = jupitertest.New(c, jupitertest.Config{}); err != nil {
		return nil, env, fmt.Errorf("aggregator simulator: %w", err)
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := s.aggregator.AddPool(pool.Address, table); err != nil {
		return nil, env, fmt.Errorf("aggregator simulator: %w", err)
	}
	hc, err := simClient(s.aggregator.URL())
	if err != nil {
		return nil, env, err
	}
	routes, err := jupiter.New(jupiter.Config{BaseURL: s.aggregator.URL(), HTTPClient: hc})
	if err != nil {
		return nil, env, fmt.Errorf("aggregator simulator client: %w", err)
	}
	reg := swap.Registry{Tokens: append([]swap.Token(nil), s.tokens...)}
	return s, platform.SwapEnvironment{Routes: routes, Registry: &reg, FeeRecipient: fee.String(),
		SwapPrograms: []chain.Address{chaintest.PoolProgramID()}}, nil
}

// poolAccounts are the accounts a swap through p names besides the
// wallet's own: the pool, its vaults, both mints and their token
// programs, each once.
func poolAccounts(p chaintest.Pool) []chain.Address {
	var out []chain.Address
	for _, a := range []chain.Address{p.Address, p.VaultA, p.VaultB, p.MintA, p.MintB, p.TokenProgramA, p.TokenProgramB} {
		if !contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// contains reports whether addrs holds a.
func contains(addrs []chain.Address, a chain.Address) bool {
	for _, x := range addrs {
		if x == a {
			return true
		}
	}
	return false
}

// swapDeployment is the swap set-up on the simulated cluster, as the map
// shows it.
type swapDeployment struct {
	// Tokens are the registry's entries: the platform token, then the
	// test dollar.
	Tokens []swapToken `json:"tokens"`
	// Pool is the constant-product pool of the two, Price its starting
	// price and FeeBps its venue fee; LookupTable holds its accounts.
	Pool        string `json:"pool"`
	Price       string `json:"price"`
	FeeBps      uint16 `json:"feeBps"`
	LookupTable string `json:"lookupTable"`
	// FeeRecipient receives the platform's service fee in its token
	// account of the input mint.
	FeeRecipient string `json:"feeRecipient"`
}

// swapToken is one registry entry in the map.
type swapToken struct {
	Symbol   string `json:"symbol"`
	Mint     string `json:"mint"`
	Decimals uint8  `json:"decimals"`
	// About says what sets it apart (the transfer fee).
	About string `json:"about"`
}

// deployment is what the map shows of s.
func (s *swapSim) deployment() *swapDeployment {
	return &swapDeployment{Tokens: append([]swapToken(nil), s.listed...), Pool: s.pool.Address.String(), Price: poolPrice,
		FeeBps: s.pool.FeeBps, LookupTable: s.lookupTable.String(), FeeRecipient: s.feeRecipient.String()}
}

// print writes the deployment for a person, indented under its simulator.
func (d *swapDeployment) print(w io.Writer) {
	for _, t := range d.Tokens {
		fmt.Fprintf(w, "              mint %s %s (%d decimals, %s)\n", t.Symbol, t.Mint, t.Decimals, t.About)
	}
	fmt.Fprintf(w, "              pool %s (%s, %d bps venue fee), lookup table %s\n", d.Pool, d.Price, d.FeeBps, d.LookupTable)
	fmt.Fprintf(w, "              service fee to %s (its token accounts of both mints)\n", d.FeeRecipient)
}
