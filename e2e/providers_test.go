package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

const credentialsPath = "/api/v1/providers/credentials"

// credentialRows counts provider credential rows, deleted ones included.
func credentialRows(t *testing.T, s *platformtest.System) int {
	t.Helper()
	var n int
	if err := s.DB.Read().IDB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM provider_credentials`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dumpDatabase renders every row of every table of the system's database.
func dumpDatabase(t *testing.T, s *platformtest.System) []byte {
	t.Helper()
	ctx := context.Background()
	db := s.DB.Read().IDB()
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if s.DB.Dialect() == store.Postgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	var tables []string
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("tables = %v", tables)
	}
	var out bytes.Buffer
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM `+table)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("dump %s: %v", table, err)
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					out.Write(b)
				} else {
					fmt.Fprint(&out, v)
				}
				out.WriteByte('|')
			}
		}
		rows.Close()
	}
	return out.Bytes()
}

func createCredential(s *platformtest.System, key string, body map[string]any, header map[string]string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "POST", Path: credentialsPath, Key: key, Body: body, Header: header})
}

func TestProviderCredentials(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		key := s.Boot.TestKey
		apiKey, callbackKey := s.ProviderB.APIKey(), "cb-secret-0123456789abcdef"

		// Provider B is configured for test mode; provider A is not, and is
		// never reported available.
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/providers", Key: key})
		var pl api.ProviderList
		r.Data(t, &pl)
		if r.Status != 200 || len(pl.Items) != 2 {
			t.Fatalf("providers: %d %s", r.Status, r.Body)
		}
		a, b := pl.Items[0], pl.Items[1]
		if a.ID != "MUSIC_PROVIDER_A" || a.Status != "not_configured" || len(a.BillingModes) != 0 || a.PlatformManagedConfigured {
			t.Errorf("provider A = %+v", a)
		}
		// Configured, and nothing has called it yet: configured, not available.
		if b.ID != "MUSIC_PROVIDER_B" || b.Status != "configured" || b.ObservedAt != nil || b.PlatformManagedConfigured ||
			strings.Join(b.BillingModes, ",") != "BYOK" || strings.Join(b.CredentialOwnership, ",") != "CUSTOMER_BYOK" ||
			strings.Join(b.SupportedBillingModes, ",") != "PLATFORM_MANAGED,BYOK,BYOK_WITH_PLATFORM_FALLBACK" || b.Environment != "test" {
			t.Errorf("provider B = %+v", b)
		}

		// A key the provider rejects, and the provider failing, store nothing.
		r = createCredential(s, key, map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": "sk-not-the-right-key-42"}, nil)
		if r.Status != 422 || r.Code() != "PROVIDER_CREDENTIAL_INVALID" || credentialRows(t, s) != 0 {
			t.Fatalf("rejected key: %d %s", r.Status, r.Body)
		}
		s.ProviderB.FailNext(providerbtest.EndpointCredits, http.StatusInternalServerError, 1)
		r = createCredential(s, key, map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": apiKey}, nil)
		if r.Status != 503 || r.Code() != "PROVIDER_UNAVAILABLE" || credentialRows(t, s) != 0 {
			t.Fatalf("provider failing: %d %s", r.Status, r.Body)
		}
		r = createCredential(s, key, map[string]any{"provider": "MUSIC_PROVIDER_A", "apiKey": apiKey}, nil)
		if r.Status != 503 || r.Code() != "PROVIDER_UNAVAILABLE" || detail(r, "reason") != "not_configured" || credentialRows(t, s) != 0 {
			t.Fatalf("unconfigured provider: %d %s", r.Status, r.Body)
		}

		// The simulator's key is validated, sealed and shown redacted; a
		// retry with the same Idempotency-Key replays the same credential.
		body := map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": apiKey, "callbackKey": callbackKey, "label": "Studio"}
		idem := map[string]string{"Idempotency-Key": "cred-create-1"}
		r = createCredential(s, key, body, idem)
		var cred api.ProviderCredentialView
		r.Data(t, &cred)
		if r.Status != 201 || !strings.HasPrefix(cred.ID, "pcred_") || cred.Ownership != "CUSTOMER_BYOK" || len(cred.Fingerprint) != 12 ||
			cred.DisplaySuffix != apiKey[len(apiKey)-4:] || !cred.HasCallbackKey || cred.Health.Status != "valid" || cred.Label != "Studio" {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if lb := cred.LatestBalance; lb == nil || lb.Credits != "1000" || lb.Unit != "provider_credits" {
			t.Fatalf("first snapshot = %+v", cred.LatestBalance)
		}
		if r2 := createCredential(s, key, body, idem); r2.Status != 201 || r2.Header.Get("Idempotent-Replayed") != "true" || !bytes.Contains(r2.Body, []byte(cred.ID)) {
			t.Fatalf("replay: %d %s", r2.Status, r2.Body)
		}
		responses := [][]byte{r.Body}
		r = s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred.ID, Key: key})
		if r.Status != 200 || !bytes.Contains(r.Body, []byte(cred.Fingerprint)) {
			t.Fatalf("get: %d %s", r.Status, r.Body)
		}
		responses = append(responses, r.Body)
		r = s.Do(platformtest.Request{Method: "GET", Path: credentialsPath, Key: key})
		var page api.ProviderCredentialPage
		r.Data(t, &page)
		if r.Status != 200 || len(page.Items) != 1 || page.Items[0].ID != cred.ID || page.Items[0].DisplaySuffix != cred.DisplaySuffix {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		responses = append(responses, r.Body)

		// Balance is the provider's own credits, persisted as a snapshot.
		s.ProviderB.SetCredits(700, 25)
		r = s.Do(platformtest.Request{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/balance", Key: key})
		var snap api.ProviderBalanceSnapshot
		r.Data(t, &snap)
		if r.Status != 200 || snap.Credits != "700" || snap.ExtraCredits != "25" || snap.CredentialID != cred.ID ||
			snap.Unit != "provider_credits" || !snap.ObservedAt.Equal(s.Clock.Now()) {
			t.Fatalf("balance: %d %s", r.Status, r.Body)
		}
		responses = append(responses, r.Body)
		if r := s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred.ID, Key: key}); !bytes.Contains(r.Body, []byte(snap.ID)) {
			t.Fatalf("latest balance after balance: %s", r.Body)
		}
		s.Clock.Advance(time.Minute)
		r = s.Do(platformtest.Request{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/validate", Key: key})
		var validated api.ProviderCredentialView
		r.Data(t, &validated)
		if r.Status != 200 || validated.Health.Status != "valid" || !validated.Health.CheckedAt.Equal(s.Clock.Now()) {
			t.Fatalf("validate: %d %s", r.Status, r.Body)
		}
		responses = append(responses, r.Body)

		// Another workspace never sees it.
		other := s.Bootstrap("Other")
		for _, req := range []platformtest.Request{
			{Method: "GET", Path: credentialsPath + "/" + cred.ID},
			{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/balance"},
			{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/validate"},
			{Method: "DELETE", Path: credentialsPath + "/" + cred.ID},
		} {
			req.Key = other.TestKey
			if r := s.Do(req); r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Fatalf("%s %s from another workspace: %d %s", req.Method, req.Path, r.Status, r.Body)
			}
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: credentialsPath, Key: other.TestKey})
		if r.Data(t, &page); len(page.Items) != 0 {
			t.Fatalf("list from another workspace: %s", r.Body)
		}

		// No plaintext anywhere: responses, database rows, logs.
		dump := dumpDatabase(t, s)
		for _, secret := range []string{apiKey, callbackKey} {
			for _, b := range responses {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("a response carries the plaintext: %s", b)
				}
			}
			if bytes.Contains(dump, []byte(secret)) {
				t.Error("the database holds the plaintext")
			}
			if strings.Contains(s.Log.String(), secret) {
				t.Error("the log holds the plaintext")
			}
		}

		// Provider down: balance is PROVIDER_UNAVAILABLE, never zero, and
		// validate changes nothing.
		s.ProviderB.Close()
		r = s.Do(platformtest.Request{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/balance", Key: key})
		if r.Status != 503 || r.Code() != "PROVIDER_UNAVAILABLE" || bytes.Contains(r.Body, []byte(`"credits"`)) {
			t.Fatalf("balance with the provider down: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/validate", Key: key}); r.Status != 503 {
			t.Fatalf("validate with the provider down: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred.ID, Key: key}); !bytes.Contains(r.Body, []byte(snap.ID)) {
			t.Fatalf("the failed balance replaced the snapshot: %s", r.Body)
		}

		// Delete: gone from reads on the next request.
		r = s.Do(platformtest.Request{Method: "DELETE", Path: credentialsPath + "/" + cred.ID, Key: key})
		var deleted api.ProviderCredentialView
		r.Data(t, &deleted)
		if r.Status != 200 || deleted.DeletedAt == nil {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred.ID, Key: key}); r.Status != 404 {
			t.Fatalf("get after delete: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "DELETE", Path: credentialsPath + "/" + cred.ID, Key: key}); r.Status != 404 {
			t.Fatalf("delete after delete: %d %s", r.Status, r.Body)
		}
		r = s.Do(platformtest.Request{Method: "GET", Path: credentialsPath, Key: key})
		if r.Data(t, &page); len(page.Items) != 0 {
			t.Fatalf("list after delete: %s", r.Body)
		}
	})
}

func TestProviderCredentialAuthority(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		_, err := s.P.Bootstrap(context.Background(), platform.BootstrapInput{TenantName: "Dev", WorkspaceName: "Dev Studio",
			OwnerEmail: "dev-owner@example.com", OwnerName: "Dev Owner", Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		cookie, _ := s.Login("dev-owner@example.com", testPassword)
		owner := person{email: "dev-owner@example.com", cookie: cookie}
		testMode := map[string]string{"Platform-Environment": "test"}
		body := map[string]any{"provider": "MUSIC_PROVIDER_B", "apiKey": s.ProviderB.APIKey()}
		create := func(cookie string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: credentialsPath, Cookie: cookie, Header: testMode, Body: body})
		}

		// The DEVELOPER role is required: an ADMIN holds developer.provider.*
		// but not the role.
		admin := join(t, s, "dev-admin@example.com", "Dev Admin", invite(t, s, owner, "dev-admin@example.com", "ADMIN"))
		for _, req := range []platformtest.Request{
			{Method: "GET", Path: "/api/v1/providers"},
			{Method: "GET", Path: credentialsPath},
			{Method: "POST", Path: credentialsPath, Body: body},
		} {
			req.Cookie, req.Header = admin.cookie, testMode
			if r := s.Do(req); r.Status != 403 || r.Code() != "ACCESS_DENIED" {
				t.Fatalf("%s %s as ADMIN: %d %s", req.Method, req.Path, r.Status, r.Body)
			}
		}

		// Right after signing in, the owner's session submits a key.
		r := create(owner.cookie)
		var cred api.ProviderCredentialView
		r.Data(t, &cred)
		if r.Status != 201 || cred.Environment != "test" || cred.CreatedBy.UserID == "" || cred.CreatedBy.KeyID != "" {
			t.Fatalf("create from a fresh session: %d %s", r.Status, r.Body)
		}
		// Without a fresh sign-in, mutations are refused; reads are not.
		s.Clock.Advance(10*time.Minute + time.Second)
		if r := create(owner.cookie); r.Status != 401 || r.Code() != "REAUTHENTICATION_REQUIRED" {
			t.Fatalf("stale create: %d %s", r.Status, r.Body)
		}
		for _, req := range []platformtest.Request{
			{Method: "DELETE", Path: credentialsPath + "/" + cred.ID},
			{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/validate"},
			{Method: "POST", Path: credentialsPath + "/" + cred.ID + "/balance"},
		} {
			req.Cookie, req.Header = owner.cookie, testMode
			if r := s.Do(req); r.Status != 401 || r.Code() != "REAUTHENTICATION_REQUIRED" {
				t.Fatalf("stale %s %s: %d %s", req.Method, req.Path, r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: credentialsPath + "/" + cred.ID, Cookie: owner.cookie, Header: testMode}); r.Status != 200 {
			t.Fatalf("stale read: %d %s", r.Status, r.Body)
		}
		// Live mode has no provider configured: reported, never available.
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/providers", Cookie: owner.cookie})
		var pl api.ProviderList
		r.Data(t, &pl)
		for _, p := range pl.Items {
			if p.Environment != "live" || p.Status != "not_configured" || len(p.BillingModes) != 0 {
				t.Fatalf("live provider = %+v", p)
			}
		}
		// A new sign-in refreshes it.
		cookie, _ = s.Login("dev-owner@example.com", testPassword)
		if r := s.Do(platformtest.Request{Method: "DELETE", Path: credentialsPath + "/" + cred.ID, Cookie: cookie, Header: testMode}); r.Status != 200 {
			t.Fatalf("delete after a new sign-in: %d %s", r.Status, r.Body)
		}
	})
}

// providerStatus reads one provider route's status in the test key's
// environment.
func providerStatus(t *testing.T, s *platformtest.System, id string) api.ProviderView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/providers", Key: s.Boot.TestKey})
	var pl api.ProviderList
	r.Data(t, &pl)
	for _, p := range pl.Items {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no provider %s in %s", id, r.Body)
	return api.ProviderView{}
}

// TestProvidersReportObservedReach: GET /api/v1/providers reports what the
// platform's calls observed, with their time: configured before any call,
// unreachable after a create met a 5xx, available once the provider
// answered. Nothing is reported from configuration alone.
func TestProvidersReportObservedReach(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		if p := providerStatus(t, s, "MUSIC_PROVIDER_A"); p.Status != "configured" || p.ObservedAt != nil {
			t.Fatalf("before any call: %+v", p)
		}
		s.ProviderA.FailNext(provideratest.EndpointCreate, provideratest.Failure{HTTPStatus: 502, Code: 502, Msg: "Bad Gateway"})
		acc := acceptedID(t, generate(s, "reach-1", map[string]any{"prompt": "A calm piano piece"}))
		failedAt := time.Time{}
		waitFor(t, "the failed create observed", func() bool {
			p := providerStatus(t, s, "MUSIC_PROVIDER_A")
			if p.Status == "unreachable" && p.ObservedAt != nil {
				failedAt = *p.ObservedAt
				return true
			}
			return false
		})
		gfAdvanceUntil(t, s, time.Second, "the retried create is accepted", func() bool {
			v := getOp(t, s, acc.OperationID)
			return len(v.Attempts) > 0 && v.Attempts[len(v.Attempts)-1].State == "accepted"
		})
		p := providerStatus(t, s, "MUSIC_PROVIDER_A")
		if p.Status != "available" || p.ObservedAt == nil || !p.ObservedAt.After(failedAt) {
			t.Fatalf("after an accepted create: %+v (failed at %s)", p, failedAt)
		}
		// Observations belong to their environment: live has no adapter.
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/providers", Key: s.Boot.LiveKey})
		var pl api.ProviderList
		r.Data(t, &pl)
		for _, p := range pl.Items {
			if p.Status != "not_configured" || p.ObservedAt != nil {
				t.Fatalf("live %+v", p)
			}
		}
	})
}
