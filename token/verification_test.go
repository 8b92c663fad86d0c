package token_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/token"
)

// dependent records what the registry's jobs hand it.
type dependent struct {
	configured map[access.Environment]bool
	views      []token.View
	err        error
}

func (d *dependent) Configured(env access.Environment) bool   { return d.configured[env] }
func (d *dependent) ConfigHash(env access.Environment) string { return "dep-" + string(env) }
func (d *dependent) VerifyAfter(_ context.Context, _ access.Environment, v token.View) error {
	d.views = append(d.views, v)
	return d.err
}

// scheduler is a unit of work over an in-memory jobs table.
type scheduler struct{ inserted []jobs.InsertParams }

func (s *scheduler) Now() time.Time { return now() }
func (s *scheduler) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	for _, q := range s.inserted {
		if q.UniqueKey == p.UniqueKey {
			return false, nil
		}
	}
	s.inserted = append(s.inserted, p)
	return true, nil
}
func (s *scheduler) run(_ context.Context, fn func(jobs.Scheduler) error) error { return fn(s) }

// verification is a registry configured in test only, with a dependent
// configured in live only, over an in-memory store.
func verification(t *testing.T, logs *bytes.Buffer) (token.Verification, *memStore, *dependent, *fakeChain, token.Config) {
	t.Helper()
	_, c, cfg := policy()
	svc, err := token.New(token.ServiceConfig{Clock: clockFunc(now), Environments: map[access.Environment]token.Environment{access.Test: {Config: cfg, Chain: c}}})
	if err != nil {
		t.Fatal(err)
	}
	st, dep := &memStore{}, &dependent{configured: map[access.Environment]bool{access.Live: true}}
	v := token.Verification{Registry: svc, Dependent: dep, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		RunFunc:  func(ctx context.Context, fn func(token.Store) error) error { return fn(st) },
		ReadFunc: func() token.Store { return st }}
	return v, st, dep, c, svc.Config(access.Test)
}

// TestVerificationKindsAndStartKeys: the two kinds, byte for byte, of the
// money class, the schedule hourly unless configured; at start a verify
// job per environment with a configured registry or dependents, keyed by
// both configurations, so a restart with the same ones enqueues nothing.
func TestVerificationKindsAndStartKeys(t *testing.T) {
	ctx := context.Background()
	v, _, _, _, cfg := verification(t, &bytes.Buffer{})
	ks := v.Jobs()
	if len(ks) != 2 || ks[0].Name != "token.verify" || ks[0].Every != 0 || ks[1].Name != "token.verify.schedule" || ks[1].Every != time.Hour ||
		ks[0].Class != jobs.ClassMoney || ks[1].Class != jobs.ClassMoney {
		t.Fatalf("kinds %+v", ks)
	}
	v.Every = 10 * time.Minute
	if ks := v.Jobs(); ks[1].Every != 10*time.Minute {
		t.Fatalf("configured period %v", ks[1].Every)
	}
	s := &scheduler{}
	for range 2 {
		if err := v.ScheduleNew(ctx, s.run); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.inserted) != 2 {
		t.Fatalf("start jobs %+v", s.inserted)
	}
	test, live := s.inserted[0], s.inserted[1]
	if test.Kind != "token.verify" || string(test.Payload) != `{"environment":"test"}` ||
		test.UniqueKey != "token.verify:test:"+cfg.Hash()+":dep-test" {
		t.Fatalf("test job %+v", test)
	}
	unconfigured := v.Registry.Config(access.Live).Hash()
	if string(live.Payload) != `{"environment":"live"}` || live.UniqueKey != "token.verify:live:"+unconfigured+":dep-live" {
		t.Fatalf("live job %+v", live)
	}
}

// TestVerifyJobStoresTheRunThenVerifiesDependents: the verify job stores
// the registry's run and hands the dependents the view that run makes; a
// run that cannot read the cluster is stored as ERROR and logged; a bad
// payload fails the job.
func TestVerifyJobStoresTheRunThenVerifiesDependents(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	v, st, dep, c, _ := verification(t, &logs)
	dep.configured[access.Test] = true
	handlers, err := jobs.Handlers(v.Jobs(), (&scheduler{}).run)
	if err != nil {
		t.Fatal(err)
	}
	if err := handlers["token.verify"](ctx, jobs.Job{Kind: "token.verify", Payload: []byte(`{"environment":"test"}`)}); err != nil {
		t.Fatal(err)
	}
	if len(st.runs) != 1 || st.runs[0].Outcome != token.Passed || len(dep.views) != 1 || !dep.views[0].Verified() ||
		dep.views[0].Decisive.ID != st.runs[0].ID {
		t.Fatalf("runs %+v, views %+v", st.runs, dep.views)
	}
	c.err = chain.ErrUnavailable
	r, err := v.VerifyToken(ctx, access.Test)
	if err != nil || r.Outcome != token.Errored || len(st.runs) != 2 || !strings.Contains(logs.String(), "could not read the cluster") {
		t.Fatalf("unreadable cluster: %+v %v, log %q", r, err, logs.String())
	}
	for _, p := range []string{`{"environment":"staging"}`, `nope`} {
		if err := handlers["token.verify"](ctx, jobs.Job{Kind: "token.verify", Payload: []byte(p)}); err == nil {
			t.Fatalf("payload %s accepted", p)
		}
	}
	if _, err := v.VerifyToken(ctx, "staging"); err == nil {
		t.Fatal("an unknown environment was verified")
	}
}

// TestScheduleJobVerifiesConfiguredRegistriesAndAllDependents: the
// periodic run verifies only configured registries, every environment's
// configured dependents, plans its next period on success, and fails (so
// it is retried) when a dependent fails.
func TestScheduleJobVerifiesConfiguredRegistriesAndAllDependents(t *testing.T) {
	ctx := context.Background()
	v, st, dep, _, _ := verification(t, &bytes.Buffer{})
	s := &scheduler{}
	handlers, err := jobs.Handlers(v.Jobs(), s.run)
	if err != nil {
		t.Fatal(err)
	}
	run := handlers["token.verify.schedule"]
	if err := run(ctx, jobs.Job{Kind: "token.verify.schedule"}); err != nil {
		t.Fatal(err)
	}
	if len(st.runs) != 1 || st.runs[0].Environment != access.Test || len(dep.views) != 1 || dep.views[0].Environment != access.Live {
		t.Fatalf("runs %+v, dependents saw %+v", st.runs, dep.views)
	}
	if len(s.inserted) != 1 || s.inserted[0].UniqueKey != "token.verify.schedule:2026-11-23T01:00:00Z" {
		t.Fatalf("next period %+v", s.inserted)
	}
	dep.err = errors.New("sale chain unreadable")
	if err := run(ctx, jobs.Job{Kind: "token.verify.schedule"}); !errors.Is(err, dep.err) || len(s.inserted) != 1 {
		t.Fatalf("failing dependent: %v, jobs %+v", err, s.inserted)
	}
}
