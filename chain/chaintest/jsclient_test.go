package chaintest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/token/tokentest"
)

// The JavaScript client lives in jsclient/ (package.json and its lock);
// its node_modules are installed by `npm ci --prefix chain/chaintest/jsclient`,
// which .ci/run does before the tests.
const (
	jsDir        = "jsclient"
	jsInstallCmd = "npm ci --prefix chain/chaintest/jsclient"
	// requireJSEnv makes a missing node or node_modules fail the test
	// instead of skipping it (CI sets it).
	requireJSEnv = "PLATFORM_REQUIRE_JS"
)

// jsOut is what jsclient/read.mjs prints: every amount as a decimal string,
// every absent option as null.
type jsOut struct {
	Mint struct {
		Account         jsAccount     `json:"account"`
		Decimals        uint8         `json:"decimals"`
		Supply          string        `json:"supply"`
		IsInitialized   bool          `json:"isInitialized"`
		MintAuthority   *string       `json:"mintAuthority"`
		FreezeAuthority *string       `json:"freezeAuthority"`
		Extensions      []jsExtension `json:"extensions"`
	} `json:"mint"`
	Token struct {
		Account         jsAccount     `json:"account"`
		Mint            string        `json:"mint"`
		Owner           string        `json:"owner"`
		Amount          string        `json:"amount"`
		State           uint8         `json:"state"`
		Delegate        *string       `json:"delegate"`
		IsNative        *string       `json:"isNative"`
		DelegatedAmount string        `json:"delegatedAmount"`
		CloseAuthority  *string       `json:"closeAuthority"`
		Extensions      []jsExtension `json:"extensions"`
	} `json:"token"`
	MultipleAccountsAgree bool `json:"multipleAccountsAgree"`
	TokenAccountsByOwner  []struct {
		Pubkey string `json:"pubkey"`
		Owner  string `json:"owner"`
		Mint   string `json:"mint"`
		Amount string `json:"amount"`
	} `json:"tokenAccountsByOwner"`
	Balance struct {
		ContextSlot    string  `json:"contextSlot"`
		Amount         string  `json:"amount"`
		Decimals       uint8   `json:"decimals"`
		UIAmount       float64 `json:"uiAmount"`
		UIAmountString string  `json:"uiAmountString"`
	} `json:"balance"`
	EpochInfo struct {
		Epoch        string `json:"epoch"`
		SlotIndex    string `json:"slotIndex"`
		SlotsInEpoch string `json:"slotsInEpoch"`
		AbsoluteSlot string `json:"absoluteSlot"`
		BlockHeight  string `json:"blockHeight"`
	} `json:"epochInfo"`
	GenesisHash string `json:"genesisHash"`
}

type jsAccount struct {
	Address        string `json:"address"`
	ProgramAddress string `json:"programAddress"`
	Lamports       string `json:"lamports"`
	Space          string `json:"space"`
	Executable     bool   `json:"executable"`
}

// jsExtension is one decoded extension; only the fields of its kind are set.
type jsExtension struct {
	Kind string `json:"kind"`
	// TransferFeeConfig
	TransferFeeConfigAuthority string `json:"transferFeeConfigAuthority,omitempty"`
	WithdrawWithheldAuthority  string `json:"withdrawWithheldAuthority,omitempty"`
	OlderTransferFee           *jsFee `json:"olderTransferFee,omitempty"`
	NewerTransferFee           *jsFee `json:"newerTransferFee,omitempty"`
	// TransferFeeConfig and TransferFeeAmount
	WithheldAmount string `json:"withheldAmount,omitempty"`
	// MetadataPointer
	Authority       *string `json:"authority,omitempty"`
	MetadataAddress *string `json:"metadataAddress,omitempty"`
	// TokenMetadata
	UpdateAuthority    *string           `json:"updateAuthority,omitempty"`
	Mint               string            `json:"mint,omitempty"`
	Name               string            `json:"name,omitempty"`
	Symbol             string            `json:"symbol,omitempty"`
	URI                string            `json:"uri,omitempty"`
	AdditionalMetadata map[string]string `json:"additionalMetadata,omitempty"`
}

type jsFee struct {
	Epoch                  string `json:"epoch"`
	MaximumFee             string `json:"maximumFee"`
	TransferFeeBasisPoints uint16 `json:"transferFeeBasisPoints"`
}

// TestJavaScriptSDKReadsTheCluster reads a deployed mint and the treasury's
// token account with @solana/kit and @solana-program/token-2022 (pinned in
// jsclient/package-lock.json) over the cluster's HTTP endpoint, and checks
// that the SDK decodes exactly what the Go side wrote: the standard client
// accepts the simulator's envelopes, encodings and account bytes.
func TestJavaScriptSDKReadsTheCluster(t *testing.T) {
	node := requireJS(t)
	ctx := context.Background()

	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	c.AdvanceSlots(3)
	d, err := tokentest.Deploy(ctx, c)
	if err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	// Into epoch 1 (32 slots an epoch). @solana/kit sends commitment
	// "confirmed" when a call names none (createSolanaRpc's default), so the
	// Go side below reads at Confirmed too.
	c.AdvanceSlots(45)
	ata := chaintest.AssociatedTokenAddress(d.Treasury, d.Mint, token2022.ProgramID())

	got := runReadJS(t, node, c.URL(), d.Mint.String(), ata.String())

	// What the Go side knows, from the same accounts read in process.
	mintInfo, err := c.GetAccountInfo(ctx, d.Mint, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetAccountInfo(mint): %v", err)
	}
	mint, err := token2022.DecodeMint(mintInfo.Data)
	if err != nil {
		t.Fatalf("DecodeMint: %v", err)
	}
	tokenInfo, err := c.GetAccountInfo(ctx, ata, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetAccountInfo(ata): %v", err)
	}
	acct, err := token2022.DecodeAccount(tokenInfo.Data)
	if err != nil {
		t.Fatalf("DecodeAccount: %v", err)
	}
	epoch, err := c.GetEpochInfo(ctx, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetEpochInfo: %v", err)
	}
	bal, err := c.GetTokenAccountBalance(ctx, ata, chain.Confirmed)
	if err != nil {
		t.Fatalf("GetTokenAccountBalance: %v", err)
	}

	var want jsOut
	want.Mint.Account = jsWantAccount(mintInfo)
	want.Mint.Decimals = mint.Decimals
	want.Mint.Supply = fmt.Sprint(mint.Supply)
	want.Mint.IsInitialized = mint.IsInitialized
	want.Mint.MintAuthority = jsOptKey(mint.MintAuthority)
	want.Mint.FreezeAuthority = jsOptKey(mint.FreezeAuthority)
	want.Mint.Extensions = jsWantExtensions(t, mint.Extensions)
	want.Token.Account = jsWantAccount(tokenInfo)
	want.Token.Mint = acct.Mint.String()
	want.Token.Owner = acct.Owner.String()
	want.Token.Amount = fmt.Sprint(acct.Amount)
	want.Token.State = uint8(acct.State)
	want.Token.Delegate = jsOptKey(acct.Delegate)
	if acct.IsNative != nil {
		s := fmt.Sprint(*acct.IsNative)
		want.Token.IsNative = &s
	}
	want.Token.DelegatedAmount = fmt.Sprint(acct.DelegatedAmount)
	want.Token.CloseAuthority = jsOptKey(acct.CloseAuthority)
	want.Token.Extensions = jsWantExtensions(t, acct.Extensions)
	want.MultipleAccountsAgree = true
	want.TokenAccountsByOwner = append(want.TokenAccountsByOwner, struct {
		Pubkey string `json:"pubkey"`
		Owner  string `json:"owner"`
		Mint   string `json:"mint"`
		Amount string `json:"amount"`
	}{ata.String(), token2022.ProgramID().String(), d.Mint.String(), fmt.Sprint(tokentest.Supply)})
	want.Balance.ContextSlot = fmt.Sprint(bal.Slot)
	want.Balance.Amount = fmt.Sprint(bal.Amount)
	want.Balance.Decimals = bal.Decimals
	want.Balance.UIAmount = float64(bal.Amount) / 1e9
	want.Balance.UIAmountString = jsUIAmountString(bal.Amount, bal.Decimals)
	want.EpochInfo.Epoch = fmt.Sprint(epoch.Epoch)
	want.EpochInfo.SlotIndex = fmt.Sprint(epoch.SlotIndex)
	want.EpochInfo.SlotsInEpoch = fmt.Sprint(epoch.SlotsInEpoch)
	want.EpochInfo.AbsoluteSlot = fmt.Sprint(epoch.AbsoluteSlot)
	want.EpochInfo.BlockHeight = fmt.Sprint(epoch.BlockHeight)
	want.GenesisHash = c.GenesisHash()

	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the JavaScript SDK read (-Go side +read.mjs):\n%s", diff)
	}

	// And the deployment's constants, independently of the Go decoder.
	s := func(k chain.Address) string { return k.String() }
	t22 := s(token2022.ProgramID())
	fee := &jsFee{Epoch: "0", MaximumFee: "5000000000", TransferFeeBasisPoints: 200}
	wantMint := []jsExtension{
		{Kind: "TransferFeeConfig", TransferFeeConfigAuthority: s(d.FeeAuthority), WithdrawWithheldAuthority: s(d.WithdrawAuthority),
			WithheldAmount: "0", OlderTransferFee: fee, NewerTransferFee: fee},
		{Kind: "MetadataPointer", Authority: jsPtr(s(d.MetadataAuthority)), MetadataAddress: jsPtr(s(d.Mint))},
		{Kind: "TokenMetadata", UpdateAuthority: jsPtr(s(d.MetadataAuthority)), Mint: s(d.Mint), Name: "Platform Token", Symbol: "TOKEN",
			URI: "https://platform.example/token.json"},
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"mint owner program", got.Mint.Account.ProgramAddress, t22},
		{"mint decimals", got.Mint.Decimals, uint8(9)},
		{"mint supply", got.Mint.Supply, "10000000000000000000"},
		{"mint authority (revoked)", got.Mint.MintAuthority, (*string)(nil)},
		{"freeze authority", got.Mint.FreezeAuthority, (*string)(nil)},
		{"token owner program", got.Token.Account.ProgramAddress, t22},
		{"token mint", got.Token.Mint, s(d.Mint)},
		{"token owner", got.Token.Owner, s(d.Treasury)},
		{"token amount", got.Token.Amount, "10000000000000000000"},
		{"token state (initialized)", got.Token.State, uint8(1)},
		{"balance amount", got.Balance.Amount, "10000000000000000000"},
		{"balance decimals", got.Balance.Decimals, uint8(9)},
		{"balance uiAmountString", got.Balance.UIAmountString, "10000000000"},
		{"balance uiAmount", got.Balance.UIAmount, 1e10},
		{"epoch", got.EpochInfo.Epoch, "1"},
		{"genesis hash", got.GenesisHash, c.GenesisHash()},
	}
	for _, ch := range checks {
		if !cmp.Equal(ch.got, ch.want) {
			t.Errorf("%s: read.mjs %v, want %v", ch.what, jsShow(ch.got), jsShow(ch.want))
		}
	}
	if diff := cmp.Diff(wantMint, got.Mint.Extensions, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("mint extensions against the deployment (-deployment +read.mjs):\n%s", diff)
	}
	wantToken := []jsExtension{{Kind: "ImmutableOwner"}, {Kind: "TransferFeeAmount", WithheldAmount: "0"}}
	if diff := cmp.Diff(wantToken, got.Token.Extensions, cmpopts.EquateEmpty(),
		cmpopts.SortSlices(func(a, b jsExtension) bool { return a.Kind < b.Kind })); diff != "" {
		t.Errorf("token account extensions (-want +read.mjs):\n%s", diff)
	}
	for _, known := range []string{chain.MainnetGenesisHash, chain.DevnetGenesisHash, chain.TestnetGenesisHash} {
		if got.GenesisHash == known {
			t.Errorf("genesis hash %s is a public cluster's", known)
		}
	}
}

// requireJS returns the node binary, or skips the test (fails it under
// PLATFORM_REQUIRE_JS=1) when node or the client's node_modules is missing.
func requireJS(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := fmt.Sprintf("%s; install the client with: %s (from the module root)", what, jsInstallCmd)
		if os.Getenv(requireJSEnv) == "1" {
			t.Fatalf("%s=1 and %s", requireJSEnv, msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js >= 20.18, which also brings npm) is not on PATH")
	}
	for _, pkg := range []string{"@solana/kit", "@solana-program/token-2022"} {
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			missing(fmt.Sprintf("%s is not installed in %s/node_modules", pkg, filepath.Join("chain", "chaintest", jsDir)))
		}
	}
	return node
}

// runReadJS runs read.mjs and decodes its output, strictly.
func runReadJS(t *testing.T, node, url, mint, token string) jsOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "read.mjs", url, mint, token)
	cmd.Dir = jsDir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("node read.mjs: %v (after %v)\nstderr:\n%s\nstdout:\n%s", err, time.Since(start), stderr.String(), stdout.String())
	}
	t.Logf("node read.mjs took %v; it printed:\n%s", time.Since(start).Round(time.Millisecond), stdout.String())
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("read.mjs stderr:\n%s", s)
	}
	var out jsOut
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("read.mjs output: %v\n%s", err, stdout.String())
	}
	return out
}

func jsWantAccount(a chain.AccountInfo) jsAccount {
	return jsAccount{Address: a.Address.String(), ProgramAddress: a.Owner.String(), Lamports: fmt.Sprint(a.Lamports),
		Space: fmt.Sprint(len(a.Data)), Executable: a.Executable}
}

// jsWantExtensions renders Go-decoded extensions the way read.mjs does.
func jsWantExtensions(t *testing.T, exts []token2022.Extension) []jsExtension {
	t.Helper()
	opt := func(k token2022.PublicKey) *string {
		if k.IsZero() {
			return nil
		}
		return jsPtr(k.String())
	}
	fee := func(f token2022.TransferFee) *jsFee {
		return &jsFee{Epoch: fmt.Sprint(f.Epoch), MaximumFee: fmt.Sprint(f.MaximumFee), TransferFeeBasisPoints: f.BasisPoints}
	}
	var out []jsExtension
	for _, e := range exts {
		switch e := e.(type) {
		case token2022.TransferFeeConfig:
			out = append(out, jsExtension{Kind: "TransferFeeConfig", TransferFeeConfigAuthority: e.ConfigAuthority.String(),
				WithdrawWithheldAuthority: e.WithdrawWithheldAuthority.String(), WithheldAmount: fmt.Sprint(e.WithheldAmount),
				OlderTransferFee: fee(e.Older), NewerTransferFee: fee(e.Newer)})
		case token2022.TransferFeeAmount:
			out = append(out, jsExtension{Kind: "TransferFeeAmount", WithheldAmount: fmt.Sprint(e.Withheld)})
		case token2022.MetadataPointer:
			out = append(out, jsExtension{Kind: "MetadataPointer", Authority: opt(e.Authority), MetadataAddress: opt(e.MetadataAddress)})
		case token2022.TokenMetadata:
			md := map[string]string{}
			for _, f := range e.AdditionalMetadata {
				md[f.Key] = f.Value
			}
			out = append(out, jsExtension{Kind: "TokenMetadata", UpdateAuthority: opt(e.UpdateAuthority), Mint: e.Mint.String(),
				Name: e.Name, Symbol: e.Symbol, URI: e.URI, AdditionalMetadata: md})
		case token2022.RawExtension:
			if e.ExtensionType() == token2022.ExtensionImmutableOwner {
				out = append(out, jsExtension{Kind: "ImmutableOwner"})
				continue
			}
			t.Fatalf("the Go decoder kept extension %d raw; teach jsWantExtensions its JavaScript rendering", e.ExtensionType())
		default:
			t.Fatalf("extension %T has no JavaScript rendering here", e)
		}
	}
	return out
}

// jsUIAmountString is Agave's trimmed decimal rendering of an amount.
func jsUIAmountString(amount uint64, decimals uint8) string {
	s := fmt.Sprint(amount)
	if decimals == 0 {
		return s
	}
	d := int(decimals)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	whole, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

func jsOptKey(k *token2022.PublicKey) *string {
	if k == nil {
		return nil
	}
	return jsPtr(k.String())
}

func jsPtr[T any](v T) *T { return &v }

// jsShow prints a pointer's target, for messages.
func jsShow(v any) any {
	if p, ok := v.(*string); ok {
		if p == nil {
			return "null"
		}
		return *p
	}
	return v
}
