package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/platformtest"
)

// MeasureLoginMemoryEnv names the variable that, set to 1, runs
// TestMeasureLoginMemory. It measures, it asserts nothing: run it alone,
// one subtest per process (the Go runtime's Sys never shrinks), with -v.
const MeasureLoginMemoryEnv = "PLATFORM_MEASURE_LOGIN_MEMORY"

// TestMeasureLoginMemory sends 40 concurrent bad logins with the default
// argon2id parameters (64 MiB a hash) to a platformtest host, from one
// client address or from 40, and prints the heap and memory obtained from
// the OS before and at their peak, sampled every 10 ms.
//
//	PLATFORM_MEASURE_LOGIN_MEMORY=1 go test . -run 'TestMeasureLoginMemory/one_address' -v
func TestMeasureLoginMemory(t *testing.T) {
	if os.Getenv(MeasureLoginMemoryEnv) != "1" {
		t.Skipf("set %s=1 to measure", MeasureLoginMemoryEnv)
	}
	for _, addresses := range []int{1, 40} {
		name := "one_address"
		if addresses > 1 {
			name = fmt.Sprintf("%d_addresses", addresses)
		}
		t.Run(name, func(t *testing.T) { measureLoginMemory(t, addresses) })
	}
}

func measureLoginMemory(t *testing.T, addresses int) {
	s := platformtest.New(t, platformtest.Options{Passwords: account.DefaultPasswordParams(), TrustProxy: true})
	s.Signup("victim@example.test", authPassword, "Victim")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var peakHeap, peakSys atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peakHeap.Load() {
				peakHeap.Store(m.HeapInuse)
			}
			if m.Sys > peakSys.Load() {
				peakSys.Store(m.Sys)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	const n = 40
	statuses := make([]int, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ip := fmt.Sprintf("10.9.%d.%d", (i%addresses)/250, (i%addresses)%250+1)
			statuses[i] = s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
				Header: map[string]string{"X-Forwarded-For": ip},
				Body:   map[string]string{"email": "victim@example.test", "password": fmt.Sprintf("wrong guess %02d!", i)}}).Status
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	byStatus := map[int]int{}
	for _, st := range statuses {
		byStatus[st]++
	}
	const mib = 1 << 20
	fmt.Printf("40 concurrent bad logins from %d address(es), argon2id %+v, GOMAXPROCS %d: answers %v in %s\n",
		addresses, account.DefaultPasswordParams(), runtime.GOMAXPROCS(0), byStatus, elapsed.Round(time.Millisecond))
	fmt.Printf("  HeapInuse before %d MiB, peak %d MiB; Sys before %d MiB, peak %d MiB\n",
		before.HeapInuse/mib, peakHeap.Load()/mib, before.Sys/mib, peakSys.Load()/mib)
}
