package jupiter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/swap/jupiter"
)

const (
	mintA = "So11111111111111111111111111111111111111112"
	mintB = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

// quoteJSON is a V1 quote with one field replaced when field is set.
func quoteJSON(field, value string) string {
	fields := []struct{ k, v string }{
		{"inputMint", `"` + mintA + `"`}, {"inAmount", `"1000000"`}, {"outputMint", `"` + mintB + `"`},
		{"outAmount", `"17057460"`}, {"otherAmountThreshold", `"16886885"`}, {"swapMode", `"ExactIn"`},
		{"slippageBps", `100`}, {"platformFee", `null`}, {"priceImpactPct", `"0.00123"`},
		{"routePlan", `[{"swapInfo":{"ammKey":"DynamicSwap11111111111111111111111111111112","label":"Dynamic","inputMint":"` + mintA +
			`","outputMint":"` + mintB + `","inAmount":"1000000","outAmount":"17057460","details":{"dynamicSwapV2":{"x":1}}},"percent":100,"bps":10000}]`},
		{"contextSlot", `299283763`}, {"timeTaken", `0.0123`}, {"swapUsdValue", `"170.5"`},
	}
	var b strings.Builder
	b.WriteString("{")
	n := 0
	for _, f := range fields {
		v := f.v
		if f.k == field {
			if value == "<absent>" {
				continue
			}
			v = value
		}
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + f.k + `":` + v)
		n++
	}
	b.WriteString("}")
	return b.String()
}

func TestParseQuoteReadsTheDocumentedFields(t *testing.T) {
	q, err := jupiter.ParseQuote([]byte(quoteJSON("", "")))
	if err != nil {
		t.Fatal(err)
	}
	if q.InAmount != 1_000_000 || q.OutAmount != 17_057_460 || q.OtherAmountThreshold != 16_886_885 || q.SlippageBps != 100 ||
		q.PriceImpactPct != "0.00123" || q.PriceImpactBps != 12 || q.ContextSlot != 299283763 || q.PlatformFee != nil ||
		len(q.RoutePlan) != 1 || q.RoutePlan[0].AmmKey != "DynamicSwap11111111111111111111111111111112" || q.RoutePlan[0].Bps != 10000 {
		t.Fatalf("%+v", q)
	}
	// V2: percent null, bps kept; swapMode absent; a platform fee.
	v2 := quoteJSON("swapMode", "<absent>")
	v2 = strings.Replace(v2, `"percent":100`, `"percent":null`, 1)
	v2 = strings.Replace(v2, `"platformFee":null`, `"platformFee":{"amount":"3411","feeBps":20}`, 1)
	q, err = jupiter.ParseQuote([]byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	if q.SwapMode != "" || q.RoutePlan[0].Percent != nil || q.RoutePlan[0].Bps != 10000 || q.PlatformFee == nil ||
		q.PlatformFee.Amount != 3411 || q.PlatformFee.FeeBps != 20 {
		t.Fatalf("V2: %+v", q)
	}
	// An older answer with percent only.
	old := strings.Replace(quoteJSON("", ""), `,"bps":10000`, ``, 1)
	old = strings.Replace(old, `"percent":100`, `"percent":40`, 1)
	if q, err = jupiter.ParseQuote([]byte(old)); err != nil || q.RoutePlan[0].Bps != 4000 {
		t.Fatalf("percent only: %v %+v", err, q)
	}
}

func TestParseQuoteRefusesWhatItCannotReadExactly(t *testing.T) {
	for _, tc := range []struct{ field, value string }{
		{"outAmount", `"18446744073709551616"`}, // u64 overflow
		{"outAmount", `"-1"`},
		{"outAmount", `"017057460"`},
		{"outAmount", `"1.7e7"`},
		{"outAmount", `"17057460.0"`},
		{"outAmount", `" 17057460"`},
		{"outAmount", `17057460`}, // a number, not a string
		{"outAmount", `""`},
		{"outAmount", `<absent>`},
		{"inAmount", `"99999999999999999999999"`},
		{"otherAmountThreshold", `"17057461"`}, // above outAmount
		{"slippageBps", `10001`},
		{"slippageBps", `-5`},
		{"slippageBps", `1.0`},
		{"slippageBps", `"100"`},
		{"swapMode", `"ExactOut"`},
		{"priceImpactPct", `<absent>`},
		{"priceImpactPct", `"NaN"`},
		{"priceImpactPct", `"abc"`},
		{"priceImpactPct", `0.1`},
		{"inputMint", `"not a mint"`},
		{"routePlan", `[]`},
		{"routePlan", `[{"swapInfo":{"ammKey":"k","label":"l","inputMint":"` + mintA + `","outputMint":"` + mintB + `","inAmount":"1","outAmount":"-1"},"bps":10000}]`},
		{"routePlan", `[{"swapInfo":{"ammKey":"k","label":"l","inputMint":"` + mintA + `","outputMint":"` + mintB + `","inAmount":"1","outAmount":"1"}}]`},
		{"routePlan", `[{"swapInfo":{"ammKey":"k","label":"l","inputMint":"` + mintA + `","outputMint":"` + mintB + `","inAmount":"1","outAmount":"1"},"bps":10001}]`},
		{"contextSlot", `-1`},
		{"contextSlot", `18446744073709551616`},
		{"platformFee", `{"amount":"-3","feeBps":20}`},
	} {
		raw := quoteJSON(tc.field, tc.value)
		_, err := jupiter.ParseQuote([]byte(raw))
		_, _, details := fault.Public(err)
		if !errors.Is(err, jupiter.ErrUnavailable) || details["reason"] != jupiter.ReasonMalformedResponse {
			t.Errorf("%s = %s: %v", tc.field, tc.value, err)
		}
	}
	for _, raw := range []string{``, `[]`, `null`, `{"a":1} {"b":2}`, quoteJSON("", "") + "x"} {
		if _, err := jupiter.ParseQuote([]byte(raw)); !errors.Is(err, jupiter.ErrUnavailable) {
			t.Errorf("%q: %v", raw, err)
		}
	}
}

func TestImpactBpsRoundsHalfAwayFromZero(t *testing.T) {
	for _, tc := range []struct {
		pct  string
		want int64
	}{
		{"0", 0}, {"0.01", 100}, {"1", 10000}, {"0.00005", 1}, {"0.000049", 0}, {"0.00015", 2},
		{"0.004984", 50}, {"0.004944", 49}, {"-0.00005", -1}, {"-0.01", -100}, {"1e-4", 1}, {"0.12345678901234567890", 1235},
	} {
		got, err := jupiter.ImpactBps(tc.pct)
		if err != nil || got != tc.want {
			t.Errorf("%s: %d %v, want %d", tc.pct, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "NaN", "Infinity", "-Inf", "1/2", "0x10", " 0.1", "1e400", strings.Repeat("9", 65)} {
		if _, err := jupiter.ImpactBps(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseInstructionsToleratesV2AndRefusesBadInstructions(t *testing.T) {
	ix := `{"programId":"ComputeBudget111111111111111111111111111111","accounts":[],"data":"AsBcFQA="}`
	swap := `{"programId":"JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4","accounts":[{"pubkey":"` + mintA + `","isSigner":true,"isWritable":false}],"data":"5RfLl3rjrSo="}`
	v2 := `{"computeBudgetInstructions":[` + ix + `],"setupInstructions":[],"swapInstruction":` + swap +
		`,"cleanupInstruction":null,"otherInstructions":[],"addressesByLookupTableAddress":{"` + mintB + `":["` + mintA + `"]},` +
		`"blockhashWithMetadata":{"blockhash":"` + mintB + `","lastValidBlockHeight":280000150,"fetchedAt":{"secs_since_epoch":1}},` +
		`"prioritizationFeeLamports":1400,"computeUnitLimit":1400000,"prioritizationType":{"jito":{"lamports":1000000}},"simulationError":null}`
	ins, err := jupiter.ParseInstructions([]byte(v2))
	if err != nil {
		t.Fatal(err)
	}
	if ins.Blockhash != mintB || ins.LastValidBlockHeight != 280000150 || len(ins.AddressLookupTables) != 1 ||
		ins.AddressLookupTables[0].String() != mintB || ins.JitoTipLamports != 1_000_000 || ins.ComputeUnitLimit != 1_400_000 ||
		!ins.Swap.Accounts[0].IsSigner || len(ins.ComputeBudget[0].Data) != 5 {
		t.Fatalf("%+v", ins)
	}
	for name, raw := range map[string]string{
		"no swap instruction": strings.Replace(v2, `"swapInstruction":`+swap+`,`, ``, 1),
		"bad base64":          strings.Replace(v2, `"5RfLl3rjrSo="`, `"5RfLl3rjrSo"`, 1),
		"bad program":         strings.Replace(v2, `JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4`, `JUP6`, 1),
		"missing flag":        strings.Replace(v2, `,"isWritable":false`, ``, 1),
		"short blockhash":     strings.Replace(v2, `"blockhash":"`+mintB+`"`, `"blockhash":[1,2,3]`, 1),
		"negative limit":      strings.Replace(v2, `"computeUnitLimit":1400000`, `"computeUnitLimit":-1`, 1),
	} {
		if _, err := jupiter.ParseInstructions([]byte(raw)); !errors.Is(err, jupiter.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	simErr := strings.Replace(v2, `"simulationError":null`, `"simulationError":{"errorCode":"TRANSACTION_ERROR","error":"0x1771"}`, 1)
	_, err = jupiter.ParseInstructions([]byte(simErr))
	var se *jupiter.SimulationError
	if !errors.Is(err, jupiter.ErrSimulationFailed) || !errors.As(err, &se) || se.Message != "0x1771" || fault.CodeOf(err) != fault.SimulationFailed {
		t.Fatalf("simulation error: %v", err)
	}
}
