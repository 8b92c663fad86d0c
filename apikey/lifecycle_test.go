package apikey

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

var ctx = context.Background()

// session is a signed-in user of ws_1 in test mode who may grant scopes.
func session(user string, scopes ...string) Caller {
	return Caller{Principal: &access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", WorkspaceID: "ws_1",
		Environment: access.Test, UserID: user, SessionID: "ses_" + user},
		Authority: &access.Authority{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: user, MembershipStatus: access.MembershipActive,
			Roles: []access.Role{access.RoleMember}},
		Grantable: scopes}
}

// create makes a key for c, failing the test on an error.
func create(t *testing.T, s *Service, st *memKeys, c Caller, in CreateInput) Created {
	t.Helper()
	out, err := s.Create(ctx, st, c, in)
	if err != nil {
		t.Fatalf("Create(%+v): %v", in, err)
	}
	return out
}

// TestCreateShowsTheSecretOnce: a key's plaintext is its environment's
// prefix and 40 random base32 characters; it is returned once and stored
// only as its keyed digest, shown by a display prefix and its last four
// characters; it authenticates as the key.
func TestCreateShowsTheSecretOnce(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	c := session("usr_1", access.ScopeRead, access.ScopeKeysRead, access.ScopeKeysWrite)
	out := create(t, s, st, c, CreateInput{Name: "  CI pipeline ", Scopes: []string{"read", "keys:read", "read"}})
	if !regexp.MustCompile(`^platform_test_[a-z2-7]{40}$`).MatchString(out.Secret) {
		t.Fatalf("plaintext %q is not platform_test_ and 40 base32 characters", out.Secret)
	}
	k := st.keys[out.Key.ID]
	if k.Environment != access.Test || k.Name != "CI pipeline" || !slices.Equal(k.Scopes, []string{"read", "keys:read"}) ||
		k.Status != Active || k.Version != 1 || k.Limits != s.DefaultLimits() || k.Metadata == nil || k.CreatedByUserID != "usr_1" {
		t.Fatalf("stored key = %+v", k)
	}
	if k.Prefix != out.Secret[:len(TestPrefix)+4] || k.Last4 != out.Secret[len(out.Secret)-4:] {
		t.Fatalf("display %q...%q of %q", k.Prefix, k.Last4, out.Secret)
	}
	secrets := st.secretsOf(k.ID)
	if len(secrets) != 1 || secrets[0].Digest != (hmacDigest{}).Digest(out.Secret) || secrets[0].ExpiresAt != nil {
		t.Fatalf("stored secrets = %+v", secrets)
	}
	random := strings.TrimPrefix(out.Secret, TestPrefix)
	stored, _ := json.Marshal(struct {
		K Key
		S []Secret
	}{k, secrets})
	if strings.Contains(string(stored), random[4:len(random)-4]) {
		t.Fatal("the store holds the plaintext's hidden part")
	}
	if len(st.events) != 1 || st.events[0].Type != "api_key.created" || st.events[0].AggregateID != k.ID ||
		st.events[0].AggregateVersion != 1 || strings.Contains(string(st.events[0].Payload), random) {
		t.Fatalf("events = %+v", st.events)
	}
	p, rec, err := s.Authenticate(ctx, st, out.Secret)
	if err != nil || p.KeyID != k.ID || p.Kind != access.CredentialAPIKey || !slices.Equal(p.Scopes, k.Scopes) || rec.Key.ID != k.ID {
		t.Fatalf("Authenticate(created) = %+v, %v", p, err)
	}
	if again := create(t, s, st, c, CreateInput{Name: "CI", Scopes: []string{"read"}}); again.Secret == out.Secret {
		t.Fatal("two keys share a plaintext")
	}

	// A session may make a live key; a key makes keys of its own
	// environment only.
	live := create(t, s, st, c, CreateInput{Name: "prod", Environment: access.Live, Scopes: []string{"read"}})
	if !strings.HasPrefix(live.Secret, LivePrefix) || live.Key.Environment != access.Live || !strings.HasPrefix(live.Key.Prefix, LivePrefix) {
		t.Fatalf("live key = %+v (%.16s...)", live.Key, live.Secret)
	}
	byKey := c
	byKey.Principal = &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test,
		UserID: "usr_1", KeyID: k.ID, Scopes: []string{"read", "keys:write"}}
	_, err = s.Create(ctx, st, byKey, CreateInput{Name: "x", Environment: access.Live, Scopes: []string{"read"}})
	if !fault.Is(err, fault.AccessDenied) || detailOf(err, "field") != "environment" {
		t.Fatalf("a test key making a live key = %v, want ACCESS_DENIED on environment", err)
	}
}

// TestCreateRefusesBadInput: every bound of a new key names its field and
// writes nothing.
func TestCreateRefusesBadInput(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	c := session("usr_1", access.ScopeRead)
	many := map[string]string{}
	for i := range 21 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	for _, tc := range []struct {
		name  string
		in    CreateInput
		code  fault.Code
		field string
	}{
		{"empty name", CreateInput{Name: "", Scopes: []string{"read"}}, fault.InvalidInput, "name"},
		{"blank name", CreateInput{Name: " \t ", Scopes: []string{"read"}}, fault.InvalidInput, "name"},
		{"long name", CreateInput{Name: strings.Repeat("é", 101), Scopes: []string{"read"}}, fault.InvalidInput, "name"},
		{"no scopes", CreateInput{Name: "k"}, fault.InvalidInput, "scopes"},
		{"unknown scope", CreateInput{Name: "k", Scopes: []string{"read", "everything"}}, fault.InvalidInput, "scopes[1]"},
		{"scope beyond the caller", CreateInput{Name: "k", Scopes: []string{"keys:write"}}, fault.AccessDenied, "scopes[0]"},
		{"internal scope", CreateInput{Name: "k", Scopes: []string{access.ScopeInternal}}, fault.AccessDenied, "scopes[0]"},
		{"environment", CreateInput{Name: "k", Environment: "staging", Scopes: []string{"read"}}, fault.InvalidInput, "environment"},
		{"21 metadata entries", CreateInput{Name: "k", Scopes: []string{"read"}, Metadata: many}, fault.InvalidInput, "metadata"},
		{"long metadata key", CreateInput{Name: "k", Scopes: []string{"read"}, Metadata: map[string]string{strings.Repeat("k", 41): "v"}}, fault.InvalidInput, "metadata"},
		{"long metadata value", CreateInput{Name: "k", Scopes: []string{"read"}, Metadata: map[string]string{"team": strings.Repeat("v", 501)}}, fault.InvalidInput, "metadata.team"},
		{"limits", CreateInput{Name: "k", Scopes: []string{"read"}, Limits: &Limits{RequestsPerMinute: 6001, MaxConcurrentRequests: 1, MonthlyRequestBudget: 1}}, fault.InvalidInput, "limits.requestsPerMinute"},
	} {
		_, err := s.Create(ctx, st, c, tc.in)
		if fault.CodeOf(err) != tc.code || detailOf(err, "field") != tc.field {
			t.Errorf("%s: %v, want %s on %s", tc.name, err, tc.code, tc.field)
		}
	}
	if len(st.keys) != 0 || len(st.events) != 0 {
		t.Fatalf("refused creates wrote %d keys and %d events", len(st.keys), len(st.events))
	}
	// The bounds themselves are allowed: 100 characters of any width, 20
	// metadata entries of 40-byte keys and 500-byte values.
	md := map[string]string{}
	for i := range 20 {
		md[strings.Repeat("k", 20)+strings.Repeat("x", i+1)] = strings.Repeat("v", 500)
	}
	create(t, s, st, c, CreateInput{Name: strings.Repeat("é", 100), Scopes: []string{"read"}, Metadata: md})
}

// TestRotateKeepsTheOldSecretForTheOverlap: rotation issues a new secret
// under the same key id; the old one works until the overlap ends (24
// hours unless asked, 0 to 7 days when asked), then answers
// SESSION_EXPIRED.
func TestRotateKeepsTheOldSecretForTheOverlap(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	c := session("usr_1", access.ScopeRead)
	old := create(t, s, st, c, CreateInput{Name: "k", Scopes: []string{"read"}})
	rotated, err := s.Rotate(ctx, st, c, old.Key.ID, RotateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Key.ID != old.Key.ID || rotated.Secret == old.Secret || rotated.Key.Version != 2 ||
		rotated.Key.Last4 != rotated.Secret[len(rotated.Secret)-4:] || st.keys[old.Key.ID].Prefix != rotated.Key.Prefix {
		t.Fatalf("rotated = %+v", rotated.Key)
	}
	if e := st.events[len(st.events)-1]; e.Type != "api_key.rotated" || e.AggregateVersion != 2 {
		t.Fatalf("event = %+v", e)
	}
	authAt := func(secret string, at time.Time) error {
		st.now = at
		_, _, err := s.Authenticate(ctx, st, secret)
		return err
	}
	t0 := st.now
	if err := authAt(old.Secret, t0.Add(24*time.Hour-time.Second)); err != nil {
		t.Fatalf("the old secret within the overlap: %v", err)
	}
	if err := authAt(old.Secret, t0.Add(24*time.Hour)); !fault.Is(err, fault.SessionExpired) {
		t.Fatalf("the old secret when the overlap ends = %v, want SESSION_EXPIRED", err)
	}
	if err := authAt(rotated.Secret, t0.Add(30*24*time.Hour)); err != nil {
		t.Fatalf("the new secret: %v", err)
	}

	// An overlap of 0 ends the old secret at once; the 7-day maximum is
	// allowed; a host's default above it is lowered to it.
	st.now = t0
	zero := int64(0)
	now, err := s.Rotate(ctx, st, c, old.Key.ID, RotateInput{ExpireCurrentAfterSeconds: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if err := authAt(rotated.Secret, t0); !fault.Is(err, fault.SessionExpired) {
		t.Fatalf("a secret rotated out with no overlap = %v, want SESSION_EXPIRED", err)
	}
	st.now = t0
	week := int64(7 * 24 * 3600)
	if _, err := s.Rotate(ctx, st, c, old.Key.ID, RotateInput{ExpireCurrentAfterSeconds: &week}); err != nil {
		t.Fatalf("the 7-day maximum: %v", err)
	}
	if err := authAt(now.Secret, t0.Add(7*24*time.Hour-time.Second)); err != nil {
		t.Fatalf("within a 7-day overlap: %v", err)
	}
	long := New(Config{RotationOverlap: 30 * 24 * time.Hour}, hmacDigest{})
	st.now = t0
	k := create(t, long, st, c, CreateInput{Name: "k2", Scopes: []string{"read"}})
	if _, err := long.Rotate(ctx, st, c, k.Key.ID, RotateInput{}); err != nil {
		t.Fatal(err)
	}
	if err := authAt(k.Secret, t0.Add(7*24*time.Hour)); !fault.Is(err, fault.SessionExpired) {
		t.Fatalf("a 30-day default overlap = %v at 7 days, want SESSION_EXPIRED", err)
	}
}

// TestRevokeAndDeleteFollowTheTable: revocation stops every secret at once
// and keeps its first time; a revoked key cannot be rotated or updated but
// can be deleted; a deleted key is gone from reads.
func TestRevokeAndDeleteFollowTheTable(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	c := session("usr_1", access.ScopeRead)
	k := create(t, s, st, c, CreateInput{Name: "k", Scopes: []string{"read"}})
	week := int64(7 * 24 * 3600)
	rotated, err := s.Rotate(ctx, st, c, k.Key.ID, RotateInput{ExpireCurrentAfterSeconds: &week})
	if err != nil {
		t.Fatal(err)
	}
	t0 := st.now
	revoked, err := s.Revoke(ctx, st, c, k.Key.ID)
	if err != nil || revoked.Status != Revoked || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(t0) {
		t.Fatalf("Revoke = %+v, %v", revoked, err)
	}
	for _, secret := range []string{k.Secret, rotated.Secret} {
		if _, _, err := s.Authenticate(ctx, st, secret); !fault.Is(err, fault.Unauthenticated) {
			t.Errorf("a revoked key's secret = %v, want UNAUTHENTICATED", err)
		}
	}
	for _, sec := range st.secretsOf(k.Key.ID) {
		if sec.ExpiresAt == nil || sec.ExpiresAt.After(t0) {
			t.Errorf("a revoked key's secret expires at %v, want %v", sec.ExpiresAt, t0)
		}
	}
	st.now = t0.Add(time.Hour)
	again, err := s.Revoke(ctx, st, c, k.Key.ID)
	if err != nil || again.Status != Revoked || !again.RevokedAt.Equal(t0) {
		t.Fatalf("revoking again = %+v, %v; want revoked at the first time", again, err)
	}
	name := "renamed"
	for ev, err := range map[string]error{
		"rotate": func() error { _, err := s.Rotate(ctx, st, c, k.Key.ID, RotateInput{}); return err }(),
		"update": func() error { _, err := s.Update(ctx, st, c, k.Key.ID, UpdateInput{Name: &name}); return err }(),
		"limits": func() error { _, err := s.SetLimits(ctx, st, c, k.Key.ID, s.DefaultLimits()); return err }(),
	} {
		if !fault.Is(err, fault.InvalidState) || detailOf(err, "status") != string(Revoked) {
			t.Errorf("%s a revoked key = %v, want INVALID_STATE_TRANSITION with status revoked", ev, err)
		}
	}
	if st.keys[k.Key.ID].Name != "k" {
		t.Fatal("a refused update renamed the key")
	}
	if d, err := s.Delete(ctx, st, c, k.Key.ID); err != nil || d.Status != Deleted {
		t.Fatalf("Delete = %+v, %v", d, err)
	}
	if _, err := s.Get(ctx, st, c.Principal, k.Key.ID); !fault.Is(err, fault.NotFound) {
		t.Fatalf("Get after delete = %v, want NOT_FOUND", err)
	}
	if _, err := s.Revoke(ctx, st, c, k.Key.ID); !fault.Is(err, fault.NotFound) {
		t.Fatalf("Revoke after delete = %v, want NOT_FOUND", err)
	}
	var types []string
	for _, e := range st.events {
		types = append(types, e.Type)
	}
	want := []string{"api_key.created", "api_key.rotated", "api_key.revoked", "api_key.revoked", "api_key.deleted"}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
}

// TestManagementNeedsTheKeysAuthority: a caller manages a key only when it
// may grant every scope of it; revoking and deleting, which only take
// authority away, are also open to the key itself and to the user whose
// authority made it; rotation hands out the key's authority, so it needs
// the creator or an administrator who holds the creator's authority.
// Internal keys are NOT_FOUND to every caller.
func TestManagementNeedsTheKeysAuthority(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	full := []string{access.ScopeRead, access.ScopeKeysRead, access.ScopeKeysWrite}
	wide := create(t, s, st, session("usr_2", full...), CreateInput{Name: "wide", Scopes: []string{"keys:write"}})
	mine := create(t, s, st, session("usr_1", full...), CreateInput{Name: "mine", Scopes: []string{"keys:write"}})
	narrow := session("usr_1", access.ScopeRead) // usr_1 since lost keys:write
	name := "x"
	denied := func(what string, err error, reason string) {
		t.Helper()
		if !fault.Is(err, fault.AccessDenied) || detailOf(err, "reason") != reason {
			t.Errorf("%s = %v, want ACCESS_DENIED (%s)", what, err, reason)
		}
	}
	_, err := s.Update(ctx, st, narrow, wide.Key.ID, UpdateInput{Name: &name})
	denied("update of a wider key", err, reasonExceeds)
	_, err = s.SetLimits(ctx, st, narrow, wide.Key.ID, s.DefaultLimits())
	denied("limits of a wider key", err, reasonExceeds)
	_, err = s.Revoke(ctx, st, narrow, wide.Key.ID)
	denied("revoke of another user's wider key", err, reasonExceeds)
	_, err = s.Update(ctx, st, narrow, mine.Key.ID, UpdateInput{Name: &name})
	denied("update of an own key past the caller's authority", err, reasonExceeds)
	if st.keys[wide.Key.ID].Status != Active || st.keys[mine.Key.ID].Name != "mine" {
		t.Fatal("refused calls changed keys")
	}
	// Taking authority away stays open: the user revokes the key made on
	// their own authority, and a key revokes itself, but a key never uses
	// its user's exception for another key.
	self := narrow
	self.Principal = &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test,
		UserID: "usr_1", KeyID: mine.Key.ID, Scopes: []string{"read"}}
	other := create(t, s, st, session("usr_1", full...), CreateInput{Name: "other", Scopes: []string{"keys:write"}})
	_, err = s.Revoke(ctx, st, self, other.Key.ID)
	denied("a key revoking its user's other key", err, reasonExceeds)
	if _, err := s.Revoke(ctx, st, self, mine.Key.ID); err != nil {
		t.Errorf("a key revoking itself: %v", err)
	}
	if _, err := s.Delete(ctx, st, narrow, other.Key.ID); err != nil {
		t.Errorf("a user deleting a key of their own authority: %v", err)
	}

	// Rotation.
	reader := create(t, s, st, session("usr_2", full...), CreateInput{Name: "reader", Scopes: []string{"read"}})
	_, err = s.Rotate(ctx, st, session("usr_1", full...), reader.Key.ID, RotateInput{})
	denied("rotation by a member who did not make the key", err, reasonNotCreator)
	st.authority["usr_2"] = access.Authority{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_2",
		MembershipStatus: access.MembershipActive, Roles: []access.Role{access.RoleDeveloper}}
	admin := session("usr_3", full...)
	admin.Authority = &access.Authority{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_3", MembershipStatus: access.MembershipActive,
		Roles: []access.Role{access.RoleAdmin}}
	_, err = s.Rotate(ctx, st, admin, reader.Key.ID, RotateInput{})
	denied("rotation by an administrator without the creator's DEVELOPER role", err, reasonCreatorExceeds)
	admin.Authority.Roles = append(admin.Authority.Roles, access.RoleDeveloper)
	if _, err := s.Rotate(ctx, st, admin, reader.Key.ID, RotateInput{}); err != nil {
		t.Errorf("rotation by an administrator holding the creator's authority: %v", err)
	}
	if _, err := s.Rotate(ctx, st, session("usr_2", access.ScopeRead), reader.Key.ID, RotateInput{}); err != nil {
		t.Errorf("rotation by the key's creator: %v", err)
	}

	// Internal keys belong to the host's operator.
	internal, err := s.IssueInternal(ctx, st, "ten_1", "ws_1", "usr_1", access.Test, "publisher")
	if err != nil || !slices.Equal(internal.Key.Scopes, []string{access.ScopeInternal}) || !internal.Key.Internal {
		t.Fatalf("IssueInternal = %+v, %v", internal.Key, err)
	}
	owner := session("usr_1", access.ScopesFor(&access.Authority{MembershipStatus: access.MembershipActive, Roles: []access.Role{access.RoleOwner}})...)
	for what, err := range map[string]error{
		"update": func() error {
			_, err := s.Update(ctx, st, owner, internal.Key.ID, UpdateInput{Name: &name})
			return err
		}(),
		"rotate": func() error { _, err := s.Rotate(ctx, st, owner, internal.Key.ID, RotateInput{}); return err }(),
		"revoke": func() error { _, err := s.Revoke(ctx, st, owner, internal.Key.ID); return err }(),
		"delete": func() error { _, err := s.Delete(ctx, st, owner, internal.Key.ID); return err }(),
	} {
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("%s of an internal key = %v, want NOT_FOUND", what, err)
		}
	}
	if st.keys[internal.Key.ID].Status != Active {
		t.Fatal("an internal key was changed")
	}
}

// TestUpdateKeepsWhatItDoesNotName: an update changes the named fields
// only, each checked as at creation.
func TestUpdateKeepsWhatItDoesNotName(t *testing.T) {
	st := newMemKeys()
	s := New(Config{}, hmacDigest{})
	c := session("usr_1", access.ScopeRead, access.ScopeKeysRead)
	k := create(t, s, st, c, CreateInput{Name: "k", Scopes: []string{"read"}, Metadata: map[string]string{"team": "a"}})
	name := " renamed "
	got, err := s.Update(ctx, st, c, k.Key.ID, UpdateInput{Name: &name})
	if err != nil || got.Name != "renamed" || !slices.Equal(got.Scopes, []string{"read"}) || !maps.Equal(got.Metadata, map[string]string{"team": "a"}) || got.Version != 2 {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	got, err = s.Update(ctx, st, c, k.Key.ID, UpdateInput{Scopes: []string{"keys:read", "keys:read"}})
	if err != nil || !slices.Equal(got.Scopes, []string{"keys:read"}) || got.Name != "renamed" {
		t.Fatalf("rescope = %+v, %v", got, err)
	}
	if _, err := s.Update(ctx, st, c, k.Key.ID, UpdateInput{Scopes: []string{}}); !fault.Is(err, fault.InvalidInput) || detailOf(err, "field") != "scopes" {
		t.Fatalf("empty scopes = %v, want INVALID_INPUT on scopes", err)
	}
	if e := st.events[len(st.events)-1]; e.Type != "api_key.updated" || e.AggregateVersion != 3 {
		t.Fatalf("last event = %+v", e)
	}
	// Limits are checked before any read.
	if _, err := s.SetLimits(ctx, nil, c, k.Key.ID, Limits{}); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("zero limits = %v, want INVALID_INPUT", err)
	}
}

func detailOf(err error, key string) any {
	_, _, d := fault.Public(err)
	return d[key]
}
