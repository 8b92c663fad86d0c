package e2e_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/platformtest"
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
