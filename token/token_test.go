package token_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/token"
)

// fakeChain is an in-process cluster holding one account.
type fakeChain struct {
	genesis string
	epoch   uint64
	slot    uint64
	account *chain.AccountInfo
	err     error // returned by every call when set
	noTime  bool
}

func (f *fakeChain) GetGenesisHash(ctx context.Context) (string, error) { return f.genesis, f.err }
func (f *fakeChain) GetEpochInfo(ctx context.Context, c chain.Commitment) (chain.EpochInfo, error) {
	return chain.EpochInfo{Epoch: f.epoch, AbsoluteSlot: f.slot}, f.err
}
func (f *fakeChain) GetAccountInfo(ctx context.Context, addr chain.Address, c chain.Commitment) (chain.AccountInfo, error) {
	if f.err != nil {
		return chain.AccountInfo{}, f.err
	}
	if f.account == nil || f.account.Address != addr {
		return chain.AccountInfo{}, chain.ErrAccountNotFound
	}
	a := *f.account
	a.Slot = f.slot
	return a, nil
}
func (f *fakeChain) GetBlockTime(ctx context.Context, slot uint64) (time.Time, error) {
	if f.noTime {
		return time.Time{}, chain.ErrBlockTimeUnavailable
	}
	return time.Unix(1_800_000_000, 0), f.err
}

func key(b byte) token2022.PublicKey {
	var k token2022.PublicKey
	for i := range k {
		k[i] = b
	}
	return k
}

// policy returns a conforming mint, its chain and its configuration.
func policy() (token2022.Mint, *fakeChain, token.Config) {
	mint, fee, withdraw, meta := key(1), key(2), key(3), key(4)
	tf := token2022.TransferFee{Epoch: 7, MaximumFee: 5_000_000_000, BasisPoints: 200}
	m := token2022.Mint{Supply: 1_000_000_000_000_000_000, Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{
		token2022.TransferFeeConfig{ConfigAuthority: fee, WithdrawWithheldAuthority: withdraw, Older: tf, Newer: tf},
		token2022.MetadataPointer{Authority: meta, MetadataAddress: mint},
		token2022.TokenMetadata{UpdateAuthority: meta, Mint: mint, Name: "T", Symbol: "T", URI: "https://t.example/t.json"},
	}}
	c := &fakeChain{genesis: chain.DevnetGenesisHash, epoch: 9, slot: 1234,
		account: &chain.AccountInfo{Address: mint, Owner: token2022.ProgramID(), Data: token2022.EncodeMint(m)}}
	cfg := token.Config{Cluster: chain.Devnet, Mint: mint.String(), MaximumFeeAtomic: "5000000000", FixedSupply: true,
		FeeConfigAuthority: fee.String(), WithdrawWithheldAuthority: withdraw.String(), MetadataAuthority: meta.String()}
	return m, c, cfg
}

func now() time.Time { return time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC) }

func failed(r token.Run) []string {
	var out []string
	for _, c := range r.Checks {
		if c.Required && !c.Passed {
			out = append(out, c.Code)
		}
	}
	return out
}

func TestVerifyPassesAConformingMint(t *testing.T) {
	_, c, cfg := policy()
	r := token.Verify(context.Background(), c, cfg, clockFunc(now))
	if r.Outcome != token.Passed || r.Network != "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" || r.Cluster != chain.Devnet ||
		r.Slot == nil || *r.Slot != 1234 || r.BlockTime == nil || r.Supply == nil || *r.Supply != 1_000_000_000_000_000_000 {
		t.Fatalf("run = %+v", r)
	}
	var codes []string
	for _, ch := range r.Checks {
		codes = append(codes, ch.Code)
	}
	if diff := cmp.Diff(token.Checks(), codes); diff != "" {
		t.Fatalf("check order (-want +got):\n%s", diff)
	}
	if len(codes) != 13 {
		t.Fatalf("%d checks", len(codes))
	}
}

func TestVerifyDeviations(t *testing.T) {
	stranger := key(9)
	cases := []struct {
		name   string
		mutate func(m *token2022.Mint, c *fakeChain, cfg *token.Config)
		want   []string
	}{
		{"decimals", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { m.Decimals = 8 }, []string{token.CheckDecimals}},
		{"live mint authority", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { m.MintAuthority = &stranger },
			[]string{token.CheckAuthorityState}},
		{"freeze authority", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { m.FreezeAuthority = &stranger },
			[]string{token.CheckAuthorityState}},
		{"supply over maximum", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { m.Supply = token.MaxSupplyAtomic + 1 },
			[]string{token.CheckSupplyWithinMaximum}},
		{"maximum fee differs", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { cfg.MaximumFeeAtomic = "1" },
			[]string{token.CheckMaximumFee}},
		{"fee authority differs", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { cfg.FeeConfigAuthority = stranger.String() },
			[]string{token.CheckFeeConfigAuthority}},
		{"withdraw authority differs", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) {
			cfg.WithdrawWithheldAuthority = stranger.String()
		}, []string{token.CheckWithdrawAuthority}},
		{"metadata authority differs", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { cfg.MetadataAuthority = stranger.String() },
			[]string{token.CheckMetadataAuthority}},
		{"no block time still records the slot", func(m *token2022.Mint, c *fakeChain, cfg *token.Config) { c.noTime = true }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, cfg := policy()
			tc.mutate(&m, c, &cfg)
			c.account.Data = token2022.EncodeMint(m)
			r := token.Verify(context.Background(), c, cfg, clockFunc(now))
			if diff := cmp.Diff(tc.want, failed(r)); diff != "" {
				t.Fatalf("failed checks (-want +got):\n%s\nrun %+v", diff, r)
			}
			if (tc.want == nil) != (r.Outcome == token.Passed) {
				t.Fatalf("outcome %s", r.Outcome)
			}
		})
	}
}

func TestVerifyErrorsProveNothing(t *testing.T) {
	behind := uint64(42)
	cases := []struct {
		name string
		err  error
		code string
	}{
		{"behind", &chain.RPCError{Method: "getGenesisHash", Code: chain.CodeNodeUnhealthy, Message: "Node is behind by 42 slots", NumSlotsBehind: &behind}, token.ErrorNodeBehind},
		{"unavailable", fmt.Errorf("%w: dial tcp: refused", chain.ErrUnavailable), token.ErrorChainUnavailable},
		{"timeout", context.DeadlineExceeded, token.ErrorChainUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c, cfg := policy()
			c.err = tc.err
			r := token.Verify(context.Background(), c, cfg, clockFunc(now))
			if r.Outcome != token.Errored || r.ErrorCode != tc.code || r.Checks != nil || r.Slot != nil {
				t.Fatalf("run = %+v", r)
			}
		})
	}
	_, c, cfg := policy()
	c.genesis = chain.MainnetGenesisHash
	if r := token.Verify(context.Background(), c, cfg, clockFunc(now)); r.Outcome != token.Errored || r.ErrorCode != token.ErrorNetworkMismatch {
		t.Fatalf("network mismatch: %+v", r)
	}
	if r := token.Verify(context.Background(), nil, cfg, clockFunc(now)); r.Outcome != token.Errored {
		t.Fatalf("no cluster: %+v", r)
	}
}

func TestVerifyMissingAccountFailsEveryCheck(t *testing.T) {
	_, c, cfg := policy()
	c.account = nil
	r := token.Verify(context.Background(), c, cfg, clockFunc(now))
	if r.Outcome != token.Failed || len(r.Checks) != 13 || r.Checks[0].Passed || r.Slot != nil {
		t.Fatalf("run = %+v", r)
	}
	for _, ch := range r.Checks {
		if ch.Passed {
			t.Errorf("%s passed without an account", ch.Code)
		}
	}
}

func TestStateTable(t *testing.T) {
	_, c, cfg := policy()
	pass := token.Verify(context.Background(), c, cfg, clockFunc(now))
	cases := []struct {
		name string
		cfg  token.Config
		run  *token.Run
		want token.State
	}{
		{"unconfigured", token.Config{}, nil, token.PreDeployment},
		{"configured, no run", cfg, nil, "DEVNET_CONFIGURED"},
		{"passed", cfg, &pass, "DEVNET_VERIFIED"},
		{"mainnet configured", token.Config{Mint: cfg.Mint, MaximumFeeAtomic: "1"}, nil, "MAINNET_CONFIGURED"},
	}
	changed := cfg
	changed.MaximumFeeAtomic = "6000000000"
	cases = append(cases, struct {
		name string
		cfg  token.Config
		run  *token.Run
		want token.State
	}{"a changed configuration starts over", changed, &pass, "DEVNET_CONFIGURED"})
	failedRun := pass
	failedRun.Outcome = token.Failed
	cases = append(cases, struct {
		name string
		cfg  token.Config
		run  *token.Run
		want token.State
	}{"failed", cfg, &failedRun, "DEVNET_CONFIGURED"})
	for _, tc := range cases {
		if got := token.StateOf(tc.cfg, tc.run); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, err := token.Transit(chain.Mainnet, token.PreDeployment, token.EventPassed); err == nil {
		t.Fatal("a registry verified itself without configuration")
	}
	if got, _ := token.Transit(chain.Mainnet, "MAINNET_CONFIGURED", token.EventPassed); got != "MAINNET_VERIFIED" {
		t.Fatalf("mainnet: %s", got)
	}
}

func TestConfigValidate(t *testing.T) {
	_, _, cfg := policy()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(c *token.Config){
		func(c *token.Config) { c.Mint = "not-base58-0OIl" },
		func(c *token.Config) { c.MaximumFeeAtomic = "" },
		func(c *token.Config) { c.MaximumFeeAtomic = "007" },
		func(c *token.Config) { c.MintAuthority = c.Mint }, // with FixedSupply
		func(c *token.Config) { c.Cluster = "moon" },
	}
	for i, mutate := range bad {
		c := cfg
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d accepted: %+v", i, c)
		}
	}
}

// memStore keeps runs in memory.
type memStore struct{ runs []token.Run }

func (m *memStore) TokenRunInsert(ctx context.Context, r token.Run) (token.Run, error) {
	r.ID = fmt.Sprintf("tvr_%d", len(m.runs)+1)
	m.runs = append(m.runs, r)
	return r, nil
}
func (m *memStore) TokenRunLatest(ctx context.Context, env access.Environment) (token.Run, bool, error) {
	for i := len(m.runs) - 1; i >= 0; i-- {
		if m.runs[i].Environment == env {
			return m.runs[i], true, nil
		}
	}
	return token.Run{}, false, nil
}
func (m *memStore) TokenRunLatestDecisive(ctx context.Context, env access.Environment, hash string) (token.Run, bool, error) {
	for i := len(m.runs) - 1; i >= 0; i-- {
		r := m.runs[i]
		if r.Environment == env && r.ConfigHash == hash && r.Outcome != token.Errored {
			return r, true, nil
		}
	}
	return token.Run{}, false, nil
}

func TestViewNeverMistakesConfiguredForVerified(t *testing.T) {
	ctx := context.Background()
	_, c, cfg := policy()
	mainCfg := cfg
	mainCfg.Cluster, mainCfg.Launched = chain.Mainnet, true
	mainChain := *c
	mainChain.genesis = chain.MainnetGenesisHash
	svc, err := token.New(token.ServiceConfig{Clock: clockFunc(now), Environments: map[access.Environment]token.Environment{
		access.Test: {Config: cfg, Chain: c}, access.Live: {Config: mainCfg, Chain: &mainChain}}})
	if err != nil {
		t.Fatal(err)
	}
	st := &memStore{}
	v, _ := svc.View(ctx, access.Test, st)
	if v.State != "DEVNET_CONFIGURED" || v.Verified() || v.MaximumFeeAtomic() != "" || v.ProductionMint() != "" ||
		v.TotalSupply().Atomic != "" || v.Network() != "" {
		t.Fatalf("configured view = %+v", v)
	}
	st.TokenRunInsert(ctx, svc.Verify(ctx, access.Test))
	v, _ = svc.View(ctx, access.Test, st)
	if !v.Verified() || v.State != "DEVNET_VERIFIED" || v.MaximumFeeAtomic() != "5000000000" || v.ProductionMint() != "" ||
		v.ProductionReady() || !v.MetadataVerified() || !v.TransferFeeConfigVerified() || v.TotalSupply().Atomic != "1000000000000000000" {
		t.Fatalf("devnet verified view = %+v", v)
	}
	// An ERROR run afterwards moves nothing.
	c.err = chain.ErrUnavailable
	st.TokenRunInsert(ctx, svc.Verify(ctx, access.Test))
	v, _ = svc.View(ctx, access.Test, st)
	if !v.Verified() || v.Latest.Outcome != token.Errored || v.Network() != "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" {
		t.Fatalf("after an ERROR run = %+v", v)
	}
	// Mainnet, verified and launched, is production ready.
	st.TokenRunInsert(ctx, svc.Verify(ctx, access.Live))
	lv, _ := svc.View(ctx, access.Live, st)
	if lv.State != "MAINNET_VERIFIED" || !lv.ProductionReady() || lv.ProductionMint() != cfg.Mint || !lv.Transfers().Enabled {
		t.Fatalf("mainnet view = %+v", lv)
	}
	if cs := lv.CirculatingSupply(); cs.Atomic != "" || cs.Reason != "methodology_not_verified" {
		t.Fatalf("circulating = %+v", cs)
	}
}

func TestFormatWhole(t *testing.T) {
	for atomic, want := range map[uint64]string{0: "0", 1: "0.000000001", 1_500_000_000: "1.5", 18_446_000_000_000_000_000: "18446000000"} {
		if got := token.FormatWhole(atomic); got != want {
			t.Errorf("FormatWhole(%d) = %s, want %s", atomic, got, want)
		}
	}
}

// clockFunc adapts a function to the Clock shape, for tests.
type clockFunc func() time.Time

// Now calls f.
func (f clockFunc) Now() time.Time { return f() }
