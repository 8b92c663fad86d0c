package apikey

import (
	"context"
	"reflect"
	"strconv"
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

// TestRotateOverlapBounds: an overlap outside 0..7 days is INVALID_INPUT
// naming the field, including counts of seconds that would overflow a
// time.Duration into a negative overlap; nothing reaches the store.
func TestRotateOverlapBounds(t *testing.T) {
	s := New(Config{MaxRotationOverlap: 30 * 24 * time.Hour}, plainDigest{}) // above the cap: lowered to 7 days
	for _, sec := range []int64{-1, 604801, 9_223_372_037, 1 << 62, -1 << 63} {
		_, err := s.Rotate(context.Background(), nil, Caller{}, "key_1", RotateInput{ExpireCurrentAfterSeconds: &sec})
		if fault.CodeOf(err) != fault.InvalidInput || fieldOf(err) != "expireCurrentAfterSeconds" {
			t.Errorf("expireCurrentAfterSeconds %d: %v, want INVALID_INPUT on the field", sec, err)
		}
	}
	if got := New(Config{MaxRotationOverlap: time.Hour}, plainDigest{}).cfg; got.MaxRotationOverlap != time.Hour || got.RotationOverlap != time.Hour {
		t.Errorf("a lower maximum: %+v, want the maximum and the default overlap at 1 hour", got)
	}
	f, _ := reflect.TypeFor[RotateInput]().FieldByName("ExpireCurrentAfterSeconds")
	if f.Tag.Get("maximum") != strconv.FormatInt(int64(MaxRotationOverlap/time.Second), 10) || f.Tag.Get("minimum") != "0" {
		t.Errorf("the published bounds %q..%q differ from MaxRotationOverlap", f.Tag.Get("minimum"), f.Tag.Get("maximum"))
	}
}

func fieldOf(err error) any {
	fe, ok := err.(*fault.Error)
	if !ok {
		return nil
	}
	return fe.Details["field"]
}
