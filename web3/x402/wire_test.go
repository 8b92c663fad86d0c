package x402_test

import (
	"encoding/base64"
	"testing"

	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/web3/x402"
)

func TestHeaderIsStandardBase64OfJSON(t *testing.T) {
	in := x402.SettleResponse{Success: true, Transaction: "5sig", Network: "solana:abc", Payer: "Payer1"}
	h, err := x402.EncodeHeader(in)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil || string(raw) != `{"success":true,"payer":"Payer1","transaction":"5sig","network":"solana:abc"}` {
		t.Fatalf("header %q decodes to %s, %v", h, raw, err)
	}
	var out x402.SettleResponse
	if err := x402.DecodeHeader(h, &out); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	// base64url (here with '-' and no padding) is refused, as the reference does.
	url := base64.RawURLEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":">>>?"}`))
	if err := x402.DecodeHeader(url, &x402.PaymentPayload{}); err == nil {
		t.Fatalf("base64url %q decoded", url)
	}
	for _, bad := range []string{"", base64.StdEncoding.EncodeToString([]byte("not json")), base64.StdEncoding.EncodeToString([]byte(`{} {}`))} {
		if err := x402.DecodeHeader(bad, &x402.PaymentPayload{}); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func TestSupportedFeePayer(t *testing.T) {
	s := x402.Supported{Kinds: []x402.SupportedKind{
		{X402Version: 1, Scheme: "exact", Network: "solana:a", Extra: &x402.Extra{FeePayer: "v1"}},
		{X402Version: 2, Scheme: "exact", Network: "solana:b", Extra: &x402.Extra{FeePayer: "b"}},
		{X402Version: 2, Scheme: "exact", Network: "solana:a", Extra: &x402.Extra{FeePayer: "a"}},
	}}
	if fp, ok := s.FeePayer("solana:a"); !ok || fp != "a" {
		t.Fatalf("FeePayer = %q, %v", fp, ok)
	}
	if _, ok := s.FeePayer("solana:c"); ok {
		t.Fatal("a network it does not serve has a fee payer")
	}
}

func TestSettlementTable(t *testing.T) {
	table := fsm.New("x402.Transition", "A payment settlement", x402.Moves())
	if err := table.Check(); err != nil {
		t.Fatal(err)
	}
	for _, s := range x402.States() {
		for _, e := range []x402.Event{x402.EventConfirm, x402.EventFail, x402.EventUnexplained} {
			to, err := x402.Transition(s, e)
			if s.Final() && err == nil {
				t.Errorf("%s moves on %s to %s: a final settlement never moves", s, e, to)
			}
			if !s.Final() && (err != nil || !to.Final()) {
				t.Errorf("%s on %s: %s, %v", s, e, to, err)
			}
		}
	}
}
