package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/store"
)

// exerciseGeneration covers the generation store cases that the end-to-end
// tests cannot pin down: the provider create scheduler's sliding window.
func exerciseGeneration(t *testing.T, open Opener) {
	t.Run("CreateSlotsSlide", func(t *testing.T) {
		db, clock := fresh(t, open)
		ctx := context.Background()
		take := func(account string) (bool, time.Time) {
			t.Helper()
			var ok bool
			var at time.Time
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				ok, at, err = tx.ProviderCreateSlot(ctx, account, 18, 10*time.Second)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok, at
		}
		first := clock.Now()
		for i := range 18 {
			if ok, _ := take("platform:test:A"); !ok {
				t.Fatalf("slot %d refused", i+1)
			}
			clock.Advance(100 * time.Millisecond)
		}
		ok, retry := take("platform:test:A")
		if ok || !retry.Equal(first.Add(10*time.Second)) {
			t.Fatalf("19th slot: ok=%v retryAt=%s, want refused until %s", ok, retry, first.Add(10*time.Second))
		}
		if ok, _ := take("byok:pcred_1"); !ok {
			t.Fatal("another account's slot refused")
		}
		clock.Set(first.Add(10 * time.Second))
		if ok, _ := take("platform:test:A"); !ok {
			t.Fatal("slot refused after the oldest left the window")
		}
		if ok, _ := take("platform:test:A"); ok {
			t.Fatal("a second slot was free after only one left the window")
		}
	})
	t.Run("CreateSlotsConcurrent", func(t *testing.T) {
		db, _ := fresh(t, open)
		ctx := context.Background()
		var granted atomic.Int32
		var wg sync.WaitGroup
		for range 40 {
			wg.Go(func() {
				err := db.InTx(ctx, func(tx *store.Tx) error {
					ok, _, err := tx.ProviderCreateSlot(ctx, "platform:live:B", 18, 10*time.Second)
					if ok {
						granted.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if g := granted.Load(); g != 18 {
			t.Fatalf("granted %d slots to 40 concurrent takers, want 18", g)
		}
	})
}
