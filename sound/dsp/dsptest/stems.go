package dsptest

import (
	"math"
	"math/rand/v2"
)

// Indices of StemMixture's sources: the order of dsp.StemNames.
const (
	StemVocals = iota
	StemDrums
	StemBass
	StemOther
)

// StemMixture returns the stem separation test programme: seconds of
// 44.1 kHz stereo mixing four sources scaled to equal RMS (0.1), and the
// sources, indexed StemVocals, StemDrums, StemBass, StemOther:
//   - vocals: 220 Hz with 8 harmonics and a 5 Hz vibrato of ±2 %,
//     high-passed at 300 Hz (4th-order Butterworth), the same in both
//     channels;
//   - drums: white-noise bursts decaying exponentially (40 ms time
//     constant) every 500 ms, the same in both channels;
//   - bass: 55 Hz with its 2nd and 3rd harmonics, the same in both channels;
//   - other: a C major chord (C5 E5 G5) of detuned sawtooth pairs,
//     generated independently per channel (each channel with its own
//     detune and phases) so the channels decorrelate.
//
// It is deterministic; mix[c] and stems[i][c] are channel c. Package
// dsp's StemSeparation figures are separations of 10 s of it.
func StemMixture(seconds float64) (rate int, mix [][]float64, stems [4][][]float64) {
	const fs = 44100
	n := int(seconds * fs)
	var src [4][][]float64
	for i := range src {
		src[i] = block(2, n)
	}
	rng := rand.New(rand.NewPCG(14, 4))

	bass := src[StemBass]
	for i := range n {
		t := float64(i) / fs
		v := math.Sin(2*math.Pi*55*t) + 0.5*math.Sin(2*math.Pi*110*t) + 0.33*math.Sin(2*math.Pi*165*t)
		bass[0][i], bass[1][i] = v, v
	}

	drums := src[StemDrums]
	period := fs / 2
	for i := range n {
		v := rng.NormFloat64() * math.Exp(-float64(i%period)/fs/0.040)
		drums[0][i], drums[1][i] = v, v
	}

	voice := src[StemVocals]
	var phase float64
	for i := range n {
		t := float64(i) / fs
		var v float64
		for k := 1; k <= 8; k++ {
			v += math.Sin(float64(k)*phase) / float64(k)
		}
		voice[0][i] = v
		phase += 2 * math.Pi * 220 * (1 + 0.02*math.Sin(2*math.Pi*5*t)) / fs
	}
	highPass4(voice[0], 300, fs)
	copy(voice[1], voice[0])

	other := src[StemOther]
	notes := []float64{523.25, 659.26, 783.99}
	detune := [2][2]float64{{-9, 7}, {-4, 12}} // cents, per channel
	for c := range 2 {
		for _, f := range notes {
			for _, cents := range detune[c] {
				inc := f * math.Pow(2, cents/1200) / fs
				ph := rng.Float64()
				for i := range n {
					other[c][i] += sawBLEP(ph, inc)
					ph += inc
					ph -= math.Floor(ph)
				}
			}
		}
	}

	target := 0.1
	for _, s := range src {
		g := target / rms(s)
		for _, ch := range s {
			for i := range ch {
				ch[i] *= g
			}
		}
	}
	mix = block(2, n)
	for _, s := range src {
		for c := range mix {
			for i, v := range s[c] {
				mix[c][i] += v
			}
		}
	}
	return fs, mix, src
}

// sawBLEP is a band-limited (polyBLEP) sawtooth in [-1, 1] at phase ph in
// [0, 1) advancing by inc per sample.
func sawBLEP(ph, inc float64) float64 {
	v := 2*ph - 1
	switch {
	case ph < inc:
		x := ph / inc
		v -= x + x - x*x - 1
	case ph > 1-inc:
		x := (ph - 1) / inc
		v -= x*x + x + x + 1
	}
	return v
}

// highPass4 filters x in place by a 4th-order Butterworth high-pass at fc
// (two bilinear-transform biquads, Q 0.5412 and 1.3066).
func highPass4(x []float64, fc, fs float64) {
	for _, q := range []float64{0.54119610, 1.3065630} {
		w := 2 * math.Pi * fc / fs
		alpha := math.Sin(w) / (2 * q)
		cw := math.Cos(w)
		a0 := 1 + alpha
		b0, b1, b2 := (1+cw)/2/a0, -(1+cw)/a0, (1+cw)/2/a0
		a1, a2 := -2*cw/a0, (1-alpha)/a0
		var x1, x2, y1, y2 float64
		for i, v := range x {
			y := b0*v + b1*x1 + b2*x2 - a1*y1 - a2*y2
			x2, x1 = x1, v
			y2, y1 = y1, y
			x[i] = y
		}
	}
}

// block returns channels x frames zeros.
func block(channels, frames int) [][]float64 {
	b := make([][]float64, channels)
	for c := range b {
		b[c] = make([]float64, frames)
	}
	return b
}

// rms is the root mean square of b over all channels.
func rms(b [][]float64) float64 {
	var e float64
	for _, ch := range b {
		for _, v := range ch {
			e += v * v
		}
	}
	return math.Sqrt(e / float64(len(b)*len(b[0])))
}

// SDR is the global signal-to-distortion ratio of est against ref in dB,
// 10 log10(sum ref² / sum (ref-est)²) over all channels and samples (the
// "new" SDR of the MDX challenges, without BSS Eval's distortion filter):
// 0 dB for silence, +Inf for a perfect estimate.
func SDR(ref, est [][]float64) float64 {
	var s, e float64
	for c := range ref {
		for i, v := range ref[c] {
			d := v - est[c][i]
			s += v * v
			e += d * d
		}
	}
	return 10 * math.Log10(s/e)
}
