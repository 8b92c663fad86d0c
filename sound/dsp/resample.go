package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// The resampler's prototype low-pass filter, in units of the lower of the
// two rates (R): a sinc cut off at resampleCutoff cycles per R-sample under
// a Kaiser window of beta resampleBeta spanning ±resampleHalfWidth
// R-samples. With beta 8.6 the stopband lies about 86 dB down and the
// transition band is about 0.057 R wide, centred on the cutoff: the
// passband reaches 0.44 R (19.5 kHz at 44.1 kHz) and the stopband starts
// just under R/2, so nothing above the lower Nyquist frequency folds back
// unattenuated.
const (
	resampleBeta      = 8.6
	resampleHalfWidth = 48
	resampleCutoff    = 0.47
	// resamplePhases is how finely the filter table samples the prototype
	// per R-sample; linear interpolation between table points keeps the
	// kernel error near -100 dB.
	resamplePhases = 512
)

// resampleTable is the right half of the prototype, sampled every
// 1/resamplePhases R-samples, with a zero guard point at the end.
var resampleTable = sync.OnceValue(func() []float64 {
	n := resampleHalfWidth * resamplePhases
	t := make([]float64, n+2)
	i0b := resampleBesselI0(resampleBeta)
	for i := 0; i <= n; i++ {
		u := float64(i) / resamplePhases
		x := 2 * resampleCutoff * u
		s := 1.0
		if x != 0 {
			s = math.Sin(math.Pi*x) / (math.Pi * x)
		}
		r := u / resampleHalfWidth
		w := resampleBesselI0(resampleBeta*math.Sqrt(max(0, 1-r*r))) / i0b
		t[i] = 2 * resampleCutoff * s * w
	}
	return t
})

// resampleBesselI0 is the modified Bessel function of the first kind,
// order 0, by its power series.
func resampleBesselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; term > 1e-17*sum; k++ {
		h := x / (2 * float64(k))
		term *= h * h
		sum += term
	}
	return sum
}

// Resampler converts a Reader's sample rate with a band-limited
// interpolator: each output sample is the input convolved with a
// Kaiser-windowed sinc centred on the output instant, whose taps come from
// a finely sampled table by linear interpolation (fractional phase), so any
// pair of rates works without a rational filter bank. The instant advances
// by exact integer arithmetic (in/out reduced by their GCD), so it never
// drifts. Weights are normalised to sum to one per output, which makes the
// DC gain exact.
//
// The filter is symmetric, so the output has no delay: output frame k is
// the input at time k*in/out. Input before the start and after the end is
// taken as silence, and the output has ceil(frames*out/in) frames. It holds
// the filter's span plus one block of input.
type Resampler struct {
	src      Reader
	format   Format
	in, out  int64 // rates reduced by their GCD
	scale    float64
	span     int         // input samples each side of the output instant
	hist     [][]float64 // input from absolute index base on
	base     int64
	pos      int64 // integer part of the output instant, in input samples
	num      int64 // fractional part, in units of 1/out
	srcDone  bool
	srcTotal int64 // input frames, once srcDone
	scratch  Block
	weights  []float64
	err      error
}

// NewResampler returns r converted to outRate frames per second (r itself
// when the rates match). A rate outside Format's range makes every Read
// fail.
func NewResampler(r Reader, outRate int) Reader {
	f := r.Format()
	if outRate == f.SampleRate {
		return r
	}
	out := f
	out.SampleRate = outRate
	rs := &Resampler{src: r, format: out}
	if err := out.Validate(); err != nil {
		rs.err = fmt.Errorf("dsp: resample: %w", err)
		return rs
	}
	if err := f.Validate(); err != nil {
		rs.err = fmt.Errorf("dsp: resample: the source: %w", err)
		return rs
	}
	g := resampleGCD(int64(f.SampleRate), int64(outRate))
	rs.in, rs.out = int64(f.SampleRate)/g, int64(outRate)/g
	rs.scale = min(1, float64(outRate)/float64(f.SampleRate))
	rs.span = int(math.Ceil(resampleHalfWidth / rs.scale))
	rs.hist = make([][]float64, f.Channels)
	for c := range rs.hist {
		rs.hist[c] = make([]float64, rs.span, rs.span+BlockFrames)
	}
	rs.base = -int64(rs.span)
	rs.scratch = NewBlock(f.Channels, BlockFrames)
	rs.weights = make([]float64, 2*rs.span)
	return rs
}

func resampleGCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Format implements Reader.
func (r *Resampler) Format() Format { return r.format }

// Read implements Reader.
func (r *Resampler) Read(buf Block) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(buf) != r.format.Channels {
		return 0, fmt.Errorf("dsp: resample: read into a %d-channel block from a %d-channel stream", len(buf), r.format.Channels)
	}
	n := 0
	for n < buf.Frames() {
		// The taps of the output at pos+num/out are the inputs
		// pos-span+1 .. pos+span.
		first, last := r.pos-int64(r.span)+1, r.pos+int64(r.span)
		if err := r.fill(first, last); err != nil {
			r.err = err
			break
		}
		if r.srcDone && r.pos >= r.srcTotal {
			r.err = io.EOF
			break
		}
		r.compute(buf, n, first)
		n++
		r.num += r.in
		r.pos += r.num / r.out
		r.num %= r.out
	}
	if n == 0 && r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// fill drops history before first and reads the source until the history
// reaches last, padding with silence after the source's end.
func (r *Resampler) fill(first, last int64) error {
	if drop := int(first - r.base); drop > BlockFrames {
		for c := range r.hist {
			r.hist[c] = append(r.hist[c][:0], r.hist[c][drop:]...)
		}
		r.base = first
	}
	for r.base+int64(len(r.hist[0])) <= last {
		if r.srcDone {
			for c := range r.hist {
				r.hist[c] = append(r.hist[c], 0)
			}
			continue
		}
		m, err := r.src.Read(r.scratch)
		for c := range r.hist {
			r.hist[c] = append(r.hist[c], r.scratch[c][:m]...)
		}
		switch {
		case errors.Is(err, io.EOF):
			r.srcDone = true
			r.srcTotal = r.base + int64(len(r.hist[0]))
		case err != nil:
			return err
		}
	}
	return nil
}

// compute writes the output at the current instant into frame n of buf.
func (r *Resampler) compute(buf Block, n int, first int64) {
	tab := resampleTable()
	frac := float64(r.num) / float64(r.out)
	step := r.scale * resamplePhases
	limit := float64(resampleHalfWidth * resamplePhases)
	sum := 0.0
	// Tap j (0-based from first) sits at distance |frac - (j - span + 1)|
	// input samples from the output instant.
	for j := range r.weights {
		d := math.Abs(frac-float64(j-r.span+1)) * step
		w := 0.0
		if d < limit {
			i := int(d)
			f := d - float64(i)
			w = tab[i] + f*(tab[i+1]-tab[i])
		}
		r.weights[j] = w
		sum += w
	}
	off := int(first - r.base)
	for c := range buf {
		x := r.hist[c][off : off+len(r.weights)]
		acc := 0.0
		for j, w := range r.weights {
			acc += w * x[j]
		}
		buf[c][n] = acc / sum
	}
}
