package main

import (
	"fmt"
	"io"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/web3/cctp"
	"github.com/creatormusic/platform/web3/cctp/evmrpc"
	"github.com/creatormusic/platform/web3/cctp/evmtest"
	"github.com/creatormusic/platform/web3/cctp/iris"
	"github.com/creatormusic/platform/web3/cctp/iristest"
)

// cctpCompleteAfter is how many lookups of a burn the loopback attestation
// service answers before it attests it on its own: the first indexes it
// (pending), the third completes it.
const cctpCompleteAfter = 3

// cctpSim is the cross-chain transfer set-up (-cctp-sim): the loopback EVM
// node (Base Sepolia's chain id, domain and testnet contracts), the
// loopback attestation service, and on the simulated cluster a USDC mint,
// the CCTP receive side and the demo wallet's USDC token account, the
// recipient a transfer names.
type cctpSim struct {
	evm  *evmtest.Server
	iris *iristest.Server
	// usdc is the destination mint, recipient the demo wallet's token
	// account of it.
	usdc, recipient chain.Address
}

// startCCTPSim starts the EVM node and the attestation service, sets up
// the receive side on c for the demo wallet, and returns the test
// environment's cross-chain configuration reaching both simulators
// through the adapters.
func startCCTPSim(c *chaintest.Cluster, wallet chain.Address) (s *cctpSim, env *cctp.Environment, err error) {
	s = &cctpSim{}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.evm, err = evmtest.New(evmtest.Config{}); err != nil {
		return s, nil, fmt.Errorf("EVM simulator: %w", err)
	}
	if s.iris, err = iristest.New(iristest.Config{CompleteAfter: cctpCompleteAfter}); err != nil {
		return s, nil, fmt.Errorf("attestation simulator: %w", err)
	}
	// USDC on Solana is a classic SPL Token mint of 6 decimals.
	_, s.usdc = chaintest.NewKeypair()
	c.SetAccount(s.usdc, chaintest.Account{Owner: chain.Address(solana.TokenProgramID), Lamports: chaintest.RentExemptMinimum(82),
		Data: token2022.EncodeMint(token2022.Mint{Decimals: 6, IsInitialized: true})})
	if err := c.InstallCCTP(chaintest.CCTPConfig{Mint: s.usdc, VerifyAttestationFunc: s.iris.Verify}); err != nil {
		return s, nil, err
	}
	if s.recipient, err = c.MintTo(wallet, s.usdc, 0); err != nil {
		return s, nil, fmt.Errorf("the demo wallet's USDC account: %w", err)
	}
	hcEVM, err := simClient(s.evm.URL())
	if err != nil {
		return s, nil, err
	}
	hcIris, err := simClient(s.iris.URL())
	if err != nil {
		return s, nil, err
	}
	client, err := evmrpc.New(evmrpc.Config{URL: s.evm.URL(), HTTPClient: hcEVM})
	if err != nil {
		return s, nil, fmt.Errorf("EVM simulator client: %w", err)
	}
	attestations, err := iris.New(iris.Config{BaseURL: s.iris.URL(), HTTPClient: hcIris})
	if err != nil {
		return s, nil, fmt.Errorf("attestation simulator client: %w", err)
	}
	cfg := s.evm.Config()
	return s, &cctp.Environment{Sources: []cctp.EVMChain{{Domain: cfg.Domain, ChainID: cfg.ChainID, Client: client,
		TokenMessenger: cfg.TokenMessenger, MessageTransmitter: cfg.MessageTransmitter, USDC: cfg.USDC}},
		Attestations: attestations, USDCMint: s.usdc, Attesters: s.iris.Attesters(), SignatureThreshold: s.iris.Threshold()}, nil
}

// close stops both simulators.
func (s *cctpSim) close() {
	if s == nil {
		return
	}
	if s.evm != nil {
		s.evm.Close()
	}
	if s.iris != nil {
		s.iris.Close()
	}
}

// cctpDeployment is the cross-chain set-up as the map shows it.
type cctpDeployment struct {
	// Network is the EVM node's CAIP-2 id, Domain its CCTP domain.
	Network string `json:"network"`
	Domain  uint32 `json:"domain"`
	// TokenMessenger and USDC are the node's contracts a burn names.
	TokenMessenger string `json:"tokenMessenger"`
	USDC           string `json:"usdc"`
	// USDCMint is the destination mint on the cluster; Recipient the demo
	// wallet's token account of it, a transfer's mintRecipient.
	USDCMint  string `json:"usdcMint"`
	Recipient string `json:"recipient"`
}

// services are the set-up's two map entries.
func (s *cctpSim) services() []simService {
	cfg := s.evm.Config()
	d := &cctpDeployment{Network: fmt.Sprintf("eip155:%d", cfg.ChainID), Domain: uint32(cfg.Domain),
		TokenMessenger: cfg.TokenMessenger.String(), USDC: cfg.USDC.String(), USDCMint: s.usdc.String(), Recipient: s.recipient.String()}
	return []simService{
		{Name: "evm", URL: s.evm.URL(), CCTP: d,
			About: "EVM JSON-RPC node (Base Sepolia's chain id and CCTP V2 contracts): the source chain of cross-chain transfers"},
		{Name: "attestations", URL: s.iris.URL(),
			About: fmt.Sprintf("CCTP attestation service (Iris V2 wire), attests a burn on its %drd lookup", cctpCompleteAfter)},
	}
}

// print writes the deployment for a person.
func (d *cctpDeployment) print(w io.Writer) {
	fmt.Fprintf(w, "              network %s (domain %d), TokenMessengerV2 %s, USDC %s\n", d.Network, d.Domain, d.TokenMessenger, d.USDC)
	fmt.Fprintf(w, "              destination USDC mint %s, demo wallet's USDC account %s\n", d.USDCMint, d.Recipient)
}
