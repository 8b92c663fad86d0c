package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/ai"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// MaxErrorBody bounds how much of a refusal's body is read.
const MaxErrorBody = 64 << 10

// The bounds an adapter applies when its Config leaves them zero.
const (
	// DefaultTimeout bounds a whole call.
	DefaultTimeout = 5 * time.Minute
	// DefaultIdleTimeout bounds the wait for each line of a stream (and
	// for its headers).
	DefaultIdleTimeout = 90 * time.Second
	// DefaultMaxResponseBytes bounds an answer's body.
	DefaultMaxResponseBytes = 16 << 20
	// MaxEventBytes bounds one stream event.
	MaxEventBytes = 1 << 20
)

// CheckBase validates an adapter's base URL: absolute http(s), no user
// info, no query. It never echoes the URL.
func CheckBase(op, base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fault.Invalid(op, "baseUrl", "The base URL must be an absolute http(s) URL.")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fault.Invalid(op, "baseUrl", "The base URL must carry no credentials, query or fragment.")
	}
	return strings.TrimRight(base, "/"), nil
}

// GuardedClient returns the default client of an adapter: a urlguard
// client (https only, public addresses only, no proxy from the
// environment) whose whole-exchange bound and header wait are the call's
// total deadline, and whose bodies are at most maxBody bytes. base must
// pass the guard.
func GuardedClient(op, base string, total time.Duration, maxBody int64) (*http.Client, error) {
	g, err := urlguard.New(urlguard.Config{Timeout: total + time.Second, ResponseHeaderTimeout: total, MaxBodyBytes: maxBody})
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if _, err := g.CheckURL(base); err != nil {
		return nil, fault.Invalid(op, "baseUrl", "The base URL is not allowed by the outbound URL policy.").
			With("reason", urlguard.Reason(err))
	}
	return g.Client(), nil
}

// Options are the settings every adapter's Config carries.
type Options struct {
	// Base is the base URL as CheckBase returned it.
	Base string
	// Key is the adapter's API key, kept out of every cause.
	Key string
	// HTTPClient sends the requests; nil means GuardedClient's.
	HTTPClient *http.Client
	// Timeout, IdleTimeout and MaxResponseBytes bound a call; zero means
	// DefaultTimeout, DefaultIdleTimeout and DefaultMaxResponseBytes.
	Timeout, IdleTimeout time.Duration
	MaxResponseBytes     int64
	// Now tells the time for retry hints; nil means time.Now.
	Now func() time.Time
	// Refuse is the adapter's Client.Refuse.
	Refuse func(status int, h http.Header, body []byte) ai.Failure
}

// NewClient returns an adapter's Client of o: zero bounds take their
// defaults, and a nil HTTP client is GuardedClient's, which o.Base must
// pass. Stream events are at most MaxEventBytes.
func NewClient(op string, o Options) (Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		hc, err := GuardedClient(op, o.Base, o.Timeout, o.MaxResponseBytes)
		if err != nil {
			return Client{}, err
		}
		o.HTTPClient = hc
	}
	return Client{HC: o.HTTPClient, Base: o.Base, Redact: NewRedactor(o.Key, o.Base),
		Total: o.Timeout, Idle: o.IdleTimeout, MaxBody: o.MaxResponseBytes, MaxEvent: MaxEventBytes,
		Now: o.Now, Refuse: o.Refuse, RequestID: RequestID}, nil
}

// Client sends an adapter's requests and maps what goes wrong.
type Client struct {
	// HC sends the requests.
	HC *http.Client
	// Base is the base URL, without a trailing slash.
	Base string
	// Redact keeps the key and the base URL out of causes.
	Redact Redactor
	// Total bounds a call; Idle bounds the wait for each stream line.
	Total, Idle time.Duration
	// MaxBody bounds an answer's body; MaxEvent one stream event.
	MaxBody  int64
	MaxEvent int
	// Now tells the time for HTTP-date and RFC 3339 retry hints.
	Now func() time.Time
	// Refuse maps a non-2xx answer to a failure (its code, class, reason
	// and cause, which is redacted here); Status, RetryAfter, RequestID
	// and the x-should-retry override are filled in here.
	Refuse func(status int, h http.Header, body []byte) ai.Failure
	// RequestID reads the provider's request id from an answer's header.
	RequestID func(h http.Header) string
}

// Answer is a 2xx answer being read under its watch.
type Answer struct {
	// Resp is the HTTP answer.
	Resp *http.Response
	// Watch bounds the call; Stop it when done.
	Watch *Watch
	// RequestID is the provider's request id.
	RequestID string
}

// Send posts body (or GETs, when body is nil) to path with header, and
// returns a 2xx answer; idle applies the idle deadline (streams).
func (c *Client) Send(ctx context.Context, op, method, path string, header http.Header, body any, idle bool) (*Answer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		rd = bytes.NewReader(b)
	}
	var w *Watch
	if idle {
		w = NewWatch(ctx, c.Total, c.Idle)
	} else {
		w = NewWatch(ctx, c.Total, 0)
	}
	req, err := http.NewRequestWithContext(w.Context(), method, c.Base+path, rd)
	if err != nil {
		w.Stop()
		return nil, fault.Wrap(op, c.Redact.Err(err))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		defer w.Stop()
		return nil, c.TransportErr(op, w, err, false, "")
	}
	w.Touch()
	rid := c.RequestID(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer w.Stop()
		defer resp.Body.Close()
		return nil, c.refusal(op, resp, w, rid)
	}
	return &Answer{Resp: resp, Watch: w, RequestID: rid}, nil
}

// refusal reads a non-2xx answer and maps it through Refuse.
func (c *Client) refusal(op string, resp *http.Response, w *Watch, rid string) error {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	if err != nil && (w.CallerErr() != nil || w.Expired() != "") {
		return c.TransportErr(op, w, err, false, rid)
	}
	f := c.Refuse(resp.StatusCode, resp.Header, body)
	f.Status = resp.StatusCode
	f.RequestID = rid
	if d := RetryAfter(resp.Header, c.Now()); d > 0 && f.RetryAfter == 0 {
		f.RetryAfter = d
	}
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("X-Should-Retry"))) {
	case "true":
		f.Retryable = true
	case "false":
		f.Retryable = false
	}
	if f.Cause == nil {
		f.Cause = fmt.Errorf("HTTP %d: %s", resp.StatusCode, Truncate(string(body), 300))
	}
	f.Cause = c.Redact.Err(f.Cause)
	return f.Err(op)
}

// ReadAll reads a 2xx answer's whole body, at most MaxBody bytes, and
// stops its watch.
func (c *Client) ReadAll(op string, a *Answer) ([]byte, error) {
	defer a.Watch.Stop()
	defer a.Resp.Body.Close()
	b, err := io.ReadAll(urlguard.LimitReader(a.Resp.Body, c.MaxBody, op))
	if err != nil {
		return nil, c.TransportErr(op, a.Watch, err, false, a.RequestID)
	}
	return b, nil
}

// Complete posts body to path and decodes the 2xx answer with decode;
// a failure decode reports carries the request id and a redacted cause.
func (c *Client) Complete(ctx context.Context, op, path string, header http.Header, body any,
	decode func(raw []byte) (ai.Response, *ai.Failure)) (ai.Response, error) {
	a, err := c.Send(ctx, op, http.MethodPost, path, header, body, false)
	if err != nil {
		return ai.Response{}, err
	}
	raw, err := c.ReadAll(op, a)
	if err != nil {
		return ai.Response{}, err
	}
	resp, f := decode(raw)
	if f != nil {
		f.RequestID = a.RequestID
		f.Cause = c.Redact.Err(f.Cause)
		return ai.Response{}, f.Err(op)
	}
	resp.UpstreamRequestID = a.RequestID
	return resp, nil
}

// Stream posts body to path under the idle deadline and reads the answer
// as a stream of dec's dialect up to its first event, so that a failure
// before any output is returned here.
func (c *Client) Stream(ctx context.Context, op, path string, header http.Header, body any, dec Decoder) (ai.Stream, error) {
	a, err := c.Send(ctx, op, http.MethodPost, path, header, body, true)
	if err != nil {
		return nil, err
	}
	s := c.NewStream(op, a, dec, Acc{})
	if err := s.First(); err != nil {
		return nil, err
	}
	return s, nil
}

// GetJSON gets path and decodes the answer's body into v; a body that
// does not decode, or that valid refuses, is a malformed answer whose
// cause names what.
func (c *Client) GetJSON(ctx context.Context, op, path string, header http.Header, what string, v any, valid func() bool) error {
	a, err := c.Send(ctx, op, http.MethodGet, path, header, nil, false)
	if err != nil {
		return err
	}
	raw, err := c.ReadAll(op, a)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil || !valid() {
		f := Malformed("malformed_response", fmt.Errorf("%s: %v", what, err))
		f.RequestID = a.RequestID
		return f.Err(op)
	}
	return nil
}

// TransportErr maps a failed exchange or body read. started says output
// was already given to the caller (the class is then interrupted). The
// caller's own context ending returns its cause, uncoded.
func (c *Client) TransportErr(op string, w *Watch, err error, started bool, rid string) error {
	if cerr := w.CallerErr(); cerr != nil {
		return fault.Wrap(op, cerr)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text holds the URL
	}
	f := ai.Failure{Code: fault.ProviderUnavailable, Class: ai.ClassServer, Retryable: true, RequestID: rid, Reason: "unreachable"}
	if started {
		f.Reason = "dropped"
	}
	var ne net.Error
	switch reason := w.Expired(); {
	case reason != "":
		f.Code, f.Reason = fault.ProviderTimeout, reason
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		f.Code, f.Reason = fault.ProviderTimeout, "timeout"
	case errors.Is(err, urlguard.ErrRefused):
		f.Reason, f.Retryable = "address_refused", false
	case fault.Is(err, fault.PayloadTooLarge), errors.Is(err, ErrEventTooLarge):
		f.Class, f.Reason, f.Retryable = ai.ClassMalformed, "too_large", false
	}
	if started {
		f.Class, f.Retryable = ai.ClassInterrupted, false
	}
	f.Cause = c.Redact.Err(err)
	return f.Err(op)
}

// Arguments normalizes a tool call's arguments text to valid JSON (see
// ai.ToolCall.Arguments): "{}" when empty, the text when it is JSON, else
// a JSON string holding the text.
func Arguments(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text)
	return b
}

// CodeText reads an error code that is a JSON string or number as text.
func CodeText(raw json.RawMessage) string {
	if Absent(raw) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
