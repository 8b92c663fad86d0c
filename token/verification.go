package token

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/jobs"
)

// The registry's job kinds (Verification.Jobs). Rows in existing
// databases carry these names, payloads and keys, so none may change.
const (
	// JobVerify verifies one environment's registry and then what depends
	// on it (payload {"environment": "test"}). Verification.ScheduleNew
	// enqueues it at start, keyed
	// "token.verify:<env>:<registry hash>:<dependents' hash>", for a
	// configuration that was not verified yet.
	JobVerify = "token.verify"
	// JobVerifySchedule verifies every configured registry, and every
	// environment's dependents, once every Verification.Every.
	JobVerifySchedule = "token.verify.schedule"
)

// DefaultVerifyEvery is the scheduled verification's period when
// Verification.Every is zero.
const DefaultVerifyEvery = time.Hour

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Dependent is verification that follows the registry's, in the same
// jobs: the token sales (package token/sale), whose production mint counts
// as verified only when the registry verified that same mint.
type Dependent interface {
	// Configured reports whether env has anything to verify.
	Configured(env access.Environment) bool
	// ConfigHash identifies env's configuration, so that a changed one is
	// verified at the next start.
	ConfigHash(env access.Environment) string
	// VerifyAfter verifies env against the registry's view v (read after
	// the registry's own run was stored) and stores each run. Chain reads
	// happen outside any unit of work.
	VerifyAfter(ctx context.Context, env access.Environment, v View) error
}

// Verification runs the registry's verification as durable jobs: on
// demand (VerifyToken), at start for a configuration not verified yet
// (ScheduleNew) and every Every (the periodic JobVerifySchedule), each
// followed by the Dependent's. Every run is stored, whatever its outcome.
type Verification struct {
	// Registry is the token registry. Required.
	Registry *Service
	// Dependent verifies what depends on the registry; nil means nothing.
	Dependent Dependent
	// RunFunc stores runs in a unit of work; ReadFunc returns the read
	// pool the Dependent's view is read from. Required.
	RunFunc  RunFunc
	ReadFunc func() Store
	// Every is the scheduled verification's period; zero means
	// DefaultVerifyEvery.
	Every time.Duration
	// Logger receives the runs that could not read the cluster; nil
	// discards them.
	Logger *slog.Logger
}

// jobPayload is the payload of JobVerify.
type jobPayload struct {
	Environment access.Environment `json:"environment"`
}

// Jobs returns the registry's job kinds, both of the money class; the
// schedule is periodic.
func (v Verification) Jobs() []jobs.Kind {
	every := v.Every
	if every <= 0 {
		every = DefaultVerifyEvery
	}
	return []jobs.Kind{
		{Name: JobVerify, Class: jobs.ClassMoney, HandlerFunc: v.verifyJob},
		{Name: JobVerifySchedule, Class: jobs.ClassMoney, HandlerFunc: v.scheduleJob, Every: every},
	}
}

// ScheduleNew enqueues, in one unit of work, a JobVerify of every
// environment whose registry or dependents are configured, keyed by the
// configuration: a new or changed configuration is verified once, across
// every host, and an unchanged one is not verified again at start.
func (v Verification) ScheduleNew(ctx context.Context, run jobs.RunFunc) error {
	return run(ctx, func(st jobs.Scheduler) error {
		for _, env := range []access.Environment{access.Test, access.Live} {
			cfg := v.Registry.Config(env)
			if !cfg.Configured() && !v.dependentConfigured(env) {
				continue
			}
			payload, _ := json.Marshal(jobPayload{Environment: env})
			dep := ""
			if v.Dependent != nil {
				dep = v.Dependent.ConfigHash(env)
			}
			if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobVerify, Payload: payload,
				UniqueKey: JobVerify + ":" + string(env) + ":" + cfg.Hash() + ":" + dep}); err != nil {
				return err
			}
		}
		return nil
	})
}

// VerifyToken runs the registry's verification of env now: it reads the
// configured mint from env's cluster (outside any unit of work) and stores
// the run, whatever its outcome. A run that could not read the cluster is
// stored as ERROR, moves nothing and is logged.
func (v Verification) VerifyToken(ctx context.Context, env access.Environment) (Run, error) {
	if !env.Valid() {
		return Run{}, fmt.Errorf("token: verify: unknown environment %q", env)
	}
	r := v.Registry.Verify(ctx, env)
	err := v.RunFunc(ctx, func(st Store) error {
		var err error
		r, err = st.TokenRunInsert(ctx, r)
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("token: store the run: %w", err)
	}
	if r.Outcome == Errored && v.Logger != nil {
		v.Logger.Warn("token verification could not read the cluster", "environment", string(env), "code", r.ErrorCode)
	}
	return r, nil
}

// VerifyDependent runs the Dependent's verification of env now, against
// the registry's view as stored.
func (v Verification) VerifyDependent(ctx context.Context, env access.Environment) error {
	if !v.dependentConfigured(env) {
		return nil
	}
	view, err := v.Registry.View(ctx, env, v.ReadFunc())
	if err != nil {
		return fmt.Errorf("token: verify dependents: %w", err)
	}
	return v.Dependent.VerifyAfter(ctx, env, view)
}

// dependentConfigured reports whether the Dependent has anything to
// verify in env.
func (v Verification) dependentConfigured(env access.Environment) bool {
	return v.Dependent != nil && v.Dependent.Configured(env)
}

// verifyJob verifies one environment's registry, then its dependents.
func (v Verification) verifyJob(ctx context.Context, j jobs.Job) error {
	var in jobPayload
	if err := json.Unmarshal(j.Payload, &in); err != nil || !in.Environment.Valid() {
		return fmt.Errorf("token.verify: bad payload %q", j.Payload)
	}
	if _, err := v.VerifyToken(ctx, in.Environment); err != nil {
		return err
	}
	return v.VerifyDependent(ctx, in.Environment)
}

// scheduleJob verifies every configured registry and every environment's
// dependents; a failure fails the job, which is retried before the next
// period is planned.
func (v Verification) scheduleJob(ctx context.Context, _ jobs.Job) error {
	for _, env := range []access.Environment{access.Test, access.Live} {
		if v.Registry.Config(env).Configured() {
			if _, err := v.VerifyToken(ctx, env); err != nil {
				return err
			}
		}
		if err := v.VerifyDependent(ctx, env); err != nil {
			return err
		}
	}
	return nil
}
