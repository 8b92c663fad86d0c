package account

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/creatormusic/platform/fault"
)

// ThrottleLimit is one failed-login counter's limit within
// ThrottlePolicy.Window.
type ThrottleLimit struct {
	// MaxFailures is the number of failures that starts the backoff: the
	// attempt that reaches it locks the counter for Backoff, and each
	// further failure counted doubles the lock, up to MaxBackoff.
	MaxFailures int
	// Backoff is the first lock.
	Backoff time.Duration
	// MaxBackoff bounds a lock.
	MaxBackoff time.Duration
}

// ThrottlePolicy bounds failed logins with three counters, kept in the
// database so that every host sees them. See the package documentation,
// "Login throttling", for how they combine. Zero fields take the documented
// defaults.
type ThrottlePolicy struct {
	// Window is how long failures add up: a counter whose first failure is
	// older than Window, and whose last lock (if any) ended more than
	// Window ago, starts again from zero. Zero means 15 minutes.
	Window time.Duration
	// Pair limits the failures of one account (by email) from one client
	// address. Zero means 5 failures, then 1 minute doubling up to 1 hour.
	Pair ThrottleLimit
	// Address limits the failures of one client address on any account.
	// Zero means 30 failures, then 1 minute doubling up to 1 hour.
	Address ThrottleLimit
	// Account limits the failures of one account from any address. Zero
	// means 20 failures, then 1 minute doubling up to 1 hour. While it is
	// locked, an address that has not failed on the account within Window
	// may still try, so the lock slows a distributed attack without
	// locking the owner out.
	Account ThrottleLimit
}

// DefaultThrottlePolicy returns the documented default policy.
func DefaultThrottlePolicy() ThrottlePolicy {
	return ThrottlePolicy{Window: 15 * time.Minute,
		Pair:    ThrottleLimit{MaxFailures: 5, Backoff: time.Minute, MaxBackoff: time.Hour},
		Address: ThrottleLimit{MaxFailures: 30, Backoff: time.Minute, MaxBackoff: time.Hour},
		Account: ThrottleLimit{MaxFailures: 20, Backoff: time.Minute, MaxBackoff: time.Hour}}
}

// withDefaults fills zero fields from DefaultThrottlePolicy and checks the
// result.
func (p ThrottlePolicy) withDefaults() (ThrottlePolicy, error) {
	d := DefaultThrottlePolicy()
	if p.Window == 0 {
		p.Window = d.Window
	}
	for _, l := range []struct{ got, def *ThrottleLimit }{{&p.Pair, &d.Pair}, {&p.Address, &d.Address}, {&p.Account, &d.Account}} {
		if l.got.MaxFailures == 0 {
			l.got.MaxFailures = l.def.MaxFailures
		}
		if l.got.Backoff == 0 {
			l.got.Backoff = l.def.Backoff
		}
		if l.got.MaxBackoff == 0 {
			l.got.MaxBackoff = max(l.def.MaxBackoff, l.got.Backoff)
		}
		if l.got.MaxFailures < 0 || l.got.Backoff < 0 || l.got.MaxBackoff < l.got.Backoff {
			return p, errors.New("account: Config.Throttle limits must be positive, with MaxBackoff at least Backoff")
		}
	}
	if p.Window < 0 {
		return p, errors.New("account: Config.Throttle.Window must not be negative")
	}
	return p, nil
}

// MailLimit bounds the mail of one kind that requests may cause within
// Window: per account (the address mailed) and per client address asking.
// A request over a limit is answered as any other and sends nothing.
type MailLimit struct {
	// PerAccount is how many messages one account is sent. Zero means 3.
	PerAccount int
	// PerAddress is how many such requests one client address may make,
	// whether or not they name an account. Zero means 10.
	PerAddress int
	// Window is the fixed window the counts run in, from each counter's
	// first request. Zero means 1 hour.
	Window time.Duration
}

// withDefaults fills zero fields and checks the result.
func (m MailLimit) withDefaults() (MailLimit, error) {
	if m.PerAccount == 0 {
		m.PerAccount = 3
	}
	if m.PerAddress == 0 {
		m.PerAddress = 10
	}
	if m.Window == 0 {
		m.Window = time.Hour
	}
	if m.PerAccount < 0 || m.PerAddress < 0 || m.Window < 0 {
		return m, errors.New("account: Config.ResetMail values must not be negative")
	}
	return m, nil
}

// Throttle is a counter of one subject (a digested account, client
// address, or pair of both; or a mail limit's account or address).
type Throttle struct {
	Subject string
	// Failures is the count: failed (or pending) login attempts, or mail
	// requests.
	Failures int
	// WindowStartedAt is when the count started; zero for a new counter.
	WindowStartedAt time.Time
	// LockedUntil is set while the subject backs off.
	LockedUntil *time.Time
}

// zero reports whether t holds nothing worth keeping.
func (t Throttle) zero() bool { return t.Failures == 0 && t.LockedUntil == nil }

// lockedAt reports whether t is locked at now.
func (t Throttle) lockedAt(now time.Time) bool {
	return t.LockedUntil != nil && now.Before(*t.LockedUntil)
}

// current returns t as it stands at now: a counter whose window passed,
// with no lock ended within the window, starts again from zero.
func (p ThrottlePolicy) current(t Throttle, now time.Time) Throttle {
	since := now.Add(-p.Window)
	if !t.WindowStartedAt.IsZero() && t.WindowStartedAt.Before(since) && (t.LockedUntil == nil || t.LockedUntil.Before(since)) {
		return Throttle{Subject: t.Subject}
	}
	return t
}

// count counts one failure on t under limit l at now, starting or
// extending its lock once l.MaxFailures is reached.
func (l ThrottleLimit) count(t Throttle, now time.Time) Throttle {
	if t.Failures == 0 {
		t.WindowStartedAt = now
	}
	t.Failures++
	if l.MaxFailures == 0 || t.Failures < l.MaxFailures {
		return t
	}
	lock := l.Backoff
	for i := l.MaxFailures; i < t.Failures && lock < l.MaxBackoff; i++ {
		lock *= 2
	}
	until := now.Add(min(lock, l.MaxBackoff))
	if t.LockedUntil == nil || until.After(*t.LockedUntil) {
		t.LockedUntil = &until
	}
	return t
}

// reserve decides one login attempt at now on its counters (pair, address,
// account, current at now). An admitted attempt is counted as a failure
// on all three before any hashing, so that concurrent attempts cannot all
// pass a limit; a refused one changes nothing and returns the time until
// which it is refused.
func (p ThrottlePolicy) reserve(now time.Time, c [3]Throttle) (out [3]Throttle, refusedUntil time.Time) {
	for i := range c {
		c[i] = p.current(c[i], now)
	}
	pair, addr, acct := c[0], c[1], c[2]
	for _, t := range []Throttle{pair, addr} {
		if t.lockedAt(now) && t.LockedUntil.After(refusedUntil) {
			refusedUntil = *t.LockedUntil
		}
	}
	// The account's lock refuses only addresses that have failed on it:
	// the owner's own address, with no failures, still gets in.
	if acct.lockedAt(now) && pair.Failures > 0 && acct.LockedUntil.After(refusedUntil) {
		refusedUntil = *acct.LockedUntil
	}
	if !refusedUntil.IsZero() {
		return c, refusedUntil
	}
	return [3]Throttle{p.Pair.count(pair, now), p.Address.count(addr, now), p.Account.count(acct, now)}, time.Time{}
}

// settle gives back an admitted attempt's reservation on its counters
// (pair, address, account, current at now): a sign-in clears the pair and
// takes the attempt off the address and the account; an attempt that was
// never evaluated (the hashing pool refused it) is taken off all three.
// Locks stay.
func (p ThrottlePolicy) settle(now time.Time, c [3]Throttle, signedIn bool) [3]Throttle {
	for i := range c {
		c[i] = p.current(c[i], now)
		if c[i].Failures > 0 {
			c[i].Failures--
		}
	}
	if signedIn {
		c[0] = Throttle{Subject: c[0].Subject}
	}
	return c
}

// loginSubjects returns the digested throttle subjects of an attempt: the
// pair of account (by email) and client address, the address, and the
// account, in that order.
func (s *Service) loginSubjects(email, ip string) []string {
	addr := AddressKey(ip)
	return []string{"pair:" + s.keys.Digest("login-throttle:pair:" + email + "\n" + addr)[:40],
		"addr:" + s.keys.Digest("login-throttle:address:" + addr)[:40],
		"acct:" + s.keys.Digest("login-throttle:account:" + email)[:40]}
}

// reserveLogin counts an attempt before its hashing, in one transaction of
// its own; RATE_LIMITED (details.limit loginFailures, details.retryAfter)
// when a counter refuses it.
func (s *Service) reserveLogin(ctx context.Context, st ThrottleStore, subjects []string) error {
	const op = "account.Login"
	var refused time.Time
	var now time.Time
	err := st.ThrottleUpdate(ctx, subjects, func(at time.Time, cur []Throttle) ([]Throttle, error) {
		out, until := s.cfg.Throttle.reserve(at, [3]Throttle(cur))
		if !until.IsZero() {
			refused, now = until, at
			return nil, errThrottled
		}
		return out[:], nil
	})
	if errors.Is(err, errThrottled) {
		return fault.E(op, fault.RateLimited, "Too many failed sign-in attempts; try again later.").
			With("limit", "loginFailures").With("retryAfter", ceilSeconds(refused.Sub(now)))
	}
	return fault.Wrap(op, err)
}

// settleLogin gives back a reservation (see ThrottlePolicy.settle), in st.
func (s *Service) settleLogin(ctx context.Context, st ThrottleStore, subjects []string, signedIn bool) error {
	return st.ThrottleUpdate(ctx, subjects, func(at time.Time, cur []Throttle) ([]Throttle, error) {
		out := s.cfg.Throttle.settle(at, [3]Throttle(cur), signedIn)
		return out[:], nil
	})
}

// errThrottled rolls back a refused reservation.
var errThrottled = errors.New("account: throttled")

// mailAllowed counts one mail request of kind at the client address ip
// and, when account is not "", for that account (an email address), and
// reports whether the mail may be sent: both counts within s.cfg.ResetMail.
// A request over the address's limit is not counted for the account. It
// runs in st (its own transaction when st is the read handle).
func (s *Service) mailAllowed(ctx context.Context, st ThrottleStore, kind, account, ip string) (bool, error) {
	lim := s.cfg.ResetMail
	subjects := []string{kind + ":addr:" + s.keys.Digest("mail-limit:" + kind + ":address:" + AddressKey(ip))[:40]}
	if account != "" {
		subjects = append(subjects, kind+":acct:"+s.keys.Digest("mail-limit:" + kind + ":account:" + account)[:40])
	}
	allowed := false
	err := st.ThrottleUpdate(ctx, subjects, func(now time.Time, cur []Throttle) ([]Throttle, error) {
		allowed = false
		out := make([]Throttle, len(cur))
		for i, t := range cur {
			if !t.WindowStartedAt.IsZero() && !now.Before(t.WindowStartedAt.Add(lim.Window)) {
				t = Throttle{Subject: t.Subject}
			}
			out[i] = t
		}
		if lim.PerAddress > 0 && out[0].Failures >= lim.PerAddress {
			return out, nil
		}
		out[0] = countMail(out[0], now)
		if len(out) == 1 {
			return out, nil
		}
		if lim.PerAccount > 0 && out[1].Failures >= lim.PerAccount {
			return out, nil
		}
		out[1] = countMail(out[1], now)
		allowed = true
		return out, nil
	})
	return allowed, err
}

func countMail(t Throttle, now time.Time) Throttle {
	if t.Failures == 0 {
		t.WindowStartedAt = now
	}
	t.Failures++
	return t
}

// ceilSeconds is d in whole seconds, rounded up, at least 1.
func ceilSeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// AddressKey is the key a client address is limited and throttled by: an
// IPv4 address itself, an IPv6 address's /64 network (one host usually
// holds a whole /64, so its addresses are one client), an IPv4-mapped IPv6
// address as IPv4. Anything that does not parse is used as given.
func AddressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	pfx, err := a.Prefix(64)
	if err != nil {
		return a.String()
	}
	return pfx.String()
}
