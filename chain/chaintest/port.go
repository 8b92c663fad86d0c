package chaintest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creatormusic/platform/chain"
)

// The in-process reads below have the signatures of chain/solanarpc.Client
// (the token package's ChainClient port). They count as calls of the
// JSON-RPC method they mirror and go through the same faults: an error
// fault gives a *chain.RPCError, Behind a *chain.RPCError with code -32005
// and NumSlotsBehind, an HTTP-status fault or a Delay outlasting ctx an
// error wrapping chain.ErrUnavailable.

// enter counts a call of method and applies its faults.
func (c *Cluster) enter(ctx context.Context, method string) error {
	c.countCall(method)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", chain.ErrUnavailable, method, err)
	}
	p := c.takeFaults(method)
	if err := c.wait(ctx, p.delay); err != nil {
		return fmt.Errorf("%w: %s: %w", chain.ErrUnavailable, method, err)
	}
	if p.fault == nil {
		return nil
	}
	if p.fault.HTTPStatus != 0 {
		return fmt.Errorf("%w: %s: HTTP status %d", chain.ErrUnavailable, method, p.fault.HTTPStatus)
	}
	return toChainError(method, faultError(p.fault))
}

// toChainError maps a JSON-RPC error as chain/solanarpc does.
func toChainError(method string, e *rpcError) error {
	ce := &chain.RPCError{Method: method, Code: e.Code, Message: e.Message}
	if e.Code == chain.CodeNodeUnhealthy {
		if m, ok := e.Data.(map[string]any); ok {
			switch n := m["numSlotsBehind"].(type) {
			case uint64:
				ce.NumSlotsBehind = &n
			case int:
				if n >= 0 {
					u := uint64(n)
					ce.NumSlotsBehind = &u
				}
			case float64:
				if n >= 0 {
					u := uint64(n)
					ce.NumSlotsBehind = &u
				}
			}
		}
	}
	return ce
}

// readSlot validates commitment (empty = finalized) and returns its slot.
// The caller holds mu.
func (c *Cluster) readSlotLocked(method string, cm chain.Commitment) (uint64, error) {
	lvl, rerr := parseCommitment(string(cm))
	if rerr != nil {
		return 0, toChainError(method, rerr)
	}
	return c.commitmentSlotLocked(lvl), nil
}

// GetGenesisHash returns the genesis hash, as getGenesisHash.
func (c *Cluster) GetGenesisHash(ctx context.Context) (string, error) {
	if err := c.enter(ctx, "getGenesisHash"); err != nil {
		return "", err
	}
	return c.genesis, nil
}

// GetAccountInfo returns the account at addr, as getAccountInfo; a missing
// account is chain.ErrAccountNotFound.
func (c *Cluster) GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error) {
	const method = "getAccountInfo"
	if err := c.enter(ctx, method); err != nil {
		return chain.AccountInfo{}, err
	}
	c.mu.RLock()
	slot, err := c.readSlotLocked(method, commitment)
	s := c.accounts[addr]
	c.mu.RUnlock()
	if err != nil {
		return chain.AccountInfo{}, err
	}
	if s == nil {
		return chain.AccountInfo{}, fmt.Errorf("%w: %s", chain.ErrAccountNotFound, addr)
	}
	return chain.AccountInfo{
		Address:    addr,
		Owner:      s.Owner,
		Lamports:   s.Lamports,
		Data:       append([]byte(nil), s.Data...),
		Executable: s.Executable,
		Slot:       slot,
	}, nil
}

// GetBalance returns the lamports of the account at addr and the context
// slot of commitment, as getBalance: a missing account has balance 0, as
// a node answers.
func (c *Cluster) GetBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (lamports, slot uint64, err error) {
	const method = "getBalance"
	if err := c.enter(ctx, method); err != nil {
		return 0, 0, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err = c.readSlotLocked(method, commitment)
	if err != nil {
		return 0, 0, err
	}
	if s := c.accounts[addr]; s != nil {
		lamports = s.Lamports
	}
	return lamports, slot, nil
}

// GetTokenAccountBalance returns the balance of the token account at addr,
// as getTokenAccountBalance: chain.ErrAccountNotFound when there is no
// account, chain.ErrNotTokenAccount when it is not a token account.
func (c *Cluster) GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error) {
	const method = "getTokenAccountBalance"
	if err := c.enter(ctx, method); err != nil {
		return chain.TokenAmount{}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.readSlotLocked(method, commitment)
	if err != nil {
		return chain.TokenAmount{}, err
	}
	s := c.accounts[addr]
	if s == nil {
		return chain.TokenAmount{}, fmt.Errorf("%w: %s", chain.ErrAccountNotFound, addr)
	}
	acct, dec, ok := c.tokenAccountLocked(s)
	if !ok {
		return chain.TokenAmount{}, fmt.Errorf("%w: %s", chain.ErrNotTokenAccount, addr)
	}
	return chain.TokenAmount{Amount: acct.Amount, Decimals: dec, Slot: slot}, nil
}

// GetEpochInfo returns the epoch at commitment's slot, as getEpochInfo.
func (c *Cluster) GetEpochInfo(ctx context.Context, commitment chain.Commitment) (chain.EpochInfo, error) {
	const method = "getEpochInfo"
	if err := c.enter(ctx, method); err != nil {
		return chain.EpochInfo{}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.readSlotLocked(method, commitment)
	if err != nil {
		return chain.EpochInfo{}, err
	}
	return c.epochInfoLocked(slot), nil
}

// GetSlot returns commitment's slot, as getSlot.
func (c *Cluster) GetSlot(ctx context.Context, commitment chain.Commitment) (uint64, error) {
	const method = "getSlot"
	if err := c.enter(ctx, method); err != nil {
		return 0, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.readSlotLocked(method, commitment)
}

// GetBlockTime returns slot's block time, as getBlockTime;
// chain.ErrBlockTimeUnavailable for a slot not yet produced.
func (c *Cluster) GetBlockTime(ctx context.Context, slot uint64) (time.Time, error) {
	if err := c.enter(ctx, "getBlockTime"); err != nil {
		var re *chain.RPCError
		if errors.As(err, &re) && (re.Code == chain.CodeBlockNotAvailable || re.Code == chain.CodeSlotSkipped || re.Code == chain.CodeLongTermSlotSkipped) {
			return time.Time{}, fmt.Errorf("%w: %w", chain.ErrBlockTimeUnavailable, err)
		}
		return time.Time{}, err
	}
	unix, rerr := c.blockTime(slot)
	if rerr != nil {
		return time.Time{}, fmt.Errorf("%w: %w", chain.ErrBlockTimeUnavailable, toChainError("getBlockTime", rerr))
	}
	return time.Unix(unix, 0).UTC(), nil
}

// GetHealth returns nil when healthy, as getHealth; a Behind fault gives a
// *chain.RPCError with code -32005.
func (c *Cluster) GetHealth(ctx context.Context) error {
	return c.enter(ctx, "getHealth")
}

// GetLatestBlockhash returns the blockhash of commitment's slot and its
// last valid block height, as getLatestBlockhash.
func (c *Cluster) GetLatestBlockhash(ctx context.Context, commitment chain.Commitment) (chain.Blockhash, error) {
	const method = "getLatestBlockhash"
	if err := c.enter(ctx, method); err != nil {
		return chain.Blockhash{}, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	slot, err := c.readSlotLocked(method, commitment)
	if err != nil {
		return chain.Blockhash{}, err
	}
	h, hs := c.latestBlockhashLocked(slot)
	return chain.Blockhash{Hash: h, LastValidBlockHeight: hs + MaxBlockhashAge, Slot: slot}, nil
}

// GetBlockHeight returns commitment's block height (the slot: the
// cluster skips no slot), as getBlockHeight.
func (c *Cluster) GetBlockHeight(ctx context.Context, commitment chain.Commitment) (uint64, error) {
	const method = "getBlockHeight"
	if err := c.enter(ctx, method); err != nil {
		return 0, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.readSlotLocked(method, commitment)
}
