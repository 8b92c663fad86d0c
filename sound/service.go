package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

// Store is the port the service writes and reads through, bound to one
// unit of work (or the read pool for reads). Package store implements it.
type Store interface {
	asset.Store
	jobs.Enqueuer
	outbox.Writer
	// Now is the unit of work's time; NewID a fresh id with prefix.
	Now() time.Time
	NewID(prefix string) string
	// SoundOperationInsert stores a new operation.
	SoundOperationInsert(ctx context.Context, o Operation) error
	// SoundOperationGet reads an operation of sc; NOT_FOUND otherwise.
	SoundOperationGet(ctx context.Context, sc access.Scope, id string) (Operation, error)
	// SoundOperationLock reads an operation by id, locked until the unit
	// of work ends (a plain read on the read pool); NOT_FOUND otherwise.
	SoundOperationLock(ctx context.Context, id string) (Operation, error)
	// SoundOperationStatus reads an operation's status alone (cheap: the
	// run's watcher polls it); NOT_FOUND when there is none.
	SoundOperationStatus(ctx context.Context, id string) (Status, error)
	// SoundOperationUpdate writes o when its stored version is
	// o.Version-1; CONFLICT otherwise.
	SoundOperationUpdate(ctx context.Context, o Operation) error
	// SoundOutputInsert stores an output once: false when the operation
	// has one of that name.
	SoundOutputInsert(ctx context.Context, o Output) (bool, error)
	// SoundOutputs lists an operation's outputs by name.
	SoundOutputs(ctx context.Context, operationID string) ([]Output, error)
}

// RunFunc runs fn as one unit of work.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Config configures a Service.
type Config struct {
	// Assets opens input assets. Required.
	Assets *asset.Service
	// Run runs a unit of work; ReadFunc returns the read pool. Required.
	Run      RunFunc
	ReadFunc func() Store
	// Deadline is how long an operation may run before it expires; zero
	// means 30 minutes.
	Deadline time.Duration
	// Engine runs the operations. Required: package sound/builtin is the
	// built-in engine.
	Engine Engine
	// Disabled names operations ("stem_separation", "mastering",
	// "enhancement", "analysis") and enhancement features ("denoise", ...)
	// this deployment does not serve: the capability snapshot reports them
	// unsupported and requests for them are 422 CAPABILITY_UNSUPPORTED.
	Disabled []string
	// MaxInputDurationFunc returns the longest input one operation of a
	// workspace on plan processes (plan.Limits.SoundMaxDuration). Nil means
	// DefaultMaxInputDuration for every plan.
	MaxInputDurationFunc func(plan string) time.Duration
	// WatchInterval is how often a running operation's status is read, so
	// that a cancel or an expiry stops the work; zero means 250ms.
	WatchInterval time.Duration
}

// DefaultMaxInputDuration bounds an operation's input when
// Config.MaxInputDurationFunc is nil.
const DefaultMaxInputDuration = 10 * time.Minute

// Service runs sound operations. It is safe for concurrent use.
type Service struct {
	cfg Config
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Assets == nil || cfg.Run == nil || cfg.ReadFunc == nil || cfg.Engine == nil {
		return nil, errors.New("sound: Assets, Run, Read and Engine are required")
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = 30 * time.Minute
	}
	if cfg.MaxInputDurationFunc == nil {
		cfg.MaxInputDurationFunc = func(string) time.Duration { return DefaultMaxInputDuration }
	}
	if cfg.WatchInterval <= 0 {
		cfg.WatchInterval = 250 * time.Millisecond
	}
	return &Service{cfg: cfg}, nil
}

// EntitlementHighResolution grants 88.2 and 96 kHz and 32-bit output.
const EntitlementHighResolution = "audio.hires"

// Capabilities is the capability snapshot (spec, Sound capabilities).
type Capabilities struct {
	// Audio is the output audio parameters the engine serves to this
	// workspace.
	Audio AudioCapabilities `json:"audio"`
	// Features says which sound operations are served.
	Features FeatureCapabilities `json:"features"`
	// Limits are the bounds of one operation for this workspace's plan.
	Limits Limits `json:"limits"`
}

// Limits are the bounds of one operation, set by the workspace's plan.
type Limits struct {
	// MaxInputDurationSeconds is the longest input one operation processes.
	MaxInputDurationSeconds int `json:"maxInputDurationSeconds" example:"600" doc:"The longest input, in seconds, one operation processes on this workspace's plan (free 600, pro 1800, studio 3600). An input whose header claims more is refused at admission; one that decodes longer than its header claimed fails its operation when decoding passes the bound. Both are INVALID_INPUT with details.reason duration_limit and details.limit."`
}

// AudioCapabilities are the output audio parameters the engine serves.
type AudioCapabilities struct {
	// SampleRates are the output sample rates in Hz (88200 and 96000 only with
	// the audio.hires entitlement).
	SampleRates []int `json:"sampleRates"`
	// BitDepths are the output bits per sample (32 only with the audio.hires
	// entitlement).
	BitDepths []int `json:"bitDepths"`
	// Formats are the output containers.
	Formats []string `json:"formats"`
	// MaximumChannels is the most channels an output has.
	MaximumChannels int `json:"maximumChannels"`
}

// FeatureCapabilities say which operations are served.
type FeatureCapabilities struct {
	// StemSeparation says whether stems are served, which and how many.
	StemSeparation StemCapability `json:"stemSeparation"`
	// Mastering says whether mastering is served.
	Mastering Supported `json:"mastering"`
	// Enhancement says whether enhancement is served and which features.
	Enhancement Enhancement `json:"enhancement"`
	// Analysis says whether analysis is served.
	Analysis Supported `json:"analysis"`
}

// StemCapability says whether stems are served, which, how many, how
// they are separated and how well.
type StemCapability struct {
	// Supported reports whether this deployment serves stem separation.
	Supported bool `json:"supported" doc:"Whether this deployment serves stem separation."`
	// MaximumStems is how many stems one request may ask for (0 when
	// unsupported).
	MaximumStems int `json:"maximumStems" doc:"How many stems one request may ask for; 0 when unsupported."`
	// Stems names the stems the engine separates.
	Stems []string `json:"stems" doc:"The stems the engine separates; empty when unsupported."`
	// Method is how the engine separates stems (reported even when this
	// deployment does not serve them).
	Method string `json:"method" enum:"signal_processing" doc:"How the engine separates stems. signal_processing: by signal processing (median-filter harmonic/percussive separation, a centre mask from the channels' cross-spectrum, a crossover at 200 Hz), not by a learned model."`
	// Quality is the engine's measured separation quality.
	Quality StemQuality `json:"quality" doc:"The engine's separation quality as measured on a synthetic mixture of known stems (measuredOn): a reading the engine's tests reproduce, not a target. A synthetic mixture of steady sources is far easier than real music, so the figures do not compare with learned models' on real-music benchmarks such as MUSDB18."`
}

// StemQuality is a measured stem separation quality.
type StemQuality struct {
	// Metric names the figure (global_sdr).
	Metric string `json:"metric" enum:"global_sdr" doc:"The figure: global signal-to-distortion ratio, 10 log10(sum s^2 / sum (s - e)^2) of a separated stem e against its known source s, over both channels and the whole mixture, in dB; higher is better, and silence scores 0 dB."`
	// MeasuredOn describes the mixture the figures were measured on.
	MeasuredOn string `json:"measuredOn" example:"10 s of 44.1 kHz stereo mixing four known synthetic sources at equal RMS" doc:"The mixture the figures were measured on."`
	// Stems holds one figure per stem the engine separates.
	Stems []StemSDR `json:"stems" doc:"One figure per stem the engine separates."`
}

// StemSDR is one stem's measured quality.
type StemSDR struct {
	// Stem is the stem's name.
	Stem string `json:"stem" example:"vocals" enum:"vocals,drums,bass,other" doc:"The stem."`
	// SDRDB is its global signal-to-distortion ratio in dB.
	SDRDB float64 `json:"sdrDb" example:"7.8" doc:"The stem's global signal-to-distortion ratio in dB."`
}

// Enhancement says whether enhancement is served and which features.
type Enhancement struct {
	// Supported is true when enhancement is served.
	Supported bool `json:"supported"`
	// Features maps each enhancement feature to whether it is served.
	Features map[string]bool `json:"features"`
}

// Supported says whether an operation is served.
type Supported struct {
	// Supported is true when the operation is served.
	Supported bool `json:"supported"`
}

// Capabilities returns the snapshot for an authority: output up to 48 kHz
// and 24-bit, and 88.2/96 kHz and 32-bit where the workspace holds
// EntitlementHighResolution; analysis, mastering, enhancement (by feature)
// and stem separation, less what Config.Disabled names; what the stem
// separation is and how well it separates, as the engine reports it; and
// the input duration bound of the workspace's plan (a nil authority has
// the free plan's).
func (s *Service) Capabilities(a *access.Authority) Capabilities {
	on := func(t Type) bool { return !slices.Contains(s.cfg.Disabled, string(t)) }
	c := Capabilities{
		Limits: Limits{MaxInputDurationSeconds: int(s.maxInput(planOf(a)).Seconds())},
		Audio: AudioCapabilities{SampleRates: []int{22050, 32000, 44100, 48000}, BitDepths: []int{16, 24},
			Formats: []string{"wav", "flac"}, MaximumChannels: 2},
		Features: FeatureCapabilities{Analysis: Supported{Supported: on(TypeAnalysis)}, Mastering: Supported{Supported: on(TypeMastering)},
			Enhancement: Enhancement{Supported: on(TypeEnhancement), Features: map[string]bool{}}},
	}
	sep := s.cfg.Engine.Separation()
	c.Features.StemSeparation = StemCapability{Stems: []string{}, Method: sep.Method,
		Quality: StemQuality{Metric: sep.Quality.Metric, MeasuredOn: sep.Quality.MeasuredOn, Stems: append([]StemSDR{}, sep.Quality.Stems...)}}
	if on(TypeStemSeparation) {
		c.Features.StemSeparation.Supported, c.Features.StemSeparation.MaximumStems = true, len(s.stems())
		c.Features.StemSeparation.Stems = s.stems()
	}
	for _, f := range s.features() {
		c.Features.Enhancement.Features[f] = on(TypeEnhancement) && !slices.Contains(s.cfg.Disabled, f)
	}
	if a != nil && a.HasEntitlement(EntitlementHighResolution) {
		c.Audio.SampleRates = append(c.Audio.SampleRates, highResolutionRates()...)
		c.Audio.BitDepths = append(c.Audio.BitDepths, highResolutionDepths()...)
	}
	return c
}

// maxInput is the input duration bound of plan.
func (s *Service) maxInput(plan string) time.Duration {
	if s.cfg.MaxInputDurationFunc == nil {
		return DefaultMaxInputDuration
	}
	return s.cfg.MaxInputDurationFunc(plan)
}

// planOf is the plan in effect for a's workspace; "" without an authority.
func planOf(a *access.Authority) string {
	if a == nil {
		return ""
	}
	return a.Plan
}

func (s *Service) stems() []string    { return s.cfg.Engine.Stems() }
func (s *Service) features() []string { return s.cfg.Engine.Features() }

// served refuses an operation type the snapshot does not serve.
func served(op string, c Capabilities, t Type) error {
	ok := map[Type]bool{TypeAnalysis: c.Features.Analysis.Supported, TypeMastering: c.Features.Mastering.Supported,
		TypeEnhancement: c.Features.Enhancement.Supported, TypeStemSeparation: c.Features.StemSeparation.Supported}[t]
	if !ok {
		return fault.E(op, fault.CapabilityUnsupported, fmt.Sprintf("This deployment does not serve %s.", t)).With("type", string(t))
	}
	return nil
}

// Analysis fields a request can ask for.
const (
	FieldDuration     = "duration"
	FieldLoudness     = "loudness"
	FieldPeak         = "peak"
	FieldBPM          = "bpm"
	FieldKey          = "key"
	FieldSampleRate   = "sampleRate"
	FieldBitDepth     = "bitDepth"
	FieldChannelCount = "channelCount"
)

// AnalysisFields lists every requestable analysis field.
func AnalysisFields() []string {
	return []string{FieldDuration, FieldLoudness, FieldPeak, FieldBPM, FieldKey, FieldSampleRate, FieldBitDepth, FieldChannelCount}
}

// AnalyzeRequest is a validated analysis request.
type AnalyzeRequest struct {
	InputAssetID string   `json:"inputAssetId"`
	Fields       []string `json:"fields"`
}

// Analyze accepts an analysis of an asset of p's scope: the operation and
// its run and deadline jobs are written in st's unit of work. Fields
// default to all; an unknown or repeated field is INVALID_INPUT
// (details.field "fields[i]"); an asset of another scope or none is
// NOT_FOUND (details.field input.assetId).
func (s *Service) Analyze(ctx context.Context, st Store, p *access.Principal, a *access.Authority, in AnalyzeRequest) (Operation, error) {
	const op = "sound.Analyze"
	if len(in.Fields) == 0 {
		in.Fields = AnalysisFields()
	}
	seen := map[string]bool{}
	for i, f := range in.Fields {
		if !slices.Contains(AnalysisFields(), f) {
			return Operation{}, fault.Invalid(op, fmt.Sprintf("fields[%d]", i), fmt.Sprintf("%q is not an analysis field.", f)).
				With("allowed", AnalysisFields())
		}
		if seen[f] {
			return Operation{}, fault.Invalid(op, fmt.Sprintf("fields[%d]", i), fmt.Sprintf("%q is requested twice.", f))
		}
		seen[f] = true
	}
	return s.accept(ctx, st, p, a, s.Capabilities(a), TypeAnalysis, in.InputAssetID, in)
}

// enqueue writes an operation's run and deadline jobs.
func (s *Service) enqueue(ctx context.Context, st Store, o Operation) error {
	for _, j := range []jobs.InsertParams{
		{Kind: JobRun, Payload: idPayload(o.ID), RunAt: o.CreatedAt, UniqueKey: "sound-run:" + o.ID, Group: o.Scope.WorkspaceID},
		{Kind: JobExpire, Payload: idPayload(o.ID), RunAt: o.DeadlineAt, UniqueKey: "sound-expire:" + o.ID},
	} {
		if _, err := st.JobInsert(ctx, j); err != nil {
			return fault.Wrap("sound.enqueue", err)
		}
	}
	return nil
}

func assetScope(sc access.Scope) asset.Scope {
	return asset.Scope{TenantID: sc.TenantID, WorkspaceID: sc.WorkspaceID, Environment: string(sc.Environment)}
}

type jobPayload struct {
	Operation string `json:"operation"`
}

func idPayload(id string) []byte {
	b, _ := json.Marshal(jobPayload{Operation: id}) // a struct of one string
	return b
}

// Resource returns an operation of p's scope as the access evaluator's
// resource-scope step sees it: its creator and workspace. A grant at own
// scope (CREATOR, MEMBER) reaches only the operations its holder started.
// NOT_FOUND for an operation of any other scope.
func (s *Service) Resource(ctx context.Context, st Store, p *access.Principal, id string) (*access.Resource, error) {
	o, err := s.Get(ctx, st, p, id)
	if err != nil {
		return nil, err
	}
	return &access.Resource{OwnerUserID: o.CreatedByUserID, WorkspaceID: o.Scope.WorkspaceID}, nil
}

// CheckCancel reports whether cancelling an operation of p's scope is a
// move of the state table from its state now (the access evaluator's
// workflow step): INVALID_STATE_TRANSITION for a completed one. Cancel
// still decides under the operation's lock.
func (s *Service) CheckCancel(ctx context.Context, st Store, p *access.Principal, id string) error {
	o, err := s.Get(ctx, st, p, id)
	if err != nil {
		return err
	}
	_, err = Transition(o.Status, EventCancel)
	return err
}

// FeatureEngine is the feature flag that turns the engine's operations on
// for a workspace. The platform seeds it on by default; an operator turns
// it off for one workspace or for the platform, and new operations are
// then FEATURE_DISABLED (reads of existing ones are not gated).
const FeatureEngine = "sound.engine"

// highResolutionRates and highResolutionDepths are what
// EntitlementHighResolution adds to the capability snapshot.
func highResolutionRates() []int  { return []int{88200, 96000} }
func highResolutionDepths() []int { return []int{32} }

// EntitlementFor returns the entitlement an output encoding needs:
// EntitlementHighResolution for a sample rate or bit depth that only it
// adds to the snapshot (88.2 or 96 kHz, 32-bit), else "". An encoding no
// entitlement serves (192 kHz, say) needs none here: the snapshot refuses
// it, since an upgrade would not help.
func EntitlementFor(sampleRate, bitDepth int) string {
	if slices.Contains(highResolutionRates(), sampleRate) || slices.Contains(highResolutionDepths(), bitDepth) {
		return EntitlementHighResolution
	}
	return ""
}

// Get reads an operation of p's scope; NOT_FOUND for any other.
func (s *Service) Get(ctx context.Context, st Store, p *access.Principal, id string) (Operation, error) {
	o, err := st.SoundOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return Operation{}, fault.Wrap("sound.Get", err)
	}
	return o, nil
}

// Result returns a completed operation of p's scope. RESULT_NOT_READY
// (409) before completion, with details.status (and failureCode for a
// failed one): never a synthetic result.
func (s *Service) Result(ctx context.Context, st Store, p *access.Principal, id string) (Operation, error) {
	const op = "sound.Result"
	o, err := s.Get(ctx, st, p, id)
	if err != nil {
		return Operation{}, err
	}
	if o.Status != StatusCompleted {
		e := fault.E(op, fault.ResultNotReady, "The operation has no result yet.").With("status", string(o.Status))
		if o.Status.Terminal() {
			e = fault.E(op, fault.ResultNotReady, "The operation ended without a result.").With("status", string(o.Status))
			if o.FailureCode != "" {
				e = e.With("failureCode", o.FailureCode)
			}
		}
		return Operation{}, e
	}
	return o, nil
}

// Outputs lists the outputs of an operation (read through st).
func (s *Service) Outputs(ctx context.Context, st Store, id string) ([]Output, error) {
	out, err := st.SoundOutputs(ctx, id)
	if err != nil {
		return nil, fault.Wrap("sound.Outputs", err)
	}
	return out, nil
}

// Cancel cancels an operation of p's scope: idempotent; a failed,
// cancelled or expired operation is returned unchanged;
// INVALID_STATE_TRANSITION (409) for a completed one.
func (s *Service) Cancel(ctx context.Context, st Store, p *access.Principal, id string) (Operation, error) {
	const op = "sound.Cancel"
	if _, err := s.Get(ctx, st, p, id); err != nil {
		return Operation{}, err
	}
	o, err := st.SoundOperationLock(ctx, id)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	return s.move(ctx, st, o, EventCancel, func(*Operation) {})
}

// move applies e to o with edit and stores it; a no-op move stores
// nothing.
func (s *Service) move(ctx context.Context, st Store, o Operation, e Event, edit func(*Operation)) (Operation, error) {
	to, err := Transition(o.Status, e)
	if err != nil {
		return Operation{}, err
	}
	if to == o.Status && o.Status.Terminal() {
		return o, nil
	}
	now := st.Now()
	o.Status, o.UpdatedAt = to, now
	o.Version++
	if to.Terminal() {
		o.EndedAt = &now
	}
	edit(&o)
	if err := st.SoundOperationUpdate(ctx, o); err != nil {
		return Operation{}, fault.Wrap("sound.move", err)
	}
	if to == StatusCompleted {
		payload, _ := json.Marshal(map[string]string{"operationId": o.ID, "type": string(o.Type), "inputAssetId": o.InputAssetID})
		if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID,
			Environment: string(o.Scope.Environment), Type: EventCompleted, SchemaVersion: 1, AggregateID: o.ID,
			AggregateVersion: o.Version, OccurredAt: now, Payload: payload}); err != nil {
			return Operation{}, fault.Wrap("sound.move", err)
		}
	}
	return o, nil
}

// Jobs returns the sound engine's job kinds: runs in the audio class,
// which bounds the runs of one workspace (the job's group); expiry in the
// maintenance class, so that it never waits behind the very runs it is
// meant to end.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobRun, Class: jobs.ClassAudio, HandlerFunc: s.RunHandler()},
		{Name: JobExpire, Class: jobs.ClassMaintenance, HandlerFunc: s.ExpireHandler()},
	}
}

// ExpireHandler is the handler of JobExpire: it expires an operation still
// running at its deadline (a no-op on an ended one). The run stops on its
// own within a poll of its watcher.
func (s *Service) ExpireHandler() jobs.Handler {
	return s.handler(s.expire)
}

func (s *Service) handler(fn func(ctx context.Context, id string) error) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var p jobPayload
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return fmt.Errorf("sound job payload: %w", err)
		}
		return fn(ctx, p.Operation)
	}
}

// step moves a running operation to stage at percent in its own unit of
// work (dispatching and starting it on the first step); errStopped when it
// ended meanwhile.
func (s *Service) step(ctx context.Context, id string, stage Stage, percent int) (Operation, error) {
	var out Operation
	err := s.cfg.Run(ctx, func(st Store) error {
		o, err := st.SoundOperationLock(ctx, id)
		if err != nil {
			return err
		}
		if o.Status.Terminal() {
			return errStopped
		}
		for _, e := range []Event{EventDispatch, EventStart} {
			if o.Status == StatusProcessing {
				break
			}
			if o, err = s.move(ctx, st, o, e, func(o *Operation) {
				if e == EventStart {
					now := st.Now()
					o.StartedAt = &now
				}
			}); err != nil {
				return err
			}
		}
		now := st.Now()
		o.Stage, o.Progress, o.UpdatedAt = stage, percent, now
		o.Version++
		if err := st.SoundOperationUpdate(ctx, o); err != nil {
			return err
		}
		out = o
		return nil
	})
	return out, err
}

func (s *Service) runAnalysis(ctx context.Context, o Operation, in Input) error {
	id := o.ID
	var req AnalyzeRequest
	if err := decodeRequest(o, &req); err != nil {
		return err
	}
	// Each measure streams the input once; the engine reads the blob again
	// from its start for the next, so memory never holds the audio.
	want := func(f string) bool { return slices.Contains(req.Fields, f) }
	format, err := s.cfg.Engine.Probe(ctx, in)
	if err != nil {
		return err
	}
	if _, err := s.step(ctx, id, StageAnalyzing, 10); err != nil {
		return err
	}
	loud, err := s.cfg.Engine.Measure(ctx, in)
	if err != nil {
		return err
	}
	res := analysisOf(format, loud, want)
	if want(FieldBPM) {
		if _, err := s.step(ctx, id, StageAnalyzing, 40); err != nil {
			return err
		}
		t, err := s.cfg.Engine.Tempo(ctx, in)
		if err != nil {
			return err
		}
		res.BPM = measure(t.BPM.Available, t.BPM.Value, "BPM", t.BPM.Reason)
		if t.BPM.Available {
			res.BPM.Confidence = &t.Confidence
		}
	}
	if want(FieldKey) {
		if _, err := s.step(ctx, id, StageAnalyzing, 70); err != nil {
			return err
		}
		k, err := s.cfg.Engine.Key(ctx, in)
		if err != nil {
			return err
		}
		res.Key = &Measure{Available: k.Available}
		if k.Available {
			name := k.Tonic + " " + k.Mode
			res.Key.Text, res.Key.Confidence = &name, &k.Confidence
		} else {
			res.Key.Reason = &k.Reason
		}
	}
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return s.cfg.Run(ctx, func(st Store) error {
		o, err := st.SoundOperationLock(ctx, id)
		if err != nil {
			return err
		}
		if o.Status.Terminal() {
			return errStopped
		}
		return s.complete(ctx, st, o, body)
	})
}

// Measure is one analysis value: a number (Value, in Unit) or a text
// (Text), or unavailable with a Reason — never a guess.
type Measure struct {
	// Available is true when the value was measured; false with a reason
	// otherwise, never a guess.
	Available bool `json:"available"`
	// Value is the measured number, in unit; absent for a text measure or when
	// unavailable.
	Value *float64 `json:"value,omitempty"`
	// Text is the measured value as text (a key such as "A minor"); absent for
	// a number or when unavailable.
	Text *string `json:"text,omitempty"`
	// Unit is value's unit: s, Hz, bit, LUFS, LU, dBFS, dBTP or BPM; empty for
	// a count or text.
	Unit string `json:"unit,omitempty"`
	// Confidence is how sure the estimate is, from 0 to 1 (tempo and key
	// only).
	Confidence *float64 `json:"confidence,omitempty"`
	// Reason says why the value is unavailable; absent when available.
	Reason *string `json:"reason,omitempty"`
}

// Analysis is an analysis result: the requested fields only.
type Analysis struct {
	// Duration is the audio's length in seconds.
	Duration *Measure `json:"duration,omitempty"`
	// SampleRate is the input's sample rate in Hz.
	SampleRate *Measure `json:"sampleRate,omitempty"`
	// BitDepth is the input's bits per sample; unavailable for lossy
	// encodings.
	BitDepth *Measure `json:"bitDepth,omitempty"`
	// ChannelCount is the input's number of channels.
	ChannelCount *Measure `json:"channelCount,omitempty"`
	// IntegratedLoudness is the programme loudness in LUFS (ITU-R BS.1770).
	IntegratedLoudness *Measure `json:"integratedLoudness,omitempty"`
	// LoudnessRange is the loudness range in LU (EBU Tech 3342).
	LoudnessRange *Measure `json:"loudnessRange,omitempty"`
	// SamplePeak is the highest sample's level in dBFS.
	SamplePeak *Measure `json:"samplePeak,omitempty"`
	// TruePeak is the highest inter-sample peak in dBTP.
	TruePeak *Measure `json:"truePeak,omitempty"`
	// BPM is the estimated tempo in beats per minute, with a confidence.
	BPM *Measure `json:"bpm,omitempty"`
	// Key is the estimated musical key as text (tonic and mode), with a
	// confidence.
	Key *Measure `json:"key,omitempty"`
}

// measure is an available value or an unavailable reason.
func measure(ok bool, v float64, unit, reason string) *Measure {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		if reason == "" {
			reason = "not measurable"
		}
		return &Measure{Reason: &reason}
	}
	v = math.Round(v*1000) / 1000
	return &Measure{Available: true, Value: &v, Unit: unit}
}

// analysisOf builds the fields the first pass establishes.
func analysisOf(f Format, l Loudness, want func(string) bool) Analysis {
	var a Analysis
	if want(FieldDuration) {
		a.Duration = measure(l.Frames > 0, float64(l.Frames)/float64(f.SampleRate), "s", "no audio frames")
	}
	if want(FieldSampleRate) {
		a.SampleRate = measure(true, float64(f.SampleRate), "Hz", "")
	}
	if want(FieldBitDepth) {
		a.BitDepth = measure(f.BitDepth > 0, float64(f.BitDepth), "bit", "the encoding has no bit depth (lossy)")
	}
	if want(FieldChannelCount) {
		a.ChannelCount = measure(true, float64(f.Channels), "", "")
	}
	if want(FieldLoudness) {
		a.IntegratedLoudness = reading(l.IntegratedLUFS, "LUFS")
		a.LoudnessRange = reading(l.RangeLU, "LU")
	}
	if want(FieldPeak) {
		a.SamplePeak = reading(l.SamplePeakDBFS, "dBFS")
		a.TruePeak = reading(l.TruePeakDBTP, "dBTP")
	}
	return a
}

// reading is an engine's reading as a measure in unit.
func reading(r Reading, unit string) *Measure { return measure(r.Available, r.Value, unit, r.Reason) }
