package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/token"
)

var _ token.Store = (*Tx)(nil)

type tokenRunRow struct {
	ID           string     `bun:"id"`
	Environment  string     `bun:"environment"`
	ConfigHash   string     `bun:"config_hash"`
	Mint         string     `bun:"mint"`
	Network      *string    `bun:"network"`
	Cluster      *string    `bun:"cluster"`
	Outcome      string     `bun:"outcome"`
	ErrorCode    string     `bun:"error_code"`
	ErrorMessage string     `bun:"error_message"`
	Checks       string     `bun:"checks"`
	Slot         *int64     `bun:"slot"`
	BlockTime    *time.Time `bun:"block_time"`
	Supply       *string    `bun:"supply"`
	StartedAt    time.Time  `bun:"started_at"`
	FinishedAt   time.Time  `bun:"finished_at"`
}

func (r tokenRunRow) run() (token.Run, error) {
	out := token.Run{ID: r.ID, Environment: access.Environment(r.Environment), ConfigHash: r.ConfigHash, Mint: r.Mint,
		Outcome: token.Outcome(r.Outcome), ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage,
		BlockTime: utcPtr(r.BlockTime), StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC()}
	if r.Network != nil {
		out.Network = *r.Network
	}
	if r.Cluster != nil {
		out.Cluster = chain.Cluster(*r.Cluster)
	}
	if r.Slot != nil {
		s := uint64(*r.Slot)
		out.Slot = &s
	}
	if r.Supply != nil {
		s, err := strconv.ParseUint(*r.Supply, 10, 64)
		if err != nil {
			return token.Run{}, fmt.Errorf("store: token run %s: supply: %w", r.ID, err)
		}
		out.Supply = &s
	}
	if err := json.Unmarshal([]byte(r.Checks), &out.Checks); err != nil {
		return token.Run{}, fmt.Errorf("store: token run %s: checks: %w", r.ID, err)
	}
	return out, nil
}

const tokenRunSelect = `SELECT id, environment, config_hash, mint, network, cluster, outcome, error_code, error_message, checks,
	slot, block_time, supply, started_at, finished_at FROM token_verification_runs`

// TokenRunInsert implements token.Store.
func (tx *Tx) TokenRunInsert(ctx context.Context, r token.Run) (token.Run, error) {
	const op = "store.TokenRunInsert"
	if r.ID == "" {
		r.ID = tx.NewID("tvr_")
	}
	checks := r.Checks
	if checks == nil {
		checks = []token.Check{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return token.Run{}, errf(op, err)
	}
	var network, cluster, supply *string
	if r.Network != "" {
		network = &r.Network
	}
	if r.Cluster != "" {
		c := string(r.Cluster)
		cluster = &c
	}
	if r.Supply != nil {
		s := strconv.FormatUint(*r.Supply, 10)
		supply = &s
	}
	var slot *int64
	if r.Slot != nil {
		s := int64(*r.Slot)
		slot = &s
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO token_verification_runs (id, environment, config_hash, mint, network, cluster,
		outcome, error_code, error_message, checks, slot, block_time, supply, started_at, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, string(r.Environment), r.ConfigHash, r.Mint, network, cluster, string(r.Outcome), r.ErrorCode, r.ErrorMessage,
		string(b), slot, r.BlockTime, supply, r.StartedAt, r.FinishedAt)
	if err != nil {
		return token.Run{}, errf(op, err)
	}
	return r, nil
}

func (tx *Tx) scanTokenRun(ctx context.Context, op, q string, args ...any) (token.Run, bool, error) {
	var row tokenRunRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &row); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return token.Run{}, false, nil
		}
		return token.Run{}, false, errf(op, err)
	}
	r, err := row.run()
	if err != nil {
		return token.Run{}, false, errf(op, err)
	}
	return r, true, nil
}

// TokenRunLatest implements token.Store.
func (tx *Tx) TokenRunLatest(ctx context.Context, env access.Environment) (token.Run, bool, error) {
	return tx.scanTokenRun(ctx, "store.TokenRunLatest", tokenRunSelect+
		` WHERE environment = ? ORDER BY finished_at DESC, id DESC LIMIT 1`, string(env))
}

// TokenRunLatestDecisive implements token.Store.
func (tx *Tx) TokenRunLatestDecisive(ctx context.Context, env access.Environment, configHash string) (token.Run, bool, error) {
	return tx.scanTokenRun(ctx, "store.TokenRunLatestDecisive", tokenRunSelect+
		` WHERE environment = ? AND config_hash = ? AND outcome IN ('PASSED', 'FAILED') ORDER BY finished_at DESC, id DESC LIMIT 1`,
		string(env), configHash)
}
