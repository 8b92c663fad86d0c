package intent

import (
	"context"
	"math"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

func TestGrossUp(t *testing.T) {
	cases := []struct {
		name            string
		net             uint64
		bps             uint16
		max             uint64
		gross, withheld uint64
	}{
		{"no fee", 1000, 0, 100, 1000, 0},
		{"zero cap", 1000, 200, 0, 1000, 0},
		{"200 bps exact", 98, 200, math.MaxUint64, 100, 2},
		{"200 bps 1 atomic", 1, 200, math.MaxUint64, 2, 1},
		{"200 bps large", 1_000_000_000, 200, math.MaxUint64, 1_020_408_164, 20_408_164},
		{"cap binds", 1_000_000, 200, 5_000, 1_005_000, 5_000},
		{"cap boundary", 245_000, 200, 5_000, 250_000, 5_000},
		{"just below cap", 244_999, 200, 5_000, 249_999, 5_000},
		{"100% with cap", 10, 10000, 7, 17, 7},
		{"1 bps ceil", 10_000, 1, math.MaxUint64, 10_002, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := token2022.TransferFee{BasisPoints: c.bps, MaximumFee: c.max}
			g, w, err := GrossUp(c.net, f)
			if err != nil {
				t.Fatal(err)
			}
			if g != c.gross || w != c.withheld {
				t.Fatalf("gross %d fee %d, want %d %d", g, w, c.gross, c.withheld)
			}
			if g-f.Fee(g) != c.net || f.Fee(g) != w {
				t.Fatalf("net %d", g-f.Fee(g))
			}
			if g > c.net && (g-1)-f.Fee(g-1) >= c.net {
				t.Fatal("not the smallest gross")
			}
		})
	}
	// Exhaustive check of minimality and exactness on small values.
	for _, bps := range []uint16{1, 37, 200, 500, 9999, 10000} {
		for _, max := range []uint64{1, 3, 50, math.MaxUint64} {
			f := token2022.TransferFee{BasisPoints: bps, MaximumFee: max}
			for net := uint64(1); net < 300; net++ {
				g, _, err := GrossUp(net, f)
				if bps == 10000 && max == math.MaxUint64 {
					if !fault.Is(err, fault.InvalidAmount) {
						t.Fatalf("100%% uncapped must be refused, got %d %v", g, err)
					}
					continue
				}
				if err != nil || g-f.Fee(g) != net || (g-1)-f.Fee(g-1) >= net {
					t.Fatalf("bps %d max %d net %d: gross %d err %v", bps, max, net, g, err)
				}
			}
		}
	}
	if _, _, err := GrossUp(0, token2022.TransferFee{}); !fault.Is(err, fault.InvalidAmount) {
		t.Fatal("zero net")
	}
	if _, _, err := GrossUp(math.MaxUint64, token2022.TransferFee{BasisPoints: 200, MaximumFee: 10}); !fault.Is(err, fault.InvalidAmount) {
		t.Fatal("overflow must be refused")
	}
}

func TestFormatAtomic(t *testing.T) {
	cases := []struct {
		v    uint64
		d    uint8
		want string
	}{
		{0, 6, "0"}, {1, 6, "0.000001"}, {1_500_000_000, 9, "1.5"}, {1_020_409, 6, "1.020409"},
		{100, 0, "100"}, {1_000_000, 6, "1"}, {10, 1, "1"}, {math.MaxUint64, 9, "18446744073.709551615"},
		{5, 20, "0.00000000000000000005"},
	}
	for _, c := range cases {
		if got := FormatAtomic(c.v, c.d); got != c.want {
			t.Fatalf("FormatAtomic(%d, %d) = %s, want %s", c.v, c.d, got, c.want)
		}
	}
}

func TestStateTables(t *testing.T) {
	for _, tr := range Transitions() {
		got, err := Transit(tr.From, tr.Event)
		if err != nil || got != tr.To {
			t.Fatalf("%+v: %s %v", tr, got, err)
		}
		if tr.From.Terminal() {
			t.Fatalf("a terminal state moves: %+v", tr)
		}
	}
	if _, err := Transit(StateSettled, EventSettle); !fault.Is(err, fault.InvalidState) {
		t.Fatal("settled twice")
	}
	if _, err := Transit(StateCreated, EventVerify); !fault.Is(err, fault.InvalidState) {
		t.Fatal("verify before land")
	}
	// Settlement is followed by reconciliation, and only settled intents
	// are reconciled.
	if to, err := Transit(StateSettled, EventReconcile); err != nil || to != StateReconciling {
		t.Fatalf("settled -> %s %v", to, err)
	}
	if to, err := Transit(StateReconciling, EventConclude); err != nil || to != StateReconciled {
		t.Fatalf("reconciling -> %s %v", to, err)
	}
	for _, s := range []State{StateVerified, StateRequiresReview, StateFailed, StateReconciled} {
		if _, err := Transit(s, EventReconcile); !fault.Is(err, fault.InvalidState) {
			t.Fatalf("%s reconciled", s)
		}
	}
	if StateSettled.Terminal() || StateReconciling.Terminal() || !StateReconciled.Terminal() {
		t.Fatal("terminal states")
	}
	for _, s := range States() {
		want := s == StateCreated || s == StateSubmitted || s == StateConfirming || s == StateVerified
		if s.Pending() != want {
			t.Fatalf("%s pending %v", s, s.Pending())
		}
	}
	for _, tr := range NetworkTransitions() {
		if tr.To.rank() <= tr.From.rank() {
			t.Fatalf("backward row %+v", tr)
		}
		if got, err := TransitNetwork(tr.From, tr.Event); err != nil || got != tr.To {
			t.Fatalf("%+v", tr)
		}
	}
	order := []NetworkState{NetworkSubmitted, NetworkProcessed, NetworkConfirmed, NetworkFinalized}
	for i, cur := range order {
		for j, obs := range order[1:] {
			next, moved := Advance(cur, obs)
			if j+1 <= i && (moved || next != cur) {
				t.Fatalf("Advance(%s, %s) moved backwards to %s", cur, obs, next)
			}
			if j+1 > i && (!moved || next != obs) {
				t.Fatalf("Advance(%s, %s) = %s %v", cur, obs, next, moved)
			}
		}
	}
	for _, term := range []NetworkState{NetworkFailed, NetworkDropped} {
		for _, obs := range order {
			if next, moved := Advance(term, obs); moved || next != term {
				t.Fatalf("terminal %s moved", term)
			}
		}
	}
	if next, moved := Advance(NetworkFinalized, NetworkFailed); moved || next != NetworkFinalized {
		t.Fatal("finalized cannot fail")
	}
	if Observe(nil) != NetworkSubmitted || Observe(&chain.SignatureStatus{Status: chain.Finalized, Err: "x"}) != NetworkFailed ||
		Observe(&chain.SignatureStatus{Status: chain.Confirmed}) != NetworkConfirmed {
		t.Fatal("Observe")
	}
	if !NetworkFinalized.AtLeast(chain.Confirmed) || NetworkProcessed.AtLeast(chain.Confirmed) || NetworkFailed.AtLeast(chain.Processed) {
		t.Fatal("AtLeast")
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	p := CreditPurchase(nil, func(context.Context, Store, Intent) error { return nil },
		func(context.Context, Store, Intent) (Settlement, error) { return Settlement{}, nil })
	if err := r.Register(p); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(p); !fault.Is(err, fault.Conflict) {
		t.Fatalf("duplicate: %v", err)
	}
	bad := p
	bad.Name = "Bad-Name"
	if err := r.Register(bad); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("bad name")
	}
	bad = p
	bad.Name, bad.Threshold = "x", chain.Processed
	if err := r.Register(bad); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("processed threshold")
	}
	bad = p
	bad.Name, bad.Settle = "y", nil
	if err := r.Register(bad); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("no settle")
	}
	bad = p
	bad.Name, bad.Settlement = "z", nil
	if err := r.Register(bad); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("no settlement reader")
	}
	if _, err := r.Lookup("nope"); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("unknown")
	}
	if n := r.Names(); len(n) != 1 || n[0] != PurposeCreditPurchase {
		t.Fatal(n)
	}
}

func TestCreditPacks(t *testing.T) {
	m6, m9, m19 := key("m6"), key("m9"), key("m19")
	d := DefaultCreditPacks(map[chain.Address]uint8{m6: 6, m9: 9, m19: 19})
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if p, err := d.Price("500", m6); err != nil || p != 4_500_000 {
		t.Fatalf("%d %v", p, err)
	}
	if p, err := d.Price("2000", m9); err != nil || p != 16_000_000_000 {
		t.Fatalf("%d %v", p, err)
	}
	if _, err := d.Price("100", m19); !fault.Is(err, fault.InvalidInput) {
		t.Fatal("a 19-decimal mint is left out")
	}
	if got := d.Mints(); len(got) != 2 {
		t.Fatal(got)
	}
	bad := []CreditPacks{
		{},
		{Packs: []CreditPack{{Credits: "0", Prices: map[string]string{m6.String(): "1"}}}},
		{Packs: []CreditPack{{Credits: "1", Prices: map[string]string{}}}},
		{Packs: []CreditPack{{Credits: "1", Prices: map[string]string{"bad": "1"}}}},
		{Packs: []CreditPack{{Credits: "1", Prices: map[string]string{m6.String(): "-1"}}}},
		{Packs: []CreditPack{{Credits: "1", Prices: map[string]string{m6.String(): "1"}}, {Credits: "1", Prices: map[string]string{m6.String(): "2"}}}},
	}
	for i, b := range bad {
		if err := b.Validate(); !fault.Is(err, fault.InvalidInput) {
			t.Fatalf("case %d accepted", i)
		}
	}
}
