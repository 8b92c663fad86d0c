package sound

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

// memStore is an in-memory Store: every method holds its lock alone, and
// a unit of work is its calls in order (no rollback).
type memStore struct {
	mu      sync.Mutex
	now     time.Time
	ids     int
	assets  map[string]asset.Asset
	ops     map[string]Operation
	outputs map[string][]Output
	jobs    []jobs.InsertParams
	events  []outbox.Event
	prov    map[string]asset.Provenance
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), assets: map[string]asset.Asset{},
		ops: map[string]Operation{}, outputs: map[string][]Output{}}
}

func (m *memStore) Now() time.Time { m.mu.Lock(); defer m.mu.Unlock(); return m.now }

// advance moves the store's clock.
func (m *memStore) advance(d time.Duration) { m.mu.Lock(); defer m.mu.Unlock(); m.now = m.now.Add(d) }

func (m *memStore) NewID(prefix string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids++
	return fmt.Sprintf("%s%d", prefix, m.ids)
}

func (m *memStore) AssetInsert(_ context.Context, a asset.Asset) (asset.Asset, error) {
	if a.ID == "" {
		a.ID = m.NewID("ast_")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a.CreatedAt = m.now
	m.assets[a.ID] = a
	return a, nil
}

func (m *memStore) AssetGet(_ context.Context, s asset.Scope, id string) (asset.Asset, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.assets[id]
	if !ok || a.Scope != s {
		return asset.Asset{}, fault.E("memStore.AssetGet", fault.NotFound, "No such asset.")
	}
	return a, nil
}

func (m *memStore) AssetReferenced(context.Context, string) (bool, error) { return true, nil }

func (m *memStore) AssetProvenanceInsert(_ context.Context, p asset.Provenance) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prov == nil {
		m.prov = map[string]asset.Provenance{}
	}
	m.prov[p.AssetID] = p
	return nil
}

func (m *memStore) AssetStorageAdd(context.Context, asset.Scope, int64, int64) (int64, bool, error) {
	return 0, true, nil
}

func (m *memStore) AssetStorageUsed(context.Context, asset.Scope) (int64, error) { return 0, nil }

func (m *memStore) JobInsert(_ context.Context, p jobs.InsertParams) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jobs = append(m.jobs, p)
	return true, nil
}

func (m *memStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
	return e, nil
}

func (m *memStore) SoundOperationInsert(_ context.Context, o Operation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ops[o.ID] = o
	return nil
}

func (m *memStore) SoundOperationGet(ctx context.Context, sc access.Scope, id string) (Operation, error) {
	o, err := m.SoundOperationLock(ctx, id)
	if err == nil && o.Scope != sc {
		return Operation{}, fault.E("memStore.SoundOperationGet", fault.NotFound, "No such operation.")
	}
	return o, err
}

func (m *memStore) SoundOperationLock(_ context.Context, id string) (Operation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.ops[id]
	if !ok {
		return Operation{}, fault.E("memStore.SoundOperationLock", fault.NotFound, "No such operation.")
	}
	return o, nil
}

func (m *memStore) SoundOperationStatus(ctx context.Context, id string) (Status, error) {
	o, err := m.SoundOperationLock(ctx, id)
	return o.Status, err
}

func (m *memStore) SoundOperationUpdate(_ context.Context, o Operation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.ops[o.ID]; !ok || cur.Version != o.Version-1 {
		return fault.E("memStore.SoundOperationUpdate", fault.Conflict, "The operation changed.")
	}
	m.ops[o.ID] = o
	return nil
}

func (m *memStore) SoundOutputInsert(_ context.Context, o Output) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.ContainsFunc(m.outputs[o.OperationID], func(x Output) bool { return x.Name == o.Name }) {
		return false, nil
	}
	m.outputs[o.OperationID] = append(m.outputs[o.OperationID], o)
	return true, nil
}

func (m *memStore) SoundOutputs(_ context.Context, id string) ([]Output, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.outputs[id]), nil
}

// eventsOf lists the outbox events of an operation.
func (m *memStore) eventsOf(id string) []outbox.Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []outbox.Event
	for _, e := range m.events {
		if e.AggregateID == id {
			out = append(out, e)
		}
	}
	return out
}

// fakeEngine is an engine of four stems and six features whose audio
// methods are what its Func fields say (a short tone by default). It
// counts nothing and decodes nothing: the service's rules are what is
// under test.
type fakeEngine struct {
	MeasureFunc func(ctx context.Context, in Input) (Loudness, error)
	MasterFunc  func(ctx context.Context, in Input, out Sink) (MasterResult, error)
}

var _ Engine = (*fakeEngine)(nil)

func (*fakeEngine) Name() string    { return "fake" }
func (*fakeEngine) Stems() []string { return []string{"vocals", "drums", "bass", "other"} }
func (*fakeEngine) Features() []string {
	return []string{"dehum", "declick", "denoise", "voice_cleanup", "clarity", "stereo_width"}
}

func (*fakeEngine) Separation() Separation {
	return Separation{Method: "signal_processing", Quality: StemQuality{Metric: "global_sdr", MeasuredOn: "a test mixture",
		Stems: []StemSDR{{Stem: "vocals", SDRDB: 7.8}, {Stem: "drums", SDRDB: 13.5}}}}
}

func (*fakeEngine) Mastering() Mastering {
	return Mastering{Profiles: []string{"balanced", "loud"}, DefaultProfile: "balanced", MinTargetLUFS: -30, MaxTargetLUFS: -6}
}

// CheckFeatures refuses an unknown or repeated name and an amount over 100.
func (e *fakeEngine) CheckFeatures(fs []EnhanceFeature) error {
	for i, f := range fs {
		switch {
		case !slices.Contains(e.Features(), f.Name):
			return &FeatureError{Field: fmt.Sprintf("features[%d].name", i), Reason: "unknown feature"}
		case slices.IndexFunc(fs, func(g EnhanceFeature) bool { return g.Name == f.Name }) != i:
			return &FeatureError{Field: fmt.Sprintf("features[%d].name", i), Reason: "feature given twice"}
		case f.Amount > 100:
			return &FeatureError{Field: fmt.Sprintf("features[%d].amount", i), Reason: "out of range"}
		}
	}
	return nil
}

func (*fakeEngine) Probe(context.Context, Input) (Format, error) {
	return Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, nil
}

func (e *fakeEngine) Measure(ctx context.Context, in Input) (Loudness, error) {
	if e.MeasureFunc != nil {
		return e.MeasureFunc(ctx, in)
	}
	return Loudness{Frames: 16000, IntegratedLUFS: Reading{Available: true, Value: -20.1234},
		RangeLU: Reading{Reason: "shorter than 3 s"}, SamplePeakDBFS: Reading{Available: true, Value: -6},
		TruePeakDBTP: Reading{Available: true, Value: -5.9}}, nil
}

func (*fakeEngine) Tempo(context.Context, Input) (TempoEstimate, error) {
	return TempoEstimate{BPM: Reading{Reason: "no clear periodicity"}}, nil
}

func (*fakeEngine) Key(context.Context, Input) (KeyEstimate, error) {
	return KeyEstimate{Available: true, Tonic: "A", Mode: "minor", Confidence: 0.5}, nil
}

func (e *fakeEngine) Master(ctx context.Context, in Input, _ MasterOptions, out Sink) (MasterResult, error) {
	if e.MasterFunc != nil {
		return e.MasterFunc(ctx, in, out)
	}
	_, err := out.W.Write(assettest.WAV(out.Spec.SampleRate, 1, 100))
	return MasterResult{Profile: "balanced"}, err
}

func (*fakeEngine) Enhance(_ context.Context, _ Input, _ []EnhanceFeature, out Sink) error {
	_, err := out.W.Write(assettest.WAV(out.Spec.SampleRate, 1, 100))
	return err
}

func (*fakeEngine) Separate(_ context.Context, _ Input, stems []string, out map[string]Sink) error {
	for _, s := range stems {
		if _, err := out[s].W.Write(assettest.WAV(out[s].Spec.SampleRate, 1, 100)); err != nil {
			return err
		}
	}
	return nil
}

// rig is a service on a memStore and a fakeEngine, with one workspace's
// principal, bounds of 10 minutes on "free" and 30 on "pro" unless cfg
// says otherwise, and assets of at most maxUpload bytes whose bytes live
// in a temporary blob directory.
type rig struct {
	st     *memStore
	eng    *fakeEngine
	assets *asset.Service
	blobs  *fsblob.Store
	svc    *Service
	p      *access.Principal
}

func newRig(t *testing.T, cfg Config, maxUpload int64) *rig {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{st: newMemStore(), eng: &fakeEngine{}, blobs: blobs,
		p: &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_1"}}
	if r.assets, err = asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: maxUpload}); err != nil {
		t.Fatal(err)
	}
	cfg.Assets, cfg.Engine = r.assets, r.eng
	cfg.Run = func(ctx context.Context, fn func(Store) error) error { return fn(r.st) }
	cfg.ReadFunc = func() Store { return r.st }
	if cfg.MaxInputDurationFunc == nil {
		cfg.MaxInputDurationFunc = func(plan string) time.Duration {
			if plan == "pro" {
				return 30 * time.Minute
			}
			return 10 * time.Minute
		}
	}
	if cfg.WatchInterval == 0 {
		cfg.WatchInterval = 5 * time.Millisecond
	}
	if r.svc, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// input stores an asset of the rig's workspace whose header claims
// claimed (nil: no claim) over a short WAV.
func (r *rig) input(t *testing.T, claimed *time.Duration) asset.Asset {
	t.Helper()
	ctx := context.Background()
	info, err := r.blobs.Put(ctx, bytes.NewReader(assettest.WAV(8000, 1, 16000)))
	if err != nil {
		t.Fatal(err)
	}
	a := asset.Asset{Scope: assetScope(r.p.Scope()), MediaType: "audio/wav", Size: info.Size, SHA256: info.SHA256, Origin: asset.Uploaded}
	if claimed != nil {
		ms := claimed.Milliseconds()
		a.DurationMs = &ms
	}
	a, err = r.st.AssetInsert(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// authority is the rig's workspace on plan holding entitlements.
func (r *rig) authority(plan string, entitlements ...string) *access.Authority {
	return &access.Authority{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, Plan: plan, Entitlements: entitlements}
}

// op reads an operation.
func (r *rig) op(t *testing.T, id string) Operation {
	t.Helper()
	o, err := r.svc.Get(context.Background(), r.st, r.p, id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// run runs an operation's run job once.
func (r *rig) run(ctx context.Context, id string) error {
	return r.svc.RunHandler()(ctx, jobsJob(JobRun, id))
}

// jobsJob is a first attempt of an operation's job of kind.
func jobsJob(kind, id string) jobs.Job {
	return jobs.Job{Kind: kind, Payload: idPayload(id), Attempts: 1, MaxAttempts: 25}
}

// wantFault fails unless err carries code and every detail in want.
func wantFault(t *testing.T, err error, code fault.Code, want map[string]any) {
	t.Helper()
	got, _, d := fault.Public(err)
	if got != code {
		t.Fatalf("error %v: code %s, want %s", err, got, code)
	}
	for k, v := range want {
		if fmt.Sprint(d[k]) != fmt.Sprint(v) {
			t.Fatalf("error %v: details[%s] = %v, want %v (details %v)", err, k, d[k], v, d)
		}
	}
}

// contains reports whether s holds every one of subs.
func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
