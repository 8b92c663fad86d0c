package attribution_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// fakeStore is an in-memory attribution.Store. conflicts makes that many
// writes fail with CONFLICT after a concurrent touch (one more touch of the
// stored record) lands first.
type fakeStore struct {
	now       time.Time
	ids       int
	rows      map[string]attribution.Attribution // by environment and user
	events    []outbox.Event
	conflicts int
}

func newFake() *fakeStore {
	return &fakeStore{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), rows: map[string]attribution.Attribution{}}
}

func (f *fakeStore) Now() time.Time { return f.now }

func (f *fakeStore) NewID(prefix string) string {
	f.ids++
	return prefix + strings.Repeat("0", 3) + string(rune('a'+f.ids))
}

func (f *fakeStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	f.events = append(f.events, e)
	return e, nil
}

func key(env access.Environment, user string) string { return string(env) + "/" + user }

func (f *fakeStore) AttributionGet(_ context.Context, env access.Environment, user string) (attribution.Attribution, error) {
	a, ok := f.rows[key(env, user)]
	if !ok {
		return attribution.Attribution{}, fault.E("fake", fault.NotFound, "")
	}
	return a, nil
}

// race lands a concurrent touch on the record of a (or creates it) when
// conflicts remain, and reports whether it did.
func (f *fakeStore) race(a attribution.Attribution) bool {
	if f.conflicts == 0 {
		return false
	}
	f.conflicts--
	k := key(a.Scope.Environment, a.UserID)
	cur, ok := f.rows[k]
	other := attribution.Touch{Source: "concurrent", At: f.now}
	if !ok {
		f.rows[k] = attribution.Attribution{ID: "atr_other", Scope: a.Scope, UserID: a.UserID, First: other, Last: other, TouchCount: 1,
			Version: 1, CreatedAt: f.now, UpdatedAt: f.now}
		return true
	}
	f.rows[k] = cur.Next(other)
	return true
}

func (f *fakeStore) AttributionInsert(_ context.Context, a attribution.Attribution) error {
	if f.race(a) {
		return fault.E("fake", fault.Conflict, "")
	}
	if _, ok := f.rows[key(a.Scope.Environment, a.UserID)]; ok {
		return fault.E("fake", fault.Conflict, "")
	}
	f.rows[key(a.Scope.Environment, a.UserID)] = a
	return nil
}

func (f *fakeStore) AttributionUpdate(_ context.Context, a attribution.Attribution) error {
	k := key(a.Scope.Environment, a.UserID)
	if f.race(a) {
		return fault.E("fake", fault.Conflict, "")
	}
	cur, ok := f.rows[k]
	if !ok || cur.Version != a.Version-1 {
		return fault.E("fake", fault.Conflict, "")
	}
	cur.Last, cur.TouchCount, cur.Version, cur.UpdatedAt = a.Last, a.TouchCount, a.Version, a.UpdatedAt
	f.rows[k] = cur
	return nil
}

var _ attribution.Store = (*fakeStore)(nil)

func session(user string, env access.Environment) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env, UserID: user}
}

// TestNormalize: each field's bounds, character set and the URL rules,
// each refusal naming its field and reason; the stored referrer and
// landing path lose query and fragment.
func TestNormalize(t *testing.T) {
	long := strings.Repeat("a", attribution.MaxValue+1)
	for _, c := range []struct {
		name          string
		in            attribution.Input
		field, reason string
	}{
		{"no source", attribution.Input{Medium: "cpc"}, "source", ""},
		{"blank source", attribution.Input{Source: "   "}, "source", ""},
		{"long source", attribution.Input{Source: long}, "source", attribution.ReasonTooLong},
		{"source charset", attribution.Input{Source: "news<letter>"}, "source", attribution.ReasonCharset},
		{"source non-ASCII", attribution.Input{Source: "café"}, "source", attribution.ReasonCharset},
		{"medium charset", attribution.Input{Source: "x", Medium: "c/p/c"}, "medium", attribution.ReasonCharset},
		{"campaign long", attribution.Input{Source: "x", Campaign: long}, "campaign", attribution.ReasonTooLong},
		{"term charset", attribution.Input{Source: "x", Term: "a&b"}, "term", attribution.ReasonCharset},
		{"content charset", attribution.Input{Source: "x", Content: "a=b"}, "content", attribution.ReasonCharset},
		{"referrer relative", attribution.Input{Source: "x", Referrer: "/from/here"}, "referrer", attribution.ReasonNotAbsolute},
		{"referrer opaque", attribution.Input{Source: "x", Referrer: "http:example.com"}, "referrer", attribution.ReasonNotAbsolute},
		{"referrer scheme", attribution.Input{Source: "x", Referrer: "javascript://example.com/%0aalert(1)"}, "referrer", attribution.ReasonScheme},
		{"referrer ftp", attribution.Input{Source: "x", Referrer: "ftp://example.com/"}, "referrer", attribution.ReasonScheme},
		{"referrer credentials", attribution.Input{Source: "x", Referrer: "https://ada:secret@example.com/"}, "referrer", attribution.ReasonCredentials},
		{"referrer user only", attribution.Input{Source: "x", Referrer: "https://ada@example.com/"}, "referrer", attribution.ReasonCredentials},
		{"referrer no host", attribution.Input{Source: "x", Referrer: "https:///path"}, "referrer", attribution.ReasonHost},
		{"referrer host charset", attribution.Input{Source: "x", Referrer: "https://exa_mple.com/"}, "referrer", attribution.ReasonHost},
		{"referrer too long", attribution.Input{Source: "x", Referrer: "https://example.com/" + strings.Repeat("a", attribution.MaxReferrerInput)},
			"referrer", attribution.ReasonTooLong},
		{"referrer stored too long", attribution.Input{Source: "x", Referrer: "https://example.com/" + strings.Repeat("a", attribution.MaxStored)},
			"referrer", attribution.ReasonTooLong},
		{"landing absolute", attribution.Input{Source: "x", LandingPath: "https://example.com/"}, "landingPath", attribution.ReasonNotAPath},
		{"landing scheme-relative", attribution.Input{Source: "x", LandingPath: "//evil.example/"}, "landingPath", attribution.ReasonNotAPath},
		{"landing relative", attribution.Input{Source: "x", LandingPath: "pricing"}, "landingPath", attribution.ReasonNotAPath},
		{"landing long", attribution.Input{Source: "x", LandingPath: "/" + strings.Repeat("a", attribution.MaxStored)}, "landingPath",
			attribution.ReasonTooLong},
	} {
		_, err := c.in.Normalize()
		var fe *fault.Error
		if !fault.Is(err, fault.InvalidInput) || !asFault(err, &fe) || fe.Details["field"] != c.field {
			t.Errorf("%s: %v, want INVALID_INPUT on %s", c.name, err, c.field)
			continue
		}
		if c.reason != "" && fe.Details["reason"] != c.reason {
			t.Errorf("%s: reason %v, want %s", c.name, fe.Details["reason"], c.reason)
		}
	}

	got, err := attribution.Input{Source: "  newsletter ", Medium: "email", Campaign: "spring sale+2026", Term: "", Content: "hero_v2",
		Referrer: "HTTPS://News.Example.COM:8443/a/b%20c?utm_source=x&token=abc#frag", LandingPath: "/pricing/pro?ref=x#top"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	want := attribution.Touch{Source: "newsletter", Medium: "email", Campaign: "spring sale+2026", Content: "hero_v2",
		Referrer: "https://news.example.com:8443/a/b%20c", LandingPath: "/pricing/pro"}
	if got != want {
		t.Errorf("normalized = %+v, want %+v", got, want)
	}
	for in, want := range map[string]string{
		"http://example.com":             "http://example.com/",
		"https://[2001:db8::1]:8080/x?y": "https://[2001:db8::1]:8080/x",
		"https://192.0.2.1/p#f":          "https://192.0.2.1/p",
	} {
		got, err := attribution.Input{Source: "x", Referrer: in}.Normalize()
		if err != nil || got.Referrer != want {
			t.Errorf("referrer %q = %q, %v; want %q", in, got.Referrer, err, want)
		}
	}
}

func asFault(err error, fe **fault.Error) bool {
	for err != nil {
		if e, ok := err.(*fault.Error); ok && e.Code != "" {
			*fe = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestFirstAndLastTouch: the first touch creates the record and is kept
// as it was; each later touch replaces the last, raises the count and
// the version and writes one event; the other environment and another
// user have records of their own.
func TestFirstAndLastTouch(t *testing.T) {
	ctx := context.Background()
	st, svc := newFake(), attribution.New()
	ada := session("usr_ada", access.Live)
	a, created, err := svc.Record(ctx, st, ada, attribution.Input{Source: "google", Medium: "cpc", Referrer: "https://www.google.com/search?q=x"})
	if err != nil || !created {
		t.Fatalf("first touch: %v, created %v", err, created)
	}
	first := a.First
	if a.TouchCount != 1 || a.Version != 1 || a.Last != first || first.Referrer != "https://www.google.com/search" || !first.At.Equal(st.now) ||
		a.Scope != ada.Scope() || a.UserID != "usr_ada" {
		t.Fatalf("first record = %+v", a)
	}
	st.now = st.now.Add(time.Hour)
	a, created, err = svc.Record(ctx, st, ada, attribution.Input{Source: "newsletter", Campaign: "launch"})
	if err != nil || created {
		t.Fatalf("second touch: %v, created %v", err, created)
	}
	if a.First != first || a.Last.Source != "newsletter" || a.Last.Campaign != "launch" || a.Last.Medium != "" || a.Last.Referrer != "" ||
		a.TouchCount != 2 || a.Version != 2 || !a.UpdatedAt.Equal(st.now) || !a.CreatedAt.Equal(first.At) {
		t.Fatalf("second record = %+v", a)
	}
	if stored := st.rows[key(access.Live, "usr_ada")]; stored != a {
		t.Fatalf("stored = %+v, answered %+v", stored, a)
	}
	if len(st.events) != 2 || st.events[0].Type != attribution.EventRecorded || st.events[1].AggregateVersion != 2 ||
		st.events[1].AggregateID != a.ID || st.events[1].Environment != "live" || !strings.Contains(string(st.events[0].Payload), `"first":true`) ||
		!strings.Contains(string(st.events[1].Payload), `"first":false`) || strings.Contains(string(st.events[0].Payload), "google.com") {
		t.Fatalf("events = %+v", st.events)
	}
	// Test mode and another user start records of their own.
	if _, created, err := svc.Record(ctx, st, session("usr_ada", access.Test), attribution.Input{Source: "direct"}); err != nil || !created {
		t.Fatalf("test-mode touch: %v, %v", err, created)
	}
	if _, created, err := svc.Record(ctx, st, session("usr_bob", access.Live), attribution.Input{Source: "direct"}); err != nil || !created {
		t.Fatalf("another user's touch: %v, %v", err, created)
	}
	if live := st.rows[key(access.Live, "usr_ada")]; live != a || len(st.rows) != 3 {
		t.Fatalf("rows = %+v", st.rows)
	}
	// A refused touch changes nothing.
	if _, _, err := svc.Record(ctx, st, ada, attribution.Input{Source: "bad source!"}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("bad touch: %v", err)
	}
	if st.rows[key(access.Live, "usr_ada")] != a || len(st.events) != 4 {
		t.Fatalf("a refused touch wrote: %+v, %d events", st.rows[key(access.Live, "usr_ada")], len(st.events))
	}
}

// TestTouchCountBound: the counter stops at MaxTouchCount while the last
// touch is still replaced.
func TestTouchCountBound(t *testing.T) {
	a := attribution.Attribution{TouchCount: attribution.MaxTouchCount - 1, Version: 7}
	a = a.Next(attribution.Touch{Source: "one"})
	if a.TouchCount != attribution.MaxTouchCount || a.Version != 8 {
		t.Fatalf("at the bound: %+v", a)
	}
	a = a.Next(attribution.Touch{Source: "two"})
	if a.TouchCount != attribution.MaxTouchCount || a.Last.Source != "two" || a.Version != 9 {
		t.Fatalf("past the bound: %+v", a)
	}
}

// TestConcurrentTouches: a touch that loses to a concurrent one is
// applied after it (the first touch is the winner's), and one that keeps
// losing is CONFLICT, writing nothing.
func TestConcurrentTouches(t *testing.T) {
	ctx := context.Background()
	st, svc := newFake(), attribution.New()
	ada := session("usr_ada", access.Live)
	st.conflicts = 1
	a, created, err := svc.Record(ctx, st, ada, attribution.Input{Source: "mine"})
	if err != nil || created || a.First.Source != "concurrent" || a.Last.Source != "mine" || a.TouchCount != 2 {
		t.Fatalf("after a lost insert: %+v, %v, %v", a, created, err)
	}
	st.conflicts = 10
	events := len(st.events)
	if _, _, err := svc.Record(ctx, st, ada, attribution.Input{Source: "late"}); !fault.Is(err, fault.Conflict) {
		t.Fatalf("always losing: %v", err)
	}
	if len(st.events) != events || st.rows[key(access.Live, "usr_ada")].Last.Source == "late" {
		t.Fatalf("a lost touch wrote")
	}
}

// TestKeysAndAnonymousRecordNothing: only a signed-in user records.
func TestKeysAndAnonymousRecordNothing(t *testing.T) {
	ctx := context.Background()
	st, svc := newFake(), attribution.New()
	key := &access.Principal{Kind: access.CredentialAPIKey, KeyID: "key_1", UserID: "usr_ada", Environment: access.Live}
	for _, p := range []*access.Principal{nil, {Kind: access.CredentialSession, Environment: access.Live}, key} {
		if _, _, err := svc.Record(ctx, st, p, attribution.Input{Source: "x"}); !fault.Is(err, fault.Unauthenticated) {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if len(st.rows) != 0 || len(st.events) != 0 {
		t.Fatalf("wrote %d rows, %d events", len(st.rows), len(st.events))
	}
}
