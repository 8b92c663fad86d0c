package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

func TestTenantAndEnvironmentIsolation(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		other := s.Bootstrap("Other")
		get := func(key, id string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys/" + id, Key: key})
		}
		// Another tenant's key by id is 404, never a 403 that leaks its existence.
		if r := get(other.TestKey, s.Boot.KeyID); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("other tenant reads our key: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + s.Boot.KeyID + "/revoke", Key: other.TestKey}); r.Status != 404 {
			t.Fatalf("other tenant revokes our key: %d %s", r.Status, r.Body)
		}
		// A test key never sees a live object, nor the reverse.
		if r := get(s.Boot.TestKey, s.Boot.LiveKeyID); r.Status != 404 {
			t.Fatalf("test key reads the live key: %d %s", r.Status, r.Body)
		}
		if r := get(s.Boot.LiveKey, s.Boot.KeyID); r.Status != 404 {
			t.Fatalf("live key reads the test key: %d %s", r.Status, r.Body)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys", Key: s.Boot.LiveKey})
		var page api.KeyPage
		r.Data(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != s.Boot.LiveKeyID || page.Items[0].Environment != "live" {
			t.Fatalf("live list = %+v", page.Items)
		}
		// A test key cannot create a live key.
		r, _ = createKey(t, s, s.Boot.TestKey, map[string]any{"name": "x", "environment": "live", "scopes": []string{"read"}}, "")
		if r.Status != 403 || r.Code() != "ACCESS_DENIED" {
			t.Fatalf("test key creating a live key: %d %s", r.Status, r.Body)
		}
		r, live := createKey(t, s, s.Boot.LiveKey, map[string]any{"name": "x", "scopes": []string{"read"}}, "")
		if r.Status != 201 || !strings.HasPrefix(live.Secret, "platform_live_") || live.Key.Environment != "live" {
			t.Fatalf("live key creating a live key: %d %s", r.Status, r.Body)
		}
	})
}

func TestRoleChangeSeenOnNextRequest(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		list := func() *platformtest.Response {
			return s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys", Key: s.Boot.TestKey})
		}
		if r := list(); r.Status != 200 {
			t.Fatalf("before: %d %s", r.Status, r.Body)
		}
		// The owner loses DEVELOPER: the key, whose authority is its creator's, loses the portal at once.
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.MembershipRolesSet(ctx, s.Boot.WorkspaceID, s.Boot.OwnerID, []access.Role{access.RoleOwner})
		}); err != nil {
			t.Fatal(err)
		}
		if r := list(); r.Status != 403 || r.Code() != "ACCESS_DENIED" {
			t.Fatalf("after losing DEVELOPER: %d %s", r.Status, r.Body)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey})
		var ac api.AuthContext
		r.Data(t, &ac)
		if strings.Join(ac.Roles, ",") != "OWNER" {
			t.Fatalf("roles after change = %v", ac.Roles)
		}
		// Suspended membership: the workspace is closed to the key.
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.MembershipStatusSet(ctx, s.Boot.WorkspaceID, s.Boot.OwnerID, access.MembershipSuspended)
		}); err != nil {
			t.Fatal(err)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey}); r.Code() != "WORKSPACE_ACCESS_DENIED" {
			t.Fatalf("suspended member: %d %s", r.Status, r.Body)
		}
	})
}

func TestAccessContextAndSaasMe(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ask := func(key, path string) api.AccessDecision {
			r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/access/context?path=" + path, Key: key})
			var d api.AccessDecision
			r.Data(t, &d)
			if r.Header.Get("Cache-Control") != "private, no-store" {
				t.Errorf("access context is cacheable: %q", r.Header.Get("Cache-Control"))
			}
			return d
		}
		if d := ask(s.Boot.TestKey, "/developer/keys"); !d.Allowed || d.Step != "allow" {
			t.Fatalf("/developer/keys = %+v", d)
		}
		_, ro := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "ro", "scopes": []string{"read"}}, "")
		// A key without the treasury scope (ledger:read): a permission failure, not an upgrade prompt.
		if d := ask(ro.Secret, "/treasury"); d.Allowed || d.Code == nil || *d.Code != "ACCESS_DENIED" || d.Step != "permission" {
			t.Fatalf("/treasury = %+v", d)
		}
		if d := ask(ro.Secret, "/developer/keys"); d.Allowed {
			t.Fatalf("read-only key allowed into /developer/keys: %+v", d)
		}
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/saas/me", Key: s.Boot.TestKey})
		var me api.SaasMe
		r.Data(t, &me)
		if me.Workspace.ID != s.Boot.WorkspaceID || me.Workspace.State != "active" || me.Environment != "test" {
			t.Fatalf("saas/me = %+v", me)
		}
		if !strings.Contains(string(r.Body), `"subscription":null`) {
			t.Fatalf("subscription is not null: %s", r.Body)
		}
	})
}

func TestRateLimitAndBudget(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		setLimits := func(rpm, conc, budget int) {
			if r := s.Do(platformtest.Request{Method: "PUT", Path: "/api/v1/api-keys/" + s.Boot.KeyID + "/limits", Key: s.Boot.TestKey,
				Body: map[string]any{"requestsPerMinute": rpm, "maxConcurrentRequests": conc, "monthlyRequestBudget": budget}}); r.Status != 200 {
				t.Fatalf("set limits: %d %s", r.Status, r.Body)
			}
		}
		call := func() *platformtest.Response {
			return s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: s.Boot.TestKey})
		}
		setLimits(3, 4, 1000)
		// The bucket refills at 3 per minute; the limits change itself spent one token.
		var last *platformtest.Response
		for i := 0; i < 4; i++ {
			last = call()
		}
		if last.Status != 429 || last.Code() != "RATE_LIMITED" || last.Header.Get("Retry-After") == "" ||
			last.Header.Get("RateLimit-Limit") != "3" || last.Header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("over the rate: %d %v %s", last.Status, last.Header, last.Body)
		}
		s.Clock.Advance(time.Minute)
		if r := call(); r.Status != 200 {
			t.Fatalf("after a minute: %d %s", r.Status, r.Body)
		}
	})
}

func TestOutboxRoutesForInternalKeys(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		_, internal, err := s.P.IssueInternalKey(ctx, s.Boot.TenantID, s.Boot.WorkspaceID, s.Boot.OwnerID, access.Test, "publisher")
		if err != nil {
			t.Fatal(err)
		}
		// The internal key is never listed or manageable through the API.
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/api-keys?limit=100", Key: s.Boot.TestKey})
		var keys api.KeyPage
		r.Data(t, &keys)
		for _, k := range keys.Items {
			if strings.Contains(strings.Join(k.Scopes, ","), "internal") {
				t.Fatalf("internal key listed: %+v", k)
			}
		}
		list := func(q string) api.OutboxPage {
			r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/internal/events/outbox" + q, Key: internal})
			var p api.OutboxPage
			r.Data(t, &p)
			return p
		}
		page := list("?limit=100")
		var created []outbox.Event
		for _, e := range page.Items {
			if e.Environment != "test" || e.AggregateID == s.Boot.LiveKeyID {
				t.Fatalf("the test internal key lists a live event: %+v", e)
			}
			if e.Type == "api_key.created" {
				created = append(created, e)
			}
		}
		if len(created) < 2 { // the bootstrap test key and the internal key; the live key's event is live
			t.Fatalf("outbox = %+v", page.Items)
		}
		first := page.Items[0]
		r = s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/internal/events/outbox/" + first.ID + "/published", Key: internal})
		var marked outbox.Event
		r.Data(t, &marked)
		if marked.PublishedAt == nil {
			t.Fatalf("mark: %s", r.Body)
		}
		for _, e := range list("?limit=100").Items {
			if e.ID == first.ID {
				t.Fatal("a published event is still listed as unpublished")
			}
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/internal/events/outbox/evt_unknown/published", Key: internal}); r.Status != 404 {
			t.Fatalf("mark unknown: %d %s", r.Status, r.Body)
		}
		// Pagination with a cursor walks every event once.
		all := list("?unpublished=false&limit=100").Items
		seen := 0
		q := "?unpublished=false&limit=1"
		for {
			p := list(q)
			seen += len(p.Items)
			if !p.HasMore {
				break
			}
			q = "?unpublished=false&limit=1&cursor=" + *p.NextCursor
		}
		if seen != len(all) {
			t.Fatalf("paged %d events, listed %d", seen, len(all))
		}
	})
}

func TestHealthReportsRealState(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/health/services", Key: s.Boot.TestKey})
		var h api.HealthReport
		r.Data(t, &h)
		got := map[string]string{}
		for _, sv := range h.Services {
			got[sv.Name] = sv.Status
		}
		if h.Status != "up" || got["database"] != "up" || got["jobs"] != "up" {
			t.Fatalf("health = %+v", h)
		}
		s.P.Close() // stops the worker
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/health/services", Key: s.Boot.TestKey})
		r.Data(t, &h)
		if h.Status != "down" {
			t.Fatalf("health after the worker stopped = %+v", h)
		}
	})
}
