package swap

import (
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestDefaultSettingsValid(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(s *Settings)
		field string
	}{
		{"release state", func(s *Settings) { s.ReleaseState = "alpha" }, "releaseState"},
		{"min above max", func(s *Settings) { s.Slippage.MinBps = 400 }, "slippage"},
		{"negative min", func(s *Settings) { s.Slippage.MinBps = -1 }, "slippage"},
		{"max too high", func(s *Settings) { s.Slippage.MaxBps = 5001 }, "slippage"},
		{"default outside", func(s *Settings) { s.Slippage.DefaultBps = 5 }, "slippage.defaultBps"},
		{"warning above reject", func(s *Settings) { s.PriceImpact.WarningBps = 600 }, "priceImpact"},
		{"reject above total", func(s *Settings) { s.PriceImpact.HardRejectBps = 10001 }, "priceImpact"},
		{"ttl short", func(s *Settings) { s.QuoteTTLSeconds = 9 }, "quoteTtlSeconds"},
		{"ttl long", func(s *Settings) { s.QuoteTTLSeconds = 301 }, "quoteTtlSeconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSettings()
			c.edit(&s)
			err := s.Validate()
			if fault.CodeOf(err) != fault.InvalidInput || fieldOf(err) != c.field {
				t.Fatalf("Validate = %v, want INVALID_INPUT on %s", err, c.field)
			}
		})
	}
}

func TestFeePolicyValidate(t *testing.T) {
	ok := FeePolicy{ServiceFeeBps: ServiceFeeBps, FeeRecipient: testKey(3).String()}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []FeePolicy{
		{ServiceFeeBps: 100, FeeRecipient: ok.FeeRecipient},
		{ServiceFeeBps: ServiceFeeBps, FeeRecipient: ""},
		{ServiceFeeBps: ServiceFeeBps, FeeRecipient: "0OIl"},
	} {
		if fault.CodeOf(f.Validate()) != fault.InvalidInput {
			t.Fatalf("Validate(%+v) accepted", f)
		}
	}
}
