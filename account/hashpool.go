package account

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/creatormusic/platform/fault"
)

// Hash pool defaults.
const (
	// DefaultHashMemoryBudget is the memory the running password hashes may
	// take together when neither HashPoolConfig.MemoryBudget nor GOMEMLIMIT
	// says otherwise: 256 MiB, four hashes of DefaultPasswordParams.
	DefaultHashMemoryBudget = 256 << 20
	// DefaultHashWait is how long a hash waits for a free slot before its
	// request is refused.
	DefaultHashWait = time.Second
	// HashRetryAfter is the Retry-After, in seconds, of a request refused
	// because every slot stayed busy.
	HashRetryAfter = 1
)

// HashPoolConfig sizes a HashPool. Zero values take the documented defaults.
type HashPoolConfig struct {
	// Slots is how many hashes may run at once. Zero sizes the pool to the
	// machine: max(1, min(GOMAXPROCS, MemoryBudget / the memory of one
	// hash)).
	Slots int
	// MemoryBudget is the memory, in bytes, the running hashes may take
	// together, used when Slots is zero. Zero means a quarter of the Go
	// runtime's memory limit (GOMEMLIMIT) when one is set, else
	// DefaultHashMemoryBudget.
	MemoryBudget int64
	// Wait is how long a hash waits for a free slot before its request is
	// refused. Zero means DefaultHashWait (1 second).
	Wait time.Duration
}

// HashPool bounds how many argon2id computations run at once. Each takes
// its parameters' memory (64 MiB by default) for its duration, so an
// unbounded number of concurrent logins would take the host's memory with
// them; with a pool the hashing holds at most Slots times that, plus what
// the garbage collector has not reclaimed yet. A caller waits up to Wait
// for a free slot and is then refused with RATE_LIMITED and a Retry-After
// of HashRetryAfter seconds: like a key's concurrency limit (also
// RATE_LIMITED), the answer tells a client to come back shortly, and a
// login refused this way is not counted as a failure. It is safe for
// concurrent use; one pool may serve several services (hosts in one
// process) that should share one budget.
type HashPool struct {
	slots chan struct{}
	wait  time.Duration

	mu       sync.Mutex
	inUse    int
	peak     int
	acquired int64
	refused  int64
}

// HashPoolStats describe a pool's use since it was made.
type HashPoolStats struct {
	// Slots is the pool's size.
	Slots int
	// InUse is how many hashes run now.
	InUse int
	// Peak is the most hashes that ever ran at once.
	Peak int
	// Acquired counts the hashes that got a slot.
	Acquired int64
	// Refused counts the hashes refused because no slot freed in time.
	Refused int64
}

// NewHashPool returns a pool sized by cfg for hashes with params (zero
// value: DefaultPasswordParams).
func NewHashPool(cfg HashPoolConfig, params PasswordParams) (*HashPool, error) {
	if cfg.Slots < 0 || cfg.MemoryBudget < 0 || cfg.Wait < 0 {
		return nil, fmt.Errorf("account: HashPoolConfig values must not be negative: %+v", cfg)
	}
	if params == (PasswordParams{}) {
		params = DefaultPasswordParams()
	}
	if cfg.Slots == 0 {
		cfg.Slots = poolSlots(cfg.MemoryBudget, params.MemoryKiB)
	}
	if cfg.Wait == 0 {
		cfg.Wait = DefaultHashWait
	}
	return &HashPool{slots: make(chan struct{}, cfg.Slots), wait: cfg.Wait}, nil
}

// poolSlots sizes a pool to the machine.
func poolSlots(budget int64, memoryKiB uint32) int {
	if budget == 0 {
		budget = DefaultHashMemoryBudget
		if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
			budget = limit / 4
		}
	}
	perHash := max(int64(memoryKiB)*1024, 1)
	return int(max(1, min(int64(runtime.GOMAXPROCS(0)), budget/perHash)))
}

// Acquire takes a slot for one hash, waiting up to the pool's Wait, and
// returns its release (idempotent). When no slot frees in time it answers
// RATE_LIMITED with details.limit "passwordHashing" and details.retryAfter
// HashRetryAfter; when ctx ends first, ctx's error.
func (p *HashPool) Acquire(ctx context.Context) (release func(), err error) {
	const op = "account.HashPool"
	select {
	case p.slots <- struct{}{}:
	default:
		t := time.NewTimer(p.wait)
		defer t.Stop()
		select {
		case p.slots <- struct{}{}:
		case <-t.C:
			p.mu.Lock()
			p.refused++
			p.mu.Unlock()
			return nil, fault.E(op, fault.RateLimited, "The service is busy signing other people in; try again in a moment.").
				With("limit", "passwordHashing").With("retryAfter", HashRetryAfter)
		case <-ctx.Done():
			return nil, fault.Wrap(op, ctx.Err())
		}
	}
	p.mu.Lock()
	p.inUse++
	p.acquired++
	p.peak = max(p.peak, p.inUse)
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.inUse--
			p.mu.Unlock()
			<-p.slots
		})
	}, nil
}

// Stats returns the pool's size and use.
func (p *HashPool) Stats() HashPoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return HashPoolStats{Slots: cap(p.slots), InUse: p.inUse, Peak: p.peak, Acquired: p.acquired, Refused: p.refused}
}
