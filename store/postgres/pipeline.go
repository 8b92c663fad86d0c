package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/creatormusic/platform/store"
)

// Pipelining. Every statement through database/sql is a round trip: the
// driver sends it and waits for the answer. A generation accept wrote
// thirteen statements in its transaction, and on a two-core machine the
// waits (and the wake-ups of the server process they cost) bounded the
// accept rate more than the statements' own work did.
//
// pipeConn is a database/sql connection over pgx's that holds back what it
// may: a transaction's BEGIN, and every statement the store marks as
// deferrable (store.Deferrable: inserts whose answer the unit of work does
// not wait for, each with a check of the rows it affected). The held
// statements go to the server in one message together with the next
// statement that needs an answer, or with the COMMIT; a transaction whose
// every write was deferrable costs its reads and one round trip. A batch is
// one message of the extended protocol (each statement bound to the
// connection's prepared statement of its text) ending in one Sync: the
// server runs the statements in order and skips the rest after an error.
//
// Errors keep their effect: the first error of a held statement, or of its
// check, is returned by the statement that sent it, and by every later
// statement and the commit, which then rolls back. A check that fails
// after the server ran the statement fails the transaction in the same
// way, so a COMMIT is sent together with the held statements only when
// none of them has a check; otherwise they are sent first and the COMMIT
// after their checks passed. An error the server raises itself needs no
// such care: the server skips the rest of the batch, the COMMIT included,
// and the transaction rolls back. That is how a balance change refused by
// the database (store.Held.Fail turns its error into the ledger's) goes to
// the server in the commit's batch.

// pipeConnector opens pipeConns over pgx's database/sql connections.
type pipeConnector struct {
	inner driver.Connector
}

// Connect implements driver.Connector.
func (c pipeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		_ = dc.Close()
		return nil, fmt.Errorf("postgres: unexpected driver connection %T", dc)
	}
	return &pipeConn{Conn: sc}, nil
}

// Driver implements driver.Connector.
func (c pipeConnector) Driver() driver.Driver { return c.inner.Driver() }

// held is a statement waiting to be sent.
type held struct {
	sql  string
	args []any
	how  store.Held
}

// pipeConn is one connection; database/sql uses it from one goroutine at
// a time.
type pipeConn struct {
	*stdlib.Conn
	// inTx is true from BeginTx until the transaction ends.
	inTx bool
	// begun is true once the transaction's BEGIN has been sent.
	begun bool
	// txCtx is the context the transaction began with (Commit has none).
	txCtx context.Context
	held  []held
	// failed is the transaction's first error from a batch: every later
	// statement and the commit return it.
	failed error
	// eqb encodes the arguments of batched statements.
	eqb pgx.ExtendedQueryBuilder
}

// Prepare implements driver.Conn.
func (c *pipeConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *pipeConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &pipeStmt{Stmt: st.(*stdlib.Stmt), c: c, query: query}, nil
}

// Begin implements driver.Conn.
func (c *pipeConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements driver.ConnBeginTx: the BEGIN is held until the
// transaction's first statement that is sent.
func (c *pipeConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	begin, err := beginSQL(opts)
	if err != nil {
		return nil, err
	}
	c.inTx, c.begun, c.txCtx, c.failed = true, false, ctx, nil
	c.held = append(c.held[:0], held{sql: begin})
	return pipeTx{c: c}, nil
}

// beginSQL is the BEGIN statement of opts.
func beginSQL(opts driver.TxOptions) (string, error) {
	s := "begin"
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		s += " isolation level read uncommitted"
	case sql.LevelReadCommitted:
		s += " isolation level read committed"
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		s += " isolation level repeatable read"
	case sql.LevelSerializable:
		s += " isolation level serializable"
	default:
		return "", fmt.Errorf("postgres: unsupported isolation level %v", sql.IsolationLevel(opts.Isolation))
	}
	if opts.ReadOnly {
		s += " read only"
	}
	return s, nil
}

// ExecContext implements driver.ExecerContext.
func (c *pipeConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, query, args, func() (driver.Result, error) { return c.Conn.ExecContext(ctx, query, args) })
}

// QueryContext implements driver.QueryerContext: held statements are sent
// first.
func (c *pipeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.beforeQuery(ctx); err != nil {
		return nil, err
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// ResetSession implements driver.SessionResetter.
func (c *pipeConn) ResetSession(ctx context.Context) error {
	if c.inTx || len(c.held) > 0 {
		return driver.ErrBadConn
	}
	return c.Conn.ResetSession(ctx)
}

// exec holds a deferrable statement of a transaction, sends it with the
// held ones when it is not, and otherwise runs it through direct.
func (c *pipeConn) exec(ctx context.Context, query string, args []driver.NamedValue, direct func() (driver.Result, error)) (driver.Result, error) {
	if !c.inTx {
		return direct()
	}
	if c.failed != nil {
		return nil, c.failed
	}
	if how, ok := store.Deferrable(ctx); ok {
		c.held = append(c.held, held{sql: query, args: heldValues(args), how: how})
		return heldResult{}, nil
	}
	if len(c.held) == 0 {
		return direct()
	}
	ct, err := c.flush(ctx, &held{sql: query, args: values(args)})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(ct.RowsAffected()), nil
}

// beforeQuery sends the held statements of a transaction before a query.
func (c *pipeConn) beforeQuery(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	if c.failed != nil {
		return c.failed
	}
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.flush(ctx, nil)
	return err
}

// flush sends the held statements, and last after them when it is not
// nil, in one batch, runs the held statements' checks and returns last's
// command tag. Its first error (a statement's or a check's) is also kept
// as the transaction's.
//
// A statement with arguments runs as the connection's prepared statement
// of its text (prepared here the first time, as database/sql would), so
// the server plans it once per connection; one without (BEGIN, COMMIT, a
// statement with its arguments in the text) is sent as text.
func (c *pipeConn) flush(ctx context.Context, last *held) (pgconn.CommandTag, error) {
	items := c.held
	if last != nil {
		items = append(items, *last)
	}
	c.held = nil
	c.begun = true
	ct, err := c.send(ctx, items, last != nil)
	if err != nil {
		c.failed = err
	}
	return ct, err
}

// send runs items in one batch; see flush.
func (c *pipeConn) send(ctx context.Context, items []held, withLast bool) (pgconn.CommandTag, error) {
	pc := c.Conn.Conn()
	var batch pgconn.Batch
	for _, h := range items {
		if len(h.args) == 0 {
			batch.ExecParams(h.sql, nil, nil, nil, nil)
			continue
		}
		sd, err := pc.Prepare(ctx, h.sql, h.sql)
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		if err := c.eqb.Build(pc.TypeMap(), sd, h.args); err != nil {
			return pgconn.CommandTag{}, err
		}
		batch.ExecStatement(sd, c.eqb.ParamValues, c.eqb.ParamFormats, slices.Clone(c.eqb.ResultFormats))
	}
	mrr := pc.PgConn().ExecBatch(ctx, &batch)
	var (
		first error
		tag   pgconn.CommandTag
		n     int
	)
	for mrr.NextResult() {
		ct, err := mrr.ResultReader().Close()
		i := n
		n++
		how := items[i].how
		switch {
		case err != nil:
			if how.FailFunc != nil {
				err = how.FailFunc(err)
			}
			if first == nil {
				first = err
			}
		case how.CheckFunc != nil:
			if err := how.CheckFunc(ct.RowsAffected()); err != nil && first == nil {
				first = err
			}
		}
		tag = ct
	}
	if err := mrr.Close(); err != nil && first == nil {
		// The server stops a batch at its first error: the statement
		// whose result did not come failed.
		if n < len(items) && items[n].how.FailFunc != nil {
			err = items[n].how.FailFunc(err)
		}
		first = err
	}
	if first == nil && n != len(items) {
		first = fmt.Errorf("postgres: a batch of %d statements gave %d results", len(items), n)
	}
	if first != nil || !withLast {
		return pgconn.CommandTag{}, first
	}
	return tag, nil
}

// endTx forgets the transaction.
func (c *pipeConn) endTx() {
	c.inTx, c.begun, c.txCtx, c.failed, c.held = false, false, nil, nil, nil
}

// rollback ends a transaction the server has begun.
func (c *pipeConn) rollback() error {
	if !c.begun {
		return nil
	}
	_, err := c.Conn.ExecContext(context.Background(), "rollback", nil)
	return err
}

// pipeTx is the transaction of a pipeConn.
type pipeTx struct {
	c *pipeConn
}

// errRolledBack is a COMMIT the server answered with ROLLBACK.
var errRolledBack = errors.New("postgres: the transaction was rolled back at commit")

// Commit implements driver.Tx: the held statements and the COMMIT go in
// one batch unless a held statement has a check, which must pass before
// the COMMIT is sent.
func (t pipeTx) Commit() error {
	c := t.c
	defer c.endTx()
	if c.failed != nil {
		_ = c.rollback()
		return c.failed
	}
	if !c.begun && len(c.held) == 1 {
		return nil // only the BEGIN: nothing ran
	}
	ctx := c.txCtx
	for _, h := range c.held {
		if h.how.CheckFunc != nil {
			if _, err := c.flush(ctx, nil); err != nil {
				_ = c.rollback()
				return err
			}
			break
		}
	}
	ct, err := c.flush(ctx, &held{sql: "commit"})
	if err != nil {
		_ = c.rollback()
		return err
	}
	if ct.String() == "ROLLBACK" {
		return errRolledBack
	}
	return nil
}

// Rollback implements driver.Tx: the held statements are dropped, and a
// transaction the server never saw is not sent at all.
func (t pipeTx) Rollback() error {
	c := t.c
	defer c.endTx()
	c.held = nil
	return c.rollback()
}

// pipeStmt is a prepared statement of a pipeConn: held and sent like the
// connection's statements (as text in a batch), run as prepared otherwise.
type pipeStmt struct {
	*stdlib.Stmt
	c     *pipeConn
	query string
}

// ExecContext implements driver.StmtExecContext.
func (s *pipeStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.query, args, func() (driver.Result, error) { return s.Stmt.ExecContext(ctx, args) })
}

// QueryContext implements driver.StmtQueryContext.
func (s *pipeStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.beforeQuery(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.QueryContext(ctx, args)
}

// heldResult is the result of a held statement: it has not run yet.
type heldResult struct{}

// LastInsertId implements driver.Result.
func (heldResult) LastInsertId() (int64, error) {
	return 0, errors.New("postgres: LastInsertId is not supported")
}

// RowsAffected implements driver.Result: store.ErrDeferred.
func (heldResult) RowsAffected() (int64, error) { return 0, store.ErrDeferred }

// heldValues are the arguments of a held statement: values, with byte
// slices copied, since the caller may reuse its buffer once Exec returns
// and the statement is sent only later.
func heldValues(args []driver.NamedValue) []any {
	out := values(args)
	for i, v := range out {
		switch b := v.(type) {
		case []byte:
			out[i] = bytes.Clone(b)
		case json.RawMessage:
			out[i] = json.RawMessage(bytes.Clone(b))
		}
	}
	return out
}

// values are a statement's arguments as pgx takes them.
func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
