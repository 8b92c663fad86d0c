package tune

import (
	"bytes"
	"io"
	"math"
	"math/cmplx"
	"testing"

	mp3 "github.com/hajimehoshi/go-mp3"
	"gonum.org/v1/gonum/dsp/fourier"
)

// TestLineSoundsItsHarmonic encodes one line held with toneSign over
// granules and decodes it with go-mp3: the line of harmonic m, even or
// odd, next to a subband's edge or not, sounds one steady sine at
// m × FundamentalHz, at about the amplitude global_gain gives it (lines
// near a subband edge come out a little louder: the decoder's alias
// reduction mixes in the neighbouring subband).
func TestLineSoundsItsHarmonic(t *testing.T) {
	for _, m := range []int{2, 5, 12, 17, 18, 19, 27, 36, 45, 64, 101, 140} {
		grs := make([]granule, 120)
		for g := range grs {
			grs[g].gain = 198 // 2^(-3): amplitude 0.125
			grs[g].line[m] = toneSign(m, g)
		}
		b, err := encode(grs)
		if err != nil {
			t.Fatal(err)
		}
		d, err := mp3.NewDecoder(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(d)
		if err != nil {
			t.Fatal(err)
		}
		const n = 32768
		x := make([]float64, n)
		top := 0.0
		for i := range x {
			j := 4 * (i + 8000)
			v := float64(int16(uint16(raw[j])|uint16(raw[j+1])<<8)) / 32768
			top = max(top, math.Abs(v))
			x[i] = v * (0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/n))
		}
		c := fourier.NewFFT(n).Coefficients(nil, x)
		best, total, near := 0, 0.0, 0.0
		for i := range c {
			p := cmplx.Abs(c[i]) * cmplx.Abs(c[i])
			total += p
			if cmplx.Abs(c[i]) > cmplx.Abs(c[best]) {
				best = i
			}
		}
		for i := best - 4; i <= best+4; i++ {
			near += cmplx.Abs(c[i]) * cmplx.Abs(c[i])
		}
		hz := float64(best) * SampleRate / n
		if math.Abs(hz-float64(m)*FundamentalHz) > 2*SampleRate/n || near/total < 0.98 || math.Abs(top-0.125) > 0.02 {
			t.Errorf("line %d: peak at %.1f Hz (want %.1f), %.3f of the energy there, amplitude %.3f (want 0.125)",
				m, hz, float64(m)*FundamentalHz, near/total, top)
		}
	}
}

// TestFramesKeepTheBitrate checks the frame lengths: 208 or 209 bytes,
// adding up to 64 kb/s, each starting with the header of a mono 44.1 kHz
// 64 kb/s frame whose padding bit says which.
func TestFramesKeepTheBitrate(t *testing.T) {
	b, err := encode(make([]granule, 2*441))
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for i := range 441 {
		size, padded := frameBytes(i)
		h := b[off : off+4]
		pad := h[2]>>1&1 == 1
		if h[0] != 0xFF || h[1] != 0xFB || h[2]&^2 != 0x50 || h[3] != 0xC4 || pad != padded || size != 208+int(h[2]>>1&1) {
			t.Fatalf("frame %d: header % x, size %d", i, h, size)
		}
		off += size
	}
	// 441 frames of 1152 samples are 11.52 s: 92,160 bytes at 64 kb/s.
	if off != len(b) || len(b) != 92160 {
		t.Fatalf("%d bytes in frames, %d in all, want 92160", off, len(b))
	}
}
