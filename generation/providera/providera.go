// Package providera is the adapter for music provider A, the Suno-wrapper
// family that sunoapi.org and kie.ai share (api.box and apikley mirror it),
// implementing generation.MusicProvider (reference:
// shared/spec/music-providers.md, sections 0, 1 and 3).
//
// # Dialects
//
// Config.Dialect chooses the wire dialect:
//
//   - DialectSunoAPI ("sunoapi"): sunoapi.org. Create POST /api/v1/generate,
//     query GET /api/v1/generate/record-info?taskId=, balance
//     GET /api/v1/generate/credit. Body code 405 and 430 are throttles,
//     429 means the account has no credits.
//   - DialectKie ("kie"): kie.ai's legacy Suno paths (the same create and
//     query), balance GET /api/v1/chat/credit. 429 (and 433, whose meaning is
//     unconfirmed) is a throttle, 402 means no credits.
//   - DialectKieMarket ("kie_market"): kie.ai's market API: create
//     POST /api/v1/jobs/createTask {model, callBackUrl, input:{snake_case}},
//     query GET /api/v1/jobs/recordInfo?taskId= whose record carries state
//     (waiting, queuing, generating, success, fail), resultJson (a JSON
//     string), failCode/failMsg and creditsConsumed, the platform's cost
//     signal (TaskState.CreditsConsumed). Its error codes are kie's. The
//     market model name is MarketModel ("ai-music-api/generate", an
//     assumption: the reference only shows the "ai-music-api/" prefix).
//
// # Errors
//
// Every answer is an envelope {code, msg, data}; the body code decides, the
// HTTP status is used only when the body is no envelope. Every error is a
// *fault.Error with details.provider_code (when the provider sent one) and
// details.retryable:
//
//   - RATE_LIMITED (retryable): sunoapi 405/430, kie 429/433, and the poll
//     cap of 3 queries per second per task.
//   - PROVIDER_CREDITS_EXHAUSTED: sunoapi 429, kie 402. Never retried on the
//     same credential.
//   - PROVIDER_CREDENTIAL_INVALID: 401 (and HTTP 401/403 without envelope).
//   - INVALID_INPUT: 400, 413, 422 on create, and requests this package
//     refuses before sending (details.field names the request field).
//   - PROVIDER_UNAVAILABLE: 455 (maintenance), 500 and other 5xx, 404
//     (wrong path), unknown codes, malformed JSON (details.reason
//     malformed_response), transport failures; retryable except 505
//     (details.reason feature_disabled).
//   - GENERATION_FAILED: 501 on create.
//   - PROVIDER_TIMEOUT: the call's deadline passed. On Create it is
//     ambiguous (details.ambiguous = true, F4): the task may exist and be
//     billed, so the caller waits for a callback or polls; it never re-sends.
//     A Create transport failure after dialing is PROVIDER_UNAVAILABLE with
//     details.ambiguous = true for the same reason.
//   - NOT_FOUND on Query: an unknown task (F13: code 422, msg
//     "recordInfo is null", or data null).
//
// The API key travels only in the Authorization header; it is never logged
// nor put in an error.
//
// # Outbound policy
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, every resolved address judged and
// pinned, redirects re-checked, no proxy from the environment), and New
// refuses a BaseURL that guard refuses. A request the guard refuses is
// PROVIDER_UNAVAILABLE with details.reason address_refused; refused before
// connecting, nothing was sent, so a Create is not ambiguous (a refused
// redirect follows a request that was sent, and is).
//
// # Query normalization
//
// Legacy status: PENDING -> queued, TEXT_SUCCESS -> text, FIRST_SUCCESS ->
// first, SUCCESS -> provider_complete, CREATE_TASK_FAILED and
// GENERATE_AUDIO_FAILED -> failed GENERATION_FAILED, SENSITIVE_WORD_ERROR ->
// failed CONTENT_POLICY_REJECTED. CALLBACK_EXCEPTION (callback delivery
// failed, audio undocumented) -> provider_complete when the record carries
// at least one track with a final audio URL, else failed GENERATION_FAILED.
// An unknown status is queued (lenient: the recovery poller tries again).
// sunoData is read from data.response.sunoData or data.sunoData (F11).
// errorCode 531 sets Refunded.
//
// Market state: waiting, queuing -> queued; generating -> first when a track
// already has a stream or audio URL, else queued; success ->
// provider_complete; fail -> failed with failCode mapped as a callback code.
//
// # Tracks
//
// Tracks with an empty id or the placeholder id "None" are dropped, and a
// placeholder URL (empty, "None", ending in "/None.mp3") is treated as
// absent (F10). A stream link is never reported as AudioURL (F8): an audio
// URL equal to the stream URL, or whose path contains "audiopipe" or a
// "stream" segment, moves to StreamURL. source_* URLs are fallbacks for the
// mirrored URLs. duration (seconds, number or string) becomes DurationMs.
//
// # Callbacks
//
// VerifyCallback checks kie's scheme: X-Webhook-Timestamp (unix seconds)
// and X-Webhook-Signature = base64(HMAC-SHA256(CallbackKey, taskId + "." +
// timestamp)), taskId from data.task_id (or taskId, F11), compared in
// constant time, the timestamp within Config.CallbackSkew (default 5
// minutes) of now in either direction. Failures are CALLBACK_FAILED with
// details.reason: not_configured, missing_signature, missing_timestamp,
// bad_timestamp, stale, missing_task_id, malformed_body or signature.
//
// The signature covers the task id and the timestamp, not the body:
// CallbackSignsBody is false. Whoever holds one captured callback can post
// any body for that task within the skew window, so the platform takes a
// verified callback as a notification only and confirms the task through
// Query (the authenticated record query); nothing a callback body says
// (stage, tracks, audio URLs, failure) is used.
//
// ParseCallback reads {code, msg, data:{callbackType, task_id, data:[items]}}
// leniently (taskId or task_id, nested or top-level fields; a market record
// {data:{taskId, state, resultJson}} is also accepted). callbackType text,
// first, complete map to stages; error and api.box's failed, or any code
// other than 200, map to failed. Callback codes: 400 (copyrighted lyrics or
// content violation) and 413 (uploaded audio matches an existing work, a
// copyright match) -> CONTENT_POLICY_REJECTED; 408, 451 (source download
// failed), 500, 501 and any other code -> GENERATION_FAILED; 531 ->
// GENERATION_FAILED with Refunded.
//
// # Models
//
// Config.ModelMap maps platform model ids to provider models; DefaultModelMap
// is used when nil: "v3.5" -> V3_5, "v4" -> V4, "v4.5" -> V4_5, "v4.5-plus"
// -> V4_5PLUS, "v4.5-all" -> V4_5ALL, "v5" -> V5, "v5.5" -> V5_5, "v6" ->
// V6, "v6-mini" -> V6_MINI, "v6-wild" -> V6_WILD; an empty model is "v5".
// A provider model name itself (e.g. "V5") is accepted as is. No model
// takes a duration (SupportsDuration is false).
package providera

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
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/urlguard"
)

var _ generation.MusicProvider = (*Client)(nil)

// Dialect names a provider A wire dialect.
type Dialect string

// The supported dialects.
const (
	// DialectSunoAPI is sunoapi.org.
	DialectSunoAPI Dialect = "sunoapi"
	// DialectKie is kie.ai's legacy Suno API.
	DialectKie Dialect = "kie"
	// DialectKieMarket is kie.ai's market createTask/recordInfo API.
	DialectKieMarket Dialect = "kie_market"
)

// MarketModel is the model field of a kie market createTask.
const MarketModel = "ai-music-api/generate"

// DefaultCallbackSkew is the callback timestamp window around now.
const DefaultCallbackSkew = 5 * time.Minute

// DefaultTimeout bounds each call when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// DefaultModel is the platform model used when a request names none.
const DefaultModel = "v5"

// DefaultModelMap returns the default platform -> provider model table.
func DefaultModelMap() map[string]string {
	return map[string]string{
		"v3.5": "V3_5", "v4": "V4", "v4.5": "V4_5", "v4.5-plus": "V4_5PLUS", "v4.5-all": "V4_5ALL",
		"v5": "V5", "v5.5": "V5_5", "v6": "V6", "v6-mini": "V6_MINI", "v6-wild": "V6_WILD",
	}
}

// providerModels are the provider model names accepted as is.
func providerModel(m string) bool {
	switch m {
	case "V3_5", "V4", "V4_5", "V4_5PLUS", "V4_5ALL", "V5", "V5_5", "V6", "V6_MINI", "V6_WILD":
		return true
	}
	return false
}

// Config configures a Client.
type Config struct {
	// BaseURL is the provider's base URL (https://api.sunoapi.org,
	// https://api.kie.ai or a simulator). Required.
	BaseURL string
	// Dialect is the wire dialect. Empty means DialectSunoAPI.
	Dialect Dialect
	// HTTPClient makes the requests. Nil means a urlguard client (https
	// only, public addresses only; Timeout bounds each call), and BaseURL
	// must pass its guard. A client that is set owns the outbound policy:
	// pass a urlguard client to keep it (a simulator on loopback needs one
	// with AllowHTTP and its exact address in AllowLoopback).
	HTTPClient *http.Client
	// Timeout bounds each call on top of the caller's context. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// CallbackSkew is how far a callback's timestamp may be from now, in
	// either direction. Zero means DefaultCallbackSkew (5 minutes).
	CallbackSkew time.Duration
	// ModelMap maps platform model ids to provider models. Nil means
	// DefaultModelMap().
	ModelMap map[string]string
}

// Client is the provider A adapter. It is safe for concurrent use.
type Client struct {
	base    string
	dialect Dialect
	hc      *http.Client
	timeout time.Duration
	skew    time.Duration
	models  map[string]string
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	const op = "providera.New"
	if cfg.Dialect == "" {
		cfg.Dialect = DialectSunoAPI
	}
	switch cfg.Dialect {
	case DialectSunoAPI, DialectKie, DialectKieMarket:
	default:
		return nil, fault.Invalid(op, "dialect", "Unknown provider A dialect.")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fault.Invalid(op, "baseUrl", "The base URL must be an absolute http(s) URL.")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		g, err := urlguard.New(urlguard.Config{Timeout: cfg.Timeout})
		if err != nil {
			return nil, fault.Wrap(op, err)
		}
		if _, err := g.CheckURL(cfg.BaseURL); err != nil {
			return nil, fault.Invalid(op, "baseUrl", "The base URL is not allowed by the outbound URL policy.").
				With("reason", urlguard.Reason(err))
		}
		cfg.HTTPClient = g.Client()
	}
	if cfg.CallbackSkew <= 0 {
		cfg.CallbackSkew = DefaultCallbackSkew
	}
	models := DefaultModelMap()
	if cfg.ModelMap != nil {
		models = make(map[string]string, len(cfg.ModelMap))
		for k, v := range cfg.ModelMap {
			models[k] = v
		}
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), dialect: cfg.Dialect, hc: cfg.HTTPClient,
		timeout: cfg.Timeout, skew: cfg.CallbackSkew, models: models}, nil
}

// ID is provider A's route.
func (c *Client) ID() generation.ProviderID { return generation.ProviderA }

// SupportsDuration is false: no provider A model takes a duration.
func (c *Client) SupportsDuration(string) bool { return false }

// CallbackSignsBody is false: A's callback signature covers the task id
// and timestamp only (see the package doc).
func (c *Client) CallbackSignsBody() bool { return false }

// Dialect is the client's wire dialect.
func (c *Client) Dialect() Dialect { return c.dialect }

// CallbackSkew is how far a callback's timestamp may be from now, in
// either direction, for VerifyCallback to accept it (Config.CallbackSkew,
// DefaultCallbackSkew when unset). The OpenAPI document states it.
func (c *Client) CallbackSkew() time.Duration { return c.skew }

// envelope is every answer's shape.
type envelope struct {
	Code *int            `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// call sends one request and returns the parsed envelope of a body code 200.
// ambiguous marks a create, whose transport failures may have left a task.
func (c *Client) call(ctx context.Context, op, method, path string, cred generation.Credential, body any, ambiguous bool) (envelope, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return envelope{}, fault.Wrap(op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return envelope{}, fault.Wrap(op, err)
	}
	req.Header.Set("Authorization", "Bearer "+cred.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return envelope{}, transportError(op, ctx, err, ambiguous)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return envelope{}, transportError(op, ctx, err, ambiguous)
	}
	var env envelope
	if jerr := json.Unmarshal(raw, &env); jerr != nil || env.Code == nil {
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return envelope{}, (&fault.Error{Op: op, Code: fault.ProviderUnavailable,
				Message: "The provider sent a malformed answer.", Err: fmt.Errorf("malformed envelope (HTTP %d)", resp.StatusCode)}).
				With("reason", "malformed_response").With("retryable", true)
		}
		return envelope{}, c.codeError(op, resp.StatusCode, "", false)
	}
	if *env.Code != 200 {
		return env, c.codeError(op, *env.Code, env.Msg, true)
	}
	return env, nil
}

// transportError maps a failed round trip.
func transportError(op string, ctx context.Context, err error, ambiguous bool) error {
	var ne net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || (errors.As(err, &ne) && ne.Timeout())
	var oe *net.OpError
	dialed := !(errors.As(err, &oe) && oe.Op == "dial")
	if timeout {
		e := &fault.Error{Op: op, Code: fault.ProviderTimeout, Message: "The provider did not answer in time.", Err: err}
		e = e.With("retryable", !ambiguous)
		if ambiguous {
			e = e.With("ambiguous", true)
		}
		return e
	}
	e := (&fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The provider cannot be reached.", Err: err}).With("retryable", !(ambiguous && dialed))
	if ambiguous && dialed {
		e = e.With("ambiguous", true)
	}
	if errors.Is(err, urlguard.ErrRefused) {
		e = e.With("reason", "address_refused")
	}
	return e
}

// codeError maps a provider code (body code, or HTTP status when fromBody
// is false) through the dialect table.
func (c *Client) codeError(op string, code int, msg string, fromBody bool) *fault.Error {
	kie := c.dialect != DialectSunoAPI
	var fc fault.Code
	retry := false
	reason := ""
	switch {
	case code == 401 || (!fromBody && code == 403):
		fc = fault.ProviderCredentialInvalid
	case !kie && (code == 405 || code == 430), kie && (code == 429 || code == 433):
		fc, retry = fault.RateLimited, true
	case !kie && code == 429, kie && code == 402:
		fc = fault.ProviderCreditsExhausted
	case !fromBody && code == 429: // HTTP 429 without an envelope: a throttle
		fc, retry = fault.RateLimited, true
	case code == 400 || code == 413 || code == 422:
		fc = fault.InvalidInput
	case code == 501 && fromBody:
		fc = fault.GenerationFailed
	case code == 505:
		fc, reason = fault.ProviderUnavailable, "feature_disabled"
	default: // 404 wrong path, 455 maintenance, 500, other 5xx, unknown codes
		fc, retry = fault.ProviderUnavailable, true
		if code == 455 {
			reason = "maintenance"
		}
	}
	e := &fault.Error{Op: op, Code: fc, Err: fmt.Errorf("provider code %d: %s", code, truncate(msg, 200))}
	if fc == fault.InvalidInput {
		e.Message = "The provider refused the request."
	}
	e = e.With("provider_code", code).With("retryable", retry)
	if reason != "" {
		e = e.With("reason", reason)
	}
	return e
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Create starts a generation (two tracks).
func (c *Client) Create(ctx context.Context, cred generation.Credential, r generation.CreateRequest) (generation.Created, error) {
	const op = "providera.Create"
	in, err := c.buildCreate(op, r)
	if err != nil {
		return generation.Created{}, err
	}
	var env envelope
	if c.dialect == DialectKieMarket {
		input := map[string]any{"custom_mode": in.CustomMode, "instrumental": in.Instrumental, "model": in.Model}
		if in.Prompt != "" {
			input["prompt"] = in.Prompt
		}
		if in.Style != "" {
			input["style"] = in.Style
		}
		if in.Title != "" {
			input["title"] = in.Title
		}
		env, err = c.call(ctx, op, http.MethodPost, "/api/v1/jobs/createTask", cred,
			map[string]any{"model": MarketModel, "callBackUrl": in.CallBackURL, "input": input}, true)
	} else {
		env, err = c.call(ctx, op, http.MethodPost, "/api/v1/generate", cred, in, true)
	}
	if err != nil {
		return generation.Created{}, err
	}
	var d struct {
		TaskID  string `json:"taskId"`
		TaskID2 string `json:"task_id"`
	}
	if json.Unmarshal(env.Data, &d) != nil || (d.TaskID == "" && d.TaskID2 == "") {
		// The create was accepted but its id is unreadable: ambiguous.
		return generation.Created{}, (&fault.Error{Op: op, Code: fault.ProviderUnavailable,
			Message: "The provider sent a malformed answer.", Err: errors.New("create answer without taskId")}).
			With("reason", "malformed_response").With("ambiguous", true).With("retryable", false)
	}
	if d.TaskID == "" {
		d.TaskID = d.TaskID2
	}
	return generation.Created{TaskID: d.TaskID}, nil
}

// createBody is the legacy create request.
type createBody struct {
	CustomMode   bool   `json:"customMode"`
	Instrumental bool   `json:"instrumental"`
	Model        string `json:"model"`
	Prompt       string `json:"prompt,omitempty"`
	Style        string `json:"style,omitempty"`
	Title        string `json:"title,omitempty"`
	CallBackURL  string `json:"callBackUrl"`
}

// buildCreate applies the reference's rules and caps before sending.
func (c *Client) buildCreate(op string, r generation.CreateRequest) (createBody, error) {
	model := r.Model
	if model == "" {
		model = DefaultModel
	}
	pm, ok := c.models[model]
	if !ok {
		if !providerModel(model) {
			return createBody{}, fault.Invalid(op, "model", "The model is not supported by provider A.")
		}
		pm = model
	}
	if r.CallbackURL == "" {
		return createBody{}, fault.Invalid(op, "callbackUrl", "A callback URL is required.")
	}
	if u, err := url.Parse(r.CallbackURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return createBody{}, fault.Invalid(op, "callbackUrl", "The callback URL must be an absolute http(s) URL.")
	}
	b := createBody{Instrumental: r.Instrumental, Model: pm, CallBackURL: r.CallbackURL}
	n := utf8.RuneCountInString
	if r.Title == "" && r.Style == "" {
		if strings.TrimSpace(r.Prompt) == "" {
			return createBody{}, fault.Invalid(op, "prompt", "A prompt is required.")
		}
		if n(r.Prompt) > 500 {
			return createBody{}, fault.Invalid(op, "prompt", "The prompt is too long.").With("limit", 500)
		}
		b.Prompt = r.Prompt
		return b, nil
	}
	b.CustomMode = true
	old := pm == "V4" || pm == "V3_5"
	promptCap, styleCap, titleCap := 5000, 1000, 100
	if old {
		promptCap, styleCap = 3000, 200
	}
	if old || pm == "V4_5ALL" {
		titleCap = 80
	}
	switch {
	case strings.TrimSpace(r.Style) == "":
		return createBody{}, fault.Invalid(op, "style", "A style is required with a title.")
	case strings.TrimSpace(r.Title) == "":
		return createBody{}, fault.Invalid(op, "title", "A title is required with a style.")
	case n(r.Style) > styleCap:
		return createBody{}, fault.Invalid(op, "style", "The style is too long.").With("limit", styleCap)
	case n(r.Title) > titleCap:
		return createBody{}, fault.Invalid(op, "title", "The title is too long.").With("limit", titleCap)
	}
	b.Style, b.Title = r.Style, r.Title
	if !r.Instrumental {
		if strings.TrimSpace(r.Prompt) == "" {
			return createBody{}, fault.Invalid(op, "prompt", "Lyrics are required for a song with vocals.")
		}
		if n(r.Prompt) > promptCap {
			return createBody{}, fault.Invalid(op, "prompt", "The lyrics are too long.").With("limit", promptCap)
		}
		b.Prompt = r.Prompt
	}
	return b, nil
}

// Balance reads the account's credits.
func (c *Client) Balance(ctx context.Context, cred generation.Credential) (generation.Balance, error) {
	const op = "providera.Balance"
	path := "/api/v1/chat/credit"
	if c.dialect == DialectSunoAPI {
		path = "/api/v1/generate/credit"
	}
	env, err := c.call(ctx, op, http.MethodGet, path, cred, nil, false)
	if err != nil {
		return generation.Balance{}, err
	}
	var f flexFloat
	if json.Unmarshal(env.Data, &f) != nil || !f.ok {
		return generation.Balance{}, (&fault.Error{Op: op, Code: fault.ProviderUnavailable,
			Message: "The provider sent a malformed answer.", Err: errors.New("credit data is not a number")}).
			With("reason", "malformed_response").With("retryable", true)
	}
	return generation.Balance{Credits: int64(f.v)}, nil
}
