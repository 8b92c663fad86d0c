package dsp

import (
	"errors"
	"io"
	"math"
	"testing"
)

// rsTone returns frames of a sine of freq Hz and amplitude amp at rate, on
// every channel (negated on odd ones).
func rsTone(channels, frames, rate int, freq, amp float64) Block {
	b := NewBlock(channels, frames)
	for i := range frames {
		v := amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))
		for c := range b {
			b[c][i] = v
			if c%2 == 1 {
				b[c][i] = -v
			}
		}
	}
	return b
}

// rsReadAll reads r in awkward block sizes.
func rsReadAll(t *testing.T, r Reader) Block {
	t.Helper()
	out := NewBlock(r.Format().Channels, 0)
	for step := 1; ; step = step%1500 + 331 {
		buf := NewBlock(r.Format().Channels, step)
		n, err := r.Read(buf)
		for c := range out {
			out[c] = append(out[c], buf[c][:n]...)
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// rsRMS is the RMS of x.
func rsRMS(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// rsFrequency estimates the frequency of x at rate from its rising zero
// crossings, interpolated linearly.
func rsFrequency(x []float64, rate int) float64 {
	first, last, count := -1.0, 0.0, 0
	for i := 1; i < len(x); i++ {
		if x[i-1] < 0 && x[i] >= 0 {
			at := float64(i-1) + x[i-1]/(x[i-1]-x[i])
			if first < 0 {
				first = at
			}
			last = at
			count++
		}
	}
	return float64(count-1) * float64(rate) / (last - first)
}

func TestResamplerKeepsATone(t *testing.T) {
	const in, frames, amp = 48000, 24000, 0.5
	for _, out := range []int{44100, 96000, 22050} {
		r := NewResampler(NewBlockReader(Format{SampleRate: in, Channels: 2, BitDepth: 24}, rsTone(2, frames, in, 1000, amp)), out)
		if f := r.Format(); f.SampleRate != out || f.Channels != 2 || f.BitDepth != 24 {
			t.Fatalf("format %+v", f)
		}
		got := rsReadAll(t, r)
		want := int(math.Ceil(float64(frames) * float64(out) / in))
		if d := got.Frames() - want; d < -2 || d > 2 {
			t.Errorf("%d Hz: %d frames, want %d", out, got.Frames(), want)
		}
		// Skip the filter's edges; measure whole periods (10 ms).
		period := out / 100
		skip := out / 200
		n := (got.Frames() - 2*skip) / period * period
		for c := range got {
			mid := got[c][skip : skip+n]
			db := 20 * math.Log10(rsRMS(mid)/(amp/math.Sqrt2))
			if c == 0 {
				t.Logf("%d Hz: level %+.5f dB, tone at %.4f Hz", out, db, rsFrequency(mid, out))
			}
			if math.Abs(db) > 0.1 {
				t.Errorf("%d Hz channel %d: level off by %.3f dB", out, c, db)
			}
			if c == 0 {
				if f := rsFrequency(mid, out); math.Abs(f-1000) > 0.5 {
					t.Errorf("%d Hz: tone at %.3f Hz", out, f)
				}
			}
		}
	}
}

func TestResamplerBands(t *testing.T) {
	const in, frames, amp = 48000, 12000, 0.5
	for _, tc := range []struct {
		out       int
		freq      float64
		maxDB     float64 // level relative to the input's
		minDB     float64
		rejection bool
	}{
		{22050, 20000, -60, math.Inf(-1), true}, // folds to 2.05 kHz
		{22050, 11600, -60, math.Inf(-1), true}, // just above the output's Nyquist
		{44100, 18000, 0.1, -0.1, false},        // near the passband edge
		{96000, 20000, 0.1, -0.1, false},        // upsampling keeps the whole band
	} {
		got := rsReadAll(t, NewResampler(NewBlockReader(Format{SampleRate: in, Channels: 1}, rsTone(1, frames, in, tc.freq, amp)), tc.out))
		skip := tc.out / 50
		mid := got[0][skip : got.Frames()-skip]
		db := 20 * math.Log10(rsRMS(mid)/(amp/math.Sqrt2))
		t.Logf("%.0f Hz at %d -> %d Hz: %.2f dB", tc.freq, in, tc.out, db)
		if db > tc.maxDB || db < tc.minDB {
			t.Errorf("%.0f Hz at %d -> %d Hz: %.2f dB, want within [%v, %v]", tc.freq, in, tc.out, db, tc.minDB, tc.maxDB)
		}
	}
}

// rsSilence streams frames of silence without holding them.
type rsSilence struct{ left int }

func (s *rsSilence) Format() Format { return Format{SampleRate: 48000, Channels: 2} }

func (s *rsSilence) Read(buf Block) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	n := min(s.left, buf.Frames())
	for c := range buf {
		clear(buf[c][:n])
	}
	s.left -= n
	return n, nil
}

func TestResamplerMemoryIsBounded(t *testing.T) {
	r := NewResampler(&rsSilence{left: 48000}, 44100).(*Resampler)
	buf := NewBlock(2, BlockFrames)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if bound := 2*r.span + 3*BlockFrames; cap(r.hist[0]) > bound {
			t.Fatalf("history holds %d frames, more than %d", cap(r.hist[0]), bound)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if total != 44100 {
		t.Fatalf("%d frames, want 44100", total)
	}
}

func TestResamplerKeepsDC(t *testing.T) {
	src := NewBlock(1, 5000)
	for i := range src[0] {
		src[0][i] = 0.25
	}
	for _, out := range []int{8000, 44100, 192000} {
		got := rsReadAll(t, NewResampler(NewBlockReader(Format{SampleRate: 48000, Channels: 1}, src), out))
		skip := out / 100
		for i, v := range got[0][skip : got.Frames()-skip] {
			if math.Abs(v-0.25) > 1e-6 {
				t.Fatalf("%d Hz frame %d: %v, want 0.25", out, skip+i, v)
			}
		}
	}
}

func TestResamplerEdges(t *testing.T) {
	f := Format{SampleRate: 48000, Channels: 1}
	br := NewBlockReader(f, NewBlock(1, 10))
	if r := NewResampler(br, 48000); r != Reader(br) {
		t.Error("equal rates should pass the reader through")
	}
	if _, err := NewResampler(br, 0).Read(NewBlock(1, 10)); err == nil {
		t.Error("a zero output rate read without error")
	}
	got := rsReadAll(t, NewResampler(NewBlockReader(f, NewBlock(1, 0)), 44100))
	if got.Frames() != 0 {
		t.Errorf("empty input gave %d frames", got.Frames())
	}
	got = rsReadAll(t, NewResampler(NewBlockReader(f, NewBlock(1, 1)), 96000))
	if got.Frames() != 2 {
		t.Errorf("one frame at double rate gave %d frames", got.Frames())
	}
}
