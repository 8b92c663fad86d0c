package discover

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/project"
)

// call is one store call the fake saw.
type call struct {
	method string
	env    access.Environment
	q      Query
}

// fakeStore answers each list with its items, in the order it holds
// them, and records every call.
type fakeStore struct {
	items map[Kind][]Item
	err   error
	calls []call
}

func (f *fakeStore) list(method string, k Kind, env access.Environment, q Query) ([]Item, error) {
	f.calls = append(f.calls, call{method, env, q})
	if f.err != nil {
		return nil, f.err
	}
	out := f.items[k]
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (f *fakeStore) DiscoverProjects(_ context.Context, env access.Environment, q Query) ([]Item, error) {
	return f.list("projects", KindProject, env, q)
}

func (f *fakeStore) DiscoverTracks(_ context.Context, env access.Environment, q Query) ([]Item, error) {
	return f.list("tracks", KindTrack, env, q)
}

func (f *fakeStore) DiscoverCreators(_ context.Context, env access.Environment, q Query) ([]Item, error) {
	return f.list("creators", KindCreator, env, q)
}

func score(n int64) *int64 { return &n }

func ids(items []Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestListReadsTheCallersEnvironment: each kind is read from its own list
// in the caller's environment, whatever tenant or credential asks, with
// the query (type, position, limit) handed on unchanged, and answered in
// the store's ranked order.
func TestListReadsTheCallersEnvironment(t *testing.T) {
	ctx := context.Background()
	st := &fakeStore{items: map[Kind][]Item{
		KindProject: {{Kind: KindProject, ID: "prj_b", Score: score(3)}, {Kind: KindProject, ID: "prj_a", Score: score(3)}},
		KindTrack:   {{Kind: KindTrack, ID: "sbm_2"}, {Kind: KindTrack, ID: "sbm_1"}},
		KindCreator: {{Kind: KindCreator, ID: "usr_1", Score: score(1)}},
	}}
	after := &Position{Score: 4, ID: "prj_z"}
	for _, c := range []struct {
		p      *access.Principal
		q      Query
		method string
		want   []string
	}{
		{&access.Principal{Kind: access.CredentialSession, TenantID: "ten_1", UserID: "usr_1", Environment: access.Live},
			Query{Kind: KindProject, Type: "single", After: after, Limit: 21}, "projects", []string{"prj_b", "prj_a"}},
		{&access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_2", KeyID: "key_2", Environment: access.Test},
			Query{Kind: KindTrack, Type: "remix", Limit: 1}, "tracks", []string{"sbm_2"}},
		{&access.Principal{Kind: access.CredentialSession, TenantID: "ten_3", UserID: "usr_3", Environment: access.Test},
			Query{Kind: KindCreator, Limit: 5}, "creators", []string{"usr_1"}},
	} {
		st.calls = nil
		got, err := New().List(ctx, st, c.p, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q.Kind, err)
		}
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("%s: %v, want %v", c.q.Kind, ids(got), c.want)
		}
		if len(st.calls) != 1 || st.calls[0].method != c.method || st.calls[0].env != c.p.Environment || st.calls[0].q != c.q {
			t.Errorf("%s: store calls %+v", c.q.Kind, st.calls)
		}
	}
}

// TestListRefusesBeforeReading: no principal is UNAUTHENTICATED, an
// unknown kind or a type the kind does not take is INVALID_INPUT naming
// the field, and none of them reads the store.
func TestListRefusesBeforeReading(t *testing.T) {
	ctx := context.Background()
	st := &fakeStore{}
	p := &access.Principal{Kind: access.CredentialSession, UserID: "usr_1", Environment: access.Live}
	if _, err := New().List(ctx, st, nil, Query{Kind: KindProject, Limit: 1}); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("no principal: %v", err)
	}
	for _, c := range []struct {
		q     Query
		field string
	}{
		{Query{Kind: "playlist"}, "kind"},
		{Query{}, "kind"},
		{Query{Kind: KindProject, Type: "audio"}, "type"},
		{Query{Kind: KindProject, Type: "Single"}, "type"},
		{Query{Kind: KindTrack, Type: "artwork"}, "type"},
		{Query{Kind: KindTrack, Type: "single"}, "type"},
		{Query{Kind: KindCreator, Type: "single"}, "type"},
	} {
		c.q.Limit = 10
		_, err := New().List(ctx, st, p, c.q)
		var fe *fault.Error
		if !fault.Is(err, fault.InvalidInput) || !errors.As(err, &fe) || fe.Details["field"] != c.field {
			t.Errorf("%+v: %v, want INVALID_INPUT on %s", c.q, err, c.field)
		}
	}
	if len(st.calls) != 0 {
		t.Errorf("refused queries read the store: %+v", st.calls)
	}
}

// TestQueryTypes: every project type filters projects; only audio and
// remix filter tracks; creators take none; "" keeps all of any kind.
func TestQueryTypes(t *testing.T) {
	for _, typ := range project.Types() {
		if err := (Query{Kind: KindProject, Type: string(typ)}).Validate(); err != nil {
			t.Errorf("project type %s: %v", typ, err)
		}
	}
	for _, typ := range []string{"audio", "remix"} {
		if err := (Query{Kind: KindTrack, Type: typ}).Validate(); err != nil {
			t.Errorf("track type %s: %v", typ, err)
		}
	}
	for _, k := range Kinds() {
		if err := (Query{Kind: k}).Validate(); err != nil {
			t.Errorf("%s without a type: %v", k, err)
		}
	}
}

// TestWhatIsPublic: the documented sets: a discoverable project is OPEN,
// IN_PRODUCTION, REVIEW or COMPLETED, never DRAFT or ARCHIVED; a track is
// an audio or remix submission, never artwork or another type.
func TestWhatIsPublic(t *testing.T) {
	want := []project.Status{project.StatusOpen, project.StatusInProduction, project.StatusReview, project.StatusCompleted}
	if got := ProjectStatuses(); !slices.Equal(got, want) {
		t.Errorf("project statuses %v, want %v", got, want)
	}
	for _, s := range project.Statuses() {
		if in := slices.Contains(ProjectStatuses(), s); in != slices.Contains(want, s) {
			t.Errorf("status %s discoverable: %v", s, in)
		}
	}
	if got := TrackTypes(); !slices.Equal(got, []project.SubmissionType{"audio", "remix"}) {
		t.Errorf("track types %v", got)
	}
	if got := Kinds(); !slices.Equal(got, []Kind{KindProject, KindTrack, KindCreator}) {
		t.Errorf("kinds %v", got)
	}
}

// TestListStoreFailure: a store failure is answered as an error keeping
// the store's code (uncoded: INTERNAL), never as an empty page.
func TestListStoreFailure(t *testing.T) {
	p := &access.Principal{Kind: access.CredentialSession, UserID: "usr_1", Environment: access.Live}
	for _, c := range []struct {
		err  error
		code fault.Code
	}{
		{errors.New("connection reset"), fault.Internal},
		{fault.E("store.DiscoverProjects", fault.ServiceUnavailable, ""), fault.ServiceUnavailable},
	} {
		items, err := New().List(context.Background(), &fakeStore{err: c.err}, p, Query{Kind: KindProject, Limit: 20})
		if !fault.Is(err, c.code) || items != nil {
			t.Errorf("%v: %v, %v; want %s", c.err, items, err, c.code)
		}
	}
}
