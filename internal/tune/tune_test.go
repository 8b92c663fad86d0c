package tune_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"slices"
	"testing"
	"time"

	mp3 "github.com/hajimehoshi/go-mp3"
	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/internal/tune"
	"github.com/creatormusic/platform/sound/dsp"
)

// decode decodes an MP3 with go-mp3 into mono samples in [-1, 1] (go-mp3
// writes a mono stream as two equal channels; the left is taken).
func decode(t *testing.T, b []byte) []float64 {
	t.Helper()
	d, err := mp3.NewDecoder(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("go-mp3: %v", err)
	}
	if d.SampleRate() != tune.SampleRate {
		t.Fatalf("sample rate %d", d.SampleRate())
	}
	raw, err := io.ReadAll(d)
	if err != nil {
		t.Fatalf("go-mp3: %v", err)
	}
	out := make([]float64, len(raw)/4)
	for i := range out {
		out[i] = float64(int16(uint16(raw[4*i])|uint16(raw[4*i+1])<<8)) / 32768
	}
	return out
}

func rms(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

func at(d time.Duration) int { return int(d.Seconds() * tune.SampleRate) }

// peak is a spectral peak: the harmonic number nearest its frequency and
// its magnitude.
type peak struct {
	harmonic int
	mag      float64
}

// peaks returns the local maxima of the spectrum of x (Hann window, zero
// padded to 16384 points) up to maxHz, loudest first, with their
// magnitudes relative to the loudest.
func peaks(x []float64, maxHz float64) []peak {
	const n = 16384
	w := make([]float64, n)
	for i := range min(len(x), n) {
		w[i] = x[i] * (0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(len(x))))
	}
	c := fourier.NewFFT(n).Coefficients(nil, w)
	hz := float64(tune.SampleRate) / n
	var out []peak
	top := 0.0
	for i := 2; i < len(c)-1 && float64(i)*hz <= maxHz; i++ {
		m := cmplx.Abs(c[i])
		if m > cmplx.Abs(c[i-1]) && m >= cmplx.Abs(c[i+1]) {
			out = append(out, peak{harmonic: int(math.Round(float64(i) * hz / tune.FundamentalHz)), mag: m})
			top = max(top, m)
		}
	}
	for i := range out {
		out[i].mag /= top
	}
	slices.SortFunc(out, func(a, b peak) int { return int(math.Copysign(1, b.mag-a.mag)) })
	return out
}

func TestPieceIsMusicNotSilence(t *testing.T) {
	for _, seed := range []string{"a calm piano piece\x00task-1\x000", "lofi beat\x00task-2\x001", "x"} {
		s := tune.Compose(seed, 8*time.Second)
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if s.Length != tune.Length(8*time.Second) || s.Length < 8*time.Second || s.Length > 8*time.Second+27*time.Millisecond {
			t.Errorf("%q: length %v, want 8 s rounded up to whole frames (%v)", seed, s.Length, tune.Length(8*time.Second))
		}
		x := decode(t, b)
		if got, want := len(x), at(s.Length); got < want-2 || got > want+2 {
			t.Errorf("%q: %d samples decoded, want %d (%v)", seed, len(x), want, s.Length)
		}
		// Every second of the piece sounds, and the last, as it fades, still
		// audibly.
		for sec := 0; (sec+1)*tune.SampleRate <= len(x); sec++ {
			floor := 0.02
			if (sec+2)*tune.SampleRate > len(x) {
				floor = 0.005
			}
			if r := rms(x[sec*tune.SampleRate : (sec+1)*tune.SampleRate]); r < floor {
				t.Errorf("%q: second %d is near silent: rms %.4f", seed, sec, r)
			}
		}
		clipped := 0
		for _, v := range x {
			if math.Abs(v) > 0.999 {
				clipped++
			}
		}
		if clipped > 0 {
			t.Errorf("%q: %d samples clip", seed, clipped)
		}
	}
}

// sounding reports the harmonics (with the voices' overtones) of the notes
// that sound in [from, to), releases included.
func sounding(s tune.Score, from, to time.Duration) map[int]bool {
	on := map[int]bool{}
	for _, n := range s.Notes {
		if n.Voice == tune.Hat || n.Start >= to || n.Start+n.Length+400*time.Millisecond <= from {
			continue
		}
		for k := 1; k <= 3; k++ {
			on[k*n.Harmonic] = true
		}
	}
	return on
}

// TestDecodedPitchesAreTheScore decodes pieces and checks, over each long
// enough melody note, that the loudest pitch of the melody's register is
// that note, and that every clear spectral peak below the hats' band is a
// note (or an overtone of one) that the score sounds then.
func TestDecodedPitchesAreTheScore(t *testing.T) {
	checked := 0
	for i := range 6 {
		seed := fmt.Sprintf("pitch test %d", i)
		s := tune.Compose(seed, 12*time.Second)
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		x := decode(t, b)
		for _, n := range s.Notes {
			if n.Voice != tune.Melody || n.Length < 180*time.Millisecond || n.Start+n.Length > s.Length-2*time.Second {
				continue
			}
			from, to := n.Start+30*time.Millisecond, n.Start+min(n.Length, 400*time.Millisecond)
			ps := peaks(x[at(from):at(to)], 5000)
			var mel []peak
			for _, p := range ps {
				if p.harmonic >= 29 && p.harmonic <= 65 && p.mag > 0.01 {
					mel = append(mel, p)
				}
			}
			if len(mel) == 0 || mel[0].harmonic != n.Harmonic {
				t.Errorf("%q: melody note %d (%.0f Hz) at %v: the melody register's loudest peaks are %v",
					seed, n.Harmonic, float64(n.Harmonic)*tune.FundamentalHz, n.Start, mel[:min(3, len(mel))])
			}
			on := sounding(s, from, to)
			for _, p := range ps {
				if p.mag >= 0.1 && !on[p.harmonic] {
					t.Errorf("%q: at %v a peak at harmonic %d (%.0f Hz, %.2f of the loudest) that no note sounds",
						seed, n.Start, p.harmonic, float64(p.harmonic)*tune.FundamentalHz, p.mag)
				}
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d melody notes checked", checked)
	}
	t.Logf("%d melody notes checked", checked)
}

func TestSeedsGiveDifferentMusic(t *testing.T) {
	a, err := tune.Piece("prompt\x00task\x000", 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tune.Piece("prompt\x00task\x001", 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two seeds gave the same bytes")
	}
	xa, xb := decode(t, a), decode(t, b)
	n := min(len(xa), len(xb))
	diff := make([]float64, n)
	for i := range n {
		diff[i] = xa[i] - xb[i]
	}
	if r := rms(diff) / math.Max(rms(xa[:n]), rms(xb[:n])); r < 0.5 {
		t.Fatalf("the two pieces differ by only %.2f of their level", r)
	}
	ma, mb := tune.Compose("prompt\x00task\x000", 6*time.Second), tune.Compose("prompt\x00task\x001", 6*time.Second)
	if slices.Equal(melody(ma), melody(mb)) {
		t.Fatalf("two seeds gave the same melody %v", melody(ma))
	}
}

func melody(s tune.Score) []int {
	var out []int
	for _, n := range s.Notes {
		if n.Voice == tune.Melody {
			out = append(out, n.Harmonic)
		}
	}
	return out
}

func TestOneSeedOneByteStream(t *testing.T) {
	a, err := tune.Piece("same", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tune.Piece("same", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("one seed gave two byte streams")
	}
}

// TestPlatformReadsPiece runs the asset header parser and the sound
// engine's MP3 reader on a piece.
func TestPlatformReadsPiece(t *testing.T) {
	s := tune.Compose("platform", 20*time.Second)
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 400_000 {
		t.Errorf("a 20 s piece is %d bytes", len(b))
	}
	m, err := asset.Sniff(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Sniff: %v", err)
	}
	if m.Format != asset.MP3 || m.SampleRate != tune.SampleRate || m.Channels != 1 || m.BitrateKbps != tune.BitrateKbps ||
		!m.HasDuration || absDiff(m.DurationMs, s.Length.Milliseconds()) > 30 {
		t.Fatalf("Sniff = %+v, want MP3 44.1 kHz mono 64 kb/s of %v", m, s.Length)
	}
	r, err := dsp.NewMP3Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("NewMP3Reader: %v", err)
	}
	blk, err := dsp.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if got, want := blk.Frames(), at(s.Length); absDiff(int64(got), int64(want)) > 2 || rms(blk[0]) < 0.05 {
		t.Fatalf("sound engine read %d frames at rms %.3f, want %d", got, rms(blk[0]), want)
	}
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

func BenchmarkPiece(b *testing.B) {
	for _, d := range []time.Duration{5 * time.Second, 20 * time.Second} {
		b.Run(d.String(), func(b *testing.B) {
			size := 0
			for i := 0; b.Loop(); i++ {
				out, err := tune.Piece(fmt.Sprintf("bench %d", i), d)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/piece")
		})
	}
}
