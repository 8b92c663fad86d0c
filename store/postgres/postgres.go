// Package postgres opens the platform's store on PostgreSQL through pgx's
// database/sql driver and bun's pgdialect. It embeds the PostgreSQL
// migrations and applies them on open under an advisory lock, so several
// hosts can start against one database at once.
//
// Its connections pipeline (pipeline.go): a transaction's BEGIN and the
// statements the store marks as deferrable are sent together with the
// transaction's next statement that needs an answer, or with its COMMIT.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/creatormusic/platform/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the embedded PostgreSQL migrations, in order.
func Migrations() ([]store.Migration, error) { return store.LoadMigrations(migrationFS, "migrations") }

// migrationLock serializes the migrators of one schema (several hosts
// starting on one database) for one transaction. The key pairs the
// platform's lock class with the schema's name, so migrators of other
// schemas on the same server (other deployments, or tests with a schema
// each) never wait for each other.
const migrationLock = "SELECT pg_advisory_xact_lock(727274001, hashtext(current_schema()))"

// Config configures Open.
type Config struct {
	// URL is a PostgreSQL connection string (postgres://... or key=value).
	// A search_path parameter selects the schema. Required.
	URL string
	// MaxConns bounds the connection pool. Zero means 16.
	MaxConns int
	// Clock supplies now for every unit of work. Nil means the wall clock.
	Clock store.Clock
}

// Open connects to cfg.URL and migrates the database.
func Open(ctx context.Context, cfg Config) (*store.DB, error) {
	pc, err := pgx.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse URL: %w", err)
	}
	// bun writes every argument into the SQL text itself, so no statement
	// carries parameters. pgx's default mode would then prepare (and cache,
	// evicting) every distinct text: two round trips per query and a
	// server-side statement each. The simple protocol sends the text once.
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	maxConns := cfg.MaxConns
	if maxConns == 0 {
		maxConns = 16
	}
	sqldb := sql.OpenDB(pipeConnector{inner: stdlib.GetConnector(*pc)})
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	bdb := bun.NewDB(sqldb, pgdialect.New())
	if err := bdb.PingContext(ctx); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	ms, err := Migrations()
	if err != nil {
		bdb.Close()
		return nil, err
	}
	epoch := &epochReader{cfg: pc}
	db := store.New(store.Postgres, bdb, bdb, store.Options{Clock: cfg.Clock, Shared: true,
		EpochFunc: epoch.read, Closer: epoch})
	if err := store.Migrate(ctx, bdb, ms, migrationLock, db.Now()); err != nil {
		bdb.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return db, nil
}
