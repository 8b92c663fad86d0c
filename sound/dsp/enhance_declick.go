package dsp

import (
	"math"
	"slices"
)

// DeclickOptions configure NewDeclick. The zero value uses a threshold of
// 5 robust standard deviations.
type DeclickOptions struct {
	// Threshold is how many robust standard deviations (1.4826 times the
	// median absolute prediction residual of the segment) a sample's
	// residual must exceed to be flagged. Range [2, 20]; 0 means the
	// default 5. Lower finds fainter clicks and more false ones.
	Threshold float64
}

func (o *DeclickOptions) validate() error {
	if o.Threshold == 0 {
		return nil
	}
	return optionRange("declick", "Threshold", o.Threshold, 2, 20)
}

// Declicker parameters, in seconds at any rate.
const (
	// declickSegment is the span repaired per step (2048 samples at
	// 48 kHz); declickMargin the context kept on either side of it.
	declickSegment = 2048.0 / 48000
	declickMargin  = 256.0 / 48000
	// declickOrder is the AR model order at 48 kHz (scaled with the rate).
	declickOrder = 32
	// declickMaxClick bounds a repairable click (about 4 ms); longer
	// flagged runs are left alone as not a click.
	declickMaxClick = 0.004
	// declickGap merges flagged samples this close into one click, and
	// declickPad widens every click by as much on each side.
	declickGap = 8
	declickPad = 4
	// declickBlock is the block over which the local residual level is
	// taken.
	declickBlock = 256
)

// NewDeclick returns r with clicks detected and repaired, per channel, in
// segments of about 43 ms with 5 ms of context either side (the left
// context already repaired):
//
//   - An AR model (order 32 at 48 kHz, scaled with the rate) is fitted to
//     the Hann-windowed segment by Yule-Walker / Levinson-Durbin.
//   - Forward and backward prediction residuals are computed; a click
//     makes both large at its own samples, while a click's echo through
//     the predictor lands after it in the forward residual and before it
//     in the backward one, so a sample is flagged when the smaller of the
//     two exceeds Threshold times the robust deviation of the forward
//     residual, raised where the statistic's local median (over
//     256-sample blocks and their neighbours) stands above the segment's,
//     so dense transients such as a snare's noise are not taken for runs
//     of clicks. Flags closer than 8 samples merge into one click, widened
//     by 4 samples each side; runs over 4 ms are left alone.
//   - The flagged samples are replaced by least-squares AR interpolation:
//     the values that minimise the prediction-error energy given the
//     surrounding known samples (normal equations solved by Cholesky).
//   - The model is fitted again on the repaired segment and detection and
//     repair repeated once, so strong clicks do not bias the model.
//
// The output is aligned with the input and as long; memory is one segment
// per channel.
func NewDeclick(r Reader, o DeclickOptions) (Reader, error) {
	d, err := newDeclicker(r, o)
	if err != nil {
		return nil, err
	}
	return newFIFOReader(r, d), nil
}

type declicker struct {
	threshold     float64
	seg, margin   int
	order         int
	maxClick      int
	ch            []declickChannel
	onClickFunc   func(channel int, start, end int) // for tests: repaired spans [start, end)
	ar, rc, scr   []float64
	ef, eb, scrAb []float64
}

type declickChannel struct {
	buf  []float64 // [left context | pending input]
	ctx  int       // left context length
	base int       // absolute index of buf[0]
}

func newDeclicker(r Reader, o DeclickOptions) (*declicker, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := r.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.Threshold == 0 {
		o.Threshold = 5
	}
	rate := float64(f.SampleRate)
	d := &declicker{
		threshold: o.Threshold,
		seg:       int(math.Round(declickSegment * rate)),
		margin:    int(math.Round(declickMargin * rate)),
		order:     max(int(math.Round(declickOrder*rate/48000)), 8),
		maxClick:  int(declickMaxClick * rate),
		ch:        make([]declickChannel, f.Channels),
	}
	d.margin = max(d.margin, 2*d.order+d.maxClick/2)
	return d, nil
}

func (d *declicker) process(in Block, final bool, out *Block) {
	for c := range d.ch {
		ch := &d.ch[c]
		ch.buf = append(ch.buf, in[c]...)
		for len(ch.buf)-ch.ctx >= d.seg+d.margin || (final && len(ch.buf) > ch.ctx) {
			end := min(ch.ctx+d.seg+d.margin, len(ch.buf))
			center := min(d.seg, end-ch.ctx)
			d.repair(c, ch.buf[:end], ch.ctx, ch.ctx+center, ch.base)
			(*out)[c] = append((*out)[c], ch.buf[ch.ctx:ch.ctx+center]...)
			keep := min(d.margin, ch.ctx+center)
			drop := ch.ctx + center - keep
			ch.buf = append(ch.buf[:0], ch.buf[drop:]...)
			ch.base += drop
			ch.ctx = keep
		}
	}
}

// repair detects and repairs clicks in x, writing only samples within
// [lo, hi); base is x[0]'s absolute index.
func (d *declicker) repair(c int, x []float64, lo, hi, base int) {
	p := d.order
	if len(x) < 4*p {
		return
	}
	var spans [][2]int
	for pass := range 2 {
		if !d.fit(x) {
			return
		}
		spans = d.detect(x)
		if len(spans) == 0 {
			return
		}
		if pass == 0 {
			// Repair a copy to refit the model on.
			y := slices.Clone(x)
			d.interpolate(y, spans)
			if !d.fit(y) {
				return
			}
		}
	}
	repaired := slices.Clone(x)
	d.interpolate(repaired, spans)
	copy(x[lo:hi], repaired[lo:hi])
	if d.onClickFunc != nil {
		for _, s := range spans {
			if s[1] > lo && s[0] < hi {
				d.onClickFunc(c, base+s[0], base+s[1])
			}
		}
	}
}

// fit sets d.ar (a_1..a_p, prediction x[n] ~ sum a_k x[n-k]) and d.rc
// (autocorrelation of the prediction-error filter) from x; false when x
// is silent.
func (d *declicker) fit(x []float64) bool {
	p, n := d.order, len(x)
	w := d.scr[:0]
	for i, v := range x {
		w = append(w, v*(0.5-0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/float64(n))))
	}
	d.scr = w
	r := make([]float64, p+1)
	for lag := range r {
		var s float64
		for i := lag; i < n; i++ {
			s += w[i] * w[i-lag]
		}
		r[lag] = s
	}
	if r[0] <= 1e-20 {
		return false
	}
	r[0] *= 1 + 1e-9
	// Levinson-Durbin.
	a := make([]float64, p+1)
	tmp := make([]float64, p+1)
	e := r[0]
	for i := 1; i <= p; i++ {
		acc := r[i]
		for j := 1; j < i; j++ {
			acc -= a[j] * r[i-j]
		}
		k := acc / e
		copy(tmp, a)
		a[i] = k
		for j := 1; j < i; j++ {
			a[j] = tmp[j] - k*tmp[i-j]
		}
		e *= 1 - k*k
		if e <= 0 {
			return false
		}
	}
	d.ar = a[1:]
	// Prediction-error filter c = [1, -a1, ..., -ap] and its
	// autocorrelation.
	cf := make([]float64, p+1)
	cf[0] = 1
	for k, v := range d.ar {
		cf[k+1] = -v
	}
	d.rc = make([]float64, p+1)
	for lag := range d.rc {
		var s float64
		for j := 0; j+lag <= p; j++ {
			s += cf[j] * cf[j+lag]
		}
		d.rc[lag] = s
	}
	return true
}

// detect returns the clicks of x as [start, end) spans at least p samples
// from either end of x.
func (d *declicker) detect(x []float64) [][2]int {
	p, n := d.order, len(x)
	if cap(d.ef) < n {
		d.ef, d.eb = make([]float64, n), make([]float64, n)
	}
	ef, eb := d.ef[:n], d.eb[:n]
	for i := range n {
		ef[i], eb[i] = 0, 0
		if i >= p {
			s := x[i]
			for k, a := range d.ar {
				s -= a * x[i-k-1]
			}
			ef[i] = s
		}
		if i+p < n {
			s := x[i]
			for k, a := range d.ar {
				s -= a * x[i+k+1]
			}
			eb[i] = s
		}
	}
	// The robust deviation of the forward residual sets the segment's
	// threshold; it is raised where the local level of the detection
	// statistic (its median over blocks of declickBlock samples, the
	// largest of a block and its two neighbours) exceeds the segment's,
	// so dense transients such as a snare's noise burst are not taken for
	// a run of clicks. Medians ignore clicks shorter than half a block.
	abs := d.scrAb[:0]
	for _, v := range ef[p:] {
		abs = append(abs, math.Abs(v))
	}
	d.scrAb = abs
	slices.Sort(abs)
	sigma := max(1.4826*abs[len(abs)/2], 1e-9)
	abs = abs[:0]
	for i := p; i < n-p; i++ {
		abs = append(abs, min(math.Abs(ef[i]), math.Abs(eb[i])))
	}
	slices.Sort(abs)
	segLevel := max(abs[len(abs)/2], 1e-12)
	blocks := (n + declickBlock - 1) / declickBlock
	level := make([]float64, blocks)
	for b := range blocks {
		abs = abs[:0]
		for i := max(b*declickBlock, p); i < min((b+1)*declickBlock, n-p); i++ {
			abs = append(abs, min(math.Abs(ef[i]), math.Abs(eb[i])))
		}
		if len(abs) == 0 {
			continue
		}
		slices.Sort(abs)
		level[b] = abs[len(abs)/2] / segLevel
	}
	thr := func(i int) float64 {
		b := i / declickBlock
		l := level[b]
		if b > 0 {
			l = max(l, level[b-1])
		}
		if b+1 < blocks {
			l = max(l, level[b+1])
		}
		return d.threshold * sigma * max(l, 1)
	}

	var spans [][2]int
	start, last := -1, -1
	flush := func() {
		if start < 0 {
			return
		}
		s, e := start-declickPad, last+1+declickPad
		if s >= p && e <= n-p && e-s <= d.maxClick+2*declickPad {
			spans = append(spans, [2]int{s, e})
		}
		start = -1
	}
	for i := p; i < n-p; i++ {
		if min(math.Abs(ef[i]), math.Abs(eb[i])) <= thr(i) {
			continue
		}
		if start >= 0 && i-last > declickGap {
			flush()
		}
		if start < 0 {
			start = i
		}
		last = i
	}
	flush()
	return spans
}

// interpolate replaces the samples of x in spans by least-squares AR
// interpolation.
func (d *declicker) interpolate(x []float64, spans [][2]int) {
	p := d.order
	var u []int
	for _, s := range spans {
		for i := s[0]; i < s[1]; i++ {
			u = append(u, i)
		}
	}
	m := len(u)
	if m == 0 {
		return
	}
	// e0: the prediction error with the unknowns set to zero, around each
	// unknown.
	cf := make([]float64, p+1)
	cf[0] = 1
	for k, v := range d.ar {
		cf[k+1] = -v
	}
	for _, i := range u {
		x[i] = 0
	}
	resid := func(n int) float64 {
		var s float64
		for j, c := range cf {
			s += c * x[n-j]
		}
		return s
	}
	a := make([]float64, m*m)
	b := make([]float64, m)
	for i, ti := range u {
		var s float64
		for j, c := range cf {
			s += c * resid(ti+j)
		}
		b[i] = -s
		for j, tj := range u {
			if lag := ti - tj; lag <= p && lag >= -p {
				if lag < 0 {
					lag = -lag
				}
				a[i*m+j] = d.rc[lag]
			}
		}
	}
	if !cholSolve(a, b, m) {
		return
	}
	for i, ti := range u {
		x[ti] = b[i]
	}
}

// cholSolve solves the symmetric positive-definite system a x = b (a is
// m x m, row-major) in place: b becomes x. It reports false when a is not
// positive definite.
func cholSolve(a, b []float64, m int) bool {
	for j := range m {
		s := a[j*m+j]
		for k := range j {
			s -= a[j*m+k] * a[j*m+k]
		}
		if s <= 0 {
			return false
		}
		l := math.Sqrt(s)
		a[j*m+j] = l
		for i := j + 1; i < m; i++ {
			t := a[i*m+j]
			for k := range j {
				t -= a[i*m+k] * a[j*m+k]
			}
			a[i*m+j] = t / l
		}
	}
	for i := range m {
		s := b[i]
		for k := range i {
			s -= a[i*m+k] * b[k]
		}
		b[i] = s / a[i*m+i]
	}
	for i := m - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < m; k++ {
			s -= a[k*m+i] * b[k]
		}
		b[i] = s / a[i*m+i]
	}
	return true
}
