// Package builtin is the platform's built-in sound engine as the sound
// service's Engine port: an adapter over package sound/dsp, with no
// network and no provider. It decodes the input (WAV, FLAC, MP3), stops
// on the operation's context and at its duration bound, resamples to the
// requested output rate, runs dsp's measures, mastering, enhancement and
// stem separation, and encodes outputs (WAV, FLAC) into the service's
// sinks. It translates dsp's errors into the port's (sound.ErrTooLong,
// sound.ErrSilent, sound.ErrUndecodable, *sound.FeatureError).
//
// This package, not sound, links the codecs and the FFT: an embedder that
// wants persistence only (package store) links none of them, and the
// platform links them through here.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/dsp"
)

// Engine is the built-in engine. The zero value is ready to use and safe
// for concurrent use.
type Engine struct{}

var _ sound.Engine = Engine{}

// Name implements sound.Engine.
func (Engine) Name() string { return "builtin" }

// Stems implements sound.Engine: vocals, drums, bass and other.
func (Engine) Stems() []string { return dsp.StemNames() }

// Features implements sound.Engine: dsp's enhancement features, in the
// order they are applied.
func (Engine) Features() []string { return dsp.FeatureNames() }

// Separation implements sound.Engine: signal processing, with the quality
// package dsp measured on its synthetic test mixture.
func (Engine) Separation() sound.Separation {
	d := dsp.DescribeStemSeparation()
	q := sound.StemQuality{Metric: d.Metric, MeasuredOn: d.MeasuredOn, Stems: make([]sound.StemSDR, 0, len(d.SDR))}
	for _, s := range d.SDR {
		q.Stems = append(q.Stems, sound.StemSDR{Stem: s.Stem, SDRDB: s.SDRDB})
	}
	return sound.Separation{Method: d.Method, Quality: q}
}

// Mastering implements sound.Engine: dsp's profiles, balanced by default,
// and its target range.
func (Engine) Mastering() sound.Mastering {
	m := sound.Mastering{DefaultProfile: dsp.ProfileBalanced, MinTargetLUFS: dsp.MinTargetLUFS, MaxTargetLUFS: dsp.MaxTargetLUFS}
	for _, p := range dsp.MasterProfiles() {
		m.Profiles = append(m.Profiles, p.Name)
	}
	return m
}

// CheckFeatures implements sound.Engine: dsp validates the features on an
// empty stream, and its *dsp.OptionError becomes a *sound.FeatureError
// naming the request field.
func (Engine) CheckFeatures(fs []sound.EnhanceFeature) error {
	err := checkFeatures(fs)
	var oe *dsp.OptionError
	if err == nil || !errors.As(err, &oe) {
		return err
	}
	return &sound.FeatureError{Field: featureField(oe, fs), Reason: oe.Reason}
}

// checkFeatures runs dsp's validation of fs, which reads nothing.
func checkFeatures(fs []sound.EnhanceFeature) error {
	probe := dsp.NewBlockReader(dsp.Format{SampleRate: 48000, Channels: 2}, dsp.NewBlock(2, 0))
	_, err := dsp.Enhance(probe, dspFeatures(fs))
	return err
}

// featureField names the request field an option error points at:
// features[i].name for an unknown or repeated name, else the amount of
// the feature dsp refuses on its own.
func featureField(oe *dsp.OptionError, fs []sound.EnhanceFeature) string {
	var i int
	if _, err := fmt.Sscanf(oe.Field, "Feature[%d].Name", &i); err == nil {
		return fmt.Sprintf("features[%d].name", i)
	}
	for i, f := range fs {
		if checkFeatures([]sound.EnhanceFeature{f}) != nil {
			return fmt.Sprintf("features[%d].amount", i)
		}
	}
	return "features"
}

func dspFeatures(fs []sound.EnhanceFeature) []dsp.Feature {
	out := make([]dsp.Feature, len(fs))
	for i, f := range fs {
		out[i] = dsp.Feature{Name: f.Name, Amount: f.Amount}
	}
	return out
}

// open decodes in from its start, for one pass: the reader stops with ctx
// and fails past in.MaxDuration, counted in decoded frames whatever the
// header claimed.
func open(ctx context.Context, in sound.Input) (dsp.Reader, error) {
	if _, err := in.Blob.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("builtin: rewinding the input: %w", err)
	}
	r, _, err := dsp.Open(in.Blob)
	if err != nil {
		return nil, err
	}
	bound := int64(in.MaxDuration.Seconds() * float64(r.Format().SampleRate))
	return dsp.LimitFrames(dsp.WithContext(ctx, r), bound), nil
}

// Probe implements sound.Engine.
func (Engine) Probe(ctx context.Context, in sound.Input) (sound.Format, error) {
	r, err := open(ctx, in)
	if err != nil {
		return sound.Format{}, translate(err)
	}
	f := r.Format()
	return sound.Format{SampleRate: f.SampleRate, Channels: f.Channels, BitDepth: f.BitDepth}, nil
}

// Measure implements sound.Engine.
func (Engine) Measure(ctx context.Context, in sound.Input) (sound.Loudness, error) {
	r, err := open(ctx, in)
	if err != nil {
		return sound.Loudness{}, translate(err)
	}
	l, err := dsp.Measure(r)
	if err != nil {
		return sound.Loudness{}, translate(err)
	}
	return sound.Loudness{Frames: l.Frames,
		IntegratedLUFS: sound.Reading{Available: l.IntegratedAvailable, Value: l.IntegratedLUFS, Reason: l.IntegratedReason},
		RangeLU:        sound.Reading{Available: l.LoudnessRangeAvailable, Value: l.LoudnessRangeLU, Reason: l.LoudnessRangeReason},
		SamplePeakDBFS: sound.Reading{Available: l.SamplePeakAvailable, Value: l.SamplePeakDBFS, Reason: l.SamplePeakReason},
		TruePeakDBTP:   sound.Reading{Available: l.TruePeakAvailable, Value: l.TruePeakDBTP, Reason: l.TruePeakReason},
	}, nil
}

// Tempo implements sound.Engine.
func (Engine) Tempo(ctx context.Context, in sound.Input) (sound.TempoEstimate, error) {
	r, err := open(ctx, in)
	if err != nil {
		return sound.TempoEstimate{}, translate(err)
	}
	t, err := dsp.EstimateTempo(r)
	if err != nil {
		return sound.TempoEstimate{}, translate(err)
	}
	return sound.TempoEstimate{BPM: sound.Reading{Available: t.Available, Value: t.BPM, Reason: t.Reason}, Confidence: t.Confidence}, nil
}

// Key implements sound.Engine.
func (Engine) Key(ctx context.Context, in sound.Input) (sound.KeyEstimate, error) {
	r, err := open(ctx, in)
	if err != nil {
		return sound.KeyEstimate{}, translate(err)
	}
	k, err := dsp.EstimateKey(r)
	if err != nil {
		return sound.KeyEstimate{}, translate(err)
	}
	return sound.KeyEstimate{Available: k.Available, Tonic: k.Tonic, Mode: k.Mode, Confidence: k.Confidence, Reason: k.Reason}, nil
}

// Master implements sound.Engine: dsp.Master over the input resampled to
// the output's rate, encoded into out.
func (Engine) Master(ctx context.Context, in sound.Input, opts sound.MasterOptions, out sound.Sink) (sound.MasterResult, error) {
	openPass := func() (dsp.Reader, error) {
		r, err := open(ctx, in)
		if err != nil {
			return nil, err
		}
		return dsp.NewResampler(r, out.Spec.SampleRate), nil
	}
	first, err := openPass()
	if err != nil {
		return sound.MasterResult{}, translate(err)
	}
	enc, err := newEncoder(out, first.Format().Channels)
	if err != nil {
		return sound.MasterResult{}, translate(err)
	}
	rep, err := dsp.Master(openPass, dsp.MasterOptions{Profile: opts.Profile, TargetLUFS: opts.TargetLUFS}, enc.Write)
	if err != nil {
		return sound.MasterResult{}, translate(err)
	}
	if err := enc.Close(); err != nil {
		return sound.MasterResult{}, translate(err)
	}
	return sound.MasterResult{Profile: rep.Profile, TargetLUFS: rep.TargetLUFS, CeilingDBTP: rep.CeilingDBTP,
		InputLUFS: rep.InputLUFS, GainDB: rep.GainDB, AchievedLUFS: rep.OutputLUFS, AchievedTruePeakDB: rep.OutputTruePeakDBTP}, nil
}

// Enhance implements sound.Engine: dsp.Enhance over the input resampled to
// the output's rate, encoded into out.
func (Engine) Enhance(ctx context.Context, in sound.Input, features []sound.EnhanceFeature, out sound.Sink) error {
	src, err := open(ctx, in)
	if err != nil {
		return translate(err)
	}
	r, err := dsp.Enhance(dsp.NewResampler(src, out.Spec.SampleRate), dspFeatures(features))
	if err != nil {
		return translate(err)
	}
	channels := r.Format().Channels
	enc, err := newEncoder(out, channels)
	if err != nil {
		return translate(err)
	}
	buf := dsp.NewBlock(channels, dsp.BlockFrames)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if werr := enc.Write(buf.Slice(n)); werr != nil {
				return translate(werr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return translate(err)
		}
	}
	return translate(enc.Close())
}

// Separate implements sound.Engine: dsp.SeparateStems over the input
// resampled to the outputs' rate, each stem encoded into its sink.
func (Engine) Separate(ctx context.Context, in sound.Input, stems []string, out map[string]sound.Sink) error {
	if len(stems) == 0 {
		return errors.New("builtin: separate: no stems named")
	}
	src, err := open(ctx, in)
	if err != nil {
		return translate(err)
	}
	encs := make(map[string]encoder, len(stems))
	var rate int
	for _, name := range stems {
		s, ok := out[name]
		if !ok {
			return fmt.Errorf("builtin: no sink for the stem %q", name)
		}
		rate = s.Spec.SampleRate
		if encs[name], err = newEncoder(s, src.Format().Channels); err != nil {
			return translate(err)
		}
	}
	r := dsp.NewResampler(src, rate)
	if err := dsp.SeparateStems(r, stems, func(stem string, b dsp.Block) error { return encs[stem].Write(b) }); err != nil {
		return translate(err)
	}
	for _, name := range stems {
		if err := encs[name].Close(); err != nil {
			return translate(err)
		}
	}
	return nil
}

// encoder is a WAV or FLAC writer.
type encoder interface {
	Write(dsp.Block) error
	Close() error
}

// newEncoder writes out's header for audio of channels and returns its
// writer (32-bit output is float).
func newEncoder(out sound.Sink, channels int) (encoder, error) {
	f := dsp.Format{SampleRate: out.Spec.SampleRate, Channels: channels, BitDepth: out.Spec.BitDepth, Float: out.Spec.BitDepth == 32}
	if out.Spec.Format == "flac" {
		return dsp.NewFLACWriter(out.W, f)
	}
	return dsp.NewWAVWriter(out.W, f)
}

// translate marks dsp's errors with the port's: past the duration bound
// (sound.ErrTooLong), silence where loudness is needed (sound.ErrSilent),
// and input that cannot be decoded or a request dsp cannot apply to it
// (sound.ErrUndecodable). Both errors stay in the chain; other errors (the
// context's, a sink's) pass unchanged.
func translate(err error) error {
	var opt *dsp.OptionError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dsp.ErrTooLong):
		return fmt.Errorf("%w: %w", sound.ErrTooLong, err)
	case errors.Is(err, dsp.ErrSilence):
		return fmt.Errorf("%w: %w", sound.ErrSilent, err)
	case errors.Is(err, dsp.ErrCorrupt), errors.Is(err, dsp.ErrUnsupported), errors.Is(err, dsp.ErrEmpty),
		errors.Is(err, dsp.ErrUnknownStem), errors.As(err, &opt):
		return fmt.Errorf("%w: %w", sound.ErrUndecodable, err)
	}
	return err
}
