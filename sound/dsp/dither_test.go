package dsp

import (
	"math"
	"testing"
)

func TestDithererLeavesGridSamplesExact(t *testing.T) {
	d := NewDitherer(42)
	for _, bits := range []int{16, 24} {
		scale := float64(int64(1) << (bits - 1))
		for _, q := range []int32{0, 1, -1, 12345, -12345, int32(scale) - 1, -int32(scale)} {
			if got := d.Quantize(float64(q)/scale, bits); got != q {
				t.Errorf("%d bits: %d came back as %d", bits, q, got)
			}
		}
	}
}

func TestDithererIsTriangularAndUnbiased(t *testing.T) {
	const n = 200000
	d := NewDitherer(7)
	const lsb = 1.0 / (1 << 15)
	for _, level := range []float64{0.3, -0.5, 7.25} {
		var sum, sq float64
		for range n {
			q := d.Quantize(level*lsb, 16)
			e := float64(q) - level
			if math.Abs(e) > 1.5 {
				t.Fatalf("level %v LSB: error %v LSB exceeds TPDF's 1.5", level, e)
			}
			sum += e
			sq += e * e
		}
		mean, variance := sum/n, sq/n-(sum/n)*(sum/n)
		// TPDF of ±1 LSB adds 1/6 LSB² to rounding's 1/12, for any level.
		if math.Abs(mean) > 0.01 || math.Abs(variance-0.25) > 0.01 {
			t.Errorf("level %v LSB: error mean %.4f, variance %.4f; want 0, 0.25", level, mean, variance)
		}
	}
}

func TestDithererIsDeterministic(t *testing.T) {
	a, b, c := NewDitherer(1), NewDitherer(1), NewDitherer(2)
	same, differ := true, false
	for i := range 1000 {
		x := 0.123456789 + float64(i)*1e-7
		qa, qb, qc := a.Quantize(x, 16), b.Quantize(x, 16), c.Quantize(x, 16)
		same = same && qa == qb
		differ = differ || qa != qc
	}
	if !same || !differ {
		t.Fatalf("one seed gives one sequence: %v; two seeds differ: %v", same, differ)
	}
}

func TestQuantizeClampsAndRounds(t *testing.T) {
	var plain *Ditherer
	for _, tc := range []struct {
		x    float64
		bits int
		want int32
	}{
		{1, 16, 32767}, {2, 16, 32767}, {-1, 16, -32768}, {-3, 16, -32768},
		{math.NaN(), 16, 0}, {math.Inf(1), 24, 1<<23 - 1},
		{1, 32, math.MaxInt32}, {-1, 32, math.MinInt32},
		{0.4 / (1 << 15), 16, 0}, {0.6 / (1 << 15), 16, 1}, {-0.6 / (1 << 23), 24, -1},
	} {
		if got := plain.Quantize(tc.x, tc.bits); got != tc.want {
			t.Errorf("Quantize(%v, %d) = %d, want %d", tc.x, tc.bits, got, tc.want)
		}
	}
	d := NewDitherer(3)
	for range 1000 {
		if q := d.Quantize(1-0.3/(1<<15), 16); q != 32767 && q != 32766 {
			t.Fatalf("near full scale: %d", q)
		}
	}
}
