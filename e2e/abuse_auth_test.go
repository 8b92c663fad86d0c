package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/platformtest"
)

// abuseHost is a platform on a System's database and mailer that hashes
// passwords through its own pool and trusts X-Forwarded-For, so a test
// acts from many client addresses and reads the pool's use.
type abuseHost struct {
	s    *platformtest.System
	url  string
	pool *account.HashPool
}

// newAbuseHost starts a host hashing with params through a pool of slots
// that waits wait for a free slot.
func newAbuseHost(t *testing.T, s *platformtest.System, params account.PasswordParams, slots int, wait time.Duration) *abuseHost {
	t.Helper()
	pool, err := account.NewHashPool(account.HashPoolConfig{Slots: slots, Wait: wait}, params)
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.New(context.Background(), platform.Config{Store: s.DB, SecretKey: platformtest.SecretKey, BlobDir: s.BlobDir,
		Mailer: s.Mail, Passwords: params, PasswordHashing: pool, BaseURL: "http://platform.test", InsecureCookies: true,
		TrustProxy: true, Jobs: platform.JobsConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return &abuseHost{s: s, url: srv.URL, pool: pool}
}

// post sends a POST from the client address ip.
func (h *abuseHost) post(ip, path string, body any) *platformtest.Response {
	return h.s.DoAt(h.url, platformtest.Request{Method: http.MethodPost, Path: path, Body: body,
		Header: map[string]string{"X-Forwarded-For": ip}})
}

func (h *abuseHost) login(ip, email, password string) *platformtest.Response {
	return h.post(ip, "/api/v1/auth/login", map[string]string{"email": email, "password": password})
}

// signup signs email up and verifies it, from ip.
func (h *abuseHost) signup(t *testing.T, ip, email string) {
	t.Helper()
	if r := h.post(ip, "/api/v1/auth/signup", map[string]string{"email": email, "password": authPassword, "name": "Owner"}); r.Status != 202 {
		t.Fatalf("signup: %d %s", r.Status, r.Body)
	}
	code := h.s.MailedCode(email, "Verify your email")
	if r := h.post(ip, "/api/v1/auth/verify-email", map[string]string{"code": code}); r.Status != 200 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
}

// rateLimited reports whether r is 429 RATE_LIMITED for limit with a
// Retry-After header.
func rateLimited(r *platformtest.Response, limit string) bool {
	return r.Status == 429 && r.Code() == "RATE_LIMITED" && errDetails(r)["limit"] == limit && r.Header.Get("Retry-After") != ""
}

// concurrently runs n calls of fn at once and returns their responses.
func concurrently(n int, fn func(i int) *platformtest.Response) []*platformtest.Response {
	out := make([]*platformtest.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestConcurrentBadLoginsHashWithinThePool sends 40 concurrent bad logins
// for one account from 40 addresses (a spread attack that no address or
// pair counter stops) through a pool of 2 slots: never more than 2 hashes
// run at once, each login is either evaluated (401) or refused by the
// pool (429 passwordHashing, Retry-After: 1) without hashing. With the pool
// held full, every hashing route is refused, and a refused login is not
// counted as a failure.
func TestConcurrentBadLoginsHashWithinThePool(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		params := account.PasswordParams{Time: 1, MemoryKiB: 4 << 10, Threads: 1}
		h := newAbuseHost(t, s, params, 2, 20*time.Millisecond)
		h.signup(t, "10.0.0.1", "owner@abuse.test")
		before := h.pool.Stats()
		rs := concurrently(40, func(i int) *platformtest.Response {
			return h.login(fmt.Sprintf("10.40.0.%d", i+1), "owner@abuse.test", fmt.Sprintf("wrong guess %02d!", i))
		})
		evaluated, refused := 0, 0
		for _, r := range rs {
			switch {
			case r.Status == 401 && r.Code() == "UNAUTHENTICATED":
				evaluated++
			case rateLimited(r, "passwordHashing") && r.Header.Get("Retry-After") == "1":
				refused++
			default:
				t.Errorf("login: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
			}
		}
		st := h.pool.Stats()
		t.Logf("40 concurrent bad logins, pool of %d: %d evaluated, %d refused by the pool, peak %d", st.Slots, evaluated, refused, st.Peak)
		if st.Peak > st.Slots || st.Peak < 1 || st.InUse != 0 {
			t.Fatalf("pool peak %d with %d slots (in use %d)", st.Peak, st.Slots, st.InUse)
		}
		if got := int(st.Acquired - before.Acquired); got != evaluated || int(st.Refused-before.Refused) != refused {
			t.Fatalf("%d hashes for %d evaluated logins; %d pool refusals for %d answers", got, evaluated, st.Refused-before.Refused, refused)
		}

		// The pool held full: login, signup and reset are refused before
		// hashing, and the refused login leaves no failure behind.
		var releases []func()
		for range st.Slots {
			release, err := h.pool.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			releases = append(releases, release)
		}
		held := h.pool.Stats()
		for range 6 {
			if r := h.login("10.9.9.9", "owner@abuse.test", "wrong guess again"); !rateLimited(r, "passwordHashing") {
				t.Fatalf("login on a full pool: %d %s", r.Status, r.Body)
			}
		}
		if r := h.post("10.9.9.9", "/api/v1/auth/signup", map[string]string{"email": "new@abuse.test", "password": authPassword, "name": "New"}); !rateLimited(r, "passwordHashing") {
			t.Fatalf("signup on a full pool: %d %s", r.Status, r.Body)
		}
		if r := h.post("10.9.9.9", "/api/v1/auth/password/reset", map[string]string{"code": "pc_whatever", "password": "a new long passphrase"}); !rateLimited(r, "passwordHashing") {
			t.Fatalf("reset on a full pool: %d %s", r.Status, r.Body)
		}
		if got := h.pool.Stats(); got.Acquired != held.Acquired || got.Peak > got.Slots {
			t.Fatalf("hashed on a full pool: %+v", got)
		}
		for _, release := range releases {
			release()
		}
		// Six refused logins from 10.9.9.9 counted nothing: its pair is open.
		if r := h.login("10.9.9.9", "owner@abuse.test", authPassword); r.Status != 200 {
			t.Fatalf("login after the pool freed: %d %s", r.Status, r.Body)
		}
	})
}

// TestLockoutAttemptLeavesOwnerSignedIn has an attacker fail many times
// on the owner's email from address A, then once from each of 25 more
// addresses (past the account's limit of 20): the attacker's addresses are
// refused, and the owner, from an address that never failed, signs in.
func TestLockoutAttemptLeavesOwnerSignedIn(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		h := newAbuseHost(t, s, platformtest.CheapPasswords(), 2, time.Second)
		h.signup(t, "10.0.0.1", "owner@abuse.test")
		const attacker = "10.66.0.1"
		unauth := 0
		for i := range 25 {
			r := h.login(attacker, "owner@abuse.test", fmt.Sprintf("guess number %d", i))
			switch {
			case r.Code() == "UNAUTHENTICATED":
				unauth++
			case !rateLimited(r, "loginFailures"):
				t.Fatalf("attacker attempt %d: %d %s", i, r.Status, r.Body)
			}
		}
		if unauth != 5 {
			t.Fatalf("%d of the attacker's guesses were evaluated, want 5", unauth)
		}
		for i := range 25 {
			if r := h.login(fmt.Sprintf("10.67.0.%d", i+1), "owner@abuse.test", "another guess!"); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("spread attempt %d: %d %s", i, r.Status, r.Body)
			}
		}
		// Locked for addresses that failed, the right password included.
		for _, ip := range []string{attacker, "10.67.0.1"} {
			if r := h.login(ip, "owner@abuse.test", authPassword); !rateLimited(r, "loginFailures") {
				t.Fatalf("failed address %s: %d %s", ip, r.Status, r.Body)
			}
		}
		// The owner's own address never failed.
		r := h.login("192.0.2.10", "owner@abuse.test", authPassword)
		if r.Status != 200 || r.Header.Get("Set-Cookie") == "" {
			t.Fatalf("owner locked out: %d %s", r.Status, r.Body)
		}
		// While the account's lock runs, an address that fails on it
		// waits like the attacker's: one typo, then the password.
		if r := h.login("192.0.2.11", "owner@abuse.test", "a typo in it"); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("owner's typo: %d %s", r.Status, r.Body)
		}
		if r := h.login("192.0.2.11", "owner@abuse.test", authPassword); !rateLimited(r, "loginFailures") {
			t.Fatalf("after a typo under attack: %d %s", r.Status, r.Body)
		}
	})
}

// TestConcurrentGuessesPastTheLimit sends 40 concurrent wrong passwords
// for one account from one address: exactly the pair's limit of 5 are
// evaluated (5 hashes), every other answer is RATE_LIMITED with
// Retry-After; once the minute's lock ends the right password signs in.
func TestConcurrentGuessesPastTheLimit(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		h := newAbuseHost(t, s, platformtest.CheapPasswords(), 2, 5*time.Second)
		h.signup(t, "10.0.0.1", "owner@abuse.test")
		before := h.pool.Stats()
		rs := concurrently(40, func(i int) *platformtest.Response {
			return h.login("10.66.0.1", "owner@abuse.test", fmt.Sprintf("wrong guess %02d!", i))
		})
		unauth, limited := 0, map[string]int{}
		for _, r := range rs {
			switch {
			case r.Code() == "UNAUTHENTICATED":
				unauth++
			case rateLimited(r, "loginFailures") && r.Header.Get("Retry-After") == "60":
				limited["loginFailures"]++
			case rateLimited(r, "authRequestsPerAddress"):
				limited["authRequestsPerAddress"]++
			default:
				t.Errorf("guess: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
			}
		}
		t.Logf("40 concurrent guesses: %d evaluated, refused %v", unauth, limited)
		if hashes := h.pool.Stats().Acquired - before.Acquired; unauth != 5 || hashes != 5 {
			t.Fatalf("%d guesses evaluated with %d hashes, want 5", unauth, hashes)
		}
		s.Clock.Advance(time.Minute)
		if r := h.login("10.66.0.1", "owner@abuse.test", authPassword); r.Status != 200 {
			t.Fatalf("after the lock: %d %s", r.Status, r.Body)
		}
	})
}

// TestPasswordResetMailIsLimited asks for 25 reset links for one account
// from 25 addresses: 3 mails, every answer the same 202 as for an unknown
// address. One address may ask 10 times an hour, whatever the accounts;
// notices of signups with a registered address are limited alike.
func TestPasswordResetMailIsLimited(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		h := newAbuseHost(t, s, platformtest.CheapPasswords(), 2, time.Second)
		h.signup(t, "10.0.0.1", "owner@abuse.test")
		h.signup(t, "10.0.0.1", "other@abuse.test")
		forgot := func(ip, email string) *platformtest.Response {
			return h.post(ip, "/api/v1/auth/password/forgot", map[string]string{"email": email})
		}
		want := forgot("10.0.0.2", "nobody@abuse.test")
		if want.Status != 202 {
			t.Fatalf("unknown address: %d %s", want.Status, want.Body)
		}
		for i := range 25 {
			if r := forgot(fmt.Sprintf("10.25.0.%d", i+1), "owner@abuse.test"); r.Status != 202 || dataOf(r) != dataOf(want) {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		resets := func(email string) int {
			n := 0
			for _, m := range s.Mail.To(email) {
				if m.Subject == "Reset your password" {
					n++
				}
			}
			return n
		}
		if n := resets("owner@abuse.test"); n != 3 {
			t.Fatalf("%d reset mails for 25 requests, want 3", n)
		}
		// One address: 10 requests an hour, here for unknown accounts,
		// then none for a registered one; another address still may.
		for i := range 10 {
			if r := forgot("10.77.0.1", fmt.Sprintf("nobody%d@abuse.test", i)); dataOf(r) != dataOf(want) {
				t.Fatalf("address request %d: %d %s", i, r.Status, r.Body)
			}
		}
		if r := forgot("10.77.0.1", "other@abuse.test"); r.Status != 202 || dataOf(r) != dataOf(want) || resets("other@abuse.test") != 0 {
			t.Fatalf("over the address's limit: %d %s, %d mails", r.Status, r.Body, resets("other@abuse.test"))
		}
		if forgot("10.77.0.2", "other@abuse.test"); resets("other@abuse.test") != 1 {
			t.Fatalf("another address: %d mails", resets("other@abuse.test"))
		}
		// An hour on, the account may be mailed again.
		s.Clock.Advance(time.Hour)
		if forgot("10.25.0.1", "owner@abuse.test"); resets("owner@abuse.test") != 4 {
			t.Fatalf("after the hour: %d mails", resets("owner@abuse.test"))
		}
		// Signing up again with a registered address mails its owner a
		// notice, at most 3 an hour, with the same 202.
		for i := range 6 {
			r := h.post(fmt.Sprintf("10.88.0.%d", i+1), "/api/v1/auth/signup",
				map[string]string{"email": "other@abuse.test", "password": authPassword, "name": "Again"})
			if r.Status != 202 {
				t.Fatalf("signup %d: %d %s", i, r.Status, r.Body)
			}
		}
		notices := 0
		for _, m := range s.Mail.To("other@abuse.test") {
			if m.Subject == "Someone tried to sign up with your address" {
				notices++
			}
		}
		if notices != 3 {
			t.Fatalf("%d notices for 6 signups, want 3", notices)
		}
	})
}

// TestAddressRateRefusesBeforeHashing spends one address's 30 requests on
// the unauthenticated routes: its next login and signup are refused with
// RATE_LIMITED before any hashing (the pool untouched), while another
// address is served; a token later it is served again.
func TestAddressRateRefusesBeforeHashing(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		h := newAbuseHost(t, s, platformtest.CheapPasswords(), 2, time.Second)
		h.signup(t, "10.0.0.1", "owner@abuse.test")
		for i := range 30 {
			if r := h.post("10.55.0.1", "/api/v1/auth/verify-email", map[string]string{"code": "pc_bogus"}); r.Code() != "INVALID_INPUT" {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
			}
		}
		before := h.pool.Stats()
		r := h.login("10.55.0.1", "owner@abuse.test", authPassword)
		if !rateLimited(r, "authRequestsPerAddress") || r.Header.Get("Retry-After") != "2" {
			t.Fatalf("login over the address's rate: %d %v %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		if r := h.post("10.55.0.1", "/api/v1/auth/signup", map[string]string{"email": "x@abuse.test", "password": authPassword, "name": "X"}); !rateLimited(r, "authRequestsPerAddress") {
			t.Fatalf("signup over the address's rate: %d %s", r.Status, r.Body)
		}
		// Admission comes before the body is read: a body over the route's
		// limit is not even looked at.
		if r := h.post("10.55.0.1", "/api/v1/auth/verify-email", map[string]string{"code": strings.Repeat("x", 2<<20)}); !rateLimited(r, "authRequestsPerAddress") {
			t.Fatalf("an oversized body over the address's rate: %d %s", r.Status, r.Body)
		}
		if got := h.pool.Stats(); got.Acquired != before.Acquired || got.Refused != before.Refused {
			t.Fatalf("the pool was used: %+v, before %+v", got, before)
		}
		if r := h.login("10.55.0.2", "owner@abuse.test", authPassword); r.Status != 200 {
			t.Fatalf("another address: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(2 * time.Second)
		if r := h.login("10.55.0.1", "owner@abuse.test", authPassword); r.Status != 200 {
			t.Fatalf("after a refill: %d %s", r.Status, r.Body)
		}
	})
}

// TestSpentThrottleCountersArePruned: the hourly maintenance job deletes
// sign-in counters a day after their window started, so failed attempts
// do not accumulate rows forever.
func TestSpentThrottleCountersArePruned(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
		Body: map[string]string{"email": "nobody@abuse.test", "password": "wrong-password-1"}})
	if r.Code() != "UNAUTHENTICATED" {
		t.Fatalf("bad login: %d %s", r.Status, r.Body)
	}
	count := func() int {
		var n int
		if err := s.DB.Read().IDB().NewRaw(`SELECT COUNT(*) FROM login_throttle`).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n == 0 {
		t.Fatal("a failed login left no counter")
	}
	s.Clock.Advance(25 * time.Hour) // the hourly prune becomes due; the counters are a day old
	deadline := time.Now().Add(20 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d spent counters were not pruned", count())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
