package ledger_test

import (
	"context"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
)

// TestPostRejectsMalformed checks the movement rules that hold before any
// store is touched (the store is nil: reaching it would panic).
func TestPostRejectsMalformed(t *testing.T) {
	sc := ledger.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	two := func(a, b money.Atomic) []ledger.Posting {
		return []ledger.Posting{{Account: "system:x", Direction: ledger.Debit, Amount: a}, {Account: "y", Direction: ledger.Credit, Amount: b}}
	}
	base := ledger.Movement{Scope: sc, Ledger: ledger.Credits, Type: ledger.TypeTransfer, Reference: "r", Postings: two(1, 1)}
	cases := []struct {
		name  string
		edit  func(m *ledger.Movement)
		code  fault.Code
		field string
	}{
		{"no scope", func(m *ledger.Movement) { m.Scope = ledger.Scope{} }, fault.InvalidInput, "scope"},
		{"unknown ledger", func(m *ledger.Movement) { m.Ledger = "points" }, fault.InvalidInput, "ledger"},
		{"unknown type", func(m *ledger.Movement) { m.Type = "gift" }, fault.InvalidInput, "type"},
		{"no reference", func(m *ledger.Movement) { m.Reference = "" }, fault.InvalidInput, "reference"},
		{"spaced reference", func(m *ledger.Movement) { m.Reference = " r" }, fault.InvalidInput, "reference"},
		{"decimals", func(m *ledger.Movement) { m.Decimals = 20 }, fault.InvalidInput, "decimals"},
		{"one posting", func(m *ledger.Movement) { m.Postings = m.Postings[:1] }, fault.InvalidInput, "postings"},
		{"unbalanced", func(m *ledger.Movement) { m.Postings = two(2, 1) }, fault.InvalidAmount, "postings"},
		{"zero", func(m *ledger.Movement) { m.Postings = two(0, 0) }, fault.InvalidAmount, "postings[0].amountAtomic"},
		{"direction", func(m *ledger.Movement) { m.Postings[0].Direction = "up" }, fault.InvalidInput, "postings[0].direction"},
		{"same account", func(m *ledger.Movement) { m.Postings[1].Account = "system:x" }, fault.InvalidInput, "postings[1].account"},
		{"debits only", func(m *ledger.Movement) { m.Postings[1].Direction = ledger.Debit }, fault.InvalidInput, "postings"},
		{"unknown code", func(m *ledger.Movement) { m.InsufficientCode = "BROKE" }, fault.InvalidInput, "insufficientCode"},
	}
	for _, c := range cases {
		m := base
		m.Postings = append([]ledger.Posting(nil), base.Postings...)
		c.edit(&m)
		_, _, err := ledger.New().Post(context.Background(), nil, m)
		code, _, details := fault.Public(err)
		if code != c.code || details["field"] != c.field {
			t.Errorf("%s: %s %v, want %s field %s", c.name, code, details, c.code, c.field)
		}
	}
}

func TestKinds(t *testing.T) {
	for _, k := range ledger.Kinds() {
		if !k.Valid() {
			t.Errorf("%s invalid", k)
		}
	}
	if !ledger.AllowsNegative(ledger.AccountSystemGrants) || ledger.AllowsNegative(ledger.AccountWorkspaceCredits) ||
		ledger.AllowsNegative(ledger.AccountWorkspaceReserved) {
		t.Error("AllowsNegative")
	}
}
