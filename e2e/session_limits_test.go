package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store/storetest"
	"github.com/creatormusic/platform/transport"
)

// asSession sends a GET with p's session cookie.
func asSession(s *platformtest.System, p person, path string) *platformtest.Response {
	return s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Cookie: p.cookie})
}

// untilRefused sends GET /api/v1/auth/context as p until a refusal, at
// most max times, and returns the refusal and how many were admitted.
func untilRefused(t *testing.T, s *platformtest.System, p person, max int) (*platformtest.Response, int) {
	t.Helper()
	for i := 0; i < max; i++ {
		r := asSession(s, p, "/api/v1/auth/context")
		if r.Status != http.StatusOK {
			return r, i
		}
		if r.Header.Get("RateLimit-Limit") == "" {
			t.Fatalf("an admitted session request without RateLimit headers: %v", r.Header)
		}
	}
	t.Fatalf("%s: %d requests admitted, none refused", p.email, max)
	return nil, max
}

// TestSessionRateLimit: sessions had no limits at all. A session caller
// past its user's per-minute rate is 429 RATE_LIMITED with Retry-After
// and the RateLimit headers, as a key is; its access token shares the
// user's allowance; the allowance comes back with time.
func TestSessionRateLimit(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{SessionLimits: transport.SessionLimits{
		User: apikey.Limits{RequestsPerMinute: 5}}}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.test", "Alice")
		onboard(t, s, &alice, "Alice Studio") // two requests of the five
		r, admitted := untilRefused(t, s, alice, 10)
		if admitted != 3 || r.Status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" ||
			detail(r, "limit") != "requestsPerMinute" || detail(r, "subject") != "user" {
			t.Fatalf("after %d more requests: %d %s", admitted, r.Status, r.Body)
		}
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || retry < 1 || r.Header.Get("RateLimit-Limit") != "5" || r.Header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("refusal headers: %v", r.Header)
		}
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Key: alice.token}); r.Code() != "RATE_LIMITED" {
			t.Fatalf("the user's access token: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(time.Duration(retry) * time.Second)
		if r := asSession(s, alice, "/api/v1/auth/context"); r.Status != http.StatusOK {
			t.Fatalf("after Retry-After: %d %s", r.Status, r.Body)
		}
	})
}

// TestSessionConcurrencyLimit: while a user's upload is in flight, a
// second request of that user past the concurrency limit is refused; once
// the upload ends the user is admitted again.
func TestSessionConcurrencyLimit(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{SessionLimits: transport.SessionLimits{
		User: apikey.Limits{MaxConcurrentRequests: 1}}}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.test", "Alice")
		onboard(t, s, &alice, "Alice Studio")
		// The upload's body arrives only after the handler asks for it
		// (Expect: 100-continue), so the first write into the pipe returns
		// once the request holds its slot.
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, s.Server.URL+"/api/v1/assets", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "audio/wav")
		req.Header.Set("Expect", "100-continue")
		req.AddCookie(&http.Cookie{Name: account.CookieName, Value: alice.cookie})
		client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
		defer client.CloseIdleConnections()
		done := make(chan int, 1)
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		wav := assettest.WAV(8000, 1, 800)
		if _, err := pw.Write(wav[:64]); err != nil {
			t.Fatal(err)
		}
		r := asSession(s, alice, "/api/v1/auth/context")
		if r.Status != http.StatusTooManyRequests || detail(r, "limit") != "maxConcurrentRequests" || detail(r, "subject") != "user" ||
			r.Header.Get("Retry-After") == "" {
			t.Fatalf("a second concurrent request: %d %s", r.Status, r.Body)
		}
		if _, err := io.Copy(pw, bytes.NewReader(wav[64:])); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		if code := <-done; code != http.StatusCreated {
			t.Fatalf("the upload: %d", code)
		}
		if r := asSession(s, alice, "/api/v1/auth/context"); r.Status != http.StatusOK {
			t.Fatalf("after the upload: %d %s", r.Status, r.Body)
		}
	})
}

// TestWorkspaceLimitBindsItsUsers: a workspace's limit binds the sessions
// of all its users together (a member is refused once another spent the
// workspace's minute, with its own user allowance untouched) but not
// another workspace's users.
func TestWorkspaceLimitBindsItsUsers(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{SessionLimits: transport.SessionLimits{
		Workspace: apikey.Limits{RequestsPerMinute: 8}}}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.test", "Alice")
		onboard(t, s, &alice, "Alice Studio")
		bob := join(t, s, "bob@example.test", "Bob", invite(t, s, alice, "bob@example.test", "VIEWER"))
		carol := signIn(t, s, "carol@example.test", "Carol")
		onboard(t, s, &carol, "Carol Studio")

		r, _ := untilRefused(t, s, alice, 20)
		if r.Code() != "RATE_LIMITED" || detail(r, "subject") != "workspace" || detail(r, "limit") != "requestsPerMinute" {
			t.Fatalf("alice: %d %s", r.Status, r.Body)
		}
		if r := asSession(s, bob, "/api/v1/auth/context"); r.Code() != "RATE_LIMITED" || detail(r, "subject") != "workspace" {
			t.Fatalf("bob, same workspace: %d %s", r.Status, r.Body)
		}
		if r := asSession(s, carol, "/api/v1/auth/context"); r.Status != http.StatusOK {
			t.Fatalf("carol, another workspace: %d %s", r.Status, r.Body)
		}
		// API keys keep their own limits: the workspace's key is admitted.
		if r := s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Key: s.Boot.TestKey}); r.Status != http.StatusOK {
			t.Fatalf("an API key: %d %s", r.Status, r.Body)
		}
		s.Clock.Advance(time.Minute)
		if r := asSession(s, bob, "/api/v1/auth/context"); r.Status != http.StatusOK {
			t.Fatalf("bob a minute later: %d %s", r.Status, r.Body)
		}
	})
}

// TestSessionBudgetSurvivesRestart: a user's monthly budget is counted in
// the database (request_usage): a restarted host, with a fresh limiter,
// still refuses the user, and a new month starts a new budget.
func TestSessionBudgetSurvivesRestart(t *testing.T) {
	t.Parallel()
	limits := transport.SessionLimits{User: apikey.Limits{MonthlyRequestBudget: 6}}
	platformtest.Dialects(t, platformtest.Options{SessionLimits: limits}, func(t *testing.T, s *platformtest.System) {
		alice := signIn(t, s, "alice@example.test", "Alice")
		onboard(t, s, &alice, "Alice Studio")
		r, _ := untilRefused(t, s, alice, 10)
		if r.Code() != "RATE_LIMITED" || detail(r, "limit") != "monthlyRequestBudget" || detail(r, "subject") != "user" {
			t.Fatalf("over budget: %d %s", r.Status, r.Body)
		}
		s.P.Close() // flushes the counts
		if n := count(t, s, `SELECT requests FROM request_usage WHERE subject = ?`, "user:"+alice.userID); n != 6 {
			t.Fatalf("request_usage counts %d requests of the user, want 6", n)
		}
		p2, err := platform.New(context.Background(), platform.Config{Store: s.DB, SecretKey: platformtest.SecretKey, BlobDir: s.BlobDir,
			Mailer: s.Mail, Passwords: platformtest.CheapPasswords(), SessionLimits: limits, Jobs: platform.JobsConfig{Disabled: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer p2.Close()
		srv := httptest.NewServer(p2.Handler())
		defer srv.Close()
		host2 := srv.URL
		r = s.DoAt(host2, platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Cookie: alice.cookie})
		if r.Code() != "RATE_LIMITED" || detail(r, "limit") != "monthlyRequestBudget" {
			t.Fatalf("after the restart: %d %s", r.Status, r.Body)
		}
		s.Clock.Set(time.Date(storetest.Epoch.Year(), storetest.Epoch.Month()+1, 1, 0, 0, 0, 0, time.UTC))
		if r := s.DoAt(host2, platformtest.Request{Method: http.MethodGet, Path: "/api/v1/auth/context", Cookie: alice.cookie}); r.Status != http.StatusOK {
			t.Fatalf("next month: %d %s", r.Status, r.Body)
		}
	})
}
