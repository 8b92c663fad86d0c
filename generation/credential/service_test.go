package credential_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/internal/secret"
)

// provider is a MusicProvider whose Balance is a function field.
type provider struct {
	generation.MusicProvider
	id          generation.ProviderID
	BalanceFunc func(c generation.Credential) (generation.Balance, error)
}

func (p provider) ID() generation.ProviderID { return p.id }

func (p provider) Balance(_ context.Context, c generation.Credential) (generation.Balance, error) {
	return p.BalanceFunc(c)
}

// memStore is an in-memory credential.Store.
type memStore struct {
	now   time.Time
	creds map[string]credential.Credential
	snaps []credential.Snapshot
}

var _ credential.Store = (*memStore)(nil)

func (m *memStore) Now() time.Time             { return m.now }
func (m *memStore) NewID(prefix string) string { return id.New(prefix, m.now) }
func (m *memStore) ProviderCredentialInsert(_ context.Context, c credential.Credential) error {
	m.creds[c.ID] = c
	return nil
}
func (m *memStore) ProviderCredentialGet(_ context.Context, sc access.Scope, id string) (credential.Credential, error) {
	c, ok := m.creds[id]
	if !ok || c.Scope != sc || c.DeletedAt != nil {
		return credential.Credential{}, fault.E("mem", fault.NotFound, "")
	}
	return c, nil
}
func (m *memStore) ProviderCredentialList(context.Context, access.Scope, string, int) ([]credential.Credential, error) {
	return nil, nil
}
func (m *memStore) ProviderCredentialUpdate(_ context.Context, c credential.Credential) error {
	m.creds[c.ID] = c
	return nil
}
func (m *memStore) ProviderBalanceInsert(_ context.Context, s credential.Snapshot) error {
	m.snaps = append(m.snaps, s)
	return nil
}

func newService(t *testing.T, p provider, managed bool) *credential.Service {
	t.Helper()
	kr, err := secret.New([]byte("credential-test-master-secret-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	ps := credential.Providers{Test: credential.Adapters{p.id: p}}
	if managed {
		ps.PlatformKeys.Test = credential.Keys{p.id: {APIKey: "platform-managed-key"}}
	}
	svc, err := credential.New(credential.Config{Sealer: kr, Providers: ps})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestNewRejectsMismatchedAdapter(t *testing.T) {
	kr, _ := secret.New([]byte("credential-test-master-secret-0123456789"))
	_, err := credential.New(credential.Config{Sealer: kr, Providers: credential.Providers{
		Test: credential.Adapters{generation.ProviderA: provider{id: generation.ProviderB}}}})
	if err == nil {
		t.Fatal("an adapter of B was accepted as A")
	}
}

func TestCatalog(t *testing.T) {
	p := provider{id: generation.ProviderB}
	dev := &access.Principal{Environment: access.Test}
	live := &access.Principal{Environment: access.Live}
	for _, c := range []struct {
		name    string
		managed bool
		who     *access.Principal
		modes   string
	}{
		{"byok only", false, dev, "BYOK"},
		{"managed", true, dev, "PLATFORM_MANAGED,BYOK,BYOK_WITH_PLATFORM_FALLBACK"},
		{"live unconfigured", true, live, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := newService(t, p, c.managed).Catalog(context.Background(), observed{}, c.who)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 2 || ps[0].ID != generation.ProviderA || ps[0].Configured || len(ps[0].Modes) != 0 {
				t.Fatalf("A = %+v", ps)
			}
			var modes []string
			for _, m := range ps[1].Modes {
				modes = append(modes, string(m))
			}
			if got := strings.Join(modes, ","); got != c.modes || ps[1].Configured != (c.modes != "") {
				t.Fatalf("B = %+v", ps[1])
			}
		})
	}
}

func TestCheckSealOpen(t *testing.T) {
	ctx := context.Background()
	const key, cb = "sk-customer-key-1234", "callback-secret-5678"
	p := provider{id: generation.ProviderB, BalanceFunc: func(c generation.Credential) (generation.Balance, error) {
		switch c.APIKey {
		case key:
			return generation.Balance{Credits: 42, ExtraCredits: 1}, nil
		case "sk-broken-provider":
			return generation.Balance{}, errors.New("connection reset")
		}
		return generation.Balance{}, fault.E("fake", fault.ProviderCredentialInvalid, "")
	}}
	svc := newService(t, p, false)
	who := &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_1"}

	for _, c := range []struct {
		in   credential.CreateInput
		code fault.Code
	}{
		{credential.CreateInput{Provider: "OTHER", APIKey: key}, fault.InvalidInput},
		{credential.CreateInput{Provider: generation.ProviderB, APIKey: "short"}, fault.InvalidInput},
		{credential.CreateInput{Provider: generation.ProviderB, APIKey: "has a space in it"}, fault.InvalidInput},
		{credential.CreateInput{Provider: generation.ProviderA, APIKey: key}, fault.ProviderUnavailable},
		{credential.CreateInput{Provider: generation.ProviderB, APIKey: "sk-rejected-key"}, fault.ProviderCredentialInvalid},
		{credential.CreateInput{Provider: generation.ProviderB, APIKey: "sk-broken-provider"}, fault.ProviderUnavailable},
	} {
		if _, err := svc.Check(ctx, who, c.in); fault.CodeOf(err) != c.code {
			t.Errorf("Check(%+v) = %v, want %s", c.in, err, c.code)
		}
	}

	ck, err := svc.Check(ctx, who, credential.CreateInput{Provider: generation.ProviderB, APIKey: key, CallbackKey: cb})
	if err != nil {
		t.Fatal(err)
	}
	st := &memStore{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), creds: map[string]credential.Credential{}}
	c, err := svc.Insert(ctx, st, who, ck)
	if err != nil {
		t.Fatal(err)
	}
	if c.Last4 != "1234" || len(c.Fingerprint) != credential.FingerprintLen || c.Balance == nil || c.Balance.Credits != 42 ||
		len(st.snaps) != 1 || strings.Contains(string(c.SealedKey), key) {
		t.Fatalf("inserted = %+v", c)
	}
	got, err := svc.Open(c)
	if err != nil || got.APIKey != key || got.CallbackKey != cb {
		t.Fatalf("Open = %+v, %v", got, err)
	}
	// A sealed value is bound to its row and its role.
	swapped := c
	swapped.SealedKey, swapped.SealedCallbackKey = c.SealedCallbackKey, c.SealedKey
	if _, err := svc.Open(swapped); err == nil {
		t.Error("swapped sealed values opened")
	}
	moved := c
	moved.ID = id.New(credential.IDPrefix, st.now.Add(time.Second))
	if _, err := svc.Open(moved); err == nil {
		t.Error("a sealed key opened under another id")
	}

	// Recheck reports a rejected key as invalid health, not an error.
	rc, err := svc.Recheck(ctx, st, who, c.ID)
	if err != nil || rc.Health != credential.Valid {
		t.Fatalf("recheck = %+v, %v", rc, err)
	}
	snap, err := svc.RecordBalance(ctx, st, rc)
	if err != nil || snap.Credits != 42 || snap.ExtraCredits != 1 {
		t.Fatalf("balance = %+v, %v", snap, err)
	}
	p.BalanceFunc = func(generation.Credential) (generation.Balance, error) {
		return generation.Balance{}, fault.E("fake", fault.ProviderCredentialInvalid, "")
	}
	svc2 := newService(t, p, false)
	// The keyring is derived from the same master, so svc2 opens svc's seals.
	rc, err = svc2.Recheck(ctx, st, who, c.ID)
	if err != nil || rc.Health != credential.Invalid {
		t.Fatalf("recheck of a rejected key = %+v, %v", rc, err)
	}
	if _, err := svc2.RecordBalance(ctx, st, rc); !fault.Is(err, fault.ProviderCredentialInvalid) {
		t.Fatalf("balance of a rejected key: %v", err)
	}
	other := *who
	other.WorkspaceID = "ws_2"
	if _, err := svc.Recheck(ctx, st, &other, c.ID); !fault.Is(err, fault.NotFound) {
		t.Fatalf("recheck from another workspace: %v", err)
	}
}

// observed is an ObservationReader with a fixed list.
type observed []credential.Observation

func (o observed) ProviderObservations(_ context.Context, env access.Environment) ([]credential.Observation, error) {
	var out []credential.Observation
	for _, x := range o {
		if x.Environment == env {
			out = append(out, x)
		}
	}
	return out, nil
}

// TestCatalogReportsObservationsOnly: a configured route carries the
// newest observation of its environment, never one of the other
// environment, and an unconfigured route none.
func TestCatalogReportsObservationsOnly(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := observed{
		{Provider: generation.ProviderB, Environment: access.Live, Reach: credential.ReachAvailable, ObservedAt: at},
		{Provider: generation.ProviderA, Environment: access.Test, Reach: credential.ReachAvailable, ObservedAt: at},
	}
	svc := newService(t, provider{id: generation.ProviderB}, false)
	ps, err := svc.Catalog(context.Background(), obs, &access.Principal{Environment: access.Test})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Observed != nil || ps[1].Observed != nil {
		t.Fatalf("test catalog = %+v", ps)
	}
	obs = append(obs, credential.Observation{Provider: generation.ProviderB, Environment: access.Test, Reach: credential.ReachUnreachable,
		Code: fault.ProviderUnavailable, ObservedAt: at})
	ps, _ = svc.Catalog(context.Background(), obs, &access.Principal{Environment: access.Test})
	if o := ps[1].Observed; o == nil || o.Reach != credential.ReachUnreachable || !o.ObservedAt.Equal(at) {
		t.Fatalf("B = %+v", ps[1])
	}
}

func TestReachOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want credential.Reach
	}{
		{nil, credential.ReachAvailable},
		{fault.E("x", fault.ProviderCredentialInvalid, ""), credential.ReachAvailable},
		{fault.E("x", fault.RateLimited, ""), credential.ReachAvailable},
		{fault.E("x", fault.ProviderCreditsExhausted, ""), credential.ReachAvailable},
		{fault.E("x", fault.ProviderUnavailable, ""), credential.ReachUnreachable},
		{fault.E("x", fault.ProviderTimeout, ""), credential.ReachUnreachable},
		{context.DeadlineExceeded, credential.ReachUnreachable},
		{errors.New("connection reset"), credential.ReachUnreachable},
	} {
		if got := credential.ReachOf(c.err); got != c.want {
			t.Errorf("ReachOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
