package x402

import (
	"strings"
	"testing"

	"github.com/creatormusic/platform/access"
)

func TestMemoBindsWorkspaceEnvironmentAndResource(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	sc := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	m := issueMemo(key, sc, "sound-analysis")
	if len(m) > MaxMemoBytes || !strings.HasPrefix(m, "x402:sound-analysis:") {
		t.Fatalf("memo %q", m)
	}
	if again := issueMemo(key, sc, "sound-analysis"); again == m {
		t.Fatal("two requirements got the same memo: two purchases would be one transaction")
	}
	if id, ok := memoResource(key, sc, m); !ok || id != "sound-analysis" {
		t.Fatalf("memoResource = %q, %v", id, ok)
	}
	for name, other := range map[string]access.Scope{
		"another tenant":      {TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test},
		"another workspace":   {TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
		"another environment": {TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live},
	} {
		if _, ok := memoResource(key, other, m); ok {
			t.Errorf("the memo verifies for %s", name)
		}
	}
	if _, ok := memoResource([]byte(strings.Repeat("o", 32)), sc, m); ok {
		t.Error("the memo verifies under another key")
	}
	forged := strings.Replace(m, "sound-analysis", "stem-split", 1)
	if _, ok := memoResource(key, sc, forged); ok {
		t.Error("a memo naming another resource verifies")
	}
	for _, bad := range []string{"", "x402:", "memo", "x402:a:b:c", m + ":x"} {
		if _, ok := memoResource(key, sc, bad); ok {
			t.Errorf("%q verifies", bad)
		}
	}
}
