package cctp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// Readiness is one run that proves an environment's configuration
// against the chains and the attestation service: each source chain
// answers its configured chain id and has its contracts deployed, the
// Solana USDC mint and the CCTP programs exist, and the attestation
// service answers each route's fee table. Transfers are created only
// while the newest run of the current configuration passed.
type Readiness struct {
	// ID is the run's id (ReadinessPrefix).
	ID string
	// Environment is the environment proven; ConfigHash the configuration
	// (Environment.Hash).
	Environment access.Environment
	ConfigHash  string
	// Passed is true when every check held and nothing was unreadable.
	Passed bool
	// Unreadable is true when a chain or the service could not be read:
	// the run is evidence of nothing, and its job retries.
	Unreadable bool
	// Error says what could not be read ("" when everything was).
	Error string
	// Checks are the comparisons, in order.
	Checks []Check
	// CheckedAt is when the run ended.
	CheckedAt time.Time
}

// Reasons a readiness run or the capability gives.
const (
	// ReasonNotConfigured: the environment has no CCTP configuration.
	ReasonNotConfigured = "not_configured"
	// ReasonNotVerified: no run of the current configuration read
	// everything yet.
	ReasonNotVerified = "not_verified"
	// ReasonVerificationFailed: the newest run found a check that did not
	// hold.
	ReasonVerificationFailed = "verification_failed"
)

// Capability is the cross-chain feature's state in one environment.
type Capability struct {
	// Configured: the environment has a CCTP configuration.
	Configured bool
	// Verified: the newest readiness run of that configuration that read
	// everything passed.
	Verified bool
	// Reason says why it is not verified ("" when it is).
	Reason string
	// Run is that newest run that read everything (nil before one: an
	// unreadable run is evidence of nothing and changes nothing).
	Run *Readiness
}

// Enabled reports whether transfers are created in the environment:
// configured and verified.
func (c Capability) Enabled() bool { return c.Configured && c.Verified }

// Capability reads env's state from st (the read pool).
func (s *Service) Capability(ctx context.Context, st Store, env access.Environment) (Capability, error) {
	e, ok := s.envs[env]
	if !ok {
		return Capability{Reason: ReasonNotConfigured}, nil
	}
	r, err := st.CCTPReadinessLatest(ctx, env, e.Hash())
	if fault.Is(err, fault.NotFound) {
		return Capability{Configured: true, Reason: ReasonNotVerified}, nil
	}
	if err != nil {
		return Capability{}, fault.Wrap("cctp.Capability", err)
	}
	c := Capability{Configured: true, Verified: r.Passed, Run: &r}
	if !r.Passed {
		c.Reason = ReasonVerificationFailed
	}
	return c, nil
}

// Verify runs env's readiness checks (outside any unit of work) and
// stores the run, whatever its outcome. An environment without a
// configuration has nothing to verify (false).
func (s *Service) Verify(ctx context.Context, env access.Environment) (Readiness, bool, error) {
	const op = "cctp.Verify"
	e, ok := s.envs[env]
	if !ok {
		return Readiness{}, false, nil
	}
	r := Readiness{Environment: env, ConfigHash: e.Hash()}
	var unread []string
	add := func(c Check) { r.Checks = append(r.Checks, c) }
	for _, c := range e.Sources {
		d := strconv.FormatUint(uint64(c.Domain), 10)
		id, err := c.Client.ChainID(ctx)
		if err != nil {
			unread = append(unread, "domain "+d+" chain id: "+err.Error())
			continue
		}
		add(Check{Name: "chain_id:" + d, Expected: strconv.FormatUint(c.ChainID, 10), Actual: strconv.FormatUint(id, 10),
			Passed: id == c.ChainID})
		for _, k := range []struct {
			name string
			addr EVMAddress
		}{{"token_messenger", c.TokenMessenger}, {"message_transmitter", c.MessageTransmitter}, {"usdc", c.USDC}} {
			has, err := c.Client.HasCode(ctx, k.addr)
			if err != nil {
				unread = append(unread, "domain "+d+" "+k.name+": "+err.Error())
				continue
			}
			add(Check{Name: k.name + ":" + d, Expected: k.addr.String() + " deployed", Actual: deployed(has), Passed: has})
		}
		tiers, err := e.Attestations.Fees(ctx, c.Domain, DomainSolana)
		if err != nil {
			unread = append(unread, "fees "+d+"->5: "+err.Error())
			continue
		}
		standard := slices.ContainsFunc(tiers, func(t FeeTier) bool { return t.FinalityThreshold >= 2000 })
		add(Check{Name: "attestation_fees:" + d, Expected: "a standard-finality tier", Actual: fmt.Sprintf("%d tiers", len(tiers)),
			Passed: standard})
	}
	if err := s.verifySolana(ctx, e, add); err != nil {
		unread = append(unread, err.Error())
	}
	r.Unreadable = len(unread) > 0
	if r.Unreadable {
		r.Error = unread[0]
	}
	r.Passed = !r.Unreadable && !slices.ContainsFunc(r.Checks, func(c Check) bool { return !c.Passed })
	r.CheckedAt = s.cfg.Clock.Now().UTC()
	if err := s.cfg.Run(ctx, func(st Store) error {
		r.ID = st.NewID(ReadinessPrefix)
		return st.CCTPReadinessInsert(ctx, r)
	}); err != nil {
		return Readiness{}, false, fault.Wrap(op, err)
	}
	return r, true, nil
}

// verifySolana checks the destination mint and programs; an error means
// the cluster could not be read.
func (s *Service) verifySolana(ctx context.Context, e Environment, add func(Check)) error {
	mint, err := e.Solana.GetAccountInfo(ctx, e.USDCMint, chain.Finalized)
	switch {
	case errors.Is(err, chain.ErrAccountNotFound):
		add(Check{Name: "usdc_mint", Expected: e.USDCMint.String() + " a mint of 6 decimals", Actual: "missing"})
	case err != nil:
		return fmt.Errorf("usdc mint: %w", err)
	default:
		m, derr := token2022.DecodeMint(mint.Data)
		ok := derr == nil && m.IsInitialized && m.Decimals == 6 && mint.Owner == mustKey(SPLTokenProgram)
		actual := "owner " + mint.Owner.String()
		if derr == nil {
			actual += fmt.Sprintf(", %d decimals", m.Decimals)
		}
		add(Check{Name: "usdc_mint", Expected: "an SPL Token mint of 6 decimals", Actual: actual, Passed: ok})
	}
	for _, p := range []struct {
		name string
		id   chain.Address
	}{{"transmitter_program", e.TransmitterProgram}, {"minter_program", e.MinterProgram}} {
		a, err := e.Solana.GetAccountInfo(ctx, p.id, chain.Finalized)
		switch {
		case errors.Is(err, chain.ErrAccountNotFound):
			add(Check{Name: p.name, Expected: p.id.String() + " executable", Actual: "missing"})
		case err != nil:
			return fmt.Errorf("%s: %w", p.name, err)
		default:
			add(Check{Name: p.name, Expected: p.id.String() + " executable", Actual: "executable " + strconv.FormatBool(a.Executable),
				Passed: a.Executable})
		}
	}
	return nil
}

func deployed(has bool) string {
	if has {
		return "deployed"
	}
	return "no code"
}

// The package's job kinds. Rows in existing databases carry these names,
// payloads and keys, so none may change.
const (
	// JobVerify verifies one environment's configuration (payload
	// {"environment": "test"}); ScheduleNew enqueues it at start keyed
	// "cctp.verify:<env>:<config hash>". A run that could not read
	// everything fails the job, which retries.
	JobVerify = "cctp.verify"
	// JobVerifySchedule verifies every configured environment once every
	// Config.VerifyEvery.
	JobVerifySchedule = "cctp.verify.schedule"
)

// DefaultVerifyEvery is the readiness runs' period.
const DefaultVerifyEvery = time.Hour

// jobPayload is JobVerify's payload.
type jobPayload struct {
	Environment access.Environment `json:"environment"`
}

// Jobs returns the package's job kinds, of the money class.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobVerify, Class: jobs.ClassMoney, HandlerFunc: s.verifyJob},
		{Name: JobVerifySchedule, Class: jobs.ClassMoney, HandlerFunc: s.scheduleJob, Every: s.cfg.VerifyEvery},
	}
}

// ScheduleNew enqueues a JobVerify of every configured environment keyed
// by its configuration's hash, so a new configuration is proven once
// across every host.
func (s *Service) ScheduleNew(ctx context.Context, run jobs.RunFunc) error {
	if len(s.envs) == 0 {
		return nil
	}
	return run(ctx, func(st jobs.Scheduler) error {
		for _, env := range []access.Environment{access.Test, access.Live} {
			e, ok := s.envs[env]
			if !ok {
				continue
			}
			payload, _ := json.Marshal(jobPayload{Environment: env})
			if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobVerify, Payload: payload,
				UniqueKey: JobVerify + ":" + string(env) + ":" + e.Hash()}); err != nil {
				return err
			}
		}
		return nil
	})
}

// verifyJob verifies one environment; an unreadable run fails the job.
func (s *Service) verifyJob(ctx context.Context, j jobs.Job) error {
	var in jobPayload
	if err := json.Unmarshal(j.Payload, &in); err != nil || !in.Environment.Valid() {
		return fmt.Errorf("%s: bad payload %q", JobVerify, j.Payload)
	}
	r, ok, err := s.Verify(ctx, in.Environment)
	if err != nil {
		return err
	}
	if ok && r.Unreadable {
		return fmt.Errorf("%s: %s", JobVerify, r.Error)
	}
	return nil
}

// scheduleJob verifies every configured environment.
func (s *Service) scheduleJob(ctx context.Context, _ jobs.Job) error {
	for _, env := range []access.Environment{access.Test, access.Live} {
		if _, _, err := s.Verify(ctx, env); err != nil {
			return err
		}
	}
	return nil
}
