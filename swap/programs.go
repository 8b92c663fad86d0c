package swap

import (
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// Program ids the verifier knows (chain.md §4, swap.md §1.8).
const (
	computeBudgetProgram = "ComputeBudget111111111111111111111111111111"
	systemProgram        = "11111111111111111111111111111111"
	tokenProgram         = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	memoProgram          = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
	memoV1Program        = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"
	jupiterV6Program     = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"
	nativeMint           = "So11111111111111111111111111111111111111112"
)

// address parses one of the constants above, which are valid base58 keys.
func address(s string) chain.Address {
	k, _ := token2022.ParsePublicKey(s)
	return k
}

// NativeMint returns the wrapped native coin's mint,
// So11111111111111111111111111111111111111112. A swap leg in this mint is
// measured in the wallet's lamports and wrapped balance together (Verify).
func NativeMint() chain.Address { return address(nativeMint) }

// JupiterV6ProgramID returns Jupiter's aggregator v6 program,
// JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4, the swap program of its
// quote-then-swap API: the usual entry of VerifyParams.SwapPrograms.
func JupiterV6ProgramID() chain.Address { return address(jupiterV6Program) }

// BasePrograms returns the programs a swap transaction may call at top
// level beside its swap programs: Compute Budget, System, SPL Token,
// Token-2022, Associated Token Account, and Memo (current and v1). Inner
// (CPI) programs are not checked: the swap program chooses them.
func BasePrograms() []chain.Address {
	return []chain.Address{address(computeBudgetProgram), address(systemProgram), address(tokenProgram),
		token2022.ProgramID(), token2022.AssociatedTokenProgramID(), address(memoProgram), address(memoV1Program)}
}
