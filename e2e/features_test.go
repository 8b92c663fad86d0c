package e2e_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/swap"
	"github.com/creatormusic/platform/transport/api"
)

// readFeatures reads GET /api/v1/features as req's credential; the answer
// must be 200. It returns the body too.
func readFeatures(t *testing.T, s *platformtest.System, req platformtest.Request) (map[string]api.FeatureView, string) {
	t.Helper()
	req.Method, req.Path = http.MethodGet, "/api/v1/features"
	r := s.Do(req)
	if r.Status != http.StatusOK {
		t.Fatalf("features: %d %s", r.Status, r.Body)
	}
	var v api.FeaturesView
	r.Data(t, &v)
	out := map[string]api.FeatureView{}
	for _, f := range v.Features {
		out[f.Feature] = f
	}
	return out, string(r.Body)
}

// line returns f's line of env.
func line(t *testing.T, f api.FeatureView, env string) api.FeatureEnvironmentView {
	t.Helper()
	for _, l := range f.Environments {
		if l.Environment == env {
			return l
		}
	}
	t.Fatalf("%s has no %s line", f.Feature, env)
	return api.FeatureEnvironmentView{}
}

// TestFeaturesFromConfiguration: every feature flag of the platform gates
// a feature; each feature answers both environments, derived from the
// system's configuration and verification state (music generation is
// configured for test only here, the loopback cluster and its mint serve
// test and no live cluster exists), with a reason for every line. A
// workspace whose flag is turned off reads disabled_by_flag; another
// tenant's workspace is unaffected. The body holds no configured URL, key
// or secret of the system.
func TestFeaturesFromConfiguration(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true}, func(t *testing.T, s *platformtest.System) {
		fs, body := readFeatures(t, s, platformtest.Request{Key: s.Boot.TestKey})
		flags := map[string]bool{}
		for _, f := range fs {
			if f.Flag != nil {
				flags[*f.Flag] = true
			}
			if len(f.Environments) != 2 {
				t.Errorf("%s answers %d environments", f.Feature, len(f.Environments))
			}
			for _, l := range f.Environments {
				if l.Reason == "" || (l.Enabled != (l.Reason == "enabled")) {
					t.Errorf("%s %s: enabled %v with reason %q", f.Feature, l.Environment, l.Enabled, l.Reason)
				}
				if l.Enabled && !l.Configured {
					t.Errorf("%s %s is enabled but not configured", f.Feature, l.Environment)
				}
			}
		}
		for _, ff := range platform.FeatureFlags() {
			if !flags[ff.Name] {
				t.Errorf("feature flag %s gates no feature of the route", ff.Name)
			}
		}
		if g := fs["music_generation"]; !line(t, g, "test").Enabled || line(t, g, "live").Reason != "not_configured" {
			t.Errorf("music_generation = %+v, want test enabled and live not_configured", g)
		}
		if tr := fs["token_registry"]; line(t, tr, "live").Enabled || line(t, tr, "live").Reason != "cluster_not_configured" || !line(t, tr, "test").Configured {
			t.Errorf("token_registry = %+v", tr)
		}
		if tt := fs["token_transfers"]; line(t, tt, "test").Enabled || line(t, tt, "live").Reason != "deployment_not_verified" {
			t.Errorf("token_transfers = %+v", tt)
		}
		if cs := fs["circulating_supply"]; line(t, cs, "test").Reason != "methodology_not_verified" {
			t.Errorf("circulating_supply = %+v", cs)
		}

		// Sanitized: no configured URL, key or secret appears.
		secrets := []string{s.Boot.TestKey, s.Boot.LiveKey, hex.EncodeToString(s.RewardTreasuryKey), "127.0.0.1", "localhost", "://"}
		if s.ProviderA != nil {
			secrets = append(secrets, s.ProviderA.URL(), s.ProviderA.APIKey())
		}
		if s.ProviderB != nil {
			secrets = append(secrets, s.ProviderB.URL(), s.ProviderB.APIKey())
		}
		if s.Cluster != nil {
			secrets = append(secrets, s.Cluster.URL())
		}
		if s.Stripe != nil {
			secrets = append(secrets, s.Stripe.URL(), s.Stripe.SecretKey())
		}
		if len(secrets) < 9 {
			t.Fatalf("the system configured too little to check: %d strings", len(secrets))
		}
		for _, sec := range secrets {
			if sec != "" && strings.Contains(body, sec) {
				t.Errorf("the features answer holds %q", sec)
			}
		}

		// A flag turned off for one workspace disables the feature there
		// only, in both environments, whatever its deployment.
		other := bootstrapOwner(t, s, "Flagless")
		if err := s.P.SetFeatureFlag(context.Background(), other.boot.TenantID, other.boot.WorkspaceID, genop.FeatureGenerate, false); err != nil {
			t.Fatal(err)
		}
		ofs, _ := readFeatures(t, s, platformtest.Request{Key: other.key(access.Test)})
		og := ofs["music_generation"]
		if og.FlagEnabled == nil || *og.FlagEnabled || line(t, og, "test").Enabled || line(t, og, "test").Reason != "disabled_by_flag" ||
			line(t, og, "live").Reason != "disabled_by_flag" {
			t.Errorf("the flagless workspace reads %+v", og)
		}
		again, _ := readFeatures(t, s, platformtest.Request{Key: s.Boot.TestKey})
		if g := again["music_generation"]; g.FlagEnabled == nil || !*g.FlagEnabled || !line(t, g, "test").Enabled {
			t.Errorf("another tenant's flag changed this workspace's feature: %+v", g)
		}

		// Any member or key reads it; no credential is 401.
		owner, members := team(t, s, "features", map[string]string{"viewer": "VIEWER"})
		narrow, _ := createKeyAs(t, s, owner, map[string]any{"name": "narrow", "scopes": []string{"read"}})
		readFeatures(t, s, platformtest.Request{Cookie: members["viewer"].cookie})
		readFeatures(t, s, platformtest.Request{Key: narrow})
		refused(t, "no credential", s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/features"}), http.StatusUnauthorized, "UNAUTHENTICATED")
	})
}

// swapCapability returns the swap line of GET /api/v1/web3/capabilities
// as key reads it.
func swapCapability(t *testing.T, s *platformtest.System, key string) api.Web3FeatureView {
	t.Helper()
	caps, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", key)
	for _, f := range caps.Features {
		if f.Feature == "swap" {
			return f
		}
	}
	t.Fatalf("the capabilities have no swap line: %+v", caps)
	return api.Web3FeatureView{}
}

// TestFeaturesSwapFromTheSwapDomain: the swap line of GET /api/v1/features
// and of GET /api/v1/web3/capabilities is the swap domain's state. With a
// cluster, the aggregator, the published policies and a registry run that
// matched two mints, swaps are configured, verified and enabled, as the
// settings (ACTIVE) and the tokens (two executable) say; live, without a
// cluster, gives the live settings' reason. A workspace whose flag is off
// reads disabled_by_flag, the deployment unchanged. When a mint changes
// and the next run matches only one, no swap has an executable pair:
// configured, not verified (deployment_not_verified), not enabled, in
// both routes, though the settings still say ACTIVE.
func TestFeaturesSwapFromTheSwapDomain(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, SwapFunc: swapEnv, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			key := s.Boot.TestKey
			executable := func() int {
				t.Helper()
				v, _ := tokenGet[api.SwapTokensView](t, s, "/api/v1/swap/tokens", key)
				n := 0
				for _, tk := range v.Tokens {
					if tk.Executable {
						n++
					}
				}
				return n
			}
			settings := func(k string) api.SwapSettingsView {
				t.Helper()
				v, _ := tokenGet[api.SwapSettingsView](t, s, "/api/v1/swap/settings", k)
				return v
			}
			waitFor(t, "the registry's start-up verification", func() bool {
				v, _ := tokenGet[api.SwapTokensView](t, s, "/api/v1/swap/tokens", key)
				return v.VerifiedAt != nil
			})
			if set, n := settings(key), executable(); set.Status != swap.StatusActive || n != 2 {
				t.Fatalf("the swap domain: status %s, %d executable tokens", set.Status, n)
			}
			fs, _ := readFeatures(t, s, platformtest.Request{Key: key})
			if f := fs["swap"]; f.Flag == nil || *f.Flag != swap.FeatureSwap || f.FlagEnabled == nil || !*f.FlagEnabled {
				t.Errorf("swap's flag = %+v", f)
			}
			want := api.FeatureEnvironmentView{Environment: "test", Enabled: true, Configured: true, Verified: true, Reason: "enabled"}
			if got := line(t, fs["swap"], "test"); got != want {
				t.Errorf("swap test = %+v, want %+v", got, want)
			}
			if c := swapCapability(t, s, key); !c.Enabled || !c.Configured || !c.Verified || c.Reason != nil {
				t.Errorf("swap capability = %+v", c)
			}
			live := settings(s.Boot.LiveKey)
			if live.Status != swap.StatusNotConfigured || live.StatusReason == nil {
				t.Fatalf("live settings = %+v", live)
			}
			if got := line(t, fs["swap"], "live"); got.Enabled || got.Configured || got.Verified || got.Reason != *live.StatusReason {
				t.Errorf("swap live = %+v, want the live settings' %s", got, *live.StatusReason)
			}
			if c := swapCapability(t, s, s.Boot.LiveKey); c.Enabled || c.Configured || c.Verified || c.Reason == nil || *c.Reason != *live.StatusReason {
				t.Errorf("live swap capability = %+v", c)
			}

			other := bootstrapOwner(t, s, "Swapless")
			if err := s.P.SetFeatureFlag(context.Background(), other.boot.TenantID, other.boot.WorkspaceID, swap.FeatureSwap, false); err != nil {
				t.Fatal(err)
			}
			ofs, _ := readFeatures(t, s, platformtest.Request{Key: other.key(access.Test)})
			if got := line(t, ofs["swap"], "test"); got.Enabled || !got.Configured || !got.Verified || got.Reason != "disabled_by_flag" {
				t.Errorf("swap for the flagless workspace = %+v", got)
			}
			if c := swapCapability(t, s, other.key(access.Test)); !c.Enabled || !c.Verified {
				t.Errorf("a workspace's flag changed the deployment's swap capability: %+v", c)
			}

			// TUSD's decimals change: the next run matches CMT alone.
			if err := s.Cluster.SetMint(swapKey(61), token2022.Mint{Decimals: 9, IsInitialized: true, Supply: 1}); err != nil {
				t.Fatal(err)
			}
			s.Cluster.AdvanceSlots(40)
			if err := s.P.VerifySwapRegistry(context.Background(), "test"); err != nil {
				t.Fatal(err)
			}
			if set, n := settings(key), executable(); set.Status != swap.StatusActive || n != 1 {
				t.Fatalf("the swap domain after the change: status %s, %d executable tokens", set.Status, n)
			}
			fs, _ = readFeatures(t, s, platformtest.Request{Key: key})
			want = api.FeatureEnvironmentView{Environment: "test", Configured: true, Reason: swap.ReasonDeploymentNotVerified}
			if got := line(t, fs["swap"], "test"); got != want {
				t.Errorf("swap test after the change = %+v, want %+v", got, want)
			}
			if c := swapCapability(t, s, key); c.Enabled || !c.Configured || c.Verified || c.Reason == nil || *c.Reason != swap.ReasonDeploymentNotVerified {
				t.Errorf("swap capability after the change = %+v", c)
			}
		})
}

// TestFeaturesRewardPayoutsFromTheTreasury: reward_payouts is listed with
// no flag. The test environment's treasury signer is configured, but
// configuration is no observation: not verified, not enabled
// (not_checked) until a funding reconciliation reads the treasury's
// token account; a reading that fails (BALANCE_UNAVAILABLE) observes
// nothing. Once a reconciliation read it (the challenge's evidence names
// the treasury's account of the mint), payouts are verified and enabled.
// Live has no treasury: not_configured throughout. Nothing of the key is
// in the answer.
func TestFeaturesRewardPayoutsFromTheTreasury(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, rewardOptions(), func(t *testing.T, s *platformtest.System) {
		payouts := func() (api.FeatureEnvironmentView, api.FeatureEnvironmentView) {
			t.Helper()
			fs, body := readFeatures(t, s, platformtest.Request{Key: s.Boot.TestKey})
			f, ok := fs["reward_payouts"]
			if !ok || f.Flag != nil || f.FlagEnabled != nil {
				t.Fatalf("reward_payouts = %+v (listed %v)", f, ok)
			}
			if strings.Contains(body, hex.EncodeToString(s.RewardTreasuryKey)) {
				t.Fatal("the features answer holds the treasury key")
			}
			return line(t, f, "test"), line(t, f, "live")
		}
		liveWant := api.FeatureEnvironmentView{Environment: "live", Reason: "not_configured"}
		unread := api.FeatureEnvironmentView{Environment: "test", Configured: true, Reason: "not_checked"}
		if test, live := payouts(); test != unread || live != liveWant {
			t.Fatalf("before any reading: test %+v, live %+v", test, live)
		}

		a := newArena(t, s)
		s.Cluster.Inject(chaintest.Fault{Method: "getTokenAccountBalance", HTTPStatus: http.StatusBadGateway})
		if r := a.reconcile(a.lead.person); r.Code() != "BALANCE_UNAVAILABLE" {
			t.Fatalf("cluster down: %d %s", r.Status, r.Body)
		}
		s.Cluster.ClearFaults()
		if test, _ := payouts(); test != unread {
			t.Fatalf("after a failed reading: %+v", test)
		}

		r := a.reconcile(a.lead.person)
		if r.Status != http.StatusOK {
			t.Fatalf("reconcile: %d %s", r.Status, r.Body)
		}
		var c api.ChallengeView
		r.Data(t, &c)
		acct := token2022.AssociatedTokenAddress(s.RewardTreasury, s.Token.Mint).String()
		if e := c.Pool.Evidence; e == nil || e.TreasuryAccount != acct || c.Pool.FundingStatus != "ANNOUNCED" {
			t.Fatalf("the reading = %+v, want the treasury's account %s read (nothing funded)", c.Pool, acct)
		}
		want := api.FeatureEnvironmentView{Environment: "test", Enabled: true, Configured: true, Verified: true, Reason: "enabled"}
		if test, live := payouts(); test != want || live != liveWant {
			t.Fatalf("after a reading: test %+v, live %+v", test, live)
		}
	})
}
