package jobs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// gate holds handlers until their job's payload is released, recording
// which payloads started.
type gate struct {
	mu       sync.Mutex
	started  []string
	released map[string]chan struct{}
}

func newGate() *gate { return &gate{released: map[string]chan struct{}{}} }

func (g *gate) ch(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.released[name]
	if !ok {
		c = make(chan struct{})
		g.released[name] = c
	}
	return c
}

func (g *gate) release(name string) { close(g.ch(name)) }

func (g *gate) handler(ctx context.Context, job jobs.Job) error {
	name := string(job.Payload)
	g.mu.Lock()
	g.started = append(g.started, name)
	g.mu.Unlock()
	select {
	case <-g.ch(name):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) hasStarted(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.started {
		if s == name {
			return true
		}
	}
	return false
}

// state reads the state of the only job whose payload is name.
func state(t *testing.T, db *store.DB, name string) jobs.State {
	t.Helper()
	recs, err := db.Read().JobList(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if string(r.Payload) == name {
			return r.State
		}
	}
	t.Fatalf("no job %s", name)
	return ""
}

// TestClassWorkersAreIsolated: the audio class's only worker is held by a
// long handler; a provider job enqueued after it is claimed and finishes
// while the audio handler still runs, and Backlog shows the audio job that
// waits for a worker ageing while the provider class has none waiting.
func TestClassWorkersAreIsolated(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		g := newGate()
		p := newPool(t, jobs.Config{
			Store: db.Jobs(), PollInterval: 10 * time.Millisecond, Lease: time.Hour,
			Handlers: map[string]jobs.Handler{"sound.run": g.handler, "generation.dispatch": g.handler},
			Classes: []jobs.Class{
				{Name: "audio", Kinds: []string{"sound.run"}, Workers: 1},
				{Name: "provider", Kinds: []string{"generation.dispatch"}, Workers: 1},
			},
		})
		enqueue(t, db, jobs.InsertParams{Kind: "sound.run", Payload: []byte(`"analysis1"`), RunAt: storetest.Epoch.Add(-time.Millisecond)},
			jobs.InsertParams{Kind: "sound.run", Payload: []byte(`"analysis2"`)})
		start(t, p)
		waitFor(t, "the first analysis to run", func() bool { return g.hasStarted(`"analysis1"`) })

		clock.Advance(time.Minute)
		enqueue(t, db, jobs.InsertParams{Kind: "generation.dispatch", Payload: []byte(`"generation"`)})
		p.Notify()
		g.release(`"generation"`)
		waitFor(t, "the generation job to succeed", func() bool { return state(t, db, `"generation"`) == jobs.Succeeded })
		if st := state(t, db, `"analysis1"`); st != jobs.Running || g.hasStarted(`"analysis2"`) {
			t.Fatalf("analysis1 %s, analysis2 started %v: want the audio worker still held", st, g.hasStarted(`"analysis2"`))
		}
		bl, err := p.Backlog(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(bl) != 2 || bl[0].Class != "audio" || bl[0].Runnable != 1 || bl[0].Age != time.Minute ||
			bl[1].Class != "provider" || bl[1].Runnable != 0 || bl[1].Age != 0 {
			t.Fatalf("Backlog = %+v, want audio's second job a minute old, provider empty", bl)
		}
		h := p.Health()
		if len(h.Classes) != 2 || h.Classes[0].InFlight != 1 || h.Classes[1].InFlight != 0 || h.InFlight != 1 {
			t.Fatalf("Health = %+v", h)
		}
		g.release(`"analysis1"`)
		g.release(`"analysis2"`)
		waitFor(t, "both analyses to succeed", func() bool {
			return state(t, db, `"analysis1"`) == jobs.Succeeded && state(t, db, `"analysis2"`) == jobs.Succeeded
		})
	})
}

// TestGroupLimitHoldsSecondJobOfGroup: with a per-group limit of 1 and
// enough workers, group g's second job waits until its first finishes,
// while group h's job runs beside g's first.
func TestGroupLimitHoldsSecondJobOfGroup(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		g := newGate()
		p := newPool(t, jobs.Config{
			Store: db.Jobs(), PollInterval: 10 * time.Millisecond,
			Handlers: map[string]jobs.Handler{"sound.run": g.handler},
			Classes:  []jobs.Class{{Name: "audio", Kinds: []string{"sound.run"}, Workers: 3, GroupLimit: 1}},
		})
		at := func(ms int) time.Time { return storetest.Epoch.Add(time.Duration(ms) * time.Millisecond) }
		enqueue(t, db,
			jobs.InsertParams{Kind: "sound.run", Group: "g", Payload: []byte(`"g1"`), RunAt: at(0)},
			jobs.InsertParams{Kind: "sound.run", Group: "g", Payload: []byte(`"g2"`), RunAt: at(1)},
			jobs.InsertParams{Kind: "sound.run", Group: "h", Payload: []byte(`"h1"`), RunAt: at(2)})
		clock.Advance(time.Second)
		start(t, p)
		waitFor(t, "g1 and h1 to run", func() bool { return g.hasStarted(`"g1"`) && g.hasStarted(`"h1"`) })
		// The dispatcher has a free worker: let it claim twice more, so a
		// claim that began after g1 and h1 ran has seen g2.
		for range 2 {
			last := p.Health().LastPoll
			waitFor(t, "another claim", func() bool { return p.Health().LastPoll.After(last) })
		}
		if g.hasStarted(`"g2"`) || state(t, db, `"g2"`) != jobs.Available {
			t.Fatalf("g2 ran beside g1 under a group limit of 1 (state %s)", state(t, db, `"g2"`))
		}
		g.release(`"h1"`)
		waitFor(t, "h1 to succeed", func() bool { return state(t, db, `"h1"`) == jobs.Succeeded })
		if g.hasStarted(`"g2"`) {
			t.Fatal("g2 started when h1, not g1, finished")
		}
		g.release(`"g1"`)
		waitFor(t, "g2 to run after g1", func() bool { return g.hasStarted(`"g2"`) })
		if st := state(t, db, `"g1"`); st != jobs.Succeeded {
			t.Fatalf("g1 = %s when g2 started", st)
		}
		g.release(`"g2"`)
		waitFor(t, "g2 to succeed", func() bool { return state(t, db, `"g2"`) == jobs.Succeeded })
	})
}

// TestPermanentErrorDiscardsAfterOneAttempt: a handler error marked
// Permanent discards the job at once, with the error as last_error, even
// though attempts remain.
func TestPermanentErrorDiscardsAfterOneAttempt(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		var calls atomic.Int32
		p := newPool(t, jobs.Config{Store: db.Jobs(), Handlers: map[string]jobs.Handler{
			"sound.run": func(ctx context.Context, job jobs.Job) error {
				calls.Add(1)
				return jobs.Permanent(fault.E("sound.run", fault.InvalidInput, "the input cannot be decoded"))
			},
		}})
		enqueue(t, db, jobs.InsertParams{Kind: "sound.run"})
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunOnce = %d, %v", n, err)
		}
		r := only(t, db)
		if r.State != jobs.Discarded || r.Attempts != 1 || r.MaxAttempts != jobs.DefaultMaxAttempts ||
			!strings.Contains(r.LastError, "INVALID_INPUT") || r.FinishedAt.IsZero() {
			t.Fatalf("after a permanent failure: %+v", r)
		}
		clock.Advance(jobs.MaxBackoff)
		if n, err := p.RunOnce(context.Background()); n != 0 || err != nil || calls.Load() != 1 {
			t.Fatalf("RunOnce later = %d, %v, calls %d; want the job never run again", n, err, calls.Load())
		}
	})
}

// TestTransientErrorRetries: an ordinary handler error fails the attempt
// and the job runs again after its backoff, succeeding the second time.
func TestTransientErrorRetries(t *testing.T) {
	forEachDialect(t, func(t *testing.T, db *store.DB, clock *storetest.Clock) {
		var calls atomic.Int32
		p := newPool(t, jobs.Config{Store: db.Jobs(), BackoffFunc: func(int) time.Duration { return 5 * time.Second },
			Handlers: map[string]jobs.Handler{
				"generation.dispatch": func(ctx context.Context, job jobs.Job) error {
					if calls.Add(1) == 1 {
						return errors.New("provider: 503")
					}
					return nil
				},
			}})
		enqueue(t, db, jobs.InsertParams{Kind: "generation.dispatch"})
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("RunOnce = %d, %v", n, err)
		}
		if r := only(t, db); r.State != jobs.Available || r.Attempts != 1 || r.LastError != "provider: 503" ||
			!r.RunAt.Equal(storetest.Epoch.Add(5*time.Second)) {
			t.Fatalf("after a transient failure: %+v", r)
		}
		clock.Advance(5 * time.Second)
		if n, err := p.RunOnce(context.Background()); n != 1 || err != nil {
			t.Fatalf("retry RunOnce = %d, %v", n, err)
		}
		if r := only(t, db); r.State != jobs.Succeeded || r.Attempts != 2 || calls.Load() != 2 {
			t.Fatalf("after the retry: %+v, calls %d", r, calls.Load())
		}
	})
}

func TestPermanentMarksAndUnwraps(t *testing.T) {
	if jobs.Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
	base := fault.E("sound.run", fault.InvalidInput, "bad")
	err := jobs.Permanent(base)
	if !jobs.IsPermanent(err) || !jobs.IsPermanent(errors.Join(errors.New("ctx"), err)) || !fault.Is(err, fault.InvalidInput) ||
		err.Error() != base.Error() {
		t.Errorf("Permanent(%v) = %v", base, err)
	}
	if jobs.IsPermanent(base) || jobs.IsPermanent(nil) {
		t.Error("an unmarked error reads as permanent")
	}
}

func TestNewValidatesClasses(t *testing.T) {
	db := storetest.OpenSQLite(t, nil)
	h := func(context.Context, jobs.Job) error { return nil }
	handlers := map[string]jobs.Handler{"a": h, "b": h}
	for name, classes := range map[string][]jobs.Class{
		"kind without class":    {{Name: "x", Kinds: []string{"a"}}},
		"kind in two classes":   {{Name: "x", Kinds: []string{"a", "b"}}, {Name: "y", Kinds: []string{"b"}}},
		"kind without handler":  {{Name: "x", Kinds: []string{"a", "b", "c"}}},
		"class named twice":     {{Name: "x", Kinds: []string{"a"}}, {Name: "x", Kinds: []string{"b"}}},
		"class without name":    {{Kinds: []string{"a", "b"}}},
		"class without kinds":   {{Name: "x", Kinds: []string{"a", "b"}}, {Name: "y"}},
		"negative group limit":  {{Name: "x", Kinds: []string{"a", "b"}, GroupLimit: -1}},
		"negative class budget": {{Name: "x", Kinds: []string{"a", "b"}, Workers: -1}},
	} {
		if _, err := jobs.New(jobs.Config{Store: db.Jobs(), Handlers: handlers, Classes: classes}); !fault.Is(err, fault.InvalidInput) {
			t.Errorf("%s: New = %v, want INVALID_INPUT", name, err)
		}
	}
	p := newPool(t, jobs.Config{Store: db.Jobs(), Handlers: handlers, Workers: 3,
		Classes: []jobs.Class{{Name: "x", Kinds: []string{"a"}}, {Name: "y", Kinds: []string{"b"}, Workers: 1, GroupLimit: 2}}})
	cs := p.Classes()
	if len(cs) != 2 || cs[0].Workers != 3 || cs[1].Workers != 1 || cs[1].GroupLimit != 2 {
		t.Fatalf("Classes = %+v, want x with Config.Workers and y with its own budget", cs)
	}
	if d := newPool(t, jobs.Config{Store: db.Jobs()}).Classes(); len(d) != 1 || d[0].Name != jobs.DefaultClass || d[0].Workers != 4 || d[0].Kinds != nil {
		t.Fatalf("default classes = %+v", d)
	}
}
