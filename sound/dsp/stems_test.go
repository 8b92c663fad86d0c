package dsp

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/creatormusic/platform/sound/dsp/dsptest"
)

// stemSources are the four sources of the stem test mix, at equal RMS,
// indexed like StemNames.
type stemSources [stemCount]Block

// stemTestSignal is dsptest.StemMixture as dsp types.
func stemTestSignal(seconds float64) (Format, Block, stemSources) {
	rate, mix, stems := dsptest.StemMixture(seconds)
	var src stemSources
	for i := range src {
		src[i] = stems[i]
	}
	return Format{SampleRate: rate, Channels: 2, BitDepth: 24}, mix, src
}

// rms is the root mean square of b over all channels.
func rms(b Block) float64 {
	var e float64
	for _, ch := range b {
		for _, v := range ch {
			e += v * v
		}
	}
	return math.Sqrt(e / float64(len(b)*b.Frames()))
}

// sdr is dsptest.SDR on dsp blocks.
func sdr(ref, est Block) float64 { return dsptest.SDR(ref, est) }

// TestSeparateStemsSDR separates 10 s of the stem test mixture: every stem
// reaches 5 dB of global SDR, DescribeStemSeparation reports what this
// measures (not better, at most 0.5 dB worse), and the stems sum back to
// the mix.
func TestSeparateStemsSDR(t *testing.T) {
	f, mix, src := stemTestSignal(10)

	silence := NewBlock(2, mix.Frames())
	for i, name := range StemNames() {
		mixSDR, silentSDR := sdr(src[i], mix), sdr(src[i], silence)
		t.Logf("%-6s baselines: mix %.2f dB, silence %.2f dB", name, mixSDR, silentSDR)
		if math.Abs(mixSDR-(-4.77)) > 0.3 || math.Abs(silentSDR) > 1e-9 {
			t.Errorf("%s baselines: mix %.2f dB (want about -4.8), silence %.2f dB (want 0)", name, mixSDR, silentSDR)
		}
	}

	col := newCollector(t, 2)
	if err := SeparateStems(NewBlockReader(f, mix), nil, col.sink); err != nil {
		t.Fatal(err)
	}
	got := col.stems
	described := DescribeStemSeparation().SDR
	if len(described) != stemCount {
		t.Fatalf("described %d stems", len(described))
	}
	sum := NewBlock(2, mix.Frames())
	for i, name := range StemNames() {
		est := got[name]
		if est.Frames() != mix.Frames() || len(est) != 2 {
			t.Fatalf("%s: %d channels x %d frames, want 2 x %d", name, len(est), est.Frames(), mix.Frames())
		}
		for c := range sum {
			for j, v := range est[c] {
				sum[c][j] += v
			}
		}
		d := sdr(src[i], est)
		t.Logf("%-6s SDR %5.2f dB", name, d)
		if d < 5 {
			t.Errorf("%s: SDR %.2f dB, want at least 5", name, d)
		}
		// The figure DescribeStemSeparation reports is this reading.
		if q := described[i]; q.Stem != name || q.SDRDB > d || d-q.SDRDB >= 0.5 {
			t.Errorf("%s: described as %s %.2f dB, measured %.2f dB", name, q.Stem, q.SDRDB, d)
		}
	}
	sumErr := -sdr(mix, sum)
	t.Logf("stems sum to the mix within %.1f dB", sumErr)
	if sumErr > -60 {
		t.Errorf("stems sum to the mix within %.1f dB, want below -60", sumErr)
	}
}

// collector gathers what SeparateStems hands its sink and checks the
// contract: stems in StemNames order, equal block lengths per stretch, at
// most BlockFrames frames and the programme's channel count.
type collector struct {
	t        testing.TB
	channels int
	stems    map[string]Block
	order    []string // the stems of the current stretch, in call order
	frames   int      // the current stretch's block length
}

func newCollector(t testing.TB, channels int) *collector {
	return &collector{t: t, channels: channels, stems: map[string]Block{}}
}

func (c *collector) sink(stem string, b Block) error {
	c.t.Helper()
	if len(b) != c.channels || b.Frames() < 1 || b.Frames() > BlockFrames {
		c.t.Fatalf("%s: block of %d channels x %d frames", stem, len(b), b.Frames())
	}
	if len(c.order) > 0 && slices.Index(StemNames(), stem) <= slices.Index(StemNames(), c.order[len(c.order)-1]) {
		c.order = c.order[:0] // a new stretch
	}
	if len(c.order) > 0 && b.Frames() != c.frames {
		c.t.Fatalf("%s: %d frames in a stretch of %d", stem, b.Frames(), c.frames)
	}
	c.order = append(c.order, stem)
	c.frames = b.Frames()
	out, ok := c.stems[stem]
	if !ok {
		out = NewBlock(len(b), 0)
	}
	for ch := range out {
		out[ch] = append(out[ch], b[ch]...)
	}
	c.stems[stem] = out
	return nil
}

// TestSeparateStemsReconstruction checks that the stems of noise sum back
// to it (the STFT reconstructs perfectly and the parts partition every
// bin) at several rates, channel counts and lengths, including ones
// shorter than a frame and not a multiple of the hop.
func TestSeparateStemsReconstruction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 14))
	for _, tc := range []struct {
		rate, channels, frames int
	}{
		{44100, 2, 1},
		{44100, 2, 1000},
		{44100, 2, 4096*3 + 17},
		{48000, 1, 50000},
		{96000, 2, 70001},
		{22050, 6, 30000},
	} {
		f := Format{SampleRate: tc.rate, Channels: tc.channels, BitDepth: 24}
		in := NewBlock(tc.channels, tc.frames)
		for _, ch := range in {
			for i := range ch {
				ch[i] = 0.3 * rng.NormFloat64()
			}
		}
		col := newCollector(t, tc.channels)
		if err := SeparateStems(NewBlockReader(f, in), nil, col.sink); err != nil {
			t.Fatal(err)
		}
		sum := NewBlock(tc.channels, tc.frames)
		for _, name := range StemNames() {
			got := col.stems[name]
			if got.Frames() != tc.frames {
				t.Fatalf("%+v: %s has %d frames, want %d", tc, name, got.Frames(), tc.frames)
			}
			for c := range sum {
				for i, v := range got[c] {
					sum[c][i] += v
				}
			}
		}
		if e := -sdr(in, sum); e > -100 {
			t.Errorf("%+v: stems sum to the input within %.1f dB, want below -100", tc, e)
		}
		if tc.channels == 1 {
			if e := rms(col.stems[StemOther]); e != 0 {
				t.Errorf("mono: other stem has RMS %g, want silence", e)
			}
		}
	}
}

// TestSeparateStemsSubset checks that a subset of stems is handed over
// alone, in StemNames order whatever the request's order, and equals the
// same stems of a full separation.
func TestSeparateStemsSubset(t *testing.T) {
	f, mix, _ := stemTestSignal(2)
	all := newCollector(t, 2)
	if err := SeparateStems(NewBlockReader(f, mix), nil, all.sink); err != nil {
		t.Fatal(err)
	}
	var calls []string
	some := newCollector(t, 2)
	err := SeparateStems(NewBlockReader(f, mix), []string{StemOther, StemVocals, StemOther}, func(stem string, b Block) error {
		if len(calls) < 2 {
			calls = append(calls, stem)
		}
		return some.sink(stem, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []string{StemVocals, StemOther}) {
		t.Errorf("first calls %v, want [vocals other]", calls)
	}
	if len(some.stems) != 2 {
		t.Errorf("got stems %v, want vocals and other", slices.Collect(maps.Keys(some.stems)))
	}
	for _, name := range []string{StemVocals, StemOther} {
		for c := range 2 {
			if !slices.Equal(some.stems[name][c], all.stems[name][c]) {
				t.Errorf("%s channel %d differs from the full separation", name, c)
			}
		}
	}
}

func TestSeparateStemsErrors(t *testing.T) {
	f := Format{SampleRate: 44100, Channels: 2, BitDepth: 16}
	none := func(string, Block) error {
		t.Error("sink called")
		return nil
	}
	if err := SeparateStems(NewBlockReader(f, NewBlock(2, 100)), []string{"vocals", "piano"}, none); !errors.Is(err, ErrUnknownStem) {
		t.Errorf("unknown stem: %v, want ErrUnknownStem", err)
	}
	if err := SeparateStems(NewBlockReader(f, NewBlock(2, 0)), nil, none); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty input: %v, want ErrEmpty", err)
	}
	if err := SeparateStems(NewBlockReader(Format{SampleRate: 10, Channels: 2}, NewBlock(2, 100)), nil, none); err == nil {
		t.Error("invalid format: no error")
	}
	stop := errors.New("stop")
	calls := 0
	err := SeparateStems(NewBlockReader(f, NewBlock(2, 44100)), nil, func(string, Block) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("sink error: %v after %d calls, want stop after 1", err, calls)
	}
}

func TestStemNames(t *testing.T) {
	if got := StemNames(); !slices.Equal(got, []string{"vocals", "drums", "bass", "other"}) {
		t.Errorf("StemNames() = %v", got)
	}
}

// TestSortedWindow slides a window along random values with ties and
// compares its median with sorting.
func TestSortedWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	v := make([]float64, 500)
	for i := range v {
		v[i] = float64(rng.IntN(8))
	}
	for _, width := range []int{1, 2, 5, 19, 48} {
		var w sortedWindow
		for i, x := range v {
			w.insert(x)
			if i >= width {
				w.remove(v[i-width])
			}
			s := slices.Clone(v[max(0, i-width+1) : i+1])
			slices.Sort(s)
			want := s[len(s)/2]
			if len(s)%2 == 0 {
				want = (s[len(s)/2-1] + s[len(s)/2]) / 2
			}
			if !slices.Equal(w, s) || w.median() != want {
				t.Fatalf("width %d at %d: window %v median %v, want %v median %v", width, i, w, w.median(), s, want)
			}
		}
	}
	if m := (sortedWindow{}).median(); m != 0 {
		t.Errorf("empty window median %v", m)
	}
}

// BenchmarkSeparateStems separates the 10 s stereo test programme into
// all four stems. Bytes are those of the programme as 24-bit PCM;
// x-realtime is programme seconds per wall second.
func BenchmarkSeparateStems(b *testing.B) {
	const seconds = 10
	f, mix, _ := stemTestSignal(seconds)
	b.SetBytes(int64(mix.Frames() * f.Channels * 3))
	sink := func(string, Block) error { return nil }
	b.ResetTimer()
	for b.Loop() {
		if err := SeparateStems(NewBlockReader(f, mix), nil, sink); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(seconds*float64(b.N)/b.Elapsed().Seconds(), "x-realtime")
}

// countingReader counts the frames its Reader has served.
type countingReader struct {
	Reader
	frames int
}

func (r *countingReader) Read(buf Block) (int, error) {
	n, err := r.Reader.Read(buf)
	r.frames += n
	return n, err
}

// TestSeparateStemsLatency checks the documented bound on how far the
// stems lag the input: at most 13312 frames at 44.1 kHz, plus the input
// block being read.
func TestSeparateStemsLatency(t *testing.T) {
	f, mix, _ := stemTestSignal(3)
	r := &countingReader{Reader: NewBlockReader(f, mix)}
	sent, worst := 0, 0
	err := SeparateStems(r, []string{StemDrums}, func(_ string, b Block) error {
		sent += b.Frames()
		worst = max(worst, r.frames-sent)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("input read ahead of the last frame handed over: at most %d frames", worst)
	if limit := 13312 + BlockFrames; worst > limit {
		t.Errorf("read %d frames ahead of the output, want at most %d", worst, limit)
	}
}
