package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/web3/x402"
)

// SoundInput names a sound operation's input asset.
type SoundInput struct {
	// AssetID is the input audio asset, of the caller's workspace and environment.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
}

// AnalyzeRequest is the body of POST /api/v1/sound/analyze.
type AnalyzeRequest struct {
	// Input is the audio to analyze.
	Input SoundInput `json:"input"`
	// Fields are the measures wanted (duration, loudness, peak, bpm, key,
	// sampleRate, bitDepth, channelCount); empty means all of them.
	Fields []string `json:"fields,omitempty" example:"loudness"`
	// X402GrantID spends a grant bought with a payment (POST /api/v1/x402/settle) on this analysis; absent for an
	// analysis within the plan.
	X402GrantID string `json:"x402GrantId,omitempty" example:"x4g_0123456789abcdef0123456789abcdef"`
}

// SoundProgress is a running operation's progress.
type SoundProgress struct {
	// Percent is how far the operation is, 0 to 100.
	Percent int `json:"percent" example:"40"`
}

// SoundFailure is why an operation failed.
type SoundFailure struct {
	// Code is the platform error code that failed the operation.
	Code string `json:"code" example:"INVALID_INPUT"`
	// Message is a client-safe explanation.
	Message string `json:"message" example:"The input audio could not be decoded."`
	// Details are the failure's structured context.
	Details map[string]any `json:"details,omitempty" doc:"Structured context of the failure, as an error's details: reason (undecodable, silent, duration_limit, output_size, storage_quota), limit (seconds for duration_limit, bytes for output_size and storage_quota) and field where one applies."`
}

// SoundOperationView is a sound operation's state.
type SoundOperationView struct {
	// ID is the operation's id.
	ID string `json:"id" example:"snd_01jd0000000000000000000000"`
	// Object is always "sound_operation".
	Object string `json:"object" example:"sound_operation"`
	// Type is the operation's kind.
	Type string `json:"type" example:"analysis" enum:"stem_separation,mastering,enhancement,analysis"`
	// Status is the operation's status; completed, failed, cancelled and expired are terminal.
	Status string `json:"status" example:"processing" enum:"queued,dispatched,processing,completed,failed,cancelled,expired"`
	// Stage is the engine's current step.
	Stage string `json:"stage" example:"analyzing" enum:"accepted,uploading,decoding,analyzing,stem_isolation,mastering,enhancing,encoding,persisting,finished"`
	// Progress is present while processing.
	Progress *SoundProgress `json:"progress,omitempty"`
	// Input is the input asset.
	Input SoundInput `json:"input"`
	// Environment is the environment (test or live) the operation runs in.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// Failure is why the operation failed; null otherwise.
	Failure *SoundFailure `json:"failure"`
	// CreatedAt is when the operation was accepted.
	CreatedAt time.Time `json:"createdAt"`
	// StartedAt is when the engine started it; null while queued.
	StartedAt *time.Time `json:"startedAt"`
	// UpdatedAt is when the operation last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	// EndedAt is when the operation reached a terminal status; null while it runs.
	EndedAt *time.Time `json:"endedAt"`
}

// SoundResult is a completed operation's result: for an analysis, the
// requested measures, each a value or unavailable with a reason.
type SoundResult struct {
	// ID is the operation's id.
	ID string `json:"id" example:"snd_01jd0000000000000000000000"`
	// Status is the operation's status: completed.
	Status string `json:"status" example:"completed"`
	// Stage is the operation's stage: finished.
	Stage string `json:"stage" example:"finished"`
	// Outputs are the output assets; empty for an analysis.
	Outputs []SoundOutput `json:"outputs"`
	// Analysis is an analysis's measures; absent for other types.
	Analysis *sound.Analysis `json:"analysis,omitempty"`
	// Mastering is a mastering's report (targets and the output as
	// re-measured); absent for other types.
	Mastering *sound.MasterResult `json:"mastering,omitempty"`
}

// EnhanceRequest is the body of POST /api/v1/sound/enhance.
type EnhanceRequest struct {
	// Input is the audio to enhance.
	Input SoundInput `json:"input"`
	// Features are applied in the engine's fixed order (dehum, declick,
	// denoise, voice_cleanup, clarity, stereo_width), each at most once.
	Features []EnhanceFeature `json:"features"`
	// Output is the encoding of the enhanced asset; it must be in the capability snapshot.
	Output SoundOutputSpec `json:"output"`
}

// EnhanceFeature is one enhancement: a feature and its amount.
type EnhanceFeature struct {
	// Name is the enhancement feature.
	Name string `json:"name" example:"denoise" enum:"denoise,declick,dehum,clarity,stereo_width,voice_cleanup"`
	// Amount is the feature's main parameter, 0 for its default: denoise
	// and voice_cleanup reduction dB (18), declick threshold (5), dehum
	// frequency (0 detects 50 or 60 Hz), clarity boost dB (3),
	// stereo_width factor (1.5).
	Amount float64 `json:"amount,omitempty" example:"0"`
}

// StemsRequest is the body of POST /api/v1/sound/stems.
type StemsRequest struct {
	// Input is the audio to separate.
	Input SoundInput `json:"input"`
	// Stems are the stems wanted: vocals, drums, bass, other; empty means
	// all four.
	Stems []string `json:"stems,omitempty" example:"vocals"`
	// Output is the encoding of each stem asset; it must be in the capability snapshot.
	Output SoundOutputSpec `json:"output"`
}

// MasterRequest is the body of POST /api/v1/sound/master.
type MasterRequest struct {
	// Input is the audio to master.
	Input SoundInput `json:"input"`
	// Profile is balanced (-14 LUFS), streaming (-14), transparent (-16,
	// peaks only) or loud (-9); all with a -1 dBTP ceiling.
	Profile string `json:"profile,omitempty" example:"streaming" enum:"balanced,streaming,transparent,loud"`
	// TargetLufs overrides the profile's target, within [-30, -6].
	TargetLufs *float64 `json:"targetLufs,omitempty" example:"-14"`
	// Output is the encoding of the mastered asset; it must be in the
	// capability snapshot.
	Output SoundOutputSpec `json:"output"`
}

// SoundOutputSpec is a requested output encoding.
type SoundOutputSpec struct {
	// Format is the container: wav or flac.
	Format string `json:"format" example:"wav" enum:"wav,flac"`
	// SampleRate is the sample rate in Hz; one of the capability snapshot's audio.sampleRates.
	SampleRate int `json:"sampleRate" example:"48000"`
	// BitDepth is the bits per sample; one of the capability snapshot's audio.bitDepths.
	BitDepth int `json:"bitDepth" example:"24"`
}

// SoundOutput is an output asset of an operation (none for an analysis).
type SoundOutput struct {
	// Type is what the output is: stem for a separated stem, master for a mastering, enhanced for
	// an enhancement.
	Type string `json:"type" example:"stem"`
	// Stem names the stem (vocals, drums, bass or other); absent for other outputs.
	Stem string `json:"stem,omitempty" example:"vocals"`
	// AssetID is the output's durable asset.
	AssetID string `json:"assetId" example:"ast_01jd0000000000000000000000"`
	// Format is the output's container: wav or flac.
	Format string `json:"format" example:"wav"`
	// SampleRate is the output's sample rate in Hz.
	SampleRate int `json:"sampleRate" example:"48000"`
	// BitDepth is the output's bits per sample.
	BitDepth int `json:"bitDepth" example:"24"`
}

func soundView(o sound.Operation) SoundOperationView {
	v := SoundOperationView{ID: o.ID, Object: "sound_operation", Type: string(o.Type), Status: string(o.Status), Stage: string(o.Stage),
		Input: SoundInput{AssetID: o.InputAssetID}, Environment: string(o.Scope.Environment), CreatedAt: o.CreatedAt,
		StartedAt: o.StartedAt, UpdatedAt: o.UpdatedAt, EndedAt: o.EndedAt}
	if o.Status == sound.StatusProcessing {
		v.Progress = &SoundProgress{Percent: o.Progress}
	}
	if o.FailureCode != "" {
		v.Failure = &SoundFailure{Code: o.FailureCode, Message: o.FailureMessage}
		if len(o.FailureDetails) > 0 {
			_ = json.Unmarshal(o.FailureDetails, &v.Failure.Details) // stored by the service as an object
		}
	}
	return v
}

func exampleSoundOperation() SoundOperationView {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return SoundOperationView{ID: "snd_01jd0000000000000000000000", Object: "sound_operation", Type: "analysis", Status: "processing",
		Stage: "analyzing", Progress: &SoundProgress{Percent: 40}, Input: SoundInput{AssetID: "ast_01jd0000000000000000000000"},
		Environment: "test", CreatedAt: t, StartedAt: &t, UpdatedAt: t}
}

// soundBoundsNote ends the description of every route that starts a sound
// operation: the bounds, permanent failures and the credits decision
// (package sound, Bounds, Failures and Credits).
const soundBoundsNote = "Sound operations cost no credits (a decision: the spec is silent; the built-in engine has no provider " +
	"to pay); they are bounded instead by the plan's input duration, a per-workspace concurrency limit and the plan's storage " +
	"quota for outputs. An input whose header claims more than the capability snapshot's limits.maxInputDurationSeconds is 400 " +
	"INVALID_INPUT (details.field input.assetId, details.reason duration_limit, details.limit in seconds, " +
	"details.claimedDurationSeconds); headers are not trusted, so an input that decodes longer than the bound fails the operation " +
	"with the same code and details when decoding passes it. Failures that would recur fail the operation once, never retried: " +
	"failure.code INVALID_INPUT with failure.details.reason undecodable, silent or duration_limit, or PAYLOAD_TOO_LARGE with " +
	"reason output_size (an output over the host's upload limit; details.limit in bytes) or storage_quota. A cancel or the " +
	"deadline stops the running work within about a second, with no result."

// soundRoutes are the sound engine routes (spec, Sound engine): the
// capability snapshot, analysis, mastering, enhancement, stems, and an
// operation's state, result and cancellation. Reads need project.read
// (scope sound:read); every write (the four operations and cancel) needs
// track.generate (scope sound:write) and an Idempotency-Key.
func soundRoutes(svc *sound.Service, pay *x402.Service) []Route {
	if svc == nil {
		return nil
	}
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagSoundEngine, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Idempotency = access.ProjectRead, access.ScopeSoundRead, transport.IdempotencyNone
		return r
	}
	write := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagSoundEngine, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Idempotency = access.TrackGenerate, access.ScopeSoundWrite, transport.IdempotencyRequired
		return r
	}
	// start is the policy of the routes that start an operation: the
	// engine's feature flag and, for those with an output encoding, the
	// high-resolution entitlement when the output asks for it.
	start := func(output bool) Policy {
		pol := Policy{Feature: sound.FeatureEngine}
		if output {
			pol.EntitlementFunc = soundOutputEntitlement
			pol.Note = "An output above 48 kHz or 24-bit needs the `" + sound.EntitlementHighResolution + "` entitlement " +
				"(403 SUBSCRIPTION_REQUIRED on a workspace without a paid plan, else ENTITLEMENT_REQUIRED)."
		}
		return pol
	}
	// addressed is the policy of the routes that address one operation:
	// the caller's grant must reach it (own for CREATOR and MEMBER).
	addressed := Policy{ResourceFunc: func(ctx context.Context, c *Call) (*access.Resource, error) {
		return svc.Resource(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
	}}
	cancel := addressed
	cancel.TransitionFunc = func(ctx context.Context, c *Call) error {
		return svc.CheckCancel(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
	}
	ex := exampleSoundOperation()
	return []Route{
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/sound/capabilities", OperationID: "getSoundCapabilities",
			Summary: "Get the sound engine's capabilities",
			Description: "The capability snapshot of the built-in engine for the caller's workspace: output sample rates, bit depths, " +
				"formats and channels (88.2/96 kHz and 32-bit only with the audio.hires entitlement), and which operations are served. " +
				"Enhancement lists each feature it serves. Stem separation also says what it is and how well it separates: method " +
				"signal_processing (median-filter harmonic/percussive separation, a centre mask and a crossover; no learned model), and " +
				"quality, the global signal-to-distortion ratio of each stem in dB as measured on a synthetic mixture of four known " +
				"stems (quality.measuredOn describes it). Those figures are readings the engine's tests reproduce on that mixture, not " +
				"targets; a synthetic mixture is far easier than real music, so they do not compare with learned models' figures on " +
				"real-music benchmarks such as MUSDB18. limits.maxInputDurationSeconds is the longest input one operation processes on " +
				"the workspace's plan (free 600, pro 1800, studio 3600).",
			Response: svc.Capabilities(nil),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				return svc.Capabilities(c.Authority), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/sound/analyze", OperationID: "analyzeSound", Status: http.StatusAccepted,
			Summary: "Analyze an audio asset",
			Description: "Accepts an analysis of an asset of the caller's workspace as a durable operation (type analysis) and answers 202. " +
				"fields chooses among duration, loudness (integrated LUFS and loudness range, ITU-R BS.1770-4 / EBU R128), peak (sample peak " +
				"dBFS and true peak dBTP), bpm, key, sampleRate, bitDepth and channelCount; empty means all. A measure the engine cannot " +
				"establish is reported unavailable with a reason, never guessed. An unknown field is 400 INVALID_INPUT; an asset of another " +
				"workspace is 404. The same Idempotency-Key and body return the same operation. x402GrantId spends a grant of one " +
				"analysis bought with a payment (the payment-required protocol, POST /api/v1/x402/settle) in the same unit of work: " +
				"a grant of another workspace or environment, or none, is 404 naming x402GrantId, one spent already is 409 CONFLICT " +
				"(details.reason grant_consumed), and then nothing is accepted. Analyses within the plan need no grant. " +
				soundBoundsNote,
			Request:  AnalyzeRequest{Input: SoundInput{AssetID: "ast_01jd0000000000000000000000"}, Fields: []string{"loudness", "peak"}},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.Conflict)},
			Policy: start(false),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in AnalyzeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				o, err := svc.Analyze(ctx, c.Tx, c.Principal, c.Authority, sound.AnalyzeRequest{InputAssetID: in.Input.AssetID, Fields: in.Fields})
				if err != nil {
					return nil, err
				}
				if in.X402GrantID != "" {
					// The grant is spent in the unit of work that accepts the
					// analysis: both commit, or neither.
					if pay == nil {
						return nil, fault.Invalid("api.analyzeSound", "x402GrantId", "This host takes no payment grants.")
					}
					if _, err := pay.Consume(ctx, c.Tx, c.Principal, "x402GrantId", in.X402GrantID, x402.KindSoundAnalysis,
						"sound_operation:"+o.ID); err != nil {
						return nil, err
					}
				}
				return soundView(o), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/sound/enhance", OperationID: "enhanceSound", Status: http.StatusAccepted,
			Summary: "Enhance an audio asset",
			Description: "Accepts an enhancement (type enhancement) of an asset of the caller's workspace and answers 202: features among " +
				"denoise, declick, dehum, clarity, stereo_width and voice_cleanup, each at most once, applied in the engine's fixed order, " +
				"into one derived asset in the requested output encoding. An unknown, repeated or out-of-range feature is 422 " +
				"CAPABILITY_UNSUPPORTED naming features[i].name or features[i].amount, never ignored; so is an output outside the capability " +
				"snapshot. " +
				soundBoundsNote,
			Request: EnhanceRequest{Input: SoundInput{AssetID: "ast_01jd0000000000000000000000"}, Features: []EnhanceFeature{{Name: "denoise"}},
				Output: SoundOutputSpec{Format: "wav", SampleRate: 48000, BitDepth: 24}},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.CapabilityUnsupported)},
			Policy: start(true),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in EnhanceRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				req := sound.EnhanceRequest{InputAssetID: in.Input.AssetID,
					Output: sound.OutputSpec{Format: in.Output.Format, SampleRate: in.Output.SampleRate, BitDepth: in.Output.BitDepth}}
				for _, f := range in.Features {
					req.Features = append(req.Features, sound.EnhanceFeature{Name: f.Name, Amount: f.Amount})
				}
				o, err := svc.Enhance(ctx, c.Tx, c.Principal, c.Authority, req)
				if err != nil {
					return nil, err
				}
				return soundView(o), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/sound/stems", OperationID: "separateStems", Status: http.StatusAccepted,
			Summary: "Separate an audio asset into stems",
			Description: "Accepts a stem separation (type stem_separation) of an asset of the caller's workspace and answers 202. The built-in " +
				"engine separates by signal processing (harmonic/percussive median filtering, centre extraction, band splitting) into vocals, " +
				"drums, bass and other, built so that the stems sum back to the input; stems names the ones wanted (empty means all four). " +
				"Each stem becomes one derived asset in the requested output encoding (result outputs[] with type stem and the stem name). " +
				"A stem name the engine does not serve, or an output outside the capability snapshot, is 422 CAPABILITY_UNSUPPORTED naming " +
				"the field. " +
				soundBoundsNote,
			Request: StemsRequest{Input: SoundInput{AssetID: "ast_01jd0000000000000000000000"}, Stems: []string{"vocals", "drums", "bass", "other"},
				Output: SoundOutputSpec{Format: "wav", SampleRate: 44100, BitDepth: 16}},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.CapabilityUnsupported)},
			Policy: start(true),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in StemsRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				o, err := svc.Stems(ctx, c.Tx, c.Principal, c.Authority, sound.StemsRequest{InputAssetID: in.Input.AssetID, Stems: in.Stems,
					Output: sound.OutputSpec{Format: in.Output.Format, SampleRate: in.Output.SampleRate, BitDepth: in.Output.BitDepth}})
				if err != nil {
					return nil, err
				}
				return soundView(o), nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/sound/master", OperationID: "masterSound", Status: http.StatusAccepted,
			Summary: "Master an audio asset",
			Description: "Accepts a mastering of an asset of the caller's workspace as a durable operation (type mastering) and answers 202. " +
				"The engine measures the input's integrated loudness, applies the gain to the profile's target (or targetLufs, within " +
				"[-30, -6]), limits true peaks under the -1 dBTP ceiling with a look-ahead limiter, re-measures, and stores the result as one " +
				"derived asset in the requested output encoding (resampled with a band-limited resampler, TPDF-dithered when the bit depth " +
				"falls). The result reports the achieved loudness and true peak. An output outside the capability snapshot, or a target out " +
				"of range, is 422 CAPABILITY_UNSUPPORTED naming the field; a silent input fails the operation with INVALID_INPUT. " +
				soundBoundsNote,
			Request: MasterRequest{Input: SoundInput{AssetID: "ast_01jd0000000000000000000000"}, Profile: "streaming",
				Output: SoundOutputSpec{Format: "wav", SampleRate: 48000, BitDepth: 24}},
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.CapabilityUnsupported)},
			Policy: start(true),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in MasterRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				o, err := svc.Master(ctx, c.Tx, c.Principal, c.Authority, sound.MasterRequest{InputAssetID: in.Input.AssetID,
					Profile: in.Profile, TargetLUFS: in.TargetLufs,
					Output: sound.OutputSpec{Format: in.Output.Format, SampleRate: in.Output.SampleRate, BitDepth: in.Output.BitDepth}})
				if err != nil {
					return nil, err
				}
				return soundView(o), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/sound/operations/{operationId}", OperationID: "getSoundOperation",
			Summary: "Get a sound operation", Description: "State, stage and, while processing, progress.percent. Another workspace's operation is 404.",
			Response: ex, Errors: []string{string(fault.NotFound)},
			Policy: addressed,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.Get(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				return soundView(o), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/sound/operations/{operationId}/result", OperationID: "getSoundOperationResult",
			Summary: "Get a sound operation's result",
			Description: "The result of a completed operation: for an analysis, the requested measures (each a value with its unit, or " +
				"unavailable with a reason). Before completion 409 RESULT_NOT_READY with details.status, never a synthetic result.",
			Response: SoundResult{ID: "snd_01jd0000000000000000000000", Status: "completed", Stage: "finished", Outputs: []SoundOutput{}},
			Errors:   []string{string(fault.NotFound), string(fault.ResultNotReady)},
			Policy:   addressed,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.Result(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				outs, err := svc.Outputs(ctx, c.Tx, o.ID)
				if err != nil {
					return nil, err
				}
				out := SoundResult{ID: o.ID, Status: string(o.Status), Stage: string(o.Stage), Outputs: []SoundOutput{}}
				for _, x := range outs {
					v := SoundOutput{Type: x.Name, AssetID: x.AssetID, Format: x.Format, SampleRate: x.SampleRate, BitDepth: x.BitDepth}
					if o.Type == sound.TypeStemSeparation {
						v.Type, v.Stem = "stem", x.Name
					}
					out.Outputs = append(out.Outputs, v)
				}
				var dst any
				switch o.Type {
				case sound.TypeAnalysis:
					dst = &out.Analysis
				case sound.TypeMastering:
					dst = &out.Mastering
				}
				if dst != nil {
					if err := json.Unmarshal(o.Result, dst); err != nil {
						return nil, fault.Wrap("transport.soundResult", err)
					}
				}
				return out, nil
			}}),
		write(Route{Method: http.MethodPost, Pattern: "/api/v1/sound/operations/{operationId}/cancel", OperationID: "cancelSoundOperation",
			Summary: "Cancel a sound operation",
			Description: "Idempotent: a queued, dispatched or processing operation becomes cancelled, and its running work stops within " +
				"about a second (the worker polls the operation's status and stops decoding and processing at the next block, on any host); " +
				"a failed, cancelled or expired operation is returned unchanged; a completed one is 409 INVALID_STATE_TRANSITION. Nothing is " +
				"rolled back and a cancelled operation has no result.",
			Response: ex, Errors: []string{string(fault.NotFound), string(fault.InvalidState)},
			Policy: cancel,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				o, err := svc.Cancel(ctx, c.Tx, c.Principal, c.PathValue("operationId"))
				if err != nil {
					return nil, err
				}
				return soundView(o), nil
			}}),
	}
}

// soundOutputEntitlement is the EntitlementFunc of the routes with an
// output encoding: sound.EntitlementFor of the requested output. It reads
// the body leniently; the handler's strict decoding reports a bad one.
func soundOutputEntitlement(c *Call) string {
	var in struct {
		Output SoundOutputSpec `json:"output"`
	}
	if json.Unmarshal(c.Body(), &in) != nil {
		return ""
	}
	return sound.EntitlementFor(in.Output.SampleRate, in.Output.BitDepth)
}
