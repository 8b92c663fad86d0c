package token2022

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/google/go-cmp/cmp"
)

func TestTransferFeeFee(t *testing.T) {
	const maxU64 = math.MaxUint64
	cases := []struct {
		name   string
		fee    TransferFee
		amount uint64
		want   uint64
	}{
		{"spec: 200 bps on 1e9", TransferFee{BasisPoints: 200, MaximumFee: maxU64}, 1_000_000_000, 20_000_000},
		{"spec: 200 bps on 1 rounds up", TransferFee{BasisPoints: 200, MaximumFee: maxU64}, 1, 1},
		{"bps 0", TransferFee{BasisPoints: 0, MaximumFee: maxU64}, 1_000_000, 0},
		{"amount 0", TransferFee{BasisPoints: 200, MaximumFee: maxU64}, 0, 0},
		{"exact division does not round", TransferFee{BasisPoints: 100, MaximumFee: maxU64}, 100, 1},
		{"101 at 100 bps rounds up to 2", TransferFee{BasisPoints: 100, MaximumFee: maxU64}, 101, 2},
		{"9999 at 1 bps rounds up to 1", TransferFee{BasisPoints: 1, MaximumFee: maxU64}, 9_999, 1},
		{"10001 at 1 bps rounds up to 2", TransferFee{BasisPoints: 1, MaximumFee: maxU64}, 10_001, 2},
		{"cap applies", TransferFee{BasisPoints: 200, MaximumFee: 5_000}, 1_000_000_000, 5_000},
		{"cap equal to fee", TransferFee{BasisPoints: 200, MaximumFee: 20_000_000}, 1_000_000_000, 20_000_000},
		{"cap zero", TransferFee{BasisPoints: 500, MaximumFee: 0}, 1_000_000, 0},
		{"bps 10000 takes everything", TransferFee{BasisPoints: 10_000, MaximumFee: maxU64}, 123_456_789, 123_456_789},
		{"bps 10000 at u64 max", TransferFee{BasisPoints: 10_000, MaximumFee: maxU64}, maxU64, maxU64},
		{"1 bps at u64 max", TransferFee{BasisPoints: 1, MaximumFee: maxU64}, maxU64, 1_844_674_407_370_956},
		{"500 bps at u64 max", TransferFee{BasisPoints: 500, MaximumFee: maxU64}, maxU64, 922_337_203_685_477_581},
		{"9999 bps at u64 max", TransferFee{BasisPoints: 9_999, MaximumFee: maxU64}, maxU64, 18_444_899_399_302_180_660},
		{"over-range bps at u64 max hits the cap", TransferFee{BasisPoints: math.MaxUint16, MaximumFee: maxU64}, maxU64, maxU64},
		{"over-range bps small amount", TransferFee{BasisPoints: 20_000, MaximumFee: maxU64}, 3, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.fee.Fee(c.amount); got != c.want {
				t.Fatalf("Fee(%d) = %d, want %d", c.amount, got, c.want)
			}
			if got := bigFee(c.fee, c.amount); got != c.want {
				t.Fatalf("reference fee = %d, want %d", got, c.want)
			}
		})
	}
}

// bigFee is the rule of chain.md §5.4 in arbitrary precision.
func bigFee(f TransferFee, amount uint64) uint64 {
	if f.BasisPoints == 0 || amount == 0 {
		return 0
	}
	n := new(big.Int).Mul(new(big.Int).SetUint64(amount), big.NewInt(int64(f.BasisPoints)))
	n.Add(n, big.NewInt(MaxFeeBasisPoints-1))
	n.Quo(n, big.NewInt(MaxFeeBasisPoints))
	if n.Cmp(new(big.Int).SetUint64(f.MaximumFee)) > 0 {
		return f.MaximumFee
	}
	return n.Uint64()
}

func TestTransferFeeMatchesBigArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		f := TransferFee{BasisPoints: uint16(r.UintN(10_001)), MaximumFee: r.Uint64()}
		if r.UintN(4) == 0 {
			f.MaximumFee = math.MaxUint64
		}
		amount := r.Uint64() >> r.UintN(64)
		if got, want := f.Fee(amount), bigFee(f, amount); got != want {
			t.Fatalf("%+v Fee(%d) = %d, want %d", f, amount, got, want)
		}
	}
}

func TestFeeAtEpochBoundary(t *testing.T) {
	c := TransferFeeConfig{
		Older: TransferFee{Epoch: 5, BasisPoints: 100, MaximumFee: 1_000},
		Newer: TransferFee{Epoch: 10, BasisPoints: 300, MaximumFee: 50_000},
	}
	cases := []struct {
		epoch uint64
		want  uint64
	}{
		{0, 1_000},   // before both: older applies
		{9, 1_000},   // 1% of 1e6 = 10,000 capped at 1,000
		{10, 30_000}, // the switch epoch itself uses newer
		{11, 30_000}, // and every later one
		{math.MaxUint64, 30_000},
	}
	for _, tc := range cases {
		if got := c.FeeAt(tc.epoch, 1_000_000); got != tc.want {
			t.Errorf("FeeAt(%d) = %d, want %d", tc.epoch, got, tc.want)
		}
	}
	if c.EpochFee(9) != c.Older || c.EpochFee(10) != c.Newer {
		t.Fatal("EpochFee picks the wrong entry at the boundary")
	}
}

func TestSetTransferFee(t *testing.T) {
	initial := TransferFee{Epoch: 7, BasisPoints: 200, MaximumFee: 1_000}
	c := TransferFeeConfig{Older: initial, Newer: initial}

	// Newer already in force: it becomes older, the new fee starts two epochs on.
	got, err := c.SetTransferFee(8, 300, 2_000)
	if err != nil {
		t.Fatal(err)
	}
	want := TransferFeeConfig{Older: initial, Newer: TransferFee{Epoch: 10, BasisPoints: 300, MaximumFee: 2_000}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("first change (-want +got):\n%s", d)
	}
	if got.FeeAt(9, 1_000_000) != 1_000 || got.FeeAt(10, 10_000) != 300 {
		t.Fatal("the change applied before its epoch")
	}

	// A second change while newer is still pending replaces newer only.
	got2, err := got.SetTransferFee(9, 400, 3_000)
	if err != nil {
		t.Fatal(err)
	}
	want2 := TransferFeeConfig{Older: initial, Newer: TransferFee{Epoch: 11, BasisPoints: 400, MaximumFee: 3_000}}
	if d := cmp.Diff(want2, got2); d != "" {
		t.Fatalf("pending change (-want +got):\n%s", d)
	}

	// At newer's own epoch, newer is in force and becomes older.
	got3, _ := got.SetTransferFee(10, 0, 0)
	if got3.Older != got.Newer || got3.Newer.Epoch != 12 {
		t.Fatalf("change at newer's epoch = %+v", got3)
	}

	// The epoch saturates.
	got4, _ := c.SetTransferFee(math.MaxUint64-1, 1, 1)
	if got4.Newer.Epoch != math.MaxUint64 {
		t.Fatalf("saturating epoch = %d", got4.Newer.Epoch)
	}

	// 10000 is allowed; more is rejected; a registry's lower cap is not ours.
	if _, err := c.SetTransferFee(8, MaxFeeBasisPoints, 1); err != nil {
		t.Fatalf("10000 bps rejected: %v", err)
	}
	if _, err := c.SetTransferFee(8, 501, 1); err != nil {
		t.Fatalf("501 bps rejected: %v", err)
	}
	_, err = c.SetTransferFee(8, MaxFeeBasisPoints+1, 1)
	if fault.CodeOf(err) != fault.InvalidInput {
		t.Fatalf("10001 bps error = %v, want INVALID_INPUT", err)
	}
}
