package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Loudness is the result of a loudness measurement (ITU-R BS.1770-4,
// EBU R 128, EBU Tech 3342; spec sound-dsp.md section 1).
//
// A value that the programme cannot establish is never guessed: its
// Available field is false, its Reason says why, and the value itself is
// zero and meaningless.
type Loudness struct {
	// IntegratedLUFS is the gated integrated loudness (BS.1770-4: absolute
	// gate -70 LUFS, relative gate -10 LU).
	IntegratedLUFS float64
	// IntegratedAvailable is false when no 400 ms block survives the
	// absolute gate (silence, or a programme shorter than one block).
	IntegratedAvailable bool
	// IntegratedReason says why IntegratedLUFS is unavailable.
	IntegratedReason string
	// RelativeGateLUFS is the relative gate used for IntegratedLUFS; it is
	// valid when IntegratedAvailable is.
	RelativeGateLUFS float64

	// LoudnessRangeLU is the loudness range (EBU Tech 3342): the spread
	// between the 10th and 95th percentiles of the gated short-term
	// loudness distribution.
	LoudnessRangeLU float64
	// LoudnessRangeAvailable is false when no full 3 s short-term window
	// survives the absolute gate.
	LoudnessRangeAvailable bool
	// LoudnessRangeReason says why LoudnessRangeLU is unavailable.
	LoudnessRangeReason string
	// LoudnessRangeLowLUFS and LoudnessRangeHighLUFS are the 10th and 95th
	// percentile short-term loudness; valid when LoudnessRangeAvailable is.
	LoudnessRangeLowLUFS, LoudnessRangeHighLUFS float64

	// SamplePeakDBFS is the largest absolute sample over all channels
	// (LFE included), in dBFS.
	SamplePeakDBFS float64
	// SamplePeakAvailable is false for an empty or all-zero programme,
	// whose peak is minus infinity.
	SamplePeakAvailable bool
	// SamplePeakReason says why SamplePeakDBFS is unavailable.
	SamplePeakReason string

	// TruePeakDBTP is the largest absolute value of the band-limited
	// signal over all channels, between samples included (BS.1770-4 Annex
	// 2 true peak, with the better interpolation the Annex allows: see the
	// package doc), in dBTP; never below the sample peak. It is within
	// TruePeakErrorDB of the signal's own peak for content below 0.4975
	// times the sample rate.
	TruePeakDBTP float64
	// TruePeakAvailable is false for an empty or all-zero programme.
	TruePeakAvailable bool
	// TruePeakReason says why TruePeakDBTP is unavailable.
	TruePeakReason string

	// Frames is the number of frames measured.
	Frames int64
}

// Gating and histogram constants (spec sound-dsp.md sections 1.1 and 1.3).
const (
	// absoluteGateLUFS is the absolute gate of both integrated loudness
	// and loudness range; blocks at or below it are ignored.
	absoluteGateLUFS = -70.0
	// integratedRelativeGateLU is the relative gate of integrated loudness.
	integratedRelativeGateLU = -10.0
	// rangeRelativeGateLU is the relative gate of loudness range.
	rangeRelativeGateLU = -20.0
	// rangeLowPercentile and rangeHighPercentile bound the loudness range.
	rangeLowPercentile, rangeHighPercentile = 0.10, 0.95

	// momentarySteps and shortTermSteps are the 400 ms gating block and
	// the 3 s short-term window in 100 ms steps; a new block (and a new
	// short-term value) is taken every step, i.e. 75 % overlap for gating
	// blocks and a 10 Hz short-term rate for loudness range.
	momentarySteps = 4
	shortTermSteps = 30

	// histLowLUFS, histHighLUFS and histBinsPerLU lay out the block
	// histograms: 0.01 LU bins from the absolute gate to +30 LUFS (a block
	// louder than that, impossible for samples in [-1, 1], lands in the
	// top bin with its exact energy).
	histLowLUFS   = absoluteGateLUFS
	histHighLUFS  = 30.0
	histBinsPerLU = 100
	histBins      = int((histHighLUFS - histLowLUFS) * histBinsPerLU)

	// loudnessOffset is the -0.691 dB that makes a 997 Hz sine read its
	// RMS level after K-weighting.
	loudnessOffset = -0.691
)

// biquad is a second-order IIR section with a0 = 1:
// y = b0 x + b1 x1 + b2 x2 - a1 y1 - a2 y2.
type biquad struct {
	b0, b1, b2, a1, a2 float64
}

// kWeighting derives the two K-weighting stages for sample rate fs by the
// bilinear transform of the analog prototypes BS.1770 specifies (the
// libebur128 parameterisation, spec section 1.2). At 48 kHz it reproduces
// the standard's coefficient table. The high-pass numerator stays
// 1, -2, 1 (not normalised by a0): the -0.691 offset assumes it.
func kWeighting(fs float64) (shelf, highPass biquad) {
	const (
		shelfF0     = 1681.974450955533
		shelfGainDB = 3.999843853973347
		shelfQ      = 0.7071752369554196
		shelfVbExp  = 0.4996667741545416
		hpF0        = 38.13547087602444
		hpQ         = 0.5003270373238773
	)
	k := math.Tan(math.Pi * shelfF0 / fs)
	vh := math.Pow(10, shelfGainDB/20)
	vb := math.Pow(vh, shelfVbExp)
	a0 := 1 + k/shelfQ + k*k
	shelf = biquad{
		b0: (vh + vb*k/shelfQ + k*k) / a0,
		b1: 2 * (k*k - vh) / a0,
		b2: (vh - vb*k/shelfQ + k*k) / a0,
		a1: 2 * (k*k - 1) / a0,
		a2: (1 - k/shelfQ + k*k) / a0,
	}
	k = math.Tan(math.Pi * hpF0 / fs)
	a0 = 1 + k/hpQ + k*k
	highPass = biquad{
		b0: 1, b1: -2, b2: 1,
		a1: 2 * (k*k - 1) / a0,
		a2: (1 - k/hpQ + k*k) / a0,
	}
	return shelf, highPass
}

// ChannelWeights returns the BS.1770-4 channel weights the meter applies
// to a programme of the given channel count, which assumes this channel
// order (the WAVE / SMPTE order, as libebur128 and ffmpeg):
//
//	1: mono (counted once, not as dual mono)
//	2: L R
//	3: L R C
//	4: L R Ls Rs
//	5: L R C Ls Rs
//	6: L R C LFE Ls Rs (5.1)
//	7: L R C LFE Cs Ls Rs (6.1)
//	8: L R C LFE Lb Rb Ls Rs (7.1)
//
// Front and centre channels weigh 1.0, surround (side and back) channels
// 1.41, a back centre 1.0, and the LFE 0 (excluded).
func ChannelWeights(channels int) []float64 {
	const s = 1.41
	switch channels {
	case 4:
		return []float64{1, 1, s, s}
	case 5:
		return []float64{1, 1, 1, s, s}
	case 6:
		return []float64{1, 1, 1, 0, s, s}
	case 7:
		return []float64{1, 1, 1, 0, 1, s, s}
	case 8:
		return []float64{1, 1, 1, 0, s, s, s, s}
	}
	w := make([]float64, channels)
	for i := range w {
		w[i] = 1
	}
	return w
}

// channelState is one channel's K-weighting filter memory and the running
// sum of squares of the current 100 ms step.
type channelState struct {
	// s1, s2 are the shelf's, h1, h2 the high-pass's transposed
	// direct-form II state.
	s1, s2, h1, h2 float64
	// acc is the sum of squared K-weighted samples in the current step.
	acc float64
}

// histogram holds gated block (or short-term) loudness values in 0.01 LU
// bins. Each bin keeps its count and the exact sum of its blocks' energies,
// so means of energies are exact and only a block's position relative to
// a gate or percentile is quantised: by at most 0.01 LU, ten times finer
// than the ±0.1 LU tolerance of EBU Tech 3341. Memory is fixed
// (10,000 bins) whatever the programme's duration.
type histogram struct {
	count  []int64
	energy []float64
	// total and sum are the count and energy of every value in the
	// histogram (all above the absolute gate).
	total int64
	sum   float64
}

func newHistogram() histogram {
	return histogram{count: make([]int64, histBins), energy: make([]float64, histBins)}
}

// add records a block of mean-square energy e (weighted channel sum) and
// loudness l, which the caller has checked is above the absolute gate.
func (h *histogram) add(e, l float64) {
	i := int((l - histLowLUFS) * histBinsPerLU)
	i = max(0, min(i, histBins-1))
	h.count[i]++
	h.energy[i] += e
	h.total++
	h.sum += e
}

// binLoudness is the loudness of the mean energy of bin i's values.
func (h *histogram) binLoudness(i int) float64 {
	return energyToLUFS(h.energy[i] / float64(h.count[i]))
}

// gateIndex returns the first bin whose values count as at or above gate
// (LUFS): bins wholly above it, and the bin holding it when the mean of
// that bin's values is at or above it.
func (h *histogram) gateIndex(gate float64) int {
	i := int(math.Floor((gate - histLowLUFS) * histBinsPerLU))
	if i < 0 {
		return 0
	}
	if i >= histBins {
		return histBins
	}
	if h.count[i] > 0 && h.binLoudness(i) < gate {
		return i + 1
	}
	return i
}

func energyToLUFS(e float64) float64 {
	return loudnessOffset + 10*math.Log10(e)
}

// Meter measures integrated loudness, loudness range, sample peak and true
// peak of a stream written to it block by block. Its memory is fixed at
// creation (two histograms of about 160 kB each, the true-peak
// interpolator's transform of about 0.4 MB, and about 0.2 MB per channel)
// and does not grow with the programme's duration. A Meter is not
// safe for concurrent use.
type Meter struct {
	format  Format
	weights []float64
	shelf   biquad
	hp      biquad
	ch      []channelState

	// stepFrames is the length of a 100 ms step; stepPos the frames of
	// the current step seen so far.
	stepFrames int
	stepPos    int
	// steps is a ring of the last shortTermSteps step energies (weighted
	// sums over channels of the sums of squares); nSteps counts completed
	// steps.
	steps  [shortTermSteps]float64
	nSteps int64

	blocks     histogram // 400 ms blocks, for integrated loudness
	shortTerms histogram // 3 s windows, for loudness range

	tp     *truePeakMeter
	frames int64
}

// NewMeter returns a meter for a stream of format f. It panics when f does
// not pass f.Validate (Measure validates and returns an error instead).
//
// Channels are weighted as ChannelWeights documents. K-weighting
// coefficients are derived for f.SampleRate, so any rate is measured
// without resampling. True peak interpolates every rate alike (see the
// package doc).
func NewMeter(f Format) *Meter {
	if err := f.Validate(); err != nil {
		panic(err)
	}
	shelf, hp := kWeighting(float64(f.SampleRate))
	return &Meter{
		format:     f,
		weights:    ChannelWeights(f.Channels),
		shelf:      shelf,
		hp:         hp,
		ch:         make([]channelState, f.Channels),
		stepFrames: (f.SampleRate + 5) / 10,
		blocks:     newHistogram(),
		shortTerms: newHistogram(),
		tp:         newTruePeakMeter(f.Channels),
	}
}

// Write measures the next frames of the stream. b must have the meter's
// channel count and all channels the same length; Write panics otherwise.
// Blocks of any length, one frame included, give the same result.
func (m *Meter) Write(b Block) {
	if len(b) != m.format.Channels {
		panic(fmt.Sprintf("dsp: Meter.Write: block has %d channels, meter %d", len(b), m.format.Channels))
	}
	n := b.Frames()
	for c := range b {
		if len(b[c]) != n {
			panic("dsp: Meter.Write: channels of unequal length")
		}
	}
	if n == 0 {
		return
	}
	m.tp.write(b) // sample and true peak
	m.frames += int64(n)

	for pos := 0; pos < n; {
		seg := min(n-pos, m.stepFrames-m.stepPos)
		for c := range b {
			m.kWeight(&m.ch[c], b[c][pos:pos+seg])
		}
		pos += seg
		m.stepPos += seg
		if m.stepPos == m.stepFrames {
			m.endStep()
		}
	}
}

// kWeight filters x through the channel's K-weighting and adds the
// squared output to its step sum. The sum runs sample by sample through
// the carried state, so how the stream is cut into blocks changes nothing.
func (m *Meter) kWeight(st *channelState, x []float64) {
	s, h := m.shelf, m.hp
	s1, s2, h1, h2, acc := st.s1, st.s2, st.h1, st.h2, st.acc
	for _, v := range x {
		y := s.b0*v + s1
		s1 = s.b1*v - s.a1*y + s2
		s2 = s.b2*v - s.a2*y
		z := h.b0*y + h1
		h1 = h.b1*y - h.a1*z + h2
		h2 = h.b2*y - h.a2*z
		acc += z * z
	}
	st.s1, st.s2, st.h1, st.h2, st.acc = s1, s2, h1, h2, acc
}

// endStep closes a 100 ms step: it folds the channels' sums into one
// weighted step energy, then records the 400 ms block and the 3 s window
// ending here once they are complete.
func (m *Meter) endStep() {
	var e float64
	for c := range m.ch {
		e += m.weights[c] * m.ch[c].acc
		m.ch[c].acc = 0
	}
	m.steps[m.nSteps%shortTermSteps] = e
	m.nSteps++
	m.stepPos = 0

	if m.nSteps >= momentarySteps {
		m.record(&m.blocks, momentarySteps)
	}
	if m.nSteps >= shortTermSteps {
		m.record(&m.shortTerms, shortTermSteps)
	}
}

// record adds the window of the last k steps to h when it is above the
// absolute gate.
func (m *Meter) record(h *histogram, k int) {
	var sum float64
	for i := int64(1); i <= int64(k); i++ {
		sum += m.steps[(m.nSteps-i)%shortTermSteps]
	}
	e := sum / float64(k*m.stepFrames)
	if e <= 0 {
		return
	}
	if l := energyToLUFS(e); l > absoluteGateLUFS {
		h.add(e, l)
	}
}

// Result returns the measurement of everything written so far. It does
// not change the meter, so it may be called for progress and writing may
// continue. An incomplete trailing block or short-term window is not
// counted, as BS.1770-4 and Tech 3342 specify.
func (m *Meter) Result() Loudness {
	r := Loudness{Frames: m.frames}
	m.integrated(&r)
	m.loudnessRange(&r)

	switch {
	case m.frames == 0:
		r.SamplePeakReason = "no frames measured"
		r.TruePeakReason = r.SamplePeakReason
	case m.tp.samplePeak() == 0:
		r.SamplePeakReason = "digital silence: every sample is zero (peak is -inf dBFS)"
		r.TruePeakReason = r.SamplePeakReason
	default:
		sp := m.tp.samplePeak()
		r.SamplePeakDBFS = 20 * math.Log10(sp)
		r.SamplePeakAvailable = true
		r.TruePeakDBTP = 20 * math.Log10(m.tp.peak())
		r.TruePeakAvailable = true
	}
	return r
}

func (m *Meter) integrated(r *Loudness) {
	h := &m.blocks
	switch {
	case m.nSteps < momentarySteps:
		r.IntegratedReason = "programme shorter than one 400 ms gating block"
		return
	case h.total == 0:
		r.IntegratedReason = "every 400 ms block is at or below the -70 LUFS absolute gate (silence)"
		return
	}
	gate := energyToLUFS(h.sum/float64(h.total)) + integratedRelativeGateLU
	var n int64
	var sum float64
	for i := h.gateIndex(gate); i < histBins; i++ {
		n += h.count[i]
		sum += h.energy[i]
	}
	if n == 0 { // cannot happen: the loudest block is above the mean minus 10 LU
		r.IntegratedReason = "no block above the relative gate"
		return
	}
	r.RelativeGateLUFS = gate
	r.IntegratedLUFS = energyToLUFS(sum / float64(n))
	r.IntegratedAvailable = true
}

func (m *Meter) loudnessRange(r *Loudness) {
	h := &m.shortTerms
	switch {
	case m.nSteps < shortTermSteps:
		r.LoudnessRangeReason = "programme shorter than one 3 s short-term window"
		return
	case h.total == 0:
		r.LoudnessRangeReason = "every 3 s short-term window is at or below the -70 LUFS absolute gate (silence)"
		return
	}
	gate := energyToLUFS(h.sum/float64(h.total)) + rangeRelativeGateLU
	first := h.gateIndex(gate)
	var n int64
	for i := first; i < histBins; i++ {
		n += h.count[i]
	}
	if n == 0 {
		r.LoudnessRangeReason = "no short-term window above the relative gate"
		return
	}
	// Percentile ranks as libebur128 takes them: floor((n-1)p + 0.5).
	lowRank := int64(math.Floor(float64(n-1)*rangeLowPercentile + 0.5))
	highRank := int64(math.Floor(float64(n-1)*rangeHighPercentile + 0.5))
	low, high := math.NaN(), math.NaN()
	var seen int64
	for i := first; i < histBins && math.IsNaN(high); i++ {
		if h.count[i] == 0 {
			continue
		}
		seen += h.count[i]
		if math.IsNaN(low) && seen > lowRank {
			low = h.binLoudness(i)
		}
		if seen > highRank {
			high = h.binLoudness(i)
		}
	}
	r.LoudnessRangeLowLUFS = low
	r.LoudnessRangeHighLUFS = high
	r.LoudnessRangeLU = high - low
	r.LoudnessRangeAvailable = true
}

// Measure streams r to its end through a Meter and returns the result.
// It returns an error wrapping ErrEmpty for a stream without frames, and
// the reader's error, if any, with the measurement of the frames read
// before it.
func Measure(r Reader) (Loudness, error) {
	f := r.Format()
	if err := f.Validate(); err != nil {
		return Loudness{}, err
	}
	m := NewMeter(f)
	buf := NewBlock(f.Channels, BlockFrames)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m.Write(buf.Slice(n))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m.Result(), fmt.Errorf("dsp: measure loudness: %w", err)
		}
	}
	res := m.Result()
	if res.Frames == 0 {
		return res, fmt.Errorf("dsp: measure loudness: %w", ErrEmpty)
	}
	return res, nil
}
