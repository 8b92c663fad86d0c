package dsptest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// taperedSine returns n samples of amp*sin(2 pi f i/fs + phase) under a
// 0.1 s raised-cosine fade in and out.
func taperedSine(fs, n int, f, phase, amp float64) []float64 {
	x := make([]float64, n)
	tf := 0.1 * float64(fs)
	for i := range x {
		a := amp
		if d := float64(i); d < tf {
			a *= 0.5 - 0.5*math.Cos(math.Pi*d/tf)
		}
		if d := float64(n - 1 - i); d < tf {
			a *= 0.5 - 0.5*math.Cos(math.Pi*d/tf)
		}
		x[i] = a * math.Sin(2*math.Pi*f*float64(i)/float64(fs)+phase)
	}
	return x
}

// Sines of known amplitude read it within the stated sampling error.
func TestTruePeakSines(t *testing.T) {
	t.Parallel()
	const fs = 48000
	for _, c := range []struct{ freq, phase float64 }{
		{997, 0.3}, {6000, 1.178}, {11025, 0.7}, {12000, math.Pi / 4}, {12000, 0.1}, {19000, 2.1}, {23000, 0.4},
	} {
		x := taperedSine(fs, 40000, c.freq, c.phase, 0.5)
		d := 20 * math.Log10(TruePeakOf([][]float64{x})/0.5)
		t.Logf("%5.0f Hz: %+.5f dB", c.freq, d)
		if d > EdgeErrorDB || d < -SamplingErrorDB-EdgeErrorDB {
			t.Errorf("%g Hz: %.4f dB off the amplitude", c.freq, d)
		}
	}
}

// The blocked transform agrees with one long transform within
// EdgeErrorDB, on tones and on material with abrupt edges and energy up to
// the Nyquist frequency: white noise bursts and a hard-clipped chord. The
// programmes are 40960 samples, so the long transform is a power of two.
func TestTruePeakBlockEdges(t *testing.T) {
	t.Parallel()
	const fs, n = 48000, 40960
	rng := rand.New(rand.NewPCG(7, 8))
	noise := make([]float64, n)
	for i := range noise {
		if (i/3000)%2 == 0 {
			noise[i] = 0.3 * rng.NormFloat64()
		}
	}
	clipped := make([]float64, n)
	for i := range clipped {
		tm := float64(i) / fs
		v := math.Sin(2*math.Pi*110*tm) + math.Sin(2*math.Pi*138.6*tm) + math.Sin(2*math.Pi*164.8*tm)
		clipped[i] = max(-0.6, min(0.6, 2*v))
	}
	for _, c := range []struct {
		name string
		x    []float64
	}{
		{"tone", taperedSine(fs, n, 11025, 0.4, 0.5)},
		{"noise bursts", noise},
		{"clipped chord", clipped},
	} {
		blocked, long := TruePeakOf([][]float64{c.x}), longTruePeak(c.x)
		d := 20 * math.Log10(blocked/long)
		t.Logf("%s: blocked %.5f, long %.5f (%+.5f dB)", c.name, 20*math.Log10(blocked), 20*math.Log10(long), d)
		if math.Abs(d) > EdgeErrorDB {
			t.Errorf("%s: blocked and long transforms differ by %.4f dB", c.name, d)
		}
	}
}

// How the programme is cut into writes changes nothing.
func TestTruePeakStreaming(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([][]float64, 2)
	for c := range x {
		x[c] = make([]float64, 50000)
		for i := range x[c] {
			x[c][i] = 0.2 * rng.NormFloat64()
		}
	}
	want := TruePeakOf(x)
	for _, n := range []int{1000, 4096, 16384, 33333} {
		tp := NewTruePeak(2)
		for pos := 0; pos < len(x[0]); pos += n {
			end := min(pos+n, len(x[0]))
			tp.Write([][]float64{x[0][pos:end], x[1][pos:end]})
		}
		if got := tp.Peak(); got != want {
			t.Errorf("writes of %d: %.15f, want %.15f", n, got, want)
		}
	}
}
