// Package providerb implements generation.MusicProvider for provider B,
// MusicAPI.ai "Sonic" (a Suno-backed wrapper with snake_case JSON, a clip
// array per task and body-signed webhooks), as the wire reference
// (shared/spec/music-providers.md, section 2) describes it.
//
// # Endpoints
//
//	POST /api/v1/sonic/create        create (task_type=create_music)
//	GET  /api/v1/sonic/task/{id}     recovery poll
//	GET  /api/v1/get-credits         balance {"credits", "extra_credits"}
//
// Every request carries Authorization: Bearer <key>. The key is never logged
// and never put in an error; provider messages are kept as error causes (for
// logs) and as TaskState.FailureMessage, never as client-facing messages.
//
// # Models
//
// Config.ModelMap maps a platform model id to B's `mv`. DefaultModelMap maps
// "v3.5", "v4", "v4.5", "v4.5-plus" and "v5" to sonic-v3-5, sonic-v4,
// sonic-v4-5, sonic-v4-5-plus and sonic-v5; B's own mv names are accepted
// unchanged. An empty model means Config.DefaultModel ("v5"). An unmapped
// model is INVALID_INPUT (details.field "model").
//
// # Create
//
// A request with a Title or a Style is sent in custom mode: prompt (lyrics),
// title and tags. Otherwise it is sent in description mode:
// gpt_description_prompt. The reference's caps are checked before sending
// (INVALID_INPUT, details.field names the platform field): lyrics under 3000
// characters for sonic-v3-5/v4 and at most 5000 for v4-5 and later; title
// under 80; tags under 200; description under 200 (the reference has both
// <=400 and <200; the stricter is used so the provider never rejects what
// the adapter let through). Description mode needs a prompt. The callback
// URL goes out as webhook_url and Credential.CallbackKey as webhook_secret,
// so each create's webhooks are signed with the platform's secret. B has no
// duration field: SupportsDuration is false for every model.
//
// # Errors (every error is a *fault.Error, op "providerb.<Method>")
//
//   - 400 → INVALID_INPUT; on Query "task not found."/"missing task id." →
//     NOT_FOUND (F13).
//   - 401 → PROVIDER_CREDENTIAL_INVALID.
//   - 402, and 403 whose message names credits or a subscription
//     ("The remaining credits are not enough...") →
//     PROVIDER_CREDITS_EXHAUSTED, never retryable on the same credential.
//   - 403 whose message names copyright, inappropriate content, moderation,
//     sensitive words or policy → CONTENT_POLICY_REJECTED; any other 403 →
//     PROVIDER_CREDENTIAL_INVALID (the key may not do this).
//   - HTTP 429, or any answer whose message says "too many requests" or
//     "rate limit" → RATE_LIMITED, details.retryable = true. This is an
//     ASSUMPTION: B documents no throttle code; the throttle seen on
//     Suno-backed wrappers is a 429 "Too many requests", and a throttled
//     create never entered B's queue, so a retry cannot duplicate a task.
//   - 5xx, other statuses, an unreadable or malformed body (F5) →
//     PROVIDER_UNAVAILABLE, details.retryable = true.
//   - No answer in time (Config.Timeout or the caller's deadline) →
//     PROVIDER_TIMEOUT, details.retryable = true. On Create this is
//     ambiguous (details.ambiguous = true, F4): the task may exist and be
//     billed; the caller waits for the webhook (matched by the attempt token
//     in the callback URL) or polls, and never re-sends blindly. A transport
//     failure on Create after the connection was made is ambiguous too.
//   - A request the URL guard refuses (see Outbound policy) →
//     PROVIDER_UNAVAILABLE, details.retryable = true; refused before
//     connecting, nothing was sent, so a Create is not ambiguous.
//
// # Outbound policy
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, every resolved address judged and
// pinned, redirects re-checked, no proxy from the environment), and New
// refuses a BaseURL that guard refuses.
//
// When a body carries a numeric `code` other than 200 it decides over the
// HTTP status (the reference's "the body code decides").
//
// # Task states
//
// Each clip has a state: pending, running, streaming, succeeded, failed. The
// task stage is: any clip failed → failed (GENERATION_FAILED, or
// CONTENT_POLICY_REJECTED when the message names moderation, copyright,
// inappropriate content, sensitive words or policy); every clip succeeded
// with a usable MP3 URL → provider_complete; any clip streaming or
// succeeded → first; otherwise queued. A streaming clip's audio_url is a
// stream link and is reported as Track.StreamURL only, never as AudioURL
// (F8). Empty and placeholder URLs (".../None.mp3", "null", non-http) are
// dropped (F10); a "succeeded" clip without a usable MP3 URL counts as not
// finished. `duration` is read as a number or a numeric string (seconds).
// B reports no per-task cost: CreditsConsumed stays nil and the platform
// uses the published price table (reference 2.6: 15 credits per create).
//
// # Webhooks
//
// VerifyCallback checks X-Webhook-Timestamp (unix seconds, within
// Config.CallbackSkew of now in both directions, default 5 minutes) and
// X-Webhook-Signature "sha256=<hex>" (a bare hex digest is accepted too)
// against HMAC-SHA256(CallbackKey, timestamp + "." + rawBody) on the raw
// bytes, in constant time. Failures are CALLBACK_FAILED with
// details.reason: no_secret, missing_timestamp, bad_timestamp, stale,
// missing_signature, bad_signature. ParseCallback reads the get-music shape
// {code, data:[clips]} leniently (F11: task_id or taskId at the top level,
// in a nested data object or per clip; data as an array or one object);
// X-Webhook-Event song.failed forces the failed stage.
//
// The signature covers the body (and the platform derives a different
// secret for every attempt unless the credential carries its own), so a
// captured webhook can only be replayed unchanged within the window, where
// the inbox deduplicates it: CallbackSignsBody is true and
// the platform takes a verified webhook's clips as B's word, unlike
// provider A's, whose signature leaves the body open. Receivers dedupe on
// X-Webhook-Id (F1); the merge is monotonic so a late streaming webhook after
// the completed one (F2) changes nothing.
package providerb

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/urlguard"
)

// Defaults of Config.
const (
	// DefaultBaseURL is B's API base.
	DefaultBaseURL = "https://api.musicapi.ai"
	// DefaultTimeout bounds one call when Config.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultCallbackSkew is the webhook timestamp window around now.
	DefaultCallbackSkew = 5 * time.Minute
	// DefaultModel is the platform model used when a request names none.
	DefaultModel = "v5"
	// maxBody bounds a provider answer read into memory.
	maxBody = 4 << 20
)

// Webhook header names B sends.
const (
	// HeaderWebhookID is the event id (dedupe key).
	HeaderWebhookID = "X-Webhook-Id"
	// HeaderWebhookEvent is song.completed or song.failed.
	HeaderWebhookEvent = "X-Webhook-Event"
	// HeaderWebhookTimestamp is the signing time in unix seconds.
	HeaderWebhookTimestamp = "X-Webhook-Timestamp"
	// HeaderWebhookSignature is "sha256=<hex HMAC-SHA256>".
	HeaderWebhookSignature = "X-Webhook-Signature"
)

// Webhook event names.
const (
	// EventCompleted is sent when clips reach succeeded.
	EventCompleted = "song.completed"
	// EventFailed is sent when clips reach failed.
	EventFailed = "song.failed"
)

// Clip states B reports.
const (
	StatePending   = "pending"
	StateRunning   = "running"
	StateStreaming = "streaming"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
)

// DefaultModelMap returns the default platform model id → mv table.
func DefaultModelMap() map[string]string {
	return map[string]string{
		"v3.5":      "sonic-v3-5",
		"v4":        "sonic-v4",
		"v4.5":      "sonic-v4-5",
		"v4.5-plus": "sonic-v4-5-plus",
		"v5":        "sonic-v5",
	}
}

// knownMV lists B's mv values (reference 2.2).
func knownMV(mv string) bool {
	switch mv {
	case "sonic-v3-5", "sonic-v4", "sonic-v4-5", "sonic-v4-5-plus", "sonic-v5":
		return true
	}
	return false
}

// Config configures a Client.
type Config struct {
	// BaseURL is B's API base; empty means DefaultBaseURL.
	BaseURL string
	// HTTPClient sends requests. Nil means a urlguard client (https only,
	// public addresses only; Timeout bounds each call), and BaseURL must
	// pass its guard. A client that is set owns the outbound policy: pass a
	// urlguard client to keep it (a simulator on loopback needs one with
	// AllowHTTP and its exact address in AllowLoopback).
	HTTPClient *http.Client
	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// CallbackSkew is how far a webhook timestamp may be from now, in either
	// direction; zero means DefaultCallbackSkew (5 minutes).
	CallbackSkew time.Duration
	// ModelMap maps platform model ids to B's mv; nil means
	// DefaultModelMap. B's own mv names are always accepted.
	ModelMap map[string]string
	// DefaultModel is used when a request names no model; empty means
	// DefaultModel.
	DefaultModel string
}

// Client is provider B's adapter. It is safe for concurrent use.
type Client struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	skew    time.Duration
	models  map[string]string
	defMod  string
}

var _ generation.MusicProvider = (*Client)(nil)

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	const op = "providerb.New"
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fault.Invalid(op, "baseURL", "The base URL must be an absolute http(s) URL.")
	}
	if cfg.Timeout < 0 || cfg.CallbackSkew < 0 {
		return nil, fault.Invalid(op, "timeout", "Durations must not be negative.")
	}
	c := &Client{base: base, hc: cfg.HTTPClient, timeout: cfg.Timeout, skew: cfg.CallbackSkew, defMod: cfg.DefaultModel}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.hc == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: c.timeout})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(base); err != nil {
			return nil, fault.Invalid(op, "baseURL", "The base URL is not allowed by the outbound URL policy.").
				With("reason", urlguard.Reason(err))
		}
		c.hc = g.Client()
	}
	if c.skew == 0 {
		c.skew = DefaultCallbackSkew
	}
	if c.defMod == "" {
		c.defMod = DefaultModel
	}
	src := cfg.ModelMap
	if src == nil {
		src = DefaultModelMap()
	}
	c.models = make(map[string]string, len(src))
	for k, v := range src {
		if !knownMV(v) {
			return nil, fault.Invalid(op, "modelMap."+k, "The model maps to an unknown mv.")
		}
		c.models[k] = v
	}
	return c, nil
}

// ID returns generation.ProviderB.
func (c *Client) ID() generation.ProviderID { return generation.ProviderB }

// SupportsDuration reports false: B has no duration field.
func (c *Client) SupportsDuration(string) bool { return false }

// CallbackSignsBody is true: B signs the timestamp and the raw body, so
// a verified webhook is the provider's word (its URLs still pass the media
// guard when fetched).
func (c *Client) CallbackSignsBody() bool { return true }

// CallbackSkew is how far a callback's timestamp may be from now, in
// either direction, for VerifyCallback to accept it (Config.CallbackSkew,
// DefaultCallbackSkew when unset). The OpenAPI document states it.
func (c *Client) CallbackSkew() time.Duration { return c.skew }

// MV returns B's mv for a platform model id, or false.
func (c *Client) MV(model string) (string, bool) {
	if model == "" {
		model = c.defMod
	}
	if mv, ok := c.models[model]; ok {
		return mv, true
	}
	if knownMV(model) {
		return model, true
	}
	return "", false
}

// createBody is B's create request.
type createBody struct {
	TaskType             string `json:"task_type"`
	CustomMode           bool   `json:"custom_mode"`
	MV                   string `json:"mv"`
	Prompt               string `json:"prompt,omitempty"`
	Title                string `json:"title,omitempty"`
	Tags                 string `json:"tags,omitempty"`
	GPTDescriptionPrompt string `json:"gpt_description_prompt,omitempty"`
	MakeInstrumental     bool   `json:"make_instrumental"`
	WebhookURL           string `json:"webhook_url,omitempty"`
	WebhookSecret        string `json:"webhook_secret,omitempty"`
}

// Create starts a generation with task_type create_music.
func (c *Client) Create(ctx context.Context, cr generation.Credential, r generation.CreateRequest) (generation.Created, error) {
	const op = "providerb.Create"
	body, err := c.buildCreate(op, cr, r)
	if err != nil {
		return generation.Created{}, err
	}
	raw, _ := json.Marshal(body)
	status, resp, err := c.do(ctx, op, cr, http.MethodPost, "/api/v1/sonic/create", raw)
	if err != nil {
		return generation.Created{}, transportError(op, err, true)
	}
	if e := statusError(op, status, resp, false); e != nil {
		return generation.Created{}, e
	}
	var out struct {
		Message string `json:"message"`
		TaskID  string `json:"task_id"`
		Data    *struct {
			TaskID string `json:"task_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		return generation.Created{}, unavailable(op, fmt.Errorf("decode create answer: %w", err))
	}
	id := out.TaskID
	if id == "" && out.Data != nil {
		id = out.Data.TaskID
	}
	if id == "" {
		return generation.Created{}, unavailable(op, errors.New("create answer has no task_id"))
	}
	return generation.Created{TaskID: id}, nil
}

// buildCreate validates r against B's caps and builds the request body.
func (c *Client) buildCreate(op string, cr generation.Credential, r generation.CreateRequest) (createBody, error) {
	if strings.TrimSpace(cr.APIKey) == "" {
		return createBody{}, fault.E(op, fault.ProviderCredentialInvalid, "The provider credential has no API key.")
	}
	mv, ok := c.MV(r.Model)
	if !ok {
		return createBody{}, fault.Invalid(op, "model", "The model is not offered by this provider.")
	}
	b := createBody{TaskType: "create_music", MV: mv, MakeInstrumental: r.Instrumental,
		WebhookURL: r.CallbackURL, WebhookSecret: cr.CallbackKey}
	if r.CallbackURL != "" {
		u, err := url.Parse(r.CallbackURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return createBody{}, fault.Invalid(op, "callbackUrl", "The callback URL must be an absolute http(s) URL.")
		}
	}
	runes := utf8.RuneCountInString
	if r.Title != "" || r.Style != "" {
		b.CustomMode = true
		limit, strict := 5000, false
		if mv == "sonic-v3-5" || mv == "sonic-v4" {
			limit, strict = 3000, true
		}
		if n := runes(r.Prompt); n > limit || (strict && n >= limit) {
			return createBody{}, fault.Invalid(op, "prompt", "The lyrics are too long for this model.").With("limit", limit)
		}
		if runes(r.Title) >= 80 {
			return createBody{}, fault.Invalid(op, "title", "The title must be under 80 characters.").With("limit", 80)
		}
		if runes(r.Style) >= 200 {
			return createBody{}, fault.Invalid(op, "style", "The style must be under 200 characters.").With("limit", 200)
		}
		if !r.Instrumental && strings.TrimSpace(r.Prompt) == "" {
			return createBody{}, fault.Invalid(op, "prompt", "Custom mode with vocals needs lyrics.")
		}
		b.Prompt, b.Title, b.Tags = r.Prompt, r.Title, r.Style
		return b, nil
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return createBody{}, fault.Invalid(op, "prompt", "A prompt is required.")
	}
	if runes(r.Prompt) >= 200 {
		return createBody{}, fault.Invalid(op, "prompt", "The description must be under 200 characters.").With("limit", 200)
	}
	b.GPTDescriptionPrompt = r.Prompt
	return b, nil
}

// Query polls a task.
func (c *Client) Query(ctx context.Context, cr generation.Credential, taskID string) (generation.TaskState, error) {
	const op = "providerb.Query"
	if strings.TrimSpace(taskID) == "" {
		return generation.TaskState{}, fault.Invalid(op, "taskId", "A task id is required.")
	}
	status, resp, err := c.do(ctx, op, cr, http.MethodGet, "/api/v1/sonic/task/"+url.PathEscape(taskID), nil)
	if err != nil {
		return generation.TaskState{}, transportError(op, err, false)
	}
	if e := statusError(op, status, resp, true); e != nil {
		return generation.TaskState{}, e
	}
	env, err := decodeEnvelope(resp)
	if err != nil {
		return generation.TaskState{}, unavailable(op, fmt.Errorf("decode task: %w", err))
	}
	st := normalize(env.clips, env.message, "")
	st.TaskID = taskID
	return st, nil
}

// Balance reads the account's credits.
func (c *Client) Balance(ctx context.Context, cr generation.Credential) (generation.Balance, error) {
	const op = "providerb.Balance"
	status, resp, err := c.do(ctx, op, cr, http.MethodGet, "/api/v1/get-credits", nil)
	if err != nil {
		return generation.Balance{}, transportError(op, err, false)
	}
	if e := statusError(op, status, resp, false); e != nil {
		return generation.Balance{}, e
	}
	var out struct {
		Credits      *json.Number `json:"credits"`
		ExtraCredits *json.Number `json:"extra_credits"`
	}
	d := json.NewDecoder(bytes.NewReader(resp))
	d.UseNumber()
	if err := d.Decode(&out); err != nil || out.Credits == nil {
		return generation.Balance{}, unavailable(op, fmt.Errorf("decode credits: %v", err))
	}
	credits, err1 := numberInt(*out.Credits)
	var extra int64
	var err2 error
	if out.ExtraCredits != nil {
		extra, err2 = numberInt(*out.ExtraCredits)
	}
	if err1 != nil || err2 != nil {
		return generation.Balance{}, unavailable(op, errors.New("credits are not numbers"))
	}
	return generation.Balance{Credits: credits, ExtraCredits: extra}, nil
}

func numberInt(n json.Number) (int64, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a number")
	}
	return int64(math.Floor(f)), nil
}

// VerifyCallback checks a webhook's timestamp and signature.
func (c *Client) VerifyCallback(cr generation.Credential, cb generation.Callback, now time.Time) error {
	const op = "providerb.VerifyCallback"
	fail := func(reason, msg string) *fault.Error {
		return fault.E(op, fault.CallbackFailed, msg).With("reason", reason)
	}
	if cr.CallbackKey == "" {
		return fail("no_secret", "No webhook secret is configured for this credential.")
	}
	ts := header(cb.Header, HeaderWebhookTimestamp)
	if ts == "" {
		return fail("missing_timestamp", "The webhook has no timestamp.")
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return fail("bad_timestamp", "The webhook timestamp is not unix seconds.")
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > c.skew || d < -c.skew {
		return fail("stale", "The webhook timestamp is outside the allowed window.").With("skew_seconds", int64(c.skew/time.Second))
	}
	sig := strings.TrimSpace(header(cb.Header, HeaderWebhookSignature))
	if sig == "" {
		return fail("missing_signature", "The webhook is not signed.")
	}
	if len(sig) > 7 && strings.EqualFold(sig[:7], "sha256=") {
		sig = sig[7:]
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fail("bad_signature", "The webhook signature does not verify.")
	}
	m := hmac.New(sha256.New, []byte(cr.CallbackKey))
	m.Write([]byte(strings.TrimSpace(ts)))
	m.Write([]byte("."))
	m.Write(cb.Body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return fail("bad_signature", "The webhook signature does not verify.")
	}
	return nil
}

// Sign returns the X-Webhook-Signature value B sends for body at ts, for
// simulators and tests.
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.", ts)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// ParseCallback normalizes a verified webhook.
func (c *Client) ParseCallback(cb generation.Callback) (generation.TaskState, error) {
	const op = "providerb.ParseCallback"
	env, err := decodeEnvelope(cb.Body)
	if err != nil {
		return generation.TaskState{}, fault.E(op, fault.CallbackFailed, "The webhook body is not valid JSON.").With("reason", "payload")
	}
	id := env.taskID
	if id == "" {
		for _, cl := range env.clips {
			if cl.taskID != "" {
				id = cl.taskID
				break
			}
		}
	}
	if id == "" {
		return generation.TaskState{}, fault.E(op, fault.CallbackFailed, "The webhook names no task.").With("reason", "missing_task_id")
	}
	st := normalize(env.clips, env.message, header(cb.Header, HeaderWebhookEvent))
	st.TaskID = id
	return st, nil
}

// header reads a header from a map that may not be canonicalized.
func header(h map[string][]string, name string) string {
	if v := http.Header(h).Get(name); v != "" {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// do sends one request and reads its answer.
func (c *Client) do(ctx context.Context, op string, cr generation.Credential, method, path string, body []byte) (int, []byte, error) {
	if strings.TrimSpace(cr.APIKey) == "" {
		return 0, nil, fault.E(op, fault.ProviderCredentialInvalid, "The provider credential has no API key.")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, fault.Wrap(op, err)
	}
	req.Header.Set("Authorization", "Bearer "+cr.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, raw, nil
}

// transportError maps a failed round trip. On Create (ambiguous) any
// failure after dialing may have left a task behind.
func transportError(op string, err error, create bool) error {
	if errors.Is(err, urlguard.ErrRefused) {
		// Refused by the URL guard: a refusal before connecting sent
		// nothing; a refused redirect followed a request that was sent.
		var oe *net.OpError
		e := (&fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The provider cannot be reached.", Err: err}).
			With("retryable", true).With("reason", "address_refused")
		if create && !(errors.As(err, &oe) && oe.Op == "dial") {
			e = e.With("ambiguous", true)
		}
		return e
	}
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Code != "" {
		return err
	}
	var ne net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout())
	var oe *net.OpError
	dial := errors.As(err, &oe) && oe.Op == "dial"
	if timeout && !dial {
		e := &fault.Error{Op: op, Code: fault.ProviderTimeout, Message: "The provider did not answer in time.", Err: err}
		e = e.With("retryable", true)
		if create {
			e = e.With("ambiguous", true)
		}
		return e
	}
	e := &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The provider cannot be reached.", Err: err}
	e = e.With("retryable", true)
	if create && !dial {
		e = e.With("ambiguous", true)
	}
	return e
}

func unavailable(op string, cause error) error {
	e := &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The provider gave an unexpected answer.", Err: cause}
	return e.With("retryable", true)
}

// errorBody is the loose shape of B's error answers.
type errorBody struct {
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Msg     string          `json:"msg"`
	Error   json.RawMessage `json:"error"`
	Detail  string          `json:"detail"`
}

// providerMessage extracts the message and body code of an answer.
func providerMessage(body []byte) (string, int) {
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil {
		return strings.TrimSpace(string(body[:min(len(body), 200)])), 0
	}
	code := 0
	if len(eb.Code) > 0 {
		var n json.Number
		if json.Unmarshal(eb.Code, &n) == nil {
			if i, err := n.Int64(); err == nil {
				code = int(i)
			}
		} else {
			var s string
			if json.Unmarshal(eb.Code, &s) == nil {
				code, _ = strconv.Atoi(s)
			}
		}
	}
	msg := eb.Message
	if msg == "" {
		msg = eb.Msg
	}
	if msg == "" && len(eb.Error) > 0 {
		var s string
		if json.Unmarshal(eb.Error, &s) == nil {
			msg = s
		} else {
			var o struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(eb.Error, &o) == nil {
				msg = o.Message
			}
		}
	}
	if msg == "" {
		msg = eb.Detail
	}
	return msg, code
}

// isPolicy reports a content-policy message.
func isPolicy(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"copyright", "inappropriate", "moderation", "sensitive", "policy", "violat", "prohibited"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// isCredits reports a no-credits or no-subscription message.
func isCredits(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "credit") || strings.Contains(m, "subscription") || strings.Contains(m, "balance")
}

// isThrottle reports a throttle message.
func isThrottle(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "too many requests") || strings.Contains(m, "rate limit")
}

// statusError maps a non-success answer; nil means success.
func statusError(op string, status int, body []byte, query bool) error {
	msg, code := providerMessage(body)
	if code == 0 || code == 200 {
		code = status
	}
	if status >= 200 && status < 300 && (code >= 200 && code < 300) {
		return nil
	}
	if status >= 300 && code >= 200 && code < 300 {
		code = status
	}
	cause := fmt.Errorf("provider answered %d (code %d): %q", status, code, msg)
	mk := func(c fault.Code, m string) *fault.Error {
		return (&fault.Error{Op: op, Code: c, Message: m, Err: cause}).With("provider_status", code)
	}
	lower := strings.ToLower(msg)
	switch {
	case code == http.StatusTooManyRequests || isThrottle(msg):
		return mk(fault.RateLimited, "The provider throttled the request.").With("retryable", true)
	case code == http.StatusBadRequest && query && (strings.Contains(lower, "not found") || strings.Contains(lower, "missing task id")):
		return mk(fault.NotFound, "The provider task was not found.")
	case code == http.StatusNotFound && query:
		return mk(fault.NotFound, "The provider task was not found.")
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		if isPolicy(msg) {
			return mk(fault.ContentPolicyRejected, "The provider refused the content.")
		}
		return mk(fault.InvalidInput, "The provider rejected the request.")
	case code == http.StatusUnauthorized:
		return mk(fault.ProviderCredentialInvalid, "The provider rejected the credential.")
	case code == http.StatusPaymentRequired:
		return mk(fault.ProviderCreditsExhausted, "The provider account has no credits.")
	case code == http.StatusForbidden:
		switch {
		case isPolicy(msg):
			return mk(fault.ContentPolicyRejected, "The provider refused the content.")
		case isCredits(msg):
			return mk(fault.ProviderCreditsExhausted, "The provider account has no credits.")
		}
		return mk(fault.ProviderCredentialInvalid, "The provider refused the credential.")
	}
	return mk(fault.ProviderUnavailable, "The provider is unavailable.").With("retryable", true)
}

// clip is one normalized-in-progress clip.
type clip struct {
	id, state, title, tags, mv, image, audio, stream, message, taskID string
	durationMs                                                        int64
}

// envelope is a decoded task or webhook body.
type envelope struct {
	taskID, message string
	clips           []clip
}

// decodeEnvelope reads {code, message, task_id|taskId, data:[clips]|{...}}.
func decodeEnvelope(body []byte) (envelope, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return envelope{}, err
	}
	var env envelope
	env.taskID = str(top, "task_id", "taskId")
	env.message = str(top, "message", "msg")
	data := top["data"]
	for depth := 0; depth < 3 && len(data) > 0; depth++ {
		t := bytes.TrimSpace(data)
		if len(t) == 0 || bytes.Equal(t, []byte("null")) {
			return env, nil
		}
		if t[0] == '[' {
			var items []map[string]json.RawMessage
			if err := json.Unmarshal(t, &items); err != nil {
				return envelope{}, err
			}
			for _, it := range items {
				env.clips = append(env.clips, decodeClip(it))
			}
			return env, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t, &obj); err != nil {
			return envelope{}, err
		}
		if env.taskID == "" {
			env.taskID = str(obj, "task_id", "taskId")
		}
		if inner, ok := obj["data"]; ok {
			data = inner
			continue
		}
		if _, ok := obj["clips"]; ok {
			data = obj["clips"]
			continue
		}
		env.clips = append(env.clips, decodeClip(obj))
		return env, nil
	}
	return env, nil
}

func str(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				return s
			}
			var n json.Number
			if json.Unmarshal(v, &n) == nil && n != "" {
				return n.String()
			}
		}
	}
	return ""
}

func decodeClip(m map[string]json.RawMessage) clip {
	c := clip{
		id:      str(m, "clip_id", "id"),
		state:   strings.ToLower(str(m, "state", "status")),
		title:   str(m, "title"),
		tags:    str(m, "tags"),
		mv:      str(m, "mv", "model_name"),
		image:   usableURL(str(m, "image_url")),
		audio:   usableURL(str(m, "audio_url")),
		stream:  usableURL(str(m, "stream_audio_url")),
		message: str(m, "error_message", "message", "fail_reason", "error"),
		taskID:  str(m, "task_id", "taskId"),
	}
	if v, ok := m["duration"]; ok {
		c.durationMs = parseDuration(v)
	}
	return c
}

// parseDuration reads seconds as a number or a numeric string.
func parseDuration(v json.RawMessage) int64 {
	var f float64
	if json.Unmarshal(v, &f) != nil {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0
		}
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 24*3600 {
		return 0
	}
	return int64(math.Round(f * 1000))
}

// usableURL drops empty and placeholder URLs (F10).
func usableURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	base := strings.ToLower(u.Path[strings.LastIndex(u.Path, "/")+1:])
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	switch base {
	case "none", "null", "undefined", "placeholder":
		return ""
	}
	return s
}

// normalize turns clips into a task state.
func normalize(clips []clip, message, event string) generation.TaskState {
	var st generation.TaskState
	failed, streaming, succeeded := false, false, 0
	failMsg := ""
	for _, c := range clips {
		t := generation.Track{ProviderTrackID: c.id, ImageURL: c.image, Title: c.title, Tags: c.tags,
			Model: c.mv, DurationMs: c.durationMs, StreamURL: c.stream}
		switch c.state {
		case StateFailed, "error":
			failed = true
			if failMsg == "" {
				failMsg = c.message
			}
		case StateSucceeded, "success", "complete", "completed":
			if c.audio != "" {
				t.AudioURL = c.audio
				succeeded++
			} else {
				streaming = true
			}
		case StateStreaming:
			streaming = true
			if t.StreamURL == "" {
				t.StreamURL = c.audio // F8: a stream link, never the final asset
			}
		}
		st.Tracks = append(st.Tracks, t)
	}
	if failMsg == "" {
		failMsg = message
	}
	switch {
	case failed || event == EventFailed:
		st.Stage = generation.StageFailed
		st.FailureMessage = failMsg
		st.FailureCode = string(fault.GenerationFailed)
		if isPolicy(failMsg) {
			st.FailureCode = string(fault.ContentPolicyRejected)
		}
	case len(clips) > 0 && succeeded == len(clips):
		st.Stage = generation.StageProviderComplete
	case streaming || succeeded > 0:
		st.Stage = generation.StageFirst
	default:
		st.Stage = generation.StageQueued
	}
	return st
}
