package platform

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/account/filemail"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store/storetest"
)

// platformKinds builds a platform on a fresh SQLite database, its pool
// stopped, and returns the job kinds it runs, each in the class its pool
// runs it in.
func platformKinds(t *testing.T) []jobs.Kind {
	t.Helper()
	ctx, dir := context.Background(), t.TempDir()
	mailer, err := filemail.New(filepath.Join(dir, "mail"), "no-reply@acme.example", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, Config{Store: storetest.OpenSQLite(t, nil), SecretKey: []byte("example-master-secret-of-32-bytes!!"),
		BlobDir: filepath.Join(dir, "blobs"), Mailer: mailer, Jobs: JobsConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h := func(context.Context, jobs.Job) error { return nil }
	var kinds []jobs.Kind
	for _, c := range p.pool.Classes() {
		for _, k := range c.Kinds {
			kinds = append(kinds, jobs.Kind{Name: k, Class: c.Name, HandlerFunc: h})
		}
	}
	return kinds
}

// TestJobClassesRefuseUnclassedKind: a kind without a class stops New;
// budgets default per class, Workers scales the classes that set none, and
// the audio class carries its per-workspace limit and runs sound
// operations only.
func TestJobClassesRefuseUnclassedKind(t *testing.T) {
	kinds := platformKinds(t)
	// The kinds stored rows carry, byte for byte, each in its class.
	want := map[string]string{
		"billing.renewal": "money", "billing.apply_event": "money", "billing.provider_cancel": "money",
		"plan.monthly_grant": "money", "plan.schedule_grants": "money", "token.verify": "money", "token.verify.schedule": "money",
		"swap.registry.verify": "money", "swap.registry.verify.schedule": "money", "swap.watch": "money", "swap.reconcile": "money", "swap.expire": "money",
		"cctp.verify": "money", "cctp.verify.schedule": "money",
		"intent.relay": "money", "intent.watch": "money", "intent.reconcile": "money", "intent.sweep": "money",
		"x402.watch": "money", "x402.check": "money", "ai.operation.expire": "money",
		"generation.dispatch": "provider", "generation.poll": "provider", "generation.ingest": "provider",
		"generation.reconcile": "provider", "generation.expire": "provider", "generation.ambiguous": "provider", "submission.probe": "outbound",
		"sound.run": "audio", "sound.expire": "maintenance", "idempotency.prune": "maintenance", "assets.clean_staging": "maintenance",
		"leaderboard.snapshot": "maintenance",
		"webhook.deliver":      "outbound", "webhook.fanout": "maintenance",
	}
	got := map[string]string{}
	for _, k := range kinds {
		got[k.Name] = k.Class
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the platform's job kinds and classes (-want +got):\n%s", diff)
	}
	mystery := jobs.Kind{Name: "mystery.kind", HandlerFunc: func(context.Context, jobs.Job) error { return nil }}
	if _, err := jobClasses(append(kinds, mystery), JobsConfig{}); err == nil || !strings.Contains(err.Error(), `"mystery.kind"`) {
		t.Fatalf("jobClasses with an unclassed kind = %v, want an error naming it", err)
	}

	budgets := func(cfg JobsConfig) map[string]jobs.Class {
		t.Helper()
		cs, err := jobClasses(kinds, cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]jobs.Class{}
		n := 0
		for _, c := range cs {
			out[c.Name] = c
			n += len(c.Kinds)
		}
		if n != len(kinds) {
			t.Fatalf("classes hold %d kinds, want %d", n, len(kinds))
		}
		return out
	}
	d := budgets(JobsConfig{})
	if d[jobs.ClassMoney].Workers != 2 || d[jobs.ClassProvider].Workers != 4 || d[jobs.ClassAudio].Workers != 2 ||
		d[jobs.ClassAudio].GroupLimit != 1 || d[jobs.ClassMaintenance].Workers != 2 || d[jobs.ClassMoney].GroupLimit != 0 ||
		d[jobs.ClassOutbound].Workers != 2 || d[jobs.ClassOutbound].GroupLimit != 1 {
		t.Fatalf("default classes = %+v", d)
	}
	if a := d[jobs.ClassAudio]; len(a.Kinds) != 1 || a.Kinds[0] != sound.JobRun {
		t.Fatalf("audio kinds = %v, want only %s", a.Kinds, sound.JobRun)
	}
	c := budgets(JobsConfig{Workers: 8, AudioWorkers: 3, AudioPerWorkspace: 2})
	if c[jobs.ClassMoney].Workers != 8 || c[jobs.ClassProvider].Workers != 8 || c[jobs.ClassAudio].Workers != 3 ||
		c[jobs.ClassAudio].GroupLimit != 2 || c[jobs.ClassMaintenance].Workers != 8 || c[jobs.ClassOutbound].Workers != 8 {
		t.Fatalf("configured classes = %+v", c)
	}
	if _, err := jobClasses(kinds, JobsConfig{AudioWorkers: -1}); err == nil {
		t.Fatal("a negative budget was accepted")
	}
}
