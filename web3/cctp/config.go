package cctp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/chain"
)

// EVMChain is one EVM source chain of an environment.
type EVMChain struct {
	// Domain is the chain's CCTP domain (web3.md §2.1).
	Domain Domain
	// ChainID is its EVM chain id; the readiness run reads it from the
	// node (eth_chainId) and refuses another.
	ChainID uint64
	// Client reads the chain. Required.
	Client EVMClient
	// TokenMessenger and MessageTransmitter are the chain's
	// TokenMessengerV2 and MessageTransmitterV2 (web3.md §2.2).
	TokenMessenger, MessageTransmitter EVMAddress
	// USDC is the chain's USDC: the only burn token a transfer takes.
	USDC EVMAddress
}

// Network is the chain's CAIP-2 id (eip155 and the chain id).
func (c EVMChain) Network() string { return "eip155:" + strconv.FormatUint(c.ChainID, 10) }

// DefaultMaxFeeBps bounds a burn's maxFee when Environment.MaxFeeBps is
// zero: 100 bps (1%) of the amount, far above Circle's fast-transfer fees
// of a few basis points, far below giving the transfer away.
const DefaultMaxFeeBps = 100

// MaxAmount is the most one burn moves: 10,000,000 USDC in atomic units
// (web3.md §2.3).
const MaxAmount = 10_000_000 * 1_000_000

// Environment is one environment's CCTP configuration: where burns are
// read, who attests, and the Solana side that mints. An environment
// without one answers its transfer routes SERVICE_UNAVAILABLE.
type Environment struct {
	// Sources are the EVM chains a transfer may burn on, one per domain.
	Sources []EVMChain
	// Attestations is the attestation service. Required.
	Attestations Attestations
	// Solana reads the destination cluster (the environment's). Required.
	Solana SolanaClient
	// USDCMint is the destination USDC mint on Solana.
	USDCMint chain.Address
	// TransmitterProgram and MinterProgram are the Solana CCTP V2
	// programs; zero means TransmitterProgramID and MinterProgramID.
	TransmitterProgram, MinterProgram chain.Address
	// Attesters are the attester addresses whose signatures count, and
	// SignatureThreshold how many distinct ones an attestation needs (as
	// the destination's MessageTransmitterV2 is configured).
	Attesters          []EVMAddress
	SignatureThreshold int
	// MaxFeeBps bounds a burn's maxFee in basis points of its amount;
	// zero means DefaultMaxFeeBps.
	MaxFeeBps uint32
}

// source returns the chain of domain d.
func (e Environment) source(d Domain) (EVMChain, bool) {
	i := slices.IndexFunc(e.Sources, func(c EVMChain) bool { return c.Domain == d })
	if i < 0 {
		return EVMChain{}, false
	}
	return e.Sources[i], true
}

// withDefaults fills the zero fields that have defaults.
func (e Environment) withDefaults() Environment {
	if e.TransmitterProgram.IsZero() {
		e.TransmitterProgram = TransmitterProgramID()
	}
	if e.MinterProgram.IsZero() {
		e.MinterProgram = MinterProgramID()
	}
	if e.MaxFeeBps == 0 {
		e.MaxFeeBps = DefaultMaxFeeBps
	}
	return e
}

// validate reports a configuration that cannot serve a transfer.
func (e Environment) validate() error {
	if len(e.Sources) == 0 || e.Attestations == nil || e.Solana == nil {
		return fmt.Errorf("at least one source chain, the attestation service and the Solana cluster are required")
	}
	if e.USDCMint.IsZero() {
		return fmt.Errorf("the destination USDC mint is required")
	}
	seen := map[Domain]bool{}
	for _, c := range e.Sources {
		switch {
		case c.Domain == DomainSolana:
			return fmt.Errorf("domain 5 is Solana, the destination, not an EVM source")
		case seen[c.Domain]:
			return fmt.Errorf("domain %d is configured twice", c.Domain)
		case c.Client == nil || c.ChainID == 0:
			return fmt.Errorf("domain %d: the client and the chain id are required", c.Domain)
		case c.TokenMessenger.IsZero() || c.MessageTransmitter.IsZero() || c.USDC.IsZero():
			return fmt.Errorf("domain %d: TokenMessenger, MessageTransmitter and USDC are required", c.Domain)
		}
		seen[c.Domain] = true
	}
	if e.SignatureThreshold < 1 || len(e.Attesters) < e.SignatureThreshold {
		return fmt.Errorf("a signature threshold of at least 1 and as many attesters are required")
	}
	if e.MaxFeeBps >= 10_000 {
		return fmt.Errorf("MaxFeeBps must be below 10000")
	}
	return nil
}

// Hash identifies the configuration the readiness runs prove: a SHA-256
// of every setting but the clients, in a fixed order. A changed setting
// is a new configuration, unproven until a run passes for it.
func (e Environment) Hash() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cctp-config/v1\nmint=%s\ntransmitter=%s\nminter=%s\nthreshold=%d\nmaxFeeBps=%d\n", e.USDCMint,
		e.TransmitterProgram, e.MinterProgram, e.SignatureThreshold, e.MaxFeeBps)
	attesters := make([]string, 0, len(e.Attesters))
	for _, a := range e.Attesters {
		attesters = append(attesters, a.String())
	}
	slices.Sort(attesters)
	fmt.Fprintf(&b, "attesters=%s\n", strings.Join(attesters, ","))
	sources := slices.Clone(e.Sources)
	slices.SortFunc(sources, func(x, y EVMChain) int { return int(x.Domain) - int(y.Domain) })
	for _, c := range sources {
		fmt.Fprintf(&b, "source=%d chain=%d messenger=%s transmitter=%s usdc=%s\n", c.Domain, c.ChainID, c.TokenMessenger,
			c.MessageTransmitter, c.USDC)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}
