package swap

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
)

// eachLeaf calls fn with every leaf of v (an addressable value) and its
// path: scalars, arrays, times and byte slices, plus, for every other
// slice, the slice itself under "path[len]" so that adding an element is
// tried too.
func eachLeaf(v reflect.Value, path string, fn func(path string, leaf reflect.Value)) {
	switch {
	case v.Type() == reflect.TypeOf(time.Time{}):
		fn(path, v)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			eachLeaf(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		fn(path+"[len]", v)
		for i := range v.Len() {
			eachLeaf(v.Index(i), path+"["+string(rune('0'+i))+"]", fn)
		}
	default:
		fn(path, v)
	}
}

// change alters one leaf in place.
func change(t *testing.T, path string, v reflect.Value) {
	t.Helper()
	switch {
	case strings.HasSuffix(path, "[len]"):
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case v.Type() == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Millisecond)))
	case v.Kind() == reflect.String:
		v.SetString(v.String() + "x")
	case v.Kind() >= reflect.Uint && v.Kind() <= reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case v.Kind() == reflect.Array:
		v.Index(0).SetUint(v.Index(0).Uint() ^ 0xFF)
	case v.Kind() == reflect.Slice:
		v.SetBytes(append(v.Bytes(), '!'))
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		t.Fatalf("%s: no way to change a %s; teach change its kind", path, v.Type())
	}
}

// hashChanges asserts that changing any one leaf of base except those in
// skip changes hash, and returns how many leaves were tried. copyOf must
// return an independent deep copy.
func hashChanges[T any](t *testing.T, base T, copyOf func(T) T, hash func(T) string, skip ...string) int {
	t.Helper()
	want := hash(base)
	var paths []string
	b := copyOf(base)
	eachLeaf(reflect.ValueOf(&b).Elem(), "", func(p string, _ reflect.Value) { paths = append(paths, p) })
	n := 0
	for _, p := range paths {
		if slices.Contains(skip, p) {
			continue
		}
		c := copyOf(base)
		eachLeaf(reflect.ValueOf(&c).Elem(), "", func(q string, leaf reflect.Value) {
			if q == p {
				change(t, p, leaf)
			}
		})
		if hash(c) == want {
			t.Errorf("changing %s leaves the hash unchanged", p)
		}
		n++
	}
	return n
}

// jsonCopy deep-copies v through encoding/json: also the re-serialization
// a store or cache may apply.
func jsonCopy[T any](t *testing.T) func(T) T {
	return func(v T) T {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out T
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func TestQuoteHashCoversEveryField(t *testing.T) {
	n := hashChanges(t, testQuote(), jsonCopy[Quote](t), QuoteHash, ".Hash", ".ProviderQuote")
	if n < 40 {
		t.Errorf("only %d leaves were changed; the walk missed fields", n)
	}
}

func TestIntentHashCoversEveryField(t *testing.T) {
	n := hashChanges(t, testIntent(t), jsonCopy[Intent](t), IntentHash, ".Hash")
	if n < 45 {
		t.Errorf("only %d leaves were changed; the walk missed fields", n)
	}
}

// TestHashesSurviveReserialization: storing and reading a record back
// (JSON, another time zone, a copy without monotonic clock) keeps its hash.
func TestHashesSurviveReserialization(t *testing.T) {
	q := testQuote()
	if QuoteHash(jsonCopy[Quote](t)(q)) != q.Hash || QuoteHash(q) != q.Hash {
		t.Error("the quote hash changes over a JSON round trip")
	}
	tokyo := time.FixedZone("JST", 9*3600)
	q2 := q
	q2.CreatedAt, q2.ExpiresAt = q.CreatedAt.In(tokyo), q.ExpiresAt.In(tokyo)
	if QuoteHash(q2) != q.Hash {
		t.Error("the quote hash depends on the time zone")
	}
	q3 := q
	q3.ExpiresAt = q.ExpiresAt.Add(999 * time.Microsecond) // below the stored precision
	if QuoteHash(q3) != q.Hash {
		t.Error("the quote hash depends on sub-millisecond time")
	}
	if err := jsonCopy[Quote](t)(q).CheckIntegrity(); err != nil {
		t.Errorf("a re-read quote fails its integrity check: %v", err)
	}
	it := testIntent(t)
	if IntentHash(jsonCopy[Intent](t)(it)) != it.Hash {
		t.Error("the intent hash changes over a JSON round trip")
	}
	// A different version of the encoding is a different hash.
	if it.Hash == q.Hash || len(q.Hash) != 64 || len(it.Hash) != 64 {
		t.Errorf("hashes: quote %q intent %q", q.Hash, it.Hash)
	}
}

// TestHashIsUnambiguous: moving bytes between adjacent fields, or
// between route steps, changes the hash.
func TestHashIsUnambiguous(t *testing.T) {
	a, b := testQuote(), testQuote()
	a.Provider, a.Network = "ab", "c"
	b.Provider, b.Network = "a", "bc"
	if QuoteHash(a) == QuoteHash(b) {
		t.Error("a byte moved between provider and network keeps the hash")
	}
	c, d := testQuote(), testQuote()
	c.Route = []RouteStep{{Venue: "ab"}, {Venue: "c"}}
	d.Route = []RouteStep{{Venue: "a"}, {Venue: "bc"}}
	if QuoteHash(c) == QuoteHash(d) {
		t.Error("a byte moved between route steps keeps the hash")
	}
	e, f := testQuote(), testQuote()
	e.Owner.TenantID, f.Owner.TenantID = "\xff", "\xfe" // invalid UTF-8 is hashed as bytes
	if QuoteHash(e) == QuoteHash(f) {
		t.Error("distinct invalid UTF-8 strings hash alike")
	}
}

func TestQuoteIntegrity(t *testing.T) {
	q := testQuote()
	if err := q.CheckIntegrity(); err != nil {
		t.Fatalf("sealed quote: %v", err)
	}
	if err := q.CheckEconomics(); err != nil {
		t.Fatalf("fixture economics: %v", err)
	}
	tampered := q
	tampered.MinimumOutputAtomic--
	raw := q
	raw.ProviderQuote = []byte(`{"inAmount":"980000000","outAmount":"5000001"}`)
	unsealed := q
	unsealed.Hash = ""
	for name, tt := range map[string]struct {
		q      Quote
		reason string
	}{
		"field": {tampered, "quoteHash"}, "raw provider quote": {raw, "providerQuoteHash"}, "no hash": {unsealed, "quoteHash"},
	} {
		err := tt.q.CheckIntegrity()
		var fe *fault.Error
		if !fault.Is(err, fault.QuoteMismatch) || !errors.As(err, &fe) || fe.Details["reason"] != tt.reason {
			t.Errorf("%s: CheckIntegrity = %v, want QUOTE_MISMATCH %s", name, err, tt.reason)
		}
	}
}

func TestQuoteEconomics(t *testing.T) {
	tests := map[string]struct {
		edit   func(*Quote)
		reason string
	}{
		"fee above the rate":       {func(q *Quote) { q.ServiceFeeAtomic++; q.ExecutableInputAtomic-- }, "serviceFee"},
		"units lost":               {func(q *Quote) { q.ExecutableInputAtomic-- }, "serviceFee"},
		"minimum above the policy": {func(q *Quote) { q.MinimumOutputAtomic++ }, "minimumOutput"},
		"slippage not applied":     {func(q *Quote) { q.SlippageBps = 100 }, "minimumOutput"},
		"fee in another mint":      {func(q *Quote) { q.FeeBreakdown.ServiceFeeMint = outMint }, "serviceFeeMint"},
		"same mints":               {func(q *Quote) { q.OutputMint = q.InputMint }, "mints"},
		"exact out":                {func(q *Quote) { q.RoutingMode = "ExactOut" }, "routingMode"},
	}
	for name, tt := range tests {
		q := testQuote()
		tt.edit(&q)
		err := q.CheckEconomics()
		var fe *fault.Error
		if !fault.Is(err, fault.QuoteMismatch) || !errors.As(err, &fe) || fe.Details["reason"] != tt.reason {
			t.Errorf("%s: CheckEconomics = %v, want QUOTE_MISMATCH %s", name, err, tt.reason)
		}
	}
}

func TestNewIntentBindsTheQuote(t *testing.T) {
	q, b := testQuote(), testBinding()
	now := t0.Add(5*time.Second + 123456789)
	it, err := NewIntent(q, b, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	if it.QuoteID != q.ID || it.QuoteHash != q.Hash || it.OperationID != q.OperationID || it.ExpiresAt != q.ExpiresAt {
		t.Errorf("intent does not bind the quote: %+v", it)
	}
	if it.ExecutableInputAtomic != q.ExecutableInputAtomic || it.MinimumOutputAtomic != q.MinimumOutputAtomic ||
		it.ServiceFeeAtomic != q.ServiceFeeAtomic || it.FeeMint() != q.InputMint {
		t.Errorf("intent economics differ from the quote's: %+v", it)
	}
	if it.FeeRecipient != feeRecipient || it.FeeAccount != feeAccount || it.SessionID != "ses_1" {
		t.Errorf("intent binding fields: %+v", it)
	}
	if !it.CreatedAt.Equal(now.Truncate(time.Millisecond)) || it.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", it.CreatedAt, now.Truncate(time.Millisecond))
	}
	if err := it.CheckMessage(testMessage); err != nil {
		t.Errorf("the prepared message is refused: %v", err)
	}
	if err := it.CheckMessage([]byte("another message")); !fault.Is(err, fault.SignatureRejected) {
		t.Errorf("another message = %v, want SIGNATURE_REJECTED", err)
	}
	// The intent owns its slices: changing the quote's route later does
	// not change it.
	q.Route[0].Venue = "changed"
	q.FeeBreakdown.VenueFees[0].Venue = "changed"
	if it.CheckIntegrity() != nil {
		t.Error("the intent shares the quote's slices")
	}
	// A tampered intent fails its integrity check.
	it.MinimumOutputAtomic--
	if err := it.CheckIntegrity(); !fault.Is(err, fault.QuoteMismatch) {
		t.Errorf("tampered intent = %v, want QUOTE_MISMATCH", err)
	}
}

func TestNewIntentChecks(t *testing.T) {
	now := t0.Add(5 * time.Second)
	tests := []struct {
		name   string
		editQ  func(*Quote)
		editB  func(*Binding)
		now    time.Time
		code   fault.Code
		reason string
	}{
		{name: "tampered quote", editQ: func(q *Quote) { q.ExpectedOutputAtomic++ }, code: fault.QuoteMismatch, reason: "quoteHash"},
		{name: "inconsistent quote", editQ: func(q *Quote) { q.MinimumOutputAtomic++; *q = q.Seal() }, code: fault.QuoteMismatch, reason: "minimumOutput"},
		{name: "another user", editB: func(b *Binding) { b.Owner.UserID = "usr_2" }, code: fault.NotFound},
		{name: "another workspace", editB: func(b *Binding) { b.Owner.WorkspaceID = "ws_2" }, code: fault.NotFound},
		{name: "another environment", editB: func(b *Binding) { b.Owner.Environment = access.Test }, code: fault.NotFound},
		{name: "expired", now: t0.Add(30 * time.Second), code: fault.QuoteExpired},
		{name: "another wallet", editB: func(b *Binding) { b.Wallet = stranger }, code: fault.WalletMismatch},
		{name: "fee policy changed", editB: func(b *Binding) { b.FeePolicyVersion = "fee/4" }, code: fault.QuoteMismatch, reason: "feePolicyVersion"},
		{name: "registry changed", editB: func(b *Binding) { b.RegistryVersion = "reg/8" }, code: fault.QuoteMismatch, reason: "registryVersion"},
		{name: "unverified recipient", editB: func(b *Binding) { b.FeeRecipientVerified = false }, code: fault.SwapNotConfigured},
		{name: "no fee account", editB: func(b *Binding) { b.FeeAccount = [32]byte{} }, code: fault.SwapNotConfigured},
		{name: "no message", editB: func(b *Binding) { b.Message = nil }, code: fault.InvalidInput},
		{name: "no blockhash", editB: func(b *Binding) { b.LastValidBlockHeight = 0 }, code: fault.InvalidInput},
	}
	for _, tt := range tests {
		q, b, at := testQuote(), testBinding(), now
		if tt.editQ != nil {
			tt.editQ(&q)
		}
		if tt.editB != nil {
			tt.editB(&b)
		}
		if !tt.now.IsZero() {
			at = tt.now
		}
		_, err := NewIntent(q, b, at)
		if !fault.Is(err, tt.code) {
			t.Errorf("%s: NewIntent = %v, want %s", tt.name, err, tt.code)
			continue
		}
		if tt.reason != "" {
			if _, _, d := fault.Public(err); d["reason"] != tt.reason {
				t.Errorf("%s: details = %v, want reason %s", tt.name, d, tt.reason)
			}
		}
	}
}

func TestEstimatedLamports(t *testing.T) {
	if got := testQuote().FeeBreakdown.EstimatedLamports(); got != 5_000+14_000+2_039_280 {
		t.Errorf("EstimatedLamports = %d", got)
	}
	f := FeeBreakdown{NetworkFeeLamports: money.MaxAtomic / 2, PriorityFeeLamports: money.MaxAtomic / 2, RentLamports: 5}
	if got := f.EstimatedLamports(); got != money.MaxAtomic {
		t.Errorf("EstimatedLamports does not saturate: %d", got)
	}
}
