package jupiter

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
)

// DefaultBaseURL is the Metis V1 base of Jupiter's keyed host. Config
// does not fall back to it: a Client calls only the URL it is given.
const DefaultBaseURL = "https://api.jup.ag/swap/v1"

// DefaultTimeout bounds each call when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultMaxResponseBytes bounds an answer's body when
// Config.MaxResponseBytes is zero. A quote is a few kilobytes and a set of
// swap instructions some tens.
const DefaultMaxResponseBytes = 1 << 20

// Version names the API generation whose request fields a Client sends.
type Version string

// The versions.
const (
	// V1 sends userPublicKey in /swap-instructions (Metis V1, the default).
	V1 Version = "v1"
	// V2 sends taker instead, as Swap V2's quote-then-swap paths take it.
	V2 Version = "v2"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API base the paths /quote and /swap-instructions are
	// appended to (DefaultBaseURL, or a simulator's URL). Required.
	BaseURL string
	// APIKey is sent as x-api-key on every request; empty means keyless.
	// It is never logged and never put in an error: Config's String,
	// GoString and LogValue redact it.
	APIKey string
	// Version chooses the request fields; empty means V1. Answers of either
	// generation are read the same way.
	Version Version
	// HTTPClient makes the requests. Nil means a urlguard client (https
	// only, public addresses only), and BaseURL must pass its guard. A
	// client that is set owns the outbound policy: pass a urlguard client
	// to keep it (a simulator on loopback needs one with AllowHTTP and its
	// exact address in AllowLoopback).
	HTTPClient *http.Client
	// Timeout bounds each call on top of the caller's context. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes bounds an answer's body. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// String renders cfg with the API key redacted.
func (cfg Config) String() string {
	key := ""
	if cfg.APIKey != "" {
		key = "[redacted]"
	}
	return "jupiter.Config{BaseURL: " + cfg.BaseURL + ", APIKey: " + key + ", Version: " + string(cfg.Version) +
		", Timeout: " + cfg.Timeout.String() + "}"
}

// GoString renders cfg with the API key redacted, for %#v.
func (cfg Config) GoString() string { return cfg.String() }

// LogValue renders cfg for log/slog with the API key redacted.
func (cfg Config) LogValue() slog.Value {
	return slog.GroupValue(slog.String("baseUrl", cfg.BaseURL), slog.Bool("apiKey", cfg.APIKey != ""),
		slog.String("version", string(cfg.Version)), slog.Duration("timeout", cfg.Timeout))
}

// Client is the Jupiter adapter. It is safe for concurrent use.
type Client struct {
	base    string
	key     string
	version Version
	hc      *http.Client
	timeout time.Duration
	max     int64
}

// New returns a Client for cfg. It makes no network call.
func New(cfg Config) (*Client, error) {
	const op = "jupiter.New"
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fault.Invalid(op, "baseUrl", "The base URL must be an absolute http(s) URL without query.")
	}
	switch cfg.Version {
	case "":
		cfg.Version = V1
	case V1, V2:
	default:
		return nil, fault.Invalid(op, "version", "The version must be v1 or v2.")
	}
	if cfg.Timeout < 0 || cfg.MaxResponseBytes < 0 {
		return nil, fault.Invalid(op, "timeout", "Limits must not be negative.")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return nil, fault.Invalid(op, "apiKey", "The API key must be one line.")
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout, MaxBodyBytes: cfg.MaxResponseBytes + 1})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.BaseURL); err != nil {
			return nil, fault.Invalid(op, "baseUrl", "The base URL is not allowed by the outbound URL policy.").
				With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), key: cfg.APIKey, version: cfg.Version,
		hc: cfg.HTTPClient, timeout: cfg.Timeout, max: cfg.MaxResponseBytes}, nil
}

// answer is a 200 answer.
type answer struct {
	body      []byte
	requestID string
}

// call sends one request and returns the body of a 200 answer; any other
// outcome is mapped to the package's errors.
func (c *Client) call(ctx context.Context, op, method, path string, query url.Values, body []byte) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return answer{}, fault.Wrap(op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("x-api-key", c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, transportError(op, ctx, err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.max {
		return answer{}, unavailable(op, ReasonResponseTooLarge, "The swap aggregator's answer is too large.", false, nil).
			With("limit", c.max)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return answer{}, transportError(op, ctx, err)
	}
	if int64(len(raw)) > c.max {
		return answer{}, unavailable(op, ReasonResponseTooLarge, "The swap aggregator's answer is too large.", false, nil).
			With("limit", c.max)
	}
	if resp.StatusCode != http.StatusOK {
		return answer{}, statusError(op, resp.StatusCode, raw, resp.Header, c.key)
	}
	return answer{body: raw, requestID: clip(resp.Header.Get("x-api-gateway-request-id"), 100)}, nil
}
