package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/swap"
)

// swapRunRow is a row of swap_registry_runs.
type swapRunRow struct {
	ID              string    `bun:"id"`
	Environment     string    `bun:"environment"`
	RegistryVersion int       `bun:"registry_version"`
	RegistryHash    string    `bun:"registry_hash"`
	Network         string    `bun:"network"`
	Unreadable      bool      `bun:"unreadable"`
	Error           string    `bun:"error"`
	Checks          string    `bun:"checks"`
	CheckedAt       time.Time `bun:"checked_at"`
}

// SwapRegistryRunInsert implements swap.Store.
func (tx *Tx) SwapRegistryRunInsert(ctx context.Context, r swap.RegistryRun) error {
	const op = "store.SwapRegistryRunInsert"
	checks := r.Checks
	if checks == nil {
		checks = []swap.MintCheck{}
	}
	b, err := json.Marshal(checks)
	if err != nil {
		return errf(op, err)
	}
	_, err = tx.idb.ExecContext(ctx, `INSERT INTO swap_registry_runs (id, environment, registry_version, registry_hash,
		network, unreadable, error, checks, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Environment, r.RegistryVersion, r.RegistryHash, r.Network, r.Unreadable, r.Error, string(b), r.CheckedAt.UTC())
	return errf(op, err)
}

const swapRunSelect = `SELECT id, environment, registry_version, registry_hash, network, unreadable, error, checks, checked_at
	FROM swap_registry_runs WHERE environment = ? AND registry_version = ?`

// SwapRegistryRunLatest implements swap.Store.
func (tx *Tx) SwapRegistryRunLatest(ctx context.Context, env access.Environment, version int) (swap.RegistryRun, error) {
	return tx.scanSwapRun(ctx, "store.SwapRegistryRunLatest", swapRunSelect+
		` AND unreadable = ? ORDER BY checked_at DESC, id DESC LIMIT 1`, string(env), version, false)
}

// SwapRegistryRunNewest implements swap.Store.
func (tx *Tx) SwapRegistryRunNewest(ctx context.Context, env access.Environment, version int) (swap.RegistryRun, error) {
	return tx.scanSwapRun(ctx, "store.SwapRegistryRunNewest", swapRunSelect+
		` ORDER BY checked_at DESC, id DESC LIMIT 1`, string(env), version)
}

func (tx *Tx) scanSwapRun(ctx context.Context, op, q string, args ...any) (swap.RegistryRun, error) {
	var row swapRunRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &row); err != nil {
		return swap.RegistryRun{}, notFound(op, err)
	}
	r := swap.RegistryRun{ID: row.ID, Environment: row.Environment, RegistryVersion: row.RegistryVersion, RegistryHash: row.RegistryHash,
		Network: row.Network, Unreadable: row.Unreadable, Error: row.Error, CheckedAt: row.CheckedAt.UTC()}
	if err := json.Unmarshal([]byte(row.Checks), &r.Checks); err != nil {
		return swap.RegistryRun{}, errf(op, err)
	}
	return r, nil
}
