package swap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/policy"
)

// Environment is one environment's swap configuration. Each environment
// swaps on its own cluster through its own route provider: test mode
// never reaches a live venue.
type Environment struct {
	// Chain reads the environment's cluster; nil leaves swaps
	// SWAP_NOT_CONFIGURED there.
	Chain ChainClient
	// Routes is the route provider; nil leaves swaps SWAP_NOT_CONFIGURED.
	Routes RouteProvider
	// Registry, when set, is published as the swap.tokens policy at start
	// whenever it differs from the current version.
	Registry *Registry
	// Settings, when set, is published as the swap.settings policy
	// whenever it differs; nil publishes DefaultSettings only while the
	// environment has none.
	Settings *Settings
	// FeeRecipient, when set, is published with ServiceFeeBps as the
	// fees.swap policy whenever it differs.
	FeeRecipient string
	// SwapPrograms are the route provider's swap programs, allowed at a
	// swap transaction's top level beside BasePrograms (Jupiter's
	// JupiterV6ProgramID, say); empty allows only BasePrograms, so every
	// swap through a program not listed goes to review.
	SwapPrograms []chain.Address
}

// Config configures a Service.
type Config struct {
	// Environments maps test and live to their configuration; an
	// environment without an entry is SWAP_NOT_CONFIGURED.
	Environments map[access.Environment]Environment
	// Wallets answers wallet verification; nil refuses every quote with
	// WALLET_REQUIRED.
	Wallets Wallets
	// WakeFunc wakes the job workers after a commit that enqueued work;
	// nil leaves them to their poll.
	WakeFunc func()
	// Clock tells the time. Required.
	Clock Clock
	// Run runs a unit of work; ReadFunc returns the read pool. Required.
	Run      RunFunc
	ReadFunc func() Store
	// SubmitRun runs a unit of work of the relay; SubmitReadFunc returns
	// the read pool as the relay reads it. Required.
	SubmitRun      SubmitRunFunc
	SubmitReadFunc func() SubmitStore
	// VerifyEvery is the registry's scheduled verification period; zero
	// means DefaultVerifyEvery.
	VerifyEvery time.Duration
	// Breaker tunes every route provider's circuit breaker (Threshold,
	// Cooldown, MaxPause); zero values take the defaults.
	Breaker BreakerConfig
	// NewIDFunc returns a fresh id suffix; nil means 16 random bytes in
	// hex.
	NewIDFunc func() string
}

// BreakerConfig tunes the route providers' circuit breakers.
type BreakerConfig struct {
	// Threshold, Cooldown and MaxPause: see Breaker.
	Threshold int
	Cooldown  time.Duration
	MaxPause  time.Duration
}

// FeatureSwap is the feature flag that gates starting swaps (quotes); an
// operator turns it off per workspace or platform-wide.
const FeatureSwap = "swap"

// DefaultVerifyEvery is the registry's scheduled verification period.
const DefaultVerifyEvery = time.Hour

// Service is the swap domain.
type Service struct {
	cfg      Config
	breakers map[access.Environment]*Breaker
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Clock == nil || cfg.Run == nil || cfg.ReadFunc == nil || cfg.SubmitRun == nil || cfg.SubmitReadFunc == nil {
		return nil, errors.New("swap: Config.Clock, Run, ReadFunc, SubmitRun and SubmitReadFunc are required")
	}
	if cfg.NewIDFunc == nil {
		cfg.NewIDFunc = func() string {
			b := make([]byte, 16)
			_, _ = rand.Read(b)
			return hex.EncodeToString(b)
		}
	}
	if cfg.VerifyEvery <= 0 {
		cfg.VerifyEvery = DefaultVerifyEvery
	}
	s := &Service{cfg: cfg, breakers: map[access.Environment]*Breaker{}}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("swap: unknown environment %q", env)
		}
		if e.Registry != nil {
			if err := e.Registry.Validate(); err != nil {
				return nil, fmt.Errorf("swap: %s registry: %w", env, err)
			}
		}
		if e.Settings != nil {
			if err := e.Settings.Validate(); err != nil {
				return nil, fmt.Errorf("swap: %s settings: %w", env, err)
			}
		}
		if e.FeeRecipient != "" {
			if err := (FeePolicy{ServiceFeeBps: ServiceFeeBps, FeeRecipient: e.FeeRecipient}).Validate(); err != nil {
				return nil, fmt.Errorf("swap: %s fee recipient: %w", env, err)
			}
		}
		s.breakers[env] = &Breaker{Threshold: cfg.Breaker.Threshold, Cooldown: cfg.Breaker.Cooldown, MaxPause: cfg.Breaker.MaxPause}
	}
	return s, nil
}

// publisher is the principal recorded on the policies the platform
// publishes from its configuration.
const publisher = "platform"

// Publish publishes each environment's configured registry, settings and
// fee policy where they differ from the current versions (DefaultSettings
// only where none exists), one unit of work per environment.
func (s *Service) Publish(ctx context.Context) error {
	for _, env := range []access.Environment{access.Test, access.Live} {
		e, ok := s.cfg.Environments[env]
		if !ok {
			continue
		}
		err := s.cfg.Run(ctx, func(st Store) error {
			sc := policy.Scope{Environment: env}
			if e.Registry != nil {
				if _, _, err := policy.Publish(ctx, st, sc, PolicyTokens, e.Registry, publisher); err != nil {
					return err
				}
			}
			switch _, err := policy.Current(ctx, st, sc, PolicySettings); {
			case e.Settings != nil:
				if _, _, err := policy.Publish(ctx, st, sc, PolicySettings, e.Settings, publisher); err != nil {
					return err
				}
			case fault.Is(err, fault.NotFound):
				if _, _, err := policy.Publish(ctx, st, sc, PolicySettings, DefaultSettings(), publisher); err != nil {
					return err
				}
			case err != nil:
				return err
			}
			if e.FeeRecipient != "" {
				fp := FeePolicy{ServiceFeeBps: ServiceFeeBps, FeeRecipient: e.FeeRecipient}
				if _, _, err := policy.Publish(ctx, st, sc, PolicyFees, fp, publisher); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("swap: publish the %s policies: %w", env, err)
		}
	}
	return nil
}

// Breaker returns env's route provider breaker (nil for an environment
// without configuration).
func (s *Service) Breaker(env access.Environment) *Breaker { return s.breakers[env] }

// current reads the current version of a policy of env and decodes its
// content into v; found is false when none was published.
func current(ctx context.Context, st policy.Store, env access.Environment, id string, v any) (policy.Version, bool, error) {
	ver, err := policy.Current(ctx, st, policy.Scope{Environment: env}, id)
	if fault.Is(err, fault.NotFound) {
		return policy.Version{}, false, nil
	}
	if err != nil {
		return policy.Version{}, false, err
	}
	if err := json.Unmarshal(ver.Content, v); err != nil {
		return policy.Version{}, false, fault.Wrap("swap.policy", fmt.Errorf("%s v%d: %w", id, ver.Version, err))
	}
	return ver, true, nil
}

// VerifyRegistry reads every entry of env's current registry from env's
// cluster (outside any unit of work) and stores the run, whatever its
// outcome; a run that could not read the cluster is stored Unreadable and
// is evidence of nothing. No registry or no cluster: nothing to do.
func (s *Service) VerifyRegistry(ctx context.Context, env access.Environment) (RegistryRun, bool, error) {
	const op = "swap.VerifyRegistry"
	e := s.cfg.Environments[env]
	var reg Registry
	ver, ok, err := current(ctx, s.cfg.ReadFunc(), env, PolicyTokens, &reg)
	if err != nil || !ok || e.Chain == nil {
		return RegistryRun{}, false, fault.Wrap(op, err)
	}
	run := RegistryRun{ID: "srr_" + s.cfg.NewIDFunc(), Environment: string(env), RegistryVersion: ver.Version, RegistryHash: ver.Hash}
	if err := readRegistry(ctx, e.Chain, reg, &run); err != nil {
		run.Unreadable, run.Error, run.Network = true, err.Error(), ""
		run.Checks = run.Checks[:0]
		for _, t := range reg.Tokens {
			run.Checks = append(run.Checks, MintCheck{Mint: t.Mint, Status: MintUnread, Reason: ReasonClusterUnreadable})
		}
	}
	run.CheckedAt = s.cfg.Clock.Now().UTC()
	if err := s.cfg.Run(ctx, func(st Store) error { return st.SwapRegistryRunInsert(ctx, run) }); err != nil {
		return RegistryRun{}, false, fault.Wrap(op, err)
	}
	return run, true, nil
}

// readRegistry fills run's network and checks from the cluster; an error
// means the cluster could not be read.
func readRegistry(ctx context.Context, c ChainClient, reg Registry, run *RegistryRun) error {
	genesis, err := c.GetGenesisHash(ctx)
	if err != nil {
		return fmt.Errorf("read the genesis hash: %w", err)
	}
	run.Network = chain.Network{GenesisHash: genesis}.CAIP2()
	ep, err := c.GetEpochInfo(ctx, chain.Finalized)
	if err != nil {
		return fmt.Errorf("read the epoch: %w", err)
	}
	for _, t := range reg.Tokens {
		mint, err := token2022.ParsePublicKey(t.Mint)
		if err != nil {
			return fmt.Errorf("registry mint %s: %w", t.Mint, err)
		}
		acct, err := c.GetAccountInfo(ctx, mint, chain.Finalized)
		missing := errors.Is(err, chain.ErrAccountNotFound)
		if err != nil && !missing {
			return fmt.Errorf("read the mint %s: %w", t.Mint, err)
		}
		run.Checks = append(run.Checks, CheckMint(t, acct, missing, ep.Epoch))
	}
	return nil
}

// The registry's job kinds. Rows in existing databases carry these names,
// payloads and keys, so none may change.
const (
	// JobVerifyRegistry verifies one environment's registry (payload
	// {"environment": "test"}); ScheduleNew enqueues it at start keyed
	// "swap.registry.verify:<env>:<registry hash>".
	JobVerifyRegistry = "swap.registry.verify"
	// JobVerifySchedule verifies every environment's registry once every
	// Config.VerifyEvery.
	JobVerifySchedule = "swap.registry.verify.schedule"
)

// jobPayload is the payload of JobVerifyRegistry.
type jobPayload struct {
	Environment access.Environment `json:"environment"`
}

// Jobs returns the swap domain's job kinds, of the money class.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobVerifyRegistry, Class: jobs.ClassMoney, HandlerFunc: s.verifyJob},
		{Name: JobVerifySchedule, Class: jobs.ClassMoney, HandlerFunc: s.scheduleJob, Every: s.cfg.VerifyEvery},
		{Name: JobWatch, Class: jobs.ClassMoney, HandlerFunc: s.watchJob},
		{Name: JobReconcile, Class: jobs.ClassMoney, HandlerFunc: s.reconcileJob},
	}
}

// ScheduleNew enqueues, in one unit of work, a JobVerifyRegistry of every
// environment with a registry and a cluster, keyed by the registry's
// hash: a new registry version is verified once across every host.
func (s *Service) ScheduleNew(ctx context.Context, run jobs.RunFunc) error {
	read := s.cfg.ReadFunc()
	type due struct {
		env  access.Environment
		hash string
	}
	var todo []due
	for _, env := range []access.Environment{access.Test, access.Live} {
		if s.cfg.Environments[env].Chain == nil {
			continue
		}
		var reg Registry
		ver, ok, err := current(ctx, read, env, PolicyTokens, &reg)
		if err != nil {
			return fmt.Errorf("swap: schedule the registry's verification: %w", err)
		}
		if ok {
			todo = append(todo, due{env, ver.Hash})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	return run(ctx, func(st jobs.Scheduler) error {
		for _, d := range todo {
			payload, _ := json.Marshal(jobPayload{Environment: d.env})
			if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobVerifyRegistry, Payload: payload,
				UniqueKey: JobVerifyRegistry + ":" + string(d.env) + ":" + d.hash}); err != nil {
				return err
			}
		}
		return nil
	})
}

// verifyJob verifies one environment's registry.
func (s *Service) verifyJob(ctx context.Context, j jobs.Job) error {
	var in jobPayload
	if err := json.Unmarshal(j.Payload, &in); err != nil || !in.Environment.Valid() {
		return fmt.Errorf("%s: bad payload %q", JobVerifyRegistry, j.Payload)
	}
	_, _, err := s.VerifyRegistry(ctx, in.Environment)
	return err
}

// scheduleJob verifies every environment's registry.
func (s *Service) scheduleJob(ctx context.Context, _ jobs.Job) error {
	for _, env := range []access.Environment{access.Test, access.Live} {
		if _, _, err := s.VerifyRegistry(ctx, env); err != nil {
			return err
		}
	}
	return nil
}
