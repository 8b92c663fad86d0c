package dsp

import (
	"errors"
	"io"
	"math"
	"testing"
)

// segment is a stretch of a synthetic test signal: a sine whose peak is
// dBFS per channel for seconds.
type segment struct {
	dBFS    float64
	seconds float64
}

// toneReader synthesises EBU Tech 3341/3342-style tone sequences on the
// fly, so long test programmes take no memory.
type toneReader struct {
	format Format
	freq   float64
	// gainDB offsets each channel's level (nil: all channels alike); a
	// channel with -inf gain is silent.
	gainDB []float64
	// phase is the starting phase in radians.
	phase float64
	// taper is a raised-cosine fade in and out, in seconds, at the ends
	// of the whole programme.
	taper float64
	segs  []segment

	seg   int
	pos   int // frame within the current segment
	total int // frame within the programme
	n     int // frames in the programme
	amp   float64
}

func newToneReader(sampleRate, channels int, freq float64, segs ...segment) *toneReader {
	r := &toneReader{format: Format{SampleRate: sampleRate, Channels: channels, BitDepth: 24}, freq: freq, segs: segs}
	for _, s := range segs {
		r.n += r.frames(s)
	}
	return r
}

func (r *toneReader) frames(s segment) int {
	return int(math.Round(s.seconds * float64(r.format.SampleRate)))
}

func (r *toneReader) Format() Format { return r.format }

func (r *toneReader) Read(buf Block) (int, error) {
	fs := float64(r.format.SampleRate)
	gains := make([]float64, len(buf))
	for c := range gains {
		gains[c] = 1
		if r.gainDB != nil {
			gains[c] = math.Pow(10, r.gainDB[c]/20)
		}
	}
	i := 0
	for ; i < buf.Frames() && r.seg < len(r.segs); i++ {
		s := r.segs[r.seg]
		amp := r.amp
		if r.pos == 0 || amp == 0 {
			amp = math.Pow(10, s.dBFS/20)
			r.amp = amp
		}
		if r.taper > 0 {
			tf := r.taper * fs
			if d := float64(r.total); d < tf {
				amp *= 0.5 - 0.5*math.Cos(math.Pi*d/tf)
			}
			if d := float64(r.n - 1 - r.total); d < tf {
				amp *= 0.5 - 0.5*math.Cos(math.Pi*d/tf)
			}
		}
		v := amp * math.Sin(2*math.Pi*r.freq*float64(r.total)/fs+r.phase)
		for c := range buf {
			buf[c][i] = gains[c] * v
		}
		r.pos++
		r.total++
		if r.pos >= r.frames(s) {
			r.seg++
			r.pos = 0
		}
	}
	if i == 0 {
		return 0, io.EOF
	}
	return i, nil
}

func measure(t *testing.T, r Reader) Loudness {
	t.Helper()
	res, err := Measure(r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestKWeightingCoefficients(t *testing.T) {
	t.Parallel()
	// The BS.1770 48 kHz table, and the spec's derived 44.1 and 96 kHz
	// values (sound-dsp.md section 1.2).
	cases := []struct {
		fs        float64
		shelf, hp biquad
	}{
		{48000,
			biquad{1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585},
			biquad{1, -2, 1, -1.99004745483398, 0.99007225036621}},
		{44100,
			biquad{1.53084123005035, -2.65097999515473, 1.16907907992159, -1.66365511325602, 0.71259542807323},
			biquad{1, -2, 1, -1.98916967362980, 0.98919903578704}},
		{96000,
			biquad{1.55971422897580, -2.92674157825108, 1.37826120231582, -1.84460946989011, 0.85584332293064},
			biquad{1, -2, 1, -1.99501754472472, 0.99502375904092}},
	}
	for _, c := range cases {
		shelf, hp := kWeighting(c.fs)
		got := []float64{shelf.b0, shelf.b1, shelf.b2, shelf.a1, shelf.a2, hp.b0, hp.b1, hp.b2, hp.a1, hp.a2}
		want := []float64{c.shelf.b0, c.shelf.b1, c.shelf.b2, c.shelf.a1, c.shelf.a2, c.hp.b0, c.hp.b1, c.hp.b2, c.hp.a1, c.hp.a2}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-8 {
				t.Errorf("fs %v coefficient %d = %.14f, want %.14f", c.fs, i, got[i], want[i])
			}
		}
	}
}

// EBU Tech 3341 cases 1-5: integrated loudness of stereo 1 kHz tone
// sequences, ±0.1 LU.
func TestTech3341Integrated(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fs   int
		segs []segment
		want float64
	}{
		{"3341-1", 48000, []segment{{-23, 20}}, -23},
		{"3341-2", 48000, []segment{{-33, 20}}, -33},
		{"3341-3", 48000, []segment{{-36, 10}, {-23, 60}, {-36, 10}}, -23},
		{"3341-4", 48000, []segment{{-72, 10}, {-36, 10}, {-23, 60}, {-36, 10}, {-72, 10}}, -23},
		{"3341-5", 48000, []segment{{-26, 20}, {-20, 20.1}, {-26, 20}}, -23},
		{"3341-1 at 44.1 kHz", 44100, []segment{{-23, 20}}, -23},
		{"3341-1 at 96 kHz", 96000, []segment{{-23, 20}}, -23},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := measure(t, newToneReader(c.fs, 2, 1000, c.segs...))
			if !res.IntegratedAvailable {
				t.Fatalf("integrated unavailable: %s", res.IntegratedReason)
			}
			if d := res.IntegratedLUFS - c.want; math.Abs(d) > 0.1 {
				t.Errorf("I = %.3f LUFS, want %.1f ±0.1", res.IntegratedLUFS, c.want)
			}
			t.Logf("I = %.4f LUFS", res.IntegratedLUFS)
		})
	}
}

// EBU Tech 3341 case 6: 5.0 and 5.1 programmes with per-channel levels
// L, R -28, C -24, Ls, Rs -30 dBFS read -23 LUFS; the LFE is excluded.
func TestTech3341Surround(t *testing.T) {
	t.Parallel()
	inf := math.Inf(-1)
	for _, c := range []struct {
		name    string
		gainDB  []float64
		seconds float64
	}{
		{"5.0", []float64{-28, -28, -24, -30, -30}, 20},
		{"5.1 silent LFE", []float64{-28, -28, -24, inf, -30, -30}, 20},
		{"5.1 loud LFE", []float64{-28, -28, -24, 0, -30, -30}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newToneReader(48000, len(c.gainDB), 1000, segment{0, c.seconds})
			r.gainDB = c.gainDB
			res := measure(t, r)
			if d := res.IntegratedLUFS + 23; !res.IntegratedAvailable || math.Abs(d) > 0.1 {
				t.Errorf("I = %.3f LUFS (available %v), want -23.0 ±0.1", res.IntegratedLUFS, res.IntegratedAvailable)
			}
			t.Logf("I = %.4f LUFS", res.IntegratedLUFS)
		})
	}
}

// EBU Tech 3342 cases 1-4: loudness range of stereo 1 kHz tone sequences,
// ±1 LU.
func TestTech3342LoudnessRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		segs []segment
		want float64
	}{
		{"3342-1", []segment{{-20, 20}, {-30, 20}}, 10},
		{"3342-2", []segment{{-20, 20}, {-15, 20}}, 5},
		{"3342-3", []segment{{-40, 20}, {-20, 20}}, 20},
		{"3342-4", []segment{{-50, 20}, {-35, 20}, {-20, 20}, {-35, 20}, {-50, 20}}, 15},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := measure(t, newToneReader(48000, 2, 1000, c.segs...))
			if !res.LoudnessRangeAvailable {
				t.Fatalf("LRA unavailable: %s", res.LoudnessRangeReason)
			}
			if d := res.LoudnessRangeLU - c.want; math.Abs(d) > 1 {
				t.Errorf("LRA = %.3f LU, want %.0f ±1", res.LoudnessRangeLU, c.want)
			}
			t.Logf("LRA = %.4f LU (%.2f .. %.2f LUFS)", res.LoudnessRangeLU, res.LoudnessRangeLowLUFS, res.LoudnessRangeHighLUFS)
		})
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 24}

	silence, err := Measure(NewBlockReader(f, NewBlock(2, 5*48000)))
	if err != nil {
		t.Fatal(err)
	}
	if silence.IntegratedAvailable || silence.IntegratedReason == "" {
		t.Errorf("silence: integrated available %v (%.2f), reason %q", silence.IntegratedAvailable, silence.IntegratedLUFS, silence.IntegratedReason)
	}
	if silence.LoudnessRangeAvailable || silence.SamplePeakAvailable || silence.TruePeakAvailable {
		t.Errorf("silence: %+v", silence)
	}

	short := measure(t, newToneReader(48000, 2, 1000, segment{-23, 0.399}))
	if short.IntegratedAvailable || short.IntegratedReason == "" {
		t.Errorf("399 ms: integrated available %v, reason %q", short.IntegratedAvailable, short.IntegratedReason)
	}
	if !short.SamplePeakAvailable || math.Abs(short.SamplePeakDBFS+23) > 0.01 {
		t.Errorf("399 ms: sample peak %.3f available %v", short.SamplePeakDBFS, short.SamplePeakAvailable)
	}

	block := measure(t, newToneReader(48000, 2, 1000, segment{-23, 0.4}))
	if !block.IntegratedAvailable || math.Abs(block.IntegratedLUFS+23) > 0.1 {
		t.Errorf("400 ms: integrated %.3f available %v", block.IntegratedLUFS, block.IntegratedAvailable)
	}
	if block.LoudnessRangeAvailable || block.LoudnessRangeReason == "" {
		t.Errorf("400 ms: LRA available %v, reason %q", block.LoudnessRangeAvailable, block.LoudnessRangeReason)
	}

	if _, err := Measure(NewBlockReader(f, NewBlock(2, 0))); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty stream: err %v, want ErrEmpty", err)
	}
}

// chunkReader serves another Reader's stream in reads of at most n frames.
type chunkReader struct {
	Reader
	n int
}

func (r chunkReader) Read(buf Block) (int, error) {
	return r.Reader.Read(buf.Slice(min(r.n, buf.Frames())))
}

// Block boundaries must not change any result.
func TestStreamingEquivalence(t *testing.T) {
	t.Parallel()
	signal := func() Reader {
		r := newToneReader(48000, 2, 997, segment{-30, 1.5}, segment{-18, 1.55}, segment{-40, 0.65})
		r.gainDB = []float64{0, -3}
		return r
	}
	ref := measure(t, signal())
	for _, n := range []int{1, 997, 4096} {
		got := measure(t, chunkReader{signal(), n})
		for _, v := range []struct {
			name      string
			got, want float64
		}{
			{"integrated", got.IntegratedLUFS, ref.IntegratedLUFS},
			{"range", got.LoudnessRangeLU, ref.LoudnessRangeLU},
			{"sample peak", got.SamplePeakDBFS, ref.SamplePeakDBFS},
			{"true peak", got.TruePeakDBTP, ref.TruePeakDBTP},
		} {
			if math.Abs(v.got-v.want) > 1e-9 {
				t.Errorf("blocks of %d: %s %.12f, want %.12f", n, v.name, v.got, v.want)
			}
		}
		if got.Frames != ref.Frames {
			t.Errorf("blocks of %d: %d frames, want %d", n, got.Frames, ref.Frames)
		}
	}
	if !ref.IntegratedAvailable || !ref.LoudnessRangeAvailable || !ref.TruePeakAvailable {
		t.Fatalf("reference incomplete: %+v", ref)
	}
}

func TestChannelWeights(t *testing.T) {
	t.Parallel()
	if w := ChannelWeights(6); w[3] != 0 || w[4] != 1.41 || w[5] != 1.41 || w[2] != 1 {
		t.Errorf("5.1 weights %v", w)
	}
	if w := ChannelWeights(2); len(w) != 2 || w[0] != 1 || w[1] != 1 {
		t.Errorf("stereo weights %v", w)
	}
}
