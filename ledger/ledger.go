// Package ledger owns the platform's double-entry ledgers: accounts with
// integer atomic balances and explicit decimals, and movements, each a set of
// balanced postings keyed by a unique business reference.
//
// It enforces the design's ledger rules and the spec's money invariants:
//
//   - Amounts are money.Atomic integers with explicit decimals; balances and
//     sums are money.Sum, computed in Go. Floats never touch them (spec,
//     Invariant 3).
//   - Customer platform credits (Credits) and provider cost (ProviderCost)
//     are separate ledgers; a movement posts within one ledger only, so
//     provider consumption is never subtracted from a customer's credits
//     (spec, Music generation).
//   - Every movement is balanced: its debits equal its credits.
//   - A movement happens once: its reference ("reserve:op_123") is unique in
//     its tenant, workspace and environment. Posting the same reference again
//     with the same content returns the first movement (created=false);
//     posting it with other content is CONFLICT. So reserve, settle, release
//     and grant happen exactly once under any retry or race (spec, States:
//     "settles reserved credits exactly once").
//   - An operation's settle and release together never exceed its
//     reservation: both read the reservation's movement, locked, and check
//     what is left of it, although every reservation of a workspace is held
//     on one account (AccountWorkspaceReserved).
//   - A debit that would take an account that may not go negative below zero
//     fails with INSUFFICIENT_CREDITS (or the code the movement names). Only
//     system accounts (names starting "system:") may go negative; they are the
//     sources and sinks of value.
//   - Every movement is written through the caller's unit of work together
//     with its outbox event (EventMovementPosted), so both commit or neither.
//   - Every account and movement is scoped by tenant, workspace and
//     environment; reads never cross them.
//
// Balances live on the account rows. Post writes the movement, its
// postings and its event, then changes the accounts it touches (in name
// order, so concurrent movements never deadlock) under the rule above. A
// store may keep the balance of a spread account (Spread: a workspace's
// credits and reserved credits, which every reservation changes) in parts
// that concurrent movements change side by side; the account, its postings
// and the rule stay whole. The Store port is declared here with only the
// methods Post and the reads call; package store implements it.
package ledger

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// Kind names a ledger. Accounts and movements belong to exactly one.
type Kind string

// The ledgers.
const (
	// Credits holds customer platform credits: grants, reservations for
	// operations, settlement and release.
	Credits Kind = "credits"
	// ProviderCost holds what music providers report consuming; it is a
	// cost-reconciliation signal, never a customer balance.
	ProviderCost Kind = "provider_cost"
	// Financial holds commercial settlement: marketplace, checkout, fees.
	Financial Kind = "financial"
	// Rewards holds challenge reward funding, allocation and claims.
	Rewards Kind = "rewards"
)

// Kinds returns every ledger kind.
func Kinds() []Kind { return []Kind{Credits, ProviderCost, Financial, Rewards} }

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds(), k) }

// Type classifies a movement for readers.
type Type string

// The movement types.
const (
	// TypeGrant adds value from a system source (credits granted by a plan).
	TypeGrant Type = "grant"
	// TypeReserve holds value for an operation that has not finished.
	TypeReserve Type = "reserve"
	// TypeSettle consumes held value when the operation completes.
	TypeSettle Type = "settle"
	// TypeRelease returns held value when the operation fails or is cancelled.
	TypeRelease Type = "release"
	// TypeTransfer is any other balanced movement.
	TypeTransfer Type = "transfer"
)

// Types returns every movement type.
func Types() []Type { return []Type{TypeGrant, TypeReserve, TypeSettle, TypeRelease, TypeTransfer} }

// Valid reports whether t is one of Types.
func (t Type) Valid() bool { return slices.Contains(Types(), t) }

// Direction says which side of an account a posting is on.
type Direction string

// The two sides. A debit takes value out of an account (its balance falls); a
// credit puts value in (its balance rises). A balanced movement's debits and
// credits are equal.
const (
	Debit  Direction = "debit"
	Credit Direction = "credit"
)

// Valid reports whether d is Debit or Credit.
func (d Direction) Valid() bool { return d == Debit || d == Credit }

// Account names used by the credit helpers.
const (
	// AccountWorkspaceCredits is a workspace's spendable credit balance.
	AccountWorkspaceCredits = "workspace:credits"
	// AccountSystemGrants is the source of granted credits (goes negative).
	AccountSystemGrants = "system:grants"
	// AccountSystemConsumed is the sink of settled credits.
	AccountSystemConsumed = "system:consumed"
	// AccountWorkspaceReserved holds a workspace's credits reserved for
	// operations that have not finished: the sum of their reservations
	// less what was settled or released. One account per workspace, so a
	// reservation opens no account and the account table does not grow
	// with every operation.
	AccountWorkspaceReserved = "workspace:reserved"
)

// SystemPrefix marks accounts that may go negative: sources and sinks.
const SystemPrefix = "system:"

// AllowsNegative reports whether the account named name may hold a negative
// balance: system accounts may, every other account (customer balances,
// reservations) may not.
func AllowsNegative(name string) bool { return strings.HasPrefix(name, SystemPrefix) }

// CreditsDecimals is the decimals of platform credits: whole credits (the
// spec's creditsReserved is a string of an integer).
const CreditsDecimals = 0

// EventMovementPosted is the outbox event type written with every movement.
const EventMovementPosted = "ledger.movement.posted"

// Scope is the tenant, workspace and environment every account and movement
// belongs to.
type Scope = access.Scope

// ScopeOf returns the scope of a principal.
func ScopeOf(p *access.Principal) Scope { return p.Scope() }

// Actor is who caused a movement: the user, and the API key when a key
// acted. Both are empty for the platform's own work.
type Actor struct {
	UserID string `json:"userId"`
	KeyID  string `json:"keyId"`
}

// ActorOf returns the actor of a principal.
func ActorOf(p *access.Principal) Actor { return Actor{UserID: p.UserID, KeyID: p.KeyID} }

// Posting is one line of a movement: an amount on one side of one account.
type Posting struct {
	Account   string       `json:"account"`
	Direction Direction    `json:"direction"`
	Amount    money.Atomic `json:"amountAtomic"`
}

// Movement is a balanced set of postings within one ledger, identified by
// its business reference.
type Movement struct {
	Scope     Scope
	Ledger    Kind
	Type      Type
	Reference string
	// Decimals is the decimals of every account the movement touches; an
	// account keeps the decimals it was opened with.
	Decimals int
	Postings []Posting
	Actor    Actor
	// InsufficientCode is the code returned when a posting would take a
	// non-negative account below zero. Empty means INSUFFICIENT_CREDITS.
	InsufficientCode fault.Code
	// Fresh promises that the reference was never posted: it names
	// something the caller's unit of work creates (a new operation's id).
	// Post then skips the lookup of an earlier movement, and a taken
	// reference fails the unit of work with CONFLICT instead of returning
	// that movement; a store that pipelines writes (PostgreSQL) can then
	// send the whole movement with the commit.
	Fresh bool
}

// Posted is a movement as written.
type Posted struct {
	ID        string
	Scope     Scope
	Ledger    Kind
	Type      Type
	Reference string
	Decimals  int
	Postings  []Posting
	Actor     Actor
	CreatedAt time.Time
}

// Account is a ledger account and its balance.
type Account struct {
	Scope         Scope
	Ledger        Kind
	Name          string
	Decimals      int
	AllowNegative bool
	Balance       money.Sum
	// Version counts the changes of the balance: one per movement, or one
	// per unit of work whose movements change the account together
	// (SettleAndRelease).
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AccountSpec opens an account: Post opens every account it touches that
// does not exist yet.
type AccountSpec struct {
	Name          string
	Decimals      int
	AllowNegative bool
	// Spread is how a store that runs movements side by side may hold the
	// balance (SpreadOf the name; the zero value holds it in one place).
	Spread Spread
}

// Spread says how a store may split an account's balance so that
// concurrent movements of the account do not wait for one another. The
// account stays one account: its postings name it, its balance is the sum
// of its parts, and the rules (never below zero, never past 128 bits) hold
// for that sum. Only accounts that may not go negative are spread.
type Spread int

// The spreads.
const (
	// SpreadNone holds the balance in one place: every change of the
	// account waits for the one before it to commit.
	SpreadNone Spread = iota
	// SpreadDebits splits the balance into parts, so that concurrent
	// debits take from different parts: a workspace's spendable credits,
	// which every reservation debits.
	SpreadDebits
	// SpreadCredits is SpreadDebits and also splits the room left below
	// the 128-bit bound, so that concurrent credits add to different
	// parts: a workspace's reserved credits, which every reservation
	// credits.
	SpreadCredits
)

// SpreadOf returns the spread of the account named name: SpreadDebits for
// AccountWorkspaceCredits, SpreadCredits for AccountWorkspaceReserved (the
// two accounts every reservation of a workspace changes), SpreadNone for
// every other account.
func SpreadOf(name string) Spread {
	switch name {
	case AccountWorkspaceCredits:
		return SpreadDebits
	case AccountWorkspaceReserved:
		return SpreadCredits
	}
	return SpreadNone
}

// AccountChange is a movement's effect on one account: Delta is added to
// the balance (negative for a debit). The embedded spec opens the account
// when it does not exist yet.
type AccountChange struct {
	AccountSpec
	Delta money.Sum
}

// ListParams selects a page of movements, newest first.
type ListParams struct {
	Scope Scope
	// Ledgers keeps movements of these ledgers; empty means every ledger.
	Ledgers []Kind
	// ActorUserID, when set, keeps movements whose actor is that user.
	ActorUserID string
	// Before is the id of the last movement of the previous page ("" = newest).
	Before string
	// Limit bounds the page.
	Limit int
}

// Store is the port the ledger writes and reads through; its methods run in
// the caller's unit of work. Package store implements it; it is not a
// stable API for embedders.
type Store interface {
	Mover
	// LedgerAccountGet returns one account; a missing one is NOT_FOUND.
	LedgerAccountGet(ctx context.Context, s Scope, k Kind, name string) (Account, error)
	// LedgerMovementList returns up to p.Limit movements, newest (highest
	// id) first, with their postings.
	LedgerMovementList(ctx context.Context, p ListParams) ([]Posted, error)
	// LedgerPostingSums returns, for every account of the ledger in the
	// scope, credits minus debits over all its postings, summed in Go. It
	// is how balances are audited against postings.
	LedgerPostingSums(ctx context.Context, s Scope, k Kind) (map[string]money.Sum, error)
}

// Mover is the part of Store that movements are posted through (Post and
// the credit movements: Grant, Reserve, Settle, Release,
// SettleAndRelease), so that a domain which only moves credits asks for
// no more of its store.
type Mover interface {
	outbox.Writer
	// Now is the unit of work's single timestamp.
	Now() time.Time
	// NewID returns a new identifier with prefix.
	NewID(prefix string) string
	// LedgerAccountsApply opens the accounts of changes that do not exist
	// (balance zero) and applies each change to its account, in the order
	// given (callers sort by name), by ApplyChanges's rule, at the unit of
	// work's time; each account stays locked against concurrent movements
	// until the unit of work ends. A change the rule refuses fails the call
	// with ApplyChanges's error, and leaves nothing applied once the unit
	// of work fails with it. A store that pipelines its writes may instead
	// return that error from a later statement of the unit of work or from
	// its commit (see package store): either way the unit fails as a whole.
	// A store may hold an account whose Spread is not SpreadNone in parts:
	// a change then locks only the part it changes when one part can take
	// it, and the rule holds for the account's whole balance; LedgerAccountGet
	// returns the whole balance. A unit of work that changes a spread
	// account changes it once (callers merge the changes of its movements),
	// so that it never waits for the account while it holds a part of it.
	LedgerAccountsApply(ctx context.Context, s Scope, k Kind, changes []AccountChange, insufficient fault.Code) error
	// LedgerMovementGet returns the movement with reference; NOT_FOUND when
	// there is none.
	LedgerMovementGet(ctx context.Context, s Scope, reference string) (Posted, error)
	// LedgerMovementLock is LedgerMovementGet, and locks the movement's row
	// against another LedgerMovementLock of it until the unit of work ends
	// (on SQLite the single writer already serializes units of work).
	LedgerMovementLock(ctx context.Context, s Scope, reference string) (Posted, error)
	// LedgerMovementInsert writes a movement and its postings. A reference
	// already taken is CONFLICT. When fresh (the caller promises the
	// reference was never posted), a store that pipelines may send the
	// movement with the commit and report a taken reference from there.
	LedgerMovementInsert(ctx context.Context, m Posted, fresh bool) error
}
