package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/builtin"
	"github.com/creatormusic/platform/sound/dsp"
	"github.com/creatormusic/platform/sound/dsp/dsptest"
)

// memFile is an in-memory io.WriteSeeker that refuses to grow past limit
// (0: no limit) with errFull.
type memFile struct {
	b     []byte
	pos   int64
	limit int64
}

var errFull = errors.New("memFile: full")

func (m *memFile) Write(p []byte) (int, error) {
	end := m.pos + int64(len(p))
	if m.limit > 0 && end > m.limit {
		return 0, errFull
	}
	if end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[m.pos:], p)
	m.pos = end
	return len(p), nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		m.pos = off
	case io.SeekCurrent:
		m.pos += off
	case io.SeekEnd:
		m.pos = int64(len(m.b)) + off
	}
	return m.pos, nil
}

// encode writes b as a WAV file of f.
func encode(t *testing.T, f dsp.Format, b dsp.Block) []byte {
	t.Helper()
	var m memFile
	w, err := dsp.NewWAVWriter(&m, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return m.b
}

// tone is seconds of a 1 kHz sine of amplitude amp at rate, on channels.
func tone(rate, channels int, seconds, amp float64) dsp.Block {
	n := int(seconds * float64(rate))
	b := dsp.NewBlock(channels, n)
	for i := range n {
		for ch := range b {
			b[ch][i] = amp * math.Sin(2*math.Pi*1000*float64(i)/float64(rate))
		}
	}
	return b
}

// decode reads an encoded output back.
func decode(t *testing.T, file []byte) (dsp.Format, dsp.Block) {
	t.Helper()
	r, _, err := dsp.Open(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := dsp.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return r.Format(), b
}

// input is a WAV file's bytes as the service hands them to an engine.
func input(file []byte, bound time.Duration) sound.Input {
	return sound.Input{Blob: bytes.NewReader(file), MaxDuration: bound}
}

// A tiny WAV decodes through the adapter: Probe reports its format,
// Measure its frames and levels (a 1 kHz sine at -20 dBFS peak), and
// every pass reads the blob from its start again.
func TestDecodesATinyWAV(t *testing.T) {
	ctx := context.Background()
	file := encode(t, dsp.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, tone(8000, 1, 2, 0.1))
	in := input(file, time.Minute)
	var e builtin.Engine
	f, err := e.Probe(ctx, in)
	if err != nil || f != (sound.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}) {
		t.Fatalf("probe = %+v, %v", f, err)
	}
	for range 2 {
		l, err := e.Measure(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if l.Frames != 16000 || !l.SamplePeakDBFS.Available || math.Abs(l.SamplePeakDBFS.Value+20) > 0.01 ||
			!l.IntegratedLUFS.Available || l.RangeLU.Available || l.RangeLU.Reason == "" {
			t.Fatalf("loudness = %+v", l)
		}
	}
	if _, err := e.Tempo(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Key(ctx, in); err != nil {
		t.Fatal(err)
	}
}

// Input the engine cannot read is sound.ErrUndecodable, on every method
// that reads it.
func TestUndecodableInput(t *testing.T) {
	ctx := context.Background()
	var e builtin.Engine
	for name, file := range map[string][]byte{"empty": nil, "text": []byte("not audio at all, just words"),
		"truncated": encode(t, dsp.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, tone(8000, 1, 1, 0.1))[:30]} {
		if _, err := e.Probe(ctx, input(file, 0)); !errors.Is(err, sound.ErrUndecodable) {
			t.Errorf("%s: probe %v", name, err)
		}
		if _, err := e.Measure(ctx, input(file, 0)); !errors.Is(err, sound.ErrUndecodable) {
			t.Errorf("%s: measure %v", name, err)
		}
	}
}

// The duration bound holds in decoded frames: an input of exactly the
// bound is read, one frame more is sound.ErrTooLong, and so is a FLAC
// whose header claims one second but holds five, under a bound of two.
func TestFrameBound(t *testing.T) {
	ctx := context.Background()
	var e builtin.Engine
	file := encode(t, dsp.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, tone(8000, 1, 3, 0.1))
	if _, err := e.Measure(ctx, input(file, 3*time.Second)); err != nil {
		t.Fatalf("an input of exactly the bound: %v", err)
	}
	if _, err := e.Measure(ctx, input(file, 2*time.Second)); !errors.Is(err, sound.ErrTooLong) {
		t.Fatalf("an input past the bound: %v", err)
	}
	lying := assettest.ConstantFLAC(8000, 1, 16, 4096, 5*8000, 8000, 500)
	for name, call := range map[string]func(sound.Input) error{
		"measure": func(in sound.Input) error { _, err := e.Measure(ctx, in); return err },
		"master": func(in sound.Input) error {
			_, err := e.Master(ctx, in, sound.MasterOptions{Profile: "balanced"}, sound.Sink{Spec: sound.OutputSpec{Format: "wav", SampleRate: 8000, BitDepth: 16}, W: &memFile{}})
			return err
		},
		"separate": func(in sound.Input) error {
			return e.Separate(ctx, in, []string{"bass"}, map[string]sound.Sink{"bass": {Spec: sound.OutputSpec{Format: "wav", SampleRate: 8000, BitDepth: 16}, W: &memFile{}}})
		},
	} {
		if err := call(input(lying, 2*time.Second)); !errors.Is(err, sound.ErrTooLong) {
			t.Errorf("%s of a lying header: %v", name, err)
		}
	}
}

// Work stops once its context ends: a measure of ten minutes of audio
// returns within a second of the cancel, with the context's cause in its
// error (not one of the port's failures); a context already ended reads
// nothing.
func TestCancellation(t *testing.T) {
	var e builtin.Engine
	long := assettest.ConstantFLAC(48000, 2, 16, 4096, 600*48000, 600*48000, 300)
	stop := errors.New("operation cancelled")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { _, err := e.Measure(ctx, input(long, 10*time.Minute)); done <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel(stop)
	start := time.Now()
	select {
	case err := <-done:
		t.Logf("the measure returned %v after the cancel", time.Since(start).Round(time.Millisecond))
		if !errors.Is(err, stop) || errors.Is(err, sound.ErrUndecodable) || errors.Is(err, sound.ErrTooLong) {
			t.Fatalf("a cancelled measure: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the measure did not stop within a second of the cancel")
	}
	if _, err := e.Tempo(ctx, input(long, 10*time.Minute)); !errors.Is(err, stop) {
		t.Fatalf("a tempo on an ended context: %v", err)
	}
}

// Mastering resamples to the output's rate and encodes into the sink
// (here 24-bit WAV at 48 kHz from 8 kHz), reporting the output's loudness
// as re-measured; silence is sound.ErrSilent; a sink that refuses a write
// stops the work with its error.
func TestMasterEncodesIntoTheSink(t *testing.T) {
	ctx := context.Background()
	var e builtin.Engine
	file := encode(t, dsp.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, tone(8000, 1, 2, 0.1))
	spec := sound.OutputSpec{Format: "wav", SampleRate: 48000, BitDepth: 24}
	var out memFile
	res, err := e.Master(ctx, input(file, time.Minute), sound.MasterOptions{Profile: "streaming"}, sound.Sink{Spec: spec, W: &out})
	if err != nil {
		t.Fatal(err)
	}
	f, b := decode(t, out.b)
	if f.SampleRate != 48000 || f.BitDepth != 24 || f.Channels != 1 || b.Frames() != 96000 {
		t.Fatalf("output %+v of %d frames", f, b.Frames())
	}
	if res.Profile != "streaming" || res.TargetLUFS != -14 || math.Abs(res.AchievedLUFS-res.TargetLUFS) > 1 || res.AchievedTruePeakDB > res.CeilingDBTP {
		t.Fatalf("result = %+v", res)
	}

	silence := encode(t, dsp.Format{SampleRate: 8000, Channels: 1, BitDepth: 16}, dsp.NewBlock(1, 16000))
	if _, err := e.Master(ctx, input(silence, time.Minute), sound.MasterOptions{}, sound.Sink{Spec: spec, W: &memFile{}}); !errors.Is(err, sound.ErrSilent) {
		t.Fatalf("mastering silence: %v", err)
	}
	if _, err := e.Master(ctx, input(file, time.Minute), sound.MasterOptions{}, sound.Sink{Spec: spec, W: &memFile{limit: 4096}}); !errors.Is(err, errFull) {
		t.Fatalf("a sink that fills: %v", err)
	}
}

// Enhancement and separation encode what they produce into their sinks
// (FLAC and WAV), at the output's rate, for every stem asked.
func TestEnhanceAndSeparateEncode(t *testing.T) {
	ctx := context.Background()
	var e builtin.Engine
	file := encode(t, dsp.Format{SampleRate: 22050, Channels: 2, BitDepth: 16}, tone(22050, 2, 1, 0.2))
	var enh memFile
	if err := e.Enhance(ctx, input(file, time.Minute), []sound.EnhanceFeature{{Name: "clarity"}, {Name: "stereo_width", Amount: 1.2}},
		sound.Sink{Spec: sound.OutputSpec{Format: "flac", SampleRate: 44100, BitDepth: 16}, W: &enh}); err != nil {
		t.Fatal(err)
	}
	if f, b := decode(t, enh.b); f.SampleRate != 44100 || f.Channels != 2 || b.Frames() != 44100 {
		t.Fatalf("enhanced output %+v of %d frames", f, b.Frames())
	}
	outs := map[string]sound.Sink{}
	files := map[string]*memFile{}
	for _, s := range []string{"drums", "bass"} {
		files[s] = &memFile{}
		outs[s] = sound.Sink{Spec: sound.OutputSpec{Format: "wav", SampleRate: 22050, BitDepth: 24}, W: files[s]}
	}
	if err := e.Separate(ctx, input(file, time.Minute), []string{"drums", "bass"}, outs); err != nil {
		t.Fatal(err)
	}
	for s, m := range files {
		if f, b := decode(t, m.b); f.BitDepth != 24 || b.Frames() != 22050 {
			t.Fatalf("stem %s: %+v of %d frames", s, f, b.Frames())
		}
	}
}

// Feature checks name the request field: an unknown or repeated name its
// features[i].name, an amount dsp refuses its features[i].amount.
func TestCheckFeatures(t *testing.T) {
	var e builtin.Engine
	for _, c := range []struct {
		fs    []sound.EnhanceFeature
		field string
	}{
		{[]sound.EnhanceFeature{{Name: "denoise"}, {Name: "dehum", Amount: 60}}, ""},
		{[]sound.EnhanceFeature{{Name: "denoise"}, {Name: "reverb"}}, "features[1].name"},
		{[]sound.EnhanceFeature{{Name: "clarity"}, {Name: "clarity"}}, "features[1].name"},
		{[]sound.EnhanceFeature{{Name: "clarity"}, {Name: "dehum", Amount: 55}}, "features[1].amount"},
	} {
		err := e.CheckFeatures(c.fs)
		var fe *sound.FeatureError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.fs, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field || fe.Reason == ""):
			t.Errorf("%+v: %v, want a refusal of %s", c.fs, err, c.field)
		}
	}
}

// The engine reports what it serves: four stems, six features, four
// mastering profiles with balanced the default, and targets in [-30, -6].
func TestCapabilities(t *testing.T) {
	var e builtin.Engine
	m := e.Mastering()
	if e.Name() != "builtin" || len(e.Stems()) != 4 || len(e.Features()) != 6 || m.DefaultProfile != "balanced" ||
		!slices.Equal(m.Profiles, []string{"balanced", "streaming", "transparent", "loud"}) || m.MinTargetLUFS != -30 || m.MaxTargetLUFS != -6 {
		t.Fatalf("engine reports %v %v %+v", e.Stems(), e.Features(), m)
	}
}

// The stem separation the engine reports is signal processing, and every
// quality figure it reports is one this test reproduces: it separates 10 s
// of a mixture of four known synthetic stems (vocal-like tone, drums,
// bass, other) through the adapter (32-bit float WAV in and out, so
// encoding costs nothing measurable; the mixture, which peaks near 2, is
// scaled by 0.45 to fit the format, and SDR does not depend on scale),
// measures each stem's global SDR against its source, and no reported
// figure may be better than measured.
func TestSeparationReportsMeasuredQuality(t *testing.T) {
	var e builtin.Engine
	c := e.Separation()
	if c.Method != dsp.StemMethodSignalProcessing || c.Quality.Metric != "global_sdr" || c.Quality.MeasuredOn == "" {
		t.Fatalf("separation = %+v", c)
	}
	rate, mix, sources := dsptest.StemMixture(10)
	for _, b := range append([][][]float64{mix}, sources[:]...) {
		for _, ch := range b {
			for i := range ch {
				ch[i] *= 0.45
			}
		}
	}
	spec := sound.OutputSpec{Format: "wav", SampleRate: rate, BitDepth: 32}
	file := encode(t, dsp.Format{SampleRate: rate, Channels: 2, BitDepth: 32, Float: true}, mix)
	files := map[string]*memFile{}
	outs := map[string]sound.Sink{}
	for _, s := range e.Stems() {
		files[s] = &memFile{}
		outs[s] = sound.Sink{Spec: spec, W: files[s]}
	}
	if err := e.Separate(context.Background(), input(file, time.Minute), e.Stems(), outs); err != nil {
		t.Fatal(err)
	}
	reported := map[string]float64{}
	for _, q := range c.Quality.Stems {
		reported[q.Stem] = q.SDRDB
	}
	for i, name := range dsp.StemNames() {
		r, ok := reported[name]
		if !ok {
			t.Errorf("%s: no figure reported", name)
			continue
		}
		_, got := decode(t, files[name].b)
		measured := dsptest.SDR(sources[i], got)
		t.Logf("%-6s reported %5.2f dB, measured %5.2f dB", name, r, measured)
		if r > measured {
			t.Errorf("%s: reported %.2f dB, better than the %.2f dB measured", name, r, measured)
		}
	}
	if len(reported) != len(dsp.StemNames()) {
		t.Errorf("figures for %v, want one per stem", reported)
	}
}
