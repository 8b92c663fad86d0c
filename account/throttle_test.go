package account

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// attempt runs one reservation on c at now and, when admitted, keeps its
// counters as a failure.
func attempt(p ThrottlePolicy, c *[3]Throttle, now time.Time) (refusedFor time.Duration, admitted bool) {
	out, until := p.reserve(now, *c)
	if !until.IsZero() {
		return until.Sub(now), false
	}
	*c = out
	return 0, true
}

// TestThrottlePairBacksOffExponentially: five failures of one account
// from one address, then a lock that doubles with each further failure up
// to its bound; a quiet window restarts the count.
func TestThrottlePairBacksOffExponentially(t *testing.T) {
	p := DefaultThrottlePolicy()
	var c [3]Throttle
	now := t0
	for i := range 5 {
		if _, ok := attempt(p, &c, now); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	for _, want := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, time.Hour, time.Hour} {
		wait, ok := attempt(p, &c, now)
		if ok || wait != want {
			t.Fatalf("after %d failures: admitted %v, refused for %s; want refused for %s", c[0].Failures, ok, wait, want)
		}
		now = now.Add(wait)
		if _, ok := attempt(p, &c, now); !ok {
			t.Fatalf("refused when the lock of %s ended", want)
		}
	}
	// Quiet for the window after the last lock ended: a fresh start.
	now = c[0].LockedUntil.Add(p.Window + time.Second)
	if _, ok := attempt(p, &c, now); !ok || c[0].Failures != 1 || c[0].LockedUntil != nil {
		t.Fatalf("after a quiet window: %+v", c[0])
	}
	// Failures spread wider than the window never lock.
	var d [3]Throttle
	for i := range 12 {
		if _, ok := attempt(p, &d, t0.Add(time.Duration(i)*4*time.Minute)); !ok {
			t.Fatalf("spread failure %d refused: %+v", i, d[0])
		}
	}
}

// TestThrottleAccountLockSparesFreshAddresses: failures from many
// addresses lock the account for the addresses that failed, not for one
// that never did, which signs in.
func TestThrottleAccountLockSparesFreshAddresses(t *testing.T) {
	p := DefaultThrottlePolicy()
	var acct Throttle
	now := t0
	for i := range p.Account.MaxFailures {
		c := [3]Throttle{{}, {}, acct}
		if _, ok := attempt(p, &c, now); !ok {
			t.Fatalf("attacker address %d refused", i)
		}
		acct = c[2]
	}
	if !acct.lockedAt(now) {
		t.Fatalf("account not locked after %d failures: %+v", acct.Failures, acct)
	}
	// An attacker address with a failure on the account waits for the lock.
	failed := Throttle{Failures: 1, WindowStartedAt: now}
	if wait, ok := attempt(p, &[3]Throttle{failed, failed, acct}, now); ok || wait != time.Minute {
		t.Fatalf("failed address under the account lock: admitted %v, wait %s", ok, wait)
	}
	// The owner's address never failed: admitted, and a sign-in clears
	// the pair and gives the attempt back.
	owner := [3]Throttle{{}, {}, acct}
	if _, ok := attempt(p, &owner, now); !ok {
		t.Fatal("the owner's fresh address was refused by the account lock")
	}
	owner = p.settle(now, owner, true)
	if owner[0] != (Throttle{}) || owner[1].Failures != 0 || owner[2].Failures != acct.Failures {
		t.Fatalf("after sign-in: %+v", owner)
	}
}

// TestThrottleAddressLimitCoversEveryAccount: an address spraying many
// accounts is stopped by its own counter.
func TestThrottleAddressLimitCoversEveryAccount(t *testing.T) {
	p := DefaultThrottlePolicy()
	var addr Throttle
	for i := range p.Address.MaxFailures {
		c := [3]Throttle{{}, addr, {}}
		if _, ok := attempt(p, &c, t0); !ok {
			t.Fatalf("account %d refused", i)
		}
		addr = c[1]
	}
	if wait, ok := attempt(p, &[3]Throttle{{}, addr, {}}, t0); ok || wait != time.Minute {
		t.Fatalf("address over its limit: admitted %v, wait %s", ok, wait)
	}
	// A settled attempt the pool never evaluated is no failure.
	c := [3]Throttle{{Failures: 2, WindowStartedAt: t0}, {Failures: 2, WindowStartedAt: t0}, {Failures: 2, WindowStartedAt: t0}}
	for _, got := range p.settle(t0, c, false) {
		if got.Failures != 1 {
			t.Fatalf("settled = %+v", got)
		}
	}
}

func TestAddressLimiterBucket(t *testing.T) {
	l, r, err := newAddressLimiter(AddressRate{})
	if err != nil || r != (AddressRate{Burst: 30, PerMinute: 30}) {
		t.Fatalf("defaults %+v, %v", r, err)
	}
	for i := range 30 {
		if _, ok := l.admit("10.0.0.1", t0); !ok {
			t.Fatalf("request %d refused within the burst", i)
		}
	}
	if wait, ok := l.admit("10.0.0.1", t0); ok || wait != 2*time.Second {
		t.Fatalf("over the burst: admitted %v, wait %s", ok, wait)
	}
	if _, ok := l.admit("10.0.0.2", t0); !ok {
		t.Fatal("another address refused")
	}
	if _, ok := l.admit("10.0.0.1", t0.Add(2*time.Second)); !ok {
		t.Fatal("refused after a token refilled")
	}
	// Idle full buckets are forgotten.
	l.sweep(t0.Add(time.Hour))
	if len(l.buckets) != 0 {
		t.Fatalf("%d buckets after an idle hour", len(l.buckets))
	}
}

func TestAddressKey(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3":                "10.1.2.3",
		"::ffff:10.1.2.3":         "10.1.2.3",
		"2001:db8:1:2:3:4:5:6":    "2001:db8:1:2::/64",
		"2001:db8:1:2::9%eth0":    "2001:db8:1:2::/64",
		"not an address":          "not an address",
		"2001:db8:1:3:ffff::ffff": "2001:db8:1:3::/64",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}
