// Package iris is the attestation adapter of package cctp: Circle's Iris
// API, V2 wire (web3.md §2.5, §2.6). Messages reads GET
// /v2/messages/{sourceDomain}?transactionHash=0x..: 404 means not indexed
// yet (cctp.ErrNotIndexed, keep polling); each message is pending
// (attestation "PENDING") or complete (hex signatures). Fees reads GET
// /v2/burn/USDC/fees/{source}/{destination}. Bodies wrapped in {"data":
// ...}, as older pages answer, are read too.
//
// A 429 makes the adapter back off: for the Retry-After the service gave,
// else Config.BackOff (five minutes, as Circle's own client waits), every
// call answers PROVIDER_UNAVAILABLE with details.reason rate_limited and
// retryAfterSeconds without sending a request. The back-off is the
// adapter's, so per host. Any other failure (a transport error, a status
// other than 200, 404 and 429, a malformed body) is PROVIDER_UNAVAILABLE
// with details.reason unavailable or malformed_answer. The base URL is
// the adapter's only destination, and every request goes through the
// HTTP client of its configuration: nil means a urlguard client.
package iris

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/web3/cctp"
)

// The service's hosts (no key).
const (
	// MainnetURL is Iris on mainnet.
	MainnetURL = "https://iris-api.circle.com"
	// SandboxURL is Iris on the testnets.
	SandboxURL = "https://iris-api-sandbox.circle.com"
)

// Defaults of Config.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultBackOff          = 5 * time.Minute
	DefaultMaxResponseBytes = 1 << 20
)

// Clock tells the time the back-off is measured on.
type Clock interface {
	Now() time.Time
}

// Config configures a Client.
type Config struct {
	// BaseURL is the service's base (MainnetURL, SandboxURL or a
	// simulator's URL). Required.
	BaseURL string
	// HTTPClient makes the requests; nil means a urlguard client, and
	// BaseURL must pass its guard.
	HTTPClient *http.Client
	// Timeout bounds each call on top of the caller's context; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// BackOff is how long to stop calling after a 429 without
	// Retry-After; zero means DefaultBackOff.
	BackOff time.Duration
	// MaxResponseBytes bounds an answer's body; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Clock measures the back-off; nil means the wall clock.
	Clock Clock
}

// Client is the adapter. It is safe for concurrent use.
type Client struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	backOff time.Duration
	max     int64
	clock   Clock

	mu    sync.Mutex
	until time.Time // no request before it (after a 429)
}

var _ cctp.Attestations = (*Client)(nil)

// wallClock is the real time.
type wallClock struct{}

// Now returns the current time.
func (wallClock) Now() time.Time { return time.Now() }

// New returns a Client for cfg. It makes no network call.
func New(cfg Config) (*Client, error) {
	const op = "iris.New"
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fault.Invalid(op, "baseUrl", "The base URL must be an absolute http(s) URL without query.")
	}
	if cfg.Timeout < 0 || cfg.BackOff < 0 || cfg.MaxResponseBytes < 0 {
		return nil, fault.Invalid(op, "timeout", "Limits must not be negative.")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.BackOff == 0 {
		cfg.BackOff = DefaultBackOff
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout, MaxBodyBytes: cfg.MaxResponseBytes + 1})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.BaseURL); err != nil {
			return nil, fault.Invalid(op, "baseUrl", "The base URL is not allowed by the outbound URL policy.").With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), hc: cfg.HTTPClient, timeout: cfg.Timeout, backOff: cfg.BackOff,
		max: cfg.MaxResponseBytes, clock: cfg.Clock}, nil
}

// errNotFound marks a 404 answer.
var errNotFound = errors.New("iris: 404")

// get fetches path and returns a 200 answer's body; errNotFound on 404.
func (c *Client) get(ctx context.Context, op, path string) ([]byte, error) {
	now := c.clock.Now()
	c.mu.Lock()
	until := c.until
	c.mu.Unlock()
	if now.Before(until) {
		return nil, rateLimited(op, until.Sub(now))
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL stays out of errors
		}
		return nil, unavailable(op, "unavailable", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return nil, unavailable(op, "unavailable", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		if int64(len(body)) > c.max {
			return nil, unavailable(op, "malformed_answer", fmt.Errorf("the answer exceeds %d bytes", c.max))
		}
		return body, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, errNotFound
	case resp.StatusCode == http.StatusTooManyRequests:
		wait := c.backOff
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		c.mu.Lock()
		if u := now.Add(wait); u.After(c.until) {
			c.until = u
		}
		c.mu.Unlock()
		return nil, rateLimited(op, wait)
	}
	return nil, unavailable(op, "unavailable", fmt.Errorf("status %d", resp.StatusCode))
}

// rateLimited is the back-off's answer.
func rateLimited(op string, wait time.Duration) error {
	secs := int64((wait + time.Second - 1) / time.Second)
	return fault.E(op, fault.ProviderUnavailable, "The attestation service asked to slow down; retry later.").
		With("reason", "rate_limited").With("retryAfterSeconds", secs)
}

// unavailable is any other failure.
func unavailable(op, reason string, err error) error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The attestation service cannot be read now; retry later.",
		Details: map[string]any{"reason": reason}, Err: err}
}

// wireMessage is one message of the V2 messages answer.
type wireMessage struct {
	Message     string `json:"message"`
	EventNonce  string `json:"eventNonce"`
	Attestation string `json:"attestation"`
	Status      string `json:"status"`
}

// messagesAnswer is the V2 messages answer, bare or wrapped in data.
type messagesAnswer struct {
	Messages []wireMessage `json:"messages"`
	Data     *struct {
		Messages []wireMessage `json:"messages"`
	} `json:"data"`
}

// Messages implements cctp.Attestations.
func (c *Client) Messages(ctx context.Context, source cctp.Domain, tx cctp.TxHash) ([]cctp.Attested, error) {
	const op = "iris.Messages"
	body, err := c.get(ctx, op, "/v2/messages/"+strconv.FormatUint(uint64(source), 10)+"?transactionHash="+tx.String())
	if errors.Is(err, errNotFound) {
		return nil, cctp.ErrNotIndexed
	}
	if err != nil {
		return nil, err
	}
	var a messagesAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, unavailable(op, "malformed_answer", err)
	}
	msgs := a.Messages
	if msgs == nil && a.Data != nil {
		msgs = a.Data.Messages
	}
	if len(msgs) == 0 {
		return nil, cctp.ErrNotIndexed
	}
	out := make([]cctp.Attested, 0, len(msgs))
	for _, m := range msgs {
		raw, ok := cctp.ParseHexBytes(m.Message)
		if !ok {
			return nil, unavailable(op, "malformed_answer", errors.New("a message is not 0x hex"))
		}
		at := cctp.Attested{Message: raw, Status: cctp.AttestationStatus(m.Status), EventNonce: m.EventNonce}
		if at.Status == cctp.AttestationComplete {
			sig, ok := cctp.ParseHexBytes(m.Attestation)
			if !ok {
				return nil, unavailable(op, "malformed_answer", errors.New("a complete message's attestation is not 0x hex"))
			}
			at.Attestation = sig
		}
		out = append(out, at)
	}
	return out, nil
}

// wireTier is one row of the fee table.
type wireTier struct {
	FinalityThreshold uint32      `json:"finalityThreshold"`
	MinimumFee        json.Number `json:"minimumFee"`
}

// Fees implements cctp.Attestations.
func (c *Client) Fees(ctx context.Context, source, destination cctp.Domain) ([]cctp.FeeTier, error) {
	const op = "iris.Fees"
	body, err := c.get(ctx, op, "/v2/burn/USDC/fees/"+strconv.FormatUint(uint64(source), 10)+"/"+
		strconv.FormatUint(uint64(destination), 10))
	if errors.Is(err, errNotFound) {
		return nil, unavailable(op, "route_unknown", errors.New("the service knows no fees for the route"))
	}
	if err != nil {
		return nil, err
	}
	var tiers []wireTier
	if err := json.Unmarshal(body, &tiers); err != nil {
		var wrapped struct {
			Data []wireTier `json:"data"`
		}
		if err := json.Unmarshal(body, &wrapped); err != nil {
			return nil, unavailable(op, "malformed_answer", err)
		}
		tiers = wrapped.Data
	}
	out := make([]cctp.FeeTier, 0, len(tiers))
	for _, t := range tiers {
		out = append(out, cctp.FeeTier{FinalityThreshold: t.FinalityThreshold, MinimumFee: t.MinimumFee.String()})
	}
	return out, nil
}
