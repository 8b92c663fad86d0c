package dsp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

const enhRate = 48000

// enhMono wraps one channel as a mono Reader at 48 kHz.
func enhMono(x []float64) Reader {
	return NewBlockReader(Format{SampleRate: enhRate, Channels: 1, BitDepth: 24}, Block{x})
}

// enhRun reads r to its end and checks it returned want frames.
func enhRun(t *testing.T, r Reader, err error, want int) Block {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if b.Frames() != want {
		t.Fatalf("%d frames out, want %d", b.Frames(), want)
	}
	return b
}

// enhTone fits a sinusoid of frequency f (Hz) to x by least squares and
// returns its amplitude and the fitted sinusoid. x should span whole
// cycles.
func enhTone(x []float64, f float64) (float64, []float64) {
	var sc, ss, cc, sn, cs float64
	for i, v := range x {
		w := 2 * math.Pi * f * float64(i) / enhRate
		c, s := math.Cos(w), math.Sin(w)
		sc += v * c
		sn += v * s
		cc += c * c
		ss += s * s
		cs += c * s
	}
	det := cc*ss - cs*cs
	a := (sc*ss - sn*cs) / det
	b := (sn*cc - sc*cs) / det
	fit := make([]float64, len(x))
	for i := range fit {
		w := 2 * math.Pi * f * float64(i) / enhRate
		fit[i] = a*math.Cos(w) + b*math.Sin(w)
	}
	return math.Hypot(a, b), fit
}

// enhBand returns the power of x between lo and hi Hz, from a Hann
// windowed FFT of its first power-of-two samples.
func enhBand(x []float64, lo, hi float64) float64 {
	n := 1
	for n*2 <= len(x) {
		n *= 2
	}
	w := make([]float64, n)
	for i := range w {
		w[i] = x[i] * (0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n)))
	}
	c := fourier.NewFFT(n).Coefficients(nil, w)
	var p float64
	for k, v := range c {
		if f := float64(k) * enhRate / float64(n); f >= lo && f < hi {
			p += real(v)*real(v) + imag(v)*imag(v)
		}
	}
	return p
}

func enhDB(p float64) float64 { return 10 * math.Log10(p) }

func TestDehum(t *testing.T) {
	const seconds = 4
	for _, mains := range []float64{50, 60} {
		n := seconds * enhRate
		tone := make([]float64, n)
		x := make([]float64, n)
		rng := rand.New(rand.NewPCG(3, uint64(mains)))
		for i := range x {
			tm := float64(i) / enhRate
			tone[i] = 0.3 * math.Sin(2*math.Pi*1000*tm)
			x[i] = tone[i]
		}
		phases := make([]float64, 9)
		for k := 1; k <= 8; k++ {
			phases[k] = rng.Float64() * 2 * math.Pi
			for i := range x {
				x[i] += 0.1 / float64(k) * math.Sin(2*math.Pi*mains*float64(k)*float64(i)/enhRate+phases[k])
			}
		}
		r, err := NewDehum(enhMono(x), DehumOptions{})
		out := enhRun(t, r, err, n)[0]
		// Measure the last two seconds, after the notches settle.
		tail := out[2*enhRate:]
		worst := math.Inf(1)
		for k := 1; k <= 8; k++ {
			a, _ := enhTone(tail, mains*float64(k))
			att := -20 * math.Log10(a/(0.1/float64(k)))
			worst = min(worst, att)
		}
		a, _ := enhTone(tail, 1000)
		toneDB := 20 * math.Log10(a/0.3)
		t.Logf("dehum %v Hz: weakest harmonic attenuation %.1f dB, 1 kHz tone %+.4f dB", mains, worst, toneDB)
		if worst < 30 {
			t.Errorf("%v Hz hum: a harmonic only %.1f dB down, want >= 30", mains, worst)
		}
		if math.Abs(toneDB) > 0.1 {
			t.Errorf("%v Hz hum: 1 kHz tone changed %.3f dB, want within 0.1", mains, toneDB)
		}
	}
}

func TestDenoise(t *testing.T) {
	const seconds = 3
	n := seconds * enhRate
	rng := rand.New(rand.NewPCG(4, 5))
	const amp = 0.3
	sigma := math.Sqrt(amp * amp / 2 / 10) // 10 dB SNR
	x := make([]float64, n)
	for i := range x {
		x[i] = amp*math.Sin(2*math.Pi*1000*float64(i)/enhRate) + sigma*rng.NormFloat64()
	}
	r, err := NewDenoise(enhMono(x), DenoiseOptions{})
	out := enhRun(t, r, err, n)[0]
	snr := func(y []float64) (float64, float64) {
		a, fit := enhTone(y, 1000)
		var e float64
		for i, v := range y {
			e += (v - fit[i]) * (v - fit[i])
		}
		return 10 * math.Log10(a*a/2/(e/float64(len(y)))), a
	}
	// Whole cycles from 0.5 s to 2.5 s.
	in, aIn := snr(x[enhRate/2 : 5*enhRate/2])
	got, aOut := snr(out[enhRate/2 : 5*enhRate/2])
	toneDB := 20 * math.Log10(aOut/aIn)
	t.Logf("denoise: SNR %.2f dB -> %.2f dB (gain %.2f dB), tone %+.3f dB", in, got, got-in, toneDB)
	if got-in < 6 {
		t.Errorf("SNR gain %.2f dB, want >= 6", got-in)
	}
	if math.Abs(toneDB) > 0.5 {
		t.Errorf("tone changed %.3f dB, want within 0.5", toneDB)
	}
}

func TestDeclick(t *testing.T) {
	const seconds = 3
	n := seconds * enhRate
	rng := rand.New(rand.NewPCG(6, 7))
	clean := make([]float64, n)
	for i := range clean {
		tm := float64(i) / enhRate
		clean[i] = 0.25*math.Sin(2*math.Pi*440*tm) + 0.15*math.Sin(2*math.Pi*659.3*tm+1) +
			0.08*math.Sin(2*math.Pi*1318*tm+2)*(0.6+0.4*math.Sin(2*math.Pi*3*tm)) + 0.002*rng.NormFloat64()
	}
	x := append([]float64(nil), clean...)
	type span struct{ s, e int }
	var clicks []span
	for pos := 2000 + rng.IntN(2000); pos < n-2000; pos += 3000 + rng.IntN(3000) {
		l := 1 + rng.IntN(30)
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		for j := range l {
			if l > 3 && rng.IntN(2) == 0 {
				// A crackle: random values of either sign.
				x[pos+j] += (0.1 + 0.4*rng.Float64()) * float64(1-2*rng.IntN(2))
			} else {
				// An impulse decaying over the click.
				x[pos+j] += sign * (0.2 + 0.3*rng.Float64()) * math.Exp(-float64(j)/float64(l))
			}
		}
		clicks = append(clicks, span{pos, pos + l})
	}
	d, err := newDeclicker(enhMono(x), DeclickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var found []span
	d.onClickFunc = func(c, s, e int) { found = append(found, span{s, e}) }
	out := enhRun(t, newFIFOReader(enhMono(x), d), nil, n)[0]

	overlap := func(a, b span) bool { return a.s < b.e+3 && b.s < a.e+3 }
	tp := 0
	for _, f := range found {
		for _, c := range clicks {
			if overlap(f, c) {
				tp++
				break
			}
		}
	}
	hit := 0
	for _, c := range clicks {
		for _, f := range found {
			if overlap(f, c) {
				hit++
				break
			}
		}
	}
	precision := float64(tp) / float64(max(len(found), 1))
	recall := float64(hit) / float64(len(clicks))
	snr := func(y []float64) float64 {
		var s, e float64
		for i, v := range y {
			s += clean[i] * clean[i]
			e += (v - clean[i]) * (v - clean[i])
		}
		return 10 * math.Log10(s/e)
	}
	before, after := snr(x), snr(out)
	t.Logf("declick: %d clicks, %d detections, precision %.3f, recall %.3f, SNR %.2f -> %.2f dB",
		len(clicks), len(found), precision, recall, before, after)
	if precision < 0.9 || recall < 0.9 {
		t.Errorf("precision %.3f, recall %.3f, want both >= 0.9", precision, recall)
	}
	if after <= before+10 {
		t.Errorf("SNR %.2f -> %.2f dB, want a clear rise", before, after)
	}

	// Drums without clicks: kick onsets and snare noise bursts are not
	// clicks.
	f, b := masterMusic(t, 4, -16)
	d, err = newDeclicker(NewBlockReader(f, b), DeclickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spurious := 0
	d.onClickFunc = func(c, s, e int) { spurious++ }
	enhRun(t, newFIFOReader(NewBlockReader(f, b), d), nil, b.Frames())
	t.Logf("declick: %d detections on 4 s of clickless drums and chords", spurious)
	if spurious > 2 {
		t.Errorf("%d detections on clickless music, want at most 2", spurious)
	}
}

func TestStereoWidth(t *testing.T) {
	const n = 2 * enhRate
	rng := rand.New(rand.NewPCG(8, 9))
	f := Format{SampleRate: enhRate, Channels: 2, BitDepth: 24}
	in := NewBlock(2, n)
	for i := range n {
		m, s := 0.2*rng.NormFloat64(), 0.07*rng.NormFloat64()
		in[0][i], in[1][i] = m+s, m-s
	}
	ms := func(b Block) (mid, side float64) {
		for i := range b[0] {
			m, s := (b[0][i]+b[1][i])/2, (b[0][i]-b[1][i])/2
			mid += m * m
			side += s * s
		}
		return mid, side
	}
	m0, s0 := ms(in)
	for _, w := range []float64{1.5, 0.5, 2} {
		r, err := NewStereoWidth(NewBlockReader(f, in), StereoWidthOptions{Width: w})
		out := enhRun(t, r, err, n)
		m1, s1 := ms(out)
		ratio := math.Sqrt((s1 / m1) / (s0 / m0))
		midDB := enhDB(m1 / m0)
		t.Logf("stereo_width %.1f: side/mid RMS ratio x%.4f (energy x%.4f), mid %+.4f dB", w, ratio, ratio*ratio, midDB)
		if math.Abs(ratio/w-1) > 0.1 {
			t.Errorf("width %v: ratio changed x%.3f, want x%v within 10%%", w, ratio, w)
		}
		if math.Abs(midDB) > 0.1 {
			t.Errorf("width %v: mid changed %.3f dB, want within 0.1", w, midDB)
		}
	}
}

func TestClarity(t *testing.T) {
	const n = 3 * enhRate
	rng := rand.New(rand.NewPCG(10, 11))
	for _, tc := range []struct {
		rms   float64
		boost float64
	}{
		{0.05, 0},  // default +3 dB
		{0.05, 6},  // a larger lift
		{0.25, 0},  // hot enough for the safety limiter
		{0.05, -3}, // a cut
	} {
		x := make([]float64, n)
		for i := range x {
			x[i] = tc.rms * rng.NormFloat64()
		}
		r, err := NewClarity(enhMono(x), ClarityOptions{BoostDB: tc.boost})
		out := enhRun(t, r, err, n)[0]
		want := tc.boost
		if want == 0 {
			want = 3
		}
		gain := enhDB(enhBand(out, 2000, 5000) / enhBand(x, 2000, 5000))
		l, err := Measure(enhMono(out))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("clarity %+g dB (input RMS %.2f): 2-5 kHz %+.2f dB, true peak %.2f dBTP", want, tc.rms, gain, l.TruePeakDBTP)
		if l.TruePeakDBTP > -1 {
			t.Errorf("clarity %+g: true peak %.2f dBTP over the -1 dBTP ceiling", want, l.TruePeakDBTP)
		}
		if tc.rms < 0.1 && math.Abs(gain-want) > 0.5 {
			t.Errorf("clarity %+g: band gain %.2f dB, want within 0.5", want, gain)
		}
	}
}

func TestVoiceCleanup(t *testing.T) {
	const n = 3 * enhRate
	rng := rand.New(rand.NewPCG(12, 13))
	voice := make([]float64, n)
	rumble := make([]float64, n)
	x := make([]float64, n)
	for i := range x {
		tm := float64(i) / enhRate
		env := math.Max(math.Sin(2*math.Pi*3*tm), 0.1)
		var v float64
		for h := 1; h <= 20; h++ {
			v += 0.1 / float64(h) * math.Sin(2*math.Pi*150*float64(h)*tm+float64(h))
		}
		voice[i] = env * v
		rumble[i] = 0.08*math.Sin(2*math.Pi*20*tm) + 0.08*math.Sin(2*math.Pi*35*tm+1) + 0.08*math.Sin(2*math.Pi*50*tm+2)
		x[i] = voice[i] + rumble[i] + 0.01*rng.NormFloat64()
	}
	r, err := NewVoiceCleanup(enhMono(x), VoiceCleanupOptions{})
	out := enhRun(t, r, err, n)[0]
	// Skip the first half second (filter and noise-tracker start-up).
	in, got := x[enhRate/2:], out[enhRate/2:]
	rumbleCut := enhDB(enhBand(in, 0, 80) / enhBand(got, 0, 80))
	noiseCut := enhDB(enhBand(in, 6000, 12000) / enhBand(got, 6000, 12000))
	voiceDB := enhDB(enhBand(got, 300, 3000) / enhBand(in, 300, 3000))
	t.Logf("voice_cleanup: below 80 Hz -%.1f dB, noise (6-12 kHz) -%.1f dB, voice band %+.2f dB", rumbleCut, noiseCut, voiceDB)
	if rumbleCut < 20 {
		t.Errorf("rumble below 80 Hz cut %.1f dB, want >= 20", rumbleCut)
	}
	if noiseCut < 6 {
		t.Errorf("noise cut %.1f dB, want >= 6", noiseCut)
	}
	if math.Abs(voiceDB) > 1.5 {
		t.Errorf("voice band changed %.2f dB, want within 1.5", voiceDB)
	}
}

func TestEnhanceChain(t *testing.T) {
	f := Format{SampleRate: enhRate, Channels: 2, BitDepth: 24}
	b := NewBlock(2, enhRate)
	rng := rand.New(rand.NewPCG(14, 15))
	for i := range b[0] {
		b[0][i] = 0.1 * rng.NormFloat64()
		b[1][i] = 0.1 * rng.NormFloat64()
	}
	var all []Feature
	for _, name := range FeatureNames() {
		all = append(all, Feature{Name: name})
	}
	r, err := Enhance(NewBlockReader(f, b), all)
	out := enhRun(t, r, err, b.Frames())
	for c := range out {
		for i, v := range out[c] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("channel %d frame %d: %v", c, i, v)
			}
		}
	}
	for _, tc := range []struct {
		features []Feature
		field    string
	}{
		{[]Feature{{Name: "denoise"}, {Name: "autotune"}}, "Feature[1].Name"},
		{[]Feature{{Name: "dehum"}, {Name: "dehum"}}, "Feature[1].Name"},
		{[]Feature{{Name: "dehum", Amount: 55}}, "Frequency"},
		{[]Feature{{Name: "stereo_width", Amount: -1}}, "Width"},
		{[]Feature{{Name: "clarity", Amount: 20}}, "BoostDB"},
		{[]Feature{{Name: "denoise", Amount: 100}}, "ReductionDB"},
		{[]Feature{{Name: "declick", Amount: 1}}, "Threshold"},
		{[]Feature{{Name: "voice_cleanup", Amount: math.NaN()}}, "ReductionDB"},
	} {
		_, err := Enhance(NewBlockReader(f, b), tc.features)
		var oe *OptionError
		if !errors.Is(err, ErrInvalidOption) || !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: err %v, want an *OptionError on %s", tc.features, err, tc.field)
		}
	}
	if r, err := Enhance(NewBlockReader(f, b), nil); err != nil || r == nil {
		t.Errorf("no features: %v", err)
	}
}
