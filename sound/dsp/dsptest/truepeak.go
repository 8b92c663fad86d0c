// Package dsptest is test support for the sound engine (package sound/dsp):
//   - a reference true-peak meter that shares no code and no method with
//     the engine's, for tests that check the engine's readings and the
//     ceilings its mastering promises, and for the soundmeter example's
//     independent reading;
//   - the stem separation test mixture (four known synthetic sources) and
//     the SDR that scores a separation of it, for the tests that measure
//     the quality the engine reports.
//
// It depends only on gonum's FFT, never on package dsp, so dsp's own tests
// can import it.
package dsptest

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The reference interpolates by zero-padding the spectrum of overlapping
// blocks: ideal band-limited interpolation of each block, a brick wall at
// the programme's Nyquist frequency, to Factor times the sample rate. The
// true peak is the largest absolute interpolated value. The engine instead
// filters with windowed-sinc kernels and refines between points.
//
// Its own error, stated so tests can allow for it:
//   - Sampling: a peak can fall between two reference points, so the
//     reading is low by at most 1 - cos(pi f / (Factor fs)) for content at
//     f: SamplingErrorDB at the Nyquist frequency, 0.011 dB up to fs/4. It
//     never reads high from this.
//   - Block edges: each block keeps only its centre, Guard samples from
//     either edge, and fades in and out (raised cosine) over the guards, so
//     the periodic extension the FFT assumes barely reaches the centre. The
//     blocked reading agrees with one transform of the whole programme
//     within EdgeErrorDB, either way (checked by this package's tests on
//     tones, white noise and clipped material).
//
// The programme is taken as zero before its first and after its last
// sample, as the engine's meter takes it, so ringing around an abrupt
// start or end counts in both.
const (
	// Factor is the oversampling factor: 768 kHz at 48 kHz.
	Factor = 16
	// Block is the FFT block, in input samples.
	Block = 16384
	// Guard is the part of each block's either end that is discarded.
	Guard = 2048
	// EdgeErrorDB bounds the block-edge error (dB, either way).
	EdgeErrorDB = 0.002
	// SamplingErrorDB bounds the sampling error (dB, low only) for content
	// up to the Nyquist frequency.
	SamplingErrorDB = 0.042
)

// TruePeak is a streaming reference true-peak meter. Memory is bounded by
// a block per channel and the transforms' scratch (about 13 MB).
type TruePeak struct {
	fwd, inv *fourier.FFT
	coef     []complex128
	wide     []complex128
	seq      []float64
	block    []float64
	taper    []float64
	ch       []channel
	peak     float64
	done     bool
}

// channel is one channel's pending samples.
type channel struct {
	// buf holds samples from position start on (start is negative at
	// first: the zeros before the programme).
	buf   []float64
	start int
	// n counts the channel's samples.
	n int
}

// NewTruePeak returns a reference meter for channels channels.
func NewTruePeak(channels int) *TruePeak {
	t := &TruePeak{
		fwd:   fourier.NewFFT(Block),
		inv:   fourier.NewFFT(Block * Factor),
		coef:  make([]complex128, Block/2+1),
		wide:  make([]complex128, Block*Factor/2+1),
		seq:   make([]float64, Block*Factor),
		block: make([]float64, Block),
		taper: make([]float64, Block),
		ch:    make([]channel, channels),
	}
	for i := range t.taper {
		t.taper[i] = 1
	}
	for i := range Guard {
		t.taper[i] = 0.5 - 0.5*math.Cos(math.Pi*float64(i)/Guard)
		t.taper[Block-1-i] = t.taper[i]
	}
	for c := range t.ch {
		// The first block's kept centre starts Guard samples before the
		// programme.
		t.ch[c] = channel{buf: make([]float64, 2*Guard), start: -2 * Guard}
	}
	return t
}

// Write measures the next samples: block[c] is channel c's, all of one
// length. It panics after Peak.
func (t *TruePeak) Write(block [][]float64) {
	if t.done {
		panic("dsptest: TruePeak.Write after Peak")
	}
	for c, x := range block {
		ch := &t.ch[c]
		ch.buf = append(ch.buf, x...)
		ch.n += len(x)
		for len(ch.buf) >= Block {
			t.transform(ch.buf[:Block])
			ch.drop(Block - 2*Guard)
		}
	}
}

// drop discards the first k pending samples.
func (ch *channel) drop(k int) {
	ch.buf = ch.buf[:copy(ch.buf, ch.buf[k:])]
	ch.start += k
}

// Peak ends the programme and returns its reference true peak (linear, the
// largest over channels): the blocks still pending are completed with the
// zeros after the programme, up to Guard samples past its end.
func (t *TruePeak) Peak() float64 {
	if !t.done {
		t.done = true
		for c := range t.ch {
			ch := &t.ch[c]
			// Kept centres must reach Guard samples past the end.
			for ch.start+Guard < ch.n+Guard {
				for len(ch.buf) < Block {
					ch.buf = append(ch.buf, 0)
				}
				t.transform(ch.buf[:Block])
				ch.drop(Block - 2*Guard)
			}
		}
	}
	return t.peak
}

// transform interpolates one block and raises the peak with its centre.
func (t *TruePeak) transform(x []float64) {
	for i, v := range x {
		t.block[i] = v * t.taper[i]
	}
	t.fwd.Coefficients(t.coef, t.block)
	clear(t.wide)
	copy(t.wide, t.coef)
	// The short block's Nyquist bin is shared between the positive and
	// the negative frequency of the long one.
	t.wide[Block/2] /= 2
	t.inv.Sequence(t.seq, t.wide)
	for _, v := range t.seq[Guard*Factor : (Block-Guard)*Factor] {
		t.peak = max(t.peak, math.Abs(v)/Block)
	}
}

// TruePeakOf returns the reference true peak of a whole programme
// (linear): b[c] is channel c.
func TruePeakOf(b [][]float64) float64 {
	t := NewTruePeak(len(b))
	t.Write(b)
	return t.Peak()
}

// TruePeakDB is TruePeakOf in dBTP.
func TruePeakDB(b [][]float64) float64 {
	return 20 * math.Log10(TruePeakOf(b))
}

// longTruePeak is the reference of one channel by a single transform of
// the whole programme with its guards, no blocks: what the blocked
// reading approximates. It is for this package's tests.
func longTruePeak(x []float64) float64 {
	n := len(x) + 4*Guard
	block := make([]float64, n)
	copy(block[2*Guard:], x)
	coef := fourier.NewFFT(n).Coefficients(nil, block)
	wide := make([]complex128, n*Factor/2+1)
	copy(wide, coef)
	if n%2 == 0 {
		wide[n/2] /= 2
	}
	seq := fourier.NewFFT(n*Factor).Sequence(nil, wide)
	var peak float64
	for _, v := range seq[Guard*Factor : (n-Guard)*Factor] {
		peak = max(peak, math.Abs(v)/float64(n))
	}
	return peak
}
