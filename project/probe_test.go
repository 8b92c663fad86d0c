package project_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/project"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// memProbe is a ProbeStore of one submission in memory.
type memProbe struct {
	mu  sync.Mutex
	sub project.Submission
}

func (m *memProbe) Now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func (m *memProbe) SubmissionGet(_ context.Context, env access.Environment, id string) (project.Submission, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id != m.sub.ID || env != m.sub.Scope.Environment {
		return project.Submission{}, fault.E("memProbe.SubmissionGet", fault.NotFound, "")
	}
	s := m.sub
	s.Links = append([]project.AssetLink(nil), m.sub.Links...)
	return s, nil
}

func (m *memProbe) SubmissionLinkSet(_ context.Context, id string, l project.AssetLink) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id != m.sub.ID || m.sub.Links[l.Position].Status != project.ProbePending {
		return false, nil
	}
	m.sub.Links[l.Position] = l
	return true, nil
}

func (m *memProbe) links() []project.AssetLink {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]project.AssetLink(nil), m.sub.Links...)
}

// mediaServer is an HTTPS server on loopback whose certificate covers
// example.com and *.example.com, with the guard that reaches it as
// media.example.com and resolves inward.example.com to a private address.
func mediaServer(t *testing.T, h http.Handler) (*httptest.Server, *urlguard.Guard) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	ap, err := urlguard.LoopbackOf(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	cfg := project.ProbeGuardConfig([]netip.AddrPort{ap})
	cfg.Resolver = urlguardtest.Resolver{"media.example.com": {ap.Addr()}, "inward.example.com": {netip.MustParseAddr("10.0.0.7")}}
	cfg.RootCAs = roots
	g, err := urlguard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.CloseIdleConnections)
	return srv, g
}

// probeOf returns the probe handler of submissions over st, with guard.
func probeOf(t *testing.T, g *urlguard.Guard, st *memProbe, attempts int) jobs.Handler {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	assets, err := asset.New(asset.Config{Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := project.NewSubmissions(project.SubmissionConfig{Assets: assets, Guard: g, ProbeAttempts: attempts,
		ProbeRun:      func(ctx context.Context, fn func(project.ProbeStore) error) error { return fn(st) },
		ProbeReadFunc: func() project.ProbeStore { return st }})
	if err != nil {
		t.Fatal(err)
	}
	ks := subs.Jobs()
	if len(ks) != 1 || ks[0].Name != "submission.probe" || ks[0].Class != jobs.ClassOutbound {
		t.Fatalf("jobs = %+v", ks)
	}
	return ks[0].HandlerFunc
}

// submissionOf is a submission of urls, all pending.
func submissionOf(urls ...string) project.Submission {
	s := project.Submission{ID: "sbm_01", Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test},
		Status: project.SubmissionSubmitted}
	for i, u := range urls {
		s.Links = append(s.Links, project.AssetLink{Position: i, URL: u, Status: project.ProbePending})
	}
	return s
}

func probeJob(t *testing.T, attempt, max int) jobs.Job {
	t.Helper()
	payload, err := json.Marshal(map[string]string{"submissionId": "sbm_01", "environment": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.Job{ID: "job_1", Kind: project.JobProbe, Payload: payload, Attempts: attempt, MaxAttempts: max}
}

// TestProbeRecordsWhatEachURLIs: a served body is verified with its
// content type, length and SHA-256; a redirect to a host resolving to a
// private address, an empty body and one declared over the bound are
// refused; a 404 is unreachable at once; a 503 stays pending and fails
// the attempt until the last one, which records it unreachable.
func TestProbeRecordsWhatEachURLIs(t *testing.T) {
	body := []byte("a cover image, as bytes")
	var flaky sync.Mutex
	flakyHits := 0
	srv, g := mediaServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cover.png":
			w.Header().Set("Content-Type", "image/png; charset=binary")
			w.Write(body)
		case "/moved":
			http.Redirect(w, r, "https://inward.example.com/cover.png", http.StatusFound)
		case "/empty":
			w.WriteHeader(http.StatusOK)
		case "/huge":
			w.Header().Set("Content-Length", strconv.Itoa(project.ProbeMaxBytes+1))
			w.WriteHeader(http.StatusOK)
		case "/flaky":
			flaky.Lock()
			flakyHits++
			flaky.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	_, port, _ := netSplit(srv.URL)
	base := "https://media.example.com:" + port
	st := &memProbe{sub: submissionOf(base+"/cover.png", base+"/moved", base+"/empty", base+"/huge", base+"/gone", base+"/flaky")}
	probe := probeOf(t, g, st, 3)
	ctx := context.Background()

	if err := probe(ctx, probeJob(t, 1, 3)); err == nil {
		t.Fatal("an attempt with a URL answering 503 succeeded; want a failure to retry")
	}
	sum := sha256.Sum256(body)
	want := []struct {
		status  project.ProbeStatus
		reason  string
		sha     string
		typ     string
		n       int64
		checked bool
	}{
		{project.ProbeVerified, "", hex.EncodeToString(sum[:]), "image/png", int64(len(body)), true},
		{project.ProbeRefused, "private_address", "", "", 0, true},
		{project.ProbeRefused, "empty", "", "", 0, true},
		{project.ProbeRefused, "too_large", "", "", 0, true},
		{project.ProbeUnreachable, "http_404", "", "", 0, true},
		{project.ProbePending, "", "", "", 0, false},
	}
	check := func(links []project.AssetLink) {
		t.Helper()
		for i, w := range want {
			l := links[i]
			if l.Status != w.status || l.Reason != w.reason || l.SHA256 != w.sha || l.ContentType != w.typ || l.Bytes != w.n ||
				l.CheckedAt.IsZero() == w.checked {
				t.Errorf("link %d (%s) = %+v, want %+v", i, l.URL, l, w)
			}
		}
	}
	check(st.links())
	if err := probe(ctx, probeJob(t, 2, 3)); err == nil {
		t.Fatal("the second attempt succeeded; want a failure to retry")
	}
	if err := probe(ctx, probeJob(t, 3, 3)); err != nil {
		t.Fatalf("the last attempt: %v", err)
	}
	want[5].status, want[5].reason, want[5].checked = project.ProbeUnreachable, "http_503", true
	check(st.links())
	flaky.Lock()
	defer flaky.Unlock()
	if flakyHits != 3 {
		t.Errorf("the 503 URL was fetched %d times, want once per attempt (3)", flakyHits)
	}
	if err := probe(ctx, probeJob(t, 1, 3)); err != nil {
		t.Errorf("a probe of a submission with no pending URL: %v", err)
	}
}

// TestProbeStopsOnCancel: a probe reading a body that never ends returns
// within a second of its context's cancellation, and records nothing.
func TestProbeStopsOnCancel(t *testing.T) {
	srv, g := mediaServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		chunk := make([]byte, 1024)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}))
	_, port, _ := netSplit(srv.URL)
	st := &memProbe{sub: submissionOf("https://media.example.com:" + port + "/endless.mp4")}
	probe := probeOf(t, g, st, 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- probe(ctx, probeJob(t, 3, 3)) }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled probe reported success")
		}
	case <-time.After(time.Second):
		t.Fatal("the probe did not stop within a second of its cancellation")
	}
	if l := st.links()[0]; l.Status != project.ProbePending {
		t.Errorf("a cancelled probe recorded %+v", l)
	}
}

// netSplit returns the host and port of a server URL.
func netSplit(raw string) (string, string, error) {
	ap, err := urlguard.LoopbackOf(raw)
	if err != nil {
		return "", "", err
	}
	return ap.Addr().String(), strconv.Itoa(int(ap.Port())), nil
}
