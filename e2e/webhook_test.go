package e2e_test

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
	"github.com/creatormusic/platform/webhook"
	"github.com/creatormusic/platform/webhook/webhooktest"
)

// whResolver is a resolver whose answers a test changes while the
// platform runs (DNS that changes after an endpoint was created).
type whResolver struct {
	mu sync.Mutex
	m  urlguardtest.Resolver
}

// LookupNetIP implements urlguard.Resolver.
func (r *whResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	m := maps.Clone(r.m)
	r.mu.Unlock()
	return m.LookupNetIP(ctx, network, host)
}

// set makes host resolve to addrs.
func (r *whResolver) set(host string, addrs ...netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[host] = addrs
}

// whEnv is a system with a webhook receiver serving HTTPS on loopback as
// hooks.example.com (the platform trusts its certificate and resolves the
// name to it; inward.example.com resolves to a private address).
type whEnv struct {
	s    *platformtest.System
	recv *webhooktest.Receiver
	dns  *whResolver
	port string
}

// url is the receiver's URL at path, by name.
func (w *whEnv) url(path string) string { return "https://hooks.example.com:" + w.port + path }

// whDialects runs fn on SQLite and PostgreSQL, each with a fresh system
// and receiver; tune adjusts the system's options.
func whDialects(t *testing.T, tune func(o *platformtest.Options), fn func(t *testing.T, w *whEnv)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			w := &whEnv{}
			w.recv = webhooktest.New(t, func() time.Time { return w.s.Clock.Now() }, true)
			ap, err := urlguard.LoopbackOf(w.recv.URL)
			if err != nil {
				t.Fatal(err)
			}
			w.port = fmt.Sprint(ap.Port())
			w.dns = &whResolver{m: urlguardtest.Resolver{"hooks.example.com": {ap.Addr()},
				"inward.example.com": {netip.MustParseAddr("10.0.0.8")}}}
			roots := x509.NewCertPool()
			roots.AddCert(w.recv.Server().Certificate())
			opts := platformtest.Options{Postgres: pg, Jobs: platform.JobsConfig{PollInterval: 10 * time.Millisecond},
				AllowLoopback: []string{w.recv.URL}, Outbound: platform.Outbound{Resolver: w.dns, RootCAs: roots},
				// The retries come at their nominal delays.
				Webhooks: webhook.Tuning{JitterFunc: func() float64 { return 0.5 }}}
			if tune != nil {
				tune(&opts)
			}
			w.s = platformtest.New(t, opts)
			// Endpoints receive the events that occur from their creation
			// on: the bootstrap's came before.
			w.s.Clock.Advance(time.Millisecond)
			fn(t, w)
		})
	}
}

// whRequest is a request with key, and an Idempotency-Key when idem is
// set.
func whRequest(key, method, path, idem string, body any) platformtest.Request {
	h := map[string]string{}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return platformtest.Request{Method: method, Path: path, Key: key, Body: body, Header: h}
}

// create registers an endpoint with key; it must answer 201.
func (w *whEnv) create(t testing.TB, key string, body map[string]any) api.WebhookEndpointSecret {
	t.Helper()
	r := w.s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", "", body))
	if r.Status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	var v api.WebhookEndpointSecret
	r.Data(t, &v)
	return v
}

// fanout runs the fan-out once, as the periodic job does.
func (w *whEnv) fanout(t testing.TB) int {
	t.Helper()
	n, err := w.s.P.Webhooks().Fanout(context.Background())
	if err != nil {
		t.Fatalf("fan-out: %v", err)
	}
	return n
}

// apiKeyEvent makes an api_key.created event in the bootstrap workspace's
// test environment and returns the key's id (the event's aggregate).
func (w *whEnv) apiKeyEvent(t testing.TB) string {
	t.Helper()
	r := w.s.Do(whRequest(w.s.Boot.TestKey, http.MethodPost, "/api/v1/api-keys", "", map[string]any{"name": "event", "scopes": []string{"read"}}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	var ks api.KeySecret
	r.Data(t, &ks)
	return ks.Key.ID
}

// waitRows waits until query counts want rows.
func (w *whEnv) waitRows(t testing.TB, want int, query string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := count(t, w.s, query, args...)
		if n == want {
			return
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d", query, n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAttempts waits until endpoint id's deliveries hold n attempts in
// all, recorded.
func (w *whEnv) waitAttempts(t testing.TB, endpointID string, n int) {
	t.Helper()
	w.waitRows(t, n, `SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = ?`, endpointID)
}

// deliveries reads endpoint id's delivery log with key.
func (w *whEnv) deliveries(t testing.TB, key, id string) []api.WebhookDeliveryView {
	t.Helper()
	r := w.s.Do(whRequest(key, http.MethodGet, "/api/v1/webhook-endpoints/"+id+"/deliveries", "", nil))
	if r.Status != http.StatusOK {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var p api.WebhookDeliveryPage
	r.Data(t, &p)
	return p.Items
}

// endpoint reads endpoint id with key.
func (w *whEnv) endpoint(t testing.TB, key, id string) api.WebhookEndpointView {
	t.Helper()
	r := w.s.Do(whRequest(key, http.MethodGet, "/api/v1/webhook-endpoints/"+id, "", nil))
	if r.Status != http.StatusOK {
		t.Fatalf("endpoint %s: %d %s", id, r.Status, r.Body)
	}
	var v api.WebhookEndpointView
	r.Data(t, &v)
	return v
}

// TestWebhookEndpointLifecycle: an endpoint is created with its secret
// shown once (an idempotent replay shows the same one), read and listed
// without it, changed field by field with an event naming the fields,
// disabled and enabled, rotated and deleted; bad fields and the
// per-workspace bound are refused and write nothing; no secret is in any
// read, log line or table in clear.
func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		body := map[string]any{"url": w.url("/hook"), "enabledEvents": []string{"api_key.created", "project.created"},
			"description": "CI"}
		r := s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", "hook-1", body))
		var created api.WebhookEndpointSecret
		r.Data(t, &created)
		e := created.Endpoint
		if r.Status != http.StatusCreated || !strings.HasPrefix(created.Secret, webhook.SecretPrefix) || e.Status != "enabled" ||
			e.Environment != "test" || e.URL != w.url("/hook") || !slices.Equal(e.EnabledEvents, []string{"api_key.created", "project.created"}) ||
			e.Version != 1 || e.DisabledReason != nil || e.PreviousSecretExpiresAt != nil {
			t.Fatalf("created: %d %s", r.Status, r.Body)
		}
		r = s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", "hook-1", body))
		var replay api.WebhookEndpointSecret
		r.Data(t, &replay)
		if r.Header.Get("Idempotent-Replayed") != "true" || replay.Secret != created.Secret || replay.Endpoint.ID != e.ID {
			t.Fatalf("replay: %d %v %s", r.Status, r.Header, r.Body)
		}
		secrets := []string{created.Secret}

		// Reads never carry a secret.
		got := w.endpoint(t, key, e.ID)
		r = s.Do(whRequest(key, http.MethodGet, "/api/v1/webhook-endpoints", "", nil))
		var page api.WebhookEndpointPage
		r.Data(t, &page)
		if len(page.Items) != 1 || page.Items[0].ID != e.ID || got.ID != e.ID || strings.Contains(string(r.Body), "whsec_") {
			t.Fatalf("list: %s", r.Body)
		}

		// Bad fields.
		n := 0
		bad := func(status int, code, field, reason string, change func(b map[string]any)) {
			t.Helper()
			b := maps.Clone(body)
			change(b)
			n++
			r := s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", fmt.Sprintf("bad-%d", n), b))
			refused(t, "bad "+field+" "+reason, r, status, code, "field", field)
			if reason != "" && detail(r, "reason") != reason {
				t.Errorf("bad %s: reason %v, want %s", field, detail(r, "reason"), reason)
			}
		}
		bad(400, "INVALID_INPUT", "enabledEvents[1]", "unknown_event_type", func(b map[string]any) { b["enabledEvents"] = []string{"api_key.created", "nope.nothing"} })
		bad(400, "INVALID_INPUT", "enabledEvents[0]", "unknown_event_type", func(b map[string]any) { b["enabledEvents"] = []string{"webhook.test"} })
		bad(400, "INVALID_INPUT", "enabledEvents[1]", "duplicate", func(b map[string]any) { b["enabledEvents"] = []string{"project.created", "project.created"} })
		bad(400, "INVALID_INPUT", "enabledEvents[0]", "wildcard_not_alone", func(b map[string]any) { b["enabledEvents"] = []string{"*", "project.created"} })
		bad(400, "INVALID_INPUT", "enabledEvents", "", func(b map[string]any) { b["enabledEvents"] = []string{} })
		bad(400, "INVALID_INPUT", "description", "", func(b map[string]any) { b["description"] = strings.Repeat("x", 501) })
		// Without the host's loopback option, a loopback URL is refused.
		bad(422, "URL_NOT_ALLOWED", "url", "scheme", func(b map[string]any) { b["url"] = "http://127.0.0.1:" + w.port + "/hook" })

		// Changes, each an event naming the fields.
		patch := func(b map[string]any) api.WebhookEndpointView {
			t.Helper()
			r := s.Do(whRequest(key, http.MethodPatch, "/api/v1/webhook-endpoints/"+e.ID, "", b))
			if r.Status != http.StatusOK {
				t.Fatalf("patch %v: %d %s", b, r.Status, r.Body)
			}
			var v api.WebhookEndpointView
			r.Data(t, &v)
			return v
		}
		if v := patch(map[string]any{"enabledEvents": []string{"*"}, "description": "all"}); !slices.Equal(v.EnabledEvents, []string{"*"}) ||
			v.Description != "all" || v.Version != 2 {
			t.Errorf("patched: %+v", v)
		}
		if v := patch(map[string]any{"description": "all"}); v.Version != 2 {
			t.Errorf("a change that changes nothing wrote: %+v", v)
		}
		if v := patch(map[string]any{"enabled": false}); v.Status != "disabled" || v.DisabledReason == nil || *v.DisabledReason != "manual" {
			t.Errorf("disabled: %+v", v)
		}
		refused(t, "a test event to a disabled endpoint", s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints/"+e.ID+"/test", "", nil)),
			http.StatusConflict, "INVALID_STATE_TRANSITION", "reason", "endpoint_disabled")
		if v := patch(map[string]any{"enabled": true}); v.Status != "enabled" || v.DisabledReason != nil || v.Version != 4 {
			t.Errorf("enabled: %+v", v)
		}
		var changed []string
		for _, p := range outboxPayloads(t, s, "webhook_endpoint.updated", e.ID) {
			changed = append(changed, fmt.Sprint(p["changed"]))
		}
		if !slices.Equal(changed, []string{"[enabledEvents description]", "[enabled]", "[enabled]"}) {
			t.Errorf("update events name %v", changed)
		}

		// Rotation: a new secret, once; the previous one signs for a day.
		r = s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints/"+e.ID+"/rotate-secret", "rot-1", nil))
		var rotated api.WebhookEndpointSecret
		r.Data(t, &rotated)
		if r.Status != http.StatusOK || rotated.Secret == created.Secret || !strings.HasPrefix(rotated.Secret, webhook.SecretPrefix) ||
			rotated.Endpoint.PreviousSecretExpiresAt == nil || !rotated.Endpoint.PreviousSecretExpiresAt.Equal(s.Clock.Now().Add(24*time.Hour)) {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		secrets = append(secrets, rotated.Secret)
		refused(t, "an overlap over 7 days", s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints/"+e.ID+"/rotate-secret", "",
			map[string]any{"expireCurrentAfterSeconds": 604801})), http.StatusBadRequest, "INVALID_INPUT", "field", "expireCurrentAfterSeconds")

		// The bound: 16 endpoints per workspace and environment.
		for i := 2; i <= webhook.DefaultMaxEndpoints; i++ {
			c := w.create(t, key, map[string]any{"url": w.url(fmt.Sprintf("/hook/%d", i)), "enabledEvents": []string{"project.created"}})
			secrets = append(secrets, c.Secret)
		}
		r = s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{"url": w.url("/17"), "enabledEvents": []string{"*"}}))
		refused(t, "the 17th endpoint", r, http.StatusConflict, "CONFLICT", "reason", "endpoint_limit")
		// The live environment has its own.
		w.create(t, s.Boot.LiveKey, map[string]any{"url": w.url("/live"), "enabledEvents": []string{"*"}})

		// Deletion: gone from reads, and its slot is free again.
		r = s.Do(whRequest(key, http.MethodDelete, "/api/v1/webhook-endpoints/"+e.ID, "", nil))
		if r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		refused(t, "a deleted endpoint", s.Do(whRequest(key, http.MethodGet, "/api/v1/webhook-endpoints/"+e.ID, "", nil)), http.StatusNotFound, "NOT_FOUND")
		w.create(t, key, map[string]any{"url": w.url("/again"), "enabledEvents": []string{"*"}})
		for typ, want := range map[string]int{"webhook_endpoint.created": webhook.DefaultMaxEndpoints + 2, "webhook_endpoint.secret_rotated": 1,
			"webhook_endpoint.deleted": 1} {
			if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = ?`, typ); n != want {
				t.Errorf("%d %s events, want %d", n, typ, want)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND status = 'deleted' AND secret_sealed = ?`, e.ID, []byte{}); n != 1 {
			t.Errorf("the deleted endpoint keeps its secret")
		}
		noSecretAnywhere(t, w, secrets)
	})
}

// noSecretAnywhere fails t when a signing secret, or its key's base64, is
// in clear in any text or blob column of the tables that could hold it,
// or in the platform's log.
func noSecretAnywhere(t *testing.T, w *whEnv, secrets []string) {
	t.Helper()
	ctx := context.Background()
	needles := map[string]string{}
	for _, sec := range secrets {
		needles[sec] = sec
		needles[strings.TrimPrefix(sec, webhook.SecretPrefix)] = sec
	}
	for _, table := range []string{"webhook_endpoints", "webhook_deliveries", "webhook_attempts", "idempotency_records", "request_receipts",
		"outbox_events", "jobs", "audit_events"} {
		rows, err := w.s.DB.Read().IDB().QueryContext(ctx, "SELECT * FROM "+table)
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
				for n := range needles {
					if strings.Contains(string(v), n) {
						t.Errorf("%s.%s holds a signing secret in clear", table, cols[i])
					}
				}
			}
		}
		rows.Close()
	}
	log := w.s.Log.String()
	for n := range needles {
		if strings.Contains(log, n) {
			t.Error("the log holds a signing secret")
		}
	}
}

// TestWebhookDeliveryRetriesThenSucceeds: an event delivered to an
// endpoint that fails twice is retried after the schedule's delays (the
// fake clock moving through them) and succeeds on the third attempt;
// each attempt is signed as the Standard Webhooks specification says,
// with the event id as webhook-id on all three and the attempt's own
// timestamp; the log shows the three attempts, and a redelivery makes a
// fourth, manual one. An endpoint subscribed to other types gets nothing.
func TestWebhookDeliveryRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		e := w.create(t, key, map[string]any{"url": w.url("/hook"), "enabledEvents": []string{"api_key.created"}})
		other := w.create(t, key, map[string]any{"url": w.url("/other"), "enabledEvents": []string{"project.created"}})
		w.recv.Trust(e.Secret)
		w.recv.Respond(func(n int, d webhooktest.Delivery) (int, string) {
			if n <= 2 {
				return http.StatusInternalServerError, "not yet"
			}
			return http.StatusOK, "ok"
		})
		keyID := w.apiKeyEvent(t)
		if n := w.fanout(t); n != 1 {
			t.Fatalf("the fan-out made %d deliveries, want 1", n)
		}
		if n := w.fanout(t); n != 0 {
			t.Fatalf("a second fan-out made %d deliveries", n)
		}
		start := s.Clock.Now()
		w.waitAttempts(t, e.Endpoint.ID, 1)
		d := w.deliveries(t, key, e.Endpoint.ID)[0]
		if d.Status != "pending" || d.AttemptCount != 1 || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(start.Add(webhook.RetrySchedule()[0])) {
			t.Fatalf("after the first attempt: %+v", d)
		}
		s.Clock.Advance(webhook.MaxRetryDelay(1))
		w.waitAttempts(t, e.Endpoint.ID, 2)
		s.Clock.Advance(webhook.MaxRetryDelay(2))
		w.waitAttempts(t, e.Endpoint.ID, 3)

		got := w.recv.Wait(t, 3, 5*time.Second)
		var stamps []string
		for i, g := range got {
			ev, err := g.Event()
			if g.Err != nil || err != nil || g.ID != ev.ID || ev.Type != "api_key.created" || ev.AggregateID != keyID ||
				ev.Environment != "test" || ev.WorkspaceID != s.Boot.WorkspaceID || ev.SchemaVersion != 1 || g.Path != "/hook" {
				t.Errorf("delivery %d: %v %v %+v %s", i+1, g.Err, err, ev, g.Body)
			}
			if g.ID != got[0].ID {
				t.Errorf("delivery %d has webhook-id %s, the first %s", i+1, g.ID, got[0].ID)
			}
			stamps = append(stamps, g.Timestamp)
			// Tampering with the body breaks the signature.
			g.Body = append(g.Body, ' ')
			if _, err := webhooktest.Check([]string{e.Secret}, g, s.Clock.Now(), webhooktest.Tolerance); err == nil {
				t.Error("a changed body verified")
			}
		}
		if stamps[0] == stamps[1] || stamps[1] == stamps[2] {
			t.Errorf("attempts share a timestamp: %v", stamps)
		}
		// The platform's own verifier agrees, and the tolerance holds.
		h := http.Header{}
		h.Set(webhook.HeaderID, got[2].ID)
		h.Set(webhook.HeaderTimestamp, got[2].Timestamp)
		h.Set(webhook.HeaderSignature, got[2].Signature)
		if err := webhook.Verify(e.Secret, h, got[2].Body, s.Clock.Now(), 0); err != nil {
			t.Errorf("webhook.Verify: %v", err)
		}
		if _, err := webhooktest.Check([]string{e.Secret}, got[2], s.Clock.Now().Add(6*time.Minute), webhooktest.Tolerance); err == nil {
			t.Error("a delivery 6 minutes old verified")
		}

		d = w.deliveries(t, key, e.Endpoint.ID)[0]
		if d.Status != "succeeded" || d.AttemptCount != 3 || d.NextAttemptAt != nil || len(d.Attempts) != 3 || d.EventID != got[0].ID {
			t.Fatalf("the log: %+v", d)
		}
		for i, a := range d.Attempts {
			wantCode, wantClass := 500, "http_status"
			if i == 2 {
				wantCode = 200
			}
			if a.Number != i+1 || a.StatusCode == nil || *a.StatusCode != wantCode || (i < 2) != (a.ErrorClass != nil) ||
				i < 2 && *a.ErrorClass != wantClass || a.ResponseExcerpt == nil || a.Manual {
				t.Errorf("attempt %d: %+v", i+1, a)
			}
		}
		if v := w.endpoint(t, key, e.Endpoint.ID); v.LastSuccessAt == nil {
			t.Error("lastSuccessAt is not set")
		}
		if n := len(w.deliveries(t, key, other.Endpoint.ID)); n != 0 {
			t.Errorf("the endpoint subscribed to project.created got %d deliveries", n)
		}

		// A redelivery: one manual attempt, the same webhook-id.
		path := "/api/v1/webhook-endpoints/" + e.Endpoint.ID + "/deliveries/" + d.ID + "/redeliver"
		r := s.Do(whRequest(key, http.MethodPost, path, "", nil))
		if r.Status != http.StatusAccepted {
			t.Fatalf("redeliver: %d %s", r.Status, r.Body)
		}
		w.waitAttempts(t, e.Endpoint.ID, 4)
		again := w.recv.Wait(t, 4, 5*time.Second)[3]
		d = w.deliveries(t, key, e.Endpoint.ID)[0]
		if again.ID != got[0].ID || d.Status != "succeeded" || len(d.Attempts) != 4 || !d.Attempts[3].Manual {
			t.Errorf("after the redelivery: %s %+v", again.ID, d)
		}
		refused(t, "a redelivery of another endpoint's delivery", s.Do(whRequest(key, http.MethodPost,
			"/api/v1/webhook-endpoints/"+other.Endpoint.ID+"/deliveries/"+d.ID+"/redeliver", "", nil)), http.StatusNotFound, "NOT_FOUND")
	})
}

// TestWebhookEndpointDisabledAfterWindow: an endpoint down for the whole
// retry window (eleven attempts over about three days, the fake clock
// moving through them) fails the delivery, is disabled (reason failing),
// and the event webhook_endpoint.disabled tells the owner through the
// workspace's endpoint that subscribes to it; the disabled endpoint gets
// nothing after.
func TestWebhookEndpointDisabledAfterWindow(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		down := w.create(t, key, map[string]any{"url": w.url("/down"), "enabledEvents": []string{"api_key.created"}})
		owner := w.create(t, key, map[string]any{"url": w.url("/owner"), "enabledEvents": []string{"webhook_endpoint.disabled"}})
		w.recv.Trust(down.Secret, owner.Secret)
		w.recv.Respond(func(_ int, d webhooktest.Delivery) (int, string) {
			if d.Path == "/down" {
				return http.StatusServiceUnavailable, "down"
			}
			return http.StatusOK, "ok"
		})
		w.apiKeyEvent(t)
		w.fanout(t)
		total := time.Duration(0)
		for n := 1; n < webhook.MaxAttempts(); n++ {
			w.waitAttempts(t, down.Endpoint.ID, n)
			s.Clock.Advance(webhook.MaxRetryDelay(n))
			total += webhook.MaxRetryDelay(n)
		}
		w.waitAttempts(t, down.Endpoint.ID, webhook.MaxAttempts())
		if total < 70*time.Hour || total > 80*time.Hour {
			t.Errorf("the window spans %s, want about three days", total)
		}
		d := w.deliveries(t, key, down.Endpoint.ID)[0]
		if d.Status != "failed" || d.FailureReason == nil || *d.FailureReason != "exhausted" || d.AttemptCount != webhook.MaxAttempts() {
			t.Fatalf("the delivery: %+v", d)
		}
		v := w.endpoint(t, key, down.Endpoint.ID)
		if v.Status != "disabled" || v.DisabledReason == nil || *v.DisabledReason != "failing" {
			t.Fatalf("the endpoint: %+v", v)
		}
		events := outboxPayloads(t, s, "webhook_endpoint.disabled", down.Endpoint.ID)
		if len(events) != 1 || events[0]["reason"] != "failing" || events[0]["deliveryId"] != d.ID {
			t.Fatalf("disabled events: %v", events)
		}
		// The owner's endpoint receives it.
		if n := w.fanout(t); n != 1 {
			t.Fatalf("the fan-out made %d deliveries, want the disabled event's", n)
		}
		w.waitAttempts(t, owner.Endpoint.ID, 1)
		var toOwner []webhooktest.Event
		for _, g := range w.recv.Deliveries() {
			if g.Path == "/owner" {
				ev, _ := g.Event()
				toOwner = append(toOwner, ev)
			}
		}
		if len(toOwner) != 1 || toOwner[0].Type != "webhook_endpoint.disabled" || toOwner[0].AggregateID != down.Endpoint.ID {
			t.Fatalf("the owner's endpoint got %+v", toOwner)
		}
		// Nothing more reaches the disabled endpoint.
		w.apiKeyEvent(t)
		w.fanout(t)
		if n := len(w.deliveries(t, key, down.Endpoint.ID)); n != 1 {
			t.Errorf("the disabled endpoint has %d deliveries, want 1", n)
		}
	})
}

// TestWebhookSecretRotationDuringRetries: a secret rotated while a
// delivery is being retried signs the retries beside the new one while
// the overlap lasts (two signatures, each verifying), and the retries
// after it with the new one alone.
func TestWebhookSecretRotationDuringRetries(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		e := w.create(t, key, map[string]any{"url": w.url("/hook"), "enabledEvents": []string{"api_key.created"}})
		w.recv.Trust(e.Secret)
		w.recv.Respond(func(n int, _ webhooktest.Delivery) (int, string) {
			if n < 3 {
				return http.StatusBadGateway, "later"
			}
			return http.StatusNoContent, ""
		})
		w.apiKeyEvent(t)
		w.fanout(t)
		w.waitAttempts(t, e.Endpoint.ID, 1)
		r := s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints/"+e.Endpoint.ID+"/rotate-secret", "",
			map[string]any{"expireCurrentAfterSeconds": 60}))
		var rotated api.WebhookEndpointSecret
		r.Data(t, &rotated)
		if r.Status != http.StatusOK {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		w.recv.Trust(e.Secret, rotated.Secret)
		s.Clock.Advance(webhook.MaxRetryDelay(1)) // inside the overlap
		w.waitAttempts(t, e.Endpoint.ID, 2)
		s.Clock.Advance(webhook.MaxRetryDelay(2)) // past it
		w.waitAttempts(t, e.Endpoint.ID, 3)
		got := w.recv.Wait(t, 3, 5*time.Second)
		for i, want := range [][]int{{0}, {0, 1}, {1}} {
			if g := got[i]; g.Err != nil || !slices.Equal(g.SignedBy, want) || len(strings.Fields(g.Signature)) != len(want) {
				t.Errorf("attempt %d: signed by %v (%d signatures), want %v: %v", i+1, g.SignedBy, len(strings.Fields(g.Signature)), want, g.Err)
			}
		}
		if !strings.HasPrefix(got[1].Signature, strings.Fields(got[2].Signature)[0][:3]) {
			t.Errorf("signatures are not v1: %s", got[1].Signature)
		}
		if _, err := webhooktest.Check([]string{e.Secret}, got[2], s.Clock.Now(), webhooktest.Tolerance); err == nil {
			t.Error("the retired secret verifies an attempt after the overlap")
		}
		if d := w.deliveries(t, key, e.Endpoint.ID)[0]; d.Status != "succeeded" || *d.Attempts[2].StatusCode != http.StatusNoContent {
			t.Errorf("the delivery: %+v", d)
		}
	})
}

// TestWebhookURLGuard: a URL that is not https to a public host is
// refused at create and update (422 URL_NOT_ALLOWED with the guard's
// reason) and nothing is written; a name that resolves inward after the
// endpoint was created is refused at delivery (url_refused,
// private_address, nothing sent) and delivered once it resolves out
// again. With the host's test-mode option, a test endpoint on a loopback
// address receives signed deliveries over plain http, and a live one is
// still refused.
func TestWebhookURLGuard(t *testing.T) {
	t.Parallel()
	plain := map[string]*webhooktest.Receiver{}
	whDialects(t, func(o *platformtest.Options) { o.Webhooks.AllowTestLoopback = true }, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		plain[t.Name()] = webhooktest.New(t, s.Clock.Now, false)
		local := plain[t.Name()]
		for _, c := range []struct{ name, url, reason string }{
			{"a name resolving inward", "https://inward.example.com/hook", "private_address"},
			{"loopback over https", "https://127.0.0.1/hook", "private_address"},
			{"metadata", "https://169.254.169.254/latest/meta-data/", "private_address"},
			{"plain http", "http://hooks.example.com:" + w.port + "/hook", "scheme"},
			{"credentials", "https://user:pass@hooks.example.com/hook", "credentials"},
			{"a never-public name", "https://metadata.google.internal/", "blocked_host"},
			{"a name that does not resolve", "https://missing.example.com/hook", "unresolved_host"},
			{"loopback without a port", "http://127.0.0.1/hook", "scheme"},
		} {
			r := s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{"url": c.url, "enabledEvents": []string{"*"}}))
			refused(t, c.name, r, http.StatusUnprocessableEntity, "URL_NOT_ALLOWED", "field", "url", "reason", c.reason)
		}
		r := s.Do(whRequest(s.Boot.LiveKey, http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{"url": local.URL + "/hook",
			"enabledEvents": []string{"*"}}))
		refused(t, "a live endpoint on loopback", r, http.StatusUnprocessableEntity, "URL_NOT_ALLOWED", "reason", "scheme")
		if n := count(t, s, `SELECT COUNT(*) FROM webhook_endpoints`); n != 0 {
			t.Fatalf("refused URLs stored %d endpoints", n)
		}

		e := w.create(t, key, map[string]any{"url": w.url("/hook"), "enabledEvents": []string{"api_key.created"}})
		r = s.Do(whRequest(key, http.MethodPatch, "/api/v1/webhook-endpoints/"+e.Endpoint.ID, "", map[string]any{"url": "https://inward.example.com/x"}))
		refused(t, "an update to an inward URL", r, http.StatusUnprocessableEntity, "URL_NOT_ALLOWED", "reason", "private_address")
		if v := w.endpoint(t, key, e.Endpoint.ID); v.URL != w.url("/hook") || v.Version != 1 {
			t.Fatalf("a refused update changed the endpoint: %+v", v)
		}

		// DNS changes after the endpoint was created: refused at delivery.
		w.recv.Trust(e.Secret)
		w.dns.set("hooks.example.com", netip.MustParseAddr("10.1.2.3"))
		w.apiKeyEvent(t)
		w.fanout(t)
		w.waitAttempts(t, e.Endpoint.ID, 1)
		d := w.deliveries(t, key, e.Endpoint.ID)[0]
		a := d.Attempts[0]
		if d.Status != "pending" || a.ErrorClass == nil || *a.ErrorClass != "url_refused" || a.ErrorReason == nil ||
			*a.ErrorReason != "private_address" || a.StatusCode != nil || len(w.recv.Deliveries()) != 0 {
			t.Fatalf("an attempt to a name resolving inward: %+v (%d received)", d, len(w.recv.Deliveries()))
		}
		w.dns.set("hooks.example.com", netip.MustParseAddr("127.0.0.1"))
		s.Clock.Advance(webhook.MaxRetryDelay(1))
		w.waitAttempts(t, e.Endpoint.ID, 2)
		if got := w.recv.Wait(t, 1, 5*time.Second); got[0].Err != nil {
			t.Fatalf("the retry: %v", got[0].Err)
		}

		// The test-mode loopback option: plain http to loopback, test only.
		lo := w.create(t, key, map[string]any{"url": local.URL + "/local", "enabledEvents": []string{"project.created"}})
		local.Trust(lo.Secret)
		r = s.Do(whRequest(key, http.MethodPost, "/api/v1/webhook-endpoints/"+lo.Endpoint.ID+"/test", "", nil))
		var td api.WebhookDeliveryView
		r.Data(t, &td)
		if r.Status != http.StatusAccepted || td.EventType != "webhook.test" || td.Status != "pending" {
			t.Fatalf("test event: %d %s", r.Status, r.Body)
		}
		got := local.Wait(t, 1, 5*time.Second)
		ev, _ := got[0].Event()
		if got[0].Err != nil || ev.Type != "webhook.test" || ev.AggregateID != lo.Endpoint.ID || got[0].Path != "/local" {
			t.Fatalf("the loopback endpoint got %+v: %v", ev, got[0].Err)
		}
		w.waitRows(t, 1, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = ? AND status = 'succeeded'`, td.ID)
		// Only the tested endpoint gets a test event, whatever it subscribes to.
		w.fanout(t)
		if n := count(t, s, `SELECT COUNT(*) FROM webhook_deliveries WHERE event_type = 'webhook.test'`); n != 1 {
			t.Errorf("%d deliveries of the test event, want 1", n)
		}
	})
}

// TestWebhookTwoHostsDeliverOnce: two hosts on one database, each with
// its own job pool, both running the fan-out at once and over and over,
// deliver each event to each endpoint exactly once: one request per
// (endpoint, event), one delivery row and one attempt each.
func TestWebhookTwoHostsDeliverOnce(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s, key := w.s, w.s.Boot.TestKey
		host2 := s.AnotherHostWithJobs(platform.JobsConfig{PollInterval: 10 * time.Millisecond})
		var secrets []string
		const endpoints, events = 3, 12
		for i := range endpoints {
			e := w.create(t, key, map[string]any{"url": w.url(fmt.Sprintf("/h%d", i)), "enabledEvents": []string{"project.created"}})
			secrets = append(secrets, e.Secret)
		}
		w.recv.Trust(secrets...)
		var wg sync.WaitGroup
		for i := range events {
			r := s.Do(whRequest(key, http.MethodPost, "/api/v1/projects", "", map[string]string{"title": fmt.Sprintf("Track %d", i), "type": "single"}))
			if r.Status != http.StatusCreated {
				t.Fatalf("project: %d %s", r.Status, r.Body)
			}
			for _, p := range []*platform.Platform{s.P, host2.P} {
				wg.Go(func() {
					if _, err := p.Webhooks().Fanout(context.Background()); err != nil {
						t.Errorf("fan-out: %v", err)
					}
				})
			}
		}
		wg.Wait()
		w.fanout(t)
		want := endpoints * events
		got := w.recv.Wait(t, want, 20*time.Second)
		w.waitRows(t, want, `SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'`)
		// Both hosts again, and a moment for a stray attempt to show.
		w.fanout(t)
		if _, err := host2.P.Webhooks().Fanout(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		got = w.recv.Deliveries()
		seen := map[string]int{}
		for _, g := range got {
			if g.Err != nil {
				t.Errorf("a delivery did not verify: %v", g.Err)
			}
			seen[g.Path+" "+g.ID]++
		}
		if len(got) != want || len(seen) != want {
			t.Errorf("%d requests for %d (endpoint, event) pairs, want %d of each", len(got), len(seen), want)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s delivered %d times", k, n)
			}
		}
		for q, n := range map[string]int{`SELECT COUNT(*) FROM webhook_deliveries`: want, `SELECT COUNT(*) FROM webhook_attempts`: want} {
			if c := count(t, s, q); c != n {
				t.Errorf("%s = %d, want %d", q, c, n)
			}
		}
	})
}

// TestWebhookAuthorization: on every webhook route, a narrower member (no
// DEVELOPER role), a narrower key (webhooks:read for changes, read for
// everything), another workspace, another tenant naming this workspace,
// and the other environment get the refusal the document names, and
// nothing changes; a DEVELOPER member manages endpoints.
func TestWebhookAuthorization(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s := w.s
		owner, m := team(t, s, "hooks", map[string]string{"carol": "CREATOR", "dave": "DEVELOPER"})
		outsider, _ := team(t, s, "elsewhere", nil)
		ws := authContext(t, s, owner.cookie).Workspace.ID
		r := asTest(s, owner, http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{"url": w.url("/owner"), "enabledEvents": []string{"*"}})
		var e api.WebhookEndpointSecret
		r.Data(t, &e)
		if r.Status != http.StatusCreated {
			t.Fatalf("owner creates: %d %s", r.Status, r.Body)
		}
		id := e.Endpoint.ID
		w.recv.Trust(e.Secret)
		r = asTest(s, owner, http.MethodPost, "/api/v1/webhook-endpoints/"+id+"/test", "", nil)
		var td api.WebhookDeliveryView
		r.Data(t, &td)
		if r.Status != http.StatusAccepted {
			t.Fatalf("owner tests: %d %s", r.Status, r.Body)
		}
		w.waitRows(t, 1, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = ? AND status = 'succeeded'`, td.ID)
		readKey, _ := createKeyAs(t, s, owner, map[string]any{"name": "hooks reader", "scopes": []string{"webhooks:read"}})
		plainKey, _ := createKeyAs(t, s, owner, map[string]any{"name": "reader", "scopes": []string{"read"}})
		otherKey, _ := createKeyAs(t, s, outsider, map[string]any{"name": "other", "scopes": []string{"webhooks:read", "webhooks:write"}})

		type call struct {
			method, path string
			body         any
			write        bool
		}
		base := "/api/v1/webhook-endpoints"
		calls := []call{
			{http.MethodGet, base, nil, false},
			{http.MethodPost, base, map[string]any{"url": w.url("/x"), "enabledEvents": []string{"*"}}, true},
			{http.MethodGet, base + "/" + id, nil, false},
			{http.MethodPatch, base + "/" + id, map[string]any{"description": "changed"}, true},
			{http.MethodDelete, base + "/" + id, nil, true},
			{http.MethodPost, base + "/" + id + "/rotate-secret", nil, true},
			{http.MethodPost, base + "/" + id + "/test", nil, true},
			{http.MethodGet, base + "/" + id + "/deliveries", nil, false},
			{http.MethodPost, base + "/" + id + "/deliveries/" + td.ID + "/redeliver", nil, true},
		}
		snapshot := func() string {
			var b strings.Builder
			for _, q := range []string{`SELECT COUNT(*) FROM webhook_endpoints`, `SELECT COUNT(*) FROM webhook_deliveries`,
				`SELECT COUNT(*) FROM jobs WHERE kind = 'webhook.deliver'`, `SELECT COUNT(*) FROM outbox_events WHERE type LIKE 'webhook%'`,
				`SELECT version FROM webhook_endpoints WHERE id = '` + id + `'`, `SELECT version FROM webhook_deliveries WHERE id = '` + td.ID + `'`} {
				fmt.Fprintf(&b, "%d;", count(t, s, q))
			}
			return b.String()
		}
		before := snapshot()
		keyed := func(key string, c call) *platformtest.Response {
			return s.Do(whRequest(key, c.method, c.path, "", c.body))
		}
		for _, c := range calls {
			name := c.method + " " + c.path
			refused(t, "a CREATOR member: "+name, asTest(s, m["carol"], c.method, c.path, "", c.body), http.StatusForbidden, "ACCESS_DENIED")
			refused(t, "a read key: "+name, keyed(plainKey, c), http.StatusForbidden, "ACCESS_DENIED")
			if c.write {
				refused(t, "a webhooks:read key: "+name, keyed(readKey, c), http.StatusForbidden, "ACCESS_DENIED")
			} else if r := keyed(readKey, c); r.Status != http.StatusOK {
				t.Errorf("a webhooks:read key: %s: %d %s", name, r.Status, r.Body)
			}
			// Another tenant naming this workspace.
			h := map[string]string{"Platform-Environment": "test", "X-Workspace-Id": ws}
			refused(t, "another tenant into this workspace: "+name, s.Do(platformtest.Request{Method: c.method, Path: c.path, Cookie: outsider.cookie,
				Body: c.body, Header: h}), http.StatusForbidden, "WORKSPACE_ACCESS_DENIED")
			if c.path == base {
				continue
			}
			// Another workspace's key and the other environment: not found.
			refused(t, "another workspace: "+name, keyed(otherKey, c), http.StatusNotFound, "NOT_FOUND")
			refused(t, "the live environment: "+name, s.Do(platformtest.Request{Method: c.method, Path: c.path, Cookie: owner.cookie,
				Body: c.body, Header: map[string]string{"Platform-Environment": "live"}}), http.StatusNotFound, "NOT_FOUND")
		}
		// Lists of another workspace and of the other environment are empty.
		for name, req := range map[string]platformtest.Request{
			"another workspace": whRequest(otherKey, http.MethodGet, base, "", nil),
			"the live environment": {Method: http.MethodGet, Path: base, Cookie: owner.cookie,
				Header: map[string]string{"Platform-Environment": "live"}},
		} {
			r := s.Do(req)
			var p api.WebhookEndpointPage
			r.Data(t, &p)
			if r.Status != http.StatusOK || len(p.Items) != 0 {
				t.Errorf("%s lists %d endpoints: %s", name, len(p.Items), r.Body)
			}
		}
		if after := snapshot(); after != before {
			t.Errorf("refused calls changed rows: %s -> %s", before, after)
		}
		// A DEVELOPER member manages the workspace's endpoints.
		r = asTest(s, m["dave"], http.MethodPatch, base+"/"+id, "", map[string]any{"description": "by dave"})
		if r.Status != http.StatusOK {
			t.Errorf("a DEVELOPER member updates: %d %s", r.Status, r.Body)
		}
	})
}

// TestWebhookFanoutJob: the periodic fan-out job, due at the start of
// each period, delivers what commits between its runs without a direct
// call, test events of one environment never reaching the other's
// endpoints, and an event that committed behind the cursor but inside
// the window (an id stamped before the last pass) is still delivered.
func TestWebhookFanoutJob(t *testing.T) {
	t.Parallel()
	whDialects(t, nil, func(t *testing.T, w *whEnv) {
		s := w.s
		test := w.create(t, s.Boot.TestKey, map[string]any{"url": w.url("/test"), "enabledEvents": []string{"api_key.created"}})
		live := w.create(t, s.Boot.LiveKey, map[string]any{"url": w.url("/live"), "enabledEvents": []string{"api_key.created"}})
		w.recv.Trust(test.Secret, live.Secret)
		w.apiKeyEvent(t)
		s.Clock.Advance(90 * time.Second) // the job's next period has come
		got := w.recv.Wait(t, 1, 10*time.Second)
		if got[0].Path != "/test" || !slices.Equal(got[0].SignedBy, []int{0}) {
			t.Fatalf("the test event went to %s signed by %v", got[0].Path, got[0].SignedBy)
		}
		// A late commit: an event whose id is stamped a minute before the
		// fan-out's last pass, written after it.
		stamped := s.Clock.Now().Add(-time.Minute)
		ctx := context.Background()
		w.waitRows(t, 1, `SELECT COUNT(*) FROM webhook_fanout_cursor`)
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.OutboxInsert(ctx, outbox.Event{ID: id.New("evt_", stamped), TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID,
				Environment: "test", Type: "api_key.created", SchemaVersion: 1, AggregateID: "key_late", AggregateVersion: 1,
				OccurredAt: stamped, Payload: json.RawMessage(`{"late":true}`)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		w.fanout(t)
		got = w.recv.Wait(t, 2, 10*time.Second)
		if ev, _ := got[1].Event(); got[1].Path != "/test" || !ev.OccurredAt.Equal(stamped) {
			t.Fatalf("the late event: %s %+v", got[1].Path, ev)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ?`, live.Endpoint.ID); n != 0 {
			t.Errorf("the live endpoint has %d deliveries of test events", n)
		}
	})
}

// probeWebhookHost is the public address the environment probe's
// endpoints resolve to; no delivery is ever attempted there.
var probeWebhookHost = netip.MustParseAddr("93.184.216.34")

// probeWebhooks makes, through the API, an endpoint in each environment
// of o's workspace (on a name the probe's resolver answers with a public
// address, subscribed to an event nothing here writes), and a live
// delivery of the live endpoint's creation event, written as the fan-out
// writes it (without its job: nothing is sent). It returns each
// environment's endpoint id.
func probeWebhooks(t *testing.T, s *platformtest.System, o *envOwner) map[access.Environment]string {
	t.Helper()
	out := map[access.Environment]string{}
	for _, env := range []access.Environment{access.Live, access.Test} {
		r := s.Do(whRequest(o.key(env), http.MethodPost, "/api/v1/webhook-endpoints", "", map[string]any{
			"url": "https://hooks.example.com/" + string(env), "enabledEvents": []string{"webhook_endpoint.deleted"}}))
		var e api.WebhookEndpointSecret
		r.Data(t, &e)
		if r.Status != http.StatusCreated {
			t.Fatalf("%s webhook endpoint: %d %s", env, r.Status, r.Body)
		}
		out[env] = e.Endpoint.ID
	}
	ctx := context.Background()
	var ev string
	if err := s.DB.Read().IDB().NewRaw(`SELECT id FROM outbox_events WHERE aggregate_id = ? AND type = 'webhook_endpoint.created'`,
		out[access.Live]).Scan(ctx, &ev); err != nil {
		t.Fatal(err)
	}
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		_, err := tx.WebhookDeliveryInsert(ctx, webhook.Delivery{ID: tx.NewID(webhook.DeliveryPrefix), EndpointID: out[access.Live], EventID: ev,
			EventType: webhook.EventTypeCreated, Scope: access.Scope{TenantID: o.boot.TenantID, WorkspaceID: o.boot.WorkspaceID,
				Environment: access.Live}, Status: webhook.DeliverySucceeded, Attempts: 1, Version: 3, CreatedAt: now, UpdatedAt: now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
