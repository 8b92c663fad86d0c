package sound

import (
	"context"
	"errors"
	"io"
	"time"
)

// Engine is the port the service runs operations on. It speaks this
// package's terms only: the service hands it the input asset's encoded
// bytes with the duration bound, and output sinks with their encoding;
// decoding, resampling, the signal processing and encoding are the
// engine's business. Package sound/builtin adapts the built-in engine of
// package sound/dsp (no network, no provider); a hosted provider can be
// added behind the same methods.
//
// Every method that reads the input must stop once ctx ends (within one
// block of audio: the service cancels ctx when the operation is cancelled
// or expires, and counts on the work stopping within a second), and fail
// with an error wrapping ErrTooLong as soon as the decoded input runs past
// Input.MaxDuration, counted in decoded frames whatever the header
// claimed. Input the engine cannot decode, or a request it cannot apply,
// is an error wrapping ErrUndecodable; silence where loudness is needed
// (mastering) wraps ErrSilent. A sink's write errors (an output past the
// size limit) are returned as they come, wrapped with %w, and stop the
// work.
type Engine interface {
	// Name identifies the engine in operation records.
	Name() string
	// Stems lists the stems the engine separates; Features its
	// enhancement features; Separation says how it separates stems and
	// how well; Mastering its profiles and target range. The capability
	// snapshot and admission are built from them.
	Stems() []string
	Features() []string
	Separation() Separation
	Mastering() Mastering
	// CheckFeatures validates an enhancement request's features without
	// reading audio: an unknown or repeated name, or an amount out of the
	// feature's range, is a *FeatureError.
	CheckFeatures(features []EnhanceFeature) error
	// Probe decodes the input's header and reports its format.
	Probe(ctx context.Context, in Input) (Format, error)
	// Measure reads loudness and peaks; Tempo and Key estimate those. Each
	// reads the input once, to its end.
	Measure(ctx context.Context, in Input) (Loudness, error)
	Tempo(ctx context.Context, in Input) (TempoEstimate, error)
	Key(ctx context.Context, in Input) (KeyEstimate, error)
	// Master masters the input (reading it as many times as it needs)
	// into out, and reports the targets and the output as re-measured.
	Master(ctx context.Context, in Input, opts MasterOptions, out Sink) (MasterResult, error)
	// Enhance runs features over the input into out.
	Enhance(ctx context.Context, in Input, features []EnhanceFeature, out Sink) error
	// Separate splits the input into stems, writing each stem to out[stem].
	Separate(ctx context.Context, in Input, stems []string, out map[string]Sink) error
}

// Input is an operation's input as an engine reads it.
type Input struct {
	// Blob is the input asset's encoded bytes. An engine seeks it to its
	// start for every pass and reads it from one goroutine at a time.
	Blob io.ReadSeeker
	// MaxDuration is the longest input the operation may process (the
	// capability snapshot's limits.maxInputDurationSeconds); zero means no
	// bound.
	MaxDuration time.Duration
}

// Sink is where an engine writes one output: Spec's container, sample
// rate and bit depth into W, which it finishes (headers and sizes filled
// in) before the call returns. W fails a write that would pass the host's
// upload limit.
type Sink struct {
	Spec OutputSpec
	W    io.WriteSeeker
}

// Format is decoded audio's format.
type Format struct {
	// SampleRate is in Hz; Channels the channel count.
	SampleRate, Channels int
	// BitDepth is the bits per sample of the encoding; 0 when it has none
	// (a lossy encoding).
	BitDepth int
}

// Reading is one measured value, or why there is none (never a guess).
type Reading struct {
	// Available is true when Value was measured.
	Available bool
	// Value is the reading, in the unit its field names; meaningless when
	// not Available.
	Value float64
	// Reason says why the value is unavailable; empty when it is.
	Reason string
}

// Loudness is an engine's loudness and peak reading of a whole input.
type Loudness struct {
	// Frames is the number of frames measured.
	Frames int64
	// IntegratedLUFS is the gated integrated loudness (ITU-R BS.1770-4).
	IntegratedLUFS Reading
	// RangeLU is the loudness range (EBU Tech 3342).
	RangeLU Reading
	// SamplePeakDBFS is the highest sample's level; TruePeakDBTP the
	// highest inter-sample peak.
	SamplePeakDBFS, TruePeakDBTP Reading
}

// TempoEstimate is an engine's global tempo estimate.
type TempoEstimate struct {
	// BPM is the tempo in beats per minute.
	BPM Reading
	// Confidence in [0, 1] says how sure the estimate is, when available.
	Confidence float64
}

// KeyEstimate is an engine's global key estimate.
type KeyEstimate struct {
	// Available is false when the audio has no tonal content; Reason then
	// says why.
	Available bool
	// Tonic is the tonic's pitch class ("C", "C#", ... "B") and Mode
	// "major" or "minor", when available.
	Tonic, Mode string
	// Confidence in [0, 1] says how sure the estimate is, when available.
	Confidence float64
	// Reason says why the key is unavailable; empty when it is.
	Reason string
}

// MasterOptions configure one mastering.
type MasterOptions struct {
	// Profile names one of Mastering.Profiles.
	Profile string
	// TargetLUFS overrides the profile's integrated loudness target when
	// non-zero; it lies within the engine's Mastering range.
	TargetLUFS float64
}

// Mastering is what an engine's mastering offers.
type Mastering struct {
	// Profiles names the mastering profiles; DefaultProfile is the one a
	// request that names none gets.
	Profiles       []string
	DefaultProfile string
	// MinTargetLUFS and MaxTargetLUFS bound a request's targetLufs.
	MinTargetLUFS, MaxTargetLUFS float64
}

// Separation says how an engine separates stems and how well.
type Separation struct {
	// Method is how it separates (signal_processing).
	Method string
	// Quality is its measured separation quality.
	Quality StemQuality
}

// FeatureError is an engine's refusal of an enhancement request's
// features.
type FeatureError struct {
	// Field is the request field at fault: "features[i].name" for an
	// unknown or repeated name, "features[i].amount" for an amount out of
	// range, "features" when no single feature is.
	Field string
	// Reason is a client-safe explanation.
	Reason string
}

// Error implements error.
func (e *FeatureError) Error() string { return "sound: " + e.Field + ": " + e.Reason }

// Errors an engine returns (wrapped) for input it cannot process. The
// service fails the operation on them once (see the package doc,
// Failures).
var (
	// ErrTooLong marks an input that decoded past Input.MaxDuration.
	ErrTooLong = errors.New("sound: the input is longer than the bound")
	// ErrSilent marks an input without loudness to master.
	ErrSilent = errors.New("sound: the input is silent")
	// ErrUndecodable marks an input the engine cannot decode (corrupt,
	// empty, or in an encoding it does not read), or a request it cannot
	// apply to it.
	ErrUndecodable = errors.New("sound: the input cannot be decoded")
)
