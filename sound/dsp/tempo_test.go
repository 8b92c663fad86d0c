package dsp

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// tempoKeySynth streams a generated signal without holding it: sample(i)
// returns frame i's value for every channel.
type tempoKeySynth struct {
	format Format
	frames int
	pos    int
	sample func(i int) float64
}

func (s *tempoKeySynth) Format() Format { return s.format }

func (s *tempoKeySynth) Read(buf Block) (int, error) {
	n := min(buf.Frames(), s.frames-s.pos)
	if n <= 0 {
		return 0, io.EOF
	}
	for i := range n {
		v := s.sample(s.pos + i)
		for c := range buf {
			buf[c][i] = v
		}
	}
	s.pos += n
	return n, nil
}

// tempoClicks returns a function of the sample index: 10 ms decaying noise
// bursts every 60/bpm seconds over a faint noise floor.
func tempoClicks(rate int, bpm float64, seed uint64) func(int) float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	period := 60 / bpm * float64(rate)
	burst := int(0.010 * float64(rate))
	return func(i int) float64 {
		noise := rng.Float64()*2 - 1
		beat := math.Floor(float64(i) / period)
		d := i - int(math.Ceil(beat*period))
		if d < 0 || d >= burst {
			return 0.001 * noise
		}
		return 0.8 * noise * math.Exp(-5*float64(d)/float64(burst))
	}
}

func TestEstimateTempoClickTracks(t *testing.T) {
	t.Parallel()
	for _, bpm := range []float64{120, 128, 90} {
		r := &tempoKeySynth{format: Format{SampleRate: 44100, Channels: 1}, frames: 30 * 44100, sample: tempoClicks(44100, bpm, uint64(bpm))}
		got, err := EstimateTempo(r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Available || math.Abs(got.BPM-bpm) > 1 {
			t.Errorf("%v BPM clicks: got %+v", bpm, got)
		}
		if got.Confidence <= 0.5 || got.Confidence > 1 {
			t.Errorf("%v BPM clicks: confidence %v", bpm, got.Confidence)
		}
		t.Logf("%v BPM -> %+v", bpm, got)
	}
}

func TestEstimateTempoAt48kStereo(t *testing.T) {
	t.Parallel()
	r := &tempoKeySynth{format: Format{SampleRate: 48000, Channels: 2}, frames: 20 * 48000, sample: tempoClicks(48000, 140, 7)}
	got, err := EstimateTempo(r)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Available || math.Abs(got.BPM-140) > 1 {
		t.Errorf("140 BPM at 48 kHz: got %+v", got)
	}
}

func TestEstimateTempoUnavailable(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name   string
		frames int
		sample func(int) float64
	}{
		{"silence", 20 * 44100, func(int) float64 { return 0 }},
		{"white noise", 20 * 44100, func(int) float64 { return 0.5 * (rng.Float64()*2 - 1) }},
		{"too short", 2 * 44100, tempoClicks(44100, 120, 1)},
	}
	for _, c := range cases {
		r := &tempoKeySynth{format: Format{SampleRate: 44100, Channels: 1}, frames: c.frames, sample: c.sample}
		got, err := EstimateTempo(r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Available || got.BPM != 0 || got.Reason == "" {
			t.Errorf("%s: got %+v", c.name, got)
		}
	}
}

func TestEstimateTempoEmpty(t *testing.T) {
	t.Parallel()
	_, err := EstimateTempo(NewBlockReader(Format{SampleRate: 44100, Channels: 1}, NewBlock(1, 0)))
	if !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty stream: %v", err)
	}
}

// tempoKeyBenchSignal is 60 s of 44.1 kHz stereo: a 124 BPM click track under an
// A minor triad, so both estimators have something to find.
func tempoKeyBenchSignal() (Format, Block) {
	const rate, secs = 44100, 60
	f := Format{SampleRate: rate, Channels: 2, BitDepth: 16}
	b := NewBlock(2, rate*secs)
	click := tempoClicks(rate, 124, 9)
	for i := range b[0] {
		tt := float64(i) / rate
		tone := 0.1 * (math.Sin(2*math.Pi*220*tt) + math.Sin(2*math.Pi*261.63*tt) + math.Sin(2*math.Pi*329.63*tt))
		c := click(i)
		b[0][i], b[1][i] = c+tone, 0.9*c+tone
	}
	return f, b
}

// tempoKeyBenchBytes is the size of the benchmark signal as 16-bit PCM, the unit
// of the reported MB/s.
func tempoKeyBenchBytes(f Format, b Block) int64 {
	return int64(b.Frames() * f.Channels * 2)
}

func BenchmarkEstimateTempo(b *testing.B) {
	f, sig := tempoKeyBenchSignal()
	b.SetBytes(tempoKeyBenchBytes(f, sig))
	for b.Loop() {
		got, err := EstimateTempo(NewBlockReader(f, sig))
		if err != nil || !got.Available {
			b.Fatalf("%+v, %v", got, err)
		}
	}
}

func TestEstimateTempoOctaves(t *testing.T) {
	t.Parallel()
	const rate = 44100
	// 60 BPM beats with weaker off-beats: the double tempo also scores
	// and 120 lies in the preferred range.
	beats, offbeats := tempoClicks(rate, 60, 11), tempoClicks(rate, 120, 12)
	withOffbeats := func(i int) float64 { return beats(i) + 0.5*offbeats(i) }
	cases := []struct {
		name   string
		sample func(int) float64
		want   float64
	}{
		{"60 BPM alone stays", tempoClicks(rate, 60, 13), 60},
		{"60 BPM with off-beats doubles", withOffbeats, 120},
		{"180 BPM halves", tempoClicks(rate, 180, 14), 90},
	}
	for _, c := range cases {
		r := &tempoKeySynth{format: Format{SampleRate: rate, Channels: 1}, frames: 15 * rate, sample: c.sample}
		got, err := EstimateTempo(r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Available || math.Abs(got.BPM-c.want) > 1 {
			t.Errorf("%s: got %+v, want %v BPM", c.name, got, c.want)
		}
	}
}
