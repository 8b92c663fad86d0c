package transport

import (
	"net/http/httptest"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// TestPageOfVersionsWalksAndRejectsForgedCursors pages a version history
// newest first with an opaque cursor and refuses a cursor it did not give.
func TestPageOfVersionsWalksAndRejectsForgedCursors(t *testing.T) {
	versions := []int{5, 4, 3, 2, 1}
	list := func(before, n int) ([]int, error) {
		var out []int
		for _, v := range versions {
			if (before == 0 || v < before) && len(out) < n {
				out = append(out, v)
			}
		}
		return out, nil
	}
	call := func(q string) *Call[Tx] { return &Call[Tx]{Request: httptest.NewRequest("GET", "/x?"+q, nil)} }
	var seen []int
	q := "limit=2"
	for i := 0; ; i++ {
		items, more, next, err := PageOfVersions(call(q), list, func(v int) int { return v })
		if err != nil || i > 5 {
			t.Fatalf("page %d: %v", i, err)
		}
		seen = append(seen, items...)
		if !more {
			if next != nil {
				t.Fatal("the last page has a cursor")
			}
			break
		}
		q = "limit=2&cursor=" + *next
	}
	if len(seen) != 5 || seen[0] != 5 || seen[4] != 1 {
		t.Fatalf("walked %v", seen)
	}
	for _, forged := range []string{"3", "Mw", "dmVyc2lvbjow", "!!"} {
		if _, _, _, err := PageOfVersions(call("cursor="+forged), list, func(v int) int { return v }); fault.CodeOf(err) != fault.InvalidInput {
			t.Errorf("cursor %q: %v, want INVALID_INPUT", forged, err)
		}
	}
}
