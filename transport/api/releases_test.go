package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/release"
)

// TestReleaseDocumentFollowsTheTable: every status enum the document
// shows for releases is the table's statuses, the permission enum holds
// every permission a move needs, and the served transitions are the
// table's rows with their permissions.
func TestReleaseDocumentFollowsTheTable(t *testing.T) {
	var statuses []string
	for _, s := range release.Statuses() {
		statuses = append(statuses, string(s))
	}
	for _, f := range []struct {
		typ   reflect.Type
		field string
	}{{reflect.TypeFor[ReleaseView](), "Status"}, {reflect.TypeFor[ReleaseStatusRequest](), "Status"},
		{reflect.TypeFor[ReleaseMoveView](), "From"}, {reflect.TypeFor[ReleaseMoveView](), "Event"}, {reflect.TypeFor[ReleaseMoveView](), "To"}} {
		sf, _ := f.typ.FieldByName(f.field)
		if got := strings.Split(sf.Tag.Get("enum"), ","); !slices.Equal(got, statuses) {
			t.Errorf("%s.%s enum %v, want %v", f.typ.Name(), f.field, got, statuses)
		}
	}
	sf, _ := reflect.TypeFor[ReleaseMoveView]().FieldByName("Permission")
	perms := strings.Split(sf.Tag.Get("enum"), ",")
	served := ReleaseTransitions()
	moves := release.Moves()
	if len(served) != len(moves) {
		t.Fatalf("%d transitions served, %d in the table", len(served), len(moves))
	}
	for i, m := range moves {
		want := ReleaseMoveView{From: string(m.From), Event: string(m.Event), To: string(m.To), Permission: string(release.MovePermission(m.To))}
		if served[i] != want {
			t.Errorf("transition %d: served %+v, table %+v", i, served[i], want)
		}
		if !slices.Contains(perms, want.Permission) {
			t.Errorf("permission %s missing from the enum %v", want.Permission, perms)
		}
	}
	for _, rt := range releaseRoutes(release.New()) {
		if rt.Method == "POST" && rt.Permission != access.ProjectUpdate {
			t.Errorf("%s needs %s, want project.update before the move's own", rt.OperationID, rt.Permission)
		}
	}
}
