package dsp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/creatormusic/platform/sound/dsp/dsptest"
)

// masterMusic synthesises seconds of music-like stereo at 48 kHz: a chord
// of harmonic tones under a slow swell, filtered noise, kick drums every
// half second and noise snares on the off-beats, scaled to lufs.
func masterMusic(t *testing.T, seconds, lufs float64) (Format, Block) {
	t.Helper()
	const rate = 48000
	f := Format{SampleRate: rate, Channels: 2, BitDepth: 24}
	n := int(seconds * rate)
	b := NewBlock(2, n)
	rng := rand.New(rand.NewPCG(1, 2))
	chord := []float64{110, 220, 277.18, 329.63, 440, 659.25}
	var lp [2]float64
	for i := range n {
		tm := float64(i) / rate
		swell := 0.6 + 0.4*math.Sin(2*math.Pi*0.25*tm)
		for c := range 2 {
			var s float64
			for j, fr := range chord {
				pan := 0.7 + 0.3*float64((j+c)%2)
				s += pan * 0.12 / float64(j/2+1) * math.Sin(2*math.Pi*fr*tm+float64(j+c))
			}
			s *= swell
			lp[c] += 0.2 * (rng.NormFloat64() - lp[c])
			s += 0.03 * lp[c]
			beat := math.Mod(tm, 0.5)
			s += 0.8 * math.Exp(-beat/0.04) * math.Sin(2*math.Pi*(55+80*math.Exp(-beat/0.01))*beat)
			off := math.Mod(tm+0.25, 0.5)
			s += 0.35 * math.Exp(-off/0.02) * rng.NormFloat64()
			b[c][i] = s
		}
	}
	l, err := Measure(NewBlockReader(f, b))
	if err != nil {
		t.Fatal(err)
	}
	g := math.Pow(10, (lufs-l.IntegratedLUFS)/20)
	for c := range b {
		for i := range b[c] {
			b[c][i] *= g
		}
	}
	return f, b
}

// masterRun masters b and returns the report and the output measured
// independently of the report.
func masterRun(t *testing.T, f Format, b Block, opts MasterOptions) (MasterReport, Loudness, Block) {
	t.Helper()
	open := func() (Reader, error) { return NewBlockReader(f, b), nil }
	out := NewBlock(f.Channels, 0)
	rep, err := Master(open, opts, func(blk Block) error {
		for c := range out {
			out[c] = append(out[c], blk[c]...)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Master(%+v): %v", opts, err)
	}
	if out.Frames() != b.Frames() {
		t.Fatalf("output has %d frames, input %d", out.Frames(), b.Frames())
	}
	l, err := Measure(NewBlockReader(f, out))
	if err != nil {
		t.Fatal(err)
	}
	return rep, l, out
}

func TestMasterProfilesHitTargets(t *testing.T) {
	f, b := masterMusic(t, 5, -24)
	for _, tc := range []struct {
		profile string
		target  float64
	}{
		{ProfileStreaming, -14},
		{ProfileLoud, -9},
		{ProfileBalanced, -14},
	} {
		rep, l, _ := masterRun(t, f, b, MasterOptions{Profile: tc.profile})
		t.Logf("%s: in %.2f LUFS %.2f dBTP -> out %.2f LUFS %.2f dBTP (gain %.2f dB, max reduction %.2f dB, %d passes)",
			tc.profile, rep.InputLUFS, rep.InputTruePeakDBTP, l.IntegratedLUFS, l.TruePeakDBTP,
			rep.GainDB, rep.MaxReductionDB, rep.Passes)
		if d := l.IntegratedLUFS - tc.target; math.Abs(d) > 0.5 {
			t.Errorf("%s: integrated %.2f LUFS, want %.0f ± 0.5", tc.profile, l.IntegratedLUFS, tc.target)
		}
		if l.TruePeakDBTP > -1.0 {
			t.Errorf("%s: true peak %.2f dBTP, want <= -1.0", tc.profile, l.TruePeakDBTP)
		}
		if math.Abs(rep.OutputLUFS-l.IntegratedLUFS) > 1e-9 || math.Abs(rep.OutputTruePeakDBTP-l.TruePeakDBTP) > 1e-9 {
			t.Errorf("%s: report %.3f LUFS %.3f dBTP disagrees with measurement %.3f / %.3f",
				tc.profile, rep.OutputLUFS, rep.OutputTruePeakDBTP, l.IntegratedLUFS, l.TruePeakDBTP)
		}
	}
}

func TestMasterTransparentOnlyCatchesPeaks(t *testing.T) {
	f, b := masterMusic(t, 4, -24)
	rep, l, _ := masterRun(t, f, b, MasterOptions{Profile: ProfileTransparent})
	t.Logf("transparent: out %.2f LUFS %.2f dBTP, max reduction %.2f dB, %d passes",
		l.IntegratedLUFS, l.TruePeakDBTP, rep.MaxReductionDB, rep.Passes)
	if l.TruePeakDBTP > -1.0 {
		t.Errorf("true peak %.2f dBTP, want <= -1.0", l.TruePeakDBTP)
	}
	if rep.GainDB != rep.TargetLUFS-rep.InputLUFS {
		t.Errorf("gain %.3f dB, want the static %.3f dB (no make-up)", rep.GainDB, rep.TargetLUFS-rep.InputLUFS)
	}
	if l.IntegratedLUFS > -16+0.5 || l.IntegratedLUFS < -16-2 {
		t.Errorf("integrated %.2f LUFS, want near -16", l.IntegratedLUFS)
	}
}

func TestMasterTargetOverride(t *testing.T) {
	f, b := masterMusic(t, 3, -20)
	_, l, _ := masterRun(t, f, b, MasterOptions{Profile: ProfileStreaming, TargetLUFS: -18})
	if math.Abs(l.IntegratedLUFS+18) > 0.5 || l.TruePeakDBTP > -1 {
		t.Errorf("override -18: got %.2f LUFS, %.2f dBTP", l.IntegratedLUFS, l.TruePeakDBTP)
	}
}

func TestMasterRejectsOptions(t *testing.T) {
	open := func() (Reader, error) {
		t.Fatal("source opened despite invalid options")
		return nil, nil
	}
	for _, opts := range []MasterOptions{
		{TargetLUFS: -31},
		{TargetLUFS: -5.9},
		{TargetLUFS: math.NaN()},
		{Profile: "louder"},
	} {
		_, err := Master(open, opts, func(Block) error { return nil })
		var oe *OptionError
		if !errors.Is(err, ErrInvalidOption) || !errors.As(err, &oe) {
			t.Fatalf("%+v: err %v, want an *OptionError", opts, err)
		}
		want := "TargetLUFS"
		if opts.Profile != "" {
			want = "Profile"
		}
		if oe.Field != want {
			t.Errorf("%+v: field %q, want %q", opts, oe.Field, want)
		}
	}
}

func TestMasterSilence(t *testing.T) {
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 16}
	b := NewBlock(2, 48000*2)
	open := func() (Reader, error) { return NewBlockReader(f, b), nil }
	wrote := false
	rep, err := Master(open, MasterOptions{}, func(Block) error { wrote = true; return nil })
	if !errors.Is(err, ErrSilence) {
		t.Fatalf("err %v, want ErrSilence", err)
	}
	if wrote || math.IsNaN(rep.GainDB) || math.IsNaN(rep.OutputLUFS) {
		t.Errorf("silence: wrote %v, report %+v", wrote, rep)
	}
	_, err = Master(func() (Reader, error) { return NewBlockReader(f, NewBlock(2, 0)), nil },
		MasterOptions{}, func(Block) error { return nil })
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: err %v, want ErrEmpty", err)
	}
}

// TestPeakLimiterAligns checks that the limiter returns every frame,
// aligned, and leaves a signal under its ceiling untouched.
func TestPeakLimiterAligns(t *testing.T) {
	f := Format{SampleRate: 44100, Channels: 1, BitDepth: 16}
	b := NewBlock(1, 10000)
	for i := range b[0] {
		b[0][i] = 0.3 * math.Sin(float64(i)*0.05)
	}
	got, err := ReadAll(newLimitReader(NewBlockReader(f, b), 1, 0.9, 0.05))
	if err != nil {
		t.Fatal(err)
	}
	if got.Frames() != b.Frames() {
		t.Fatalf("%d frames, want %d", got.Frames(), b.Frames())
	}
	for i := range b[0] {
		if got[0][i] != b[0][i] {
			t.Fatalf("frame %d: %v, want %v", i, got[0][i], b[0][i])
		}
	}
}

// masterFamily is a programme family for the ceiling test: 2 s of 48 kHz
// stereo at about -20 LUFS, built deterministically.
type masterFamily struct {
	name  string
	build func(n int, rng *rand.Rand) Block
}

// masterFamilies are programme families with different kinds of peaks:
// noise, transients, dense tones, tones near fs/4, clipped material whose
// energy reaches the Nyquist frequency, and a low-frequency-heavy mix.
func masterFamilies() []masterFamily {
	const fs = 48000
	sine := func(f, i float64) float64 { return math.Sin(2 * math.Pi * f * i / fs) }
	return []masterFamily{
		{"pink noise", func(n int, rng *rand.Rand) Block {
			// Paul Kellet's economy filter on white noise, per channel.
			b := NewBlock(2, n)
			for c := range b {
				var b0, b1, b2 float64
				for i := range b[c] {
					w := rng.NormFloat64()
					b0 = 0.99765*b0 + w*0.0990460
					b1 = 0.96300*b1 + w*0.2965164
					b2 = 0.57000*b2 + w*1.0526913
					b[c][i] = b0 + b1 + b2 + w*0.1848
				}
			}
			return b
		}},
		{"drum transients", func(n int, rng *rand.Rand) Block {
			// Kick (pitch-swept sine), snare (noise and a tone) and hats
			// (differentiated noise) on eighth notes at 120 BPM.
			b := NewBlock(2, n)
			for i := range n {
				tm := float64(i) / fs
				beat := math.Mod(tm, 0.5)
				eighth := math.Mod(tm, 0.25)
				kick := math.Exp(-beat/0.08) * math.Sin(2*math.Pi*(50*beat+300*0.01*(1-math.Exp(-beat/0.01))))
				off := math.Mod(tm+0.25, 0.5)
				snare := math.Exp(-off/0.05) * (0.6*rng.NormFloat64() + 0.5*sine(190, float64(i)))
				hat := math.Exp(-eighth/0.01) * (rng.NormFloat64() - rng.NormFloat64())
				b[0][i] = kick + snare + 0.3*hat
				b[1][i] = kick + 0.8*snare + 0.4*hat
			}
			return b
		}},
		{"dense chords", func(n int, rng *rand.Rand) Block {
			// Twelve harmonic tones struck together every 0.5 s, each
			// decaying (5 ms attack, 0.2 s decay).
			b := NewBlock(2, n)
			root := []float64{130.81, 164.81, 196, 246.94, 293.66, 349.23, 440, 523.25, 659.25, 783.99, 987.77, 1318.5}
			env := make([]float64, n)
			for i := range env {
				t := math.Mod(float64(i)/fs, 0.5)
				env[i] = min(1, t/0.005) * math.Exp(-t/0.2)
			}
			for c := range b {
				for k, f := range root {
					ph := rng.Float64() * 2 * math.Pi
					for h := 1.0; h <= 6; h++ {
						amp := 0.3 / h / float64(k/4+1)
						for i := range b[c] {
							b[c][i] += env[i] * amp * math.Sin(2*math.Pi*f*h*float64(i)/fs+ph*h+float64(c))
						}
					}
				}
			}
			return b
		}},
		{"near fs/4 tones", func(n int, rng *rand.Rand) Block {
			// 30 ms bursts of tones near fs/4 every 250 ms over a quiet bed.
			b := NewBlock(2, n)
			for i := range n {
				x := float64(i)
				t := math.Mod(x/fs, 0.25)
				burst := 0.0
				if t < 0.03 {
					burst = 0.5 - 0.5*math.Cos(2*math.Pi*t/0.03)
				}
				b[0][i] = burst*(sine(11025, x+0.3)+0.8*sine(12000, x+0.17)) + 0.1*sine(220, x)
				b[1][i] = burst*(sine(11990, x+0.61)+0.7*sine(12010, x)) + 0.1*sine(330, x)
			}
			return b
		}},
		{"clipped square-ish", func(n int, rng *rand.Rand) Block {
			// A chord driven hard into clipping at the sample rate, in
			// 20 ms bursts every 250 ms over a quieter clipped bed.
			b := NewBlock(2, n)
			for i := range n {
				x := float64(i)
				level := 0.1
				if math.Mod(x/fs, 0.25) < 0.02 {
					level = 0.5
				}
				v := sine(110, x) + 0.8*sine(138.6, x) + 0.6*sine(164.8, x) + 0.3*sine(880, x)
				b[0][i] = max(-level, min(level, 4*v))
				b[1][i] = max(-level, min(level, 3*v+0.2*sine(55, x)))
			}
			return b
		}},
		{"low-frequency heavy", func(n int, rng *rand.Rand) Block {
			b := NewBlock(2, n)
			for i := range n {
				tm := float64(i) / fs
				x := float64(i)
				beat := math.Mod(tm, 0.5)
				sub := math.Exp(-beat/0.3) * math.Sin(2*math.Pi*45*beat)
				bass := sine(41.2, x) + 0.6*sine(82.4, x) + 0.3*sine(61.7, x)
				mid := 0.1*sine(440, x) + 0.05*rng.NormFloat64()
				b[0][i] = 1.5*sub + bass + mid
				b[1][i] = 1.5*sub + bass - mid
			}
			return b
		}},
	}
}

// TestMasterCeilingByReference masters every family with every profile and
// measures the output with the reference meter (package dsptest,
// independent of the engine): its true peak must not pass the ceiling
// (beyond the reference's own upward error), and the report's output true
// peak must agree with it within 0.1 dB. Before the meter and limiter
// kept the whole band, the reference read masters of noise, transients and
// clipped material up to 0.5 dB above the ceiling the report claimed.
func TestMasterCeilingByReference(t *testing.T) {
	t.Parallel()
	const seconds = 2
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 24}
	for fi, fam := range masterFamilies() {
		b := fam.build(seconds*f.SampleRate, rand.New(rand.NewPCG(uint64(fi), 99)))
		fade(b[0], 480)
		fade(b[1], 480)
		l, err := Measure(NewBlockReader(f, b))
		if err != nil {
			t.Fatal(err)
		}
		g := math.Pow(10, (-20-l.IntegratedLUFS)/20)
		for c := range b {
			for i := range b[c] {
				b[c][i] *= g
			}
		}
		for _, prof := range MasterProfiles() {
			t.Run(fam.name+"/"+prof.Name, func(t *testing.T) {
				t.Parallel()
				rep, _, out := masterRun(t, f, b, MasterOptions{Profile: prof.Name})
				ref := dsptest.TruePeakDB(out)
				t.Logf("%s: in %.2f dBTP -> gain %+.2f dB, max reduction %.2f dB, %d passes: %.2f LUFS, report %.4f dBTP, reference %.4f dBTP",
					t.Name(), rep.InputTruePeakDBTP, rep.GainDB, rep.MaxReductionDB, rep.Passes, rep.OutputLUFS, rep.OutputTruePeakDBTP, ref)
				if ref > prof.CeilingDBTP+dsptest.EdgeErrorDB {
					t.Errorf("reference true peak %.4f dBTP passes the %g dBTP ceiling", ref, prof.CeilingDBTP)
				}
				if d := rep.OutputTruePeakDBTP - ref; math.Abs(d) > referenceAgreementDB {
					t.Errorf("report %.4f dBTP, reference %.4f dBTP: %+.4f dB apart", rep.OutputTruePeakDBTP, ref, d)
				}
			})
		}
	}
}
