package token

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// Environment is one environment's registry: its configuration and the
// cluster it reads (nil: no cluster configured; runs record ERROR).
type Environment struct {
	Config Config
	Chain  ChainClient
}

// ServiceConfig configures a Service.
type ServiceConfig struct {
	// Environments holds the test and live registries; a missing one is
	// PRE_DEPLOYMENT with no cluster.
	Environments map[access.Environment]Environment
	// Clock is the clock. Required.
	Clock Clock
}

// Clock tells the time.
type Clock interface {
	// Now is the current time.
	Now() time.Time
}

// Service runs verifications and builds the registry's projections.
type Service struct {
	envs  map[access.Environment]Environment
	clock Clock
}

// New validates cfg and returns a Service.
func New(cfg ServiceConfig) (*Service, error) {
	if cfg.Clock == nil {
		return nil, fmt.Errorf("token: a clock is required")
	}
	envs := map[access.Environment]Environment{}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("token: unknown environment %q", env)
		}
		if err := e.Config.Validate(); err != nil {
			return nil, fmt.Errorf("token: %s: %w", env, err)
		}
		e.Config = e.Config.withDefaults()
		envs[env] = e
	}
	for _, env := range []access.Environment{access.Test, access.Live} {
		if _, ok := envs[env]; !ok {
			envs[env] = Environment{Config: Config{}.withDefaults()}
		}
	}
	return &Service{envs: envs, clock: cfg.Clock}, nil
}

// Config returns env's registry configuration.
func (s *Service) Config(env access.Environment) Config { return s.envs[env].Config }

// HasChain reports whether env has a cluster configured.
func (s *Service) HasChain(env access.Environment) bool { return s.envs[env].Chain != nil }

// Verify runs the checks of env's configured mint against its cluster and
// returns the run for the caller to store. It calls the chain and belongs
// in a job, never in a request.
func (s *Service) Verify(ctx context.Context, env access.Environment) Run {
	e := s.envs[env]
	r := Verify(ctx, e.Chain, e.Config, s.clock)
	r.Environment = env
	return r
}

// View is env's registry as the stored runs show it: the source of every
// projection.
type View struct {
	// Environment is the registry's environment.
	Environment access.Environment
	// Config is the registry configuration.
	Config Config
	// State is the deployment state.
	State State
	// Latest is the newest run of any outcome, if any.
	Latest *Run
	// Decisive is the newest PASSED or FAILED run of the current
	// configuration, if any.
	Decisive *Run
}

// View reads env's runs from st and derives the state.
func (s *Service) View(ctx context.Context, env access.Environment, st Store) (View, error) {
	cfg := s.envs[env].Config
	v := View{Environment: env, Config: cfg}
	latest, ok, err := st.TokenRunLatest(ctx, env)
	if err != nil {
		return View{}, fmt.Errorf("token: latest run: %w", err)
	}
	if ok {
		v.Latest = &latest
	}
	if cfg.Configured() {
		d, ok, err := st.TokenRunLatestDecisive(ctx, env, cfg.Hash())
		if err != nil {
			return View{}, fmt.Errorf("token: latest decisive run: %w", err)
		}
		if ok {
			v.Decisive = &d
		}
	}
	v.State = StateOf(cfg, v.Decisive)
	return v, nil
}

// Verified reports whether the state is verified; Decisive is then the
// passing run.
func (v View) Verified() bool { return v.State.IsVerified() && v.Decisive != nil }

// Network is the CAIP-2 network read from the cluster's genesis hash by
// the decisive run, else by the newest run; "" before any run reached the
// cluster.
func (v View) Network() string {
	if v.Decisive != nil {
		return v.Decisive.Network
	}
	if v.Latest != nil {
		return v.Latest.Network
	}
	return ""
}

// ProductionReady is true only for a launched, verified mainnet registry.
func (v View) ProductionReady() bool {
	return v.Config.Cluster == chain.Mainnet && v.Verified() && v.Config.Launched
}

// checkPassed reports whether the decisive run passed code.
func (v View) checkPassed(codes ...string) bool {
	if !v.Verified() {
		return false
	}
	for _, code := range codes {
		found := false
		for _, c := range v.Decisive.Checks {
			if c.Code == code {
				if !c.Passed {
					return false
				}
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// MetadataVerified reports whether check 12 passed in the verified run.
func (v View) MetadataVerified() bool {
	return v.Config.MetadataAuthority != "" && v.checkPassed(CheckMetadataAuthority)
}

// TransferFeeConfigVerified reports whether checks 7 to 11 passed in the
// verified run.
func (v View) TransferFeeConfigVerified() bool {
	return v.checkPassed(CheckFeeBps, CheckFeeCap, CheckMaximumFee, CheckFeeConfigAuthority, CheckWithdrawAuthority)
}

// ProductionMint is the mint once verified on mainnet, else "".
func (v View) ProductionMint() string {
	if v.Config.Cluster == chain.Mainnet && v.Verified() {
		return v.Config.Mint
	}
	return ""
}

// MaximumFeeAtomic is the verified maximum fee amount once deployed, else
// "": the policy's rate cap is never turned into an absolute amount.
func (v View) MaximumFeeAtomic() string {
	if v.Verified() && v.checkPassed(CheckMaximumFee) {
		return v.Config.MaximumFeeAtomic
	}
	return ""
}

// Feature is a feature's availability with the reason when disabled.
type Feature struct {
	Enabled bool
	Reason  string
}

// Transfers is whether token transfers are enabled.
func (v View) Transfers() Feature {
	if v.ProductionReady() {
		return Feature{Enabled: true}
	}
	if v.Verified() {
		return Feature{Reason: "deployment_not_live"}
	}
	return Feature{Reason: "deployment_not_verified"}
}

// Supply is a supply figure: the atomic value, or unavailable with a
// reason.
type Supply struct {
	// Atomic is the value in atomic units; "" when unavailable.
	Atomic string
	// Reason says why the value is unavailable.
	Reason string
	// Slot and BlockTime are the evidence of an available value.
	Slot      *uint64
	BlockTime *time.Time
}

// TotalSupply is the supply observed by the verified run.
func (v View) TotalSupply() Supply {
	if !v.Verified() || v.Decisive.Supply == nil {
		return Supply{Reason: "deployment_not_verified"}
	}
	return Supply{Atomic: strconv.FormatUint(*v.Decisive.Supply, 10), Slot: v.Decisive.Slot, BlockTime: v.Decisive.BlockTime}
}

// CirculatingSupply is unavailable until the supply methodology and the
// exclusion classifications are verified (see the package doc).
func (v View) CirculatingSupply() Supply {
	if v.Config.SupplyMethodology == MethodologyDraft {
		return Supply{Reason: "methodology_not_verified"}
	}
	return Supply{Reason: "exclusions_not_verified"}
}

// CirculatingFeature is whether circulating supply is published.
func (v View) CirculatingFeature() Feature {
	s := v.CirculatingSupply()
	return Feature{Enabled: s.Atomic != "", Reason: s.Reason}
}

// ProgramID is the extended token program's address.
func ProgramID() string { return token2022.ProgramID().String() }

// FormatWhole renders an atomic amount in whole tokens.
func FormatWhole(atomic uint64) string {
	whole, frac := atomic/1_000_000_000, atomic%1_000_000_000
	if frac == 0 {
		return strconv.FormatUint(whole, 10)
	}
	f := fmt.Sprintf("%09d", frac)
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return strconv.FormatUint(whole, 10) + "." + f
}
