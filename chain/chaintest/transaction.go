package chaintest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// GetTransaction returns the landed transaction with signature as the bank
// at commitment holds it, as getTransaction read through
// chain/solanarpc.Client.GetTransaction: commitment must be confirmed or
// finalized (empty means finalized; processed is refused with -32602, as
// a node refuses it), an unknown signature or one not yet visible at
// commitment is chain.ErrTransactionNotFound, and keys, instructions and
// balances are resolved over the full key list (static keys, then the
// loaded writable, then the loaded read-only addresses). Err is meta.err
// as compact JSON, "" when the transaction succeeded.
func (c *Cluster) GetTransaction(ctx context.Context, signature string, commitment chain.Commitment) (chain.Transaction, error) {
	const method = "getTransaction"
	if err := c.enter(ctx, method); err != nil {
		return chain.Transaction{}, err
	}
	cm, rerr := atLeastConfirmed(string(commitment))
	if rerr != nil {
		return chain.Transaction{}, toChainError(method, rerr)
	}
	c.mu.RLock()
	r, ok := c.txs[signature]
	cur := c.slot
	c.mu.RUnlock()
	if !ok || !r.visible(cm, cur) {
		return chain.Transaction{}, fmt.Errorf("chaintest: %s %s: %w", method, signature, chain.ErrTransactionNotFound)
	}
	return r.transaction()
}

// transaction is the record as chain.Transaction.
func (r *txRecord) transaction() (chain.Transaction, error) {
	p, res := r.p, r.res
	m := &p.tx.Message
	bt := time.Unix(r.blockTime, 0).UTC()
	out := chain.Transaction{
		Signature: r.sig, Slot: r.slot, BlockTime: &bt, Fee: res.fee,
		AccountKeys:     append([]chain.Address(nil), p.keys[:p.static]...),
		NumSigners:      int(m.Header.NumRequiredSignatures),
		LoadedWritable:  append(make([]chain.Address, 0, len(p.loadedW)), p.loadedW...),
		LoadedReadonly:  append(make([]chain.Address, 0, len(p.loadedR)), p.loadedR...),
		RecentBlockhash: p.hash,
		PreBalances:     append([]uint64(nil), res.pre...),
		PostBalances:    append([]uint64(nil), res.post...),
		LogMessages:     append([]string(nil), res.logs...),
	}
	if res.err != nil {
		b, err := json.Marshal(res.err.JSON())
		if err != nil {
			return chain.Transaction{}, fmt.Errorf("chaintest: meta.err of %s: %w", r.sig, err)
		}
		out.Err = string(b)
	}
	for _, ix := range m.Instructions {
		accts := make([]chain.Address, len(ix.Accounts))
		for j, a := range ix.Accounts {
			accts[j] = p.keys[a]
		}
		out.Instructions = append(out.Instructions, chain.Instruction{ProgramID: p.keys[ix.ProgramIDIndex], Accounts: accts,
			Data: append([]byte{}, ix.Data...)})
	}
	var err error
	if out.PreTokenBalances, err = chainTokenBalances(res.preTok, p.keys); err != nil {
		return chain.Transaction{}, err
	}
	if out.PostTokenBalances, err = chainTokenBalances(res.postTk, p.keys); err != nil {
		return chain.Transaction{}, err
	}
	return out, nil
}

// chainTokenBalances converts recorded token balances, resolving each
// account over keys.
func chainTokenBalances(in []tokenBalance, keys []chain.Address) ([]chain.TokenBalance, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]chain.TokenBalance, len(in))
	for i, b := range in {
		mint, err := token2022.ParsePublicKey(b.Mint)
		if err != nil {
			return nil, fmt.Errorf("chaintest: token balance %d: mint: %w", i, err)
		}
		owner, err := token2022.ParsePublicKey(b.Owner)
		if err != nil {
			return nil, fmt.Errorf("chaintest: token balance %d: owner: %w", i, err)
		}
		prog, err := token2022.ParsePublicKey(b.ProgramID)
		if err != nil {
			return nil, fmt.Errorf("chaintest: token balance %d: program: %w", i, err)
		}
		amount, err := strconv.ParseUint(b.UITokenAmt.Amount, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("chaintest: token balance %d: amount: %w", i, err)
		}
		out[i] = chain.TokenBalance{AccountIndex: b.AccountIndex, Account: keys[b.AccountIndex], Mint: mint, Owner: owner,
			ProgramID: prog, Amount: amount, Decimals: b.UITokenAmt.Decimals}
	}
	return out, nil
}
