package apikey

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

func TestTransitionTable(t *testing.T) {
	for _, m := range Moves() {
		got, err := Transition(m.From, m.Event)
		if err != nil || got != m.To {
			t.Errorf("Transition(%s, %s) = %s, %v; want %s", m.From, m.Event, got, err, m.To)
		}
	}
	for _, bad := range []struct {
		from Status
		ev   Event
	}{{Revoked, EventRotate}, {Revoked, EventUpdate}, {Deleted, EventRevoke}, {Deleted, EventDelete}} {
		if _, err := Transition(bad.from, bad.ev); fault.CodeOf(err) != fault.InvalidState {
			t.Errorf("Transition(%s, %s) = %v, want INVALID_STATE_TRANSITION", bad.from, bad.ev, err)
		}
	}
}

type plainDigest struct{}

func (plainDigest) Digest(s string) string { return "d:" + s }

type fakeAuth struct {
	now  time.Time
	recs map[string]AuthRecord
}

func (f fakeAuth) Now() time.Time { return f.now }
func (f fakeAuth) KeyAuth(_ context.Context, digest string) (AuthRecord, error) {
	r, ok := f.recs[digest]
	if !ok {
		return AuthRecord{}, fault.E("fake", fault.NotFound, "")
	}
	return r, nil
}

func TestAuthenticate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	past := now.Add(-time.Second)
	future := now.Add(time.Hour)
	key := func(st Status, env access.Environment) Key {
		return Key{ID: "key_1", TenantID: "ten", WorkspaceID: "ws", Environment: env, Status: st, CreatedByUserID: "usr", Scopes: []string{"read"}}
	}
	live := LivePrefix + strings.Repeat("a", 40)
	test := TestPrefix + strings.Repeat("b", 40)
	store := fakeAuth{now: now, recs: map[string]AuthRecord{
		"d:" + test:                   {Key: key(Active, access.Test), Secret: Secret{ExpiresAt: &future}},
		"d:" + live:                   {Key: key(Active, access.Test)}, // a live prefix on a test key
		"d:" + TestPrefix + "revoked": {Key: key(Revoked, access.Test)},
		"d:" + TestPrefix + "rotated": {Key: key(Active, access.Test), Secret: Secret{ExpiresAt: &past}},
	}}
	s := New(Config{}, plainDigest{})
	cases := []struct {
		in   string
		code fault.Code
	}{
		{"sk_live_x", fault.Unauthenticated},
		{TestPrefix + strings.Repeat("c", 200), fault.Unauthenticated},
		{TestPrefix + "unknown", fault.Unauthenticated},
		{live, fault.Unauthenticated},
		{TestPrefix + "revoked", fault.Unauthenticated},
		{TestPrefix + "rotated", fault.SessionExpired},
	}
	for _, c := range cases {
		if _, _, err := s.Authenticate(context.Background(), store, c.in); fault.CodeOf(err) != c.code {
			t.Errorf("Authenticate(%.20s...) = %v, want %s", c.in, err, c.code)
		}
	}
	p, rec, err := s.Authenticate(context.Background(), store, test)
	if err != nil || p.KeyID != "key_1" || p.Kind != access.CredentialAPIKey || p.UserID != "usr" || p.Environment != access.Test || rec.Key.ID != "key_1" {
		t.Fatalf("Authenticate(valid) = %+v, %v", p, err)
	}
}

func TestValidateLimits(t *testing.T) {
	s := New(Config{}, plainDigest{})
	ok := s.DefaultLimits()
	if err := s.ValidateLimits("t", ok); err != nil {
		t.Fatalf("default limits rejected: %v", err)
	}
	for field, l := range map[string]Limits{
		"limits.requestsPerMinute":     {RequestsPerMinute: 0, MaxConcurrentRequests: 1, MonthlyRequestBudget: 1},
		"limits.maxConcurrentRequests": {RequestsPerMinute: 1, MaxConcurrentRequests: 100000, MonthlyRequestBudget: 1},
		"limits.monthlyRequestBudget":  {RequestsPerMinute: 1, MaxConcurrentRequests: 1, MonthlyRequestBudget: -1},
	} {
		err := s.ValidateLimits("t", l)
		var fe *fault.Error
		if fault.CodeOf(err) != fault.InvalidInput || !asFault(err, &fe) || fe.Details["field"] != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func asFault(err error, fe **fault.Error) bool {
	e, ok := err.(*fault.Error)
	*fe = e
	return ok
}
