// Package facilitator adapts a remote x402 facilitator to the
// x402.Facilitator port: its facilitator API (web3.md §1.7), POST /verify
// and /settle with {"x402Version":2,"paymentPayload","paymentRequirements"}
// and GET /supported.
//
// # Answers
//
// Facilitators refuse in more than one way, and the adapter takes them
// all (web3.md §1.7, guidance): a 200 with isValid or success false (the
// reference's TypeScript example), any status whose JSON body carries
// invalidReason or errorReason (the reference's Go client's typed
// errors), and a 4xx or 500 {"error": "<reason>: <message>"} whose reason
// is one of the protocol's (the reference's Go example). Anything else (a
// transport failure, a timeout, a 5xx without a reason, a malformed or
// oversized body) means the facilitator did not answer:
// PROVIDER_UNAVAILABLE, which for /settle means the outcome is unknown. A
// 429 on /supported is retried once after its Retry-After (at most 2
// seconds), as the reference's client does; /verify and /settle are never
// retried here, since a settle may have happened.
//
// The adapter sends through the HTTP client it is given (a urlguard
// client by default: https and public addresses only) and bounds each
// call and each answer.
package facilitator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/web3/x402"
)

// DefaultTimeout bounds each call when Config.Timeout is zero; a settle
// waits for confirmation, so it is generous.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds an answer's body.
const maxResponseBytes = 1 << 20

// maxRetryAfter bounds the wait before /supported's one retry.
const maxRetryAfter = 2 * time.Second

// Config configures a Client.
type Config struct {
	// BaseURL is the facilitator's base URL, which /verify, /settle and
	// /supported are appended to; it names the facilitator in checks and
	// views, so it carries no credentials. Required.
	BaseURL string
	// HTTPClient makes the requests; nil means a urlguard client (https,
	// public addresses only), which BaseURL must pass.
	HTTPClient *http.Client
	// Timeout bounds each call on top of the caller's context; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// Client is a remote facilitator. It is safe for concurrent use.
type Client struct {
	base    string
	hc      *http.Client
	timeout time.Duration
}

var _ x402.Facilitator = (*Client)(nil)

// New returns a Client for cfg. It makes no network call.
func New(cfg Config) (*Client, error) {
	const op = "facilitator.New"
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		// The URL is the facilitator's name in checks and views: it carries
		// no credentials.
		return nil, fault.Invalid(op, "baseUrl", "The facilitator's base URL must be an absolute http(s) URL without query or user.")
	}
	if cfg.Timeout < 0 {
		return nil, fault.Invalid(op, "timeout", "The timeout must not be negative.")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout, MaxBodyBytes: maxResponseBytes + 1})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.BaseURL); err != nil {
			return nil, fault.Invalid(op, "baseUrl", "The facilitator's URL is not allowed by the outbound URL policy.").
				With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), hc: cfg.HTTPClient, timeout: cfg.Timeout}, nil
}

// Name is the facilitator's base URL.
func (c *Client) Name() string { return c.base }

// body is the body of /verify and /settle.
type body struct {
	X402Version         int                 `json:"x402Version"`
	PaymentPayload      x402.PaymentPayload `json:"paymentPayload"`
	PaymentRequirements x402.Requirements   `json:"paymentRequirements"`
}

// Supported reads GET /supported.
func (c *Client) Supported(ctx context.Context) (x402.Supported, error) {
	const op = "facilitator.Supported"
	status, raw, h, err := c.call(ctx, op, http.MethodGet, "/supported", nil)
	if err == nil && status == http.StatusTooManyRequests {
		wait := maxRetryAfter
		if s, perr := strconv.Atoi(h.Get("Retry-After")); perr == nil && s >= 0 && time.Duration(s)*time.Second < wait {
			wait = time.Duration(s) * time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return x402.Supported{}, unavailable(op, "timeout", ctx.Err())
		case <-t.C:
		}
		status, raw, _, err = c.call(ctx, op, http.MethodGet, "/supported", nil)
	}
	if err != nil {
		return x402.Supported{}, err
	}
	if status != http.StatusOK {
		return x402.Supported{}, unavailable(op, "status", fmt.Errorf("status %d", status)).With("status", status)
	}
	var s x402.Supported
	if err := json.Unmarshal(raw, &s); err != nil {
		return x402.Supported{}, unavailable(op, "malformed", err)
	}
	return s, nil
}

// Verify posts /verify.
func (c *Client) Verify(ctx context.Context, r x402.VerifyRequest) (x402.VerifyResponse, error) {
	const op = "facilitator.Verify"
	status, raw, err := c.post(ctx, op, "/verify", r.Payload, r.Requirements)
	if err != nil {
		return x402.VerifyResponse{}, err
	}
	var vr x402.VerifyResponse
	decoded := json.Unmarshal(raw, &vr) == nil
	switch {
	case status == http.StatusOK && decoded:
		if !vr.IsValid && vr.InvalidReason == "" {
			vr.InvalidReason = "invalid_payload"
		}
		return vr, nil
	case decoded && vr.InvalidReason != "":
		vr.IsValid = false
		return vr, nil
	}
	if reason, msg, ok := goError(status, raw); ok {
		return x402.VerifyResponse{InvalidReason: reason, InvalidMessage: msg}, nil
	}
	return x402.VerifyResponse{}, unavailable(op, "status", fmt.Errorf("status %d", status)).With("status", status)
}

// Settle posts /settle. Any error means the outcome is unknown.
func (c *Client) Settle(ctx context.Context, r x402.SettleRequest) (x402.SettleResponse, error) {
	const op = "facilitator.Settle"
	status, raw, err := c.post(ctx, op, "/settle", r.Payload, r.Requirements)
	if err != nil {
		return x402.SettleResponse{}, err
	}
	var sr x402.SettleResponse
	decoded := json.Unmarshal(raw, &sr) == nil
	switch {
	case status == http.StatusOK && decoded && sr.Success && sr.Transaction != "":
		return sr, nil
	case status == http.StatusOK && decoded && !sr.Success:
		if sr.ErrorReason == "" {
			sr.ErrorReason = "unexpected_settle_error"
		}
		sr.Transaction = ""
		return sr, nil
	case decoded && sr.ErrorReason != "" && !sr.Success:
		sr.Transaction = ""
		return sr, nil
	}
	if reason, msg, ok := goError(status, raw); ok {
		return x402.SettleResponse{ErrorReason: reason, ErrorMessage: msg, Network: r.Requirements.Network}, nil
	}
	return x402.SettleResponse{}, unavailable(op, "status", fmt.Errorf("status %d", status)).With("status", status)
}

// post sends a /verify or /settle body.
func (c *Client) post(ctx context.Context, op, path string, p x402.PaymentPayload, req x402.Requirements) (int, []byte, error) {
	b, err := json.Marshal(body{X402Version: x402.Version, PaymentPayload: p, PaymentRequirements: req})
	if err != nil {
		return 0, nil, fault.Wrap(op, err)
	}
	status, raw, _, err := c.call(ctx, op, http.MethodPost, path, b)
	return status, raw, err
}

// call sends one request and returns its status, its body (bounded) and
// its headers; an error means no answer arrived.
func (c *Client) call(ctx context.Context, op, method, path string, b []byte) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if b != nil {
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, fault.Wrap(op, err)
	}
	req.Header.Set("Accept", "application/json")
	if b != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		reason := "transport"
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "timeout"
		}
		return 0, nil, nil, unavailable(op, reason, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return 0, nil, nil, unavailable(op, "transport", err)
	}
	if len(raw) > maxResponseBytes {
		return 0, nil, nil, unavailable(op, "too_large", errors.New("the answer is over 1 MiB"))
	}
	return resp.StatusCode, raw, resp.Header, nil
}

// goError reads the reference Go facilitator's error answer, a 4xx or
// 500 {"error": "<reason>: <message>"}, when its reason is one of the
// protocol's refusals (an unexpected_* reason is the facilitator's own
// failure, not a refusal).
func goError(status int, raw []byte) (reason, msg string, ok bool) {
	if status < 400 || status > 500 {
		return "", "", false
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		return "", "", false
	}
	reason, msg, _ = strings.Cut(e.Error, ":")
	reason, msg = strings.TrimSpace(reason), strings.TrimSpace(msg)
	for _, p := range []string{"invalid_", "insufficient_funds", "unsupported_", "duplicate_settlement"} {
		if strings.HasPrefix(reason, p) && !strings.ContainsAny(reason, " \t") {
			return reason, msg, true
		}
	}
	return "", "", false
}

// unavailable is the PROVIDER_UNAVAILABLE of a facilitator that did not
// answer, with why in details.reason.
func unavailable(op, reason string, err error) *fault.Error {
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The payment facilitator did not answer.",
		Details: map[string]any{"reason": reason}, Err: err}
}
