package sale

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/token"
)

// TestDependentCountsOnlyTheRegistrysVerifiedMint: after the registry's
// verification, every sale of the environment is verified and its run
// stored; the production mint counts as verified only when the registry
// verified that same mint.
func TestDependentCountsOnlyTheRegistrysVerifiedMint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	d := Dependent{Sales: f.svc, RunFunc: func(ctx context.Context, fn func(Store) error) error { return fn(f.st) }}
	if !d.Configured(access.Live) || d.Configured(access.Test) {
		t.Fatal("configured: live has a sale, test none")
	}
	verified := func(mint string) token.View {
		return token.View{State: "MAINNET_VERIFIED", Decisive: &token.Run{}, Config: token.Config{Mint: mint}}
	}
	for _, c := range []struct {
		name string
		view token.View
		want bool
	}{
		{"registry verified the sale's mint", verified(f.sale.ProductionMint), true},
		{"registry verified another mint", verified(key(8).String()), false},
		{"registry not verified", token.View{State: "MAINNET_CONFIGURED", Config: token.Config{Mint: f.sale.ProductionMint}}, false},
	} {
		before := len(f.st.runs)
		runs, err := d.VerifyAll(ctx, access.Live, c.view)
		if err != nil || len(runs) != 1 || len(f.st.runs) != before+1 || f.st.runs[before].ID != runs[0].ID || runs[0].ID == "" {
			t.Fatalf("%s: runs %+v, %v", c.name, runs, err)
		}
		mint, _ := runs[0].check(CheckProductionMint)
		if mint.Passed != c.want {
			t.Errorf("%s: production mint verified = %v, want %v (%s)", c.name, mint.Passed, c.want, mint.Reason)
		}
	}
	if runs, err := d.VerifyAll(ctx, access.Test, verified(f.sale.ProductionMint)); err != nil || len(runs) != 0 {
		t.Fatalf("an environment without sales: %+v %v", runs, err)
	}
}

// TestConfigHashIsTheConfigurationAsGiven: the hash that keys the start
// verification is the first 8 bytes of the SHA-256 of the environment's
// configuration as given (its chain client aside), before New fills in
// defaults, so it stays what existing job rows carry; a changed
// configuration has another.
func TestConfigHashIsTheConfigurationAsGiven(t *testing.T) {
	s := baseSale()
	s.Stage, s.Status = "", StatusPlanned // New fills the stage in
	ec := EnvConfig{Sales: []Sale{s}, Disclosure: Disclosure{Version: "disc-3"}, Chain: healthyChain()}
	svc, err := New(Config{Environments: map[access.Environment]EnvConfig{access.Live: ec}, Clock: clockFunc(func() time.Time { return epoch }),
		HandoffKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	raw := ec
	raw.Chain = nil
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got, want := svc.ConfigHash(access.Live), hex.EncodeToString(sum[:8]); got != want {
		t.Fatalf("ConfigHash = %s, want %s", got, want)
	}
	none, _ := json.Marshal(EnvConfig{})
	sum = sha256.Sum256(none)
	if got, want := svc.ConfigHash(access.Test), hex.EncodeToString(sum[:8]); got != want {
		t.Fatalf("ConfigHash of an environment without sales = %s, want %s", got, want)
	}
	ec.Disclosure.Version = "disc-4"
	other, err := New(Config{Environments: map[access.Environment]EnvConfig{access.Live: ec}, HandoffKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	if other.ConfigHash(access.Live) == svc.ConfigHash(access.Live) {
		t.Fatal("a changed configuration kept its hash")
	}
}
