package intent

import (
	"context"
	"errors"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/policy"
)

// The CreditStore half of memTx: the policy and ledger writes the credit
// purchase makes, with the rules their stores keep (a policy version and
// a movement reference are taken once; balances change by
// ledger.ApplyChanges). Reads the credit purchase never makes are not
// faked.

var errUnfaked = errors.New("not faked: the credit purchase does not call it")

func policyKey(s policy.Scope, id string) string {
	return string(s.Environment) + "|" + s.TenantID + "|" + id
}

func (t *memTx) PolicyInsert(_ context.Context, v policy.Version) (policy.Version, bool, error) {
	k := policyKey(v.Scope, v.ID)
	for _, x := range t.d.policies[k] {
		if x.Version == v.Version {
			return x, false, nil
		}
	}
	v.CreatedAt = t.now
	t.d.policies[k] = append(t.d.policies[k], v)
	return v, true, nil
}

func (t *memTx) PolicyCurrent(_ context.Context, s policy.Scope, id string) (policy.Version, error) {
	vs := t.d.policies[policyKey(s, id)]
	if len(vs) == 0 {
		return policy.Version{}, notFound()
	}
	return vs[len(vs)-1], nil
}

func (t *memTx) PolicyGet(_ context.Context, s policy.Scope, id string, version int) (policy.Version, error) {
	for _, v := range t.d.policies[policyKey(s, id)] {
		if v.Version == version {
			return v, nil
		}
	}
	return policy.Version{}, notFound()
}

func (t *memTx) PolicyHistory(context.Context, policy.Scope, string, policy.HistoryParams) ([]policy.Version, error) {
	return nil, errUnfaked
}

func accountKey(s ledger.Scope, k ledger.Kind, name string) string {
	return s.TenantID + "|" + s.WorkspaceID + "|" + string(s.Environment) + "|" + string(k) + "|" + name
}

func (t *memTx) LedgerAccountsApply(_ context.Context, s ledger.Scope, k ledger.Kind, changes []ledger.AccountChange, insufficient fault.Code) error {
	accounts := make([]ledger.Account, len(changes))
	for i, c := range changes {
		a, ok := t.d.accounts[accountKey(s, k, c.Name)]
		if !ok {
			a = ledger.Account{Scope: s, Ledger: k, Name: c.Name, Decimals: c.Decimals, AllowNegative: c.AllowNegative, CreatedAt: t.now}
		}
		accounts[i] = a
	}
	if err := ledger.ApplyChanges(accounts, changes, insufficient); err != nil {
		return err
	}
	for _, a := range accounts {
		a.UpdatedAt = t.now
		t.d.accounts[accountKey(s, k, a.Name)] = a
	}
	return nil
}

func (t *memTx) LedgerMovementGet(_ context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	for _, m := range t.d.movements {
		if m.Scope == s && m.Reference == reference {
			return m, nil
		}
	}
	return ledger.Posted{}, notFound()
}

func (t *memTx) LedgerMovementLock(ctx context.Context, s ledger.Scope, reference string) (ledger.Posted, error) {
	return t.LedgerMovementGet(ctx, s, reference)
}

func (t *memTx) LedgerMovementInsert(ctx context.Context, m ledger.Posted, _ bool) error {
	if _, err := t.LedgerMovementGet(ctx, m.Scope, m.Reference); err == nil {
		return conflict()
	}
	t.d.movements = append(t.d.movements, m)
	return nil
}

func (t *memTx) LedgerMovementsByReference(_ context.Context, tenantID, reference string) ([]ledger.Posted, error) {
	var out []ledger.Posted
	for _, m := range t.d.movements {
		if m.Scope.TenantID == tenantID && m.Reference == reference {
			out = append(out, m)
		}
	}
	return slices.Clone(out), nil
}

// balance is the credits balance of a workspace account, or zero.
func (d memData) balance(s access.Scope, name string) money.Sum {
	return d.accounts[accountKey(s, ledger.Credits, name)].Balance
}
