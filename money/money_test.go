package money_test

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

func TestParseDecimalMalformed(t *testing.T) {
	cases := []struct {
		in       string
		decimals int
		reason   string
	}{
		{"-1", 9, money.ReasonNegative},
		{"1e3", 9, money.ReasonSyntax},
		{"1E3", 9, money.ReasonSyntax},
		{"0.1234567891", 9, money.ReasonPrecision},
		{"0.1234567890", 9, money.ReasonPrecision},
		{"18446744073709551616", 0, money.ReasonOverflow},
		{"18446744073.709551616", 9, money.ReasonOverflow},
		{"184467440737095516150", 0, money.ReasonOverflow},
		{"", 9, money.ReasonEmpty},
		{" ", 9, money.ReasonSyntax},
		{" 1", 9, money.ReasonSyntax},
		{"1 ", 9, money.ReasonSyntax},
		{"1 000", 9, money.ReasonSyntax},
		{"+1", 9, money.ReasonSyntax},
		{".5", 9, money.ReasonSyntax},
		{"5.", 9, money.ReasonSyntax},
		{"00.5", 9, money.ReasonSyntax},
		{"01", 9, money.ReasonSyntax},
		{"1.2.3", 9, money.ReasonSyntax},
		{"NaN", 9, money.ReasonSyntax},
		{"Infinity", 9, money.ReasonSyntax},
		{"0x10", 9, money.ReasonSyntax},
		{"1,5", 9, money.ReasonSyntax},
		{"1.5", 0, money.ReasonPrecision},
		{"1", 20, money.ReasonDecimals},
		{"1", -1, money.ReasonDecimals},
	}
	for _, c := range cases {
		_, err := money.ParseDecimal(c.in, c.decimals)
		assertInvalid(t, "ParseDecimal("+c.in+")", err, c.reason)
	}
}

func TestParseAtomicMalformed(t *testing.T) {
	cases := []struct{ in, reason string }{
		{"-1", money.ReasonNegative},
		{"1e3", money.ReasonSyntax},
		{"18446744073709551616", money.ReasonOverflow},
		{"99999999999999999999999", money.ReasonOverflow},
		{"", money.ReasonEmpty},
		{" ", money.ReasonSyntax},
		{" 1", money.ReasonSyntax},
		{"1 ", money.ReasonSyntax},
		{"1.0", money.ReasonSyntax},
		{"01", money.ReasonSyntax},
		{"00", money.ReasonSyntax},
		{"+1", money.ReasonSyntax},
	}
	for _, c := range cases {
		_, err := money.ParseAtomic(c.in)
		assertInvalid(t, "ParseAtomic("+c.in+")", err, c.reason)
	}
}

func assertInvalid(t *testing.T, what string, err error, reason string) {
	t.Helper()
	if !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("%s: err %v, want INVALID_AMOUNT", what, err)
		return
	}
	_, _, details := fault.Public(err)
	if details["reason"] != reason {
		t.Errorf("%s: reason %v, want %s", what, details["reason"], reason)
	}
	withField := money.WithField(err, "amount")
	if _, _, d := fault.Public(withField); d["field"] != "amount" || d["reason"] != reason {
		t.Errorf("%s: WithField details %v", what, d)
	}
}

func TestParseAndFormat(t *testing.T) {
	cases := []struct {
		in       string
		decimals int
		want     money.Atomic
		format   string
		fixed    string
	}{
		{"12.5", 9, 12_500_000_000, "12.5", "12.500000000"},
		{"12.50", 9, 12_500_000_000, "12.5", "12.500000000"},
		{"0", 9, 0, "0", "0.000000000"},
		{"0.000000001", 9, 1, "0.000000001", "0.000000001"},
		{"18446000000", 9, 18_446_000_000_000_000_000, "18446000000", "18446000000.000000000"},
		{"18446744073.709551615", 9, money.MaxAtomic, "18446744073.709551615", "18446744073.709551615"},
		{"18446744073709551615", 0, money.MaxAtomic, "18446744073709551615", "18446744073709551615"},
		{"1000", 0, 1000, "1000", "1000"},
		{"1000", 3, 1_000_000, "1000", "1000.000"},
		{"0.5", 1, 5, "0.5", "0.5"},
	}
	for _, c := range cases {
		got, err := money.ParseDecimal(c.in, c.decimals)
		if err != nil || got != c.want {
			t.Errorf("ParseDecimal(%q, %d) = %d, %v; want %d", c.in, c.decimals, got, err, c.want)
			continue
		}
		if f := money.Format(got, c.decimals); f != c.format {
			t.Errorf("Format(%d, %d) = %q, want %q", got, c.decimals, f, c.format)
		}
		if f := money.FormatFixed(got, c.decimals); f != c.fixed {
			t.Errorf("FormatFixed(%d, %d) = %q, want %q", got, c.decimals, f, c.fixed)
		}
	}
	if a, err := money.ParseAtomic("18446000000000000000"); err != nil || a.String() != "18446000000000000000" {
		t.Errorf("ParseAtomic(max supply) = %v, %v", a, err)
	}
}

func TestAtomicArithmetic(t *testing.T) {
	if s, err := money.Atomic(2).Add(3); err != nil || s != 5 {
		t.Errorf("2+3 = %d, %v", s, err)
	}
	if _, err := money.MaxAtomic.Add(1); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("max+1 err = %v", err)
	}
	if d, err := money.Atomic(5).Sub(5); err != nil || d != 0 {
		t.Errorf("5-5 = %d, %v", d, err)
	}
	if _, err := money.Atomic(1).Sub(2); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("1-2 err = %v", err)
	}
	if p, err := money.Atomic(18_446_000_000).Mul(1_000_000_000); err != nil || p != 18_446_000_000_000_000_000 {
		t.Errorf("mul = %d, %v", p, err)
	}
	if _, err := money.MaxAtomic.Mul(2); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("max*2 err = %v", err)
	}
}

func TestAtomicJSON(t *testing.T) {
	var v struct {
		A money.Atomic `json:"a"`
	}
	v.A = money.MaxAtomic
	b, _ := json.Marshal(v)
	if string(b) != `{"a":"18446744073709551615"}` {
		t.Errorf("marshal = %s", b)
	}
	if err := json.Unmarshal([]byte(`{"a":"42"}`), &v); err != nil || v.A != 42 {
		t.Errorf("unmarshal string = %d, %v", v.A, err)
	}
	for _, in := range []string{`{"a":42}`, `{"a":null}`, `{"a":"-1"}`, `{"a":"1e3"}`, `{"a":"4.2"}`, `{"a":" 4"}`} {
		if err := json.Unmarshal([]byte(in), &v); !fault.Is(err, fault.InvalidAmount) {
			t.Errorf("unmarshal %s err = %v, want INVALID_AMOUNT", in, err)
		}
	}
}

func TestSum(t *testing.T) {
	// Many maximal values, then negatives, checked against math/big.
	var s money.Sum
	ref := new(big.Int)
	max := new(big.Int).SetUint64(uint64(money.MaxAtomic))
	var err error
	for range 1000 {
		if s, err = s.AddAtomic(money.MaxAtomic); err != nil {
			t.Fatal(err)
		}
		ref.Add(ref, max)
	}
	if s.String() != ref.String() {
		t.Fatalf("sum = %s, want %s", s, ref)
	}
	for range 3000 {
		if s, err = s.SubAtomic(money.MaxAtomic); err != nil {
			t.Fatal(err)
		}
		ref.Sub(ref, max)
	}
	if s.String() != ref.String() || !s.Negative() || s.Sign() != -1 {
		t.Fatalf("sum = %s, want %s", s, ref)
	}
	back, err := money.ParseSum(s.String())
	if err != nil || back != s {
		t.Fatalf("ParseSum(%s) = %s, %v", s, back, err)
	}
	if _, ok := s.Atomic(); ok {
		t.Error("negative sum converted to Atomic")
	}
	if a, ok := money.SumOf(7).Atomic(); !ok || a != 7 {
		t.Error("SumOf(7).Atomic")
	}
	if money.SumOf(3).Cmp(money.SumOf(4)) != -1 || s.Cmp(money.Sum{}) != -1 || money.SumOf(4).Cmp(money.SumOf(4)) != 0 {
		t.Error("Cmp")
	}
	// The 128-bit bounds.
	maxS, err := money.ParseSum("170141183460469231731687303715884105727")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := maxS.AddAtomic(1); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("max+1 err = %v", err)
	}
	minS, err := money.ParseSum("-170141183460469231731687303715884105728")
	if err != nil || minS.String() != "-170141183460469231731687303715884105728" {
		t.Fatalf("min = %s, %v", minS, err)
	}
	if _, err := minS.SubAtomic(1); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("min-1 err = %v", err)
	}
	if _, err := minS.Neg(); !fault.Is(err, fault.InvalidAmount) {
		t.Errorf("-min err = %v", err)
	}
	for _, bad := range []string{"", "-", "-0", "01", "1.0", " 1", "170141183460469231731687303715884105728", "-170141183460469231731687303715884105729", "1e3"} {
		if _, err := money.ParseSum(bad); !fault.Is(err, fault.InvalidAmount) {
			t.Errorf("ParseSum(%q) err = %v", bad, err)
		}
	}
	b, _ := json.Marshal(minS)
	var got money.Sum
	if err := json.Unmarshal(b, &got); err != nil || got != minS {
		t.Errorf("JSON round trip %s -> %s, %v", b, got, err)
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"12.5", "0", "-1", "1e3", "0.1234567891", "18446744073709551616", "", " ", "18446744073.709551615", "00.1", ".5"} {
		f.Add(s, 9)
	}
	f.Fuzz(func(t *testing.T, s string, decimals int) {
		a, err := money.ParseDecimal(s, decimals)
		if err != nil {
			if !fault.Is(err, fault.InvalidAmount) {
				t.Fatalf("ParseDecimal(%q, %d) err = %v, want INVALID_AMOUNT", s, decimals, err)
			}
			return
		}
		// A parsed amount formats and parses back to itself, in both forms.
		for _, f := range []string{money.Format(a, decimals), money.FormatFixed(a, decimals)} {
			b, err := money.ParseDecimal(f, decimals)
			if err != nil || b != a {
				t.Fatalf("ParseDecimal(%q) = %d; Format = %q; reparsed %d, %v", s, a, f, b, err)
			}
		}
		// The value agrees with exact rational arithmetic.
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("accepted %q that big.Rat rejects", s)
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
		if !r.IsInt() || r.Num().String() != a.String() {
			t.Fatalf("ParseDecimal(%q, %d) = %d, want %s", s, decimals, a, r.RatString())
		}
	})
}

func FuzzParseAtomic(f *testing.F) {
	for _, s := range []string{"0", "1", "-1", "1e3", "18446744073709551615", "18446744073709551616", "", " 1", "01"} {
		f.Add(s)
	}
	f.Add("18446000000000000000")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := money.ParseAtomic(s)
		if err != nil {
			if !fault.Is(err, fault.InvalidAmount) {
				t.Fatalf("ParseAtomic(%q) err = %v", s, err)
			}
			return
		}
		if a.String() != s {
			t.Fatalf("ParseAtomic(%q).String() = %q: not canonical", s, a.String())
		}
		sum, err := money.ParseSum(s)
		if err != nil || sum != money.SumOf(a) {
			t.Fatalf("ParseSum(%q) = %s, %v", s, sum, err)
		}
	})
}
