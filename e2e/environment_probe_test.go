package e2e_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/marketplace"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/policy"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// The spec's environment rule: test and live keys never see each other's
// objects. Every record carries the environment of the principal that
// created it, and every read is scoped by tenant, workspace and
// environment, the audit log and the outbox included.

// envOwner is a bootstrapped tenant whose owner signs in: the owner's
// session acts in live mode, or in test mode with testMode.
type envOwner struct {
	boot   platform.Bootstrap
	email  string
	cookie string
}

// bootstrapOwner bootstraps a tenant (test and live keys) whose owner has a
// password, and signs the owner in.
func bootstrapOwner(t *testing.T, s *platformtest.System, name string) *envOwner {
	t.Helper()
	email := strings.ToLower(name) + "@example.test"
	boot, err := s.P.Bootstrap(context.Background(), platform.BootstrapInput{TenantName: name, WorkspaceName: name + " Studio",
		OwnerEmail: email, OwnerName: name + " Owner", LiveKey: true, Password: testPassword})
	if err != nil {
		t.Fatal(err)
	}
	o := &envOwner{boot: boot, email: email}
	o.cookie, _ = s.Login(email, testPassword)
	return o
}

// session is a request as the owner's session in env.
func (o *envOwner) session(env access.Environment, method, path string, body any) platformtest.Request {
	r := platformtest.Request{Method: method, Path: path, Cookie: o.cookie, Body: body}
	if env == access.Test {
		r.Header = map[string]string{transport.EnvironmentHeader: "test"}
	}
	return r
}

// key is the bootstrap API key of env.
func (o *envOwner) key(env access.Environment) string {
	if env == access.Live {
		return o.boot.LiveKey
	}
	return o.boot.TestKey
}

// liveAuditRows makes live audit events through the API as o's live
// session: a fee policy version (o is made super_admin and signs in again),
// an invitation, the invited member's join and a role change. It returns
// the fee policy version's hash and the member's user id.
func liveAuditRows(t *testing.T, s *platformtest.System, o *envOwner) (feeHash, memberID string) {
	t.Helper()
	if err := s.P.GrantSuperAdmin(context.Background(), o.email); err != nil {
		t.Fatal(err)
	}
	o.cookie, _ = s.Login(o.email, testPassword)
	req := o.session(access.Live, http.MethodPut, "/api/v1/admin/fees/marketplace", map[string]any{"feeBps": 321, "minimumFeeAtomic": "7"})
	req.Header = map[string]string{"Idempotency-Key": "live-fees-" + o.email}
	r := s.Do(req)
	var fee api.FeePolicyView
	r.Data(t, &fee)
	if r.Status != http.StatusCreated || fee.Environment != "live" {
		t.Fatalf("live fee policy: %d %s", r.Status, r.Body)
	}
	owner := person{email: o.email, cookie: o.cookie}
	memberEmail := "member." + o.email
	code := invite(t, s, owner, memberEmail, "CREATOR")
	member := join(t, s, memberEmail, "Member", code)
	if r := setRoles(s, owner, member.userID, "FINANCE"); r.Status != http.StatusOK {
		t.Fatalf("live role change: %d %s", r.Status, r.Body)
	}
	return fee.Hash, member.userID
}

// TestAuditLogEnvironment: a test credential holding audit:read (a test API
// key, a session in test mode) reads the test events of its workspace and
// none of the live ones (fee policy, invitation, join, role change made in
// live mode); a live credential reads the live ones and not the test one.
func TestAuditLogEnvironment(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		o := bootstrapOwner(t, s, "Audited")
		s.Clock.Advance(time.Millisecond)
		_, memberID := liveAuditRows(t, s, o)
		s.Clock.Advance(time.Millisecond)
		r := s.Do(o.session(access.Test, http.MethodPatch, "/api/v1/admin/accounts/"+memberID+"/role", map[string]any{"roles": []string{"VIEWER"}}))
		if r.Status != http.StatusOK {
			t.Fatalf("test-mode role change: %d %s", r.Status, r.Body)
		}
		testChange := r.Header.Get("X-Request-Id")

		read := func(req platformtest.Request) []api.AuditEventView {
			t.Helper()
			req.Method, req.Path = http.MethodGet, "/api/v1/admin/audit?limit=100"
			r := s.Do(req)
			if r.Status != http.StatusOK {
				t.Fatalf("audit as %s: %d %s", credentialName(req), r.Status, r.Body)
			}
			var page api.AuditPage
			r.Data(t, &page)
			return page.Items
		}
		liveActions := []string{"fee_policy.published", "member.invited", "member.joined", "member.roles_changed"}
		for _, req := range []platformtest.Request{{Key: o.key(access.Test)}, o.session(access.Test, "", "", nil)} {
			events := read(req)
			if len(events) != 1 || events[0].Action != "member.roles_changed" || events[0].RequestID != testChange {
				t.Errorf("test audit log read as %s = %+v, want only the test-mode role change", credentialName(req), events)
			}
		}
		for _, req := range []platformtest.Request{{Key: o.key(access.Live)}, o.session(access.Live, "", "", nil)} {
			var actions []string
			for _, e := range read(req) {
				if e.RequestID == testChange {
					t.Errorf("live audit log read as %s shows the test-mode role change", credentialName(req))
				}
				actions = append(actions, e.Action)
			}
			for _, a := range liveActions {
				if !slices.Contains(actions, a) {
					t.Errorf("live audit log read as %s = %v, missing %s", credentialName(req), actions, a)
				}
			}
		}
		// The rows say so.
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE workspace_id = ? AND environment = 'test'`, o.boot.WorkspaceID); n != 1 {
			t.Errorf("test audit rows = %d, want 1", n)
		}
	})
}

// credentialName names a request's credential for failure messages.
func credentialName(r platformtest.Request) string {
	mode := "live"
	if r.Header[transport.EnvironmentHeader] == "test" {
		mode = "test"
	}
	switch {
	case strings.HasPrefix(r.Key, "platform_test_"):
		return "a test key"
	case strings.HasPrefix(r.Key, "platform_live_"):
		return "a live key"
	case r.Cookie != "":
		return "a session in " + mode + " mode"
	}
	return "an anonymous caller"
}

// outboxPages lists every event the internal key sees (published or not),
// following the cursor.
func outboxPages(t *testing.T, s *platformtest.System, key string, unpublished bool) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	q := fmt.Sprintf("?unpublished=%t&limit=100", unpublished)
	for pages := 0; ; pages++ {
		r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/internal/events/outbox" + q, Key: key})
		if r.Status != http.StatusOK || pages > 20 {
			t.Fatalf("outbox: %d %s", r.Status, r.Body)
		}
		var p api.OutboxPage
		r.Data(t, &p)
		out = append(out, p.Items...)
		if !p.HasMore {
			return out
		}
		q = fmt.Sprintf("?unpublished=%t&limit=100&cursor=%s", unpublished, url.QueryEscape(*p.NextCursor))
	}
}

// TestOutboxEnvironment: a test internal key lists test events only and
// cannot mark a live event published (NOT_FOUND, the event stays
// unpublished); the live internal key lists and marks it.
func TestOutboxEnvironment(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		_, testInternal, err := s.P.IssueInternalKey(ctx, s.Boot.TenantID, s.Boot.WorkspaceID, s.Boot.OwnerID, access.Test, "test publisher")
		if err != nil {
			t.Fatal(err)
		}
		_, liveInternal, err := s.P.IssueInternalKey(ctx, s.Boot.TenantID, s.Boot.WorkspaceID, s.Boot.OwnerID, access.Live, "live publisher")
		if err != nil {
			t.Fatal(err)
		}
		r, liveKey := createKey(t, s, s.Boot.LiveKey, map[string]any{"name": "live", "scopes": []string{"read"}}, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("create a live key: %d %s", r.Status, r.Body)
		}
		r, testKey := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "test", "scopes": []string{"read"}}, "")
		if r.Status != http.StatusCreated {
			t.Fatalf("create a test key: %d %s", r.Status, r.Body)
		}

		find := func(evs []outbox.Event, aggregate string) *outbox.Event {
			for i := range evs {
				if evs[i].AggregateID == aggregate {
					return &evs[i]
				}
			}
			return nil
		}
		testEvents := outboxPages(t, s, testInternal, false)
		for _, e := range testEvents {
			if e.Environment != "test" {
				t.Errorf("the test internal key lists a %s event: %+v", e.Environment, e)
			}
		}
		if find(testEvents, liveKey.Key.ID) != nil || find(testEvents, s.Boot.LiveKeyID) != nil {
			t.Errorf("the test internal key lists the live keys' events")
		}
		mine := find(testEvents, testKey.Key.ID)
		if mine == nil {
			t.Fatalf("the test internal key misses the test key's event: %+v", testEvents)
		}
		liveEvents := outboxPages(t, s, liveInternal, true)
		live := find(liveEvents, liveKey.Key.ID)
		if live == nil || find(liveEvents, testKey.Key.ID) != nil {
			t.Fatalf("live outbox = %+v", liveEvents)
		}

		mark := func(key, id string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/internal/events/outbox/" + id + "/published", Key: key})
		}
		if r := mark(testInternal, live.ID); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
			t.Fatalf("the test internal key marks a live event: %d %s", r.Status, r.Body)
		}
		if find(outboxPages(t, s, liveInternal, true), liveKey.Key.ID) == nil {
			t.Fatal("a refused mark published the live event")
		}
		if r := mark(liveInternal, mine.ID); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
			t.Fatalf("the live internal key marks a test event: %d %s", r.Status, r.Body)
		}
		if r := mark(testInternal, mine.ID); r.Status != http.StatusOK {
			t.Fatalf("the test internal key marks its event: %d %s", r.Status, r.Body)
		}
		r = mark(liveInternal, live.ID)
		var marked outbox.Event
		r.Data(t, &marked)
		if r.Status != http.StatusOK || marked.PublishedAt == nil || marked.Environment != "live" {
			t.Fatalf("the live internal key marks its event: %d %s", r.Status, r.Body)
		}
	})
}

// probeRoute says how the probe calls one list route as a credential of
// env: the request without its query, and the query parameters beyond
// limit and cursor.
type probeRoute struct {
	call  func(env access.Environment) platformtest.Request
	query string
	// path, when set, is the path the route is called at in env (a
	// route with path parameters); the route's pattern otherwise.
	path func(env access.Environment) string
	// also are further queries the route is probed with, each as a list
	// of its own with its own live rows (the public project listing).
	also []string
	// unscoped, when set, says why the route's items belong to no
	// environment (the live answer's ids are not live rows); its test
	// answer is still searched for every live id.
	unscoped string
}

// isListRoute reports whether a route answers a page or list: a struct
// with an items array.
func isListRoute(rt api.Route) bool {
	if rt.Method != http.MethodGet || rt.Response == nil {
		return false
	}
	typ := reflect.TypeOf(rt.Response)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return false
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "items" && f.Type.Kind() == reflect.Slice {
			return true
		}
	}
	return false
}

// hasQuery reports whether rt documents query parameter name.
func hasQuery(rt api.Route, name string) bool {
	return slices.ContainsFunc(rt.Query, func(p transport.Param) bool { return p.Name == name })
}

// probeItem is what the probe reads of a list item: its identity (id, or
// hash for policy versions) and its environment when it shows one.
type probeItem struct {
	ID          string `json:"id"`
	Hash        string `json:"hash"`
	Environment string `json:"environment"`
}

// probePages calls a list route, following its cursor, and returns every
// answer's body and items. A route that does not answer 200 fails the test.
func probePages(t *testing.T, s *platformtest.System, rt api.Route, pr probeRoute, env access.Environment) ([]string, []probeItem) {
	t.Helper()
	var bodies []string
	var items []probeItem
	cursor := ""
	for pages := 0; ; pages++ {
		q := url.Values{}
		if pr.query != "" {
			q, _ = url.ParseQuery(pr.query)
		}
		if hasQuery(rt, "limit") {
			q.Set("limit", "50")
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		req := pr.call(env)
		req.Method, req.Path = http.MethodGet, rt.Pattern
		if pr.path != nil {
			req.Path = pr.path(env)
		}
		if len(q) > 0 {
			req.Path += "?" + q.Encode()
		}
		r := s.Do(req)
		if r.Status != http.StatusOK || pages > 20 {
			t.Fatalf("%s as %s: %d %s", rt.OperationID, credentialName(req), r.Status, r.Body)
		}
		bodies = append(bodies, string(r.Body))
		var page struct {
			Items      []probeItem `json:"items"`
			NextCursor *string     `json:"nextCursor"`
		}
		r.Data(t, &page)
		items = append(items, page.Items...)
		if page.NextCursor == nil {
			return bodies, items
		}
		cursor = *page.NextCursor
	}
}

// TestEnvironmentProbe makes live rows through the API for every kind of
// record a list route returns, then calls every list route of the route
// table (GET routes answering a page or list, so a list route added later
// is probed too) with a test credential of the same workspace holding the
// scope or role the route needs, and fails when a live row's id, or an
// item of the live environment, appears in any answer. A list route the
// probe does not know how to call fails it.
func TestEnvironmentProbe(t *testing.T) {
	t.Parallel()
	opts := billingOptions()
	opts.LiveSimulators = true
	// The AI registry's live rows (models, providers, their health) come
	// from the configuration: each environment has its own, with ids of
	// its own here, so that a live id in a test answer is a leak.
	opts.AI = aiConfig()
	// Webhook endpoints need a public name to be created.
	opts.Outbound.Resolver = urlguardtest.Resolver{"hooks.example.com": {probeWebhookHost}}
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		o := bootstrapOwner(t, s, "Probe")
		internal := map[access.Environment]string{}
		for _, env := range []access.Environment{access.Test, access.Live} {
			_, k, err := s.P.IssueInternalKey(ctx, o.boot.TenantID, o.boot.WorkspaceID, o.boot.OwnerID, env, string(env)+" publisher")
			if err != nil {
				t.Fatal(err)
			}
			internal[env] = k
		}

		// Live rows, through the API: audit events and a fee policy
		// version (liveAuditRows), an API key and its outbox event, a
		// provider credential, and a subscription with its checkout,
		// credit grant, audit event and outbox events.
		_, memberID := liveAuditRows(t, s, o)
		if r, _ := createKey(t, s, o.key(access.Live), map[string]any{"name": "live probe", "scopes": []string{"read"}}, ""); r.Status != http.StatusCreated {
			t.Fatalf("live key: %d %s", r.Status, r.Body)
		}
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/providers/credentials", Key: o.key(access.Live),
			Body: map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": s.ProviderB.APIKey(), "label": "live"}})
		if r.Status != http.StatusCreated {
			t.Fatalf("live provider credential: %d %s", r.Status, r.Body)
		}
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/saas/checkout", map[string]string{"planId": "pro"}))
		var chk api.CheckoutView
		r.Data(t, &chk)
		if r.Status != http.StatusCreated {
			t.Fatalf("live checkout: %d %s", r.Status, r.Body)
		}
		stored, err := s.DB.Read().CheckoutGet(ctx, chk.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.LiveStripe.Pay(stored.ProviderSessionID); err != nil {
			t.Fatal(err)
		}
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/saas/checkout/"+chk.ID+"/reconcile", nil))
		r.Data(t, &chk)
		if r.Status != http.StatusOK || chk.Status != "activated" {
			t.Fatalf("live reconcile: %d %s", r.Status, r.Body)
		}
		// A live project, private to the workspace, and a public one of
		// the owner, whose wallet is verified (a wallet link holds in both
		// environments), for the public listing and the creator's.
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/projects", map[string]string{"title": "Live probe", "type": "single"}))
		if r.Status != http.StatusCreated {
			t.Fatalf("live project: %d %s", r.Status, r.Body)
		}
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/projects", map[string]string{"title": "Live public probe", "type": "single",
			"visibility": "public"}))
		var livePublic api.ProjectView
		r.Data(t, &livePublic)
		if r.Status != http.StatusCreated {
			t.Fatalf("live public project: %d %s", r.Status, r.Body)
		}
		ownerWallet := newWalletKey(t)
		linkWallet(t, s, person{email: o.email, cookie: o.cookie}, ownerWallet)
		// A project with a member in each environment: the test
		// credential lists the test one's.
		projects := map[access.Environment]string{}
		for _, env := range []access.Environment{access.Live, access.Test} {
			r = s.Do(o.session(env, http.MethodPost, "/api/v1/projects", map[string]string{"title": string(env) + " members probe", "type": "single"}))
			var pv api.ProjectView
			r.Data(t, &pv)
			if r.Status != http.StatusCreated {
				t.Fatalf("%s project: %d %s", env, r.Status, r.Body)
			}
			projects[env] = pv.ID
			r = s.Do(o.session(env, http.MethodPut, "/api/v1/projects/"+pv.ID+"/members/"+memberID, map[string]string{"template": "collaborator"}))
			if r.Status != http.StatusOK {
				t.Fatalf("%s project member: %d %s", env, r.Status, r.Body)
			}
		}
		// The live one, opened, holds a live submission of a live asset;
		// the test credential lists the test one's submissions.
		if r := s.Do(o.session(access.Live, http.MethodPost, "/api/v1/projects/"+projects[access.Live]+"/status", map[string]string{"status": "OPEN"})); r.Status != http.StatusOK {
			t.Fatalf("open the live project: %d %s", r.Status, r.Body)
		}
		r = upload(s, o.key(access.Live), "audio/wav", pcmWAV(8000, 800, func(int) float64 { return 0.25 }))
		var liveAsset api.AssetView
		r.Data(t, &liveAsset)
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/submissions", map[string]any{"projectId": projects[access.Live],
			"type": "audio", "title": "Live take", "assetId": liveAsset.ID}))
		if r.Status != http.StatusCreated {
			t.Fatalf("live submission: %d %s", r.Status, r.Body)
		}
		// A live release of the live asset.
		relReq := o.session(access.Live, http.MethodPost, "/api/v1/releases", map[string]any{
			"target": map[string]string{"type": "asset", "id": liveAsset.ID}, "title": "Live release",
			"releaseDate": s.Clock.Now().UTC().AddDate(0, 0, 7).Format("2006-01-02"), "territories": []string{"WW"},
			"distributor": "Live Distribution"})
		relReq.Header = map[string]string{"Idempotency-Key": "live-release"}
		if r := s.Do(relReq); r.Status != http.StatusCreated {
			t.Fatalf("live release: %d %s", r.Status, r.Body)
		}
		// The owner's live submission to its public project, accepted: a
		// contribution of the owner's wallet.
		if r := s.Do(o.session(access.Live, http.MethodPost, "/api/v1/projects/"+livePublic.ID+"/status", map[string]string{"status": "OPEN"})); r.Status != http.StatusOK {
			t.Fatalf("open the live public project: %d %s", r.Status, r.Body)
		}
		r = s.Do(o.session(access.Live, http.MethodPost, "/api/v1/submissions", map[string]any{"projectId": livePublic.ID,
			"type": "audio", "title": "Live contribution", "assetId": liveAsset.ID}))
		var contribution api.SubmissionView
		r.Data(t, &contribution)
		if r.Status != http.StatusCreated {
			t.Fatalf("live public submission: %d %s", r.Status, r.Body)
		}
		for _, to := range []string{"UNDER_REVIEW", "ACCEPTED"} {
			if r := s.Do(o.session(access.Live, http.MethodPost, "/api/v1/submissions/"+contribution.ID+"/review", map[string]string{"status": to})); r.Status != http.StatusOK {
				t.Fatalf("review the live contribution (%s): %d %s", to, r.Status, r.Body)
			}
		}
		// No route of this system moves the live financial, provider-cost
		// or rewards ledgers (live generation and rewards have no provider
		// here): they are posted as their domains post them.
		sc := ledger.Scope{TenantID: o.boot.TenantID, WorkspaceID: o.boot.WorkspaceID, Environment: access.Live}
		for _, m := range []ledger.Movement{
			{Ledger: ledger.Financial, Reference: "order:ord_live", Decimals: 6, Postings: probePostings("system:buyer_payments", "seller:usr_1", 1_000_000)},
			{Ledger: ledger.ProviderCost, Reference: "usage:op_live", Postings: probePostings("system:provider_a", "cost:generation", 3)},
			{Ledger: ledger.Rewards, Reference: "fund:chl_live", Decimals: 9, Postings: probePostings("system:treasury", "pool:chl_live", 5)},
		} {
			m.Scope, m.Type = sc, ledger.TypeTransfer
			if err := s.DB.InTx(ctx, func(tx *store.Tx) error { _, _, err := ledger.New().Post(ctx, tx, m); return err }); err != nil {
				t.Fatalf("post %s: %v", m.Reference, err)
			}
		}

		// No cluster serves live here, so no live order can be paid through
		// the API: a live order and the license entitlement its settlement
		// would issue are written as the marketplace writes them.
		liveOrder(t, s, o.boot.TenantID, o.boot.WorkspaceID, liveAsset.ID)
		// No AI provider serves live here: a live AI operation is written
		// as the completion path writes it.
		liveAI := liveAIOperation(t, s, o.boot.TenantID, o.boot.WorkspaceID, o.boot.OwnerID)

		// No reward treasury serves live here: a live challenge and a
		// reward of the owner's wallet are written as the rewards domain
		// writes them.
		liveReward(t, s, o.boot, projects[access.Live], ownerWallet.addr)

		// A webhook endpoint in each environment, and a live delivery.
		hooks := probeWebhooks(t, s, o)

		key := func(env access.Environment) platformtest.Request { return platformtest.Request{Key: o.key(env)} }
		session := func(env access.Environment) platformtest.Request { return o.session(env, "", "", nil) }
		projectMembers := func(env access.Environment) string { return "/api/v1/projects/" + projects[env] + "/members" }
		projectSubmissions := func(env access.Environment) string { return "/api/v1/projects/" + projects[env] + "/submissions" }
		probes := map[string]probeRoute{
			"listAuditEvents":         {call: key}, // the bootstrap keys hold audit:read
			"listApiKeys":             {call: key},
			"listLedgerActivity":      {call: key}, // audit:read: the workspace's movements, the platform's grants included
			"listLedgerFinancial":     {call: key},
			"listLedgerRewards":       {call: key},
			"listProviderCredentials": {call: key},
			"listSubscriptionHistory": {call: session},
			"listFeePolicyVersions":   {call: session}, // the owner is super_admin
			"listProjects":            {call: session, also: []string{"visibility=public"}},
			"listCreatorProjects":     {call: key, path: func(access.Environment) string { return "/api/v1/creators/" + ownerWallet.addr + "/projects" }}, // scope read
			"listProjectMembers":      {call: session, path: projectMembers},
			"listProjectSubmissions":  {call: session, path: projectSubmissions},
			"listOutboxEvents":        {call: func(env access.Environment) platformtest.Request { return platformtest.Request{Key: internal[env]} }, query: "unpublished=false"},
			"listMembers":             {call: session, unscoped: "a membership belongs to the workspace in both environments"},
			"listSessions":            {call: session, unscoped: "a session acts in either environment, by request"},
			"listProviders":           {call: key, unscoped: "the catalog of providers, answered for the caller's environment"},
			"listAiModels":            {call: key}, // any member; the registry of the caller's environment
			"listAiProviders":         {call: key},
			"listAiAdminModels":       {call: session}, // the owner is super_admin
			"listAiAdminProviders":    {call: session},
			"listAiHealth":            {call: session},
			"listAiUsage":             {call: key}, // the bootstrap keys hold ai:use
			"listAiTools":             {call: key, unscoped: "the catalog of tools, the same in both environments"},
			"listMarketplaceOrders":   {call: key}, // the bootstrap keys hold ledger:read
			"listEntitlements":        {call: key},
			"listChallenges":          {call: key}, // scope read
			"listRewards":             {call: session},
			"listProjectRewards":      {call: key, path: func(env access.Environment) string { return "/api/v1/projects/" + projects[env] + "/rewards" }},
			"listCreatorRewards":      {call: key, path: func(access.Environment) string { return "/api/v1/creators/" + ownerWallet.addr + "/rewards" }},
			"listReleases":            {call: key}, // scope read
			"listActionDefinitions":   {call: key, unscoped: "the catalog, read from the caller's environment's configuration"},
			"listWebhookEndpoints":    {call: key}, // the bootstrap keys hold webhooks:read
			"listWebhookDeliveries": {call: key, path: func(env access.Environment) string {
				return "/api/v1/webhook-endpoints/" + hooks[env] + "/deliveries"
			}},
		}
		// Discovery (scope read): the live public project and the
		// accepted live audio submission to it, a track. Creators are
		// users, who belong to no environment (a creator's counts do;
		// TestDiscover reads them in both).
		probes["listDiscover"] = probeRoute{call: key, also: []string{"kind=track"}}
		// The owner's contributions (scope read): its accepted live
		// submission to its public project.
		probes["listCreatorContributions"] = probeRoute{call: key, path: func(access.Environment) string {
			return "/api/v1/creators/" + ownerWallet.addr + "/contributions"
		}}

		type answer struct {
			op     string
			bodies []string
			items  []probeItem
		}
		var lists []api.Route
		for _, rt := range s.P.Routes() {
			if isListRoute(rt) {
				lists = append(lists, rt)
			}
		}
		seen := map[string]bool{}
		live := map[string]string{} // live row id -> the list route that showed it
		var tests []answer
		for _, rt := range lists {
			seen[rt.OperationID] = true
			pr, ok := probes[rt.OperationID]
			if !ok {
				t.Errorf("list route %s %s (%s) is not probed: add how a test credential calls it", rt.Method, rt.Pattern, rt.OperationID)
				continue
			}
			for _, q := range append([]string{pr.query}, pr.also...) {
				pr.query = q
				_, liveItems := probePages(t, s, rt, pr, access.Live)
				if pr.unscoped == "" {
					for _, it := range liveItems {
						id := cmp.Or(it.ID, it.Hash)
						if id == "" || it.Environment != "" && it.Environment != "live" {
							t.Errorf("%s?%s (live) answers an item without an id or of another environment: %+v", rt.OperationID, q, it)
							continue
						}
						live[id] = rt.OperationID
					}
					if len(liveItems) == 0 {
						t.Errorf("%s?%s: no live row was made for it; the probe would not see it leak", rt.OperationID, q)
					}
				}
				bodies, items := probePages(t, s, rt, pr, access.Test)
				tests = append(tests, answer{rt.OperationID, bodies, items})
			}
		}
		for op := range probes {
			if !seen[op] {
				t.Errorf("the probe knows %s, which is no list route", op)
			}
		}
		for _, a := range tests {
			for _, it := range a.items {
				if it.Environment == "live" {
					t.Errorf("%s answers a test credential with a live item: %+v", a.op, it)
				}
			}
			for id, from := range live {
				for _, b := range a.bodies {
					if strings.Contains(b, id) {
						t.Errorf("%s answers a test credential with live row %s (listed live by %s)", a.op, id, from)
					}
				}
			}
		}
		t.Logf("probed %d list routes with %d live rows", len(lists), len(live))

		// The reads by id of the live rows made here answer the test
		// credential as an unknown id does.
		reads := []platformtest.Request{
			{Key: o.key(access.Test), Path: "/api/v1/api-keys/" + o.boot.LiveKeyID},
			{Key: o.key(access.Test), Path: "/api/v1/api-keys/" + o.boot.LiveKeyID + "/limits"},
			o.session(access.Test, "", "/api/v1/saas/checkout/"+chk.ID, nil),
			o.session(access.Test, "", "/api/v1/saas/checkout/"+chk.ID+"?environment=test", nil),
			o.session(access.Test, "", "/api/v1/projects/"+projects[access.Live]+"/members", nil),
			{Key: o.key(access.Test), Path: "/api/v1/ai/operations/" + liveAI},
			{Key: o.key(access.Test), Path: "/api/v1/webhook-endpoints/" + hooks[access.Live]},
			{Key: o.key(access.Test), Path: "/api/v1/webhook-endpoints/" + hooks[access.Live] + "/deliveries"},
		}
		credentials := 0
		for id, from := range live {
			if from == "listProviderCredentials" {
				reads = append(reads, platformtest.Request{Key: o.key(access.Test), Path: "/api/v1/providers/credentials/" + id})
				credentials++
			}
		}
		if credentials == 0 {
			t.Error("no live provider credential to read by id")
		}
		for _, req := range reads {
			req.Method = http.MethodGet
			if r := s.Do(req); r.Status != http.StatusNotFound || r.Code() != "NOT_FOUND" {
				t.Errorf("GET %s as %s: %d %s, want 404 NOT_FOUND", req.Path, credentialName(req), r.Status, r.Body)
			}
		}
	})
}

// probePostings is a two-line movement of amount from one account to another.
func probePostings(from, to string, amount money.Atomic) []ledger.Posting {
	return []ledger.Posting{{Account: from, Direction: ledger.Debit, Amount: amount}, {Account: to, Direction: ledger.Credit, Amount: amount}}
}

// liveAIOperation stores a completed live AI operation of workspace ws
// asked by user, and returns its id.
func liveAIOperation(t *testing.T, s *platformtest.System, tenantID, ws, user string) string {
	t.Helper()
	ctx := context.Background()
	var id string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		settled := int64(0)
		o := ai.Operation{ID: tx.NewID(ai.OperationIDPrefix), Scope: access.Scope{TenantID: tenantID, WorkspaceID: ws, Environment: access.Live},
			CreatedByUserID: user, Endpoint: ai.EndpointChat, Task: ai.TaskChat, Mode: ai.ModeText, Status: ai.OpCompleted,
			Reason: ai.ReasonPrimary, ModelID: "live-small", ProviderID: "live-openai", Attempts: []ai.CallAttempt{}, Finish: ai.FinishCompleted,
			UsageSource: ai.UsageNone, CreditsSettled: &settled, Version: 2, DeadlineAt: now, CreatedAt: now, UpdatedAt: now, EndedAt: &now}
		id = o.ID
		_, err := tx.AIOperationInsert(ctx, o)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// liveOrder stores a fulfilled live order of workspace ws buying asset
// from itself, and its license entitlement, in one unit of work.
func liveOrder(t *testing.T, s *platformtest.System, tenantID, ws, assetID string) {
	t.Helper()
	ctx := context.Background()
	sc := access.Scope{TenantID: tenantID, WorkspaceID: ws, Environment: access.Live}
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		o := marketplace.Order{ID: tx.NewID(marketplace.OrderPrefix), Version: 8, State: marketplace.OrderFulfilled, IntentID: "txi_live_probe",
			Buyer: sc, BuyerUserID: "usr_live", CreatedAt: now, UpdatedAt: now,
			Snapshot: marketplace.Snapshot{ListingID: "lst_live", ListingVersion: 1, AssetID: assetID, Title: "Live", Seller: sc,
				PriceAtomic: 1_000, Decimals: 6, LicenseID: "lic_live", LicenseKind: marketplace.KindNonExclusive,
				FeePolicy: policy.Ref{ID: "fees.marketplace", Version: 1}, MinimumFeeAtomic: "0", SellerNetAtomic: 1_000}}
		e := marketplace.Entitlement{ID: tx.NewID(marketplace.EntitlementPrefix), Holder: sc, AssetID: assetID, Seller: sc,
			LicenseID: "lic_live", OrderID: o.ID, IntentID: o.IntentID, CreatedAt: now}
		o.EntitlementID = e.ID
		if err := tx.OrderInsert(ctx, o); err != nil {
			return err
		}
		return tx.EntitlementInsert(ctx, e)
	})
	if err != nil {
		t.Fatal(err)
	}
}
