package swaptest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

// accountKey names a ledger account: its scope, ledger and name.
type accountKey struct {
	scope ledger.Scope
	kind  ledger.Kind
	name  string
}

// movementKey names a movement: its scope and business reference.
type movementKey struct {
	scope     ledger.Scope
	reference string
}

// NewID implements ledger.Mover: prefix and a number no other NewID of
// the store returned, zero-padded so that later ids sort after earlier
// ones.
func (v *view) NewID(prefix string) string {
	return fmt.Sprintf("%s%020d", prefix, v.s.ids.Add(1))
}

// LedgerAccountsApply implements ledger.Mover: it opens the accounts of
// changes that do not exist (balance zero, at the unit's time) and
// applies each change in the order given by ledger.ApplyChanges's rule.
// A change the rule refuses fails the call with the rule's error and
// leaves every account as it was. An account is held whole, whatever its
// Spread: the store runs one unit of work at a time.
func (v *view) LedgerAccountsApply(ctx context.Context, s ledger.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	return v.write(ctx, func(d *data, now time.Time) error {
		now = now.UTC()
		changed := map[accountKey]ledger.Account{}
		for _, c := range changes {
			key := accountKey{s, k, c.Name}
			a, ok := changed[key]
			if !ok {
				a, ok = d.accounts[key]
			}
			if !ok {
				a = ledger.Account{Scope: s, Ledger: k, Name: c.Name, Decimals: c.Decimals, AllowNegative: c.AllowNegative,
					CreatedAt: now, UpdatedAt: now}
			}
			one := []ledger.Account{a}
			if err := ledger.ApplyChanges(one, []ledger.AccountChange{c}, insufficient); err != nil {
				return err
			}
			one[0].UpdatedAt = now
			changed[key] = one[0]
		}
		maps.Copy(d.accounts, changed)
		return nil
	})
}

// LedgerAccountGet implements ledger.Store: NOT_FOUND for an account
// never posted to, or another scope's.
func (v *view) LedgerAccountGet(_ context.Context, s ledger.Scope, k ledger.Kind, name string) (out ledger.Account, err error) {
	err = v.read(func(d *data) error {
		a, ok := d.accounts[accountKey{s, k, name}]
		if !ok {
			return notFound("swaptest.LedgerAccountGet", "The ledger account")
		}
		out = a
		return nil
	})
	return out, err
}

// LedgerMovementInsert implements ledger.Mover: m and its postings are
// stored as given. A reference taken in m's scope, or a taken id, is
// CONFLICT; fresh changes nothing here, since the store reports at once.
func (v *view) LedgerMovementInsert(ctx context.Context, m ledger.Posted, _ bool) error {
	const op = "swaptest.LedgerMovementInsert"
	m = copyMovement(m)
	return v.write(ctx, func(d *data, _ time.Time) error {
		key := movementKey{m.Scope, m.Reference}
		if _, ok := d.movements[key]; ok {
			return conflict(op, "The reference was already posted.").With("reference", m.Reference)
		}
		if d.moveIDs[m.ID] {
			return conflict(op, "The movement already exists.").With("id", m.ID)
		}
		d.movements[key] = m
		d.moveIDs[m.ID] = true
		return nil
	})
}

// LedgerMovementGet implements ledger.Mover: NOT_FOUND when the scope
// has no movement with reference.
func (v *view) LedgerMovementGet(_ context.Context, s ledger.Scope, reference string) (out ledger.Posted, err error) {
	err = v.read(func(d *data) error {
		m, ok := d.movements[movementKey{s, reference}]
		if !ok {
			return notFound("swaptest.LedgerMovementGet", "The ledger movement")
		}
		out = copyMovement(m)
		return nil
	})
	return out, err
}

// LedgerMovementLock implements ledger.Mover: LedgerMovementGet, since
// units of work never overlap.
func (v *view) LedgerMovementLock(ctx context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	return v.LedgerMovementGet(ctx, s, reference)
}

// LedgerMovementList implements ledger.Store: the scope's movements that
// p selects, highest id first, at most p.Limit.
func (v *view) LedgerMovementList(_ context.Context, p ledger.ListParams) (out []ledger.Posted, err error) {
	err = v.read(func(d *data) error {
		out = []ledger.Posted{}
		for _, m := range d.movements {
			if m.Scope == p.Scope && (len(p.Ledgers) == 0 || slices.Contains(p.Ledgers, m.Ledger)) &&
				(p.ActorUserID == "" || m.Actor.UserID == p.ActorUserID) && (p.Before == "" || m.ID < p.Before) {
				out = append(out, copyMovement(m))
			}
		}
		slices.SortFunc(out, func(a, b ledger.Posted) int { return strings.Compare(b.ID, a.ID) })
		out = out[:max(0, min(len(out), p.Limit))]
		return nil
	})
	return out, err
}

// LedgerPostingSums implements ledger.Store: credits minus debits of
// every account of the ledger in the scope, over all its postings.
func (v *view) LedgerPostingSums(_ context.Context, s ledger.Scope, k ledger.Kind) (sums map[string]money.Sum, err error) {
	err = v.read(func(d *data) error {
		sums = map[string]money.Sum{}
		for _, m := range d.movements {
			if m.Scope != s || m.Ledger != k {
				continue
			}
			for _, p := range m.Postings {
				sum := sums[p.Account]
				var err error
				if p.Direction == ledger.Credit {
					sum, err = sum.AddAtomic(p.Amount)
				} else {
					sum, err = sum.SubAtomic(p.Amount)
				}
				if err != nil {
					return fault.Wrap("swaptest.LedgerPostingSums", err)
				}
				sums[p.Account] = sum
			}
		}
		return nil
	})
	return sums, err
}

// copyMovement returns a movement that shares nothing with m, its time in
// UTC.
func copyMovement(m ledger.Posted) ledger.Posted {
	m.Postings = slices.Clone(m.Postings)
	m.CreatedAt = m.CreatedAt.UTC()
	return m
}
