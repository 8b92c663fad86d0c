package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/transport/api"
)

// attributionRow is an attributions row as stored.
type attributionRow struct {
	ID          string    `bun:"id"`
	TenantID    string    `bun:"tenant_id"`
	WorkspaceID string    `bun:"workspace_id"`
	Environment string    `bun:"environment"`
	FSource     string    `bun:"first_source"`
	FCampaign   string    `bun:"first_campaign"`
	FReferrer   string    `bun:"first_referrer"`
	FLanding    string    `bun:"first_landing_path"`
	FAt         time.Time `bun:"first_at"`
	LSource     string    `bun:"last_source"`
	LMedium     string    `bun:"last_medium"`
	LReferrer   string    `bun:"last_referrer"`
	LAt         time.Time `bun:"last_at"`
	TouchCount  int64     `bun:"touch_count"`
	Version     int64     `bun:"version"`
}

// attributionRows reads userID's attribution rows, by environment.
func attributionRows(t *testing.T, s *platformtest.System, userID string) map[string]attributionRow {
	t.Helper()
	var rows []attributionRow
	err := s.DB.Read().IDB().NewRaw(`SELECT id, tenant_id, workspace_id, environment, first_source, first_campaign, first_referrer,
		first_landing_path, first_at, last_source, last_medium, last_referrer, last_at, touch_count, version FROM attributions
		WHERE user_id = ?`, userID).Scan(context.Background(), &rows)
	if err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	out := map[string]attributionRow{}
	for _, r := range rows {
		out[r.Environment] = r
	}
	return out
}

// userIDOf reads the id of the user with email.
func userIDOf(t *testing.T, s *platformtest.System, email string) string {
	t.Helper()
	var id string
	if err := s.DB.Read().IDB().NewRaw(`SELECT id FROM users WHERE email = ?`, email).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// touch posts one attribution touch as p's session in env, with an
// Idempotency-Key when idem is set.
func touch(s *platformtest.System, p person, env access.Environment, idem string, body any) *platformtest.Response {
	return as(s, p, env, http.MethodPost, "/api/v1/attribution", idem, body)
}

// TestAttribution: a signed-in user (with or without a workspace)
// records touches about themselves: the first creates the record (201)
// and is kept, each later one replaces the last touch (200) and counts;
// the referrer and landing path lose query and fragment; an
// Idempotency-Key replays without a second touch; test and live mode
// keep records of their own; each touch writes one event; the counter
// stops at its bound.
func TestAttribution(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := signIn(t, s, "ada@example.com", "Ada") // no workspace yet
		ada.userID = userIDOf(t, s, ada.email)
		r := touch(s, ada, access.Live, "", map[string]any{"source": " newsletter ", "medium": "email", "campaign": "spring launch",
			"referrer": "HTTPS://News.Example.com/issues/42?utm_source=newsletter&session=secret#top", "landingPath": "/pricing?plan=pro#faq"})
		var first api.AttributionView
		aiOK(t, "first touch", r, http.StatusCreated, &first)
		ft := first.FirstTouch
		if first.UserID != ada.userID || first.Environment != "live" || first.TouchCount != 1 || first.Version != 1 || ft.Source != "newsletter" ||
			ft.Medium == nil || *ft.Medium != "email" || ft.Referrer == nil || *ft.Referrer != "https://news.example.com/issues/42" ||
			ft.LandingPath == nil || *ft.LandingPath != "/pricing" || ft.Term != nil || ft.Content != nil ||
			first.TouchCountLimit != attribution.MaxTouchCount || !ft.RecordedAt.Equal(s.Clock.Now().UTC().Truncate(time.Microsecond)) {
			t.Fatalf("first touch = %+v", first)
		}
		if first.LastTouch.Source != ft.Source || *first.LastTouch.Referrer != *ft.Referrer {
			t.Fatalf("the last touch of a record of one touch = %+v", first.LastTouch)
		}
		rows := attributionRows(t, s, ada.userID)
		if row := rows["live"]; len(rows) != 1 || row.ID != first.ID || row.FReferrer != "https://news.example.com/issues/42" ||
			row.FLanding != "/pricing" || row.FCampaign != "spring launch" || row.WorkspaceID != "" || row.TouchCount != 1 {
			t.Fatalf("stored = %+v", rows)
		}
		if strings.Contains(string(r.Body), "secret") {
			t.Fatalf("the referrer's query was answered: %s", r.Body)
		}

		s.Clock.Advance(time.Hour)
		var second api.AttributionView
		aiOK(t, "second touch", touch(s, ada, access.Live, "", map[string]any{"source": "direct"}), http.StatusOK, &second)
		if second.ID != first.ID || second.LastTouch.Source != "direct" || second.LastTouch.Medium != nil || second.LastTouch.Referrer != nil ||
			second.TouchCount != 2 || second.Version != 2 || !second.LastTouch.RecordedAt.After(first.LastTouch.RecordedAt) {
			t.Fatalf("second touch = %+v", second)
		}
		if !sameTouch(second.FirstTouch, first.FirstTouch) {
			t.Fatalf("the first touch changed: %+v, was %+v", second.FirstTouch, first.FirstTouch)
		}
		row := attributionRows(t, s, ada.userID)["live"]
		if row.FSource != "newsletter" || row.LSource != "direct" || row.LMedium != "" || row.LReferrer != "" || row.TouchCount != 2 ||
			row.Version != 2 || !row.LAt.After(row.FAt) {
			t.Fatalf("stored after the second touch = %+v", row)
		}

		// An Idempotency-Key: the same key and body replay, another body
		// is refused; neither counts a touch.
		body := map[string]any{"source": "partner", "medium": "referral", "referrer": "https://partner.example.org/"}
		var third api.AttributionView
		aiOK(t, "keyed touch", touch(s, ada, access.Live, "touch-3", body), http.StatusOK, &third)
		r = touch(s, ada, access.Live, "touch-3", body)
		var replay api.AttributionView
		aiOK(t, "replayed touch", r, http.StatusOK, &replay)
		if r.Header.Get("Idempotent-Replayed") != "true" || replay.TouchCount != 3 || replay.Version != 3 || replay.LastTouch.Source != "partner" {
			t.Fatalf("replay = %+v (%s)", replay, r.Header.Get("Idempotent-Replayed"))
		}
		wantCode(t, "a key reused with another body", touch(s, ada, access.Live, "touch-3", map[string]any{"source": "other"}),
			http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		if row := attributionRows(t, s, ada.userID)["live"]; row.TouchCount != 3 || row.LSource != "partner" {
			t.Fatalf("after the replays = %+v", row)
		}

		// Test mode keeps a record of its own; the live one is untouched.
		var test api.AttributionView
		aiOK(t, "test-mode touch", touch(s, ada, access.Test, "", map[string]any{"source": "sandbox"}), http.StatusCreated, &test)
		rows = attributionRows(t, s, ada.userID)
		if test.Environment != "test" || test.ID == first.ID || len(rows) != 2 || rows["test"].TouchCount != 1 || rows["live"].TouchCount != 3 {
			t.Fatalf("test mode = %+v, rows %+v", test, rows)
		}

		// A user who has a workspace records with its scope.
		owner := bootstrapOwner(t, s, "Founder")
		op := person{email: owner.email, cookie: owner.cookie}
		var own api.AttributionView
		aiOK(t, "an owner's touch", touch(s, op, access.Live, "", map[string]any{"source": "direct"}), http.StatusCreated, &own)
		if row := attributionRows(t, s, owner.boot.OwnerID)["live"]; row.WorkspaceID != owner.boot.WorkspaceID || row.TenantID != owner.boot.TenantID {
			t.Fatalf("an owner's row = %+v", row)
		}

		var events int
		for _, env := range []string{"live", "test"} {
			events += count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'attribution.recorded' AND environment = ?`, env)
		}
		if events != 5 {
			t.Fatalf("attribution events = %d, want 5 (three live touches of ada, her test touch, the owner's)", events)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'attribution.recorded' AND payload LIKE '%partner.example%'`); n != 0 {
			t.Fatalf("an event carries the referrer")
		}

		// The counter stops at its bound while the last touch is replaced.
		if err := s.DB.InTx(context.Background(), func(tx *store.Tx) error {
			_, err := tx.IDB().ExecContext(context.Background(), `UPDATE attributions SET touch_count = ? WHERE id = ?`,
				attribution.MaxTouchCount-1, first.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{"one", "two"} {
			var a api.AttributionView
			aiOK(t, "a touch at the bound", touch(s, ada, access.Live, "", map[string]any{"source": src}), http.StatusOK, &a)
			if a.TouchCount != attribution.MaxTouchCount || a.LastTouch.Source != src {
				t.Fatalf("at the bound = %+v", a)
			}
		}
	})
}

// sameTouch compares two touches' fields.
func sameTouch(a, b api.AttributionTouchView) bool {
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	return a.Source == b.Source && s(a.Medium) == s(b.Medium) && s(a.Campaign) == s(b.Campaign) && s(a.Term) == s(b.Term) &&
		s(a.Content) == s(b.Content) && s(a.Referrer) == s(b.Referrer) && s(a.LandingPath) == s(b.LandingPath) && a.RecordedAt.Equal(b.RecordedAt)
}

// TestAttributionRefusals: each bad field is 400 INVALID_INPUT with its
// field and reason, an unknown field too; an API key (any scope) is 403
// ACCESS_DENIED and an anonymous call 401; none of them writes a row or
// an event, and another tenant's user records a row of their own,
// leaving the first user's as it was.
func TestAttributionRefusals(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		ada := signIn(t, s, "ada@example.com", "Ada")
		ada.userID = userIDOf(t, s, ada.email)
		long := strings.Repeat("a", attribution.MaxValue+1)
		for _, c := range []struct {
			name          string
			body          any
			field, reason string
		}{
			{"no source", map[string]any{"medium": "email"}, "source", ""},
			{"blank source", map[string]any{"source": "  "}, "source", ""},
			{"long source", map[string]any{"source": long}, "source", attribution.ReasonTooLong},
			{"source charset", map[string]any{"source": "<script>"}, "source", attribution.ReasonCharset},
			{"medium charset", map[string]any{"source": "x", "medium": "e/mail"}, "medium", attribution.ReasonCharset},
			{"campaign long", map[string]any{"source": "x", "campaign": long}, "campaign", attribution.ReasonTooLong},
			{"term charset", map[string]any{"source": "x", "term": "ü"}, "term", attribution.ReasonCharset},
			{"content charset", map[string]any{"source": "x", "content": "a;b"}, "content", attribution.ReasonCharset},
			{"relative referrer", map[string]any{"source": "x", "referrer": "news.example.com/a"}, "referrer", attribution.ReasonNotAbsolute},
			{"referrer scheme", map[string]any{"source": "x", "referrer": "file:///etc/passwd"}, "referrer", attribution.ReasonScheme},
			{"referrer credentials", map[string]any{"source": "x", "referrer": "https://ada:pw@news.example.com/"}, "referrer",
				attribution.ReasonCredentials},
			{"referrer host", map[string]any{"source": "x", "referrer": "https://news_example.com/"}, "referrer", attribution.ReasonHost},
			{"referrer long", map[string]any{"source": "x", "referrer": "https://news.example.com/" + strings.Repeat("p", attribution.MaxReferrerInput)},
				"referrer", attribution.ReasonTooLong},
			{"landing path", map[string]any{"source": "x", "landingPath": "//evil.example/"}, "landingPath", attribution.ReasonNotAPath},
			{"landing long", map[string]any{"source": "x", "landingPath": "/" + strings.Repeat("p", attribution.MaxStored)}, "landingPath",
				attribution.ReasonTooLong},
			{"unknown field", map[string]any{"source": "x", "userId": "usr_someone_else"}, "userId", ""},
			{"wrong type", map[string]any{"source": 7}, "source", ""},
		} {
			r := touch(s, ada, access.Live, "", c.body)
			wantCode(t, c.name, r, http.StatusBadRequest, "INVALID_INPUT")
			if detail(r, "field") != c.field || (c.reason != "" && detail(r, "reason") != c.reason) {
				t.Errorf("%s: details field %v reason %v, want %s %s", c.name, detail(r, "field"), detail(r, "reason"), c.field, c.reason)
			}
		}
		ok := map[string]any{"source": "direct"}
		// API keys are refused whatever their scopes, in either mode.
		for _, key := range []string{s.Boot.TestKey, s.Boot.LiveKey} {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/attribution", Key: key, Body: ok})
			wantCode(t, "an API key", r, http.StatusForbidden, "ACCESS_DENIED")
			if detail(r, "credential") != "api_key" {
				t.Errorf("an API key's refusal: %s", r.Body)
			}
		}
		// A session-bound access token is the user's own credential.
		r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/attribution", Key: ada.token, Body: ok})
		if r.Status != http.StatusCreated {
			t.Fatalf("the user's access token: %d %s", r.Status, r.Body)
		}
		wantCode(t, "anonymous", s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/attribution", Body: ok}),
			http.StatusUnauthorized, "UNAUTHENTICATED")
		wantCode(t, "a bad environment header", s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/attribution",
			Cookie: ada.cookie, Body: ok, Header: map[string]string{transport.EnvironmentHeader: "staging"}}), http.StatusBadRequest, "INVALID_INPUT")
		if n := count(t, s, `SELECT COUNT(*) FROM attributions`); n != 1 {
			t.Fatalf("refused touches stored rows: %d", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'attribution.recorded'`); n != 1 {
			t.Fatalf("refused touches wrote events: %d", n)
		}
		key := func(r attributionRow) string {
			return fmt.Sprint(r.ID, r.TouchCount, r.Version, r.LSource, r.LAt.UnixMicro())
		}
		before := key(attributionRows(t, s, ada.userID)["live"])
		// Another tenant's owner records their own record.
		other := bootstrapOwner(t, s, "Elsewhere")
		var theirs api.AttributionView
		aiOK(t, "another tenant", touch(s, person{email: other.email, cookie: other.cookie}, access.Live, "", map[string]any{"source": "ads"}),
			http.StatusCreated, &theirs)
		if after := key(attributionRows(t, s, ada.userID)["live"]); theirs.UserID != other.boot.OwnerID || after != before {
			t.Fatalf("another tenant's touch = %+v; ada's row %s, was %s", theirs, after, before)
		}
	})
}
