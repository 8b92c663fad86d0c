package intent

import (
	"strconv"
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
)

// Verify checks a landed transaction's effects against the intent, from
// the chain's record alone (never from the caller), and returns every
// mismatch; none means the payment is the intent's. network is the CAIP-2
// id of the cluster the transaction was read from.
//
// It checks: the cluster; the signature; success; the fee payer
// (AccountKeys[0]) is the payer and signed; the last instruction is a
// Token-2022 TransferChecked or TransferCheckedWithFee of the gross
// amount with the frozen decimals (and fee, when stated) from the payer's
// source account, of the mint, to the treasury's account, authorized by
// the payer, with the intent's reference as the only account after the
// four required ones; the memo instruction immediately before it carries
// the intent id; and from the token balances, that the destination is
// owned by the treasury, holds the mint, and grew by exactly the expected
// net (a missing pre-balance counts as zero).
//
// An intent with Legs is checked leg by leg instead (verifyLegs), each
// mismatch naming its leg ("legs[1].net").
//
// A transaction the platform relayed or the payer's wallet broadcast
// (origins signed_transaction and signature) must carry the memo; a
// wallet-built Solana Pay transfer found by reference may omit it (the
// reference binds it), but a memo it does carry must match.
func Verify(it Intent, network string, tx chain.Transaction) []Mismatch {
	var out []Mismatch
	miss := func(field, expected, actual string) {
		out = append(out, Mismatch{Field: field, Expected: expected, Actual: actual})
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	if network != it.Network {
		miss("network", it.Network, network)
	}
	if tx.Signature != "" && it.Signature != "" && tx.Signature != it.Signature {
		miss("signature", it.Signature, tx.Signature)
	}
	if tx.Err != "" {
		miss("success", "ok", tx.Err)
	}
	payerIdx := -1
	for i, k := range tx.AccountKeys {
		if k == it.Payer {
			payerIdx = i
			break
		}
	}
	switch {
	case len(tx.AccountKeys) == 0:
		miss("payer", it.Payer.String(), "")
	case tx.AccountKeys[0] != it.Payer:
		miss("payer", it.Payer.String(), tx.AccountKeys[0].String())
	}
	if payerIdx < 0 || payerIdx >= tx.NumSigners {
		miss("signer", it.Payer.String(), "not a signer")
	}

	if len(it.Legs) > 0 {
		return append(out, verifyLegs(it, tx)...)
	}
	n := len(tx.Instructions)
	if n == 0 {
		miss("instruction", "token transfer last", "no instructions")
		return out
	}
	ix := tx.Instructions[n-1]
	if ix.ProgramID != it.TokenProgram {
		miss("program", it.TokenProgram.String(), ix.ProgramID.String())
	}
	tk, ok := message.DecodeTransfer(ix.Data)
	if !ok {
		miss("instruction", "TransferChecked or TransferCheckedWithFee", "other")
	} else {
		if tk.Amount != it.GrossAtomic {
			miss("amount", u(it.GrossAtomic), u(tk.Amount))
		}
		if tk.Decimals != it.Decimals {
			miss("decimals", u(uint64(it.Decimals)), u(uint64(tk.Decimals)))
		}
		if tk.WithFee && tk.Fee != it.FeeAtomic {
			miss("fee", u(it.FeeAtomic), u(tk.Fee))
		}
	}
	acct := func(i int) string {
		if i < len(ix.Accounts) {
			return ix.Accounts[i].String()
		}
		return ""
	}
	for i, want := range []struct {
		field string
		key   chain.Address
	}{{"source", it.Source}, {"mint", it.Mint}, {"destination", it.Destination}, {"owner", it.Payer}} {
		if got := acct(i); got != want.key.String() {
			miss(want.field, want.key.String(), got)
		}
	}
	if len(ix.Accounts) != 5 || ix.Accounts[4] != it.Reference {
		got := ""
		if len(ix.Accounts) > 4 {
			for i, a := range ix.Accounts[4:] {
				if i > 0 {
					got += ","
				}
				got += a.String()
			}
		}
		miss("reference", it.Reference.String(), got)
	}

	memoPresent := n >= 2 && isMemoProgram(tx.Instructions[n-2].ProgramID)
	switch {
	case memoPresent && string(tx.Instructions[n-2].Data) != it.Memo:
		miss("memo", it.Memo, string(tx.Instructions[n-2].Data))
	case !memoPresent && it.Origin != OriginReference:
		miss("memo", it.Memo, "")
	}

	var pre, post *chain.TokenBalance
	for i := range tx.PreTokenBalances {
		if balanceAccount(tx, tx.PreTokenBalances[i]) == it.Destination {
			pre = &tx.PreTokenBalances[i]
		}
	}
	for i := range tx.PostTokenBalances {
		if balanceAccount(tx, tx.PostTokenBalances[i]) == it.Destination {
			post = &tx.PostTokenBalances[i]
		}
	}
	if post == nil {
		miss("recipientBalance", "present", "missing")
		return out
	}
	if post.Owner != it.Recipient {
		miss("recipient", it.Recipient.String(), post.Owner.String())
	}
	if post.Mint != it.Mint {
		miss("recipientMint", it.Mint.String(), post.Mint.String())
	}
	var before uint64
	if pre != nil {
		before = pre.Amount
	}
	if post.Amount < before {
		miss("net", u(it.NetAtomic), "-"+u(before-post.Amount))
	} else if got := post.Amount - before; got != it.NetAtomic {
		miss("net", u(it.NetAtomic), u(got))
	}
	return out
}

// balanceAccount is the token account a balance entry describes: its
// Account, or the key its AccountIndex names.
func balanceAccount(tx chain.Transaction, b chain.TokenBalance) chain.Address {
	if !b.Account.IsZero() {
		return b.Account
	}
	if keys := tx.Keys(); b.AccountIndex >= 0 && b.AccountIndex < len(keys) {
		return keys[b.AccountIndex]
	}
	return chain.Address{}
}

// isMemoProgram reports whether p is one of the Memo programs.
func isMemoProgram(p chain.Address) bool {
	return p == message.MemoProgramID() || p == message.MemoV1ProgramID()
}

// isTokenProgram reports whether p is the SPL Token or the Token-2022
// program.
func isTokenProgram(p chain.Address) bool {
	return p == token2022.ProgramID() || p == message.SPLTokenProgramID()
}

// tokenInstructions returns the indexes of tx's instructions that call a
// token program, in order: the transfers an intent's legs are matched
// against.
func tokenInstructions(tx chain.Transaction) []int {
	var out []int
	for i, ix := range tx.Instructions {
		if isTokenProgram(ix.ProgramID) {
			out = append(out, i)
		}
	}
	return out
}

// transfersLast reports whether the token instructions at tokens are the
// last instructions of tx, one after another.
func transfersLast(tx chain.Transaction, tokens []int) bool {
	for i, at := range tokens {
		if at != len(tx.Instructions)-len(tokens)+i {
			return false
		}
	}
	return true
}

// legField names a field of leg i: "legs[i].field", or "legs[i]" alone.
func legField(i int, field string) string {
	if field == "" {
		return "legs[" + strconv.Itoa(i) + "]"
	}
	return "legs[" + strconv.Itoa(i) + "]." + field
}

// verifyLegs is Verify's transfer and balance part for an intent with
// Legs. The token-program instructions of the transaction are matched to
// the legs in order, one each: a leg without one is "legs[i]" missing, a
// token instruction beyond the legs is "legs[i]" extra (expected absent).
// Each matched instruction must be the leg's Token-2022 TransferChecked or
// TransferCheckedWithFee: its gross amount ("legs[i].amount"), the
// decimals, the fee when stated, source, mint, the leg's destination,
// the payer as owner, and the reference as the only further account.
// The transfers must be the last instructions, with the memo immediately
// before the first (under the same rule as a single transfer). Every
// leg's destination must be owned by the leg's recipient, hold the mint
// and grow by exactly the leg's net ("legs[i].recipient",
// "legs[i].recipientMint", "legs[i].net"; a missing pre-balance counts as
// zero).
func verifyLegs(it Intent, tx chain.Transaction) []Mismatch {
	var out []Mismatch
	miss := func(field, expected, actual string) {
		out = append(out, Mismatch{Field: field, Expected: expected, Actual: actual})
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	legs := it.Legs
	tokens := tokenInstructions(tx)
	if len(tokens) != len(legs) {
		miss("legs", u(uint64(len(legs)))+" transfers", u(uint64(len(tokens)))+" token instructions")
	}
	n := len(tx.Instructions)
	if !transfersLast(tx, tokens) {
		miss("instruction", "transfers last", "other instructions among or after the transfers")
	}
	memoAt := n - len(legs) - 1
	if len(tokens) > 0 {
		memoAt = tokens[0] - 1
	}
	memoPresent := memoAt >= 0 && memoAt < n && isMemoProgram(tx.Instructions[memoAt].ProgramID)
	switch {
	case memoPresent && string(tx.Instructions[memoAt].Data) != it.Memo:
		miss("memo", it.Memo, string(tx.Instructions[memoAt].Data))
	case !memoPresent && it.Origin != OriginReference:
		miss("memo", it.Memo, "")
	}

	for i := range max(len(legs), len(tokens)) {
		switch {
		case i >= len(tokens):
			miss(legField(i, ""), "transfer of "+u(legs[i].GrossAtomic)+" to "+legs[i].Destination.String(), "missing")
			continue
		case i >= len(legs):
			got := "token instruction " + u(uint64(tokens[i]))
			if ix := tx.Instructions[tokens[i]]; len(ix.Accounts) > 2 {
				got += " to " + ix.Accounts[2].String()
			}
			miss(legField(i, ""), "absent", got)
			continue
		}
		for _, m := range verifyLegTransfer(it, legs[i], tx.Instructions[tokens[i]]) {
			miss(legField(i, m.Field), m.Expected, m.Actual)
		}
	}
	for i, l := range legs {
		for _, m := range verifyLegBalance(it, l, tx) {
			miss(legField(i, m.Field), m.Expected, m.Actual)
		}
	}
	return out
}

// verifyLegTransfer checks one leg's transfer instruction; the fields are
// relative to the leg.
func verifyLegTransfer(it Intent, l Leg, ix chain.Instruction) []Mismatch {
	var out []Mismatch
	miss := func(field, expected, actual string) {
		out = append(out, Mismatch{Field: field, Expected: expected, Actual: actual})
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	if ix.ProgramID != it.TokenProgram {
		miss("program", it.TokenProgram.String(), ix.ProgramID.String())
	}
	tk, ok := message.DecodeTransfer(ix.Data)
	if !ok {
		miss("instruction", "TransferChecked or TransferCheckedWithFee", "other")
	} else {
		if tk.Amount != l.GrossAtomic {
			miss("amount", u(l.GrossAtomic), u(tk.Amount))
		}
		if tk.Decimals != it.Decimals {
			miss("decimals", u(uint64(it.Decimals)), u(uint64(tk.Decimals)))
		}
		if tk.WithFee && tk.Fee != l.FeeAtomic {
			miss("fee", u(l.FeeAtomic), u(tk.Fee))
		}
	}
	acct := func(i int) string {
		if i < len(ix.Accounts) {
			return ix.Accounts[i].String()
		}
		return ""
	}
	for i, want := range []struct {
		field string
		key   chain.Address
	}{{"source", it.Source}, {"mint", it.Mint}, {"destination", l.Destination}, {"owner", it.Payer}} {
		if got := acct(i); got != want.key.String() {
			miss(want.field, want.key.String(), got)
		}
	}
	if len(ix.Accounts) != 5 || ix.Accounts[4] != it.Reference {
		var parts []string
		if len(ix.Accounts) > 4 {
			for _, a := range ix.Accounts[4:] {
				parts = append(parts, a.String())
			}
		}
		miss("reference", it.Reference.String(), strings.Join(parts, ","))
	}
	return out
}

// verifyLegBalance checks what one leg's destination received; the
// fields are relative to the leg.
func verifyLegBalance(it Intent, l Leg, tx chain.Transaction) []Mismatch {
	var out []Mismatch
	miss := func(field, expected, actual string) {
		out = append(out, Mismatch{Field: field, Expected: expected, Actual: actual})
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	post, pre := tokenBalances(tx, l.Destination)
	if post == nil {
		miss("recipientBalance", "present", "missing")
		return out
	}
	if post.Owner != l.Recipient {
		miss("recipient", l.Recipient.String(), post.Owner.String())
	}
	if post.Mint != it.Mint {
		miss("recipientMint", it.Mint.String(), post.Mint.String())
	}
	var before uint64
	if pre != nil {
		before = pre.Amount
	}
	if got := diff(post.Amount, before); got != u(l.NetAtomic) {
		miss("net", u(l.NetAtomic), got)
	}
	return out
}
