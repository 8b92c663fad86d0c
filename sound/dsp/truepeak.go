package dsp

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// True peak (spec sound-dsp.md section 1.4): the largest absolute value of
// the continuous, band-limited signal the samples stand for, which can lie
// between samples.
//
// BS.1770-4 Annex 2 describes a 4x oversampling meter with a 48-tap example
// filter and allows meters that oversample more or interpolate better. The
// Annex filter's passband ends well below the Nyquist frequency: it reads
// sines between fs/8 and fs/4 up to 0.3 dB low or 0.15 dB high, and loses
// much of what lies above 18 kHz at 48 kHz. On programme with energy up
// there (noise, cymbals, clipped or synthesised sounds) it reads
// inter-sample peaks up to half a decibel lower than a meter that keeps the
// whole band, such as ffmpeg's, which resamples to 192 kHz, and a limiter
// that trusts it lets those peaks through. This meter keeps the band up to 0.4975 fs (23.9 kHz
// at 48 kHz) and finds the peak between interpolated points rather than
// taking the largest point. It works in two stages:
//
//  1. 2x: the point half-way between every two inputs is interpolated by a
//     1024-tap Kaiser-windowed sinc (beta 8), whose error on any component
//     below 0.4975 fs is under 0.0012 dB. Applied directly that filter
//     would cost 512 multiply-adds per sample; it is applied by FFT
//     convolution (overlap-save, 8192-point blocks: two real transforms per
//     7169 samples, about 60 floating-point operations per sample). This
//     stage is most of the meter's cost: about 7 times the CPU time of the
//     Annex filter, which skipped most of a programme (BenchmarkTruePeak).
//  2. 4x and the peak: the 2x signal fills only the lower half of its band,
//     so a short kernel interpolates it anywhere: a 16-tap Kaiser-windowed
//     sinc (beta 11), error under 0.0002 dB. It gives the points at 1/4 and
//     3/4 of every input interval (a 4x grid). A local maximum of the grid's
//     magnitude can hide a higher peak between its neighbours, by at most a
//     factor 1/cos(pi/8) (0.69 dB, for a component at the Nyquist
//     frequency), so every local maximum within that factor of the peak so
//     far (for the meter) or of the ceiling (for the limiter) is refined: a
//     parabola through it and its neighbours locates the peak, the short
//     kernel is evaluated there on a 16x grid, at the nearest point and its
//     two neighbours, and a parabola through those three gives the peak
//     (within 0.0003 dB of the interpolated signal's).
//
// The reading is within TruePeakErrorDB of the band-limited peak. Every
// rate is interpolated alike (in units of input samples), so 96 and 192 kHz
// programmes are oversampled too rather than read from their samples. The
// programme is taken as zero before its first and after its last sample,
// so ringing around an abrupt start or end counts.

// TruePeakErrorDB bounds how far the true-peak meter's reading can be from
// the band-limited signal's peak, either way, for programme whose content
// lies below 0.4975 times the sample rate: the sum of the worst errors of
// the two interpolation stages on a sine over that band, at every
// fractional position, and of the refinement (0.0012 + 0.0002 + 0.0003 dB),
// rounded up. Content nearer the Nyquist frequency is read lower.
const TruePeakErrorDB = 0.002

// Interpolation constants.
const (
	// tpLong is the stage-1 filter's length: the point half-way between
	// inputs n and n+1 is interpolated from inputs n-511 .. n+512.
	tpLong = 1024
	// tpLongBeta is its Kaiser window's shape parameter.
	tpLongBeta = 8.0
	// tpBlock is the stage-1 FFT length: each block of tpBlock inputs
	// yields tpBlock-tpLong+1 half-way points.
	tpBlock = 8192
	// tpTaps is the stage-2 kernel's length in 2x samples: a point between
	// 2x samples j and j+1 is interpolated from 2x samples j-7 .. j+8.
	tpTaps = 16
	// tpBeta is its Kaiser window's shape parameter.
	tpBeta = 11.0
	// tpFine is the refinement grid's points per 2x interval (16 per
	// input); the coarse (4x) grid is every fourth.
	tpFine = 8
	// tpBefore and tpAfter are the 2x samples a 2x interval j needs around
	// it, refinement included: 2x samples j-tpBefore .. j+tpAfter.
	tpBefore, tpAfter = tpTaps/2 + 1, tpTaps/2 + 2
	// tpChunk is how many 2x intervals share one skip test.
	tpChunk = 128
	// tpCandidate is cos(pi/8): a coarse local maximum below this fraction
	// of a level cannot hide a peak above that level.
	tpCandidate = 0.9238795325112867
)

// truePeakFilter is the interpolator: both kernels and the scratch of
// stage 1. One serves every channel of a meter or a limiter, in turn.
type truePeakFilter struct {
	fft *fourier.FFT
	// long is the stage-1 filter's spectrum, scaled for the unnormalised
	// inverse transform.
	long []complex128
	// g[p] weighs 2x samples j-7 .. j+8 for the point p/8 of the way from
	// 2x sample j to j+1; phase 0 is the sample itself.
	g [tpFine][tpTaps]float64
	// mid is the half-way phase folded over the pairs of taps k and
	// tpTaps-1-k, which it weighs alike.
	mid [tpTaps / 2]float64
	// bound is at least the largest magnitude stage 2 (refined or not)
	// can produce from 2x samples of magnitude at most 1.
	bound float64
	// in, spec and out are stage 1's scratch.
	in   []float64
	spec []complex128
	out  []float64
}

// newTruePeakFilter builds the kernels. Each kernel phase is normalised to
// unit gain at 0 Hz.
func newTruePeakFilter() *truePeakFilter {
	f := &truePeakFilter{
		fft:  fourier.NewFFT(tpBlock),
		in:   make([]float64, tpBlock),
		spec: make([]complex128, tpBlock/2+1),
		out:  make([]float64, tpBlock),
	}
	long := make([]float64, tpBlock)
	windowedSinc(0.5, tpLongBeta, long[:tpLong])
	for i := range long[:tpLong] {
		long[i] /= tpBlock
	}
	f.long = f.fft.Coefficients(nil, long)
	for p := range tpFine {
		windowedSinc(float64(p)/tpFine, tpBeta, f.g[p][:])
	}
	for i := range f.mid {
		f.mid[i] = f.g[tpFine/2][i]
	}
	// The bound: the largest L1 norm over a grid 32 times finer than the
	// refinement's (the norm varies slowly with the position), with a
	// margin for the parabola's overshoot between points.
	var w [tpTaps]float64
	for p := range 32 * tpFine {
		windowedSinc(float64(p)/(32*tpFine), tpBeta, w[:])
		var n float64
		for _, v := range w {
			n += math.Abs(v)
		}
		f.bound = max(f.bound, n)
	}
	f.bound *= 1.001
	return f
}

// windowedSinc fills dst (of even length L) with the Kaiser-windowed sinc
// weights of samples -L/2+1 .. L/2 for the point t in [0, 1) of the way
// from sample 0 to sample 1, normalised to sum to 1.
func windowedSinc(t, beta float64, dst []float64) {
	half := len(dst) / 2
	var s float64
	for i := range dst {
		u := t - float64(i-half+1)
		dst[i] = sinc(u) * kaiser(u/float64(half), beta)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
}

// sinc is sin(pi x)/(pi x).
func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// kaiser is the Kaiser window of shape beta at r in [-1, 1] (0 outside).
func kaiser(r, beta float64) float64 {
	if r <= -1 || r >= 1 {
		return 0
	}
	return besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series.
func besselI0(x float64) float64 {
	s, term := 1.0, 1.0
	for k := 1; k < 200; k++ {
		term *= x / 2 / float64(k)
		s += term * term
		if term*term < s*1e-17 {
			break
		}
	}
	return s
}

// truePeakStream is one channel's stream through the interpolator.
type truePeakStream struct {
	// x holds stage 1's pending inputs, from input x0 on; the next
	// half-way point to interpolate is x0 + tpLong/2 - 1's.
	x  []float64
	x0 int
	// z holds the 2x signal from 2x sample z0 on: 2x sample 2n is input
	// n, 2x sample 2n+1 the half-way point after it.
	z  []float64
	z0 int
	// next is the next 2x interval to scan; prev the coarse value a
	// quarter input before it.
	next int
	prev float64
}

// newTruePeakStream starts a stream with the zeros before the programme:
// from the first 2x interval whose value can involve the first input.
func newTruePeakStream() *truePeakStream {
	// The first half-way point involving input 0 is that after input
	// -tpLong/2; stage 2 reaches tpBefore 2x samples further back.
	first := -tpLong/2 - tpBefore
	return &truePeakStream{
		x:    make([]float64, -(first - tpLong/2 + 1), tpBlock+tpLong),
		x0:   first - tpLong/2 + 1,
		z:    make([]float64, 0, 2*tpBlock+4*tpTaps),
		z0:   2 * first,
		next: 2*first + tpBefore,
	}
}

// clone returns a copy of s that shares no storage with it.
func (s *truePeakStream) clone() *truePeakStream {
	c := *s
	c.x = append(make([]float64, 0, len(s.x)+tpLong+2*tpAfter), s.x...)
	c.z = append(make([]float64, 0, len(s.z)+2*tpLong+4*tpAfter), s.z...)
	return &c
}

// push feeds inputs to s, running stage 1 on every full block.
func (f *truePeakFilter) push(s *truePeakStream, in []float64) {
	s.x = append(s.x, in...)
	for len(s.x) >= tpBlock {
		f.stage1(s, tpBlock)
	}
}

// end feeds s the zeros after the programme and runs stage 1 to the last
// half-way point they leave room for, so stage 2 can scan every interval
// whose value can involve the last input.
func (f *truePeakFilter) end(s *truePeakStream) {
	s.x = append(s.x, make([]float64, tpLong+tpAfter)...)
	for len(s.x) >= tpLong {
		f.stage1(s, min(len(s.x), tpBlock))
	}
}

// stage1 interpolates the half-way points s.x[:n] allows (n-tpLong+1 of
// them, n at most tpBlock) by overlap-save FFT convolution, appends them
// with their inputs to s.z, and drops the inputs no later point needs.
func (f *truePeakFilter) stage1(s *truePeakStream, n int) {
	copy(f.in, s.x[:n])
	clear(f.in[n:])
	f.fft.Coefficients(f.spec, f.in)
	for i, h := range f.long {
		f.spec[i] *= h
	}
	f.fft.Sequence(f.out, f.spec)
	// Circular convolution: outputs tpLong-1 .. n-1 are the linear ones,
	// output tpLong-1+i the point after input x0+tpLong/2-1+i (the
	// kernel is symmetric, so convolution is correlation).
	count := n - tpLong + 1
	for i := range count {
		s.z = append(s.z, s.x[tpLong/2-1+i], f.out[tpLong-1+i])
	}
	s.x = s.x[:copy(s.x, s.x[count:])]
	s.x0 += count
}

// at is stage 2's value at fine position p (in sixteenths of an input) of
// z, whose first sample is 2x sample z0; z must hold 2x samples
// p/8-7 .. p/8+8.
func (f *truePeakFilter) at(z []float64, z0, p int) float64 {
	j, ph := floorDiv(p, tpFine)
	j -= z0
	if ph == 0 {
		return z[j]
	}
	w := (*[tpTaps]float64)(z[j-tpTaps/2+1 : j+tpTaps/2+1])
	h := &f.g[ph]
	var a, b, c, d float64
	for i := 0; i < tpTaps; i += 4 {
		a += h[i] * w[i]
		b += h[i+1] * w[i+1]
		c += h[i+2] * w[i+2]
		d += h[i+3] * w[i+3]
	}
	return (a + b) + (c + d)
}

// floorDiv returns the floor of a/b and the non-negative remainder.
func floorDiv(a, b int) (int, int) {
	q, r := a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}

// half is stage 2's value half-way between 2x samples i and i+1 of z.
func (f *truePeakFilter) half(z []float64, i int) float64 {
	w := (*[tpTaps]float64)(z[i-tpTaps/2+1 : i+tpTaps/2+1])
	var a, b float64
	for k := 0; k < tpTaps/2; k += 2 {
		a += f.mid[k] * (w[k] + w[tpTaps-1-k])
		b += f.mid[k+1] * (w[k+1] + w[tpTaps-2-k])
	}
	return a + b
}

// interval scans the 2x interval j (index i of z, whose first sample is 2x
// sample z0): the coarse points at 2x sample j and half-way to j+1. prev
// is the coarse value before j. It returns the larger of their magnitudes,
// raised by the refined peak of each that is a local maximum of the coarse
// grid's magnitude at least thr, and the coarse value half-way (the next
// interval's prev).
func (f *truePeakFilter) interval(z []float64, z0, i int, prev, thr float64) (peak, last float64) {
	q := f.half(z, i)
	v := [4]float64{prev, z[i], q, z[i+1]}
	for k := 1; k <= 2; k++ {
		m := math.Abs(v[k])
		peak = max(peak, m)
		if m >= thr && m >= math.Abs(v[k-1]) && m >= math.Abs(v[k+1]) {
			peak = max(peak, f.refine(z, z0, 2*(z0+i)+k-1, v[k-1], v[k], v[k+1]))
		}
	}
	return peak, q
}

// refine returns the magnitude of the peak near the coarse (4x) point s
// whose value is b, between neighbours a and c, with |b| not below theirs.
func (f *truePeakFilter) refine(z []float64, z0, s int, a, b, c float64) float64 {
	sign := 1.0
	if b < 0 {
		sign, a, b, c = -1, -a, -b, -c
	}
	// The coarse parabola's vertex, in quarters of an input from s,
	// rounded to the fine grid.
	var off float64
	if den := a - 2*b + c; den < 0 {
		off = max(-1, min(1, 0.5*(a-c)/den))
	}
	p := int(math.Round(4 * (float64(s) + off)))
	ya, yb, yc := sign*f.at(z, z0, p-1), sign*f.at(z, z0, p), sign*f.at(z, z0, p+1)
	// Should the estimate have landed a point off, step towards the
	// larger side (at most twice, which tpBefore and tpAfter allow).
	for range 2 {
		if ya > yb && ya >= yc {
			p--
			ya, yb, yc = sign*f.at(z, z0, p-1), ya, yb
		} else if yc > yb {
			p++
			ya, yb, yc = yb, yc, sign*f.at(z, z0, p+1)
		} else {
			break
		}
	}
	return parabolaPeak(ya, yb, yc)
}

// parabolaPeak is the vertex of the parabola through three equally spaced
// values when the middle one is the largest and the curve is concave;
// otherwise the largest magnitude of the three.
func parabolaPeak(a, b, c float64) float64 {
	den := a - 2*b + c
	if b < a || b < c || den >= 0 {
		return max(math.Abs(a), math.Abs(b), math.Abs(c))
	}
	return b - (a-c)*(a-c)/(8*den)
}

// scan scans the 2x intervals of s that have all the 2x samples they need
// and trims what no later interval needs. With each non-nil, it raises
// *peak (refining against *peak, skipping runs that cannot pass it) or
// raises peaks[j-from] for every interval j (refining against and
// skipping below level). It returns the first interval it did not scan.
func (f *truePeakFilter) scan(s *truePeakStream, peak *float64, peaks []float64, from int, level float64) int {
	lo, hi := s.next-s.z0, len(s.z)-tpAfter
	prev := s.prev
	for c := lo; c < hi; c += tpChunk {
		e := min(c+tpChunk, hi)
		var a float64
		for _, v := range s.z[c-tpBefore : e+tpAfter] {
			if v > a || -v > a {
				a = math.Abs(v)
			}
		}
		if peak != nil {
			level = *peak
		}
		if a*f.bound <= level {
			prev = f.half(s.z, e-1)
			continue
		}
		for i := c; i < e; i++ {
			var p float64
			if peak != nil {
				p, prev = f.interval(s.z, s.z0, i, prev, *peak*tpCandidate)
				*peak = max(*peak, p)
			} else {
				p, prev = f.interval(s.z, s.z0, i, prev, level*tpCandidate)
				k := s.z0 + i - from
				peaks[k] = max(peaks[k], p)
			}
		}
	}
	s.prev = prev
	s.next = s.z0 + max(hi, lo)
	if d := s.next - tpBefore - s.z0; d > 0 {
		s.z = s.z[:copy(s.z, s.z[d:])]
		s.z0 += d
	}
	return s.next
}

// truePeakMeter tracks the largest absolute sample and the true peak of a
// stream. Each channel's stream carries its state between writes, so how
// the programme is cut into blocks changes nothing.
type truePeakMeter struct {
	f  *truePeakFilter
	ch []*truePeakStream
	// max is the largest interpolated magnitude, sampleMax the largest
	// sample magnitude so far.
	max, sampleMax float64
}

func newTruePeakMeter(channels int) *truePeakMeter {
	t := &truePeakMeter{f: newTruePeakFilter(), ch: make([]*truePeakStream, channels)}
	for c := range t.ch {
		t.ch[c] = newTruePeakStream()
	}
	return t
}

// samplePeak is the largest absolute sample so far.
func (t *truePeakMeter) samplePeak() float64 { return t.sampleMax }

// write measures the next frames of every channel.
func (t *truePeakMeter) write(b Block) {
	for c := range b {
		for _, x := range b[c] {
			if x > t.sampleMax || -x > t.sampleMax {
				t.sampleMax = math.Abs(x)
			}
		}
		t.f.push(t.ch[c], b[c])
		t.f.scan(t.ch[c], &t.max, nil, 0, 0)
	}
}

// peak is the true peak of everything written so far (never below the
// sample peak), the programme taken as ending with the last write. The
// intervals still waiting for later inputs are scanned against zeros on
// copies of the streams, so the meter is unchanged and writing may go on.
func (t *truePeakMeter) peak() float64 {
	m := t.max
	for _, s := range t.ch {
		s = s.clone()
		t.f.end(s)
		t.f.scan(s, &m, nil, 0, 0)
	}
	return max(m, t.sampleMax)
}
