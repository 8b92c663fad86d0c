// Package providerbtest is a loopback simulator of provider B (MusicAPI.ai
// "Sonic") for tests and the example host. Production code never imports it.
//
// # Endpoints
//
//	POST /api/v1/sonic/create        {task_type:create_music, custom_mode, mv, ...} → {message:"success", task_id}
//	GET  /api/v1/sonic/task/{id}     {code:200, message:"success", data:[clip, clip]}
//	GET  /api/v1/get-credits         {"credits": n, "extra_credits": m}
//	GET  /media/{clip}.mp3           the final MP3: a piece of music composed for the clip
//	GET  /stream/{clip}              the stream link of a streaming clip (F8): its MP3's first half
//
// Every API call needs Authorization: Bearer APIKey(), else 401
// "Authorization header is missing." / "Invalid authorization format.". A
// create costs 15 credits (extra credits first); without them it answers
// 403 "The remaining credits are not enough...". Validation errors are 400
// with B's messages; an unknown task is 400 "task not found." (F13).
//
// # Lifecycle, driven by control methods (never by sleeps)
//
// Each create yields a task with two clips in state pending. A clip's MP3
// is a piece of music composed for it (internal/tune), Config.TrackDuration
// long and seeded by the task's prompt, description, tags and title, its id
// and the clip's index, so the two clips of a task sound different and a
// clip sounds the same on every GET; polls and webhooks report its exact
// duration. Advance moves
// every unfinished clip one state (pending → running → streaming →
// succeeded), AdvanceClip one clip; Complete finishes every clip; Fail fails
// every unfinished clip with a message (F7); Hang makes a task ignore
// Advance and Complete (F12). A webhook is sent synchronously, from the
// control call, when a clip reaches a final state (song.completed /
// song.failed) and, with Config.StreamingWebhooks, when one starts
// streaming (event song.streaming). It is signed with the create's
// webhook_secret (Config.DefaultSecret when none) as B signs it, and goes only
// to loopback webhook URLs. Pending clips carry an empty audio_url and
// running ones a placeholder ".../None.mp3" (F10); a streaming clip's
// audio_url is a /stream/ link replaced by the /media/ MP3 on success (F8).
// The poll reports duration as a number and webhooks as a string, as the
// reference's two examples do.
//
// Config.AutoAdvance, when positive, lets a host or a benchmark run
// generations end to end without a test driving them: every task created
// afterwards moves its clips to running, then to succeeded (skipping
// streaming, so StreamingWebhooks adds nothing), one step per AutoAdvance
// of Config.Clock (wall time on the default clock; on a clock a test moves,
// a step is due once the test has moved it by AutoAdvance), through the
// same path as Advance and Complete, so webhooks are signed, duplicated and
// dropped alike; a delivery error is ignored (the clips have moved all the
// same). A hung task, or one whose clips a control has already finished or
// failed, is left alone. Zero keeps tasks still until a test drives them.
//
// # Faults
//
//	F1  SetWebhookDuplicates (same X-Webhook-Id), Redeliver (same or new id, also after terminal)
//	F2  AdvanceClip (one clip finishes first), Complete without Advance, Redeliver an old streaming webhook
//	F3  DropWebhooks (only polls finish the task)
//	F4  AnswerCreateLate: the next create makes its task, then answers only after the client gave up
//	F5  FailNext (5xx on any endpoint), MalformedNextPoll
//	F6  Config.RateLimit/RateWindow (or SetRateLimit): 429 "Too many requests" on the injected clock
//	F7  Fail(taskID, "...moderation...")
//	F8  streaming clips with stream links later replaced by the MP3
//	F9  SetMedia: 403 n times then 200, 0 bytes, expired (404)
//	F10 empty and placeholder URLs before ready
//	F11 SetTaskIDPlacement (top level, per clip, camelCase, both)
//	F12 Hang
//	F13 unknown task id → 400 "task not found."
//
// SetSigning chooses valid, bad, stale or missing webhook signatures.
// Tasks and CreateCount expose state for assertions.
//
// # Control routes and the event log
//
// The simulator records what happens in an event log (internal/simctl):
// every API request it answers, every webhook attempt (Deliveries lists
// those) and every clip's state change, the newest 10,000 kept. Tests read
// it with Events; a person driving the example host reads and drives the
// simulator over control routes, which need the API key as
// Authorization: Bearer <APIKey> (else B's 401):
//
//	GET  /_sim/tasks                   the tasks, as Tasks lists them
//	POST /_sim/tasks/{id}/advance      Advance
//	POST /_sim/tasks/{id}/complete     Complete
//	POST /_sim/tasks/{id}/fail         Fail with form message
//	POST /_sim/fail_next               FailNext: form endpoint (create, task, credits), status, n (default 1)
//	GET  /_sim/events                  the event log (filters kind, subject, after)
//	POST /_sim/events/reset            empties the event log
//
// They answer {"ok": true} (with "deliveryError" when the clips moved but a
// webhook failed), 404 for an unknown task, 400 for a bad form, as
// {"error": "..."}.
//
// A Server is safe for concurrent use; besides the HTTP server it starts
// only AutoAdvance's per-task loops, which Close stops and waits for, and
// Close releases a create held by AnswerCreateLate: nothing outlives it,
// and no webhook is sent after Close returns.
package providerbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/internal/tune"
)

// Clock tells the simulator the time (rate window, timestamps).
type Clock interface {
	Now() time.Time
}

// Endpoint names a served API route for FailNext.
type Endpoint string

// The API endpoints.
const (
	// EndpointCreate is POST /api/v1/sonic/create.
	EndpointCreate Endpoint = "create"
	// EndpointTask is GET /api/v1/sonic/task/{id}.
	EndpointTask Endpoint = "task"
	// EndpointCredits is GET /api/v1/get-credits.
	EndpointCredits Endpoint = "credits"
)

// CreditsPerCreate is B's published price of one create (reference 2.6).
const CreditsPerCreate = 15

// Signing chooses how webhooks are signed.
type Signing int

// The signing modes.
const (
	// SignValid signs with the task's secret at the clock's time.
	SignValid Signing = iota
	// SignBad sends a signature under another secret.
	SignBad
	// SignStale signs correctly with a timestamp an hour old.
	SignStale
	// SignMissing sends no signature header.
	SignMissing
)

// TaskIDPlacement chooses where webhooks and polls put the task id (F11).
type TaskIDPlacement int

// The placements.
const (
	// TaskIDPerClip puts task_id in each clip (the default).
	TaskIDPerClip TaskIDPlacement = iota
	// TaskIDTopLevel puts task_id at the top level only.
	TaskIDTopLevel
	// TaskIDCamelTop puts taskId at the top level only.
	TaskIDCamelTop
	// TaskIDBoth puts task_id at the top level and in each clip.
	TaskIDBoth
)

// Media is a fault on one clip's MP3 URL (F9).
type Media struct {
	// Forbidden answers 403 this many times before serving.
	Forbidden int
	// Empty serves 0 bytes.
	Empty bool
	// Expired answers 404.
	Expired bool
}

// Config configures a Server.
type Config struct {
	// APIKey is the accepted key; empty means a random one.
	APIKey string
	// Clock is the simulator's clock; nil means the wall clock.
	Clock Clock
	// Credits and ExtraCredits are the starting balance; both zero means
	// 1000 credits. Use SetCredits(0, 0) for an exhausted account.
	Credits, ExtraCredits int64
	// RateLimit creates per RateWindow are accepted; 0 means no limit (F6).
	RateLimit int
	// RateWindow is the sliding throttle window on Clock; 0 means 10 s.
	RateWindow time.Duration
	// StreamingWebhooks also sends a webhook when a clip starts streaming.
	StreamingWebhooks bool
	// DefaultSecret signs webhooks of creates without webhook_secret.
	DefaultSecret string
	// WebhookClient delivers webhooks; nil means a client with a 10 s timeout.
	WebhookClient *http.Client
	// AutoAdvance, when positive, moves every task created afterwards one
	// step per AutoAdvance of Clock on its own (every clip to running,
	// then to succeeded), sending each step's webhook as Advance and Complete
	// do, until the task is terminal or hung. On the wall clock (the
	// default) it runs on real timers; on a clock a test moves, a step is
	// due when the clock has moved AutoAdvance. Zero keeps tasks still
	// until a test drives them (Advance, Complete, Fail...).
	AutoAdvance time.Duration
	// TrackDuration is the length of every clip's MP3 (a piece composed
	// for the clip, see internal/tune; about 8 KB a second). Zero means
	// 20 s.
	TrackDuration time.Duration
}

// Clip is a clip as the simulator holds it.
type Clip struct {
	// ID is clip_id; State its state; AudioURL what audio_url reports now;
	// Message a failure message.
	ID       string `json:"id"`
	State    string `json:"state"`
	AudioURL string `json:"audioUrl"`
	Message  string `json:"message,omitempty"`
	// DurationSec is the clip's duration once succeeded.
	DurationSec float64 `json:"durationSec"`
}

// Task is a task as the simulator holds it. Its JSON form is what
// GET /_sim/tasks lists.
type Task struct {
	// ID is task_id; the rest echo the create request.
	ID          string `json:"id"`
	MV          string `json:"mv"`
	Title       string `json:"title"`
	Tags        string `json:"tags"`
	Prompt      string `json:"prompt"`
	Description string `json:"description"`
	// CustomMode and Instrumental echo custom_mode and make_instrumental.
	CustomMode   bool `json:"customMode"`
	Instrumental bool `json:"instrumental"`
	// WebhookURL is the create's webhook_url.
	WebhookURL string `json:"webhookUrl"`
	// Clips are the task's two clips.
	Clips []Clip `json:"clips"`
	// Hung reports a task set to never finish (F12).
	Hung bool `json:"hung"`
	// Message is the task's failure message, if any.
	Message string `json:"message,omitempty"`
}

// Delivery is one webhook delivery attempt.
type Delivery struct {
	// TaskID, WebhookID and Event identify the webhook.
	TaskID, WebhookID, Event string
	// Body and Header are what was sent.
	Body   []byte
	Header http.Header
	// Status is the receiver's answer (0 on a transport error, then Err).
	Status int
	Err    string
}

type task struct {
	Task
	secret string
}

// Server is the simulator.
type Server struct {
	hs     *httptest.Server
	key    string
	clk    Clock
	wh     *http.Client
	cfg    Config
	run    *simctl.Runner // AutoAdvance loops; its context ends webhooks and held creates
	events *simctl.Events
	fail   simctl.Script[int] // HTTP statuses by Endpoint

	mu         sync.Mutex
	tasks      map[string]*task
	order      []string
	creates    int
	credits    int64
	extra      int64
	rateLimit  int
	rateWindow time.Duration
	window     []time.Time
	malformed  int
	late       int
	dups       int
	drop       map[string]bool
	signing    Signing
	placement  TaskIDPlacement
	media      map[string]*Media
	closeOnce  sync.Once
}

// New starts a simulator on 127.0.0.1.
func New(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, key: cfg.APIKey, clk: cfg.Clock, wh: cfg.WebhookClient,
		tasks: map[string]*task{}, drop: map[string]bool{}, media: map[string]*Media{},
		credits: cfg.Credits, extra: cfg.ExtraCredits, rateLimit: cfg.RateLimit, rateWindow: cfg.RateWindow}
	if s.key == "" {
		s.key = "sk-sim-" + simctl.RandomHex(16)
	}
	if s.clk == nil {
		s.clk = simctl.WallClock{}
	}
	if s.wh == nil {
		s.wh = &http.Client{Timeout: 10 * time.Second}
	}
	if s.credits == 0 && s.extra == 0 {
		s.credits = 1000
	}
	if s.cfg.TrackDuration <= 0 {
		s.cfg.TrackDuration = 20 * time.Second
	}
	if s.rateLimit < 0 || s.rateWindow < 0 {
		return nil, errors.New("providerbtest: negative rate limit")
	}
	if s.rateLimit > 0 && s.rateWindow == 0 {
		s.rateWindow = 10 * time.Second
	}
	s.events = simctl.NewEvents(simctl.EventsConfig{Clock: s.clk})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/sonic/create", s.handleCreate)
	mux.HandleFunc("GET /api/v1/sonic/task/{id}", s.handleTask)
	mux.HandleFunc("GET /api/v1/sonic/task/", s.handleTask)
	mux.HandleFunc("GET /api/v1/get-credits", s.handleCredits)
	mux.HandleFunc("GET /media/{file}", s.handleMedia)
	mux.HandleFunc("GET /stream/{clip}", s.handleStream)
	if err := s.mountControl(mux); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("providerbtest: listen: %w", err)
	}
	s.run = simctl.NewRunner(simctl.RunnerConfig{Clock: s.clk})
	s.hs = httptest.NewUnstartedServer(s.events.Middleware(mux))
	s.hs.Listener.Close()
	s.hs.Listener = l
	s.hs.Start()
	return s, nil
}

// URL is the simulator's base URL (Config.BaseURL of the adapter).
func (s *Server) URL() string { return s.hs.URL }

// APIKey is the accepted API key.
func (s *Server) APIKey() string { return s.key }

// Close stops the server and releases held requests.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.run.Close()
		s.hs.CloseClientConnections()
		s.hs.Close()
	})
}

// TrackLength is the exact length of every clip's MP3, the duration polls
// and webhooks report (rounded to 10 ms).
func (s *Server) TrackLength() time.Duration { return tune.Length(s.cfg.TrackDuration) }

// ClipMP3 returns a clip's MP3: the bytes its final audio URL serves,
// whatever the clip's state or media faults.
func (s *Server) ClipMP3(clipID string) ([]byte, error) {
	s.mu.Lock()
	seed, ok := s.clipSeedLocked(clipID)
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("providerbtest: unknown clip %q", clipID)
	}
	return s.clipMP3(clipID, seed)
}

// clipSeedLocked returns the seed of a clip's piece: its task's prompt,
// description, tags, title and id, and the clip's index. Callers hold mu.
func (s *Server) clipSeedLocked(clipID string) (string, bool) {
	for _, t := range s.tasks {
		for i, c := range t.Clips {
			if c.ID == clipID {
				return strings.Join([]string{t.Prompt, t.Description, t.Tags, t.Title, t.ID, strconv.Itoa(i)}, "\x00"), true
			}
		}
	}
	return "", false
}

// clipMP3 composes and encodes a clip's piece.
func (s *Server) clipMP3(clipID, seed string) ([]byte, error) {
	b, err := tune.Piece(seed, s.cfg.TrackDuration)
	if err != nil {
		return nil, fmt.Errorf("providerbtest: clip %s: %w", clipID, err)
	}
	return b, nil
}

// ---- controls ----

// SetCredits sets the balance; zero makes creates answer 403.
func (s *Server) SetCredits(credits, extra int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.credits, s.extra = credits, extra
}

// SetRateLimit sets the create throttle (F6); 0 turns it off.
func (s *Server) SetRateLimit(n int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit, s.rateWindow, s.window = n, window, nil
}

// FailNext makes the next n calls to ep answer status (F5), replacing
// what an earlier FailNext left for ep; n <= 0 clears it.
func (s *Server) FailNext(ep Endpoint, status, n int) {
	if n <= 0 {
		s.fail.Drop(string(ep))
		return
	}
	s.fail.Set(string(ep), status, n)
}

// MalformedNextPoll makes the next n polls answer a truncated JSON body (F5).
func (s *Server) MalformedNextPoll(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.malformed = n
}

// AnswerCreateLate makes the next create record its task, then hold its
// answer until the client gives up (or Close), F4.
func (s *Server) AnswerCreateLate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.late++
}

// SetWebhookDuplicates sends each webhook 1+n times with the same id (F1).
func (s *Server) SetWebhookDuplicates(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dups = n
}

// DropWebhooks stops webhooks for a task (F3).
func (s *Server) DropWebhooks(taskID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop[taskID] = true
}

// SetSigning chooses how later webhooks are signed.
func (s *Server) SetSigning(m Signing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signing = m
}

// SetTaskIDPlacement chooses where the task id goes (F11).
func (s *Server) SetTaskIDPlacement(p TaskIDPlacement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.placement = p
}

// SetMedia sets a fault on a clip's MP3 URL (F9).
func (s *Server) SetMedia(clipID string, m Media) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media[clipID] = &m
}

// Hang makes a task ignore Advance and Complete (F12).
func (s *Server) Hang(taskID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[taskID]
	if !ok {
		return errUnknown(taskID)
	}
	t.Hung = true
	return nil
}

// Events lists the event log, oldest first: the API requests answered
// (simctl.KindRequest, Name "METHOD /path?query"), the webhook attempts
// (KindDelivery: Name the event, Subject the task, ID the X-Webhook-Id)
// and the clips' states as they change (KindState: Name the state,
// Subject the task, ID the clip).
func (s *Server) Events() []simctl.Event { return s.events.List() }

// ResetEvents empties the event log, Deliveries included (Redeliver
// counts from what is left).
func (s *Server) ResetEvents() { s.events.Reset() }

// Tasks returns a copy of every task in creation order.
func (s *Server) Tasks() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Task, 0, len(s.order))
	for _, id := range s.order {
		t := s.tasks[id].Task
		t.Clips = append([]Clip(nil), t.Clips...)
		out = append(out, t)
	}
	return out
}

// CreateCount is the number of accepted creates (tasks made).
func (s *Server) CreateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// Deliveries returns the webhook delivery attempts the event log holds, in
// order.
func (s *Server) Deliveries() []Delivery {
	evs := s.events.List(simctl.KindDelivery)
	out := make([]Delivery, len(evs))
	for i, e := range evs {
		out[i] = Delivery{TaskID: e.Subject, WebhookID: e.ID, Event: e.Name, Body: e.Body, Header: e.Header,
			Status: e.Status, Err: e.Err}
	}
	return out
}

// errUnknownTask is the error of a control call on a task the simulator
// never created.
var errUnknownTask = errors.New("providerbtest: unknown task")

func errUnknown(id string) error { return fmt.Errorf("%w %q", errUnknownTask, id) }

// Advance moves every unfinished clip one state and sends the webhooks B
// would.
func (s *Server) Advance(taskID string) error {
	return s.move(taskID, -1, "")
}

// AdvanceClip moves one clip (0 or 1) one state (F2).
func (s *Server) AdvanceClip(taskID string, clip int) error {
	return s.move(taskID, clip, "")
}

// Complete moves every unfinished clip to succeeded and sends
// song.completed.
func (s *Server) Complete(taskID string) error {
	return s.move(taskID, -1, succeedAll)
}

// Fail fails every unfinished clip with message and sends song.failed (F7).
func (s *Server) Fail(taskID, message string) error {
	return s.move(taskID, -1, "fail:"+message)
}

// succeedAll is the internal target of Complete.
const succeedAll = "succeeded-all"

// next is a clip's following state.
func next(state string) string {
	switch state {
	case providerb.StatePending:
		return providerb.StateRunning
	case providerb.StateRunning:
		return providerb.StateStreaming
	}
	return providerb.StateSucceeded
}

func (s *Server) move(taskID string, only int, target string) error {
	s.mu.Lock()
	t, ok := s.tasks[taskID]
	if !ok {
		s.mu.Unlock()
		return errUnknown(taskID)
	}
	if t.Hung && !strings.HasPrefix(target, "fail:") {
		s.mu.Unlock()
		return nil
	}
	event := ""
	for i := range t.Clips {
		c := &t.Clips[i]
		if (only >= 0 && i != only) || c.State == providerb.StateSucceeded || c.State == providerb.StateFailed {
			continue
		}
		switch {
		case target == succeedAll:
			c.State = providerb.StateSucceeded
		case strings.HasPrefix(target, "fail:"):
			c.State, c.Message = providerb.StateFailed, strings.TrimPrefix(target, "fail:")
			t.Message = c.Message
		default:
			c.State = next(c.State)
		}
		s.setURL(c)
		s.events.Record(simctl.Event{Kind: simctl.KindState, Name: c.State, Subject: t.ID, ID: c.ID})
		switch c.State {
		case providerb.StateSucceeded:
			if event != providerb.EventFailed {
				event = providerb.EventCompleted
			}
		case providerb.StateFailed:
			event = providerb.EventFailed
		case providerb.StateStreaming:
			if event == "" && s.cfg.StreamingWebhooks {
				event = "song.streaming"
			}
		}
	}
	if event == "" || s.drop[taskID] || t.WebhookURL == "" {
		s.mu.Unlock()
		return nil
	}
	body := s.taskJSON(t, true)
	id := "wh_" + simctl.RandomHex(12)
	n := 1 + s.dups
	s.mu.Unlock()
	for i := 0; i < n; i++ {
		if err := s.deliver(t.ID, id, event, body); err != nil {
			return err
		}
	}
	return nil
}

// autoLocked starts moving a new task on its own when Config.AutoAdvance is
// set: its clips to running, then to succeeded, one step per AutoAdvance
// of the clock, until the task stops moving or the server closes. Delivery
// errors are ignored: the clips have moved all the same. Callers hold mu;
// a closed server starts nothing.
func (s *Server) autoLocked(taskID string) {
	if s.cfg.AutoAdvance <= 0 {
		return
	}
	step := 0
	s.run.Every(s.cfg.AutoAdvance, func(context.Context) bool {
		if !s.autoMovable(taskID) {
			return false
		}
		if step == 0 {
			_ = s.move(taskID, -1, "")
		} else {
			_ = s.move(taskID, -1, succeedAll)
		}
		step++
		return s.autoMovable(taskID)
	})
}

// autoMovable reports whether auto-advance may still move a task: the
// server is open, the task is not hung (F12) and a clip is unfinished.
func (s *Server) autoMovable(taskID string) bool {
	if s.run.Stopped() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[taskID]
	if !ok || t.Hung {
		return false
	}
	for _, c := range t.Clips {
		if c.State != providerb.StateSucceeded && c.State != providerb.StateFailed {
			return true
		}
	}
	return false
}

// Redeliver re-sends the i-th recorded delivery (Deliveries order), with
// its X-Webhook-Id or a new one, freshly signed (F1, F2).
func (s *Server) Redeliver(i int, newID bool) error {
	ds := s.Deliveries()
	if i < 0 || i >= len(ds) {
		return fmt.Errorf("providerbtest: no delivery %d", i)
	}
	d := ds[i]
	id := d.WebhookID
	if newID {
		id = "wh_" + simctl.RandomHex(12)
	}
	return s.deliver(d.TaskID, id, d.Event, d.Body)
}

// setURL sets a clip's audio_url for its state (F8, F10). Callers hold mu.
func (s *Server) setURL(c *Clip) {
	switch c.State {
	case providerb.StatePending:
		c.AudioURL = ""
	case providerb.StateRunning:
		c.AudioURL = "https://cdn1.suno.ai/None.mp3"
	case providerb.StateStreaming:
		c.AudioURL = s.hs.URL + "/stream/" + c.ID
	case providerb.StateSucceeded:
		c.AudioURL = s.hs.URL + "/media/" + c.ID + ".mp3"
		c.DurationSec = math.Round(s.TrackLength().Seconds()*100) / 100
	case providerb.StateFailed:
		c.AudioURL = ""
	}
}

// deliver signs and posts one webhook to the task's loopback URL.
func (s *Server) deliver(taskID, id, event string, body []byte) error {
	s.mu.Lock()
	t, ok := s.tasks[taskID]
	if !ok || s.run.Stopped() {
		s.mu.Unlock()
		return errors.New("providerbtest: closed or unknown task")
	}
	target, secret, mode := t.WebhookURL, t.secret, s.signing
	now := s.clk.Now()
	s.mu.Unlock()
	if secret == "" {
		secret = s.cfg.DefaultSecret
	}
	u, err := url.Parse(target)
	if err != nil || !loopback(u.Hostname()) {
		s.record(Delivery{TaskID: taskID, WebhookID: id, Event: event, Body: body, Err: "webhook URL is not loopback"})
		return fmt.Errorf("providerbtest: webhook URL %q is not loopback", target)
	}
	ts := now.Unix()
	if mode == SignStale {
		ts -= 3600
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(providerb.HeaderWebhookID, id)
	h.Set("Idempotency-Key", id)
	h.Set(providerb.HeaderWebhookEvent, event)
	h.Set(providerb.HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	switch mode {
	case SignValid, SignStale:
		h.Set(providerb.HeaderWebhookSignature, providerb.Sign(secret, ts, body))
	case SignBad:
		h.Set(providerb.HeaderWebhookSignature, providerb.Sign(secret+"-wrong", ts, body))
	}
	req, err := http.NewRequestWithContext(s.run.Context(), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h.Clone()
	d := Delivery{TaskID: taskID, WebhookID: id, Event: event, Body: body, Header: h}
	resp, err := s.wh.Do(req)
	if err != nil {
		d.Err = err.Error()
		s.record(d)
		return fmt.Errorf("providerbtest: deliver webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	d.Status = resp.StatusCode
	s.record(d)
	return nil
}

// record logs a delivery attempt.
func (s *Server) record(d Delivery) {
	s.events.Record(simctl.Event{Kind: simctl.KindDelivery, Name: d.Event, Subject: d.TaskID, ID: d.WebhookID,
		Status: d.Status, Err: d.Err, Header: d.Header, Body: d.Body})
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// taskJSON renders a task (webhook: duration as a string). Callers hold mu.
func (s *Server) taskJSON(t *task, webhook bool) []byte {
	clips := make([]map[string]any, 0, len(t.Clips))
	perClip := s.placement == TaskIDPerClip || s.placement == TaskIDBoth
	for _, c := range t.Clips {
		m := map[string]any{
			"clip_id": c.ID, "state": c.State, "title": t.Title, "tags": t.Tags, "lyrics": t.Prompt,
			"image_url": "", "audio_url": c.AudioURL, "video_url": "", "created_at": "2026-11-22T10:00:00Z",
			"mv": strings.Replace(t.MV, "sonic-", "chirp-", 1), "gpt_description_prompt": t.Description,
			"negative_tags": "", "style_weight": 0.5, "weirdness_constraint": 0.5,
		}
		if c.State == providerb.StateSucceeded {
			m["image_url"] = s.hs.URL + "/media/" + c.ID + ".jpg"
		}
		if webhook {
			m["duration"] = strconv.FormatFloat(c.DurationSec, 'f', 2, 64)
		} else {
			m["duration"] = c.DurationSec
		}
		if c.Message != "" {
			m["error_message"] = c.Message
		}
		if perClip {
			m["task_id"] = t.ID
		}
		clips = append(clips, m)
	}
	top := map[string]any{"code": 200, "message": "success", "data": clips}
	if t.Message != "" {
		top["message"] = t.Message
	}
	switch s.placement {
	case TaskIDTopLevel, TaskIDBoth:
		top["task_id"] = t.ID
	case TaskIDCamelTop:
		top["taskId"] = t.ID
	}
	b, _ := json.Marshal(top)
	return b
}

// ---- handlers ----

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}

// gate checks auth and injected failures.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, ep Endpoint) bool {
	if err := simctl.Bearer(r, s.key); err != nil {
		s.refuse(w, r, err)
		return false
	}
	if st, ok := s.fail.Next(string(ep)); ok {
		writeErr(w, st, http.StatusText(st))
		return false
	}
	return true
}

// refuse answers a request without the API key as B does, on the API and
// the control routes alike.
func (s *Server) refuse(w http.ResponseWriter, _ *http.Request, err error) {
	if errors.Is(err, simctl.ErrNoKey) {
		writeErr(w, http.StatusUnauthorized, "Authorization header is missing.")
		return
	}
	writeErr(w, http.StatusUnauthorized, "Invalid authorization format.")
}

type createReq struct {
	TaskType             string `json:"task_type"`
	CustomMode           *bool  `json:"custom_mode"`
	MV                   string `json:"mv"`
	Prompt               string `json:"prompt"`
	Title                string `json:"title"`
	Tags                 string `json:"tags"`
	GPTDescriptionPrompt string `json:"gpt_description_prompt"`
	MakeInstrumental     bool   `json:"make_instrumental"`
	WebhookURL           string `json:"webhook_url"`
	WebhookSecret        string `json:"webhook_secret"`
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	if !s.gate(w, r, EndpointCreate) {
		return
	}
	var q createReq
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
		writeErr(w, 400, "Invalid request body.")
		return
	}
	switch {
	case q.TaskType != "create_music":
		writeErr(w, 400, "Unsupported task_type.")
		return
	case q.CustomMode == nil:
		writeErr(w, 400, "custom_mode is required.")
		return
	}
	limit := 5000
	switch q.MV {
	case "sonic-v3-5", "sonic-v4":
		limit = 2999
	case "sonic-v4-5", "sonic-v4-5-plus", "sonic-v5":
	default:
		writeErr(w, 400, "Invalid mv.")
		return
	}
	rl := func(x string) int { return len([]rune(x)) }
	if *q.CustomMode {
		if rl(q.Prompt) > limit || rl(q.Title) >= 80 || rl(q.Tags) >= 200 {
			writeErr(w, 400, "Field exceeds maximum length.")
			return
		}
	} else if q.GPTDescriptionPrompt == "" || rl(q.GPTDescriptionPrompt) >= 200 {
		writeErr(w, 400, "gpt_description_prompt is required and must be under 200 characters.")
		return
	}
	if low := strings.ToLower(q.Prompt + " " + q.GPTDescriptionPrompt); strings.Contains(low, "copyrighted lyrics") {
		writeErr(w, 403, "The lyrics contain copyrighted content.")
		return
	}
	s.mu.Lock()
	now := s.clk.Now()
	if s.rateLimit > 0 {
		kept := s.window[:0]
		for _, at := range s.window {
			if now.Sub(at) < s.rateWindow {
				kept = append(kept, at)
			}
		}
		s.window = kept
		if len(s.window) >= s.rateLimit {
			s.mu.Unlock()
			writeErr(w, http.StatusTooManyRequests, "Too many requests")
			return
		}
		s.window = append(s.window, now)
	}
	if s.extra+s.credits < CreditsPerCreate {
		s.mu.Unlock()
		writeErr(w, 403, "The remaining credits are not enough to complete this request.")
		return
	}
	cost := int64(CreditsPerCreate)
	if s.extra >= cost {
		s.extra -= cost
	} else {
		cost -= s.extra
		s.extra = 0
		s.credits -= cost
	}
	t := &task{secret: q.WebhookSecret, Task: Task{ID: simctl.RandomUUID(), MV: q.MV, Title: q.Title, Tags: q.Tags, Prompt: q.Prompt,
		Description: q.GPTDescriptionPrompt, CustomMode: *q.CustomMode, Instrumental: q.MakeInstrumental, WebhookURL: q.WebhookURL}}
	for i := 0; i < 2; i++ {
		c := Clip{ID: simctl.RandomUUID(), State: providerb.StatePending}
		s.setURL(&c)
		t.Clips = append(t.Clips, c)
		s.events.Record(simctl.Event{Kind: simctl.KindState, Name: c.State, Subject: t.ID, ID: c.ID})
	}
	s.tasks[t.ID] = t
	s.order = append(s.order, t.ID)
	s.creates++
	s.autoLocked(t.ID)
	late := s.late > 0
	if late {
		s.late--
	}
	s.mu.Unlock()
	if late {
		select {
		case <-r.Context().Done():
		case <-s.run.Done():
		}
	}
	writeJSON(w, 200, map[string]any{"message": "success", "task_id": t.ID})
}

func (s *Server) handleTask(w http.ResponseWriter, r *http.Request) {
	if !s.gate(w, r, EndpointTask) {
		return
	}
	id := r.PathValue("id")
	if id == "" {
		writeErr(w, 400, "missing task id.")
		return
	}
	s.mu.Lock()
	if s.malformed > 0 {
		s.malformed--
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"code":200,"message":"success","data":[{"clip_id":`))
		return
	}
	t, ok := s.tasks[id]
	if !ok {
		s.mu.Unlock()
		writeErr(w, 400, "task not found.")
		return
	}
	body := s.taskJSON(t, false)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (s *Server) handleCredits(w http.ResponseWriter, r *http.Request) {
	if !s.gate(w, r, EndpointCredits) {
		return
	}
	s.mu.Lock()
	c, e := s.credits, s.extra
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"credits": c, "extra_credits": e})
}

func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	clipID, ok := strings.CutSuffix(file, ".mp3")
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	found := false
	for _, t := range s.tasks {
		for _, c := range t.Clips {
			if c.ID == clipID && c.State == providerb.StateSucceeded {
				found = true
			}
		}
	}
	seed, _ := s.clipSeedLocked(clipID)
	m := s.media[clipID]
	status := 0
	empty := false
	if m != nil {
		switch {
		case m.Expired:
			status = 404
		case m.Forbidden > 0:
			m.Forbidden--
			status = 403
		case m.Empty:
			empty = true
		}
	}
	s.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", "audio/mpeg")
	if empty {
		w.Header().Set("Content-Length", "0")
		return
	}
	b, err := s.clipMP3(clipID, seed)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	// A stream link serves a partial stream and is never the final asset.
	clipID := r.PathValue("clip")
	s.mu.Lock()
	seed, ok := s.clipSeedLocked(clipID)
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := s.clipMP3(clipID, seed)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "audio/mpeg")
	_, _ = w.Write(b[:len(b)/2])
}

// mountControl serves the control routes on mux (see the package doc).
func (s *Server) mountControl(mux *http.ServeMux) error {
	c, err := simctl.NewControl(mux, simctl.ControlConfig{Key: s.key, RefuseFunc: s.refuse})
	if err != nil {
		return fmt.Errorf("providerbtest: %w", err)
	}
	s.events.Mount(c)
	c.HandleFunc("GET /tasks", func(w http.ResponseWriter, r *http.Request) {
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.Tasks()})
	})
	c.HandleFunc("POST /tasks/{id}/advance", func(w http.ResponseWriter, r *http.Request) {
		controlResult(w, s.Advance(r.PathValue("id")))
	})
	c.HandleFunc("POST /tasks/{id}/complete", func(w http.ResponseWriter, r *http.Request) {
		controlResult(w, s.Complete(r.PathValue("id")))
	})
	c.HandleFunc("POST /tasks/{id}/fail", func(w http.ResponseWriter, r *http.Request) {
		msg := r.FormValue("message")
		if msg == "" {
			msg = "Generation failed."
		}
		controlResult(w, s.Fail(r.PathValue("id"), msg))
	})
	c.HandleFunc("POST /fail_next", func(w http.ResponseWriter, r *http.Request) {
		ep := Endpoint(r.FormValue("endpoint"))
		switch ep {
		case EndpointCreate, EndpointTask, EndpointCredits:
		default:
			simctl.WriteError(w, http.StatusBadRequest, "endpoint must be create, task or credits")
			return
		}
		status, err := strconv.Atoi(r.FormValue("status"))
		if err != nil || status < 400 || status > 599 {
			simctl.WriteError(w, http.StatusBadRequest, "status must be an HTTP error status")
			return
		}
		n := 1
		if v := r.FormValue("n"); v != "" {
			if n, err = strconv.Atoi(v); err != nil {
				simctl.WriteError(w, http.StatusBadRequest, "n must be a number")
				return
			}
		}
		s.FailNext(ep, status, n)
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"endpoint": ep, "status": status, "n": n})
	})
	return nil
}

// controlResult answers a control route: {"ok": true}, with
// "deliveryError" when the clips moved but a webhook failed, or 404 for an
// unknown task.
func controlResult(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errUnknownTask):
		simctl.WriteError(w, http.StatusNotFound, err.Error())
	case err != nil:
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "deliveryError": err.Error()})
	default:
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
}
