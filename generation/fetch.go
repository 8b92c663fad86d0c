package generation

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// This file downloads a provider's final audio URL for ingestion. Provider
// media URLs misbehave (spec F9): a CDN answers 403 or 404, a 200 with zero
// bytes, or 403 on the first GET and 200 on the next; and the files expire
// after 14-15 days. A Fetcher retries the transient answers a bounded
// number of times and classifies what remains, so the ingestion job knows
// whether to retry later (PROVIDER_UNAVAILABLE), give up on a gone URL
// (RESULT_EXPIRED) or on broken media (GENERATION_FAILED).
//
// Media URLs may carry a signed token in their query string: no error
// message, detail or cause this file returns contains the query, only the
// URL's scheme, host and path.
//
// A media URL is named by a provider (by provider A only through its
// authenticated record query, never a callback body: see package
// operation), so it is judged by package urlguard before anything is sent
// and the GETs go through the guard's client: a URL that names the
// platform's own network (loopback, private, link-local, cloud metadata,
// ...) fails at once and is never fetched, and so does every redirect hop
// that names one (judged again before it is followed, its addresses when
// it dials). Only the simulators' exact loopback addresses pass
// (Config.AllowLoopback, tests and the example host). A body is at most
// DefaultFetchMaxBytes (urlguard.LimitReader) and a GET, body included,
// at most DefaultFetchTimeout.

// Fetcher defaults.
const (
	defaultFetchAttempts = 4
	defaultFetchBackoff  = 500 * time.Millisecond
	// DefaultFetchMaxBytes bounds a media body (200 MiB).
	DefaultFetchMaxBytes = 200 << 20
	// DefaultFetchTimeout bounds one GET, body included.
	DefaultFetchTimeout = 30 * time.Second
)

// MediaGuardConfig is the urlguard policy of provider media: http or https
// (providers serve both), bodies of at most DefaultFetchMaxBytes, each GET
// bounded by DefaultFetchTimeout, and allow, exact loopback addresses of
// simulators (tests and the example host; nil in production), let through.
func MediaGuardConfig(allow []netip.AddrPort) urlguard.Config {
	return urlguard.Config{AllowHTTP: true, AllowLoopback: allow, MaxBodyBytes: DefaultFetchMaxBytes, Timeout: DefaultFetchTimeout}
}

// Fetcher downloads provider media with bounded retries. The zero value is
// ready to use; a Fetcher is safe for concurrent use when its Client and
// Sleep are.
type Fetcher struct {
	// Guard judges every media URL before a GET, and its client sends the
	// GETs when Client is nil. Nil means a Guard of MediaGuardConfig(nil),
	// built for each Fetch.
	Guard *urlguard.Guard
	// Client sends the GETs. Nil means Guard's client (30 s per GET, body
	// included). A Client that is set owns the connections, so only a
	// guarded client judges the addresses a host resolves to; Fetch still
	// judges the URL with Guard, sends through a copy of Client whose
	// redirects Guard judges first (hop count, https-to-http downgrade,
	// the target URL: a redirect to a loopback, private or metadata
	// address literal is refused before it is followed) before Client's own
	// CheckRedirect. Its timeout is its own.
	Client *http.Client
	// Attempts is the number of GETs per Fetch; 0 or less means 4.
	Attempts int
	// Backoff is the wait before the second GET, doubling before each
	// further one; 0 or less means 500 ms.
	Backoff time.Duration
	// MaxBytes bounds a body; 0 or less means 200 MiB. A guarded client
	// bounds it by its Guard's MaxBodyBytes as well. A body whose
	// Content-Length is longer fails Fetch, and reading past MaxBytes of a
	// body of unknown length fails the read, both with PAYLOAD_TOO_LARGE
	// (details.limit), which no retry fixes.
	MaxBytes int64
	// SleepFunc waits d between attempts and returns early with ctx's error.
	// Nil means a timer honoring ctx; tests inject a no-op.
	SleepFunc func(ctx context.Context, d time.Duration) error
}

// Media is a fetched body: the caller reads it once and closes it. It holds
// at most the Fetcher's MaxBytes: reading past that fails with
// PAYLOAD_TOO_LARGE.
type Media struct {
	// Body yields every byte of the media, then io.EOF.
	Body io.ReadCloser
	// ContentType is the response's Content-Type header, possibly empty.
	ContentType string
	// Attempts is the number of GETs made, the successful one included.
	Attempts int
}

// fetchAnswer classifies one GET for the retry loop.
type fetchAnswer int

const (
	answerGone        fetchAnswer = iota + 1 // 403, 404, 410
	answerEmpty                              // a 200 with no body
	answerUnreachable                        // 429, 5xx, transport error
)

// Fetch GETs rawURL, an absolute http or https URL, until it answers 200
// with a non-empty body or Attempts GETs are spent.
//
// A 403, 404, 410, 429 or 5xx answer, a zero-byte 200 or a transport error
// is retried after Sleep; any other status fails at once. Errors:
//
//   - INVALID_INPUT (details.field "url", details.reason from urlguard)
//     for a URL the Guard refuses: not an absolute http or https URL,
//     credentials, a host that is or resolves to a non-public address
//     ("private_address"), a refused redirect, and so on. It is never
//     retried: a refused address makes no request.
//   - RESULT_EXPIRED (details: status, attempts, url) when every answer was
//     403, 404 or 410, or a zero-byte 200 followed by those: the URL is
//     gone, and fetching it again will not help.
//   - GENERATION_FAILED with details.reason "empty_media" when the last
//     attempt answered a zero-byte 200, and with details.reason
//     "media_refused" (details.status) for a status that is not retried
//     (400, 401, 3xx the client did not follow, ...).
//   - PROVIDER_UNAVAILABLE with details.reason "media_unreachable" when an
//     attempt met a 5xx, a 429 or a transport error and the last one did
//     not answer empty: retryable by the caller later.
//   - PAYLOAD_TOO_LARGE (details.limit) for a Content-Length over MaxBytes
//     (or over the guard's bound).
//   - When ctx ends, its error is wrapped (errors.Is works): with
//     PROVIDER_TIMEOUT for a deadline, PROVIDER_UNAVAILABLE (details.reason
//     "cancelled") for a cancellation.
//
// Every response body Fetch does not return is closed.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (_ Media, err error) {
	const op = "generation.Fetch"
	guard, owned := f.Guard, false
	if guard == nil {
		// A guard of this Fetch alone: its idle connections close when Fetch
		// fails or the returned body is closed.
		g, err := urlguard.New(MediaGuardConfig(nil))
		if err != nil {
			return Media{}, fault.Wrap(op, err)
		}
		guard, owned = g, true
		defer func() {
			if err != nil {
				g.CloseIdleConnections()
			}
		}()
	}
	u, err := guard.CheckURL(rawURL)
	if err != nil {
		return Media{}, fault.Wrap(op, err)
	}
	safeURL := redactURL(u)
	attempts, backoff, limit := f.Attempts, f.Backoff, f.MaxBytes
	if attempts <= 0 {
		attempts = defaultFetchAttempts
	}
	if backoff <= 0 {
		backoff = defaultFetchBackoff
	}
	if limit <= 0 {
		limit = DefaultFetchMaxBytes
	}
	client := guard.Client()
	if f.Client != nil {
		client = guardRedirects(f.Client, client)
	}
	sleep := f.SleepFunc
	if sleep == nil {
		sleep = sleepCtx
	}

	var (
		last        fetchAnswer
		lastStatus  int   // of the last HTTP answer; 0 after a transport error
		lastErr     error // of the last transport error, redacted
		unreachable bool  // some attempt met a 5xx, 429 or transport error
	)
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, backoff); err != nil {
				return Media{}, fetchInterrupted(op, ctx, err, safeURL, attempt-1)
			}
			if backoff <= math.MaxInt64/2 {
				backoff *= 2
			}
		}
		if err := ctx.Err(); err != nil {
			return Media{}, fetchInterrupted(op, ctx, err, safeURL, attempt-1)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return Media{}, fault.Invalid(op, "url", "The media URL must be an absolute http or https URL.")
		}
		resp, err := client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return Media{}, fetchInterrupted(op, ctx, ctx.Err(), safeURL, attempt)
			}
			if e := finalFetchError(op, err, u, safeURL, attempt); e != nil {
				return Media{}, e
			}
			last, lastStatus, lastErr, unreachable = answerUnreachable, 0, redactErr(err, u), true
			continue
		}
		lastStatus, lastErr = resp.StatusCode, nil
		switch code := resp.StatusCode; {
		case code == http.StatusOK:
			if resp.ContentLength > limit {
				discard(resp.Body)
				return Media{}, tooLarge(op, limit).With("url", safeURL)
			}
			if resp.ContentLength == 0 {
				discard(resp.Body)
				last = answerEmpty
				continue
			}
			br := bufio.NewReader(resp.Body)
			if _, err := br.Peek(1); err != nil {
				discard(resp.Body)
				if err == io.EOF {
					last = answerEmpty
					continue
				}
				if ctx.Err() != nil {
					return Media{}, fetchInterrupted(op, ctx, ctx.Err(), safeURL, attempt)
				}
				last, lastStatus, lastErr, unreachable = answerUnreachable, 0, redactErr(err, u), true
				continue
			}
			return Media{
				Body:        &mediaBody{Reader: urlguard.LimitReader(br, limit, "generation.Media.Read"), c: resp.Body, guard: ownedGuard(guard, owned)},
				ContentType: resp.Header.Get("Content-Type"),
				Attempts:    attempt,
			}, nil
		case code == http.StatusForbidden, code == http.StatusNotFound, code == http.StatusGone:
			discard(resp.Body)
			last = answerGone
		case code == http.StatusTooManyRequests, code >= 500:
			discard(resp.Body)
			last, unreachable = answerUnreachable, true
		default:
			discard(resp.Body)
			return Media{}, fault.E(op, fault.GenerationFailed, "The provider refused to serve the media.").
				With("reason", "media_refused").With("status", code).With("attempts", attempt).With("url", safeURL)
		}
	}

	switch {
	case last == answerEmpty:
		return Media{}, fault.E(op, fault.GenerationFailed, "The provider served empty media.").
			With("reason", "empty_media").With("attempts", attempts).With("url", safeURL)
	case !unreachable:
		return Media{}, fault.E(op, fault.ResultExpired, "The provider's media URL is gone.").
			With("status", lastStatus).With("attempts", attempts).With("url", safeURL)
	}
	e := fault.E(op, fault.ProviderUnavailable, "The provider's media could not be reached.").
		With("reason", "media_unreachable").With("attempts", attempts).With("url", safeURL)
	if lastStatus != 0 {
		e = e.With("status", lastStatus)
	}
	e.Err = lastErr
	return Media{}, e
}

// guardRedirects returns a copy of c whose redirects the guarded client
// gc judges before c's own CheckRedirect.
func guardRedirects(c, gc *http.Client) *http.Client {
	out := *c
	own := c.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := gc.CheckRedirect(req, via); err != nil {
			return err
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
	return &out
}

// fetchInterrupted is the error of a Fetch whose ctx ended.
func fetchInterrupted(op string, ctx context.Context, err error, safeURL string, attempts int) error {
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	var e *fault.Error
	if errors.Is(err, context.DeadlineExceeded) {
		e = fault.E(op, fault.ProviderTimeout, "The media download did not finish in time.")
	} else {
		e = fault.E(op, fault.ProviderUnavailable, "The media download was interrupted.").With("reason", "cancelled")
	}
	e = e.With("attempts", attempts).With("url", safeURL)
	e.Err = err
	return e
}

// finalFetchError returns the error of a GET that no retry fixes: the
// guard refused the URL, an address or a redirect, or the body is over its
// bound. It keeps the guard's code and details, adds the redacted URL and
// the attempts, and returns nil for any other failure.
func finalFetchError(op string, err error, u *url.URL, safeURL string, attempt int) error {
	var fe *fault.Error
	if !errors.As(err, &fe) || !(errors.Is(err, urlguard.ErrRefused) || fe.Code == fault.PayloadTooLarge) {
		return nil
	}
	e := fe.With("url", safeURL).With("attempts", attempt)
	e.Op, e.Err = op, redactErr(err, u)
	return e
}

// tooLarge is the error of media over limit bytes.
func tooLarge(op string, limit int64) *fault.Error {
	return fault.E(op, fault.PayloadTooLarge, "The provider's media is larger than the platform accepts.").With("limit", limit)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// discard drains a little of a body, so its connection can be reused, and
// closes it.
func discard(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}

// redactURL returns u's scheme, host and path: never its user info, query
// or fragment.
func redactURL(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

// redactErr returns err with every URL it names reduced to scheme, host and
// path, and with orig's query and fragment removed from its text; errors.Is
// and errors.As still reach the cause.
func redactErr(err error, orig *url.URL) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		safe := "[unparsable url]"
		if pu, perr := url.Parse(ue.URL); perr == nil {
			safe = redactURL(pu)
		}
		msg = (&url.Error{Op: ue.Op, URL: safe, Err: ue.Err}).Error()
	}
	for _, s := range []string{orig.RawQuery, orig.Fragment, orig.EscapedFragment()} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose text hides a URL's secrets.
type redactedError struct {
	msg string
	err error
}

// Error returns the redacted text.
func (e *redactedError) Error() string { return e.msg }

// Unwrap returns the original error, for errors.Is and errors.As.
func (e *redactedError) Unwrap() error { return e.err }

// mediaBody is a Media's Body: the peeked reader over the response body,
// failing a read past the limit (urlguard.LimitReader).
type mediaBody struct {
	io.Reader
	c io.Closer
	// guard, when set, is the Fetch's own guard, whose idle connections
	// close with the body.
	guard *urlguard.Guard
}

// ownedGuard is guard when the Fetch made it for itself, else nil.
func ownedGuard(guard *urlguard.Guard, owned bool) *urlguard.Guard {
	if owned {
		return guard
	}
	return nil
}

// Close closes the response body (and the idle connections of the Fetch's
// own guard).
func (b *mediaBody) Close() error {
	err := b.c.Close()
	if b.guard != nil {
		b.guard.CloseIdleConnections()
	}
	return err
}
