package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/plan"
)

// Tx implements the plan domain's port.
var _ plan.Store = (*Tx)(nil)

type planRow struct {
	ID             string `bun:"id"`
	Name           string `bun:"name"`
	MonthlyCredits string `bun:"monthly_credits"`
	Position       int    `bun:"position"`
	Active         bool   `bun:"active"`
}

type priceRow struct {
	ID        string    `bun:"id"`
	PlanID    string    `bun:"plan_id"`
	Currency  string    `bun:"currency"`
	Interval  string    `bun:"billing_interval"`
	Version   int       `bun:"version"`
	Amount    int64     `bun:"amount"`
	Active    bool      `bun:"active"`
	CreatedAt time.Time `bun:"created_at"`
}

func (r priceRow) price() plan.PriceVersion {
	return plan.PriceVersion{ID: r.ID, PlanID: r.PlanID, Currency: r.Currency, Interval: plan.Interval(r.Interval),
		Version: r.Version, Amount: r.Amount, Active: r.Active, CreatedAt: r.CreatedAt.UTC()}
}

// plans reads plans (all, or the one named by id) with their entitlements
// and price versions. monthly_credits is read as text on both dialects.
func (tx *Tx) plans(ctx context.Context, op, id string) ([]plan.Plan, error) {
	var rows []planRow
	err := tx.idb.NewRaw(`SELECT id, name, CAST(monthly_credits AS TEXT) AS monthly_credits, position, active
		FROM plans WHERE (? = '' OR id = ?) ORDER BY position, id`, id, id).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	var ents []struct {
		PlanID      string `bun:"plan_id"`
		Entitlement string `bun:"entitlement"`
	}
	err = tx.idb.NewRaw(`SELECT plan_id, entitlement FROM plan_entitlements WHERE (? = '' OR plan_id = ?)
		ORDER BY plan_id, entitlement`, id, id).Scan(ctx, &ents)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	var prices []priceRow
	err = tx.idb.NewRaw(`SELECT id, plan_id, currency, billing_interval, version, amount, active, created_at
		FROM plan_price_versions WHERE (? = '' OR plan_id = ?) ORDER BY plan_id, currency, billing_interval, version`,
		id, id).Scan(ctx, &prices)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf(op, err)
	}
	out := make([]plan.Plan, len(rows))
	idx := make(map[string]int, len(rows))
	for i, r := range rows {
		credits, err := strconv.ParseUint(strings.TrimSpace(r.MonthlyCredits), 10, 64)
		if err != nil {
			return nil, errf(op, fmt.Errorf("plan %s: monthly credits %q: %w", r.ID, r.MonthlyCredits, err))
		}
		out[i] = plan.Plan{ID: r.ID, Name: r.Name, MonthlyCredits: credits, Position: r.Position, Active: r.Active,
			Entitlements: []string{}}
		idx[r.ID] = i
	}
	for _, e := range ents {
		if i, ok := idx[e.PlanID]; ok {
			out[i].Entitlements = append(out[i].Entitlements, e.Entitlement)
		}
	}
	for _, p := range prices {
		if i, ok := idx[p.PlanID]; ok {
			out[i].Prices = append(out[i].Prices, p.price())
		}
	}
	return out, nil
}

// PlanList implements plan.Reader.
func (tx *Tx) PlanList(ctx context.Context) ([]plan.Plan, error) {
	return tx.plans(ctx, "store.PlanList", "")
}

// PlanGet implements plan.Store.
func (tx *Tx) PlanGet(ctx context.Context, id string) (plan.Plan, error) {
	const op = "store.PlanGet"
	if id == "" {
		return plan.Plan{}, notFound(op, sql.ErrNoRows)
	}
	ps, err := tx.plans(ctx, op, id)
	if err != nil {
		return plan.Plan{}, err
	}
	if len(ps) == 0 {
		return plan.Plan{}, notFound(op, sql.ErrNoRows)
	}
	return ps[0], nil
}

// PlanUpsert implements plan.Store.
func (tx *Tx) PlanUpsert(ctx context.Context, p plan.Plan) error {
	const op = "store.PlanUpsert"
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO plans (id, name, monthly_credits, position, active, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, monthly_credits = excluded.monthly_credits,
		position = excluded.position, active = excluded.active, updated_at = excluded.updated_at`,
		p.ID, p.Name, strconv.FormatUint(p.MonthlyCredits, 10), p.Position, p.Active, tx.now, tx.now)
	if err != nil {
		return errf(op, err)
	}
	var have []string
	if err := tx.idb.NewRaw(`SELECT entitlement FROM plan_entitlements WHERE plan_id = ?`, p.ID).Scan(ctx, &have); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return errf(op, err)
	}
	for _, e := range have {
		if !slices.Contains(p.Entitlements, e) {
			if _, err := tx.idb.ExecContext(ctx, `DELETE FROM plan_entitlements WHERE plan_id = ? AND entitlement = ?`, p.ID, e); err != nil {
				return errf(op, err)
			}
		}
	}
	for _, e := range p.Entitlements {
		if _, err := tx.idb.ExecContext(ctx, `INSERT INTO plan_entitlements (plan_id, entitlement) VALUES (?, ?)
			ON CONFLICT (plan_id, entitlement) DO NOTHING`, p.ID, e); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// PlanDeactivateExcept implements plan.Store.
func (tx *Tx) PlanDeactivateExcept(ctx context.Context, ids []string) error {
	const op = "store.PlanDeactivateExcept"
	var all []string
	if err := tx.idb.NewRaw(`SELECT id FROM plans WHERE active = ?`, true).Scan(ctx, &all); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return errf(op, err)
	}
	for _, id := range all {
		if slices.Contains(ids, id) {
			continue
		}
		if _, err := tx.idb.ExecContext(ctx, `UPDATE plans SET active = ?, updated_at = ? WHERE id = ?`, false, tx.now, id); err != nil {
			return errf(op, err)
		}
		if _, err := tx.idb.ExecContext(ctx, `UPDATE plan_price_versions SET active = ? WHERE plan_id = ?`, false, id); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

// PriceVersionInsert implements plan.Store.
func (tx *Tx) PriceVersionInsert(ctx context.Context, pv plan.PriceVersion) (plan.PriceVersion, bool, error) {
	const op = "store.PriceVersionInsert"
	pv.ID, pv.CreatedAt, pv.Active = tx.NewID("price_"), tx.now, false
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO plan_price_versions
		(id, plan_id, currency, billing_interval, version, amount, active, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (plan_id, currency, billing_interval, version) DO NOTHING`,
		pv.ID, pv.PlanID, pv.Currency, string(pv.Interval), pv.Version, pv.Amount, false, tx.now)
	if err != nil {
		return plan.PriceVersion{}, false, errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return plan.PriceVersion{}, false, errf(op, err)
	}
	if n == 0 {
		return plan.PriceVersion{}, false, nil
	}
	return pv, true, nil
}

// PriceVersionActivate implements plan.Store.
func (tx *Tx) PriceVersionActivate(ctx context.Context, planID string, activeIDs []string) error {
	const op = "store.PriceVersionActivate"
	var ids []string
	if err := tx.idb.NewRaw(`SELECT id FROM plan_price_versions WHERE plan_id = ?`, planID).Scan(ctx, &ids); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return errf(op, err)
	}
	for _, id := range ids {
		if _, err := tx.idb.ExecContext(ctx, `UPDATE plan_price_versions SET active = ? WHERE id = ? AND active <> ?`,
			slices.Contains(activeIDs, id), id, slices.Contains(activeIDs, id)); err != nil {
			return errf(op, err)
		}
	}
	return nil
}

type assignmentRow struct {
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	TenantID    string    `bun:"tenant_id"`
	PlanID      string    `bun:"plan_id"`
	Since       time.Time `bun:"since"`
}

func (r assignmentRow) assignment() plan.Assignment {
	return plan.Assignment{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID, Environment: access.Environment(r.Environment),
		PlanID: r.PlanID, Since: r.Since.UTC()}
}

// WorkspacePlanSet implements plan.Store: one row per (workspace,
// environment). A change bumps the workspace's authority version, since
// authority snapshots carry the plan (access.Authority.Plan).
func (tx *Tx) WorkspacePlanSet(ctx context.Context, a plan.Assignment) error {
	const op = "store.WorkspacePlanSet"
	if !a.Environment.Valid() {
		return fault.Invalid(op, "environment", "A plan is assigned in the test or the live environment.")
	}
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO workspace_plans (workspace_id, environment, tenant_id, plan_id, since)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, environment) DO UPDATE SET plan_id = excluded.plan_id, since = excluded.since
		WHERE workspace_plans.plan_id <> excluded.plan_id`, a.WorkspaceID, string(a.Environment), a.TenantID, a.PlanID, tx.now)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errf(op, err)
	}
	return tx.AuthzBump(ctx, a.WorkspaceID)
}

// WorkspacePlanGet implements plan.Store.
func (tx *Tx) WorkspacePlanGet(ctx context.Context, workspaceID string, env access.Environment) (plan.Assignment, error) {
	var r assignmentRow
	err := tx.idb.NewRaw(`SELECT workspace_id, environment, tenant_id, plan_id, since FROM workspace_plans
		WHERE workspace_id = ? AND environment = ?`, workspaceID, string(env)).Scan(ctx, &r)
	if err != nil {
		return plan.Assignment{}, notFound("store.WorkspacePlanGet", err)
	}
	return r.assignment(), nil
}

// WorkspacePlanList implements plan.Store: a workspace's live row, or its
// test row when it has no live one.
func (tx *Tx) WorkspacePlanList(ctx context.Context, after string, limit int) ([]plan.Assignment, error) {
	var rows []assignmentRow
	err := tx.idb.NewRaw(`SELECT w.workspace_id, w.environment, w.tenant_id, w.plan_id, w.since FROM workspace_plans w
		WHERE w.workspace_id > ? AND (w.environment = 'live' OR NOT EXISTS (
			SELECT 1 FROM workspace_plans l WHERE l.workspace_id = w.workspace_id AND l.environment = 'live'))
		ORDER BY w.workspace_id LIMIT ?`, after, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.WorkspacePlanList", err)
	}
	out := make([]plan.Assignment, len(rows))
	for i, r := range rows {
		out[i] = r.assignment()
	}
	return out, nil
}
