package x402

import (
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// Facts are what the cluster says about a payment's accounts and
// blockhash, read before CheckAccounts judges them.
type Facts struct {
	// Mint, Source and Destination are the transfer's accounts; nil when
	// the account does not exist.
	Mint, Source, Destination *chain.AccountInfo
	// BlockhashValid reports that the transaction's blockhash can still
	// land it.
	BlockhashValid bool
}

// CheckAccounts applies the rules that read the chain, a pure function
// of the payment, its requirements and the facts, in order:
//
//  1. The mint exists and is owned by the transfer's program
//     (ReasonTokenProgram), and its decimals are the transfer's
//     (ReasonDecimals).
//  2. The source exists as the authority's token account of the asset
//     under that program (ReasonSourceMissing) and holds at least the
//     amount (ReasonInsufficientFunds).
//  3. The destination exists as payTo's token account of the asset
//     (ReasonDestinationMissing): the layout admits no instruction that
//     creates it.
//  4. The blockhash can still land the transaction (ReasonBlockhash).
func CheckAccounts(req Requirements, p Payment, f Facts) *Invalid {
	if f.Mint == nil || f.Mint.Owner != p.TokenProgram {
		return invalid(ReasonTokenProgram, "the mint %s is not an account of %s", p.Mint, p.TokenProgram)
	}
	mint, err := token2022.DecodeMint(f.Mint.Data)
	if err != nil || !mint.IsInitialized {
		return invalid(ReasonTokenProgram, "the mint %s is not an initialized mint", p.Mint)
	}
	if mint.Decimals != p.Decimals {
		return invalid(ReasonDecimals, "the transfer states %d decimals, the mint has %d", p.Decimals, mint.Decimals)
	}
	src, ok := tokenAccount(f.Source, p.TokenProgram, p.Mint)
	if !ok || src.Owner != p.Authority {
		return invalid(ReasonSourceMissing, "the source %s is not the authority's account of the asset", p.Source)
	}
	if src.Amount < p.Amount {
		return invalid(ReasonInsufficientFunds, "the source holds %d, less than %d", src.Amount, p.Amount)
	}
	dst, ok := tokenAccount(f.Destination, p.TokenProgram, p.Mint)
	if !ok || dst.Owner.String() != req.PayTo {
		return invalid(ReasonDestinationMissing, "payTo's token account %s does not exist", p.Destination)
	}
	if !f.BlockhashValid {
		return invalid(ReasonBlockhash, "the blockhash %s can no longer land the transaction", p.Blockhash)
	}
	return nil
}

// tokenAccount decodes a as an initialized token account of mint owned by
// program; ok is false otherwise.
func tokenAccount(a *chain.AccountInfo, program, mint chain.Address) (token2022.Account, bool) {
	if a == nil || a.Owner != program {
		return token2022.Account{}, false
	}
	acct, err := token2022.DecodeAccount(a.Data)
	if err != nil || acct.Mint != mint || acct.State == token2022.StateUninitialized {
		return token2022.Account{}, false
	}
	return acct, true
}
