package dsp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// keyMidiHz is the frequency of MIDI note n (A4 = 69 = 440 Hz).
func keyMidiHz(n int) float64 { return 440 * math.Pow(2, float64(n-69)/12) }

// keyProgression returns a function of the sample index playing chords (MIDI
// note lists) for secs seconds each: tones with three harmonics (1, 1/2,
// 1/4), each chord faded in and out over 10 ms.
func keyProgression(rate int, secs float64, chords [][]int) (int, func(int) float64) {
	per := int(secs * float64(rate))
	fade := float64(rate) / 100
	return per * len(chords), func(i int) float64 {
		chord, j := chords[i/per], i%per
		env := math.Min(1, math.Min(float64(j), float64(per-j))/fade)
		tt := float64(i) / float64(rate)
		var v float64
		for _, n := range chord {
			hz := keyMidiHz(n)
			for h, a := range []float64{1, 0.5, 0.25} {
				v += a * math.Sin(2*math.Pi*hz*float64(h+1)*tt)
			}
		}
		return 0.1 * env * v
	}
}

// keyTranspose shifts every note of chords by semitones.
func keyTranspose(chords [][]int, semitones int) [][]int {
	out := make([][]int, len(chords))
	for i, c := range chords {
		for _, n := range c {
			out[i] = append(out[i], n+semitones)
		}
	}
	return out
}

func TestEstimateKeyProgressions(t *testing.T) {
	t.Parallel()
	// Triads around middle C with the root doubled two octaves down.
	cMajor := [][]int{
		{36, 60, 64, 67}, // C
		{41, 60, 65, 69}, // F
		{43, 59, 62, 67}, // G
		{36, 60, 64, 67}, // C
	}
	aMinor := [][]int{
		{45, 57, 60, 64}, // Am
		{38, 57, 62, 65}, // Dm
		{40, 56, 59, 64}, // E
		{45, 57, 60, 64}, // Am
	}
	cases := []struct {
		name        string
		chords      [][]int
		tonic, mode string
	}{
		{"C major", cMajor, "C", "major"},
		{"A minor", aMinor, "A", "minor"},
		{"G major", keyTranspose(cMajor, 7), "G", "major"},
		{"E minor", keyTranspose(aMinor, -5), "E", "minor"},
	}
	for _, c := range cases {
		frames, sample := keyProgression(44100, 2, c.chords)
		r := &tempoKeySynth{format: Format{SampleRate: 44100, Channels: 2}, frames: frames, sample: sample}
		got, err := EstimateKey(r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Available || got.Tonic != c.tonic || got.Mode != c.mode || got.Reason != "" {
			t.Errorf("%s: got %+v", c.name, got)
		}
		if got.Confidence <= 0 || got.Confidence > 1 {
			t.Errorf("%s: confidence %v", c.name, got.Confidence)
		}
		t.Logf("%s -> %+v", c.name, got)
	}
}

func TestEstimateKeyUnavailable(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name   string
		sample func(int) float64
	}{
		{"silence", func(int) float64 { return 0 }},
		{"white noise", func(int) float64 { return 0.5 * (rng.Float64()*2 - 1) }},
		{"clicks", tempoClicks(44100, 120, 2)},
	}
	for _, c := range cases {
		r := &tempoKeySynth{format: Format{SampleRate: 44100, Channels: 1}, frames: 8 * 44100, sample: c.sample}
		got, err := EstimateKey(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Available || got.Tonic != "" || got.Mode != "" || got.Reason == "" {
			t.Errorf("%s: got %+v", c.name, got)
		}
		t.Logf("%s -> %+v", c.name, got)
	}
}

func BenchmarkEstimateKey(b *testing.B) {
	f, sig := tempoKeyBenchSignal()
	b.SetBytes(tempoKeyBenchBytes(f, sig))
	for b.Loop() {
		got, err := EstimateKey(NewBlockReader(f, sig))
		if err != nil || !got.Available {
			b.Fatalf("%+v, %v", got, err)
		}
	}
}
