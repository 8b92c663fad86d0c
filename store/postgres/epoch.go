package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// epochReader reads the credential epoch (store.Options.EpochFunc) on a
// connection of its own, with a prepared statement: hosts sharing a
// database read it once for every few cached lookups, and through pgx
// directly it costs a fraction of a pooled database/sql query. The
// connection opens on first use and again after a failure.
type epochReader struct {
	cfg *pgx.ConnConfig

	mu     sync.Mutex
	conn   *pgx.Conn
	closed bool
}

// epochStmt is the prepared statement's name and text.
const (
	epochStmt = "platform_credential_epoch"
	epochSQL  = "SELECT seq FROM credential_epoch WHERE id = 1"
)

// read returns the epoch.
func (e *epochReader) read(ctx context.Context) (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return 0, fmt.Errorf("postgres: the database is closed")
	}
	if e.conn == nil {
		cfg := e.cfg.Copy()
		cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return 0, fmt.Errorf("postgres: connect for the credential epoch: %w", err)
		}
		if _, err := conn.Prepare(ctx, epochStmt, epochSQL); err != nil {
			conn.Close(context.Background())
			return 0, fmt.Errorf("postgres: prepare the credential epoch: %w", err)
		}
		e.conn = conn
	}
	var seq int64
	if err := e.conn.QueryRow(ctx, epochStmt).Scan(&seq); err != nil {
		e.conn.Close(context.Background())
		e.conn = nil
		return 0, fmt.Errorf("postgres: read the credential epoch: %w", err)
	}
	return seq, nil
}

// Close closes the connection; later reads fail.
func (e *epochReader) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.conn == nil {
		return nil
	}
	err := e.conn.Close(context.Background())
	e.conn = nil
	return err
}
