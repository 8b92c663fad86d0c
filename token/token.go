// Package token is the platform token's registry: its policy constants,
// each environment's deployment configuration, the live verification of the
// configured mint against the cluster, and the read-only projections served
// by the token routes (metadata, deployment, verification, status, total and
// circulating supply).
//
// # Verification
//
// Verify reads the configured mint through the ChainClient port (genesis
// hash, epoch, the mint account at finalized commitment, the block time of
// the answer's slot) and runs the spec's thirteen required checks in order
// against the mint's bytes, decoded by chain/token2022 (see Checks for the
// codes). A run has one of three outcomes: PASSED (every required check
// passed), FAILED (a required check failed) or ERROR (the cluster could not
// be read: unreachable, timed out, behind (-32005), or not the configured
// cluster). An ERROR run is evidence of nothing: it never passes and never
// moves the deployment state. The platform runs Verify from a durable job,
// on start and configuration change and on a schedule, and stores every run;
// the routes read the stored runs and never call the chain per request.
//
// # Deployment states
//
// The spec names PRE_DEPLOYMENT, MAINNET_CONFIGURED and MAINNET_VERIFIED for
// mainnet. The same three steps apply on every cluster, with the cluster's
// name in place of MAINNET: DEVNET_, TESTNET_ and LOCALNET_CONFIGURED and
// _VERIFIED (LOCALNET is any cluster whose genesis hash is not one of the
// three public clusters', the loopback simulator included). Configuration
// alone moves PRE_DEPLOYMENT to <CLUSTER>_CONFIGURED; only a PASSED run of
// the current configuration moves it to <CLUSTER>_VERIFIED, and a FAILED run
// moves a verified registry back to configured (its evidence no longer
// holds). The moves are the Transitions table, and State derives the
// current state from the configuration and the stored runs through it.
// productionReady is true only on mainnet, verified, and declared launched
// by the operator (Config.Launched): configured is not verified, and
// verified is not live.
//
// # Supply
//
// Total supply is the supply observed by the newest PASSED run, so it never
// exceeds the policy maximum (check 5). Circulating supply needs a verified
// supply methodology and verified exclusion classifications; while the
// methodology is DRAFT it is unavailable with reason
// methodology_not_verified, and no exclusion source exists yet, so any other
// methodology status answers exclusions_not_verified. Unavailable values are
// null with a reason, never zero.
package token

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// The token policy (spec, "Token registry records" and Limits), version
// PolicyVersion.
const (
	// PolicyVersion is the token policy's version.
	PolicyVersion = "1.0.0"
	// Decimals is the token's decimals.
	Decimals = 9
	// MaxSupplyWhole is the initial maximum supply in whole tokens.
	MaxSupplyWhole uint64 = 18_446_000_000
	// MaxSupplyAtomic is the initial maximum supply in atomic units.
	MaxSupplyAtomic uint64 = 18_446_000_000_000_000_000
	// LaunchFeeBps is the launch transfer-fee rate.
	LaunchFeeBps = 200
	// FeeCapBps is the policy cap on the transfer-fee rate. It is a rate
	// cap, never an absolute amount.
	FeeCapBps = 500
	// QuarterlyBurnPercent is the quarterly burn; its calculation base is
	// TBA.
	QuarterlyBurnPercent = "2"
	// VestingLockedWhole is the number of whole tokens designated for the
	// vesting lock.
	VestingLockedWhole = "3000000000"
	// Standard names the token standard.
	Standard = "SPL Token-2022"
	// MethodologyDraft is the supply methodology status until it is
	// verified.
	MethodologyDraft = "DRAFT"
)

// ChainClient is what the registry reads from a cluster. chain/solanarpc
// and chain/chaintest satisfy it.
type ChainClient interface {
	GetGenesisHash(ctx context.Context) (string, error)
	GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error)
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	GetBlockTime(ctx context.Context, slot uint64) (time.Time, error)
}

// Store persists verification runs. Package store implements it.
type Store interface {
	// TokenRunInsert stores a run, assigning its ID when empty.
	TokenRunInsert(ctx context.Context, r Run) (Run, error)
	// TokenRunLatest returns the newest run of env, if any.
	TokenRunLatest(ctx context.Context, env access.Environment) (Run, bool, error)
	// TokenRunLatestDecisive returns the newest PASSED or FAILED run of env
	// for configuration hash configHash, if any.
	TokenRunLatestDecisive(ctx context.Context, env access.Environment, configHash string) (Run, bool, error)
}

// Config is one environment's registry configuration. A registry with no
// Mint is PRE_DEPLOYMENT.
type Config struct {
	// Name and Symbol are display data.
	Name   string
	Symbol string
	// Cluster is the cluster the registry is deployed on. A run on a
	// cluster of another kind (read from its genesis hash) is an ERROR run
	// with code NETWORK_MISMATCH. Empty means mainnet.
	Cluster chain.Cluster
	// Mint is the configured mint address (base58); empty means not
	// configured.
	Mint string
	// MaximumFeeAtomic is the approved maximum fee of one transfer in atomic
	// units (a canonical decimal); required with Mint.
	MaximumFeeAtomic string
	// MintAuthority is the intended post-genesis mint authority; empty means
	// none (a fixed supply).
	MintAuthority string
	// FreezeAuthority is the intended freeze authority; empty means none.
	FreezeAuthority string
	// FixedSupply claims a fixed supply; it requires MintAuthority empty.
	FixedSupply bool
	// FeeConfigAuthority and WithdrawWithheldAuthority are the registry's
	// transfer-fee authorities; empty means none.
	FeeConfigAuthority        string
	WithdrawWithheldAuthority string
	// MetadataAuthority, when set, is the authority both the metadata
	// pointer and the embedded metadata must name (check 12); empty leaves
	// the check not required.
	MetadataAuthority string
	// SupplyMethodology is the supply methodology's status; empty means
	// DRAFT.
	SupplyMethodology string
	// Launched is the operator's declaration that the token is live; it
	// makes a MAINNET_VERIFIED registry production ready.
	Launched bool
}

// withDefaults fills Cluster and SupplyMethodology.
func (c Config) withDefaults() Config {
	if c.Cluster == "" {
		c.Cluster = chain.Mainnet
	}
	if c.SupplyMethodology == "" {
		c.SupplyMethodology = MethodologyDraft
	}
	return c
}

// Configured reports whether the required deployment fields are set.
func (c Config) Configured() bool { return c.Mint != "" }

// Validate checks the configuration's addresses and amounts.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch c.Cluster {
	case chain.Mainnet, chain.Devnet, chain.Testnet, chain.Localnet:
	default:
		return fmt.Errorf("token: unknown cluster %q", c.Cluster)
	}
	for name, v := range map[string]string{"Mint": c.Mint, "MintAuthority": c.MintAuthority,
		"FreezeAuthority": c.FreezeAuthority, "FeeConfigAuthority": c.FeeConfigAuthority,
		"WithdrawWithheldAuthority": c.WithdrawWithheldAuthority, "MetadataAuthority": c.MetadataAuthority} {
		if v == "" {
			continue
		}
		if _, err := token2022.ParsePublicKey(v); err != nil {
			return fmt.Errorf("token: %s: %w", name, err)
		}
	}
	if c.Mint == "" {
		return nil
	}
	if _, err := parseAtomic(c.MaximumFeeAtomic); err != nil {
		return fmt.Errorf("token: MaximumFeeAtomic is required with Mint: %w", err)
	}
	if c.FixedSupply && c.MintAuthority != "" {
		return fmt.Errorf("token: a fixed supply claim needs no mint authority")
	}
	return nil
}

// Hash identifies the configuration's verifiable content: a run belongs to
// the configuration it checked, and a change starts over at configured.
func (c Config) Hash() string {
	c = c.withDefaults()
	b, _ := json.Marshal(struct {
		Cluster, Mint, MaxFee, MintAuth, FreezeAuth, FeeAuth, WithdrawAuth, MetaAuth string
		Fixed                                                                        bool
	}{string(c.Cluster), c.Mint, c.MaximumFeeAtomic, c.MintAuthority, c.FreezeAuthority,
		c.FeeConfigAuthority, c.WithdrawWithheldAuthority, c.MetadataAuthority, c.FixedSupply})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// parseAtomic parses a canonical non-negative decimal that fits in 64 bits.
func parseAtomic(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a canonical atomic amount", s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a canonical atomic amount", s)
	}
	return v, nil
}

// Outcome is a verification run's outcome.
type Outcome string

// The outcomes of a run.
const (
	// Passed: every required check passed.
	Passed Outcome = "PASSED"
	// Failed: a required check failed.
	Failed Outcome = "FAILED"
	// Errored: the cluster could not be read; the run proves nothing.
	Errored Outcome = "ERROR"
)

// Check is one check's result.
type Check struct {
	// Code names the check (see Checks).
	Code string `json:"code"`
	// Passed reports whether the mint met it.
	Passed bool `json:"passed"`
	// Required reports whether the check counts toward verification.
	Required bool `json:"required"`
	// Actual is what the mint showed; nil when it could not be read.
	Actual any `json:"actual"`
	// Expected is the exact value required, or nil.
	Expected any `json:"expected,omitempty"`
	// ExpectedMax is the upper bound required, or nil.
	ExpectedMax any `json:"expectedMax,omitempty"`
	// Reason explains a failure or a check that does not apply.
	Reason string `json:"reason,omitempty"`
}

// Run is one verification run.
type Run struct {
	// ID is the run's identifier (tvr_...).
	ID string
	// Environment is the environment whose registry was checked.
	Environment access.Environment
	// ConfigHash is the Hash of the configuration checked.
	ConfigHash string
	// Mint is the mint checked.
	Mint string
	// Network is the cluster's CAIP-2 id read from its genesis hash; empty
	// when the genesis hash could not be read.
	Network string
	// Cluster is the kind of that cluster; empty like Network.
	Cluster chain.Cluster
	// Outcome is PASSED, FAILED or ERROR.
	Outcome Outcome
	// ErrorCode and ErrorMessage say why an ERROR run could not read the
	// cluster (CHAIN_UNAVAILABLE, NODE_BEHIND, NETWORK_MISMATCH).
	ErrorCode    string
	ErrorMessage string
	// Checks are the thirteen checks in order (none for an ERROR run).
	Checks []Check
	// Slot is the context slot of the mint read; BlockTime its block time.
	Slot      *uint64
	BlockTime *time.Time
	// Supply is the observed atomic supply.
	Supply *uint64
	// StartedAt and FinishedAt bound the run.
	StartedAt  time.Time
	FinishedAt time.Time
}
