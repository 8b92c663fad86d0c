package dsp

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// stemSources are the four sources of the stem test mix, at equal RMS,
// indexed like StemNames.
type stemSources [stemCount]Block

// stemTestSignal returns issue 14's test programme: seconds of 44.1 kHz
// stereo mixing four sources scaled to equal RMS:
//   - bass: 55 Hz with its 2nd and 3rd harmonics, the same in both channels;
//   - drums: white-noise bursts decaying exponentially (40 ms time
//     constant) every 500 ms, the same in both channels;
//   - vocals: 220 Hz with 8 harmonics and a 5 Hz vibrato of ±2 %,
//     high-passed at 300 Hz (4th-order Butterworth), the same in both
//     channels;
//   - other: a C major chord (C5 E5 G5) of detuned sawtooth pairs,
//     generated independently per channel (each channel with its own
//     detune and phases) so the channels decorrelate.
func stemTestSignal(seconds float64) (Format, Block, stemSources) {
	const fs = 44100
	n := int(seconds * fs)
	var src stemSources
	for i := range src {
		src[i] = NewBlock(2, n)
	}
	rng := rand.New(rand.NewPCG(14, 4))

	bass := src[stemBass]
	for i := range n {
		t := float64(i) / fs
		v := math.Sin(2*math.Pi*55*t) + 0.5*math.Sin(2*math.Pi*110*t) + 0.33*math.Sin(2*math.Pi*165*t)
		bass[0][i], bass[1][i] = v, v
	}

	drums := src[stemDrums]
	period := fs / 2
	for i := range n {
		v := rng.NormFloat64() * math.Exp(-float64(i%period)/fs/0.040)
		drums[0][i], drums[1][i] = v, v
	}

	voice := src[stemVocals]
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

	other := src[stemOther]
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
	mix := NewBlock(2, n)
	for _, s := range src {
		for c := range mix {
			for i, v := range s[c] {
				mix[c][i] += v
			}
		}
	}
	return Format{SampleRate: fs, Channels: 2, BitDepth: 24}, mix, src
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

// sdr is the global signal-to-distortion ratio of est against ref in dB,
// 10 log10(sum ref² / sum (ref-est)²) over all channels.
func sdr(ref, est Block) float64 {
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
