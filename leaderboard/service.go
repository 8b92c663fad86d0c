package leaderboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/policy"
)

// JobSnapshot is the snapshot job's kind (package doc, Snapshots). Rows
// in existing databases carry the name and payloads, so neither changes:
// the periodic run's payload is {} (every environment, as of the start of
// its period); an enqueued run's is {"environment": "live", "asOf":
// "<RFC 3339 time>"}, keyed "leaderboard.snapshot:<env>:<asOf>".
const JobSnapshot = "leaderboard.snapshot"

// DefaultEvery is the period of the scheduled snapshots when Config.Every
// is zero.
const DefaultEvery = 24 * time.Hour

// Store is the unit of work that writes a snapshot; package store
// implements it. Errors are *fault.Error.
type Store interface {
	policy.Store
	// NewID returns a new id with prefix.
	NewID(prefix string) string
	// Now is the unit of work's time.
	Now() time.Time
	// LeaderboardSnapshotInsert stores s and its entries; when env already
	// has a snapshot of s's window end it stores nothing and returns
	// inserted false.
	LeaderboardSnapshotInsert(ctx context.Context, s Snapshot, entries []Entry) (inserted bool, err error)
}

// SourceStore is what a computation reads, on the read pool; package
// store implements it. Errors are *fault.Error.
type SourceStore interface {
	policy.Store
	// LeaderboardCounts returns, per tenant, workspace and user, the
	// number of env's rows of signal whose event time is after start and
	// at most end (package doc, Signals), leaving out users with none.
	// INVALID_INPUT for a signal it does not count.
	LeaderboardCounts(ctx context.Context, env access.Environment, signal Signal, start, end time.Time) ([]Count, error)
}

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Config configures a Service.
type Config struct {
	// RunFunc writes snapshots. Required.
	RunFunc RunFunc
	// ReadFunc returns the read pool computations count on. Required.
	ReadFunc func() SourceStore
	// Every is the period of the scheduled snapshots; zero means
	// DefaultEvery.
	Every time.Duration
	// Default is the scoring published where an environment has none;
	// the zero value means DefaultScoring.
	Default Scoring
	// Logger receives each snapshot written; nil discards.
	Logger *slog.Logger
}

// Service computes snapshots and explains positions. It is safe for
// concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service; it refuses a Config without its functions, a
// negative period or an invalid default scoring.
func New(cfg Config) (*Service, error) {
	if cfg.RunFunc == nil || cfg.ReadFunc == nil {
		return nil, errors.New("leaderboard: RunFunc and ReadFunc are required")
	}
	if cfg.Every < 0 {
		return nil, errors.New("leaderboard: Every must not be negative")
	}
	if cfg.Every == 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Default.Weights == nil {
		cfg.Default = DefaultScoring()
	}
	if err := cfg.Default.Validate(); err != nil {
		return nil, fmt.Errorf("leaderboard: default scoring: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg}, nil
}

// Every returns the period of the scheduled snapshots.
func (s *Service) Every() time.Duration { return s.cfg.Every }

// Seed publishes the default scoring as env's policy where env has none,
// in one unit of work.
func (s *Service) Seed(ctx context.Context, env access.Environment) error {
	return s.cfg.RunFunc(ctx, func(st Store) error { return SeedScoring(ctx, st, env, s.cfg.Default) })
}

// Jobs returns the snapshot job's kind: periodic (every Every), of the
// maintenance class.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{{Name: JobSnapshot, Class: jobs.ClassMaintenance, HandlerFunc: s.snapshotJob, Every: s.cfg.Every}}
}

// payload is an enqueued snapshot job's payload; the periodic run's is
// empty.
type payload struct {
	Environment access.Environment `json:"environment,omitempty"`
	AsOf        time.Time          `json:"asOf,omitzero"`
}

// Enqueue enqueues, on st's unit of work, a snapshot of env as of st's
// now, and returns that time. Enqueued again at the same time, it
// enqueues nothing more. INVALID_INPUT for an unknown environment.
func (s *Service) Enqueue(ctx context.Context, st jobs.Scheduler, env access.Environment) (time.Time, error) {
	const op = "leaderboard.Enqueue"
	if !env.Valid() {
		return time.Time{}, fault.Invalid(op, "environment", "The environment must be test or live.")
	}
	asOf := st.Now().UTC()
	b, err := json.Marshal(payload{Environment: env, AsOf: asOf})
	if err != nil {
		return time.Time{}, fault.Wrap(op, err)
	}
	if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobSnapshot, Payload: b,
		UniqueKey: JobSnapshot + ":" + string(env) + ":" + asOf.Format(time.RFC3339Nano)}); err != nil {
		return time.Time{}, fault.Wrap(op, err)
	}
	return asOf, nil
}

// snapshotJob computes the snapshot its payload names, or, for the
// periodic run, each environment's as of the start of the run's period
// (a retry within the period computes the same one).
func (s *Service) snapshotJob(ctx context.Context, j jobs.Job) error {
	var in payload
	if err := json.Unmarshal(j.Payload, &in); err != nil {
		return jobs.Permanent(fmt.Errorf("leaderboard.snapshot: bad payload %q: %w", j.Payload, err))
	}
	if in.Environment == "" {
		asOf := j.RunAt.UTC().Truncate(s.cfg.Every)
		for _, env := range []access.Environment{access.Test, access.Live} {
			if _, _, err := s.Compute(ctx, env, asOf); err != nil {
				return err
			}
		}
		return nil
	}
	if !in.Environment.Valid() || in.AsOf.IsZero() {
		return jobs.Permanent(fmt.Errorf("leaderboard.snapshot: bad payload %q", j.Payload))
	}
	_, _, err := s.Compute(ctx, in.Environment, in.AsOf)
	return err
}

// Compute computes env's snapshot as of asOf under env's current scoring
// policy (published first from the default where env has none) and writes
// it with its entries in one unit of work. It returns the snapshot and
// whether this call wrote it: when env has a snapshot of that window end
// already, it writes nothing and returns false.
func (s *Service) Compute(ctx context.Context, env access.Environment, asOf time.Time) (Snapshot, bool, error) {
	const op = "leaderboard.Compute"
	if !env.Valid() {
		return Snapshot{}, false, fault.Invalid(op, "environment", "The environment must be test or live.")
	}
	src := s.cfg.ReadFunc()
	sc := policy.Scope{Environment: env}
	v, err := policy.Current(ctx, src, sc, PolicyID)
	if fault.Is(err, fault.NotFound) {
		if err := s.Seed(ctx, env); err != nil {
			return Snapshot{}, false, fault.Wrap(op, err)
		}
		v, err = policy.Current(ctx, src, sc, PolicyID)
	}
	if err != nil {
		return Snapshot{}, false, fault.Wrap(op, err)
	}
	scoring, err := decodeScoring(v)
	if err != nil {
		return Snapshot{}, false, fault.Wrap(op, err)
	}
	start, end := scoring.Window(asOf)
	counts := map[Signal][]Count{}
	for _, sig := range scoring.Counted() {
		cs, err := src.LeaderboardCounts(ctx, env, sig, start, end)
		if err != nil {
			return Snapshot{}, false, fault.Wrap(op, err)
		}
		counts[sig] = cs
	}
	snap := Snapshot{Environment: env, Policy: v.Ref(), WindowStart: start, WindowEnd: end}
	var inserted bool
	err = s.cfg.RunFunc(ctx, func(st Store) error {
		snap.ID, snap.ComputedAt = st.NewID(IDPrefix), st.Now()
		entries := Rank(snap.ID, env, scoring, counts)
		snap.Subjects, snap.Workspaces = len(entries), workspaces(entries)
		var err error
		inserted, err = st.LeaderboardSnapshotInsert(ctx, snap, entries)
		return err
	})
	if err != nil {
		return Snapshot{}, false, fault.Wrap(op, err)
	}
	if inserted {
		s.cfg.Logger.Info("leaderboard snapshot computed", "snapshot", snap.ID, "environment", string(env),
			"policyVersion", snap.Policy.Version, "windowEnd", end, "workspaces", snap.Workspaces, "subjects", snap.Subjects)
	}
	return snap, inserted, nil
}

// workspaces counts the distinct workspaces of entries, which Rank
// orders by workspace.
func workspaces(entries []Entry) int {
	n := 0
	for i, e := range entries {
		if i == 0 || entries[i-1].Scope != e.Scope {
			n++
		}
	}
	return n
}
