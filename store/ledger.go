package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

var _ ledger.Store = (*Tx)(nil)

// corrupt reports a stored amount that does not parse: an internal error,
// never the client's INVALID_AMOUNT.
func corrupt(op string, err error) error {
	return fault.Wrap(op, fmt.Errorf("stored amount: %v", err))
}

// Amounts cross SQL as canonical decimal strings: TEXT on SQLite, and on
// Postgres NUMERIC(39,0) read back through CAST(... AS TEXT). They are parsed
// with package money and never summed in SQL.

type ledgerAccountRow struct {
	TenantID      string    `bun:"tenant_id"`
	WorkspaceID   string    `bun:"workspace_id"`
	Environment   string    `bun:"environment"`
	Ledger        string    `bun:"ledger"`
	Name          string    `bun:"name"`
	Decimals      int       `bun:"decimals"`
	AllowNegative bool      `bun:"allow_negative"`
	Balance       string    `bun:"balance"`
	Version       int64     `bun:"version"`
	CreatedAt     time.Time `bun:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at"`
}

// fields are the scan destinations of ledgerAccountColumns, in order.
func (r *ledgerAccountRow) fields() []any {
	return []any{&r.TenantID, &r.WorkspaceID, &r.Environment, &r.Ledger, &r.Name, &r.Decimals, &r.AllowNegative,
		&r.Balance, &r.Version, &r.CreatedAt, &r.UpdatedAt}
}

func (r ledgerAccountRow) account() (ledger.Account, error) {
	b, err := money.ParseSum(r.Balance)
	if err != nil {
		return ledger.Account{}, err
	}
	return ledger.Account{
		Scope:  ledger.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Ledger: ledger.Kind(r.Ledger), Name: r.Name, Decimals: r.Decimals, AllowNegative: r.AllowNegative,
		Balance: b, Version: r.Version, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}, nil
}

const ledgerAccountColumns = `tenant_id, workspace_id, environment, ledger, name, decimals, allow_negative,
	CAST(balance AS TEXT) AS balance, version, created_at, updated_at`

// LedgerAccountsLock opens the accounts of specs that do not exist
// (balance zero) and returns all of them, in the order of specs, locked
// against concurrent movements until the unit of work ends. The ledger
// moves balances through LedgerAccountsApply alone; SQLite's Apply reads
// through this, and the store's contract suite writes at a stale version
// with it.
//
// On PostgreSQL, missing accounts are inserted in one statement and the rows
// are then read in another, with FOR UPDATE in the order given (callers
// sort by name). Inserting first means the locks are only ever taken in
// that order: reading first would lock the accounts that exist before the
// ones it then has to open, and two movements opening accounts could wait
// on each other.
//
// SQLite has one writer, so the transaction itself serializes movements and
// no order matters: the rows are read first, and the insert and a second
// read run only when an account is missing.
//
// It reads and locks the accounts' own rows only: on PostgreSQL the part
// of a spread account's balance held in its slots (see
// LedgerAccountsApply) is neither returned nor locked. SQLite never
// spreads.
func (tx *Tx) LedgerAccountsLock(ctx context.Context, s ledger.Scope, k ledger.Kind, specs []ledger.AccountSpec) ([]ledger.Account, error) {
	const op = "store.LedgerAccountsLock"
	if len(specs) == 0 {
		return nil, nil
	}
	if tx.db.dialect == SQLite {
		out, err := tx.ledgerAccountsRead(ctx, s, k, specs)
		if !fault.Is(err, fault.NotFound) {
			return out, err
		}
	}
	if err := tx.ledgerAccountsOpen(ctx, s, k, specs); err != nil {
		return nil, errf(op, err)
	}
	return tx.ledgerAccountsRead(ctx, s, k, specs)
}

// ledgerAccountsOpen inserts the accounts of specs that do not exist, with
// balance zero, in one statement a pipelining driver may hold.
func (tx *Tx) ledgerAccountsOpen(ctx context.Context, s ledger.Scope, k ledger.Kind, specs []ledger.AccountSpec) error {
	var q strings.Builder
	args := make([]any, 0, len(specs)*9)
	q.WriteString(`INSERT INTO ledger_accounts (tenant_id, workspace_id, environment, ledger, name, decimals,
		allow_negative, balance, version, created_at, updated_at) VALUES `)
	for i, sp := range specs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, '0', 0, ?, ?)")
		args = append(args, s.TenantID, s.WorkspaceID, string(s.Environment), string(k), sp.Name, sp.Decimals,
			sp.AllowNegative, tx.now, tx.now)
	}
	q.WriteString(` ON CONFLICT (tenant_id, workspace_id, environment, ledger, name) DO NOTHING`)
	return tx.execLater(ctx, nil, q.String(), args...)
}

// LedgerAccountsApply implements ledger.Store.
//
// SQLite reads the accounts, applies the changes in Go
// (ledger.ApplyChanges) and writes the balances back.
//
// PostgreSQL never sends a balance to the server: it opens the missing
// accounts (but the spread ones, below, which the change opens itself),
// then changes each balance in place with one statement per
// account in the order given, which keeps ledger.ApplyChanges's rule and,
// when the rule refuses, raises through ledger_refuse (migration 0015),
// which Held.Fail turns into the ledger's error. Every one of these
// statements may be held by the pipelining driver and go to the server in
// the commit's batch: a row lock that a concurrent movement of the
// workspace waits for is then held for the change and the COMMIT alone, not
// for a round trip to this process and back.
//
// An account that may not go negative and that the ledger spreads
// (ledger.AccountSpec.Spread: a workspace's credits and reserved credits,
// which every reservation changes) is changed by ledger_spread_change
// (migration 0022) in one of spreadSlots parts that no other transaction
// holds, tried from a random one on, so that the workspace's concurrent
// reservations do not queue for one row; the function rebalances the
// parts, under the rule applied to their sum, when none can take the
// change. Every other account is changed by one UPDATE of its row.
func (tx *Tx) LedgerAccountsApply(ctx context.Context, s ledger.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	const op = "store.LedgerAccountsApply"
	if len(changes) == 0 {
		return nil
	}
	specs := make([]ledger.AccountSpec, len(changes))
	for i, c := range changes {
		specs[i] = c.AccountSpec
	}
	if tx.db.dialect == SQLite {
		accounts, err := tx.LedgerAccountsLock(ctx, s, k, specs)
		if err != nil {
			return err
		}
		if err := ledger.ApplyChanges(accounts, changes, insufficient); err != nil {
			return err
		}
		return tx.LedgerAccountsUpdate(ctx, accounts)
	}
	// ledger_spread_change opens the spread accounts itself.
	specs = slices.DeleteFunc(specs, spread)
	if len(specs) > 0 {
		if err := tx.ledgerAccountsOpen(ctx, s, k, specs); err != nil {
			return errf(op, err)
		}
	}
	for _, c := range changes {
		fail := func(err error) error {
			var st sqlState
			if !errors.As(err, &st) {
				return errf(op, err)
			}
			switch st.SQLState() {
			case refusedInsufficient:
				return ledger.ErrInsufficient(insufficient, c.Name)
			case refusedDecimals:
				return ledger.ErrOtherDecimals(c.Name)
			case refusedOverflow:
				return money.ErrSumOverflow(op)
			}
			return errf(op, err)
		}
		if spread(c.AccountSpec) {
			err := tx.execHeld(ctx, Held{FailFunc: fail}, `SELECT ledger_spread_change(?, ?, ?, ?, ?, ?, CAST(? AS NUMERIC), ?, ?, ?, ?)`,
				s.TenantID, s.WorkspaceID, string(s.Environment), string(k), c.Name, c.Decimals, c.Delta.String(),
				rand.IntN(spreadSlots), spreadSlots, c.Spread == ledger.SpreadCredits, tx.now)
			if err != nil {
				return err
			}
			continue
		}
		err := tx.execHeld(ctx, Held{FailFunc: fail}, `UPDATE ledger_accounts SET
				balance = CASE
					WHEN decimals <> ? THEN ledger_refuse('`+refusedDecimals+`')
					WHEN balance + CAST(? AS NUMERIC) >= `+sumBound+`
						OR balance + CAST(? AS NUMERIC) < -`+sumBound+` THEN ledger_refuse('`+refusedOverflow+`')
					WHEN NOT allow_negative AND balance + CAST(? AS NUMERIC) < 0 THEN ledger_refuse('`+refusedInsufficient+`')
					ELSE balance + CAST(? AS NUMERIC) END,
				version = version + 1, updated_at = ?
			WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name = ?`,
			c.Decimals, c.Delta.String(), c.Delta.String(), c.Delta.String(), c.Delta.String(), tx.now,
			s.TenantID, s.WorkspaceID, string(s.Environment), string(k), c.Name)
		if err != nil {
			return err
		}
	}
	return nil
}

// spread reports whether the store keeps the balance of the account of sp
// in parts on PostgreSQL: a spread account that may not go negative.
func spread(sp ledger.AccountSpec) bool {
	return sp.Spread != ledger.SpreadNone && !sp.AllowNegative
}

// spreadSlots is how many parts (besides its own row) a spread account's
// balance is kept in on PostgreSQL: more than the accepts of one workspace
// a host runs at once (operation.DefaultAcceptsInFlight), so that each
// finds a part no other holds.
const spreadSlots = 8

// sqlState is a driver error with its SQLSTATE (pgconn.PgError's method).
type sqlState interface{ SQLState() string }

// uniqueViolation reports whether err is PostgreSQL's unique_violation.
func uniqueViolation(err error) bool {
	var st sqlState
	return errors.As(err, &st) && st.SQLState() == "23505"
}

// The SQLSTATEs ledger_refuse raises (class LR, outside the standard's):
// a balance that may not be negative would be, an account of other
// decimals, a balance past 128 bits.
const (
	refusedInsufficient = "LR001"
	refusedDecimals     = "LR002"
	refusedOverflow     = "LR003"
)

// sumBound is 2^127: a money.Sum lies in [-2^127, 2^127).
const sumBound = "170141183460469231731687303715884105728"

// ledgerAccountsRead reads the accounts of specs, in the order of specs, and
// locks them on PostgreSQL; NOT_FOUND when one is missing.
func (tx *Tx) ledgerAccountsRead(ctx context.Context, s ledger.Scope, k ledger.Kind, specs []ledger.AccountSpec) ([]ledger.Account, error) {
	const op = "store.LedgerAccountsLock"
	// One statement reads (and on Postgres locks) every account. Postgres
	// locks the rows in the order of its ORDER BY, by name in byte order
	// as the callers sort specs, so two movements never wait on each other
	// in a cycle.
	var sel strings.Builder
	sel.WriteString(`SELECT ` + ledgerAccountColumns + ` FROM ledger_accounts
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name IN (`)
	args := make([]any, 0, 4+len(specs))
	args = append(args, s.TenantID, s.WorkspaceID, string(s.Environment), string(k))
	for i, sp := range specs {
		if i > 0 {
			sel.WriteString(", ")
		}
		sel.WriteString("?")
		args = append(args, sp.Name)
	}
	sel.WriteString(")")
	if tx.db.dialect == Postgres {
		sel.WriteString(` ORDER BY name COLLATE "C" FOR UPDATE`)
	}
	rows, err := tx.query(ctx, sel.String(), args...)
	if err != nil {
		return nil, errf(op, err)
	}
	defer rows.Close()
	byName := make(map[string]ledger.Account, len(specs))
	for rows.Next() {
		var row ledgerAccountRow
		if err := rows.Scan(row.fields()...); err != nil {
			return nil, errf(op, err)
		}
		a, err := row.account()
		if err != nil {
			return nil, corrupt(op, err)
		}
		byName[a.Name] = a
	}
	if err := rows.Err(); err != nil {
		return nil, errf(op, err)
	}
	out := make([]ledger.Account, len(specs))
	for i, sp := range specs {
		a, ok := byName[sp.Name]
		if !ok {
			return nil, fault.E(op, fault.NotFound, "")
		}
		out[i] = a
	}
	return out, nil
}

// LedgerAccountsUpdate writes the balances and versions of accounts that
// LedgerAccountsLock read: SQLite's LedgerAccountsApply (PostgreSQL
// changes balances in place instead). Each update compares and sets the
// version the lock read, so a write that skipped the lock fails loudly
// instead of losing a movement.
func (tx *Tx) LedgerAccountsUpdate(ctx context.Context, accounts []ledger.Account) error {
	const op = "store.LedgerAccountsUpdate"
	for _, a := range accounts {
		err := tx.execLater(ctx, func(n int64) error {
			if n != 1 {
				return fault.E(op, fault.Conflict, "The account changed during the movement; retry.").With("account", a.Name)
			}
			return nil
		}, `UPDATE ledger_accounts SET balance = ?, version = ?, updated_at = ?
			WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ? AND name = ? AND version = ?`,
			a.Balance.String(), a.Version, tx.now, a.Scope.TenantID, a.Scope.WorkspaceID, string(a.Scope.Environment),
			string(a.Ledger), a.Name, a.Version-1)
		if fault.Is(err, fault.Conflict) {
			return err
		}
		if err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// LedgerAccountGet implements ledger.Store. The account's row and the
// slots of its spread balance (see LedgerAccountsApply) are read in one
// statement, so one snapshot, and summed in Go: the balance is exact even
// while concurrent movements change the slots or rebalance them. Version
// is the row's and its slots' versions summed.
func (tx *Tx) LedgerAccountGet(ctx context.Context, s ledger.Scope, k ledger.Kind, name string) (ledger.Account, error) {
	const op = "store.LedgerAccountGet"
	rows, err := tx.idb.QueryContext(ctx, `SELECT a.tenant_id, a.workspace_id, a.environment, a.ledger, a.name, a.decimals,
			a.allow_negative, CAST(a.balance AS TEXT), a.version, a.created_at, a.updated_at,
			CAST(sl.balance AS TEXT), sl.version
		FROM ledger_accounts a LEFT JOIN ledger_account_slots sl ON sl.tenant_id = a.tenant_id
			AND sl.workspace_id = a.workspace_id AND sl.environment = a.environment AND sl.ledger = a.ledger AND sl.name = a.name
		WHERE a.tenant_id = ? AND a.workspace_id = ? AND a.environment = ? AND a.ledger = ? AND a.name = ?`,
		s.TenantID, s.WorkspaceID, string(s.Environment), string(k), name)
	if err != nil {
		return ledger.Account{}, errf(op, err)
	}
	defer rows.Close()
	var (
		a     ledger.Account
		found bool
	)
	for rows.Next() {
		var (
			row         ledgerAccountRow
			slotBalance sql.NullString
			slotVersion sql.NullInt64
		)
		if err := rows.Scan(append(row.fields(), &slotBalance, &slotVersion)...); err != nil {
			return ledger.Account{}, errf(op, err)
		}
		if !found {
			if a, err = row.account(); err != nil {
				return ledger.Account{}, corrupt(op, err)
			}
			found = true
		}
		if !slotBalance.Valid {
			continue
		}
		b, err := money.ParseSum(slotBalance.String)
		if err == nil {
			a.Balance, err = a.Balance.Add(b)
		}
		if err != nil {
			return ledger.Account{}, corrupt(op, err)
		}
		a.Version += slotVersion.Int64
	}
	if err := rows.Err(); err != nil {
		return ledger.Account{}, errf(op, err)
	}
	if !found {
		return ledger.Account{}, fault.E(op, fault.NotFound, "")
	}
	return a, nil
}

type ledgerMovementRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	Ledger      string    `bun:"ledger"`
	Type        string    `bun:"type"`
	Reference   string    `bun:"reference"`
	Decimals    int       `bun:"decimals"`
	ActorUserID string    `bun:"actor_user_id"`
	ActorKeyID  string    `bun:"actor_key_id"`
	CreatedAt   time.Time `bun:"created_at"`
}

func (r ledgerMovementRow) posted() ledger.Posted {
	return ledger.Posted{
		ID:     r.ID,
		Scope:  ledger.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment)},
		Ledger: ledger.Kind(r.Ledger), Type: ledger.Type(r.Type), Reference: r.Reference, Decimals: r.Decimals,
		Actor: ledger.Actor{UserID: r.ActorUserID, KeyID: r.ActorKeyID}, CreatedAt: r.CreatedAt.UTC(),
	}
}

type ledgerPostingRow struct {
	MovementID string `bun:"movement_id"`
	Account    string `bun:"account"`
	Direction  string `bun:"direction"`
	Amount     string `bun:"amount"`
}

const ledgerMovementColumns = `id, tenant_id, workspace_id, environment, ledger, type, reference, decimals,
	actor_user_id, actor_key_id, created_at`

// LedgerMovementInsert implements ledger.Store. A fresh movement on
// PostgreSQL is a plain INSERT the pipelining driver may hold until the
// commit: a taken reference is then the server's unique violation, which
// aborts the transaction and comes back as CONFLICT. Otherwise the insert
// skips a taken reference and reports it at once, for Post to look up.
func (tx *Tx) LedgerMovementInsert(ctx context.Context, m ledger.Posted, fresh bool) error {
	const op = "store.LedgerMovementInsert"
	taken := func() error {
		return fault.E(op, fault.Conflict, "The reference was already posted.").With("reference", m.Reference)
	}
	args := []any{m.ID, m.Scope.TenantID, m.Scope.WorkspaceID, string(m.Scope.Environment), string(m.Ledger), string(m.Type),
		m.Reference, m.Decimals, m.Actor.UserID, m.Actor.KeyID, m.CreatedAt}
	const insert = `INSERT INTO ledger_movements (` + ledgerMovementColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if fresh && tx.db.dialect == Postgres {
		err := tx.execHeld(ctx, Held{FailFunc: func(err error) error {
			if uniqueViolation(err) {
				return taken()
			}
			return errf(op, err)
		}}, insert, args...)
		if err != nil {
			return err
		}
	} else {
		res, err := tx.exec(ctx, insert+` ON CONFLICT (tenant_id, workspace_id, environment, reference) DO NOTHING`, args...)
		if err != nil {
			return errf(op, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return taken()
		}
	}
	var q strings.Builder
	args = make([]any, 0, len(m.Postings)*9)
	q.WriteString(`INSERT INTO ledger_postings (movement_id, seq, tenant_id, workspace_id, environment, ledger,
		account, direction, amount) VALUES `)
	for i, p := range m.Postings {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, m.ID, i, m.Scope.TenantID, m.Scope.WorkspaceID, string(m.Scope.Environment), string(m.Ledger),
			p.Account, string(p.Direction), p.Amount.String())
	}
	return errf(op, tx.execLater(ctx, nil, q.String(), args...))
}

// LedgerMovementGet implements ledger.Store.
func (tx *Tx) LedgerMovementGet(ctx context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	return tx.ledgerMovement(ctx, "store.LedgerMovementGet", s, reference, "")
}

// LedgerMovementLock implements ledger.Store: FOR UPDATE on PostgreSQL.
func (tx *Tx) LedgerMovementLock(ctx context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	return tx.ledgerMovement(ctx, "store.LedgerMovementLock", s, reference, tx.rowLock())
}

// ledgerMovement reads the movement with reference and its postings; lock
// is appended to the movement's SELECT.
func (tx *Tx) ledgerMovement(ctx context.Context, op string, s ledger.Scope, reference, lock string) (ledger.Posted, error) {
	var row ledgerMovementRow
	if err := tx.queryRow(ctx, `SELECT `+ledgerMovementColumns+` FROM ledger_movements
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND reference = ?`+lock,
		s.TenantID, s.WorkspaceID, string(s.Environment), reference).Scan(&row.ID, &row.TenantID, &row.WorkspaceID,
		&row.Environment, &row.Ledger, &row.Type, &row.Reference, &row.Decimals, &row.ActorUserID, &row.ActorKeyID,
		&row.CreatedAt); err != nil {
		return ledger.Posted{}, notFound(op, err)
	}
	ms, err := tx.ledgerWithPostings(ctx, []ledgerMovementRow{row})
	if err != nil {
		return ledger.Posted{}, fault.Wrap(op, err)
	}
	return ms[0], nil
}

// LedgerMovementList implements ledger.Store.
func (tx *Tx) LedgerMovementList(ctx context.Context, p ledger.ListParams) ([]ledger.Posted, error) {
	const op = "store.LedgerMovementList"
	q := `SELECT ` + ledgerMovementColumns + ` FROM ledger_movements
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ?`
	args := []any{p.Scope.TenantID, p.Scope.WorkspaceID, string(p.Scope.Environment)}
	if len(p.Ledgers) > 0 {
		ls := make([]string, len(p.Ledgers))
		for i, l := range p.Ledgers {
			ls[i] = string(l)
		}
		q += ` AND ledger IN (?)`
		args = append(args, bun.In(ls))
	}
	if p.ActorUserID != "" {
		q += ` AND actor_user_id = ?`
		args = append(args, p.ActorUserID)
	}
	if p.Before != "" {
		q += ` AND id < ?`
		args = append(args, p.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, p.Limit)
	var rows []ledgerMovementRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	ms, err := tx.ledgerWithPostings(ctx, rows)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return ms, nil
}

// ledgerWithPostings converts movement rows and reads their postings in one
// query.
func (tx *Tx) ledgerWithPostings(ctx context.Context, rows []ledgerMovementRow) ([]ledger.Posted, error) {
	out := make([]ledger.Posted, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		out[i] = r.posted()
		ids[i] = r.ID
		at[r.ID] = i
	}
	var ps []ledgerPostingRow
	if err := tx.idb.NewRaw(`SELECT movement_id, account, direction, CAST(amount AS TEXT) AS amount
		FROM ledger_postings WHERE movement_id IN (?) ORDER BY movement_id, seq`, bun.In(ids)).Scan(ctx, &ps); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.ledgerWithPostings", err)
	}
	for _, p := range ps {
		amt, err := money.ParseAtomic(p.Amount)
		if err != nil {
			return nil, corrupt("store.ledgerWithPostings", err)
		}
		i := at[p.MovementID]
		out[i].Postings = append(out[i].Postings, ledger.Posting{Account: p.Account, Direction: ledger.Direction(p.Direction), Amount: amt})
	}
	return out, nil
}

// LedgerPostingSums implements ledger.Store: it reads every posting of the
// ledger in the scope and sums credits minus debits per account in Go.
func (tx *Tx) LedgerPostingSums(ctx context.Context, s ledger.Scope, k ledger.Kind) (map[string]money.Sum, error) {
	const op = "store.LedgerPostingSums"
	rows, err := tx.idb.QueryContext(ctx, `SELECT account, direction, CAST(amount AS TEXT) FROM ledger_postings
		WHERE tenant_id = ? AND workspace_id = ? AND environment = ? AND ledger = ?`,
		s.TenantID, s.WorkspaceID, string(s.Environment), string(k))
	if err != nil {
		return nil, errf(op, err)
	}
	defer rows.Close()
	sums := map[string]money.Sum{}
	for rows.Next() {
		var account, dir, amount string
		if err := rows.Scan(&account, &dir, &amount); err != nil {
			return nil, errf(op, err)
		}
		a, err := money.ParseAtomic(amount)
		if err != nil {
			return nil, corrupt(op, err)
		}
		if ledger.Direction(dir) == ledger.Debit {
			sums[account], err = sums[account].SubAtomic(a)
		} else {
			sums[account], err = sums[account].AddAtomic(a)
		}
		if err != nil {
			return nil, corrupt(op, err)
		}
	}
	return sums, errf(op, rows.Err())
}
