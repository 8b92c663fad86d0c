package swap

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// PolicyTokens is the id of an environment's trusted-token registry, an
// immutable policy (package policy): each publication of another list is a
// new version, and that version is the registryVersion every quote and
// intent records.
const PolicyTokens = "swap.tokens"

// MaxTokens bounds a registry's entries.
const MaxTokens = 100

// splTokenProgram is the SPL Token program id (chain.md §4).
const splTokenProgram = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"

// SPLTokenProgramID returns the SPL Token program id.
func SPLTokenProgramID() chain.Address {
	k, err := token2022.ParsePublicKey(splTokenProgram)
	if err != nil {
		panic("swap: the SPL Token program id does not parse: " + err.Error())
	}
	return k
}

// Registry is the content of the swap.tokens policy: the tokens an
// environment may swap. A token's identity is its network (the registry's,
// which is the environment's cluster), mint, token program and decimals,
// and the registry version that listed it; symbol, name and logo are
// display data only and never decide anything.
type Registry struct {
	// Tokens are the trusted tokens, at most MaxTokens, each mint once.
	Tokens []Token `json:"tokens"`
}

// Token is one registry entry.
type Token struct {
	// Mint is the mint address (base58).
	Mint string `json:"mint"`
	// TokenProgram is the program that owns the mint: the SPL Token or the
	// Token-2022 program (base58).
	TokenProgram string `json:"tokenProgram"`
	// Decimals are the mint's decimals as the registry states them; the
	// mint account must say the same.
	Decimals uint8 `json:"decimals"`
	// Symbol, Name and LogoURI are display data.
	Symbol  string `json:"symbol"`
	Name    string `json:"name"`
	LogoURI string `json:"logoUri,omitempty"`
}

// Validate checks the registry's form: addresses, programs, decimals,
// display lengths and uniqueness. Errors are INVALID_INPUT naming the
// field.
func (r Registry) Validate() error {
	const op = "swap.Registry.Validate"
	if len(r.Tokens) > MaxTokens {
		return fault.Invalid(op, "tokens", fmt.Sprintf("A registry lists at most %d tokens.", MaxTokens))
	}
	seen := map[string]bool{}
	for i, t := range r.Tokens {
		field := func(f string) string { return fmt.Sprintf("tokens[%d].%s", i, f) }
		mint, err := token2022.ParsePublicKey(t.Mint)
		if err != nil || mint.String() != t.Mint {
			return fault.Invalid(op, field("mint"), "A mint is a base58 address.")
		}
		if seen[t.Mint] {
			return fault.Invalid(op, field("mint"), "A mint is listed once.")
		}
		seen[t.Mint] = true
		if t.TokenProgram != splTokenProgram && t.TokenProgram != token2022.ProgramID().String() {
			return fault.Invalid(op, field("tokenProgram"), "The token program is the SPL Token or the Token-2022 program.")
		}
		if t.Decimals > 18 {
			return fault.Invalid(op, field("decimals"), "Decimals are at most 18.")
		}
		if n := utf8.RuneCountInString(t.Symbol); n == 0 || n > 16 || strings.TrimSpace(t.Symbol) != t.Symbol {
			return fault.Invalid(op, field("symbol"), "A symbol has 1 to 16 characters and no surrounding spaces.")
		}
		if utf8.RuneCountInString(t.Name) > 64 {
			return fault.Invalid(op, field("name"), "A name has at most 64 characters.")
		}
		if t.LogoURI != "" && (len(t.LogoURI) > 512 || !strings.HasPrefix(t.LogoURI, "https://")) {
			return fault.Invalid(op, field("logoUri"), "A logo is an https URL of at most 512 bytes.")
		}
	}
	return nil
}

// Find returns the entry of mint.
func (r Registry) Find(mint string) (Token, bool) {
	for _, t := range r.Tokens {
		if t.Mint == mint {
			return t, true
		}
	}
	return Token{}, false
}

// MintStatus is the outcome of reading one registry entry's mint.
type MintStatus string

// The mint statuses.
const (
	// MintMatched: the mint account exists on the environment's cluster,
	// is owned by the entry's token program, is initialized, has the
	// entry's decimals and no extension that makes it unsafe to route.
	MintMatched MintStatus = "MATCHED"
	// MintMismatched: the mint was read and differs from the entry (see
	// the reason); the entry is not executable.
	MintMismatched MintStatus = "MISMATCHED"
	// MintUnread: the cluster could not be read; evidence of nothing.
	MintUnread MintStatus = "UNREAD"
)

// Mismatch reasons of MintCheck.Reason.
const (
	ReasonMintMissing       = "mint_missing"
	ReasonOwnerMismatch     = "token_program_mismatch"
	ReasonNotAMint          = "not_a_mint"
	ReasonNotInitialized    = "mint_not_initialized"
	ReasonDecimalsMismatch  = "decimals_mismatch"
	ReasonUnsafeExtension   = "unsafe_extension"
	ReasonClusterUnreadable = "cluster_unreadable"
)

// MintCheck is what one reading of an entry's mint showed.
type MintCheck struct {
	// Mint is the entry's mint.
	Mint string `json:"mint"`
	// Status is MATCHED, MISMATCHED or UNREAD.
	Status MintStatus `json:"status"`
	// Reason says why an entry is not MATCHED ("" when it is).
	Reason string `json:"reason,omitempty"`
	// Detail adds what was found (the owner, the decimals, the
	// extension's name).
	Detail string `json:"detail,omitempty"`
	// TokenProgram and Decimals are what the mint account showed (zero
	// when unread).
	TokenProgram string `json:"tokenProgram,omitempty"`
	Decimals     uint8  `json:"decimals"`
	// TransferFeeBps is the mint's current Token-2022 transfer fee rate
	// at the reading's epoch (nil for a mint without one).
	TransferFeeBps *uint16 `json:"transferFeeBps,omitempty"`
	// Freezable and Mintable report a set freeze or mint authority.
	Freezable bool `json:"freezable"`
	Mintable  bool `json:"mintable"`
	// Slot is the context slot of the reading (zero when unread).
	Slot uint64 `json:"slot"`
}

// safeExtensions are the Token-2022 mint extensions a routed mint may
// carry: a transfer fee (which the platform computes, as the chain payment
// path does), a close authority, and metadata. Every other type, known or
// not, refuses the mint: a permanent delegate, a transfer hook, a default
// frozen state, non-transferability, confidential transfers, interest or
// scaled amounts let someone other than the holder move, freeze, hook or
// stop transfers, or change what an amount means (swap.md §4).
var safeExtensions = map[token2022.ExtensionType]bool{
	token2022.ExtensionTransferFeeConfig:  true,
	token2022.ExtensionMintCloseAuthority: true,
	token2022.ExtensionMetadataPointer:    true,
	token2022.ExtensionTokenMetadata:      true,
}

// CheckMint compares one reading of t's mint account with t. missing
// means the cluster answered that no account exists at the mint.
func CheckMint(t Token, acct chain.AccountInfo, missing bool, epoch uint64) MintCheck {
	c := MintCheck{Mint: t.Mint, Status: MintMismatched, Slot: acct.Slot}
	if missing {
		c.Reason = ReasonMintMissing
		return c
	}
	c.TokenProgram = acct.Owner.String()
	if c.TokenProgram != t.TokenProgram {
		c.Reason, c.Detail = ReasonOwnerMismatch, "owner "+c.TokenProgram
		return c
	}
	m, err := token2022.DecodeMint(acct.Data)
	if err != nil {
		c.Reason, c.Detail = ReasonNotAMint, err.Error()
		return c
	}
	c.Decimals = m.Decimals
	c.Freezable, c.Mintable = m.FreezeAuthority != nil, m.MintAuthority != nil
	if fc, ok := m.TransferFeeConfig(); ok {
		bps := fc.EpochFee(epoch).BasisPoints
		c.TransferFeeBps = &bps
	}
	switch {
	case !m.IsInitialized:
		c.Reason = ReasonNotInitialized
		return c
	case m.Decimals != t.Decimals:
		c.Reason, c.Detail = ReasonDecimalsMismatch, fmt.Sprintf("the mint has %d decimals", m.Decimals)
		return c
	}
	if m.Extensions != nil && c.TokenProgram != token2022.ProgramID().String() {
		c.Reason, c.Detail = ReasonNotAMint, "extensions on an SPL Token mint"
		return c
	}
	for _, e := range m.Extensions {
		tp := e.ExtensionType()
		if !safeExtensions[tp] {
			c.Reason, c.Detail = ReasonUnsafeExtension, tp.String()
			return c
		}
	}
	c.Status = MintMatched
	return c
}

// RegistryRun is one verification of a registry version against the
// environment's cluster: every entry's mint read in one run.
type RegistryRun struct {
	// ID identifies the run ("srr_" prefix).
	ID string `json:"id"`
	// Environment is the registry's environment.
	Environment string `json:"environment"`
	// RegistryVersion and RegistryHash name the policy version checked.
	RegistryVersion int    `json:"registryVersion"`
	RegistryHash    string `json:"registryHash"`
	// Network is the CAIP-2 id of the cluster read ("" when unreadable).
	Network string `json:"network"`
	// Checks are the entries' readings, in registry order.
	Checks []MintCheck `json:"checks"`
	// Unreadable is set when the cluster could not be read at all: the
	// run is evidence of nothing.
	Unreadable bool `json:"unreadable"`
	// Error is the reading's failure ("" when the cluster answered).
	Error string `json:"error,omitempty"`
	// CheckedAt is when the run ended.
	CheckedAt time.Time `json:"checkedAt"`
}

// Check returns the run's reading of mint.
func (r RegistryRun) Check(mint string) (MintCheck, bool) {
	for _, c := range r.Checks {
		if c.Mint == mint {
			return c, true
		}
	}
	return MintCheck{}, false
}
