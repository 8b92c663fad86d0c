package dsp

import (
	"math"
	"testing"
)

// EBU Tech 3341 cases 15-19: true peak of 1 s stereo sines whose samples
// miss the waveform's peak, within +0.2 / -0.4 dB. The tones get a 0.1 s
// raised-cosine taper as the spec advises, so onset ringing of an abrupt
// start does not count.
func TestTech3341TruePeak(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		fs         int
		freq, amp  float64
		phaseDeg   float64
		want       float64
		sampleWant float64 // expected sample peak, dBFS (NaN: not checked)
	}{
		{"3341-15", 48000, 12000, 0.50, 0, -6.0, math.NaN()},
		{"3341-16", 48000, 12000, 0.50, 45, -6.0, -9.03},
		{"3341-17", 48000, 8000, 0.50, 60, -6.0, math.NaN()},
		{"3341-18", 48000, 6000, 0.50, 67.5, -6.0, math.NaN()},
		{"3341-19", 48000, 12000, 1.41, 45, +3.0, -0.03},
		// 2x oversampling from 96 kHz: the same shapes at fs/4 and fs/8.
		{"3341-16 at 96 kHz", 96000, 24000, 0.50, 45, -6.0, -9.03},
		{"3341-18 at 96 kHz", 96000, 12000, 0.50, 67.5, -6.0, math.NaN()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newToneReader(c.fs, 2, c.freq, segment{20 * math.Log10(c.amp), 1})
			r.phase = c.phaseDeg * math.Pi / 180
			r.taper = 0.1
			res := measure(t, r)
			if !res.TruePeakAvailable {
				t.Fatalf("true peak unavailable: %s", res.TruePeakReason)
			}
			if d := res.TruePeakDBTP - c.want; d > 0.2 || d < -0.4 {
				t.Errorf("TP = %.3f dBTP, want %.1f +0.2/-0.4", res.TruePeakDBTP, c.want)
			}
			if !math.IsNaN(c.sampleWant) && math.Abs(res.SamplePeakDBFS-c.sampleWant) > 0.01 {
				t.Errorf("sample peak = %.3f dBFS, want %.2f", res.SamplePeakDBFS, c.sampleWant)
			}
			if res.TruePeakDBTP < res.SamplePeakDBFS {
				t.Errorf("TP %.3f below sample peak %.3f", res.TruePeakDBTP, res.SamplePeakDBFS)
			}
			t.Logf("TP = %.3f dBTP, sample peak %.3f dBFS", res.TruePeakDBTP, res.SamplePeakDBFS)
		})
	}
}

// From 192 kHz the true peak is the sample peak.
func TestTruePeakNoOversampling(t *testing.T) {
	t.Parallel()
	r := newToneReader(192000, 1, 48000, segment{-6.02, 0.5})
	r.phase = math.Pi / 4
	res := measure(t, r)
	if res.TruePeakDBTP != res.SamplePeakDBFS {
		t.Errorf("TP %.4f, sample peak %.4f: want equal", res.TruePeakDBTP, res.SamplePeakDBFS)
	}
}

// The bound that skips quiet runs must not change the result: a meter
// that never skips (zero running peak each run) agrees.
func TestTruePeakSkipIsExact(t *testing.T) {
	t.Parallel()
	r := newToneReader(48000, 1, 11000, segment{-10, 0.3}, segment{-3, 0.05}, segment{-20, 0.3})
	r.phase = 1
	b, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	tp := newTruePeakMeter(48000, 1)
	tp.write(b)
	x := append(make([]float64, truePeakTaps-1), b[0]...)
	if full := interpolate4(x); full != tp.peak() {
		t.Errorf("skipping peak %.15f, full scan %.15f", tp.peak(), full)
	}
}
