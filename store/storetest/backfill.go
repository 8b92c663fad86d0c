package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/store"
)

// auditEnvironmentVersion is the migration that gives the audit log its
// environment.
const auditEnvironmentVersion = 16

// AuditEnvironmentBackfill checks the backfill of migration 0016 on one
// dialect: old is a fresh database of that dialect with no migration
// applied, ms the dialect's migrations, and reopen opens the same database
// through the dialect's Open (which applies the rest). Audit rows written
// before the migration get the environment of their request's receipt, a
// subscription's event its subscription's, and the rest live.
func AuditEnvironmentBackfill(t *testing.T, old *bun.DB, ms []store.Migration, reopen func(t *testing.T) *store.DB) {
	t.Helper()
	ctx := context.Background()
	exec := migrateBefore(t, old, ms, auditEnvironmentVersion)
	exec(`INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'One', ?)`, Epoch)
	exec(`INSERT INTO workspaces (id, tenant_id, name, state, created_at) VALUES ('ws_1', 'ten_1', 'One', 'active', ?)`, Epoch)
	for _, r := range []struct{ id, env string }{{"req_test", "test"}, {"req_live", "live"}, {"req_anonymous", ""}} {
		exec(`INSERT INTO request_receipts (request_id, tenant_id, workspace_id, environment, principal, method, operation_id, status,
			created_at) VALUES (?, 'ten_1', 'ws_1', ?, 'user:usr_1', 'POST', 'op', 200, ?)`, r.id, r.env, Epoch)
	}
	exec(`INSERT INTO billing_checkouts (id, tenant_id, workspace_id, environment, created_by, price, state, provider_session_id,
		payment_url, created_at, updated_at) VALUES ('chk_1', 'ten_1', 'ws_1', 'test', 'usr_1', '{}', 'activated', 'cs_1', '', ?, ?)`, Epoch, Epoch)
	exec(`INSERT INTO billing_subscriptions (id, tenant_id, workspace_id, environment, checkout_id, price, state, provider_id,
		provider_customer_id, period_start, period_end, cancel_at_period_end, created_at, updated_at)
		VALUES ('sub_test', 'ten_1', 'ws_1', 'test', 'chk_1', '{}', 'active', 'ps_1', 'pc_1', ?, ?, ?, ?, ?)`,
		Epoch, Epoch, false, Epoch, Epoch)
	rows := []struct {
		id, target, targetID, request string
		want                          access.Environment
	}{
		{"aud_01", "user", "usr_2", "req_test", access.Test},            // a test principal's request
		{"aud_02", "user", "usr_2", "req_live", access.Live},            // a live principal's request
		{"aud_03", "subscription", "sub_test", "", access.Test},         // a webhook's or job's work on a test subscription
		{"aud_04", "subscription", "sub_test", "req_live", access.Test}, // the subject's environment wins
		{"aud_05", "user", "usr_1", "", access.Live},                    // the host operator's platform-role grant
		{"aud_06", "invitation", "a@example.com", "req_gone", access.Live},
		{"aud_07", "workspace", "ws_1", "req_anonymous", access.Live},
		{"aud_08", "subscription", "sub_gone", "req_test", access.Test},
	}
	for _, r := range rows {
		exec(`INSERT INTO audit_events (id, tenant_id, workspace_id, actor_user_id, actor_key_id, action, target_type, target_id,
			request_id, before_state, after_state, created_at) VALUES (?, 'ten_1', 'ws_1', '', '', 'x', ?, ?, ?, NULL, NULL, ?)`,
			r.id, r.target, r.targetID, r.request, Epoch)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := reopen(t)
	got := map[string]access.Environment{}
	for _, env := range []access.Environment{access.Test, access.Live} {
		es, err := db.Read().AuditList(ctx, access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Environment != env {
				t.Errorf("%s listed in %s with environment %q", e.ID, env, e.Environment)
			}
			got[e.ID] = env
		}
	}
	for _, r := range rows {
		if got[r.id] != r.want {
			t.Errorf("%s (%s %s, request %q) backfilled to %q, want %q", r.id, r.target, r.targetID, r.request, got[r.id], r.want)
		}
	}
}

// providerObservationsVersion is the migration that keeps provider
// observations and corrects fabricated provider cost reconciliations.
const providerObservationsVersion = 18

// ProviderCostCorrection checks migration 0018 on one dialect (old, ms
// and reopen as for AuditEnvironmentBackfill): a reconciliation that had
// copied the price table into the actual charge (source price_table,
// MATCHED) becomes UNKNOWN with source none, no actual charge and no
// drift, keeping its expected price; a reported one is unchanged.
func ProviderCostCorrection(t *testing.T, old *bun.DB, ms []store.Migration, reopen func(t *testing.T) *store.DB) {
	t.Helper()
	ctx := context.Background()
	exec := migrateBefore(t, old, ms, providerObservationsVersion)
	exec(`INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'One', ?)`, Epoch)
	exec(`INSERT INTO workspaces (id, tenant_id, name, state, created_at) VALUES ('ws_1', 'ten_1', 'One', 'active', ?)`, Epoch)
	exec(`INSERT INTO generation_operations (id, tenant_id, workspace_id, environment, created_by_user_id, status, request,
		billing_mode, credits_reserved, byok_credits, pricing, routes, snapshot, version, attempts, deadline_at, created_at, updated_at)
		VALUES ('op_1', 'ten_1', 'ws_1', 'test', 'usr_1', 'completed', '{}', 'PLATFORM_MANAGED', 15, 0, '{}', '[]', '{}', 1, 2, ?, ?, ?)`,
		Epoch, Epoch, Epoch)
	for i, a := range []string{"att_1", "att_2"} {
		exec(`INSERT INTO generation_attempts (id, operation_id, tenant_id, workspace_id, environment, number, provider, ownership,
			token_digest, state, created_at, updated_at) VALUES (?, 'op_1', 'ten_1', 'ws_1', 'test', ?, 'MUSIC_PROVIDER_A',
			'PLATFORM_MANAGED', ?, 'accepted', ?, ?)`, a, i+1, "digest-"+a, Epoch, Epoch)
	}
	exec(`INSERT INTO generation_costs (id, operation_id, attempt_id, tenant_id, workspace_id, environment, provider, model, status,
		source, expected, actual, drift_bps, created_at) VALUES ('gcost_1', 'op_1', 'att_1', 'ten_1', 'ws_1', 'test', 'MUSIC_PROVIDER_A',
		'v5', 'MATCHED', 'price_table', 12, 12, 0, ?)`, Epoch)
	exec(`INSERT INTO generation_costs (id, operation_id, attempt_id, tenant_id, workspace_id, environment, provider, model, status,
		source, expected, actual, drift_bps, created_at) VALUES ('gcost_2', 'op_1', 'att_2', 'ten_1', 'ws_1', 'test', 'MUSIC_PROVIDER_A',
		'v5', 'OVER_EXPECTED', 'reported', 12, 18, 5000, ?)`, Epoch)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := reopen(t)
	cs, err := db.Read().GenerationCosts(ctx, "op_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("costs = %+v", cs)
	}
	for _, c := range cs {
		switch c.ID {
		case "gcost_1":
			if c.Status != "UNKNOWN" || c.Source != "none" || c.Actual != nil || c.DriftBps != 0 || c.Expected == nil || *c.Expected != 12 {
				t.Errorf("fabricated reconciliation after the migration = %+v", c)
			}
		case "gcost_2":
			if c.Status != "OVER_EXPECTED" || c.Source != "reported" || c.Actual == nil || *c.Actual != 18 || c.DriftBps != 5000 {
				t.Errorf("reported reconciliation changed = %+v", c)
			}
		}
	}
	obs, err := db.Read().ProviderObservations(ctx, access.Test)
	if err != nil || len(obs) != 0 {
		t.Fatalf("observations after the migration = %+v, %v", obs, err)
	}
}

// migrateBefore applies to old the migrations of ms before version and
// returns a function that runs one statement on old, failing t on error.
func migrateBefore(t *testing.T, old *bun.DB, ms []store.Migration, version int) func(q string, args ...any) {
	t.Helper()
	ctx := context.Background()
	before := slices.IndexFunc(ms, func(m store.Migration) bool { return m.Version == version })
	if before < 0 {
		t.Fatalf("no migration %04d", version)
	}
	if err := store.Migrate(ctx, old, ms[:before], "", Epoch); err != nil {
		t.Fatalf("migrate to %04d: %v", version-1, err)
	}
	return func(q string, args ...any) {
		t.Helper()
		if _, err := old.NewRaw(q, args...).Exec(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// assetStorageVersion is the migration that counts each workspace's
// stored bytes.
const assetStorageVersion = 21

// AssetStorageBackfill checks migration 0021 on one dialect (arguments as
// AuditEnvironmentBackfill's): the assets stored before it count against
// their workspace's storage in their environment.
func AssetStorageBackfill(t *testing.T, old *bun.DB, ms []store.Migration, reopen func(t *testing.T) *store.DB) {
	t.Helper()
	ctx := context.Background()
	exec := migrateBefore(t, old, ms, assetStorageVersion)
	exec(`INSERT INTO tenants (id, name, created_at) VALUES ('ten_1', 'One', ?)`, Epoch)
	for _, ws := range []string{"ws_1", "ws_2"} {
		exec(`INSERT INTO workspaces (id, tenant_id, name, state, created_at) VALUES (?, 'ten_1', 'One', 'active', ?)`, ws, Epoch)
	}
	for i, a := range []struct {
		ws, env string
		size    int64
	}{{"ws_1", "test", 100}, {"ws_1", "test", 250}, {"ws_1", "live", 7}, {"ws_2", "test", 1 << 40}} {
		exec(`INSERT INTO assets (id, tenant_id, workspace_id, environment, media_type, size_bytes, sha256, origin, created_at)
			VALUES (?, 'ten_1', ?, ?, 'audio/wav', ?, 'abc', 'uploaded', ?)`, fmt.Sprintf("ast_%d", i), a.ws, a.env, a.size, Epoch)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := reopen(t)
	for _, c := range []struct {
		ws, env string
		want    int64
	}{{"ws_1", "test", 350}, {"ws_1", "live", 7}, {"ws_2", "test", 1 << 40}, {"ws_2", "live", 0}} {
		got, err := db.Read().AssetStorageUsed(ctx, asset.Scope{TenantID: "ten_1", WorkspaceID: c.ws, Environment: c.env})
		if err != nil || got != c.want {
			t.Errorf("%s %s: %d bytes (%v), want %d", c.ws, c.env, got, err, c.want)
		}
	}
}
