package operation

import (
	"errors"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
)

// The usable customer routes of a workspace are read once per authority
// version: a request carrying a newer version (a credential changed on
// any host) reads them again, one carrying an older version never
// replaces the newer answer, and a principal without a version always
// reads.
func TestCustomerRoutesFollowTheAuthorityVersion(t *testing.T) {
	c := &customerRoutes{}
	stored := map[generation.ProviderID]credential.Credential{}
	reads := 0
	read := func() (map[generation.ProviderID]credential.Credential, error) {
		reads++
		out := make(map[generation.ProviderID]credential.Credential, len(stored))
		for k, v := range stored {
			out[k] = v
		}
		return out, nil
	}
	p := func(version int64) *access.Principal {
		return &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, AuthzVersion: version}
	}
	const b = generation.ProviderID("MUSIC_PROVIDER_B")
	check := func(what string, pr *access.Principal, wantB bool, wantReads int) {
		t.Helper()
		got, err := c.routes(pr, read)
		if err != nil {
			t.Fatal(err)
		}
		if got[b] != wantB || reads != wantReads {
			t.Errorf("%s: B usable = %v after %d reads, want %v after %d", what, got[b], reads, wantB, wantReads)
		}
	}
	check("first request", p(3), false, 1)
	check("same version", p(3), false, 1)
	stored[b] = credential.Credential{ID: "pcred_1", Provider: b}
	check("a stale request after the change", p(3), false, 1)
	check("the version the change raised", p(4), true, 2)
	check("same new version", p(4), true, 2)
	check("a late request of the old version reads", p(3), true, 3)
	check("the new version is kept", p(4), true, 3)
	check("no version", p(0), true, 4)
	check("no version again", p(0), true, 5)
	other := p(4)
	other.Environment = access.Live
	check("another environment", other, true, 6)

	failing := func() (map[generation.ProviderID]credential.Credential, error) { return nil, errors.New("down") }
	if _, err := c.routes(p(9), failing); err == nil {
		t.Fatal("a failed read returned no error")
	}
	check("after a failed read", p(9), true, 7)
}
