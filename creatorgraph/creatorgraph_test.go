package creatorgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// listCall is one derived or declared list the fake answered.
type listCall struct {
	kind   string
	env    access.Environment
	userID string
	viewer Viewer
	limit  int
}

// fakeStore is an in-memory Store: creators, canned derived relations,
// declared rows keyed by (env, from, kind, to), and the outbox.
type fakeStore struct {
	now      time.Time
	ids      int
	creators map[string]bool
	collabs  []Relation
	remixes  []Relation
	rows     map[string]Declared
	events   []outbox.Event
	calls    []listCall
	// insertRace, when set, is a row another declaration commits just
	// before RelationInsert: the insert then conflicts.
	insertRace *Declared
	err        error
}

func newFake() *fakeStore {
	return &fakeStore{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), creators: map[string]bool{}, rows: map[string]Declared{}}
}

func rowKey(env access.Environment, from string, k Kind, to string) string {
	return string(env) + "/" + from + "/" + string(k) + "/" + to
}

func (f *fakeStore) CreatorExists(_ context.Context, userID string) (bool, error) {
	return f.creators[userID], f.err
}

func (f *fakeStore) GraphCollaborations(_ context.Context, env access.Environment, userID string, v Viewer, limit int) ([]Relation, error) {
	f.calls = append(f.calls, listCall{"collaborations", env, userID, v, limit})
	return head(f.collabs, limit), f.err
}

func (f *fakeStore) GraphRemixes(_ context.Context, env access.Environment, userID string, v Viewer, limit int) ([]Relation, error) {
	f.calls = append(f.calls, listCall{"remixes", env, userID, v, limit})
	return head(f.remixes, limit), f.err
}

func (f *fakeStore) GraphDeclared(_ context.Context, env access.Environment, userID string, limit int) ([]Declared, error) {
	f.calls = append(f.calls, listCall{"declared", env, userID, Viewer{}, limit})
	var out []Declared
	for _, d := range f.rows {
		if d.Scope.Environment == env && d.State == StateActive && (d.FromUserID == userID || d.ToUserID == userID) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Declared) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return head(out, limit), f.err
}

func head[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (f *fakeStore) OutboxInsert(_ context.Context, e outbox.Event) (outbox.Event, error) {
	f.events = append(f.events, e)
	return e, nil
}

func (f *fakeStore) Now() time.Time { return f.now }

func (f *fakeStore) NewID(prefix string) string {
	f.ids++
	return fmt.Sprintf("%s%03d", prefix, f.ids)
}

func (f *fakeStore) RelationGet(_ context.Context, env access.Environment, from string, k Kind, to string) (Declared, error) {
	d, ok := f.rows[rowKey(env, from, k, to)]
	if !ok {
		return Declared{}, fault.E("fake.RelationGet", fault.NotFound, "")
	}
	return d, nil
}

func (f *fakeStore) RelationCountActive(_ context.Context, env access.Environment, from string) (int, error) {
	n := 0
	for _, d := range f.rows {
		if d.Scope.Environment == env && d.FromUserID == from && d.State == StateActive {
			n++
		}
	}
	return n, nil
}

func (f *fakeStore) RelationInsert(_ context.Context, d Declared) error {
	if f.insertRace != nil {
		won := *f.insertRace
		f.rows[rowKey(won.Scope.Environment, won.FromUserID, won.Kind, won.ToUserID)] = won
		f.insertRace = nil
	}
	k := rowKey(d.Scope.Environment, d.FromUserID, d.Kind, d.ToUserID)
	if _, ok := f.rows[k]; ok {
		return fault.E("fake.RelationInsert", fault.Conflict, "")
	}
	f.rows[k] = d
	return nil
}

func (f *fakeStore) RelationUpdate(_ context.Context, d Declared) error {
	k := rowKey(d.Scope.Environment, d.FromUserID, d.Kind, d.ToUserID)
	cur, ok := f.rows[k]
	if !ok || cur.Version != d.Version-1 {
		return fault.E("fake.RelationUpdate", fault.Conflict, "")
	}
	f.rows[k] = d
	return nil
}

var _ Store = (*fakeStore)(nil)

// authority is an active membership of user in ten_user/ws_user with
// roles.
func authority(user string, roles ...access.Role) *access.Authority {
	return &access.Authority{TenantID: "ten_" + user, WorkspaceID: "ws_" + user, UserID: user, MembershipStatus: access.MembershipActive,
		Roles: roles}
}

// viewerOf is a VIEWER's authority: project.read across the workspace.
func viewerOf(user string) *access.Authority { return authority(user, access.RoleViewer) }

// session is a signed-in user of ten_X/ws_X in env.
func session(user string, env access.Environment) *access.Principal {
	return &access.Principal{Kind: access.CredentialSession, TenantID: "ten_" + user, WorkspaceID: "ws_" + user, Environment: env,
		UserID: user, SessionID: "ses_" + user}
}

func collab(other, projectID string, public bool) Relation {
	return Relation{Kind: KindCollaborated, Direction: Mutual, OtherUserID: other,
		Source: Source{ProjectID: projectID, SubmissionID: "sbm_mine_" + projectID, OtherSubmissionID: "sbm_" + other, Public: public}}
}

func remix(dir Direction, other, assetID string, public bool) Relation {
	return Relation{Kind: KindRemixed, Direction: dir, OtherUserID: other,
		Source: Source{AssetID: assetID, ParentAssetID: "ast_parent_" + assetID, Public: public}}
}

// TestGetAssemblesTheGraph: collaborations, then remixes, then declared
// relations, each read in the caller's environment for the named creator
// with the caller's workspace as the viewer; a declared relation points
// outgoing when the creator declared it and incoming when another did,
// its source the declaration, always public.
func TestGetAssemblesTheGraph(t *testing.T) {
	ctx := context.Background()
	st := newFake()
	st.creators["usr_c"] = true
	st.collabs = []Relation{collab("usr_a", "prj_2", true), collab("usr_b", "prj_1", false)}
	st.remixes = []Relation{remix(Outgoing, "usr_a", "ast_2", true), remix(Incoming, "usr_d", "ast_1", true)}
	t0 := st.now
	st.rows[rowKey(access.Live, "usr_c", KindFollows, "usr_a")] = Declared{ID: "crl_out", Scope: access.Scope{Environment: access.Live},
		FromUserID: "usr_c", ToUserID: "usr_a", Kind: KindFollows, State: StateActive, Version: 1, DeclaredAt: t0, UpdatedAt: t0.Add(time.Minute)}
	st.rows[rowKey(access.Live, "usr_e", KindFollows, "usr_c")] = Declared{ID: "crl_in", Scope: access.Scope{Environment: access.Live},
		FromUserID: "usr_e", ToUserID: "usr_c", Kind: KindFollows, State: StateActive, Version: 3, DeclaredAt: t0, UpdatedAt: t0}
	st.rows[rowKey(access.Test, "usr_c", KindFollows, "usr_e")] = Declared{ID: "crl_test", Scope: access.Scope{Environment: access.Test},
		FromUserID: "usr_c", ToUserID: "usr_e", Kind: KindFollows, State: StateActive, Version: 1, DeclaredAt: t0, UpdatedAt: t0}

	p := session("usr_r", access.Live)
	g, err := New().Get(ctx, st, p, viewerOf("usr_r"), "usr_c")
	if err != nil {
		t.Fatal(err)
	}
	if g.CreatorID != "usr_c" || g.Environment != access.Live || g.Truncated {
		t.Errorf("graph %+v", g)
	}
	var got []string
	for _, r := range g.Relations {
		got = append(got, fmt.Sprintf("%s %s %s %v", r.Kind, r.Direction, r.OtherUserID, r.Source.Public))
	}
	want := []string{
		"collaborated mutual usr_a true", "collaborated mutual usr_b false",
		"remixed outgoing usr_a true", "remixed incoming usr_d true",
		"follows outgoing usr_a true", "follows incoming usr_e true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("relations\n got %v\nwant %v", got, want)
	}
	if s := g.Relations[4].Source; !s.Declared || s.RelationID != "crl_out" || !s.DeclaredAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("the outgoing follow's source: %+v", s)
	}
	if s := g.Relations[5].Source; !s.Declared || s.RelationID != "crl_in" {
		t.Errorf("the incoming follow's source: %+v", s)
	}
	v := Viewer{TenantID: "ten_usr_r", WorkspaceID: "ws_usr_r"}
	for _, c := range st.calls {
		if c.env != access.Live || c.userID != "usr_c" || c.limit != MaxPerKind+1 || (c.kind != "declared" && c.viewer != v) {
			t.Errorf("store call %+v", c)
		}
	}
	if len(st.calls) != 3 {
		t.Errorf("%d store calls, want 3", len(st.calls))
	}
}

// TestGetViewerIsWhatTheCallerReads: the viewer is the caller's tenant
// and workspace; a caller whose project.read is narrower than the
// workspace (a MEMBER: assigned projects; a DEVELOPER: its own; a
// suspended member or none: nothing) is a reader of its own and assigned
// projects only, as the project list reads it; an explicit deny of
// project.read narrows alike.
func TestGetViewerIsWhatTheCallerReads(t *testing.T) {
	ctx := context.Background()
	denied := authority("usr_r", access.RoleViewer)
	denied.Denies = []access.Permission{access.ProjectRead}
	suspended := authority("usr_r", access.RoleOwner)
	suspended.MembershipStatus = access.MembershipSuspended
	for name, c := range map[string]struct {
		a      *access.Authority
		reader string
	}{
		"an owner":          {authority("usr_r", access.RoleOwner), ""},
		"a viewer":          {viewerOf("usr_r"), ""},
		"a creator":         {authority("usr_r", access.RoleCreator), ""},
		"a member":          {authority("usr_r", access.RoleMember), "usr_r"},
		"a developer":       {authority("usr_r", access.RoleDeveloper), "usr_r"},
		"a denied viewer":   {denied, "usr_r"},
		"a suspended owner": {suspended, "usr_r"},
		"no authority":      {nil, "usr_r"},
	} {
		st := newFake()
		st.creators["usr_c"] = true
		if _, err := New().Get(ctx, st, session("usr_r", access.Live), c.a, "usr_c"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := Viewer{TenantID: "ten_usr_r", WorkspaceID: "ws_usr_r", ReaderUserID: c.reader}
		for _, call := range st.calls {
			if call.kind != "declared" && call.viewer != want {
				t.Errorf("%s: %s read as %+v, want %+v", name, call.kind, call.viewer, want)
			}
		}
	}
}

// TestGetWhoIsACreator: a user without a wallet link is NOT_FOUND to
// others, but its own graph reads (empty); an anonymous principal or a
// principal without a user is UNAUTHENTICATED, before any read.
func TestGetWhoIsACreator(t *testing.T) {
	ctx := context.Background()
	st := newFake()
	if _, err := New().Get(ctx, st, session("usr_r", access.Live), viewerOf("usr_r"), "usr_nobody"); !fault.Is(err, fault.NotFound) {
		t.Errorf("a user with no wallet: %v", err)
	}
	if len(st.calls) != 0 {
		t.Errorf("a refused read listed relations: %+v", st.calls)
	}
	g, err := New().Get(ctx, st, session("usr_nobody", access.Test), nil, "usr_nobody")
	if err != nil || g.Relations == nil || len(g.Relations) != 0 || g.Environment != access.Test {
		t.Errorf("one's own graph without a wallet: %+v, %v", g, err)
	}
	st.calls = nil
	for _, p := range []*access.Principal{nil, {Kind: access.CredentialAPIKey, TenantID: "ten_k", KeyID: "key_k", Environment: access.Live}} {
		if _, err := New().Get(ctx, st, p, nil, "usr_c"); !fault.Is(err, fault.Unauthenticated) {
			t.Errorf("principal %+v: %v", p, err)
		}
	}
	if len(st.calls) != 0 {
		t.Errorf("an unauthenticated read listed relations: %+v", st.calls)
	}
	st.err = errors.New("replica gone")
	if _, err := New().Get(ctx, st, session("usr_r", access.Live), viewerOf("usr_r"), "usr_r"); !fault.Is(err, fault.Internal) {
		t.Errorf("a store failure: %v", err)
	}
}

// TestGetBoundsEachKind: each kind answers at most MaxPerKind relations
// (the store is asked for one more, to know whether more exist) and
// Truncated says when one kind had more; exactly MaxPerKind is not
// truncated.
func TestGetBoundsEachKind(t *testing.T) {
	ctx := context.Background()
	many := func(n int, mk func(i int) Relation) []Relation {
		var out []Relation
		for i := range n {
			out = append(out, mk(i))
		}
		return out
	}
	for _, c := range []struct {
		name             string
		collabs, remixes int
		truncated        bool
	}{
		{"both at the bound", MaxPerKind, MaxPerKind, false},
		{"collaborations past it", MaxPerKind + 5, 3, true},
		{"remixes past it", 0, MaxPerKind + 1, true},
	} {
		st := newFake()
		st.creators["usr_c"] = true
		st.collabs = many(c.collabs, func(i int) Relation { return collab(fmt.Sprintf("usr_%03d", i), "prj_1", true) })
		st.remixes = many(c.remixes, func(i int) Relation { return remix(Outgoing, "usr_a", fmt.Sprintf("ast_%03d", i), true) })
		g, err := New().Get(ctx, st, session("usr_r", access.Live), viewerOf("usr_r"), "usr_c")
		if err != nil {
			t.Fatal(err)
		}
		counts := map[Kind]int{}
		for _, r := range g.Relations {
			counts[r.Kind]++
		}
		wantC, wantR := min(c.collabs, MaxPerKind), min(c.remixes, MaxPerKind)
		if counts[KindCollaborated] != wantC || counts[KindRemixed] != wantR || g.Truncated != c.truncated {
			t.Errorf("%s: %v, truncated %v", c.name, counts, g.Truncated)
		}
		// The newest records are kept: the store's first ones.
		if wantC > 0 && g.Relations[0].OtherUserID != "usr_000" {
			t.Errorf("%s: the first collaboration is with %s", c.name, g.Relations[0].OtherUserID)
		}
	}

	// Declared relations are bounded alike.
	st := newFake()
	st.creators["usr_c"] = true
	for i := range MaxPerKind + 2 {
		from := fmt.Sprintf("usr_f%03d", i)
		st.rows[rowKey(access.Live, from, KindFollows, "usr_c")] = Declared{ID: fmt.Sprintf("crl_%03d", i),
			Scope: access.Scope{Environment: access.Live}, FromUserID: from, ToUserID: "usr_c", Kind: KindFollows, State: StateActive,
			Version: 1, DeclaredAt: st.now, UpdatedAt: st.now.Add(time.Duration(i) * time.Second)}
	}
	g, err := New().Get(ctx, st, session("usr_r", access.Live), viewerOf("usr_r"), "usr_c")
	if err != nil || len(g.Relations) != MaxPerKind || !g.Truncated || g.Relations[0].OtherUserID != fmt.Sprintf("usr_f%03d", MaxPerKind+1) {
		t.Errorf("declared past the bound: %d relations, truncated %v, %v", len(g.Relations), g.Truncated, err)
	}
}

// payload decodes an event's payload.
func payload(t *testing.T, e outbox.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeclareAboutOneself: the declaring user is always the principal's
// in its own scope; a new follow is created (version 1, one
// creator_relation.declared event in the principal's scope); declaring it
// again changes nothing and writes nothing; withdrawing raises the
// version and writes creator_relation.removed; declaring again makes it
// active with the same id.
func TestDeclareAboutOneself(t *testing.T) {
	ctx := context.Background()
	st := newFake()
	st.creators["usr_t"] = true
	p := session("usr_me", access.Live)
	s := New()
	in := Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateActive}

	d, created, err := s.Declare(ctx, st, p, in)
	if err != nil || !created {
		t.Fatalf("declare: %+v %v %v", d, created, err)
	}
	if d.FromUserID != "usr_me" || d.ToUserID != "usr_t" || d.Scope != p.Scope() || d.State != StateActive || d.Version != 1 ||
		d.ID[:len(IDPrefix)] != IDPrefix || !d.DeclaredAt.Equal(st.now) || !d.UpdatedAt.Equal(st.now) {
		t.Errorf("declared %+v", d)
	}
	if len(st.events) != 1 {
		t.Fatalf("%d events", len(st.events))
	}
	e := st.events[0]
	m := payload(t, e)
	if e.Type != "creator_relation.declared" || e.AggregateID != d.ID || e.AggregateVersion != 1 || e.TenantID != p.TenantID ||
		e.WorkspaceID != p.WorkspaceID || e.Environment != "live" || m["fromUserId"] != "usr_me" || m["toUserId"] != "usr_t" ||
		m["state"] != "active" || m["kind"] != "follows" {
		t.Errorf("event %+v %v", e, m)
	}

	// The same state again: nothing changes.
	st.now = st.now.Add(time.Hour)
	again, created, err := s.Declare(ctx, st, p, in)
	if err != nil || created || again != d || len(st.events) != 1 {
		t.Errorf("declared again: %+v %v %v, %d events", again, created, err, len(st.events))
	}

	// Withdraw, twice, then declare again.
	in.State = StateRemoved
	w, created, err := s.Declare(ctx, st, p, in)
	if err != nil || created || w.ID != d.ID || w.State != StateRemoved || w.Version != 2 || !w.UpdatedAt.Equal(st.now) ||
		!w.DeclaredAt.Equal(d.DeclaredAt) || len(st.events) != 2 || st.events[1].Type != "creator_relation.removed" ||
		st.events[1].AggregateVersion != 2 {
		t.Errorf("withdrawn: %+v %v %v, events %+v", w, created, err, st.events)
	}
	if _, _, err := s.Declare(ctx, st, p, in); err != nil || len(st.events) != 2 {
		t.Errorf("withdrawn again: %v, %d events", err, len(st.events))
	}
	in.State = StateActive
	back, created, err := s.Declare(ctx, st, p, in)
	if err != nil || created || back.ID != d.ID || back.Version != 3 || back.State != StateActive || len(st.events) != 3 {
		t.Errorf("declared back: %+v %v %v", back, created, err)
	}

	// The same follow in the other environment is another relation.
	tp := session("usr_me", access.Test)
	other, created, err := s.Declare(ctx, st, tp, in)
	if err != nil || !created || other.ID == d.ID || other.Scope.Environment != access.Test {
		t.Errorf("in test: %+v %v %v", other, created, err)
	}
}

// TestDeclareRefusals: a bad declaration, oneself, a target that is no
// creator, withdrawing what was never declared and a principal without a
// user are refused with their codes, and none writes a row or an event.
func TestDeclareRefusals(t *testing.T) {
	ctx := context.Background()
	st := newFake()
	st.creators["usr_t"], st.creators["usr_me"] = true, true
	p := session("usr_me", access.Live)
	for name, c := range map[string]struct {
		p     *access.Principal
		in    Declaration
		code  fault.Code
		field string
	}{
		"no target":       {p, Declaration{Kind: KindFollows, State: StateActive}, fault.InvalidInput, "creatorId"},
		"a derived kind":  {p, Declaration{TargetID: "usr_t", Kind: KindCollaborated, State: StateActive}, fault.InvalidInput, "kind"},
		"a remix":         {p, Declaration{TargetID: "usr_t", Kind: KindRemixed, State: StateActive}, fault.InvalidInput, "kind"},
		"no state":        {p, Declaration{TargetID: "usr_t", Kind: KindFollows}, fault.InvalidInput, "state"},
		"following self":  {p, Declaration{TargetID: "usr_me", Kind: KindFollows, State: StateActive}, fault.InvalidInput, "creatorId"},
		"no creator":      {p, Declaration{TargetID: "usr_x", Kind: KindFollows, State: StateActive}, fault.NotFound, ""},
		"never declared":  {p, Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateRemoved}, fault.NotFound, ""},
		"no principal":    {nil, Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateActive}, fault.Unauthenticated, ""},
		"a key of no one": {&access.Principal{Kind: access.CredentialAPIKey, KeyID: "key_1", Environment: access.Live}, Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateActive}, fault.Unauthenticated, ""},
	} {
		_, _, err := New().Declare(ctx, st, c.p, c.in)
		var fe *fault.Error
		if !fault.Is(err, c.code) || (c.field != "" && (!errors.As(err, &fe) || fe.Details["field"] != c.field)) {
			t.Errorf("%s: %v, want %s %s", name, err, c.code, c.field)
		}
	}
	if len(st.rows) != 0 || len(st.events) != 0 {
		t.Errorf("refusals wrote %d rows, %d events", len(st.rows), len(st.events))
	}
}

// TestDeclareBound: a creator holds at most MaxActiveDeclared active
// relations per environment: past it CONFLICT with details.limit and
// nothing written; withdrawing stays possible at the bound and frees a
// place; the other environment has its own count.
func TestDeclareBound(t *testing.T) {
	ctx := context.Background()
	st := newFake()
	p := session("usr_me", access.Live)
	for i := range MaxActiveDeclared {
		to := fmt.Sprintf("usr_%04d", i)
		st.creators[to] = true
		st.rows[rowKey(access.Live, "usr_me", KindFollows, to)] = Declared{ID: fmt.Sprintf("crl_%04d", i),
			Scope: p.Scope(), FromUserID: "usr_me", ToUserID: to, Kind: KindFollows, State: StateActive, Version: 1}
	}
	st.creators["usr_new"] = true
	_, _, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_new", Kind: KindFollows, State: StateActive})
	var fe *fault.Error
	if !fault.Is(err, fault.Conflict) || !errors.As(err, &fe) || fe.Details["limit"] != MaxActiveDeclared {
		t.Fatalf("past the bound: %v", err)
	}
	if len(st.rows) != MaxActiveDeclared || len(st.events) != 0 {
		t.Fatalf("past the bound wrote: %d rows, %d events", len(st.rows), len(st.events))
	}
	// Declaring one already active at the bound changes nothing, and is
	// no error.
	if _, created, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_0001", Kind: KindFollows, State: StateActive}); err != nil || created {
		t.Errorf("an active one again at the bound: %v %v", created, err)
	}
	if _, _, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_0000", Kind: KindFollows, State: StateRemoved}); err != nil {
		t.Fatalf("withdraw at the bound: %v", err)
	}
	if _, created, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_new", Kind: KindFollows, State: StateActive}); err != nil || !created {
		t.Errorf("after a withdrawal: %v %v", created, err)
	}
	// Re-activating the withdrawn one is past the bound again.
	if _, _, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_0000", Kind: KindFollows, State: StateActive}); !fault.Is(err, fault.Conflict) {
		t.Errorf("re-activating past the bound: %v", err)
	}
	// The test environment counts its own.
	if _, created, err := New().Declare(ctx, st, session("usr_me", access.Test), Declaration{TargetID: "usr_new", Kind: KindFollows,
		State: StateActive}); err != nil || !created {
		t.Errorf("in test: %v %v", created, err)
	}
}

// TestDeclareConcurrentInsert: a declaration that loses the insert to a
// concurrent one of the same state converges on the winner's row and
// writes no second event; one of another state is a CONFLICT.
func TestDeclareConcurrentInsert(t *testing.T) {
	ctx := context.Background()
	p := session("usr_me", access.Live)
	won := Declared{ID: "crl_won", Scope: p.Scope(), FromUserID: "usr_me", ToUserID: "usr_t", Kind: KindFollows, State: StateActive, Version: 1}

	st := newFake()
	st.creators["usr_t"] = true
	st.insertRace = &won
	d, created, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateActive})
	if err != nil || created || d.ID != "crl_won" || len(st.events) != 0 {
		t.Errorf("lost race, same state: %+v %v %v, %d events", d, created, err, len(st.events))
	}

	st = newFake()
	st.creators["usr_t"] = true
	lost := won
	lost.State = StateRemoved
	st.insertRace = &lost
	if _, _, err := New().Declare(ctx, st, p, Declaration{TargetID: "usr_t", Kind: KindFollows, State: StateActive}); !fault.Is(err, fault.Conflict) {
		t.Errorf("lost race, other state: %v", err)
	}
	if len(st.events) != 0 {
		t.Errorf("a lost race wrote %d events", len(st.events))
	}
}

// TestDeclaredRelationDirection: a declaration seen from its target is
// incoming from the declarer; from the declarer, outgoing to the target.
func TestDeclaredRelationDirection(t *testing.T) {
	d := Declared{ID: "crl_1", FromUserID: "usr_a", ToUserID: "usr_b", Kind: KindFollows, State: StateActive}
	if r := declaredRelation("usr_a", d); r.Direction != Outgoing || r.OtherUserID != "usr_b" || !r.Source.Public {
		t.Errorf("from the declarer: %+v", r)
	}
	if r := declaredRelation("usr_b", d); r.Direction != Incoming || r.OtherUserID != "usr_a" || !r.Source.Public {
		t.Errorf("from the target: %+v", r)
	}
	if EventType(StateActive) != "creator_relation.declared" || EventType(StateRemoved) != "creator_relation.removed" {
		t.Error("event types")
	}
	if !slices.Equal(DeclaredKinds(), []Kind{KindFollows}) {
		t.Errorf("declared kinds %v", DeclaredKinds())
	}
}
