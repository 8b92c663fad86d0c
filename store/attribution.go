package store

import (
	"context"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/fault"
)

var _ attribution.Store = (*Tx)(nil)

type attributionRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	UserID      string    `bun:"user_id"`
	FSource     string    `bun:"first_source"`
	FMedium     string    `bun:"first_medium"`
	FCampaign   string    `bun:"first_campaign"`
	FTerm       string    `bun:"first_term"`
	FContent    string    `bun:"first_content"`
	FReferrer   string    `bun:"first_referrer"`
	FLanding    string    `bun:"first_landing_path"`
	FAt         time.Time `bun:"first_at"`
	LSource     string    `bun:"last_source"`
	LMedium     string    `bun:"last_medium"`
	LCampaign   string    `bun:"last_campaign"`
	LTerm       string    `bun:"last_term"`
	LContent    string    `bun:"last_content"`
	LReferrer   string    `bun:"last_referrer"`
	LLanding    string    `bun:"last_landing_path"`
	LAt         time.Time `bun:"last_at"`
	TouchCount  int64     `bun:"touch_count"`
	Version     int64     `bun:"version"`
}

func (r attributionRow) attribution() attribution.Attribution {
	first := attribution.Touch{Source: r.FSource, Medium: r.FMedium, Campaign: r.FCampaign, Term: r.FTerm, Content: r.FContent,
		Referrer: r.FReferrer, LandingPath: r.FLanding, At: r.FAt.UTC()}
	last := attribution.Touch{Source: r.LSource, Medium: r.LMedium, Campaign: r.LCampaign, Term: r.LTerm, Content: r.LContent,
		Referrer: r.LReferrer, LandingPath: r.LLanding, At: r.LAt.UTC()}
	return attribution.Attribution{ID: r.ID, Scope: access.Scope{TenantID: r.TenantID, WorkspaceID: r.WorkspaceID,
		Environment: access.Environment(r.Environment)}, UserID: r.UserID, First: first, Last: last, TouchCount: r.TouchCount,
		Version: r.Version, CreatedAt: first.At, UpdatedAt: last.At}
}

const attributionSelect = `SELECT id, tenant_id, workspace_id, environment, user_id, first_source, first_medium, first_campaign, first_term,
	first_content, first_referrer, first_landing_path, first_at, last_source, last_medium, last_campaign, last_term, last_content,
	last_referrer, last_landing_path, last_at, touch_count, version FROM attributions`

// AttributionGet implements attribution.Store.
func (tx *Tx) AttributionGet(ctx context.Context, env access.Environment, userID string) (attribution.Attribution, error) {
	var r attributionRow
	err := tx.idb.NewRaw(attributionSelect+` WHERE environment = ? AND user_id = ?`, string(env), userID).Scan(ctx, &r)
	if err != nil {
		return attribution.Attribution{}, notFound("store.AttributionGet", err)
	}
	return r.attribution(), nil
}

// AttributionInsert implements attribution.Store: CONFLICT, without
// failing the unit of work, when the user has a record in the
// environment.
func (tx *Tx) AttributionInsert(ctx context.Context, a attribution.Attribution) error {
	const op = "store.AttributionInsert"
	f, l := a.First, a.Last
	res, err := tx.idb.ExecContext(ctx, `INSERT INTO attributions (id, tenant_id, workspace_id, environment, user_id, first_source,
		first_medium, first_campaign, first_term, first_content, first_referrer, first_landing_path, first_at, last_source, last_medium,
		last_campaign, last_term, last_content, last_referrer, last_landing_path, last_at, touch_count, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.ID, a.Scope.TenantID, a.Scope.WorkspaceID, string(a.Scope.Environment), a.UserID, f.Source, f.Medium, f.Campaign, f.Term,
		f.Content, f.Referrer, f.LandingPath, f.At.UTC(), l.Source, l.Medium, l.Campaign, l.Term, l.Content, l.Referrer, l.LandingPath,
		l.At.UTC(), a.TouchCount, a.Version)
	ok, err := inserted(op, res, err)
	if err != nil {
		return err
	}
	if !ok {
		return fault.E(op, fault.Conflict, "The user has an attribution record in this environment.")
	}
	return nil
}

// AttributionUpdate implements attribution.Store: compare-and-set on the
// version; the first touch is never written.
func (tx *Tx) AttributionUpdate(ctx context.Context, a attribution.Attribution) error {
	const op = "store.AttributionUpdate"
	l := a.Last
	res, err := tx.idb.ExecContext(ctx, `UPDATE attributions SET last_source = ?, last_medium = ?, last_campaign = ?, last_term = ?,
		last_content = ?, last_referrer = ?, last_landing_path = ?, last_at = ?, touch_count = ?, version = ?
		WHERE id = ? AND version = ?`,
		l.Source, l.Medium, l.Campaign, l.Term, l.Content, l.Referrer, l.LandingPath, l.At.UTC(), a.TouchCount, a.Version, a.ID, a.Version-1)
	if err != nil {
		return errf(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fault.E(op, fault.Conflict, "The attribution record changed meanwhile.")
	}
	return nil
}
