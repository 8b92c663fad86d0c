package providera

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
)

// flexFloat decodes a number or a numeric string.
type flexFloat struct {
	v  float64
	ok bool
}

// UnmarshalJSON accepts 12.5, "12.5" and null.
func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil // lenient: an unreadable number is unknown
	}
	f.v, f.ok = v, true
	return nil
}

// rawTrack is a track in either casing.
type rawTrack struct {
	ID                   string    `json:"id"`
	AudioURL             string    `json:"audioUrl"`
	AudioURLs            string    `json:"audio_url"`
	SourceAudioURL       string    `json:"sourceAudioUrl"`
	SourceAudioURLs      string    `json:"source_audio_url"`
	StreamAudioURL       string    `json:"streamAudioUrl"`
	StreamAudioURLs      string    `json:"stream_audio_url"`
	SourceStreamAudioURL string    `json:"sourceStreamAudioUrl"`
	SourceStreamURLs     string    `json:"source_stream_audio_url"`
	ImageURL             string    `json:"imageUrl"`
	ImageURLs            string    `json:"image_url"`
	SourceImageURL       string    `json:"sourceImageUrl"`
	SourceImageURLs      string    `json:"source_image_url"`
	Title                string    `json:"title"`
	Tags                 string    `json:"tags"`
	ModelName            string    `json:"modelName"`
	ModelNames           string    `json:"model_name"`
	Duration             flexFloat `json:"duration"`
}

func first(vs ...string) string {
	for _, v := range vs {
		if !placeholder(v) {
			return v
		}
	}
	return ""
}

// placeholder reports an empty or placeholder id or URL (F10).
func placeholder(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.EqualFold(s, "none") || strings.EqualFold(s, "null") ||
		strings.HasSuffix(strings.ToLower(s), "/none.mp3")
}

// streamLink reports a URL that is a stream, not a final MP3 (F8).
func streamLink(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	p := strings.ToLower(u.Host + u.Path)
	if strings.Contains(p, "audiopipe") {
		return true
	}
	for _, seg := range strings.Split(strings.ToLower(u.Path), "/") {
		if seg == "stream" {
			return true
		}
	}
	return false
}

// normalizeTracks drops placeholders and keeps stream links out of AudioURL.
func normalizeTracks(raw []rawTrack) []generation.Track {
	out := make([]generation.Track, 0, len(raw))
	for _, t := range raw {
		if placeholder(t.ID) {
			continue
		}
		tr := generation.Track{
			ProviderTrackID: strings.TrimSpace(t.ID),
			AudioURL:        first(t.AudioURL, t.AudioURLs, t.SourceAudioURL, t.SourceAudioURLs),
			StreamURL:       first(t.StreamAudioURL, t.StreamAudioURLs, t.SourceStreamAudioURL, t.SourceStreamURLs),
			ImageURL:        first(t.ImageURL, t.ImageURLs, t.SourceImageURL, t.SourceImageURLs),
			Title:           t.Title,
			Tags:            t.Tags,
			Model:           first(t.ModelName, t.ModelNames),
		}
		if tr.AudioURL != "" && (tr.AudioURL == tr.StreamURL || streamLink(tr.AudioURL)) {
			if tr.StreamURL == "" {
				tr.StreamURL = tr.AudioURL
			}
			tr.AudioURL = ""
		}
		if t.Duration.ok && t.Duration.v > 0 {
			tr.DurationMs = int64(math.Round(t.Duration.v * 1000))
		}
		out = append(out, tr)
	}
	return out
}

// failureCode maps a provider failure code (callback code, errorCode,
// failCode) to the platform code and the refund flag.
func failureCode(code int) (fault.Code, bool) {
	switch code {
	case 400, 413:
		return fault.ContentPolicyRejected, false
	case 531:
		return fault.GenerationFailed, true
	}
	return fault.GenerationFailed, false
}

// Query polls a task.
func (c *Client) Query(ctx context.Context, cred generation.Credential, taskID string) (generation.TaskState, error) {
	const op = "providera.Query"
	if strings.TrimSpace(taskID) == "" {
		return generation.TaskState{}, fault.Invalid(op, "taskId", "A task id is required.")
	}
	path := "/api/v1/generate/record-info?taskId=" + url.QueryEscape(taskID)
	if c.dialect == DialectKieMarket {
		path = "/api/v1/jobs/recordInfo?taskId=" + url.QueryEscape(taskID)
	}
	env, err := c.call(ctx, op, http.MethodGet, path, cred, nil, false)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Details["provider_code"] == 422 || strings.Contains(strings.ToLower(env.Msg), "recordinfo is null") {
			return generation.TaskState{}, notFound(op, err)
		}
		return generation.TaskState{}, err
	}
	if len(env.Data) == 0 || string(env.Data) == "null" || strings.Contains(strings.ToLower(env.Msg), "recordinfo is null") {
		return generation.TaskState{}, notFound(op, errors.New("record data is null"))
	}
	var st generation.TaskState
	var perr error
	if c.dialect == DialectKieMarket {
		st, perr = parseMarket(env.Data)
	} else {
		st, perr = parseRecord(env.Data)
	}
	if perr != nil {
		return generation.TaskState{}, (&fault.Error{Op: op, Code: fault.ProviderUnavailable,
			Message: "The provider sent a malformed answer.", Err: perr}).With("reason", "malformed_response").With("retryable", true)
	}
	if st.TaskID == "" {
		st.TaskID = taskID
	}
	return st, nil
}

func notFound(op string, err error) error {
	return &fault.Error{Op: op, Code: fault.NotFound, Message: "The provider task was not found.", Err: err}
}

// record is the legacy record-info data.
type record struct {
	TaskID   string `json:"taskId"`
	TaskIDs  string `json:"task_id"`
	Status   string `json:"status"`
	Response *struct {
		TaskID   string     `json:"taskId"`
		SunoData []rawTrack `json:"sunoData"`
	} `json:"response"`
	SunoData     []rawTrack `json:"sunoData"`
	ErrorCode    flexFloat  `json:"errorCode"`
	ErrorMessage string     `json:"errorMessage"`
}

func parseRecord(data json.RawMessage) (generation.TaskState, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return generation.TaskState{}, err
	}
	raw := r.SunoData
	st := generation.TaskState{TaskID: first(r.TaskID, r.TaskIDs)}
	if r.Response != nil {
		if len(r.Response.SunoData) > 0 {
			raw = r.Response.SunoData
		}
		if st.TaskID == "" {
			st.TaskID = r.Response.TaskID
		}
	}
	st.Tracks = normalizeTracks(raw)
	fail := func(code fault.Code) {
		st.Stage, st.FailureCode, st.FailureMessage, st.Tracks = generation.StageFailed, string(code), r.ErrorMessage, nil
		if r.ErrorCode.ok && int(r.ErrorCode.v) == 531 {
			st.Refunded = true
		}
	}
	switch strings.ToUpper(strings.TrimSpace(r.Status)) {
	case "PENDING":
		st.Stage = generation.StageQueued
	case "TEXT_SUCCESS":
		st.Stage = generation.StageText
	case "FIRST_SUCCESS":
		st.Stage = generation.StageFirst
	case "SUCCESS":
		st.Stage = generation.StageProviderComplete
	case "SENSITIVE_WORD_ERROR":
		fail(fault.ContentPolicyRejected)
	case "CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED":
		code := fault.GenerationFailed
		if r.ErrorCode.ok {
			code, _ = failureCode(int(r.ErrorCode.v))
		}
		fail(code)
	case "CALLBACK_EXCEPTION":
		if hasAudio(st.Tracks) {
			st.Stage = generation.StageProviderComplete
		} else {
			fail(fault.GenerationFailed)
			if st.FailureMessage == "" {
				st.FailureMessage = "CALLBACK_EXCEPTION without tracks"
			}
		}
	default:
		st.Stage = generation.StageQueued
	}
	return st, nil
}

func hasAudio(ts []generation.Track) bool {
	for _, t := range ts {
		if t.AudioURL != "" {
			return true
		}
	}
	return false
}

// marketRecord is the market recordInfo data.
type marketRecord struct {
	TaskID          string     `json:"taskId"`
	State           string     `json:"state"`
	ResultJSON      string     `json:"resultJson"`
	FailCode        flexFloat  `json:"failCode"`
	FailMsg         string     `json:"failMsg"`
	CreditsConsumed *flexFloat `json:"creditsConsumed"`
}

// marketResult is the decoded resultJson, read leniently.
type marketResult struct {
	SunoData []rawTrack `json:"sunoData"`
	Data     []rawTrack `json:"data"`
	Response *struct {
		SunoData []rawTrack `json:"sunoData"`
	} `json:"response"`
}

func parseMarket(data json.RawMessage) (generation.TaskState, error) {
	var r marketRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return generation.TaskState{}, err
	}
	st := generation.TaskState{TaskID: r.TaskID}
	if r.CreditsConsumed != nil && r.CreditsConsumed.ok {
		v := int64(math.Round(r.CreditsConsumed.v))
		st.CreditsConsumed = &v
	}
	if strings.TrimSpace(r.ResultJSON) != "" {
		var res marketResult
		if err := json.Unmarshal([]byte(r.ResultJSON), &res); err != nil {
			var arr []rawTrack
			if json.Unmarshal([]byte(r.ResultJSON), &arr) != nil {
				return generation.TaskState{}, err
			}
			res.SunoData = arr
		}
		raw := res.SunoData
		if len(raw) == 0 {
			raw = res.Data
		}
		if len(raw) == 0 && res.Response != nil {
			raw = res.Response.SunoData
		}
		st.Tracks = normalizeTracks(raw)
	}
	switch strings.ToLower(strings.TrimSpace(r.State)) {
	case "success":
		st.Stage = generation.StageProviderComplete
	case "fail", "failed":
		code := fault.GenerationFailed
		if r.FailCode.ok {
			code, st.Refunded = failureCode(int(r.FailCode.v))
		}
		st.Stage, st.FailureCode, st.FailureMessage, st.Tracks = generation.StageFailed, string(code), r.FailMsg, nil
	case "generating":
		st.Stage = generation.StageQueued
		for _, t := range st.Tracks {
			if t.StreamURL != "" || t.AudioURL != "" {
				st.Stage = generation.StageFirst
			}
		}
	default: // waiting, queuing, unknown
		st.Stage = generation.StageQueued
	}
	return st, nil
}

// Callback headers (kie.ai webhook verification).
const (
	HeaderTimestamp = "X-Webhook-Timestamp"
	HeaderSignature = "X-Webhook-Signature"
)

func header(h map[string][]string, name string) string {
	if v := http.Header(h).Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// callbackTaskID reads the task id from data.task_id, data.taskId or the
// top level (F11).
func callbackTaskID(body []byte) (string, error) {
	var b struct {
		TaskID  string `json:"taskId"`
		TaskIDs string `json:"task_id"`
		Data    json.RawMessage
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "", err
	}
	var d struct {
		TaskID  string `json:"taskId"`
		TaskIDs string `json:"task_id"`
	}
	_ = json.Unmarshal(b.Data, &d) // data may be an array or null
	return first(d.TaskIDs, d.TaskID, b.TaskIDs, b.TaskID), nil
}

// Sign returns the signature header value for taskID at timestamp ts
// (unix seconds): base64(HMAC-SHA256(key, taskID + "." + ts)).
func Sign(key, taskID string, ts int64) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(taskID + "." + strconv.FormatInt(ts, 10)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyCallback checks a callback's signature within the skew window.
func (c *Client) VerifyCallback(cred generation.Credential, cb generation.Callback, now time.Time) error {
	const op = "providera.VerifyCallback"
	bad := func(reason string, err error) error {
		return (&fault.Error{Op: op, Code: fault.CallbackFailed, Message: "The callback could not be verified.", Err: err}).With("reason", reason)
	}
	if cred.CallbackKey == "" {
		return bad("not_configured", errors.New("no callback key"))
	}
	sig := header(cb.Header, HeaderSignature)
	if sig == "" {
		return bad("missing_signature", errors.New("no signature header"))
	}
	tsRaw := header(cb.Header, HeaderTimestamp)
	if tsRaw == "" {
		return bad("missing_timestamp", errors.New("no timestamp header"))
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(tsRaw), 10, 64)
	if err != nil {
		return bad("bad_timestamp", err)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > c.skew || d < -c.skew {
		return bad("stale", errors.New("timestamp outside the skew window"))
	}
	taskID, err := callbackTaskID(cb.Body)
	if err != nil {
		return bad("malformed_body", err)
	}
	if taskID == "" {
		return bad("missing_task_id", errors.New("no task id in the body"))
	}
	want := Sign(cred.CallbackKey, taskID, ts)
	if !hmac.Equal([]byte(want), []byte(strings.TrimSpace(sig))) {
		return bad("signature", errors.New("signature mismatch"))
	}
	return nil
}

// ParseCallback normalizes a verified callback.
func (c *Client) ParseCallback(cb generation.Callback) (generation.TaskState, error) {
	const op = "providera.ParseCallback"
	malformed := func(err error) error {
		return (&fault.Error{Op: op, Code: fault.CallbackFailed, Message: "The callback could not be read.", Err: err}).With("reason", "malformed_body")
	}
	var b struct {
		Code         *flexFloat      `json:"code"`
		Msg          string          `json:"msg"`
		CallbackType string          `json:"callbackType"`
		Data         json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(cb.Body, &b); err != nil {
		return generation.TaskState{}, malformed(err)
	}
	taskID, _ := callbackTaskID(cb.Body)
	if taskID == "" {
		return generation.TaskState{}, malformed(errors.New("no task id"))
	}
	var d struct {
		CallbackType string          `json:"callbackType"`
		Items        json.RawMessage `json:"data"`
		SunoData     []rawTrack      `json:"sunoData"`
		State        string          `json:"state"`
	}
	_ = json.Unmarshal(b.Data, &d)
	if d.State != "" { // a market record delivered as a callback
		st, err := parseMarket(b.Data)
		if err != nil {
			return generation.TaskState{}, malformed(err)
		}
		st.TaskID = taskID
		return st, nil
	}
	var items []rawTrack
	if len(d.Items) > 0 && json.Unmarshal(d.Items, &items) != nil {
		items = nil
	}
	if len(items) == 0 {
		items = d.SunoData
	}
	if len(items) == 0 { // flat: items at the top level
		_ = json.Unmarshal(b.Data, &items)
	}
	typ := strings.ToLower(strings.TrimSpace(first(d.CallbackType, b.CallbackType)))
	code := 200
	if b.Code != nil && b.Code.ok {
		code = int(b.Code.v)
	}
	st := generation.TaskState{TaskID: taskID, Tracks: normalizeTracks(items)}
	if code != 200 || typ == "error" || typ == "failed" || typ == "fail" {
		fc, refunded := failureCode(code)
		st.Stage, st.FailureCode, st.FailureMessage, st.Refunded, st.Tracks = generation.StageFailed, string(fc), b.Msg, refunded, nil
		return st, nil
	}
	switch typ {
	case "text":
		st.Stage = generation.StageText
	case "first":
		st.Stage = generation.StageFirst
	case "complete":
		st.Stage = generation.StageProviderComplete
	default:
		return generation.TaskState{}, malformed(errors.New("unknown callbackType " + strconv.Quote(truncate(typ, 40))))
	}
	return st, nil
}
