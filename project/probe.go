package project

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/urlguard"
)

// JobProbe is the job kind that fetches a submission's asset URLs and
// records what each one is (package doc, Probes). Rows in existing
// databases carry the name, so it never changes.
const JobProbe = "submission.probe"

// Probe bounds.
const (
	// ProbeMaxBytes bounds one asset URL's body (64 MiB): a longer one is
	// refused ("too_large"), hashed up to the bound and never stored.
	ProbeMaxBytes = 64 << 20
	// ProbeTimeout bounds one GET, redirects and body included.
	ProbeTimeout = 2 * time.Minute
	// maxContentType bounds the Content-Type recorded of a verified URL.
	maxContentType = 255
)

// ProbeGuardConfig is the urlguard policy of submitted asset URLs: https
// only (the spec's public HTTPS resources), bodies of at most
// ProbeMaxBytes, each GET bounded by ProbeTimeout, and allow, exact
// loopback addresses of test servers (nil in production), let through.
// The host sets the resolver and the trusted roots
// (platform.Config.Outbound).
func ProbeGuardConfig(allow []netip.AddrPort) urlguard.Config {
	return urlguard.Config{AllowLoopback: allow, MaxBodyBytes: ProbeMaxBytes, Timeout: ProbeTimeout}
}

// Jobs returns the submissions' job kind: the probe, of the provider
// class, whose workers mostly wait on the network as provider calls do.
func (s *Submissions) Jobs() []jobs.Kind {
	return []jobs.Kind{{Name: JobProbe, Class: jobs.ClassOutbound, HandlerFunc: s.probe}}
}

// probePayload is a probe job's payload.
type probePayload struct {
	SubmissionID string             `json:"submissionId"`
	Environment  access.Environment `json:"environment"`
}

// enqueueProbe enqueues the probe of sub's links in st's unit of work,
// once per submission.
func (s *Submissions) enqueueProbe(ctx context.Context, st jobs.Enqueuer, sub Submission) error {
	payload, err := json.Marshal(probePayload{SubmissionID: sub.ID, Environment: sub.Scope.Environment})
	if err != nil {
		return fmt.Errorf("probe payload: %w", err)
	}
	_, err = st.JobInsert(ctx, jobs.InsertParams{Kind: JobProbe, Payload: payload, MaxAttempts: s.cfg.ProbeAttempts,
		UniqueKey: JobProbe + ":" + sub.ID, Group: sub.Submitter.WorkspaceID})
	return err
}

// probe fetches each pending link of the job's submission and records
// what it found, each link in a unit of work of its own. A link that met
// a transient failure stays pending and fails the attempt, so the job
// runs again after its backoff; on the last attempt it is recorded
// unreachable. The fetches and the records honour ctx: a cancelled job
// stops at once (its lease is taken up by another attempt).
func (s *Submissions) probe(ctx context.Context, j jobs.Job) error {
	var pl probePayload
	if err := json.Unmarshal(j.Payload, &pl); err != nil || pl.SubmissionID == "" {
		return jobs.Permanent(fmt.Errorf("submission probe: a payload without a submission id"))
	}
	sub, err := s.cfg.ProbeReadFunc().SubmissionGet(ctx, pl.Environment, pl.SubmissionID)
	if fault.Is(err, fault.NotFound) {
		return jobs.Permanent(fmt.Errorf("submission probe: submission %s not found", pl.SubmissionID))
	}
	if err != nil {
		return err
	}
	last := j.Attempts >= j.MaxAttempts
	waiting := 0
	for _, l := range sub.Links {
		if l.Status != ProbePending {
			continue
		}
		got, transient := s.fetch(ctx, l)
		if err := ctx.Err(); err != nil {
			return err
		}
		if transient && !last {
			waiting++
			continue
		}
		err := s.cfg.ProbeRun(ctx, func(st ProbeStore) error {
			got.CheckedAt = st.Now()
			_, err := st.SubmissionLinkSet(ctx, sub.ID, got)
			return err
		})
		if err != nil {
			return fmt.Errorf("submission probe: record asset URL %d of %s: %w", l.Position, sub.ID, err)
		}
	}
	if waiting > 0 {
		return fmt.Errorf("submission probe: %d asset URLs of %s met a transient failure; retrying", waiting, sub.ID)
	}
	return nil
}

// fetch GETs l's URL through the guard's client and returns l as the
// answer leaves it: verified, refused or unreachable, and whether the
// failure is transient (a retry may find the URL). No result names the
// URL beyond l itself.
func (s *Submissions) fetch(ctx context.Context, l AssetLink) (AssetLink, bool) {
	refused := func(reason string) (AssetLink, bool) {
		l.Status, l.Reason = ProbeRefused, reason
		return l, false
	}
	unreachable := func(reason string, transient bool) (AssetLink, bool) {
		l.Status, l.Reason = ProbeUnreachable, reason
		return l, transient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL, nil)
	if err != nil {
		return refused(urlguard.ReasonMalformedURL)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return failed(err, refused, unreachable)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return unreachable("http_"+strconv.Itoa(code), true)
	default:
		return unreachable("http_"+strconv.Itoa(code), false)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return failed(err, refused, unreachable)
	}
	if n == 0 {
		return refused("empty")
	}
	l.Status, l.Bytes, l.SHA256, l.Reason = ProbeVerified, n, hex.EncodeToString(h.Sum(nil)), ""
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && len(mt) <= maxContentType {
		l.ContentType = mt
	}
	return l, false
}

// failed classifies an error of a GET or of its body: the guard's
// refusal and an over-long body are refused, anything else unreachable
// and transient.
func failed(err error, refused func(string) (AssetLink, bool), unreachable func(string, bool) (AssetLink, bool)) (AssetLink, bool) {
	if reason := urlguard.Reason(err); reason != "" {
		return refused(reason)
	}
	if fault.Is(err, fault.PayloadTooLarge) {
		return refused("too_large")
	}
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		return unreachable("unresolved_host", true)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return unreachable("timeout", true)
	}
	return unreachable("network", true)
}
