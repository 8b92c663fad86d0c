package store

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScopeSets decodes scope lists through the cache: a kept list comes
// back equal on every call, a caller changing its copy changes no other,
// invalid JSON is an error, and past maxScopeSets lists are decoded
// without being kept.
func TestScopeSets(t *testing.T) {
	var c scopeSets
	raw := `["keys:read","music:generate"]`
	want := []string{"keys:read", "music:generate"}
	first, err := c.decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	first[0] = "changed by the caller"
	for range 2 {
		got, err := c.decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decoded (-want +got):\n%s", diff)
		}
		got[1] = "changed again"
	}
	if _, err := c.decode(`["keys:read"`); err == nil {
		t.Fatal("invalid JSON decoded")
	}
	for i := range maxScopeSets + 10 {
		if _, err := c.decode(fmt.Sprintf(`["s%d"]`, i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.sets); n != maxScopeSets {
		t.Fatalf("%d lists kept, want the bound %d", n, maxScopeSets)
	}
	got, err := c.decode(fmt.Sprintf(`["s%d"]`, maxScopeSets+5))
	if err != nil || !cmp.Equal(got, []string{fmt.Sprintf("s%d", maxScopeSets+5)}) {
		t.Fatalf("a list past the bound: %v, %v", got, err)
	}
}
