package swap

import (
	"strings"
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

func testKey(b byte) chain.Address {
	var k chain.Address
	for i := range k {
		k[i] = b
	}
	return k
}

func validRegistry() Registry {
	return Registry{Tokens: []Token{
		{Mint: testKey(1).String(), TokenProgram: token2022.ProgramID().String(), Decimals: 9, Symbol: "CMT", Name: "Creator Music Token"},
		{Mint: testKey(2).String(), TokenProgram: SPLTokenProgramID().String(), Decimals: 6, Symbol: "USDT", Name: "Test Dollar",
			LogoURI: "https://example.com/usd.png"},
	}}
}

func TestRegistryValidate(t *testing.T) {
	if err := validRegistry().Validate(); err != nil {
		t.Fatalf("valid registry refused: %v", err)
	}
	cases := []struct {
		name  string
		edit  func(r *Registry)
		field string
	}{
		{"bad mint", func(r *Registry) { r.Tokens[0].Mint = "not-base58!" }, "tokens[0].mint"},
		{"mint twice", func(r *Registry) { r.Tokens[1].Mint = r.Tokens[0].Mint }, "tokens[1].mint"},
		{"unknown program", func(r *Registry) { r.Tokens[0].TokenProgram = testKey(9).String() }, "tokens[0].tokenProgram"},
		{"decimals", func(r *Registry) { r.Tokens[1].Decimals = 19 }, "tokens[1].decimals"},
		{"empty symbol", func(r *Registry) { r.Tokens[0].Symbol = "" }, "tokens[0].symbol"},
		{"padded symbol", func(r *Registry) { r.Tokens[0].Symbol = " CMT" }, "tokens[0].symbol"},
		{"long name", func(r *Registry) { r.Tokens[0].Name = strings.Repeat("n", 65) }, "tokens[0].name"},
		{"http logo", func(r *Registry) { r.Tokens[1].LogoURI = "http://example.com/x.png" }, "tokens[1].logoUri"},
		{"too many", func(r *Registry) {
			for i := range MaxTokens {
				k := testKey(byte(i + 10))
				r.Tokens = append(r.Tokens, Token{Mint: k.String(), TokenProgram: splTokenProgram, Symbol: "T"})
			}
		}, "tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := validRegistry()
			c.edit(&r)
			err := r.Validate()
			if fault.CodeOf(err) != fault.InvalidInput {
				t.Fatalf("Validate = %v, want INVALID_INPUT", err)
			}
			if got := fieldOf(err); got != c.field {
				t.Fatalf("field = %v, want %s", got, c.field)
			}
		})
	}
}

func mintAccount(t *testing.T, owner chain.Address, m token2022.Mint) chain.AccountInfo {
	t.Helper()
	return chain.AccountInfo{Owner: owner, Data: token2022.EncodeMint(m), Slot: 77}
}

func TestCheckMint(t *testing.T) {
	r := validRegistry()
	t22, spl := r.Tokens[0], r.Tokens[1]
	auth := testKey(5)
	fee := token2022.TransferFeeConfig{Older: token2022.TransferFee{BasisPoints: 100, MaximumFee: 1 << 40},
		Newer: token2022.TransferFee{Epoch: 3, BasisPoints: 200, MaximumFee: 1 << 40}}
	feeMint := token2022.Mint{Decimals: 9, IsInitialized: true, Extensions: []token2022.Extension{fee}}
	cases := []struct {
		name     string
		tok      Token
		acct     chain.AccountInfo
		missing  bool
		status   MintStatus
		reason   string
		feeBps   int // -1: none
		freezing bool
	}{
		{"token-2022 fee mint matches", t22, mintAccount(t, token2022.ProgramID(), feeMint), false, MintMatched, "", 200, false},
		{"spl mint matches", spl, mintAccount(t, SPLTokenProgramID(), token2022.Mint{Decimals: 6, IsInitialized: true, FreezeAuthority: &auth}), false, MintMatched, "", -1, true},
		{"missing", spl, chain.AccountInfo{}, true, MintMismatched, ReasonMintMissing, -1, false},
		{"other owner", spl, mintAccount(t, token2022.ProgramID(), token2022.Mint{Decimals: 6, IsInitialized: true}), false, MintMismatched, ReasonOwnerMismatch, -1, false},
		{"not a mint", spl, chain.AccountInfo{Owner: SPLTokenProgramID(), Data: []byte{1, 2, 3}}, false, MintMismatched, ReasonNotAMint, -1, false},
		{"uninitialized", spl, mintAccount(t, SPLTokenProgramID(), token2022.Mint{Decimals: 6}), false, MintMismatched, ReasonNotInitialized, -1, false},
		{"decimals", spl, mintAccount(t, SPLTokenProgramID(), token2022.Mint{Decimals: 9, IsInitialized: true}), false, MintMismatched, ReasonDecimalsMismatch, -1, false},
		{"permanent delegate", t22, mintAccount(t, token2022.ProgramID(), token2022.Mint{Decimals: 9, IsInitialized: true,
			Extensions: []token2022.Extension{token2022.RawExtension{Type: token2022.ExtensionPermanentDelegate, Value: make([]byte, 32)}}}),
			false, MintMismatched, ReasonUnsafeExtension, -1, false},
		{"unknown extension", t22, mintAccount(t, token2022.ProgramID(), token2022.Mint{Decimals: 9, IsInitialized: true,
			Extensions: []token2022.Extension{token2022.RawExtension{Type: 200, Value: []byte{1}}}}),
			false, MintMismatched, ReasonUnsafeExtension, -1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CheckMint(c.tok, c.acct, c.missing, 4)
			if got.Status != c.status || got.Reason != c.reason {
				t.Fatalf("CheckMint = %s/%s (%s), want %s/%s", got.Status, got.Reason, got.Detail, c.status, c.reason)
			}
			if c.status == MintMatched && got.Slot != 77 {
				t.Fatalf("slot = %d, want the reading's 77", got.Slot)
			}
			switch {
			case c.feeBps < 0 && got.TransferFeeBps != nil:
				t.Fatalf("transfer fee %d reported for a mint without one", *got.TransferFeeBps)
			case c.feeBps >= 0 && (got.TransferFeeBps == nil || int(*got.TransferFeeBps) != c.feeBps):
				t.Fatalf("transfer fee = %v, want %d bps at epoch 4", got.TransferFeeBps, c.feeBps)
			}
			if got.Freezable != c.freezing {
				t.Fatalf("freezable = %v, want %v", got.Freezable, c.freezing)
			}
		})
	}
}

// fieldOf returns the details.field of an INVALID_INPUT error ("" for any
// other error).
func fieldOf(err error) any {
	if fault.CodeOf(err) != fault.InvalidInput {
		return ""
	}
	_, _, details := fault.Public(err)
	return details["field"]
}
