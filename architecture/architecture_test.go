package architecture_test

import (
	"testing"

	"github.com/creatormusic/platform/architecture"
	"github.com/creatormusic/platform/fsm"
)

func TestNewRefusesInconsistentModels(t *testing.T) {
	var ctxs []architecture.Context
	for _, f := range architecture.Facts() {
		ctxs = append(ctxs, architecture.Context{Package: f.Domain, Kind: architecture.KindContext})
	}
	seen := map[string]bool{}
	uniq := ctxs[:0]
	for _, c := range ctxs {
		if !seen[c.Package] {
			seen[c.Package] = true
			uniq = append(uniq, c)
		}
	}
	door := architecture.NewMachine("project.door", "project", "door", "project.Moves", []fsm.Row[string, string]{{From: "shut", Event: "open", To: "open"}})
	if m, err := architecture.New(uniq, []architecture.Machine{door}); err != nil || m.Version != "v2.1" {
		t.Fatalf("a consistent model: %v", err)
	}
	if got := door.States; len(got) != 2 || got[0] != "shut" || got[1] != "open" {
		t.Errorf("states = %v", got)
	}
	for name, tc := range map[string]struct {
		ctxs     []architecture.Context
		machines []architecture.Machine
	}{
		"a context twice":        {append(uniq, uniq[0]), nil},
		"a machine twice":        {uniq, []architecture.Machine{door, door}},
		"a machine without rows": {uniq, []architecture.Machine{{Name: "x", Domain: "project"}}},
		"an unknown domain":      {uniq, []architecture.Machine{architecture.NewMachine("x.y", "x", "y", "x.Moves", []fsm.Row[string, string]{{From: "a", Event: "b", To: "c"}})}},
		"a fact's domain absent": {uniq[1:], nil},
	} {
		if _, err := architecture.New(tc.ctxs, tc.machines); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestGate(t *testing.T) {
	for name, tc := range map[string]struct {
		flagged, on bool
		in          architecture.Availability
		enabled     bool
		reason      string
	}{
		"flag off beats a live deployment": {true, false, architecture.Availability{Enabled: true, Configured: true}, false, "disabled_by_flag"},
		"enabled by its owner":             {true, true, architecture.Availability{Enabled: true, Configured: true}, true, "enabled"},
		"the owner's reason is kept":       {false, false, architecture.Availability{Reason: "deployment_not_verified"}, false, "deployment_not_verified"},
		"no reason is not_configured":      {false, false, architecture.Availability{}, false, "not_configured"},
		"a claimed reason is not enabling": {false, false, architecture.Availability{Reason: "enabled"}, false, "not_configured"},
	} {
		got := architecture.Gate(tc.flagged, tc.on, tc.in)
		if got.Enabled != tc.enabled || got.Reason != tc.reason {
			t.Errorf("%s: %+v", name, got)
		}
	}
}
