package dsp

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
)

// DenoiseOptions configure NewDenoise. The zero value reduces noise by up
// to 18 dB.
type DenoiseOptions struct {
	// ReductionDB is the largest attenuation of any time-frequency bin:
	// the Wiener gain's floor is -ReductionDB. Range [3, 40]; 0 means the
	// default 18 dB. More removes more noise and risks "musical noise".
	ReductionDB float64
}

func (o *DenoiseOptions) validate() error {
	if o.ReductionDB == 0 {
		return nil
	}
	return optionRange("denoise", "ReductionDB", o.ReductionDB, 3, 40)
}

// Denoiser parameters.
const (
	// denoiseSeconds is the frame length (2048 samples at 48 kHz).
	denoiseSeconds = 0.0427
	// denoiseInitSeconds is the span read ahead for the first noise
	// estimate.
	denoiseInitSeconds = 3
	// denoisePercentile is the per-bin percentile of frame power taken as
	// the noise floor.
	denoisePercentile = 0.1
	// denoiseMedianBins is the half-width of the running lower quartile
	// that smooths the noise floor across frequency.
	denoiseMedianBins = 16
	// denoiseDD is the decision-directed smoothing constant.
	denoiseDD = 0.98
	// denoiseTrackStep is the quantile tracker's step (natural log units
	// of power per frame, upwards; downwards it is nine times larger).
	denoiseTrackStep = 0.02
)

// NewDenoise returns r with stationary broadband noise reduced by a
// short-time Wiener filter, per channel:
//
//   - STFT: frames of about 43 ms (2048 samples at 48 kHz) with a
//     square-root Hann window, hop a quarter frame, resynthesised by
//     weighted overlap-add with the same window; the output is aligned
//     with the input and as long.
//   - Noise floor: for each bin, the 10th percentile of frame power over
//     the first 3 s (read ahead once), then followed by a quantile tracker
//     (steps up slowly, down nine times faster) so a changing floor is
//     followed; divided by the 10th percentile of an exponential
//     distribution (0.105) to give the noise's mean power, and replaced by
//     its lower quartile over ±16 bins (±375 Hz at 48 kHz), so steady
//     tones, even harmonics as dense as a voice's, are not taken for
//     noise.
//   - Gain: Wiener gain xi/(1+xi) with the a-priori SNR xi estimated
//     decision-directed (0.98), which smooths gains over time, floored at
//     -ReductionDB, and smoothed over frequency with a [1/4, 1/2, 1/4]
//     kernel.
//
// A steady tone far above the floor keeps a gain close to 1; a noise-only
// bin falls to the floor. Errors are *OptionError for invalid options and
// the reader's while reading ahead.
func NewDenoise(r Reader, o DenoiseOptions) (Reader, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := r.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.ReductionDB == 0 {
		o.ReductionDB = 18
	}
	size := stftSizeFor(f.SampleRate, denoiseSeconds)
	head, rr, err := prefetch(r, denoiseInitSeconds*f.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("dsp: denoise: %w", err)
	}
	d := &denoiser{
		size:  size,
		hop:   size / 4,
		floor: math.Pow(10, -o.ReductionDB/20),
		fft:   fourier.NewFFT(size),
		win:   make([]float64, size),
		frame: make([]float64, size),
		coeff: make([]complex128, size/2+1),
		ch:    make([]denoiseChannel, f.Channels),
	}
	for i := range d.win {
		d.win[i] = math.Sqrt(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(size)))
	}
	bins := size/2 + 1
	for c := range d.ch {
		ch := &d.ch[c]
		ch.in = make([]float64, size-d.hop, size+BlockFrames)
		ch.acc = make([]float64, size)
		ch.track = make([]float64, bins)
		ch.noise = make([]float64, bins)
		ch.prevG = make([]float64, bins)
		ch.prevGamma = make([]float64, bins)
		ch.gain = make([]float64, bins)
		d.initNoise(ch, head[c])
	}
	d.skip = size - d.hop
	return newFIFOReader(rr, d), nil
}

type denoiser struct {
	size, hop int
	floor     float64
	fft       *fourier.FFT
	win       []float64
	frame     []float64
	coeff     []complex128
	ch        []denoiseChannel
	// skip is how many leading output samples (the padding) remain to be
	// dropped; total and emitted count input and output frames.
	skip          int
	total, emited int
}

type denoiseChannel struct {
	in  []float64 // unprocessed input, starting at the next frame
	acc []float64 // overlap-add accumulator of the next size outputs
	// track is the log-power percentile tracker; noise the smoothed
	// noise power derived from it.
	track, noise     []float64
	prevG, prevGamma []float64
	gain             []float64
	frames           int
	out              []float64
}

// power fills d.coeff with the spectrum of x (size samples) windowed.
func (d *denoiser) spectrum(x []float64) {
	for i, v := range x[:d.size] {
		d.frame[i] = v * d.win[i]
	}
	d.fft.Coefficients(d.coeff, d.frame)
}

// initNoise sets ch's noise floor from the frames of head.
func (d *denoiser) initNoise(ch *denoiseChannel, head []float64) {
	bins := len(ch.track)
	var frames [][]float64
	for s := 0; s+d.size <= len(head); s += d.hop {
		d.spectrum(head[s:])
		p := make([]float64, bins)
		for k, c := range d.coeff {
			p[k] = real(c)*real(c) + imag(c)*imag(c)
		}
		frames = append(frames, p)
	}
	if len(frames) == 0 {
		for k := range ch.track {
			ch.track[k] = math.Inf(-1)
		}
		d.updateNoise(ch)
		return
	}
	col := make([]float64, len(frames))
	idx := int(denoisePercentile * float64(len(frames)-1))
	for k := range bins {
		for j, p := range frames {
			col[j] = p[k]
		}
		slices.Sort(col)
		ch.track[k] = math.Log(col[idx] + 1e-300)
	}
	d.updateNoise(ch)
}

// updateNoise derives ch.noise from ch.track.
func (d *denoiser) updateNoise(ch *denoiseChannel) {
	bins := len(ch.track)
	const toMean = 1 / 0.10536051565782628 // -1/ln(0.9)
	win := make([]float64, 0, 2*denoiseMedianBins+1)
	for k := range bins {
		win = win[:0]
		for j := max(k-denoiseMedianBins, 0); j <= min(k+denoiseMedianBins, bins-1); j++ {
			win = append(win, ch.track[j])
		}
		slices.Sort(win)
		ch.noise[k] = math.Exp(win[len(win)/4]) * toMean
	}
}

func (d *denoiser) process(in Block, final bool, out *Block) {
	d.total += in.Frames()
	for c := range d.ch {
		ch := &d.ch[c]
		ch.in = append(ch.in, in[c]...)
		if final {
			ch.in = append(ch.in, make([]float64, d.size)...)
		}
		ch.out = ch.out[:0]
		start := 0
		for start+d.size <= len(ch.in) {
			d.frameStep(ch, ch.in[start:start+d.size])
			start += d.hop
		}
		ch.in = append(ch.in[:0], ch.in[start:]...)
	}
	// Every channel produced the same count.
	produced := len(d.ch[0].out)
	from := min(d.skip, produced)
	d.skip -= from
	to := max(min(produced, from+d.total-d.emited), from)
	for c := range d.ch {
		(*out)[c] = append((*out)[c], d.ch[c].out[from:to]...)
	}
	d.emited += to - from
}

// frameStep denoises one frame of ch and appends hop finished samples to
// ch.out.
func (d *denoiser) frameStep(ch *denoiseChannel, x []float64) {
	d.spectrum(x)
	up, down := denoiseTrackStep, denoiseTrackStep*(1-denoisePercentile)/denoisePercentile
	first := ch.frames == 0
	ch.frames++
	for k, c := range d.coeff {
		p := real(c)*real(c) + imag(c)*imag(c)
		if lp := math.Log(p + 1e-300); lp > ch.track[k] {
			ch.track[k] += up
		} else {
			ch.track[k] = max(ch.track[k]-down, lp)
		}
		n := ch.noise[k]
		if n <= 0 {
			ch.gain[k] = 1
			continue
		}
		gamma := p / n
		ml := max(gamma-1, 0)
		xi := ml
		if !first {
			xi = denoiseDD*ch.prevG[k]*ch.prevG[k]*ch.prevGamma[k] + (1-denoiseDD)*ml
		}
		g := max(xi/(1+xi), d.floor)
		ch.prevG[k], ch.prevGamma[k] = g, gamma
		ch.gain[k] = g
	}
	if ch.frames%8 == 0 {
		d.updateNoise(ch)
	}
	last := len(ch.gain) - 1
	for k, c := range d.coeff {
		g := ch.gain[k] / 2
		g += ch.gain[max(k-1, 0)] / 4
		g += ch.gain[min(k+1, last)] / 4
		d.coeff[k] = c * complex(g, 0)
	}
	d.fft.Sequence(d.frame, d.coeff)
	// Square-root Hann analysis and synthesis at a quarter-frame hop
	// overlap-add to 2; the inverse FFT is unnormalised.
	scale := 1 / (2 * float64(d.size))
	for i, v := range d.frame {
		ch.acc[i] += v * d.win[i] * scale
	}
	ch.out = append(ch.out, ch.acc[:d.hop]...)
	copy(ch.acc, ch.acc[d.hop:])
	clear(ch.acc[d.size-d.hop:])
}
