package dsp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
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
