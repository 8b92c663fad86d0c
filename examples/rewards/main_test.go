package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadChainMap: the command finds the cluster and the reward treasury
// in the services map the host saves, and says what is missing when the
// host runs no cluster or a cluster without a treasury.
func TestReadChainMap(t *testing.T) {
	for _, tc := range []struct {
		name, services, want, err string
	}{
		{"treasury", `{"simulators":[{"name":"stripe","url":"http://127.0.0.1:1"},{"name":"solana","url":"http://127.0.0.1:2",
			"chain":{"rewards":{"treasury":"3P4hra8KhuXbxgqRt1wzTmixeaajhnE9bCENb4K8GhUm"}}}]}`, "http://127.0.0.1:2 3P4hra8KhuXbxgqRt1wzTmixeaajhnE9bCENb4K8GhUm", ""},
		{"no treasury", `{"simulators":[{"name":"solana","url":"http://127.0.0.1:2","chain":{}}]}`, "", "no reward treasury"},
		{"no cluster", `{"simulators":[]}`, "", "-chain-sim=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.WriteFile(filepath.Join(data, "services.json"), []byte(tc.services), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := readChainMap(data)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || m.RPC+" "+m.Treasury != tc.want {
				t.Fatalf("map = %+v (%v), want %s", m, err, tc.want)
			}
		})
	}
	if _, err := readChainMap(t.TempDir()); err == nil || !strings.Contains(err.Error(), "start the host first") {
		t.Fatalf("no map: %v", err)
	}
}
