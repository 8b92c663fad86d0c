package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/transport/api"
)

// tokenGet reads one token or chain route as key (anonymous when "").
func tokenGet[T any](t *testing.T, s *platformtest.System, path, key string) (T, *platformtest.Response) {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: path, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var v T
	r.Data(t, &v)
	return v, r
}

// TestTokenRegistryVerifiesTheSimulatorMint runs the whole registry: the
// verification job the platform enqueues at start reads the deployed mint
// from the loopback cluster over HTTP, all thirteen checks pass with slot
// evidence, and the routes report it verified on the simulator's own
// network, never as mainnet and never production ready; the live
// environment, which has no cluster, stays PRE_DEPLOYMENT.
func TestTokenRegistryVerifiesTheSimulatorMint(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}},
		func(t *testing.T, s *platformtest.System) {
			key := s.Boot.TestKey
			var ver api.TokenVerificationView
			waitFor(t, "the start-up verification", func() bool {
				ver, _ = tokenGet[api.TokenVerificationView](t, s, "/api/v1/token/verification", key)
				return ver.RunID != nil
			})
			network := s.Cluster.Network().CAIP2()
			if !ver.Verified || ver.State != "LOCALNET_VERIFIED" || ver.Network == nil || *ver.Network != network ||
				ver.Slot == nil || *ver.Slot == 0 || ver.BlockTime == nil || ver.VerifiedAt == nil {
				t.Fatalf("verification = %+v", ver)
			}
			if strings.HasPrefix(network, "solana:5eykt4") {
				t.Fatalf("the simulator claims mainnet's genesis: %s", network)
			}
			if len(ver.Checks) != 13 {
				t.Fatalf("%d checks, want 13", len(ver.Checks))
			}
			for i, c := range ver.Checks {
				if c.Code != token.Checks()[i] || !c.Passed || !c.Required {
					t.Errorf("check %d = %+v", i+1, c)
				}
			}
			byCode := map[string]api.TokenCheckView{}
			for _, c := range ver.Checks {
				byCode[c.Code] = c
			}
			if c := byCode["DECIMALS"]; string(c.Actual) != "9" || string(c.Expected) != "9" {
				t.Errorf("DECIMALS = %s / %s", c.Actual, c.Expected)
			}
			if c := byCode["TRANSFER_FEE_BPS"]; string(c.Actual) != "200" || string(c.Expected) != "200" {
				t.Errorf("TRANSFER_FEE_BPS = %s / %s", c.Actual, c.Expected)
			}
			if c := byCode["TRANSFER_FEE_POLICY_CAP_BPS"]; string(c.ExpectedMax) != "500" || c.Expected != nil {
				t.Errorf("TRANSFER_FEE_POLICY_CAP_BPS = %+v", c)
			}

			dep, r := tokenGet[api.TokenDeploymentView](t, s, "/api/v1/token/deployment", key)
			if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
				t.Errorf("deployment Cache-Control = %q", cc)
			}
			if dep.State != "LOCALNET_VERIFIED" || dep.Cluster != "localnet" || !dep.Verified || dep.ProductionReady ||
				dep.Evidence == nil || dep.Evidence.Slot == nil || dep.Mint == nil || *dep.Mint != s.Token.Mint.String() {
				t.Fatalf("deployment = %+v", dep)
			}

			md, _ := tokenGet[api.TokenMetadataView](t, s, "/api/v1/token/metadata", key)
			if md.Status != "LOCALNET_VERIFIED" || md.Decimals != 9 || md.InitialMaximumSupply != "18446000000" ||
				md.AtomicInitialMaximumSupply != "18446000000000000000" || md.TransferFeeBps != 200 || md.TransferFeeRatePolicyCapBps != 500 ||
				md.Token2022MaximumFeeAtomic == nil || *md.Token2022MaximumFeeAtomic != "5000000000" || md.ProductionMint != nil ||
				md.TokenProgram != "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" || md.Network == nil || *md.Network != network {
				t.Fatalf("test metadata = %+v", md)
			}
			st, _ := tokenGet[api.TokenStatusView](t, s, "/api/v1/token/status", key)
			if st.ProductionReady || !st.MetadataVerified || !st.TransferFeeConfigVerified || st.SupplyMethodologyStatus != "DRAFT" ||
				st.Features.Transfers.Enabled || st.Features.Transfers.Reason == nil || *st.Features.Transfers.Reason != "deployment_not_live" ||
				st.Features.CirculatingSupply.Enabled || *st.Features.CirculatingSupply.Reason != "methodology_not_verified" {
				t.Fatalf("status = %+v", st)
			}
			total, _ := tokenGet[api.TokenSupplyView](t, s, "/api/v1/token/total-supply", key)
			if !total.Available || total.Atomic == nil || *total.Atomic != "10000000000000000000" || *total.Whole != "10000000000" || total.Slot == nil {
				t.Fatalf("total supply = %+v", total)
			}
			circ, _ := tokenGet[api.TokenSupplyView](t, s, "/api/v1/token/circulating-supply", key)
			if circ.Available || circ.Atomic != nil || circ.Reason == nil || *circ.Reason != "methodology_not_verified" {
				t.Fatalf("circulating supply = %+v", circ)
			}

			// Anonymous callers see live, which has no cluster.
			live, r := tokenGet[api.TokenMetadataView](t, s, "/api/v1/token/metadata", "")
			if live.Status != "PRE_DEPLOYMENT" || live.Network != nil || live.ProductionMint != nil || live.Token2022MaximumFeeAtomic != nil {
				t.Fatalf("live metadata = %+v", live)
			}
			if strings.Contains(r.Header.Get("Cache-Control"), "private") {
				t.Errorf("anonymous answer marked private: %q", r.Header.Get("Cache-Control"))
			}
			lt, _ := tokenGet[api.TokenSupplyView](t, s, "/api/v1/token/total-supply", "")
			if lt.Available || lt.Atomic != nil || *lt.Reason != "deployment_not_verified" {
				t.Fatalf("live total supply = %+v", lt)
			}
			if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/token/metadata", Key: "platform_test_not-a-key"}); r.Status != 401 {
				t.Fatalf("a bad credential on a public route: %d %s", r.Status, r.Body)
			}

			caps, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", key)
			if caps.Environment != "test" || caps.Network == nil || *caps.Network != network || len(caps.Features) != 8 {
				t.Fatalf("capabilities = %+v", caps)
			}
			for _, f := range caps.Features {
				if f.Feature == "zk_verification" {
					continue // TestZKVerify and TestZKVerifyUnavailable check it
				}
				want := f.Feature == "token_registry" || f.Feature == "wallet_verification" || f.Feature == "transaction_intents" ||
					f.Feature == "chain_payments"
				// Wallet verification has nothing on chain to prove: enabled,
				// never reported verified.
				verified := want && f.Feature != "wallet_verification"
				// Built features this system does not configure.
				reason := "not_available"
				switch f.Feature {
				case "cross_chain_transfers", "payment_required_protocol":
					reason = "not_configured"
				case "swap":
					// No aggregator: the swap domain's settings say why.
					set, _ := tokenGet[api.SwapSettingsView](t, s, "/api/v1/swap/settings", key)
					if set.StatusReason == nil || *set.StatusReason != "route_provider_not_configured" {
						t.Fatalf("swap settings = %+v", set)
					}
					reason = *set.StatusReason
				}
				if f.Enabled != want || f.Verified != verified || (!want && (f.Reason == nil || *f.Reason != reason)) {
					t.Errorf("feature %+v", f)
				}
			}
			lc, _ := tokenGet[api.Web3CapabilitiesView](t, s, "/api/v1/web3/capabilities", "")
			if lc.Environment != "live" || lc.Features[0].Enabled || *lc.Features[0].Reason != "cluster_not_configured" {
				t.Fatalf("live capabilities = %+v", lc)
			}
			for _, f := range lc.Features {
				if (f.Feature == "transaction_intents" || f.Feature == "chain_payments") && (f.Enabled || *f.Reason != "cluster_not_configured") {
					t.Errorf("live %s = %+v", f.Feature, f)
				}
			}
			wd, _ := tokenGet[api.Web3DeploymentView](t, s, "/api/v1/web3/deployment", key)
			if wd.Health.Status != "ok" || wd.Health.Slot == nil || wd.Health.LagSeconds == nil || wd.Token.State != "LOCALNET_VERIFIED" ||
				wd.Programs.Token2022 != token.ProgramID() || !wd.Configured {
				t.Fatalf("web3 deployment = %+v", wd)
			}
			ic, _ := tokenGet[api.ChainIntegrationView](t, s, "/api/v1/integrations/chain", key)
			if !ic.Configured || ic.Cluster != "localnet" || !ic.Token.Verified {
				t.Fatalf("chain integration = %+v", ic)
			}
			host := strings.TrimPrefix(s.Cluster.URL(), "http://")
			for _, path := range []string{"/api/v1/integrations/chain", "/api/v1/web3/deployment", "/api/v1/web3/capabilities", "/api/v1/token/deployment"} {
				r := s.Do(platformtest.Request{Method: "GET", Path: path, Key: key})
				if strings.Contains(string(r.Body), host) {
					t.Errorf("%s reveals the RPC URL: %s", path, r.Body)
				}
			}
		})
}

// TestTokenVerificationDeviations applies one deviation at a time to the
// deployed mint and runs the verification: each fails the matching check,
// records a FAILED run and leaves a configured registry configured; a run
// that cannot read the cluster (node behind, timeout, HTTP error) is an
// ERROR run that passes nothing and moves nothing, even from verified.
func TestTokenVerificationDeviations(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Chain: true, Jobs: platform.JobsConfig{Disabled: true}})
	ctx := context.Background()
	key := s.Boot.TestKey
	// verify runs the registry's verification a second after the last
	// one, as runs are spaced in production.
	verify := func() token.Run {
		t.Helper()
		s.Clock.Advance(time.Second)
		run, err := s.P.VerifyToken(ctx, access.Test)
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	state := func() string {
		d, _ := tokenGet[api.TokenDeploymentView](t, s, "/api/v1/token/deployment", key)
		return d.State
	}
	if st := state(); st != "LOCALNET_CONFIGURED" {
		t.Fatalf("before any run: %s", st)
	}
	// health reads the cluster's health as the deployment view reports it.
	health := func() api.ClusterHealthView {
		d, _ := tokenGet[api.Web3DeploymentView](t, s, "/api/v1/web3/deployment", key)
		return d.Health
	}
	// Configured, and no run has read it: configured, never ok.
	if h := health(); h.Status != "configured" || h.ObservedAt != nil || h.Slot != nil {
		t.Fatalf("health before any run: %+v", h)
	}
	epoch, err := s.Cluster.GetEpochInfo(ctx, chain.Processed)
	if err != nil {
		t.Fatal(err)
	}
	good := s.Token.PolicyMint(0, 10_000_000_000_000_000_000)
	good.Extensions[0] = withFee(good, epoch.Epoch, 200, 200)
	classic, _ := token2022.ParsePublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
	_, stranger := chaintest.NewKeypair()
	cases := []struct {
		name  string
		apply func()
		check string
	}{
		{"wrong decimals", func() { m := good; m.Decimals = 6; setMint(t, s, m) }, token.CheckDecimals},
		{"fee 300 bps", func() {
			m := good
			m.Extensions = cloneExt(good)
			m.Extensions[0] = withFee(good, 0, 300, 300)
			setMint(t, s, m)
		}, token.CheckFeeBps},
		{"live mint authority", func() { m := good; m.MintAuthority = &stranger; setMint(t, s, m) }, token.CheckAuthorityState},
		{"wrong program owner", func() {
			s.Cluster.SetAccount(s.Token.Mint, chaintest.Account{Owner: classic, Lamports: 3_299_040, Data: token2022.EncodeMint(good)})
		}, token.CheckProgramOwner},
		{"supply over maximum", func() { m := good; m.Supply = token.MaxSupplyAtomic + 1; setMint(t, s, m) }, token.CheckSupplyWithinMaximum},
		{"missing account", func() { s.Cluster.DeleteAccount(s.Token.Mint) }, token.CheckMintExists},
		{"newer fee above the cap", func() {
			m := good
			m.Extensions = cloneExt(good)
			m.Extensions[0] = withFee(good, epoch.Epoch+2, 200, 600)
			setMint(t, s, m)
		}, token.CheckFeeCap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer s.Cluster.SetAccount(s.Token.Mint, chaintest.Account{Owner: token2022.ProgramID(), Lamports: 3_299_040, Data: token2022.EncodeMint(good)})
			c.apply()
			s.Cluster.AdvanceSlots(40)
			run := verify()
			if run.Outcome != token.Failed {
				t.Fatalf("outcome %s, checks %+v", run.Outcome, run.Checks)
			}
			ver, _ := tokenGet[api.TokenVerificationView](t, s, "/api/v1/token/verification", key)
			if ver.Verified || ver.RunID == nil || *ver.RunID != run.ID {
				t.Fatalf("verification: verified %v, run %v, want run %s", ver.Verified, ver.RunID, run.ID)
			}
			for _, ch := range ver.Checks {
				if ch.Code == c.check && ch.Passed {
					t.Fatalf("%s passed: %+v", c.check, ch)
				}
			}
			if st := state(); st != "LOCALNET_CONFIGURED" {
				t.Fatalf("state moved to %s", st)
			}
		})
	}

	// The good mint verifies; then unreadable clusters prove nothing.
	s.Cluster.AdvanceSlots(40)
	if run := verify(); run.Outcome != token.Passed {
		t.Fatalf("good mint: %+v", run)
	}
	if st := state(); st != "LOCALNET_VERIFIED" {
		t.Fatalf("after a passing run: %s", st)
	}
	faults := []struct {
		name   string
		fault  chaintest.Fault
		code   string
		health string
	}{
		{"node behind", chaintest.Fault{Behind: 120}, token.ErrorNodeBehind, "unhealthy"},
		{"timeout", chaintest.Fault{Method: "getAccountInfo", Delay: 3 * time.Second}, token.ErrorChainUnavailable, "unreachable"},
		{"http 503", chaintest.Fault{HTTPStatus: 503}, token.ErrorChainUnavailable, "unreachable"},
		{"rpc error", chaintest.Fault{Method: "getEpochInfo", Code: -32603, Message: "internal"}, token.ErrorChainUnavailable, "unreachable"},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			s.Cluster.Inject(f.fault)
			defer s.Cluster.ClearFaults()
			run := verify()
			if run.Outcome != token.Errored || run.ErrorCode != f.code || len(run.Checks) != 0 {
				t.Fatalf("run = %+v", run)
			}
			ver, _ := tokenGet[api.TokenVerificationView](t, s, "/api/v1/token/verification", key)
			if !ver.Verified || ver.LastAttempt == nil || ver.LastAttempt.Outcome != "ERROR" || *ver.LastAttempt.ErrorCode != f.code {
				t.Fatalf("verification = %+v", ver)
			}
			if st := state(); st != "LOCALNET_VERIFIED" {
				t.Fatalf("an ERROR run moved the state to %s", st)
			}
			// The health says what this run observed, when it observed it.
			if h := health(); h.Status != f.health || h.ObservedAt == nil || !h.ObservedAt.Equal(run.FinishedAt) {
				t.Fatalf("health after %s: %+v", f.name, h)
			}
		})
	}
	// A failing run demotes a verified registry: its evidence no longer holds.
	m := good
	m.Decimals = 8
	setMint(t, s, m)
	if run := verify(); run.Outcome != token.Failed {
		t.Fatalf("deviation after verified: %+v", run)
	}
	if st := state(); st != "LOCALNET_CONFIGURED" {
		t.Fatalf("after a failing run: %s", st)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM token_verification_runs WHERE environment = 'test'"); n != len(cases)+len(faults)+2 {
		t.Fatalf("%d runs stored, want %d", n, len(cases)+len(faults)+2)
	}
}

// setMint writes m over the deployed mint.
func setMint(t *testing.T, s *platformtest.System, m token2022.Mint) {
	t.Helper()
	if err := s.Cluster.SetMint(s.Token.Mint, m); err != nil {
		t.Fatal(err)
	}
}

// cloneExt copies m's extensions so a case can replace one.
func cloneExt(m token2022.Mint) []token2022.Extension {
	return append([]token2022.Extension(nil), m.Extensions...)
}

// withFee returns m's fee configuration with older at olderBps from epoch
// 0 and newer at newerBps from epoch newerEpoch.
func withFee(m token2022.Mint, newerEpoch uint64, olderBps, newerBps uint16) token2022.Extension {
	fc, ok := m.TransferFeeConfig()
	if !ok {
		panic(fmt.Sprintf("no fee config in %+v", m))
	}
	fc.Older = token2022.TransferFee{Epoch: 0, MaximumFee: fc.Older.MaximumFee, BasisPoints: olderBps}
	fc.Newer = token2022.TransferFee{Epoch: newerEpoch, MaximumFee: fc.Newer.MaximumFee, BasisPoints: newerBps}
	return fc
}
