package swap

import (
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// key returns a distinct test address.
func key(n byte) chain.Address { return chain.Address{0: 0xA0, 1: n, 31: n} }

// Test keys.
var (
	wallet       = key(1)
	walletIn     = key(2) // the wallet's account of the input mint
	walletOut    = key(3) // the wallet's account of the output mint, created in the transaction
	feeRecipient = key(4)
	feeAccount   = key(5) // the recipient's account of the input mint
	inMint       = key(6)
	outMint      = key(7)
	stranger     = key(8)
	strangerAcct = key(9)
	poolAcct     = key(10)
)

// t0 is the fixtures' clock.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// mainnet is the fixtures' network.
var mainnet = chain.Network{GenesisHash: chain.MainnetGenesisHash}

// testQuote is a sealed quote: 1 input token (9 decimals) at 200 bps,
// 980,000,000 swapped for an expected 5,000,000 output units (6
// decimals) at 50 bps slippage.
func testQuote() Quote {
	return Quote{
		ID: "swq_1", OperationID: "swo_1",
		Owner: Owner{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Live},
		Terms: Terms{Provider: "jupiter", Network: mainnet.CAIP2(), Wallet: wallet, RoutingMode: ExactIn,
			InputMint: inMint, InputTokenProgram: address(tokenProgram), InputDecimals: 9,
			OutputMint: outMint, OutputTokenProgram: token2022.ProgramID(), OutputDecimals: 6,
			GrossInputAtomic: 1_000_000_000, ServiceFeeAtomic: 20_000_000, ExecutableInputAtomic: 980_000_000,
			ExpectedOutputAtomic: 5_000_000, MinimumOutputAtomic: 4_975_000, SlippageBps: 50, PriceImpactBps: 12,
			Route: []RouteStep{{Venue: "Orca Whirlpool", Pool: poolAcct, InputMint: inMint, OutputMint: outMint,
				InAtomic: 980_000_000, OutAtomic: 5_000_000, ShareBps: 10000}},
			FeeBreakdown: FeeBreakdown{ServiceFeeBps: 200, ServiceFeeMint: inMint,
				VenueFees:          []VenueFee{{Venue: "Orca Whirlpool", Mint: inMint, Atomic: 294_000}},
				NetworkFeeLamports: 5_000, PriorityFeeLamports: 14_000, RentLamports: 2_039_280}},
		FeePolicyVersion: "fee/3", RegistryVersion: "reg/7",
		ProviderQuote: []byte(`{"inAmount":"980000000","outAmount":"5000000"}`),
		CreatedAt:     t0, ExpiresAt: t0.Add(30 * time.Second),
	}.Seal()
}

// testMessage is the fixtures' prepared message.
var testMessage = []byte("prepared message bytes")

// testBinding binds testQuote.
func testBinding() Binding {
	q := testQuote()
	return Binding{
		ID: "swi_1", Owner: q.Owner, SessionID: "ses_1", Wallet: wallet,
		FeePolicyVersion: q.FeePolicyVersion, RegistryVersion: q.RegistryVersion,
		FeeRecipient: feeRecipient, FeeAccount: feeAccount, FeeRecipientVerified: true,
		Message: testMessage, RecentBlockhash: "blockhash1", LastValidBlockHeight: 1000,
	}
}

// testIntent is testQuote bound at t0 + 5 s.
func testIntent(t *testing.T) Intent {
	t.Helper()
	it, err := NewIntent(testQuote(), testBinding(), t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return it
}
