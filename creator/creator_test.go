package creator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creator"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// countingStore is a creator.Store over one link, counting every call.
type countingStore struct {
	calls  int
	link   creator.Creator // the creator behind address
	addr   string
	lookup creator.Lookup // the last lookup
	filter project.Filter // the last list filter
	env    access.Environment
	// contribUser and contribFilter are the last contribution list's.
	contribUser   string
	contribFilter creator.ContributionFilter
}

func (s *countingStore) CreatorByWallet(_ context.Context, q creator.Lookup) (creator.Creator, error) {
	s.calls++
	s.lookup = q
	if q.Address != s.addr || q.Network != wallet.Network {
		return creator.Creator{}, fault.E("fake.CreatorByWallet", fault.NotFound, "")
	}
	return s.link, nil
}

func (s *countingStore) CreatorCounts(_ context.Context, env access.Environment, userID string) (creator.Counts, error) {
	s.calls++
	s.env = env
	if userID != s.link.UserID {
		return creator.Counts{}, nil
	}
	return creator.Counts{PublicProjects: 3, Contributions: 2}, nil
}

func (s *countingStore) ProjectListPublic(_ context.Context, env access.Environment, f project.Filter, _ string, _ int) ([]project.Project, error) {
	s.calls++
	s.env, s.filter = env, f
	return []project.Project{{ID: "prj_1", OwnerUserID: f.CreatorUserID, Visibility: project.VisibilityPublic}}, nil
}

func (s *countingStore) ContributionList(_ context.Context, env access.Environment, userID string, f creator.ContributionFilter, before string, limit int) ([]creator.Contribution, error) {
	s.calls++
	s.env, s.contribUser, s.contribFilter = env, userID, f
	return []creator.Contribution{{Submission: project.Submission{ID: "sbm_1", Submitter: project.Submitter{UserID: userID},
		Status: project.SubmissionAccepted}, ProjectTitle: "Open call"}}, nil
}

// key returns the base58 text of n bytes of value b.
func key(n int, b byte) string {
	return token2022.EncodeBase58([]byte(strings.Repeat(string([]byte{b}), n)))
}

// TestWalletValidatedBeforeAnyStoreCall: a wallet that is not base58 of
// exactly 32 bytes is INVALID_INPUT naming the wallet field, from Get and
// from Projects, and the store is never called.
func TestWalletValidatedBeforeAnyStoreCall(t *testing.T) {
	ctx := context.Background()
	p := &access.Principal{TenantID: "ten_1", UserID: "usr_reader", Environment: access.Test}
	bad := map[string]string{
		"empty":        "",
		"too short":    "abc",
		"non-base58":   "0OIl" + key(32, 7)[4:],
		"31 bytes":     key(31, 9),
		"33 bytes":     key(33, 9),
		"too long":     strings.Repeat("z", 45),
		"with a space": " " + key(32, 9),
	}
	for name, w := range bad {
		st := &countingStore{}
		_, err := creator.New().Get(ctx, st, p, w)
		if code, _, details := fault.Public(err); code != fault.InvalidInput || details["field"] != "wallet" {
			t.Errorf("Get %s (%q): %v, want INVALID_INPUT on field wallet", name, w, err)
		}
		_, err = creator.New().Projects(ctx, st, p, w, project.Filter{}, "", 10)
		if code, _, details := fault.Public(err); code != fault.InvalidInput || details["field"] != "wallet" {
			t.Errorf("Projects %s (%q): %v, want INVALID_INPUT on field wallet", name, w, err)
		}
		_, err = creator.New().Contributions(ctx, st, p, w, creator.ContributionFilter{}, "", 10)
		if code, _, details := fault.Public(err); code != fault.InvalidInput || details["field"] != "wallet" {
			t.Errorf("Contributions %s (%q): %v, want INVALID_INPUT on field wallet", name, w, err)
		}
		if st.calls != 0 {
			t.Errorf("%s: the store was called %d times", name, st.calls)
		}
	}
	// A bad filter is refused before any store call too.
	st := &countingStore{}
	if _, err := creator.New().Projects(ctx, st, p, key(32, 9), project.Filter{Type: "podcast"}, "", 10); !fault.Is(err, fault.InvalidInput) || st.calls != 0 {
		t.Errorf("a bad type: %v after %d store calls, want INVALID_INPUT after none", err, st.calls)
	}
	// A project type is no submission type.
	_, err := creator.New().Contributions(ctx, st, p, key(32, 9), creator.ContributionFilter{Type: "single"}, "", 10)
	if code, _, details := fault.Public(err); code != fault.InvalidInput || details["field"] != "type" || st.calls != 0 {
		t.Errorf("a bad submission type: %v after %d store calls, want INVALID_INPUT on field type after none", err, st.calls)
	}
}

// TestGetAndProjects: a valid wallet is looked up on the Solana network
// for the reader's tenant; an unknown one is NOT_FOUND; the profile
// carries the counts of the reader's environment; the list asks for the
// creator's public projects in the reader's environment whatever filter
// the caller passed for creator or visibility.
func TestGetAndProjects(t *testing.T) {
	ctx := context.Background()
	addr := key(32, 9)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &countingStore{addr: addr, link: creator.Creator{UserID: "usr_alice", DisplayName: "Alice", CreatedAt: at,
		Wallet: creator.Wallet{Address: addr, Network: wallet.Network, VerifiedAt: at}}}
	p := &access.Principal{TenantID: "ten_2", UserID: "usr_bob", Environment: access.Live}

	c, err := creator.New().Get(ctx, st, p, addr)
	if err != nil {
		t.Fatal(err)
	}
	if c.UserID != "usr_alice" || c.Counts.PublicProjects != 3 || st.env != access.Live || st.lookup.ReaderTenantID != "ten_2" {
		t.Errorf("Get = %+v (env %s, lookup %+v)", c, st.env, st.lookup)
	}
	if _, err := creator.New().Get(ctx, st, p, key(32, 8)); !fault.Is(err, fault.NotFound) {
		t.Errorf("an unlinked wallet: %v, want NOT_FOUND", err)
	}

	ps, err := creator.New().Projects(ctx, st, p, addr, project.Filter{CreatorUserID: "usr_mallory", Visibility: "", Status: project.StatusOpen,
		ReaderUserID: "usr_x"}, "", 5)
	if err != nil || len(ps) != 1 {
		t.Fatalf("Projects = %v, %v", ps, err)
	}
	want := project.Filter{CreatorUserID: "usr_alice", Visibility: project.VisibilityPublic, Status: project.StatusOpen}
	if st.filter != want || st.env != access.Live {
		t.Errorf("list filter %+v in %s, want %+v in live", st.filter, st.env, want)
	}
	if _, err := creator.New().Projects(ctx, st, p, key(32, 8), project.Filter{}, "", 5); !fault.Is(err, fault.NotFound) {
		t.Errorf("projects of an unlinked wallet: %v, want NOT_FOUND", err)
	}
	if c.Counts.Contributions != 2 {
		t.Errorf("profile counts %+v, want 2 contributions", c.Counts)
	}
}

// TestContributions: the contributions of a linked wallet are read for
// the creator behind it, in the reader's environment, with the caller's
// type filter; an unlinked wallet is NOT_FOUND before any list is read.
func TestContributions(t *testing.T) {
	ctx := context.Background()
	addr := key(32, 9)
	st := &countingStore{addr: addr, link: creator.Creator{UserID: "usr_alice", Wallet: creator.Wallet{Address: addr, Network: wallet.Network}}}
	p := &access.Principal{TenantID: "ten_2", UserID: "usr_bob", Environment: access.Test}
	cs, err := creator.New().Contributions(ctx, st, p, addr, creator.ContributionFilter{Type: "cover_art"}, "", 5)
	if err != nil || len(cs) != 1 || cs[0].ProjectTitle != "Open call" {
		t.Fatalf("Contributions = %+v, %v", cs, err)
	}
	if st.contribUser != "usr_alice" || st.env != access.Test || st.contribFilter.Type != "cover_art" {
		t.Errorf("listed for %s in %s with %+v, want usr_alice in test with cover_art", st.contribUser, st.env, st.contribFilter)
	}
	st.contribUser = ""
	if _, err := creator.New().Contributions(ctx, st, p, key(32, 8), creator.ContributionFilter{}, "", 5); !fault.Is(err, fault.NotFound) || st.contribUser != "" {
		t.Errorf("contributions of an unlinked wallet: %v (listed for %q), want NOT_FOUND and no list", err, st.contribUser)
	}
	// Anonymous callers are refused before any store call.
	calls := st.calls
	if _, err := creator.New().Contributions(ctx, st, &access.Principal{}, addr, creator.ContributionFilter{}, "", 5); !fault.Is(err, fault.Unauthenticated) || st.calls != calls {
		t.Errorf("an anonymous reader: %v after %d store calls", err, st.calls-calls)
	}
}
