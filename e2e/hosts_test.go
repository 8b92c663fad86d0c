package e2e_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
)

// TestSecondHostSeesChangesOnNextRequest runs a second platform (its own
// caches and limiter, and on PostgreSQL its own store, as another host
// has) on the same database:
// a revocation or a role change made through one host is enforced by the
// other on its very next request.
func TestSecondHostSeesChangesOnNextRequest(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		host2 := s.AnotherHost()
		on2 := func(key, path string) *platformtest.Response {
			return s.DoAt(host2.URL, platformtest.Request{Method: "GET", Path: path, Key: key})
		}
		_, k := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "shared", "scopes": []string{"keys:read"}}, "")
		if r := on2(k.Secret, "/api/v1/api-keys"); r.Status != 200 {
			t.Fatalf("host 2 before revoke: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/revoke", Key: s.Boot.TestKey}); r.Status != 200 {
			t.Fatalf("revoke on host 1: %d %s", r.Status, r.Body)
		}
		if r := on2(k.Secret, "/api/v1/api-keys"); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("host 2 after revoke: %d %s", r.Status, r.Body)
		}
		// Warm host 2's authority cache, then change the role on the database.
		if r := on2(s.Boot.TestKey, "/api/v1/api-keys"); r.Status != 200 {
			t.Fatalf("host 2 warm-up: %d %s", r.Status, r.Body)
		}
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.MembershipRolesSet(ctx, s.Boot.WorkspaceID, s.Boot.OwnerID, []access.Role{access.RoleViewer})
		}); err != nil {
			t.Fatal(err)
		}
		if r := on2(s.Boot.TestKey, "/api/v1/api-keys"); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("host 2 after the role change: %d %s", r.Status, r.Body)
		}
	})
}

// TestNoPlaintextSecretAtRest creates, rotates and replays keys, then reads
// every text and blob column of every table and finds no plaintext key.
func TestNoPlaintextSecretAtRest(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		body := map[string]any{"name": "sealed", "scopes": []string{"read"}}
		_, created := createKey(t, s, s.Boot.TestKey, body, "seal-1")
		_, replay := createKey(t, s, s.Boot.TestKey, body, "seal-1")
		if replay.Secret != created.Secret {
			t.Fatal("the replay did not return the sealed secret")
		}
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + created.Key.ID + "/rotate", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "rotate-1"}})
		var rotated struct {
			Secret string `json:"secret"`
		}
		r.Data(t, &rotated)
		secrets := []string{s.Boot.TestKey, s.Boot.LiveKey, created.Secret, rotated.Secret}
		tables := []string{"api_keys", "api_key_secrets", "idempotency_records", "request_receipts", "outbox_events", "jobs"}
		for _, table := range tables {
			rows, err := s.DB.Read().IDB().QueryContext(ctx, "SELECT * FROM "+table)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]sql.RawBytes, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					for _, sec := range secrets {
						if strings.Contains(string(v), sec) || strings.Contains(string(v), strings.TrimPrefix(strings.TrimPrefix(sec, "platform_test_"), "platform_live_")) {
							t.Errorf("%s.%s holds a plaintext key", table, cols[i])
						}
					}
				}
			}
			rows.Close()
		}
		for _, sec := range secrets {
			if strings.Contains(s.Log.String(), sec) {
				t.Error("a plaintext key appears in the log")
			}
		}
	})
}
