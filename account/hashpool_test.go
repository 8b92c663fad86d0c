package account

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/fault"
)

func TestHashPoolSizedToTheMachine(t *testing.T) {
	procs := int64(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		budget int64
		kib    uint32
		want   int
	}{
		{256 << 20, 64 << 10, int(min(procs, 4))},
		{1 << 20, 64 << 10, 1}, // a budget below one hash still hashes, one at a time
		{1 << 40, 64, int(procs)},
	} {
		if got := poolSlots(c.budget, c.kib); got != c.want {
			t.Errorf("poolSlots(%d, %d KiB) = %d, want %d", c.budget, c.kib, got, c.want)
		}
	}
	p, err := NewHashPool(HashPoolConfig{}, PasswordParams{})
	if err != nil || p.Stats().Slots != int(min(procs, 4)) || p.wait != DefaultHashWait {
		t.Fatalf("default pool = %+v, %v", p.Stats(), err)
	}
	for _, bad := range []HashPoolConfig{{Slots: -1}, {MemoryBudget: -1}, {Wait: -time.Second}} {
		if _, err := NewHashPool(bad, cheap); err == nil {
			t.Errorf("NewHashPool(%+v) succeeded", bad)
		}
	}
}

// TestHashPoolRefusesWhenFull fills the pool: the next hash waits its Wait
// and is refused with RATE_LIMITED and a Retry-After, without hashing; a
// freed slot serves the next one.
func TestHashPoolRefusesWhenFull(t *testing.T) {
	pool, err := NewHashPool(HashPoolConfig{Slots: 2, Wait: 20 * time.Millisecond}, cheap)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := NewPasswords(cheap, pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r1, err1 := pool.Acquire(ctx)
	r2, err2 := pool.Acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	_, err = pw.Verify(ctx, "", "a guess at a password")
	code, _, details := fault.Public(err)
	if code != fault.RateLimited || details["limit"] != "passwordHashing" || details["retryAfter"] != HashRetryAfter {
		t.Fatalf("full pool: %v %v", code, details)
	}
	if _, err := pw.Hash(ctx, "a new password here"); !fault.Is(err, fault.RateLimited) {
		t.Fatalf("Hash on a full pool: %v", err)
	}
	if st := pool.Stats(); st.InUse != 2 || st.Peak != 2 || st.Acquired != 2 || st.Refused != 2 {
		t.Fatalf("stats = %+v", st)
	}
	r1()
	r1() // a second release frees nothing more
	if _, err := pw.Hash(ctx, "a new password here"); err != nil {
		t.Fatalf("Hash after a release: %v", err)
	}
	if st := pool.Stats(); st.InUse != 1 || st.Acquired != 3 {
		t.Fatalf("stats after release = %+v", st)
	}
	r2()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	r3, _ := pool.Acquire(ctx)
	r4, _ := pool.Acquire(ctx)
	if _, err := pool.Acquire(cancelled); err == nil || fault.Is(err, fault.RateLimited) {
		t.Fatalf("Acquire with an ended context: %v", err)
	}
	r3()
	r4()
}

// TestHashPoolBoundsConcurrentHashes runs 40 hashes at once through a pool
// of 2: never more than 2 run together, and each either hashed or was
// refused.
func TestHashPoolBoundsConcurrentHashes(t *testing.T) {
	params := PasswordParams{Time: 1, MemoryKiB: 1024, Threads: 1}
	pool, err := NewHashPool(HashPoolConfig{Slots: 2, Wait: 5 * time.Millisecond}, params)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := NewPasswords(params, pool)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := pw.Verify(context.Background(), "", "wrong guess!")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case fault.Is(err, fault.RateLimited):
				refused++
			default:
				t.Errorf("Verify: %v", err)
			}
		}()
	}
	wg.Wait()
	st := pool.Stats()
	t.Logf("40 concurrent verifications through 2 slots: %d hashed, %d refused, peak %d", ok, refused, st.Peak)
	if st.Peak < 1 || st.Peak > 2 || st.InUse != 0 || int(st.Acquired) != ok || int(st.Refused) != refused || ok+refused != 40 {
		t.Fatalf("stats = %+v (hashed %d, refused %d)", st, ok, refused)
	}
}
