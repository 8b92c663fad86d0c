package sound

import (
	"github.com/creatormusic/platform/sound/dsp"
)

// Engine is the port the service runs operations on: the built-in engine
// (BuiltIn, package sound/dsp) by default; a hosted provider can be added
// behind the same methods. Audio crosses it as dsp streams: the service
// decodes the input asset, resamples it to the requested rate, and encodes
// and stores what the engine produces, so an engine sees samples only.
// The readers it hands an engine fail once the operation is cancelled or
// expires (dsp.WithContext) or its input runs past the duration bound
// (dsp.LimitFrames), and its sinks fail once an output would pass the size
// limit: an engine reads block by block and returns those errors as they
// come, which is how a running operation stops.
type Engine interface {
	// Name identifies the engine in operation records.
	Name() string
	// Stems lists the stems the engine separates; Features its enhancement
	// features; StemSeparation says how it separates and how well. The
	// capability snapshot is built from them.
	Stems() []string
	Features() []string
	StemSeparation() dsp.StemSeparation
	// Measure reads loudness and peaks; Tempo and Key estimate those. Each
	// reads its reader to the end.
	Measure(r dsp.Reader) (dsp.Loudness, error)
	Tempo(r dsp.Reader) (dsp.Tempo, error)
	Key(r dsp.Reader) (dsp.Key, error)
	// Master masters the audio open returns (it may open it more than
	// once) into sink.
	Master(open func() (dsp.Reader, error), opts dsp.MasterOptions, sink func(dsp.Block) error) (dsp.MasterReport, error)
	// Enhance returns r through features; it validates them before
	// reading (dsp.OptionError).
	Enhance(r dsp.Reader, features []dsp.Feature) (dsp.Reader, error)
	// Separate splits r into stems, handing each stem's blocks to sink.
	Separate(r dsp.Reader, stems []string, sink func(stem string, b dsp.Block) error) error
	// MasterProfiles lists the mastering profiles.
	MasterProfiles() []dsp.MasterProfile
}

// BuiltIn is the engine of package sound/dsp: no network, no provider.
type BuiltIn struct{}

var _ Engine = BuiltIn{}

// Name implements Engine.
func (BuiltIn) Name() string { return "builtin" }

// Stems implements Engine.
func (BuiltIn) Stems() []string { return dsp.StemNames() }

// Features implements Engine.
func (BuiltIn) Features() []string { return dsp.FeatureNames() }

// StemSeparation implements Engine: signal processing, with the quality
// package dsp measured on its synthetic test mixture.
func (BuiltIn) StemSeparation() dsp.StemSeparation { return dsp.DescribeStemSeparation() }

// Measure implements Engine.
func (BuiltIn) Measure(r dsp.Reader) (dsp.Loudness, error) { return dsp.Measure(r) }

// Tempo implements Engine.
func (BuiltIn) Tempo(r dsp.Reader) (dsp.Tempo, error) { return dsp.EstimateTempo(r) }

// Key implements Engine.
func (BuiltIn) Key(r dsp.Reader) (dsp.Key, error) { return dsp.EstimateKey(r) }

// Master implements Engine.
func (BuiltIn) Master(open func() (dsp.Reader, error), opts dsp.MasterOptions, sink func(dsp.Block) error) (dsp.MasterReport, error) {
	return dsp.Master(open, opts, sink)
}

// Enhance implements Engine.
func (BuiltIn) Enhance(r dsp.Reader, features []dsp.Feature) (dsp.Reader, error) {
	return dsp.Enhance(r, features)
}

// Separate implements Engine.
func (BuiltIn) Separate(r dsp.Reader, stems []string, sink func(string, dsp.Block) error) error {
	return dsp.SeparateStems(r, stems, sink)
}

// MasterProfiles implements Engine.
func (BuiltIn) MasterProfiles() []dsp.MasterProfile { return dsp.MasterProfiles() }
