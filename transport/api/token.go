package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/token"
)

// TokenPolicyView is the token policy's other constants.
type TokenPolicyView struct {
	// Version is the token policy's version.
	Version string `json:"version" example:"1.0.0"`
	// QuarterlyBurnPercent is the planned burn per quarter, in percent, a decimal string.
	QuarterlyBurnPercent string `json:"quarterlyBurnPercent" example:"2"`
	// BurnCalculationBase is what the burn percentage applies to; TBA until decided.
	BurnCalculationBase string `json:"burnCalculationBase" example:"TBA"`
	// VestingLockedTokens is the number of whole tokens locked in vesting, an integer string.
	VestingLockedTokens string `json:"vestingLockedTokens" example:"3000000000"`
}

// TokenMetadataView is GET /api/v1/token/metadata.
type TokenMetadataView struct {
	// Name is the token's name.
	Name string `json:"name" example:"Platform Token"`
	// Symbol is the token's ticker symbol.
	Symbol string `json:"symbol" example:"TOKEN"`
	// Network is the CAIP-2 id read from the cluster's genesis hash by the
	// verification service; null before it has read the cluster.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Standard is the token standard, SPL Token-2022.
	Standard string `json:"standard" example:"SPL Token-2022"`
	// TokenProgram is the token program's address (base58).
	TokenProgram string `json:"tokenProgram" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// InitialMaximumSupply is the policy's maximum supply in whole tokens, an integer string.
	InitialMaximumSupply string `json:"initialMaximumSupply" example:"18446000000"`
	// Decimals is the token's decimals: an atomic amount is the whole amount times 10^decimals.
	Decimals int `json:"decimals" example:"9"`
	// AtomicInitialMaximumSupply is the policy's maximum supply in atomic units, an integer string.
	AtomicInitialMaximumSupply string `json:"atomicInitialMaximumSupply" example:"18446000000000000000"`
	// TransferFeeBps is the transfer fee the policy sets, in basis points.
	TransferFeeBps int `json:"transferFeeBps" example:"200"`
	// TransferFeeRatePolicyCapBps is the highest transfer fee rate the policy allows, in basis
	// points.
	TransferFeeRatePolicyCapBps int `json:"transferFeeRatePolicyCapBps" example:"500"`
	// Token2022MaximumFeeAtomic is the verified maximum fee amount; null
	// until deployment. The 500 bps rate cap is never written here.
	Token2022MaximumFeeAtomic *string `json:"token2022MaximumFeeAtomic" example:"5000000000"`
	// ProductionMint is null until the mint is verified on mainnet.
	ProductionMint *string `json:"productionMint" example:"Mint111111111111111111111111111111111111111"`
	// Status is the deployment state, such as PRE_DEPLOYMENT.
	Status string `json:"status" example:"PRE_DEPLOYMENT"`
	// Policy is the token policy's other constants.
	Policy TokenPolicyView `json:"policy"`
}

// TokenEvidenceView is a passing run's evidence.
type TokenEvidenceView struct {
	// RunID is the passing verification run.
	RunID string `json:"runId" example:"tvr_01jd0000000000000000000000"`
	// Slot is the chain slot the run read at.
	Slot *uint64 `json:"slot" example:"312000000"`
	// BlockTime is that slot's block time; null when the cluster does not report it.
	BlockTime *time.Time `json:"blockTime"`
	// VerifiedAt is when the run passed.
	VerifiedAt time.Time `json:"verifiedAt"`
}

// TokenAttemptView is the newest verification run, whatever its outcome.
type TokenAttemptView struct {
	// RunID is the run's id.
	RunID string `json:"runId" example:"tvr_01jd0000000000000000000000"`
	// Outcome is PASSED (every required check passed), FAILED (one failed) or ERROR (the cluster
	// could not be read).
	Outcome string `json:"outcome" example:"PASSED" enum:"PASSED,FAILED,ERROR"`
	// ErrorCode says why an ERROR run could not read the cluster.
	ErrorCode *string `json:"errorCode" example:"NODE_BEHIND" enum:"CHAIN_UNAVAILABLE,NODE_BEHIND,NETWORK_MISMATCH,NOT_CONFIGURED"`
	// ErrorMessage explains an ERROR run; null otherwise.
	ErrorMessage *string `json:"errorMessage" example:"the node is behind by 120 slots"`
	// FinishedAt is when the run finished.
	FinishedAt time.Time `json:"finishedAt"`
}

// TokenTransitionView is one row of the deployment table.
type TokenTransitionView struct {
	// From is the deployment state the move starts from.
	From string `json:"from" example:"MAINNET_CONFIGURED"`
	// Event is the event that makes the move.
	Event string `json:"event" example:"verification_passed"`
	// To is the deployment state the move ends in.
	To string `json:"to" example:"MAINNET_VERIFIED"`
}

// TokenDeploymentView is GET /api/v1/token/deployment.
type TokenDeploymentView struct {
	// State is the deployment state.
	State string `json:"state" example:"MAINNET_CONFIGURED"`
	// Cluster is the Solana cluster the environment is configured with.
	Cluster string `json:"cluster" example:"mainnet" enum:"mainnet,devnet,testnet,localnet"`
	// Network is the CAIP-2 id read from the cluster's genesis hash; null before the cluster was
	// read.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Mint is the configured mint (base58); null when none is configured.
	Mint *string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// TokenProgram is the token program's address (base58).
	TokenProgram string `json:"tokenProgram" example:"TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"`
	// Configured is true when a mint is configured.
	Configured bool `json:"configured" example:"true"`
	// Verified is true when a verification run of the current configuration passed.
	Verified bool `json:"verified" example:"false"`
	// ProductionReady is true only for a mainnet mint that a passing run verified and the
	// operator declared launched.
	ProductionReady bool `json:"productionReady" example:"false"`
	// Evidence is the passing run behind a verified state.
	Evidence *TokenEvidenceView `json:"evidence"`
	// LastAttempt is the newest verification run, whatever its outcome; null before any.
	LastAttempt *TokenAttemptView `json:"lastAttempt"`
	// Transitions is the deployment state table, as data.
	Transitions []TokenTransitionView `json:"transitions"`
}

// TokenCheckView is one verification check.
type TokenCheckView struct {
	// Code is the check's identifier, such as DECIMALS.
	Code string `json:"code" example:"DECIMALS"`
	// Passed is true when the chain matched the policy.
	Passed bool `json:"passed" example:"true"`
	// Required is true when the check must pass for the deployment to verify.
	Required bool `json:"required" example:"true"`
	// Actual is the value read from the chain (JSON), null when absent.
	Actual json.RawMessage `json:"actual"`
	// Expected is the exact value required; ExpectedMax an upper bound.
	Expected json.RawMessage `json:"expected,omitempty"`
	// ExpectedMax is the upper bound the actual value must not exceed, when the check has one.
	ExpectedMax json.RawMessage `json:"expectedMax,omitempty"`
	// Reason says why the check failed; null when it passed.
	Reason *string `json:"reason" example:"the mint's decimals differ from the policy"`
}

// TokenVerificationView is GET /api/v1/token/verification.
type TokenVerificationView struct {
	// Verified is true when the checks' run passed.
	Verified bool `json:"verified" example:"false"`
	// State is the deployment state.
	State string `json:"state" example:"MAINNET_CONFIGURED"`
	// Network is the CAIP-2 id of the cluster the run read; null before any run.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Mint is the configured mint (base58); null when none is configured.
	Mint *string `json:"mint" example:"Mint111111111111111111111111111111111111111"`
	// RunID is the run the checks come from: the newest PASSED or FAILED
	// run of the current configuration.
	RunID *string `json:"runId" example:"tvr_01jd0000000000000000000000"`
	// Checks are the run's checks.
	Checks []TokenCheckView `json:"checks"`
	// Slot is the chain slot the run read at; null before any run.
	Slot *uint64 `json:"slot" example:"312000000"`
	// BlockTime is that slot's block time; null when unknown.
	BlockTime *time.Time `json:"blockTime"`
	// VerifiedAt is when the run passed; null when it did not.
	VerifiedAt *time.Time `json:"verifiedAt"`
	// LastAttempt is the newest run, whatever its outcome; null before any.
	LastAttempt *TokenAttemptView `json:"lastAttempt"`
}

// TokenFeatureView is a token feature's availability.
type TokenFeatureView struct {
	// Enabled is true when the feature is available.
	Enabled bool `json:"enabled" example:"false"`
	// Reason says why it is not; null when enabled.
	Reason *string `json:"reason" example:"deployment_not_verified"`
}

// TokenFeaturesView lists the token features.
type TokenFeaturesView struct {
	// Transfers is whether token transfers are available.
	Transfers TokenFeatureView `json:"transfers"`
	// CirculatingSupply is whether the circulating supply is published.
	CirculatingSupply TokenFeatureView `json:"circulatingSupply"`
}

// TokenStatusView is GET /api/v1/token/status.
type TokenStatusView struct {
	// Deployment is the deployment state.
	Deployment string `json:"deployment" example:"PRE_DEPLOYMENT"`
	// ProductionReady is true only for a mainnet mint that a passing run verified and the
	// operator declared launched.
	ProductionReady bool `json:"productionReady" example:"false"`
	// MetadataVerified is true when a passing run verified the mint's metadata.
	MetadataVerified bool `json:"metadataVerified" example:"false"`
	// TransferFeeConfigVerified is true when a passing run verified the mint's transfer fee
	// configuration.
	TransferFeeConfigVerified bool `json:"transferFeeConfigVerified" example:"false"`
	// SupplyMethodologyStatus is the status of the circulating supply methodology, such as DRAFT.
	SupplyMethodologyStatus string `json:"supplyMethodologyStatus" example:"DRAFT"`
	// Features are the token features' availability.
	Features TokenFeaturesView `json:"features"`
}

// TokenSupplyView is GET /api/v1/token/total-supply and
// /circulating-supply: the value in atomic units and whole tokens, or null
// with the reason it is unavailable.
type TokenSupplyView struct {
	// Kind is total or circulating.
	Kind string `json:"kind" example:"total" enum:"total,circulating"`
	// Atomic is the supply in atomic units, an integer string; null when unavailable.
	Atomic *string `json:"atomic" example:"18446000000000000000"`
	// Whole is the supply in whole tokens, a decimal string; null when unavailable.
	Whole *string `json:"whole" example:"18446000000"`
	// Available is false before verified deployment (total) and while the
	// supply methodology is not verified (circulating).
	Available bool `json:"available" example:"false"`
	// Reason says why the supply is unavailable; null when available.
	Reason *string `json:"reason" example:"deployment_not_verified"`
	// Decimals is the token's decimals.
	Decimals int `json:"decimals" example:"9"`
	// MaximumAtomic is the policy maximum, which total supply never
	// exceeds.
	MaximumAtomic string `json:"maximumAtomic" example:"18446000000000000000"`
	// Network is the CAIP-2 id of the cluster the supply was read from; null when unavailable.
	Network *string `json:"network" example:"solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"`
	// Slot is the slot the supply was read at; null when unavailable.
	Slot *uint64 `json:"slot" example:"312000000"`
	// BlockTime is that slot's block time; null when unknown.
	BlockTime *time.Time `json:"blockTime"`
}

// callerEnvironment is the environment an OptionalAuth route answers for:
// the principal's, or live for anonymous callers.
func callerEnvironment(c *Call) access.Environment {
	if c.Principal != nil && c.Principal.Environment.Valid() {
		return c.Principal.Environment
	}
	return access.Live
}

const tokenEnvNote = " Public and read-only: no credential is needed and anonymous callers see the live registry; a caller that " +
	"sends an API key, access token or session sees its own environment's registry (a test key: the test cluster's)."

func tokenRoutes(svc *token.Service) []Route {
	if svc == nil {
		return nil
	}
	view := func(ctx context.Context, c *Call) (token.View, error) {
		return svc.View(ctx, callerEnvironment(c), c.Tx)
	}
	route := func(pattern, id, summary, desc string, response any, build func(token.View) any) Route {
		return Route{Method: http.MethodGet, Pattern: pattern, OperationID: id, Tag: transport.TagTokenRegistry, Summary: summary,
			Description: desc + tokenEnvNote, Auth: transport.AuthPublic, OptionalAuth: true, Response: response,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				v, err := view(ctx, c)
				if err != nil {
					return nil, err
				}
				return build(v), nil
			}}
	}
	deployment := route("/api/v1/token/deployment", "getTokenDeployment", "Get the token's deployment state",
		"The deployment state (PRE_DEPLOYMENT, then <CLUSTER>_CONFIGURED by configuration and <CLUSTER>_VERIFIED only by a "+
			"passing verification run; MAINNET_ on mainnet, DEVNET_, TESTNET_ or LOCALNET_ elsewhere), the network read "+
			"from the cluster's genesis hash, the evidence of a verified state, the newest run and the state table. "+
			"productionReady is true only for a launched, verified mainnet deployment. Cache-Control: no-store.",
		exampleDeployment(), func(v token.View) any { return deploymentView(v) })
	inner := deployment.Handle
	deployment.Handle = func(ctx context.Context, c *Call) (any, error) {
		c.Header().Set("Cache-Control", "no-store")
		return inner(ctx, c)
	}
	return []Route{
		route("/api/v1/token/metadata", "getTokenMetadata", "Get the token's metadata",
			"The token policy's constants (decimals 9, initial maximum supply 18,446,000,000, launch fee 200 bps, fee rate "+
				"cap 500 bps), the network, and the deployment status. token2022MaximumFeeAtomic and productionMint are "+
				"null until deployment.", exampleMetadata(), func(v token.View) any { return metadataView(v) }),
		deployment,
		route("/api/v1/token/verification", "getTokenVerification", "Get the token's live verification",
			"The thirteen required checks of the newest decisive run of the current configuration, in order (MINT_EXISTS, "+
				"TOKEN_PROGRAM_OWNER, DECIMALS, SUPPLY_PARSES, SUPPLY_WITHIN_MAXIMUM, AUTHORITY_STATE, TRANSFER_FEE_BPS, "+
				"TRANSFER_FEE_POLICY_CAP_BPS, MAXIMUM_FEE_AMOUNT, FEE_CONFIG_AUTHORITY, WITHDRAW_WITHHELD_AUTHORITY, "+
				"METADATA_AUTHORITY, PROVENANCE), each with passed, required, actual and expected or expectedMax, and the "+
				"slot and block time of the read. A run that could not read the cluster (unreachable, timed out, node "+
				"behind) is reported as lastAttempt and proves nothing. Runs happen in the background, never per request.",
			exampleVerification(), func(v token.View) any { return verificationView(v) }),
		route("/api/v1/token/status", "getTokenStatus", "Get the token's status",
			"Deployment state, production readiness, whether the metadata and transfer-fee configuration are verified, "+
				"the supply methodology status, and which token features are enabled, each with the reason when not.",
			exampleStatus(), func(v token.View) any { return statusView(v) }),
		route("/api/v1/token/total-supply", "getTokenTotalSupply", "Get the token's total supply",
			"The supply read from the verified mint (never above the policy maximum), with the slot and block time of the "+
				"read; null with reason deployment_not_verified before verified deployment.",
			exampleSupply("total"), func(v token.View) any { return supplyView("total", v, v.TotalSupply()) }),
		route("/api/v1/token/circulating-supply", "getTokenCirculatingSupply", "Get the token's circulating supply",
			"Null with reason methodology_not_verified while the supply methodology is DRAFT; circulating supply needs "+
				"verified exclusion classifications.",
			exampleSupply("circulating"), func(v token.View) any { return supplyView("circulating", v, v.CirculatingSupply()) }),
	}
}

func metadataView(v token.View) TokenMetadataView {
	return TokenMetadataView{Name: v.Config.Name, Symbol: v.Config.Symbol, Network: optional(v.Network()), Standard: token.Standard,
		TokenProgram: token.ProgramID(), InitialMaximumSupply: strconv.FormatUint(token.MaxSupplyWhole, 10), Decimals: token.Decimals,
		AtomicInitialMaximumSupply: strconv.FormatUint(token.MaxSupplyAtomic, 10), TransferFeeBps: token.LaunchFeeBps,
		TransferFeeRatePolicyCapBps: token.FeeCapBps, Token2022MaximumFeeAtomic: optional(v.MaximumFeeAtomic()),
		ProductionMint: optional(v.ProductionMint()), Status: string(v.State),
		Policy: TokenPolicyView{Version: token.PolicyVersion, QuarterlyBurnPercent: token.QuarterlyBurnPercent,
			BurnCalculationBase: "TBA", VestingLockedTokens: token.VestingLockedWhole}}
}

func attemptView(r *token.Run) *TokenAttemptView {
	if r == nil {
		return nil
	}
	return &TokenAttemptView{RunID: r.ID, Outcome: string(r.Outcome), ErrorCode: optional(r.ErrorCode),
		ErrorMessage: optional(r.ErrorMessage), FinishedAt: r.FinishedAt}
}

func deploymentView(v token.View) TokenDeploymentView {
	out := TokenDeploymentView{State: string(v.State), Cluster: string(v.Config.Cluster), Network: optional(v.Network()),
		Mint: optional(v.Config.Mint), TokenProgram: token.ProgramID(), Configured: v.Config.Configured(), Verified: v.Verified(),
		ProductionReady: v.ProductionReady(), LastAttempt: attemptView(v.Latest)}
	if v.Verified() {
		out.Evidence = &TokenEvidenceView{RunID: v.Decisive.ID, Slot: v.Decisive.Slot, BlockTime: v.Decisive.BlockTime,
			VerifiedAt: v.Decisive.FinishedAt}
	}
	for _, t := range token.Transitions(v.Config.Cluster) {
		out.Transitions = append(out.Transitions, TokenTransitionView{From: string(t.From), Event: string(t.Event), To: string(t.To)})
	}
	return out
}

// rawJSON encodes v for a check's free-form field; nil stays JSON null.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func verificationView(v token.View) TokenVerificationView {
	out := TokenVerificationView{Verified: v.Verified(), State: string(v.State), Network: optional(v.Network()),
		Mint: optional(v.Config.Mint), Checks: []TokenCheckView{}, LastAttempt: attemptView(v.Latest)}
	if d := v.Decisive; d != nil {
		out.RunID, out.Slot, out.BlockTime = &d.ID, d.Slot, d.BlockTime
		for _, c := range d.Checks {
			cv := TokenCheckView{Code: c.Code, Passed: c.Passed, Required: c.Required, Actual: rawJSON(c.Actual), Reason: optional(c.Reason)}
			if c.Expected != nil {
				cv.Expected = rawJSON(c.Expected)
			}
			if c.ExpectedMax != nil {
				cv.ExpectedMax = rawJSON(c.ExpectedMax)
			}
			out.Checks = append(out.Checks, cv)
		}
		if v.Verified() {
			at := d.FinishedAt
			out.VerifiedAt = &at
		}
	}
	return out
}

func featureView(f token.Feature) TokenFeatureView {
	return TokenFeatureView{Enabled: f.Enabled, Reason: optional(f.Reason)}
}

func statusView(v token.View) TokenStatusView {
	return TokenStatusView{Deployment: string(v.State), ProductionReady: v.ProductionReady(), MetadataVerified: v.MetadataVerified(),
		TransferFeeConfigVerified: v.TransferFeeConfigVerified(), SupplyMethodologyStatus: v.Config.SupplyMethodology,
		Features: TokenFeaturesView{Transfers: featureView(v.Transfers()), CirculatingSupply: featureView(v.CirculatingFeature())}}
}

func supplyView(kind string, v token.View, s token.Supply) TokenSupplyView {
	out := TokenSupplyView{Kind: kind, Available: s.Atomic != "", Reason: optional(s.Reason), Decimals: token.Decimals,
		MaximumAtomic: strconv.FormatUint(token.MaxSupplyAtomic, 10), Network: optional(v.Network())}
	if s.Atomic != "" {
		n, err := strconv.ParseUint(s.Atomic, 10, 64)
		if err == nil {
			w := token.FormatWhole(n)
			out.Whole = &w
		}
		out.Atomic, out.Slot, out.BlockTime = &s.Atomic, s.Slot, s.BlockTime
	}
	return out
}

// The examples below fill the OpenAPI document.

func exampleMetadata() TokenMetadataView {
	return metadataView(token.View{State: token.PreDeployment, Config: token.Config{Name: "Platform Token", Symbol: "TOKEN"}})
}

func exampleDeployment() TokenDeploymentView {
	return deploymentView(token.View{State: token.PreDeployment, Config: token.Config{Cluster: "mainnet"}})
}

func exampleVerification() TokenVerificationView {
	return verificationView(token.View{State: token.PreDeployment})
}

func exampleStatus() TokenStatusView {
	return statusView(token.View{State: token.PreDeployment, Config: token.Config{SupplyMethodology: token.MethodologyDraft}})
}

func exampleSupply(kind string) TokenSupplyView {
	return supplyView(kind, token.View{}, token.Supply{Reason: "deployment_not_verified"})
}
