package dsp

import "math"

// True peak per ITU-R BS.1770-4 Annex 2 (spec sound-dsp.md section 1.4):
// the signal is oversampled by a polyphase FIR and the largest absolute
// interpolated value is the true peak.
//
// The interpolator is the Annex's 48-tap example filter for 4x
// oversampling, in four polyphase branches of 12 taps. Branch p produces
// the value at 1/8 + p/4 of a sample between inputs, so branches 0 and 2
// alone form a 2x interpolator of the same passband, used from 96 kHz;
// from 192 kHz no oversampling is done and the true peak is the sample
// peak. The reported value is never below the sample peak.

// truePeakTaps is the length of each polyphase branch.
const truePeakTaps = 12

// truePeakChunk is how many outputs share one bound check: a run whose
// inputs cannot lift the peak (largest input times the filter's largest
// branch L1 norm at or below the running peak) is skipped. The bound is
// exact, so skipping never changes the result.
const truePeakChunk = 64

// truePeakMeter tracks the largest absolute sample and the largest
// absolute interpolated value of a stream. The last truePeakTaps-1 inputs
// of each channel are carried between writes, so interpolation is
// continuous across block boundaries.
type truePeakMeter struct {
	// factor is the oversampling factor: 4, 2 or 1 (none).
	factor int
	// hist holds each channel's last truePeakTaps-1 inputs, oldest first.
	hist [][truePeakTaps - 1]float64
	// buf is scratch: history followed by the block being scanned.
	buf []float64
	// bound is the largest L1 norm of the branches in use.
	bound float64
	// max is the largest interpolated, sampleMax the largest sample
	// magnitude so far.
	max, sampleMax float64
}

func newTruePeakMeter(sampleRate, channels int) *truePeakMeter {
	t := &truePeakMeter{hist: make([][truePeakTaps - 1]float64, channels)}
	switch {
	case sampleRate < 96000:
		t.factor = 4
	case sampleRate < 192000:
		t.factor = 2
	default:
		t.factor = 1
	}
	var n0, n1 float64
	for _, h := range [...]float64{h00, h01, h02, h03, h04, h05, h06, h07, h08, h09, h010, h011} {
		n0 += math.Abs(h)
	}
	for _, h := range [...]float64{h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h110, h111} {
		n1 += math.Abs(h)
	}
	t.bound = n0
	if t.factor == 4 {
		t.bound = max(n0, n1)
	}
	return t
}

// peak is the largest absolute interpolated value so far (0 when not
// oversampling; the caller takes the maximum with the sample peak).
func (t *truePeakMeter) peak() float64 { return t.max }

// samplePeak is the largest absolute sample so far.
func (t *truePeakMeter) samplePeak() float64 { return t.sampleMax }

// write scans the next frames of every channel.
func (t *truePeakMeter) write(b Block) {
	if t.factor == 1 {
		for c := range b {
			for _, x := range b[c] {
				if x > t.sampleMax || -x > t.sampleMax {
					t.sampleMax = math.Abs(x)
				}
			}
		}
		return
	}
	const h = truePeakTaps - 1
	for c := range b {
		t.buf = append(append(t.buf[:0], t.hist[c][:]...), b[c]...)
		t.scan(t.buf)
		copy(t.hist[c][:], t.buf[len(t.buf)-h:])
	}
}

// scan interpolates around every input of buf after its first
// truePeakTaps-1 (the history) and raises t.max. The largest input of
// each run also raises t.sampleMax: the history it includes holds earlier
// samples (or the initial zeros), so this is the sample peak at no extra
// pass.
func (t *truePeakMeter) scan(buf []float64) {
	const h = truePeakTaps - 1
	for start := h; start < len(buf); start += truePeakChunk {
		end := min(start+truePeakChunk, len(buf))
		var a float64
		for _, v := range buf[start-h : end] {
			if v > a || -v > a {
				a = math.Abs(v)
			}
		}
		t.sampleMax = max(t.sampleMax, a)
		if a*t.bound <= t.max {
			continue
		}
		if t.factor == 4 {
			t.max = max(t.max, interpolate4(buf[start-h:end]))
		} else {
			t.max = max(t.max, interpolate2(buf[start-h:end]))
		}
	}
}

// Branches 0 (h00..h011) and 1 (h10..h111) of the Annex 2 example filter;
// branch 2 is branch 1 reversed and branch 3 branch 0 reversed. They are
// constants so the inner loops carry them as immediates.
const (
	h00, h01, h02, h03, h04, h05   = 0.0017089843750, 0.0109863281250, -0.0196533203125, 0.0332031250000, -0.0594482421875, 0.1373291015625
	h06, h07, h08, h09, h010, h011 = 0.9721679687500, -0.1022949218750, 0.0476074218750, -0.0266113281250, 0.0148925781250, -0.0083007812500
	h10, h11, h12, h13, h14, h15   = -0.0291748046875, 0.0292968750000, -0.0517578125000, 0.0891113281250, -0.1665039062500, 0.4650878906250
	h16, h17, h18, h19, h110, h111 = 0.7797851562500, -0.2003173828125, 0.1015625000000, -0.0582275390625, 0.0330810546875, -0.0189208984375
)

// interpolate4 returns the largest absolute 4x-interpolated value for the
// inputs x[11:], each using the 11 inputs before it. The 12-input window
// slides through locals (x0 newest), one load per input.
func interpolate4(x []float64) float64 {
	if len(x) < truePeakTaps {
		return 0
	}
	x1, x2, x3, x4, x5, x6 := x[10], x[9], x[8], x[7], x[6], x[5]
	x7, x8, x9, x10, x11 := x[4], x[3], x[2], x[1], x[0]
	var m float64
	for _, x0 := range x[truePeakTaps-1:] {
		y0 := h00*x0 + h01*x1 + h02*x2 + h03*x3 + h04*x4 + h05*x5 +
			h06*x6 + h07*x7 + h08*x8 + h09*x9 + h010*x10 + h011*x11
		y3 := h00*x11 + h01*x10 + h02*x9 + h03*x8 + h04*x7 + h05*x6 +
			h06*x5 + h07*x4 + h08*x3 + h09*x2 + h010*x1 + h011*x0
		y1 := h10*x0 + h11*x1 + h12*x2 + h13*x3 + h14*x4 + h15*x5 +
			h16*x6 + h17*x7 + h18*x8 + h19*x9 + h110*x10 + h111*x11
		y2 := h10*x11 + h11*x10 + h12*x9 + h13*x8 + h14*x7 + h15*x6 +
			h16*x5 + h17*x4 + h18*x3 + h19*x2 + h110*x1 + h111*x0
		// Plain compares, not math.Abs or max: the peak rarely moves, so
		// these branches predict well, and math.Abs is slow under -race.
		if y0 > m || -y0 > m || y1 > m || -y1 > m || y2 > m || -y2 > m || y3 > m || -y3 > m {
			m = max(m, math.Abs(y0), math.Abs(y1), math.Abs(y2), math.Abs(y3))
		}
		x11, x10, x9, x8, x7, x6, x5, x4, x3, x2, x1 = x10, x9, x8, x7, x6, x5, x4, x3, x2, x1, x0
	}
	return m
}

// interpolate2 is interpolate4 with branches 0 and 2 only (2x).
func interpolate2(x []float64) float64 {
	if len(x) < truePeakTaps {
		return 0
	}
	x1, x2, x3, x4, x5, x6 := x[10], x[9], x[8], x[7], x[6], x[5]
	x7, x8, x9, x10, x11 := x[4], x[3], x[2], x[1], x[0]
	var m float64
	for _, x0 := range x[truePeakTaps-1:] {
		y0 := h00*x0 + h01*x1 + h02*x2 + h03*x3 + h04*x4 + h05*x5 +
			h06*x6 + h07*x7 + h08*x8 + h09*x9 + h010*x10 + h011*x11
		y2 := h10*x11 + h11*x10 + h12*x9 + h13*x8 + h14*x7 + h15*x6 +
			h16*x5 + h17*x4 + h18*x3 + h19*x2 + h110*x1 + h111*x0
		if y0 > m || -y0 > m || y2 > m || -y2 > m {
			m = max(m, math.Abs(y0), math.Abs(y2))
		}
		x11, x10, x9, x8, x7, x6, x5, x4, x3, x2, x1 = x10, x9, x8, x7, x6, x5, x4, x3, x2, x1, x0
	}
	return m
}
