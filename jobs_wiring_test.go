package platform

import (
	"context"
	"strings"
	"testing"

	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
)

// TestJobClassesRefuseUnclassedKind: a handler whose kind has no class
// stops New; budgets default per class, Workers scales the classes that set
// none, and the audio class carries its per-workspace limit.
func TestJobClassesRefuseUnclassedKind(t *testing.T) {
	h := func(context.Context, jobs.Job) error { return nil }
	handlers := map[string]jobs.Handler{}
	for kind := range jobClassOf() {
		handlers[kind] = h
	}
	handlers["mystery.kind"] = h
	if _, err := jobClasses(handlers, JobsConfig{}); err == nil || !strings.Contains(err.Error(), `"mystery.kind"`) {
		t.Fatalf("jobClasses with an unclassed kind = %v, want an error naming it", err)
	}
	delete(handlers, "mystery.kind")

	budgets := func(cfg JobsConfig) map[string]jobs.Class {
		t.Helper()
		cs, err := jobClasses(handlers, cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]jobs.Class{}
		n := 0
		for _, c := range cs {
			out[c.Name] = c
			n += len(c.Kinds)
		}
		if n != len(handlers) {
			t.Fatalf("classes hold %d kinds, want %d", n, len(handlers))
		}
		return out
	}
	d := budgets(JobsConfig{})
	if d[jobClassMoney].Workers != 2 || d[jobClassProvider].Workers != 4 || d[jobClassAudio].Workers != 2 ||
		d[jobClassAudio].GroupLimit != 1 || d[jobClassMaintenance].Workers != 2 || d[jobClassMoney].GroupLimit != 0 {
		t.Fatalf("default classes = %+v", d)
	}
	if a := d[jobClassAudio]; len(a.Kinds) != 1 || a.Kinds[0] != sound.JobRun {
		t.Fatalf("audio kinds = %v, want only %s", a.Kinds, sound.JobRun)
	}
	c := budgets(JobsConfig{Workers: 8, AudioWorkers: 3, AudioPerWorkspace: 2})
	if c[jobClassMoney].Workers != 8 || c[jobClassProvider].Workers != 8 || c[jobClassAudio].Workers != 3 ||
		c[jobClassAudio].GroupLimit != 2 || c[jobClassMaintenance].Workers != 8 {
		t.Fatalf("configured classes = %+v", c)
	}
	if _, err := jobClasses(handlers, JobsConfig{AudioWorkers: -1}); err == nil {
		t.Fatal("a negative budget was accepted")
	}
}
