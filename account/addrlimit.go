package account

import (
	"errors"
	"sync"
	"time"

	"github.com/creatormusic/platform/fault"
)

// AddressRate is the request rate each client address may send to the
// unauthenticated account routes (signup, verification, login, password
// reset, handoff exchange), enforced in memory per host before any other
// work: a token bucket of Burst tokens refilled at PerMinute.
type AddressRate struct {
	// Burst is how many requests an address may send at once. Zero means 30.
	Burst int
	// PerMinute is the sustained rate. Zero means 30 a minute.
	PerMinute int
}

// maxTrackedAddresses bounds the address limiter's memory: beyond it, the
// buckets of addresses idle long enough to be full again are forgotten
// first, then arbitrary ones.
const maxTrackedAddresses = 100_000

// addressLimiter is a per-address token bucket. It is safe for concurrent
// use.
type addressLimiter struct {
	burst float64
	rate  float64 // tokens a second

	mu        sync.Mutex
	buckets   map[string]*tokenBucket
	lastSweep time.Time
}

type tokenBucket struct {
	tokens float64
	last   time.Time
}

func newAddressLimiter(r AddressRate) (*addressLimiter, AddressRate, error) {
	if r.Burst == 0 {
		r.Burst = 30
	}
	if r.PerMinute == 0 {
		r.PerMinute = 30
	}
	if r.Burst < 0 || r.PerMinute < 0 {
		return nil, r, errors.New("account: Config.AddressRate values must not be negative")
	}
	return &addressLimiter{burst: float64(r.Burst), rate: float64(r.PerMinute) / 60, buckets: map[string]*tokenBucket{}}, r, nil
}

// admit takes a token of key at now, or reports how long until one is
// there.
func (l *addressLimiter) admit(key string, now time.Time) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxTrackedAddresses || now.Sub(l.lastSweep) > time.Minute {
			l.sweep(now)
		}
		b = &tokenBucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(l.burst, b.tokens+el.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	if l.rate == 0 {
		return time.Hour, false
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
}

// sweep forgets full buckets (an address seen again starts full anyway)
// and, if the map is still at its bound, arbitrary ones.
func (l *addressLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxTrackedAddresses {
			break
		}
		delete(l.buckets, k)
	}
}

// AdmitAddress takes one request of the client address ip at now from the
// per-address rate of the unauthenticated account routes (Config.AddressRate,
// keyed by AddressKey). RATE_LIMITED (details.limit authRequestsPerAddress,
// details.retryAfter in seconds) when the address is over it. Routes call
// it before any other work, so a refused request costs no hashing.
func (s *Service) AdmitAddress(ip string, now time.Time) error {
	wait, ok := s.addrs.admit(AddressKey(ip), now)
	if ok {
		return nil
	}
	return fault.E("account.AdmitAddress", fault.RateLimited, "Too many requests from this address; try again later.").
		With("limit", "authRequestsPerAddress").With("retryAfter", ceilSeconds(wait))
}
