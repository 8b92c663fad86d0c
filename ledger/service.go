package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// Service posts movements and reads ledgers. It holds no state; one value
// serves every request.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// MaxPostings bounds the postings of one movement.
const MaxPostings = 32

// maxReference bounds a reference's length.
const maxReference = 200

// validate checks a movement's shape: ledger, type, reference, decimals,
// postings (known directions, positive amounts, distinct accounts, at least
// one debit and one credit) and balance.
func validate(op string, m Movement) error {
	switch {
	case m.Scope.TenantID == "" || m.Scope.WorkspaceID == "" || !m.Scope.Environment.Valid():
		return fault.Invalid(op, "scope", "The movement needs a tenant, workspace and environment.")
	case !m.Ledger.Valid():
		return fault.Invalid(op, "ledger", "Unknown ledger.")
	case !m.Type.Valid():
		return fault.Invalid(op, "type", "Unknown movement type.")
	case m.Reference == "" || len(m.Reference) > maxReference || strings.TrimSpace(m.Reference) != m.Reference:
		return fault.Invalid(op, "reference", "The reference must be 1 to 200 characters without surrounding spaces.")
	case m.Decimals < 0 || m.Decimals > money.MaxDecimals:
		return fault.Invalid(op, "decimals", "decimals must be from 0 to 19.")
	case len(m.Postings) < 2 || len(m.Postings) > MaxPostings:
		return fault.Invalid(op, "postings", "A movement has 2 to 32 postings.")
	case m.InsufficientCode != "" && !slices.Contains(fault.Codes(), m.InsufficientCode):
		return fault.Invalid(op, "insufficientCode", "Unknown error code.")
	}
	var debits, credits money.Sum
	seen := map[string]bool{}
	for i, p := range m.Postings {
		field := "postings[" + strconv.Itoa(i) + "]"
		switch {
		case p.Account == "" || len(p.Account) > maxReference:
			return fault.Invalid(op, field+".account", "The account name must be 1 to 200 characters.")
		case seen[p.Account]:
			return fault.Invalid(op, field+".account", "An account appears once per movement.")
		case !p.Direction.Valid():
			return fault.Invalid(op, field+".direction", "direction must be debit or credit.")
		case p.Amount == 0:
			return fault.E(op, fault.InvalidAmount, "A posting's amount must be positive.").With("field", field+".amountAtomic")
		}
		seen[p.Account] = true
		var err error
		if p.Direction == Debit {
			debits, err = debits.AddAtomic(p.Amount)
		} else {
			credits, err = credits.AddAtomic(p.Amount)
		}
		if err != nil {
			return money.WithField(fault.Wrap(op, err), field+".amountAtomic")
		}
	}
	if debits.IsZero() || credits.IsZero() {
		return fault.Invalid(op, "postings", "A movement needs at least one debit and one credit.")
	}
	if debits.Cmp(credits) != 0 {
		return fault.E(op, fault.InvalidAmount, "The movement is not balanced: debits and credits differ.").
			With("field", "postings").With("debits", debits.String()).With("credits", credits.String())
	}
	return nil
}

// sorted returns postings ordered by account name.
func sorted(ps []Posting) []Posting {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b Posting) int { return strings.Compare(a.Account, b.Account) })
	return out
}

// sameContent reports whether an existing movement is a replay of m: same
// ledger, type, decimals and postings (in any order). The actor may differ: a
// retry by another worker is still the same movement.
func sameContent(p Posted, m Movement) bool {
	return p.Ledger == m.Ledger && p.Type == m.Type && p.Decimals == m.Decimals &&
		slices.Equal(sorted(p.Postings), sorted(m.Postings))
}

// movementPayload is the outbox payload of EventMovementPosted.
type movementPayload struct {
	MovementID string    `json:"movementId"`
	Ledger     Kind      `json:"ledger"`
	Type       Type      `json:"type"`
	Reference  string    `json:"reference"`
	Decimals   int       `json:"decimals"`
	Postings   []Posting `json:"postings"`
	Actor      Actor     `json:"actor"`
}

// Post writes movement m once. It returns the posted movement and whether
// this call created it: a movement with m's reference already in the scope
// is returned with created=false when its content (ledger, type, decimals,
// postings) equals m's, and is CONFLICT otherwise.
//
// Errors: INVALID_INPUT or INVALID_AMOUNT for a malformed or unbalanced
// movement (details.field names the part); CONFLICT for a reference taken by
// other content, or an account opened with other decimals;
// INSUFFICIENT_CREDITS (or m.InsufficientCode) when a debit would take an
// account that may not go negative below zero (details.account). After an
// error the movement may be partly written: the caller's unit of work must
// fail (roll back) with it, as every unit of work that returns the error
// does. On a store that pipelines its writes (PostgreSQL), the balance
// check and a Fresh movement's reference are decided by the database, and
// their errors can come from a later statement of the unit of work or from
// its commit instead of from Post: a caller cannot catch them to go on in
// the same unit of work.
func (s *Service) Post(ctx context.Context, st Mover, m Movement) (Posted, bool, error) {
	const op = "ledger.Post"
	out, changes, err := s.write(ctx, st, op, m)
	if err != nil || changes == nil {
		return out, false, err
	}
	if err := st.LedgerAccountsApply(ctx, m.Scope, m.Ledger, changes, insufficientCode(m)); err != nil {
		return Posted{}, false, fault.Wrap(op, err)
	}
	return out, true, nil
}

// insufficientCode is the code of m's refused debit.
func insufficientCode(m Movement) fault.Code {
	if m.InsufficientCode == "" {
		return fault.InsufficientCredits
	}
	return m.InsufficientCode
}

// changesOf returns the account changes of postings, in the order given.
func changesOf(ps []Posting, decimals int) []AccountChange {
	changes := make([]AccountChange, len(ps))
	for i, p := range ps {
		d := money.SumOf(p.Amount)
		if p.Direction == Debit {
			d, _ = d.Neg() // an Atomic's negation always fits
		}
		changes[i] = AccountChange{AccountSpec: AccountSpec{Name: p.Account, Decimals: decimals,
			AllowNegative: AllowsNegative(p.Account), Spread: spreadable(p.Account)}, Delta: d}
	}
	return changes
}

// spreadable is SpreadOf, for accounts that may not go negative.
func spreadable(name string) Spread {
	if AllowsNegative(name) {
		return SpreadNone
	}
	return SpreadOf(name)
}

// write is Post but for the balances: it validates m and writes it once,
// with its event, and returns the movement and, when this call created it,
// the account changes (sorted by name) still to apply. A replay returns
// the earlier movement and no changes.
func (s *Service) write(ctx context.Context, st Mover, op string, m Movement) (Posted, []AccountChange, error) {
	if err := validate(op, m); err != nil {
		return Posted{}, nil, err
	}
	changes := changesOf(sorted(m.Postings), m.Decimals)
	// Write first, lock last: the accounts (a workspace's credit balance is
	// contended by every operation of the workspace) stay locked only for
	// the balance change and the commit. Two posts of one movement meet at
	// the reference's unique index: the second waits there until the first
	// commits and then finds it.
	out := Posted{ID: st.NewID("mov_"), Scope: m.Scope, Ledger: m.Ledger, Type: m.Type, Reference: m.Reference,
		Decimals: m.Decimals, Postings: slices.Clone(m.Postings), Actor: m.Actor, CreatedAt: st.Now()}
	if err := st.LedgerMovementInsert(ctx, out, m.Fresh); err != nil {
		if !fault.Is(err, fault.Conflict) || m.Fresh {
			return Posted{}, nil, fault.Wrap(op, err)
		}
		prev, err := st.LedgerMovementGet(ctx, m.Scope, m.Reference)
		if err != nil {
			return Posted{}, nil, fault.Wrap(op, err)
		}
		if !sameContent(prev, m) {
			return Posted{}, nil, fault.E(op, fault.Conflict, "The reference was already posted with other content.").
				With("reference", m.Reference)
		}
		return prev, nil, nil
	}
	payload, err := json.Marshal(movementPayload{MovementID: out.ID, Ledger: out.Ledger, Type: out.Type,
		Reference: out.Reference, Decimals: out.Decimals, Postings: out.Postings, Actor: out.Actor})
	if err != nil {
		return Posted{}, nil, fault.Wrap(op, err)
	}
	if _, err := st.OutboxInsert(ctx, outbox.Event{TenantID: m.Scope.TenantID, WorkspaceID: m.Scope.WorkspaceID,
		Environment: string(m.Scope.Environment), Type: EventMovementPosted, AggregateID: out.ID, AggregateVersion: 1,
		Payload: payload}); err != nil {
		return Posted{}, nil, fault.Wrap(op, err)
	}
	return out, changes, nil
}

// merged returns the changes of a and b as one change per account, sorted
// by name: the deltas of an account in both are added.
func merged(a, b []AccountChange) ([]AccountChange, error) {
	out := slices.Clone(a)
	for _, c := range b {
		i := slices.IndexFunc(out, func(o AccountChange) bool { return o.Name == c.Name })
		if i < 0 {
			out = append(out, c)
			continue
		}
		d, err := out[i].Delta.Add(c.Delta)
		if err != nil {
			return nil, err
		}
		out[i].Delta = d
	}
	slices.SortFunc(out, func(x, y AccountChange) int { return strings.Compare(x.Name, y.Name) })
	return out, nil
}

// ApplyChanges applies changes to accounts, the same accounts in the same
// order, the rule every Store keeps: each change adds its Delta to the
// balance and counts one more version. It fails, leaving accounts partly
// changed, with CONFLICT when an account holds amounts of other decimals
// than its change (ErrOtherDecimals), with insufficient when a balance that
// may not be negative would become so (ErrInsufficient), and with
// INVALID_AMOUNT (reason overflow) past 128 bits.
func ApplyChanges(accounts []Account, changes []AccountChange, insufficient fault.Code) error {
	for i, c := range changes {
		a := &accounts[i]
		if a.Decimals != c.Decimals {
			return ErrOtherDecimals(a.Name)
		}
		b, err := a.Balance.Add(c.Delta)
		if err != nil {
			return fault.Wrap("ledger.ApplyChanges", err)
		}
		if b.Negative() && !a.AllowNegative {
			return ErrInsufficient(insufficient, a.Name)
		}
		a.Balance = b
		a.Version++
	}
	return nil
}

// ErrInsufficient is the error of a change that would take account, which
// may not go negative, below zero: code, with details.account.
func ErrInsufficient(code fault.Code, account string) error {
	return fault.E("ledger.Post", code, "The balance does not cover the amount.").With("account", account)
}

// ErrOtherDecimals is the error of a change to account made in other
// decimals than the account holds: CONFLICT.
func ErrOtherDecimals(account string) error {
	return fault.E("ledger.Post", fault.Conflict, "The account holds amounts of other decimals.").With("account", account)
}

// Balance returns an account and its balance. An account that was never
// posted to is NOT_FOUND: the caller decides whether that means zero.
func (s *Service) Balance(ctx context.Context, st Store, sc Scope, k Kind, name string) (Account, error) {
	a, err := st.LedgerAccountGet(ctx, sc, k, name)
	if err != nil {
		return Account{}, fault.Wrap("ledger.Balance", err)
	}
	return a, nil
}

// List returns a page of movements, newest first, and whether more follow.
// p.Limit must be positive.
func (s *Service) List(ctx context.Context, st Store, p ListParams) ([]Posted, bool, error) {
	const op = "ledger.List"
	if p.Limit < 1 {
		return nil, false, fault.Invalid(op, "limit", "limit must be positive.")
	}
	want := p.Limit
	p.Limit++
	ms, err := st.LedgerMovementList(ctx, p)
	if err != nil {
		return nil, false, fault.Wrap(op, err)
	}
	if len(ms) > want {
		return ms[:want], true, nil
	}
	return ms, false, nil
}

// Drift is an account whose stored balance differs from the sum of its
// postings.
type Drift struct {
	Account  string
	Balance  money.Sum
	Postings money.Sum
}

// Audit compares every account's stored balance in a ledger with the sum of
// its postings, computed in Go, and returns the accounts that differ (none
// when the ledger is sound). Differences are reported, never corrected
// (spec, Errors 5).
func (s *Service) Audit(ctx context.Context, st Store, sc Scope, k Kind, accounts []string) ([]Drift, error) {
	const op = "ledger.Audit"
	sums, err := st.LedgerPostingSums(ctx, sc, k)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	var out []Drift
	for _, name := range accounts {
		a, err := st.LedgerAccountGet(ctx, sc, k, name)
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if sum := sums[name]; sum.Cmp(a.Balance) != 0 {
			out = append(out, Drift{Account: name, Balance: a.Balance, Postings: sum})
		}
	}
	return out, nil
}

// CreditsInput is one credit movement of a workspace.
type CreditsInput struct {
	Scope Scope
	// Ref makes the reference: the grant's business key for Grant
	// ("ws_x:2026-01" gives "grant:ws_x:2026-01"), the operation id for
	// Reserve, Settle and Release ("op_123" gives "reserve:op_123").
	Ref    string
	Amount money.Atomic
	Actor  Actor
	// Fresh is Movement.Fresh: the Ref names something created in the
	// caller's unit of work, so no earlier movement can carry it.
	Fresh bool
}

// credits posts a two-legged credits movement from one account to another.
func (s *Service) credits(ctx context.Context, st Mover, op string, t Type, in CreditsInput, from, to string) (Posted, bool, error) {
	if in.Ref == "" {
		return Posted{}, false, fault.Invalid(op, "ref", "The reference key is required.")
	}
	p, created, err := s.Post(ctx, st, s.creditsMovement(t, in, from, to))
	if err != nil {
		return Posted{}, false, fault.Wrap(op, err)
	}
	return p, created, nil
}

// creditsMovement is the two-legged credits movement of t from one account
// to another.
func (s *Service) creditsMovement(t Type, in CreditsInput, from, to string) Movement {
	return Movement{Scope: in.Scope, Ledger: Credits, Type: t, Reference: string(t) + ":" + in.Ref,
		Decimals: CreditsDecimals, Actor: in.Actor, Fresh: in.Fresh, Postings: []Posting{
			{Account: from, Direction: Debit, Amount: in.Amount},
			{Account: to, Direction: Credit, Amount: in.Amount},
		}}
}

// Grant adds in.Amount credits to the workspace balance from system:grants,
// once per in.Ref (reference "grant:<ref>").
func (s *Service) Grant(ctx context.Context, st Mover, in CreditsInput) (Posted, bool, error) {
	return s.credits(ctx, st, "ledger.Grant", TypeGrant, in, AccountSystemGrants, AccountWorkspaceCredits)
}

// Reserve moves in.Amount credits from the workspace balance to the
// workspace's reserved balance (AccountWorkspaceReserved), once per
// operation (reference "reserve:<op>"). INSUFFICIENT_CREDITS when the
// balance does not cover it.
func (s *Service) Reserve(ctx context.Context, st Mover, in CreditsInput) (Posted, bool, error) {
	return s.credits(ctx, st, "ledger.Reserve", TypeReserve, in, AccountWorkspaceCredits, AccountWorkspaceReserved)
}

// Settle consumes in.Amount of the operation's reservation (to
// system:consumed), once per operation (reference "settle:<op>").
// INSUFFICIENT_CREDITS when the operation has no reservation or what is
// left of it (less its release) does not cover the amount. A unit of work
// that also releases the rest uses SettleAndRelease.
func (s *Service) Settle(ctx context.Context, st Mover, in CreditsInput) (Posted, bool, error) {
	const op = "ledger.Settle"
	return s.end(ctx, st, op, TypeSettle, in)
}

// Release returns in.Amount of the operation's reservation to the workspace
// balance, once per operation (reference "release:<op>"). After a partial
// Settle, Release returns the remainder. INSUFFICIENT_CREDITS when the
// operation has no reservation or what is left of it (less its settle)
// does not cover the amount.
func (s *Service) Release(ctx context.Context, st Mover, in CreditsInput) (Posted, bool, error) {
	const op = "ledger.Release"
	return s.end(ctx, st, op, TypeRelease, in)
}

// end posts a settle or a release (t) of in.Amount from the operation's
// reservation, once.
func (s *Service) end(ctx context.Context, st Mover, op string, t Type, in CreditsInput) (Posted, bool, error) {
	hold, reserved, err := s.reservation(ctx, st, op, in)
	if err != nil {
		return Posted{}, false, err
	}
	if err := s.cover(ctx, st, op, t, in, hold, reserved); err != nil {
		return Posted{}, false, err
	}
	from, to := s.legs(t, hold)
	return s.credits(ctx, st, op, t, in, from, to)
}

// SettleAndRelease ends an operation's reservation in one unit of work:
// it settles in.Amount of it (as Settle, when in.Amount is positive) and
// releases rest (as Release, when rest is positive), each once.
//
// It writes both movements first and then changes the balances of the
// accounts they touch once each, in name order, as one movement would:
// posted one after the other, the settle would change the reserved account
// before the workspace balance that the release then needs, the reverse of
// a reservation's order, so an operation ending beside a reservation in
// the same workspace could wait on it in a cycle; and a store that spreads
// the reserved account (Spread) would change it twice.
func (s *Service) SettleAndRelease(ctx context.Context, st Mover, in CreditsInput, rest money.Atomic) error {
	const op = "ledger.SettleAndRelease"
	if in.Amount == 0 && rest == 0 {
		return nil
	}
	hold, reserved, err := s.reservation(ctx, st, op, in)
	if err != nil {
		return err
	}
	var changes []AccountChange
	if in.Amount > 0 {
		if changes, err = s.spend(ctx, st, op, TypeSettle, in, hold, reserved); err != nil {
			return err
		}
	}
	if rest > 0 {
		in.Amount = rest
		more, err := s.spend(ctx, st, op, TypeRelease, in, hold, reserved)
		if err != nil {
			return err
		}
		if changes, err = merged(changes, more); err != nil {
			return fault.Wrap(op, err)
		}
	}
	if len(changes) == 0 {
		return nil // both were posted before
	}
	if err := st.LedgerAccountsApply(ctx, in.Scope, Credits, changes, fault.InsufficientCredits); err != nil {
		return fault.Wrap(op, err)
	}
	return nil
}

// uncovered is the error of a settle or release its reservation does not
// cover.
func uncovered(op, ref string) *fault.Error {
	return fault.E(op, fault.InsufficientCredits, "The operation has no reservation that covers the amount.").
		With("reference", string(TypeReserve)+":"+ref)
}

// reservation locks the reserve movement of the operation in.Ref and returns
// the account that holds it (the account it credited:
// AccountWorkspaceReserved, or an operation's own account for reservations
// written before it) and its amount. The lock makes a settle and a release
// of one operation check what is left of it one after the other, so they
// never both spend the same rest.
//
// The lock is taken before the accounts' locks, so a unit of work may
// settle and release the reservation of one operation only: a unit that
// holds the accounts and then waits for a second operation's reservation
// can wait on a unit that holds that reservation and waits for the
// accounts. Every caller (the end of one operation) keeps to this.
func (s *Service) reservation(ctx context.Context, st Mover, op string, in CreditsInput) (string, money.Atomic, error) {
	if in.Ref == "" {
		return "", 0, fault.Invalid(op, "ref", "The reference key is required.")
	}
	r, err := st.LedgerMovementLock(ctx, in.Scope, string(TypeReserve)+":"+in.Ref)
	if fault.Is(err, fault.NotFound) {
		return "", 0, uncovered(op, in.Ref)
	}
	if err != nil {
		return "", 0, fault.Wrap(op, err)
	}
	hold, reserved := credited(r)
	if hold == "" || r.Type != TypeReserve || r.Ledger != Credits {
		return "", 0, fault.Wrap(op, fmt.Errorf("reservation %s is not a credits reservation", r.Reference))
	}
	return hold, reserved, nil
}

// cover checks that what is left of the reservation of reserved held on
// hold, less the operation's other movement on it (its release for a
// settle, its settle for a release), covers a settle or a release (t) of
// in.Amount. A replay of t itself is not counted against itself.
func (s *Service) cover(ctx context.Context, st Mover, op string, t Type, in CreditsInput, hold string, reserved money.Atomic) error {
	other := TypeRelease
	if t == TypeRelease {
		other = TypeSettle
	}
	left := reserved
	used, err := st.LedgerMovementGet(ctx, in.Scope, string(other)+":"+in.Ref)
	switch {
	case err == nil:
		_, amount := credited(used)
		if left, err = left.Sub(amount); err != nil {
			return fault.Wrap(op, fmt.Errorf("reservation of %s is overspent", in.Ref))
		}
	case !fault.Is(err, fault.NotFound):
		return fault.Wrap(op, err)
	}
	if in.Amount > left {
		return uncovered(op, in.Ref).With("account", hold)
	}
	return nil
}

// legs returns the accounts a settle or a release (t) of a reservation
// held on hold debits and credits.
func (s *Service) legs(t Type, hold string) (from, to string) {
	if t == TypeRelease {
		return hold, AccountWorkspaceCredits
	}
	return hold, AccountSystemConsumed
}

// spend writes a settle or a release (t) of in.Amount from the reservation
// held on hold, once it has checked that the reservation covers it (cover),
// and returns the account changes still to apply (none for a replay).
func (s *Service) spend(ctx context.Context, st Mover, op string, t Type, in CreditsInput, hold string, reserved money.Atomic) ([]AccountChange, error) {
	if err := s.cover(ctx, st, op, t, in, hold, reserved); err != nil {
		return nil, err
	}
	from, to := s.legs(t, hold)
	_, changes, err := s.write(ctx, st, op, s.creditsMovement(t, in, from, to))
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	return changes, nil
}

// credited returns the account a two-legged movement credits and the
// amount.
func credited(m Posted) (string, money.Atomic) {
	for _, p := range m.Postings {
		if p.Direction == Credit {
			return p.Account, p.Amount
		}
	}
	return "", 0
}
