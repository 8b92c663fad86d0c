package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// memLedger is an in-memory ledger.Store whose units of work (run) keep
// their writes only when they succeed, as a database's transactions do.
// Balances follow ledger.ApplyChanges, the rule every store keeps.
type memLedger struct {
	now      time.Time
	ids      int
	accounts map[string]ledger.Account
	moves    map[string]ledger.Posted
	events   []outbox.Event
}

var _ ledger.Store = (*memLedger)(nil)

func newMemLedger() *memLedger {
	return &memLedger{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		accounts: map[string]ledger.Account{}, moves: map[string]ledger.Posted{}}
}

// run runs fn as one unit of work: when fn fails, every write it made is
// undone and its error returned.
func (m *memLedger) run(fn func(st ledger.Store) error) error {
	accounts, moves, events := maps.Clone(m.accounts), maps.Clone(m.moves), slices.Clone(m.events)
	if err := fn(m); err != nil {
		m.accounts, m.moves, m.events = accounts, moves, events
		return err
	}
	return nil
}

func accountKey(s ledger.Scope, k ledger.Kind, name string) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", s.TenantID, s.WorkspaceID, s.Environment, k, name)
}

func moveKey(s ledger.Scope, ref string) string {
	return fmt.Sprintf("%s|%s|%s|%s", s.TenantID, s.WorkspaceID, s.Environment, ref)
}

func (m *memLedger) Now() time.Time { return m.now }

func (m *memLedger) NewID(prefix string) string {
	m.ids++
	return fmt.Sprintf("%s%04d", prefix, m.ids)
}

func (m *memLedger) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	if e.ID == "" {
		e.ID = m.NewID("evt_")
	}
	m.events = append(m.events, e)
	return e, nil
}

func (m *memLedger) LedgerAccountsLock(_ context.Context, s ledger.Scope, k ledger.Kind, specs []ledger.AccountSpec) ([]ledger.Account, error) {
	out := make([]ledger.Account, len(specs))
	for i, sp := range specs {
		key := accountKey(s, k, sp.Name)
		a, ok := m.accounts[key]
		if !ok {
			a = ledger.Account{Scope: s, Ledger: k, Name: sp.Name, Decimals: sp.Decimals, AllowNegative: sp.AllowNegative,
				CreatedAt: m.now, UpdatedAt: m.now}
			m.accounts[key] = a
		}
		out[i] = a
	}
	return out, nil
}

func (m *memLedger) LedgerAccountsApply(ctx context.Context, s ledger.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	specs := make([]ledger.AccountSpec, len(changes))
	for i, c := range changes {
		specs[i] = c.AccountSpec
	}
	accounts, err := m.LedgerAccountsLock(ctx, s, k, specs)
	if err != nil {
		return err
	}
	if err := ledger.ApplyChanges(accounts, changes, insufficient); err != nil {
		return err
	}
	for _, a := range accounts {
		a.UpdatedAt = m.now
		m.accounts[accountKey(s, k, a.Name)] = a
	}
	return nil
}

func (m *memLedger) LedgerAccountGet(_ context.Context, s ledger.Scope, k ledger.Kind, name string) (ledger.Account, error) {
	a, ok := m.accounts[accountKey(s, k, name)]
	if !ok {
		return ledger.Account{}, fault.E("mem.LedgerAccountGet", fault.NotFound, "")
	}
	return a, nil
}

func (m *memLedger) LedgerMovementGet(_ context.Context, s ledger.Scope, ref string) (ledger.Posted, error) {
	p, ok := m.moves[moveKey(s, ref)]
	if !ok {
		return ledger.Posted{}, fault.E("mem.LedgerMovementGet", fault.NotFound, "")
	}
	return p, nil
}

// LedgerMovementLock is LedgerMovementGet: units of work of the fake never
// overlap.
func (m *memLedger) LedgerMovementLock(ctx context.Context, s ledger.Scope, ref string) (ledger.Posted, error) {
	return m.LedgerMovementGet(ctx, s, ref)
}

func (m *memLedger) LedgerMovementInsert(_ context.Context, p ledger.Posted, _ bool) error {
	key := moveKey(p.Scope, p.Reference)
	if _, ok := m.moves[key]; ok {
		return fault.E("mem.LedgerMovementInsert", fault.Conflict, "")
	}
	m.moves[key] = p
	return nil
}

func (m *memLedger) LedgerMovementList(_ context.Context, p ledger.ListParams) ([]ledger.Posted, error) {
	var out []ledger.Posted
	for _, mv := range m.moves {
		if mv.Scope == p.Scope && (p.Before == "" || mv.ID < p.Before) &&
			(len(p.Ledgers) == 0 || slices.Contains(p.Ledgers, mv.Ledger)) && (p.ActorUserID == "" || mv.Actor.UserID == p.ActorUserID) {
			out = append(out, mv)
		}
	}
	slices.SortFunc(out, func(a, b ledger.Posted) int { return strings.Compare(b.ID, a.ID) })
	return out[:min(len(out), p.Limit)], nil
}

func (m *memLedger) LedgerPostingSums(_ context.Context, s ledger.Scope, k ledger.Kind) (map[string]money.Sum, error) {
	sums := map[string]money.Sum{}
	for _, mv := range m.moves {
		if mv.Scope != s || mv.Ledger != k {
			continue
		}
		for _, p := range mv.Postings {
			var err error
			if p.Direction == ledger.Credit {
				sums[p.Account], err = sums[p.Account].AddAtomic(p.Amount)
			} else {
				sums[p.Account], err = sums[p.Account].SubAtomic(p.Amount)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return sums, nil
}

// balance is an account's balance as a string, "" when it was never opened.
func (m *memLedger) balance(t *testing.T, s ledger.Scope, k ledger.Kind, name string) string {
	t.Helper()
	a, err := m.LedgerAccountGet(context.Background(), s, k, name)
	if fault.Is(err, fault.NotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance.String()
}
