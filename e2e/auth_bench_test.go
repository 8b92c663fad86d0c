package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/platformtest"
)

// BenchmarkLoginLatency signs in 200 times over HTTP on SQLite with the
// default argon2id parameters and reports the p50 and p99 latency of
// POST /api/v1/auth/login. Each sign-in comes from its own client address,
// so the per-address request rate of the account routes does not refuse
// it. Run with -bench LoginLatency -benchtime 1x.
func BenchmarkLoginLatency(b *testing.B) {
	s := platformtest.New(b, platformtest.Options{Passwords: account.DefaultPasswordParams(), TrustProxy: true})
	s.Signup("bench@example.test", authPassword, "Bench")
	const n = 200
	for b.Loop() {
		lat := make([]time.Duration, 0, n)
		for i := range n {
			start := time.Now()
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
				Header: map[string]string{"X-Forwarded-For": fmt.Sprintf("10.20.%d.%d", i/250, i%250+1)},
				Body:   map[string]string{"email": "bench@example.test", "password": authPassword}})
			lat = append(lat, time.Since(start))
			if r.Status != http.StatusOK {
				b.Fatalf("login: %d %s", r.Status, r.Body)
			}
		}
		slices.Sort(lat)
		p50, p99 := lat[n/2], lat[n*99/100-1]
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		b.Logf("%d logins, argon2id %+v: p50 %s, p99 %s", n, account.DefaultPasswordParams(), p50, p99)
	}
}
