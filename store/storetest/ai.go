package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAI covers ai.Store: a model round-trips whole (capabilities,
// decimal prices, flags) and is confined to its environment; a second
// insert of an id is CONFLICT; an update is a compare-and-set on the
// version; a health record round-trips with its NULL times and latency,
// is inserted once and updated by compare-and-set; and concurrent
// observations of one model through the service are all counted.
func exerciseAI(t *testing.T, open Opener) {
	ctx := context.Background()
	model := func(env access.Environment, id string) ai.RegistryModel {
		return ai.RegistryModel{Environment: env, ID: id, ProviderID: "openai", Upstream: "gpt-4o-mini-2024-07-18",
			Capabilities: []ai.Capability{ai.CapChat, ai.CapJSONOutput, ai.CapStreaming}, ContextWindow: 128000,
			Privacy: ai.PrivacyNoRetention, InputPrice: "0.00000015", OutputPrice: "0.0000006", Enabled: true, Version: 1,
			CreatedAt: Epoch, UpdatedAt: Epoch, UpdatedBy: ai.Publisher}
	}

	t.Run("Models", func(t *testing.T) {
		db, _ := fresh(t, open)
		b := model(access.Live, "b-model")
		a := model(access.Live, "a-model")
		a.Retired, a.AdminChanged, a.Enabled = true, true, false
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, m := range []ai.RegistryModel{b, a, model(access.Test, "a-model")} {
				if err := tx.AIModelInsert(ctx, m); err != nil {
					return err
				}
			}
			if err := tx.AIModelInsert(ctx, b); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("second insert of an id: %v, want CONFLICT", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().AIModelList(ctx, access.Live)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]ai.RegistryModel{a, b}, got); diff != "" {
			t.Errorf("live list (-stored +read):\n%s", diff)
		}
		if _, err := db.Read().AIModelGet(ctx, access.Test, "b-model"); !fault.Is(err, fault.NotFound) {
			t.Errorf("a live model read from test: %v", err)
		}
		next := b
		next.InputPrice, next.Enabled, next.Version, next.UpdatedAt, next.UpdatedBy = "0.000001", false, 2, Epoch.Add(time.Hour), "user:usr_1"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AIModelUpdate(ctx, next) }); err != nil {
			t.Fatal(err)
		}
		stale := b
		stale.Version = 2 // from the read before next
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AIModelUpdate(ctx, stale) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("a stale update: %v, want CONFLICT", err)
		}
		read, err := db.Read().AIModelGet(ctx, access.Live, "b-model")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(next, read); diff != "" {
			t.Errorf("after the update (-written +read):\n%s", diff)
		}
		if test, _ := db.Read().AIModelGet(ctx, access.Test, "a-model"); test.Retired || test.Version != 1 {
			t.Errorf("the test model changed with the live one: %+v", test)
		}
	})

	t.Run("Health", func(t *testing.T) {
		db, _ := fresh(t, open)
		if _, err := db.Read().AIHealthGet(ctx, access.Live, "m"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("a model never observed: %v", err)
		}
		p := ai.HealthPolicy{Threshold: 2, Cooldown: time.Minute}
		h1 := ai.Observe(ai.Health{Environment: access.Live, ModelID: "m"}, ai.Observation{Outcome: ai.OutcomeServer, At: Epoch}, p)
		put := func(h ai.Health) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.AIHealthPut(ctx, h) })
		}
		if err := put(h1); err != nil {
			t.Fatal(err)
		}
		if err := put(h1); !fault.Is(err, fault.Conflict) {
			t.Fatalf("a second first record: %v, want CONFLICT", err)
		}
		got, err := db.Read().AIHealthGet(ctx, access.Live, "m")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h1, got); diff != "" || !got.LastSuccessAt.IsZero() || got.LatencyObservations != 0 {
			t.Errorf("first record (-written +read):\n%s", diff)
		}
		h2 := ai.Observe(h1, ai.Observation{Outcome: ai.OutcomeRateLimit, At: Epoch.Add(time.Second)}, p)
		h3 := ai.Observe(h2, ai.Observation{Outcome: ai.OutcomeSuccess, At: Epoch.Add(2 * time.Second), Latency: 420 * time.Millisecond}, p)
		if err := put(h2); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Read().AIHealthGet(ctx, access.Live, "m"); !got.CooldownUntil.Equal(Epoch.Add(time.Minute+time.Second)) || got.CooldownCause != ai.OutcomeRateLimit {
			t.Fatalf("cooling record: %+v", got)
		}
		if err := put(h3); err != nil {
			t.Fatal(err)
		}
		if err := put(h3); !fault.Is(err, fault.Conflict) {
			t.Fatalf("a stale write: %v, want CONFLICT", err)
		}
		hs, err := db.Read().AIHealthList(ctx, access.Live)
		if err != nil || len(hs) != 1 {
			t.Fatalf("list = %+v, %v", hs, err)
		}
		if diff := cmp.Diff(h3, hs[0]); diff != "" {
			t.Errorf("after a success (-written +read):\n%s", diff)
		}
		if hs, _ := db.Read().AIHealthList(ctx, access.Test); len(hs) != 0 {
			t.Errorf("the test environment sees %d live records", len(hs))
		}
	})

	t.Run("ConcurrentSeeds", func(t *testing.T) {
		db, _ := fresh(t, open)
		cfg := ai.Config{Environments: map[access.Environment]ai.Environment{access.Live: {
			Providers: []ai.ProviderConfig{{ID: "openai", Kind: ai.KindOpenAICompatible, DisplayName: "OpenAI", BaseURL: "https://api.openai.com/v1", KeyRef: "k"}},
		}}}
		e := cfg.Environments[access.Live]
		for _, id := range []string{"a", "b", "c"} {
			e.Models = append(e.Models, ai.ModelConfig{ID: id, ProviderID: "openai", Upstream: id, Capabilities: []ai.Capability{ai.CapChat},
				ContextWindow: 1000, Privacy: ai.PrivacyStandard, InputPrice: "0.000001", OutputPrice: "0.000002"})
		}
		cfg.Environments[access.Live] = e
		svc, err := ai.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Hosts starting together seed at once; every one succeeds.
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- svc.Seed(ctx, ai.RunFunc(store.Runner[ai.Store](db)), access.Live)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("a concurrent seed: %v", err)
			}
		}
		ms, err := db.Read().AIModelList(ctx, access.Live)
		if err != nil || len(ms) != 3 || ms[0].Version != 1 || ms[2].Version != 1 {
			t.Fatalf("after concurrent seeds: %+v, %v", ms, err)
		}
	})

	t.Run("ConcurrentObservationsAllCount", func(t *testing.T) {
		db, _ := fresh(t, open)
		svc, err := ai.New(ai.Config{})
		if err != nil {
			t.Fatal(err)
		}
		const writers, each = 4, 2
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					o := ai.Observation{Model: "m", Outcome: ai.OutcomeServer, At: Epoch.Add(time.Duration(w*each+i) * time.Millisecond)}
					errs <- db.InTx(ctx, func(tx *store.Tx) error { _, err := svc.RecordOutcome(ctx, tx, access.Live, o); return err })
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		h, err := db.Read().AIHealthGet(ctx, access.Live, "m")
		if err != nil || h.Failures != writers*each || h.ConsecutiveFailures != writers*each || h.Version != writers*each {
			t.Fatalf("after %d concurrent failures: %+v, %v", writers*each, h, err)
		}
	})
}
