package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// The protocol's job kinds (Jobs).
const (
	// JobWatch finishes a settlement whose request did not (payload
	// {"id"}; key "x402.watch:<id>:start", then "x402.watch:<id>:<time>"
	// every WatchEvery while its outcome is unknown).
	JobWatch = "x402.watch"
	// JobCheck checks every configured environment's configuration, once
	// every CheckEvery and at start for a configuration not yet checked.
	JobCheck = "x402.check"
)

// Jobs returns the protocol's job kinds, in the money class.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobWatch, Class: jobs.ClassMoney, HandlerFunc: s.watchJob},
		{Name: JobCheck, Class: jobs.ClassMoney, HandlerFunc: s.checkJob, Every: s.cfg.CheckEvery},
	}
}

// watchRef is the payload of the watch.
type watchRef struct {
	ID string `json:"id"`
}

// enqueueWatch enqueues the watch of settlement id at runAt, once per
// key.
func enqueueWatch(ctx context.Context, st jobs.Enqueuer, id, key string, runAt time.Time) error {
	payload, _ := json.Marshal(watchRef{ID: id})
	_, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobWatch, Payload: payload, RunAt: runAt, UniqueKey: JobWatch + ":" + id + ":" + key})
	return err
}

// watchJob asks the facilitator again about a settlement still
// SUBMITTING and records what it establishes; while nothing is, it
// watches again WatchEvery later.
func (s *Service) watchJob(ctx context.Context, j jobs.Job) error {
	var in watchRef
	if err := json.Unmarshal(j.Payload, &in); err != nil || in.ID == "" {
		return fmt.Errorf("%s: bad payload %q", JobWatch, j.Payload)
	}
	set, err := s.cfg.ReadFunc().X402Settlement(ctx, in.ID)
	if err != nil {
		return err
	}
	if set.State.Final() {
		return nil
	}
	e, ok := s.env(set.Scope.Environment)
	if !ok {
		s.cfg.Logger.Warn("x402 watch: the environment is no longer configured", "settlement", set.ID)
		return nil
	}
	_, err = s.resume(ctx, e, set, false)
	if err == nil {
		return nil
	}
	if !fault.Is(err, fault.SubmissionUncertain) && !fault.Is(err, fault.ProviderUnavailable) {
		return err
	}
	return s.cfg.Run(ctx, func(st Store) error {
		return enqueueWatch(ctx, st, set.ID, st.Now().Format(time.RFC3339Nano), st.Now().Add(s.cfg.WatchEvery))
	})
}

// ScheduleNew enqueues a check now when a configured environment's
// configuration has no check yet (once per start of a host: a
// configuration seen before, then replaced, is checked again when it
// comes back).
func (s *Service) ScheduleNew(ctx context.Context, run jobs.RunFunc) error {
	read := s.cfg.ReadFunc()
	due := false
	for _, env := range []access.Environment{access.Test, access.Live} {
		e, ok := s.env(env)
		if !ok {
			continue
		}
		c, err := s.check(ctx, read, env, e)
		if err != nil {
			return fmt.Errorf("x402: schedule the check: %w", err)
		}
		due = due || c == nil
	}
	if !due {
		return nil
	}
	return run(ctx, func(st jobs.Scheduler) error {
		_, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobCheck, UniqueKey: JobCheck + ":start:" + st.Now().Format(time.RFC3339Nano)})
		return err
	})
}

// checkJob checks every configured environment and stores each check.
func (s *Service) checkJob(ctx context.Context, _ jobs.Job) error {
	for _, env := range []access.Environment{access.Test, access.Live} {
		e, ok := s.env(env)
		if !ok {
			continue
		}
		c := s.Check(ctx, env, e)
		if err := s.cfg.Run(ctx, func(st Store) error { return st.X402CheckSave(ctx, c) }); err != nil {
			return err
		}
	}
	return nil
}

// Check verifies e, env's configuration, on its cluster and facilitator,
// in order, stopping at the first failure (its reason, Check*): the
// cluster answers (its CAIP-2 id), the facilitator lists exact on it with
// a fee payer, the asset is a mint with the configured decimals, payTo
// holds a token account of it under the mint's program, and the fee payer
// holds lamports. Nothing is written.
func (s *Service) Check(ctx context.Context, env access.Environment, e Environment) Check {
	c := Check{Environment: env, ConfigHash: e.configHash(), CheckedAt: s.cfg.Clock.Now()}
	fail := func(reason string) Check { c.Reason = reason; return c }
	gh, err := e.Chain.GetGenesisHash(ctx)
	if err != nil {
		return fail(CheckClusterUnavailable)
	}
	c.Network = chain.Network{GenesisHash: gh}.CAIP2()
	sup, err := e.Facilitator.Supported(ctx)
	if err != nil {
		return fail(CheckFacilitatorUnavailable)
	}
	fp, ok := sup.FeePayer(c.Network)
	if !ok {
		return fail(CheckFacilitatorUnsupported)
	}
	feePayer, err := token2022.ParsePublicKey(fp)
	if err != nil {
		return fail(CheckFacilitatorUnsupported)
	}
	c.FeePayer = fp
	read := func(a chain.Address) (*chain.AccountInfo, error) {
		info, err := e.Chain.GetAccountInfo(ctx, a, chain.Confirmed)
		if errors.Is(err, chain.ErrAccountNotFound) {
			return nil, nil
		}
		return &info, err
	}
	mintInfo, err := read(e.Asset)
	if err != nil {
		return fail(CheckClusterUnavailable)
	}
	if mintInfo == nil {
		return fail(CheckMintMissing)
	}
	mint, err := token2022.DecodeMint(mintInfo.Data)
	if err != nil || !mint.IsInitialized {
		return fail(CheckMintMissing)
	}
	c.TokenProgram = mintInfo.Owner.String()
	if mint.Decimals != e.Decimals {
		return fail(CheckDecimalsMismatch)
	}
	dst, err := read(token2022.AssociatedTokenAddressFor(e.PayTo, e.Asset, mintInfo.Owner))
	if err != nil {
		return fail(CheckClusterUnavailable)
	}
	if acct, ok := tokenAccount(dst, mintInfo.Owner, e.Asset); !ok || acct.Owner != e.PayTo {
		return fail(CheckPayToAccountMissing)
	}
	payer, err := read(feePayer)
	if err != nil {
		return fail(CheckClusterUnavailable)
	}
	if payer == nil || payer.Lamports == 0 {
		return fail(CheckFeePayerUnfunded)
	}
	c.Passed = true
	return c
}
