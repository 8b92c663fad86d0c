// Package provideratest is a loopback simulator of music provider A (the
// Suno-wrapper family of sunoapi.org and kie.ai) for generation/providera
// and the platform's tests. Production binaries never import it.
//
// # Wire protocol
//
// The simulator speaks the dialect of Config.Dialect ("sunoapi", "kie" or
// "kie_market") and answers every request with the envelope
// {code, msg, data}; the HTTP status is 200 unless Config.MirrorStatus is
// set (then a body code that is a valid HTTP status is also the status).
// Requests need Authorization: Bearer <APIKey> (else code 401).
//
//	POST /api/v1/generate                    create (every dialect)
//	GET  /api/v1/generate/record-info?taskId= query (every dialect)
//	POST /api/v1/jobs/createTask             create (kie_market)
//	GET  /api/v1/jobs/recordInfo?taskId=     query (kie_market): state, resultJson, creditsConsumed
//	GET  /api/v1/generate/credit             balance (sunoapi)
//	GET  /api/v1/chat/credit                 balance (kie, kie_market)
//	GET  /media/{taskId}/{n}.mp3             final MP3 of track n (after SUCCESS)
//	GET  /audiopipe/{taskId}/{n}             stream of track n (after FIRST_SUCCESS): its MP3's first half
//	GET  /image/{taskId}/{n}.jpeg            cover image
//
// Error codes follow the dialect: throttles are 405 (sunoapi; 430 is the
// same meaning and can be injected) or 429 (kie); no credits is 429
// (sunoapi) or 402 (kie); a create without callBackUrl is 422 "Please enter
// callBackUrl" (F13); an unknown task is {code:200, data:null} (sunoapi) or
// {code:422, msg:"recordInfo is null"} (kie) (F13).
//
// Each create bills Config.CreditsPerTask from the balance and yields a task
// with two tracks. A track's MP3 is a piece of music composed for it
// (internal/tune), Config.TrackDuration long and seeded by the task's
// prompt, style and title, its id and the track's index, so the two
// tracks of a task sound different and a track sounds the same on every
// GET; records and callbacks report its exact duration. Creates are throttled by a sliding window of 20 per 10 s
// on the injected clock (F6; throttled creates are neither counted nor
// created), and queries by 3 per second per task.
//
// # Lifecycle and callbacks
//
// Tasks do not move by themselves unless Config.AutoAdvance is set:
// Advance moves a task one stage (PENDING
// -> TEXT_SUCCESS -> FIRST_SUCCESS -> SUCCESS) and sends that stage's
// callback (text, first, complete) to the task's callBackUrl before
// returning; Complete runs a task to SUCCESS; Fail ends it with a callback
// code (400 -> SENSITIVE_WORD_ERROR, others GENERATE_AUDIO_FAILED; 531
// refunds the balance; creditsConsumed is 0 on every failure). Redeliver
// sends any stage's callback again, in any order (F1, F2). Callbacks are
// the reference's snake_case shape, in every dialect, signed with kie's
// scheme: X-Webhook-Timestamp (the clock's unix seconds) and
// X-Webhook-Signature = base64(HMAC-SHA256(CallbackKey, taskId + "." + ts)).
// Deliveries are synchronous (one attempt, no retry) and listed by
// Deliveries.
//
// Config.AutoAdvance, when positive, lets a host or a benchmark run
// generations end to end without a test driving them: every task created
// afterwards moves one stage per AutoAdvance of Config.Clock (text, first,
// complete), through the same path as Advance, so its callbacks are signed,
// shaped and dropped alike; a delivery error is ignored (the stage has moved
// all the same). On the default wall clock that is wall time; on a clock a
// test moves, a stage is due once the test has moved the clock by
// AutoAdvance. A task that Hang, Fail or CallbackException has reached is
// left alone, and the controls keep working on auto-advanced tasks. Zero
// keeps tasks still until a test drives them.
//
// # Faults
//
//	F1  Redeliver any stage, also after the terminal one
//	F2  Redeliver("first") after complete; DropCallbacks(text, first) then Complete
//	F3  DropCallbacks; CallbackException (status CALLBACK_EXCEPTION with or without sunoData)
//	F4  DelayNextCreate: the task is created and billed, the answer waits past the client's timeout
//	F5  FailNext(endpoint, Failure{...}): any body code / HTTP status / raw (malformed) body
//	F6  the create window (or FailNext with 405/430/429)
//	F7  Fail(task, 400 | 531 | 501 ...), creditsConsumed 0
//	F8  first-stage tracks carry only a stream URL; SetStreamInAudioURL puts it in audio_url
//	F9  SetMediaFault: 403 for the first N GETs, 0 bytes, expiry (404), media on another URL; Config.MediaTTL
//	F10 SetPlaceholders: empty ids and .../None.mp3 URLs before ready
//	F11 SetKeyDrift: taskId instead of task_id in callbacks; flat sunoData in records
//	F12 Hang: Advance no longer moves the task
//	F13 create without callBackUrl; unknown task query
//	    SetSignature(SignBad | SignStale | SignNone); SetCreditsConsumed (market drift)
//
// # Control routes and the event log
//
// The simulator records what happens in an event log (internal/simctl):
// every API request it answers, every callback attempt (Deliveries lists
// those) and every state change of its tasks, the newest 10,000 kept.
// Tests read it with Events; a person driving the example host reads and
// drives the simulator over control routes, which need the API key as
// Authorization: Bearer <APIKey> (else the envelope's 401):
//
//	GET  /_sim/tasks                   the tasks, as Tasks lists them
//	POST /_sim/tasks/{id}/advance      Advance: {"status"}, with "deliveryError" when the callback failed
//	POST /_sim/tasks/{id}/complete     Complete
//	POST /_sim/tasks/{id}/fail         Fail with form code (default 501)
//	POST /_sim/fail_next               FailNext: form endpoint (create, query, balance), code, msg, status, raw
//	GET  /_sim/events                  the event log (filters kind, subject, after)
//	POST /_sim/events/reset            empties the event log
//
// An unknown task answers 404 and a finished one 409, as {"error": "..."}.
//
// A Server is safe for concurrent use. The clock is injectable and decides
// windows, caps, expiry, signature timestamps and AutoAdvance; only
// DelayNextCreate waits in real time (a client's timeout is real). Close
// stops both: no goroutine outlives Close, and no callback is sent after it
// returns.
package provideratest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/internal/tune"
)

// Dialects the simulator speaks.
const (
	DialectSunoAPI   = "sunoapi"
	DialectKie       = "kie"
	DialectKieMarket = "kie_market"
)

// Clock tells the simulator's time.
type Clock interface {
	Now() time.Time
}

// ManualClock is a Clock tests move by hand. The zero value starts at the
// zero time; use NewManualClock.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a clock at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *ManualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Config configures a Server.
type Config struct {
	// Dialect is "sunoapi" (default), "kie" or "kie_market".
	Dialect string
	// APIKey is the key clients present. Empty means a random one.
	APIKey string
	// CallbackKey signs callbacks. Empty means a random one.
	CallbackKey string
	// Clock is the simulator's time. Nil means the wall clock.
	Clock Clock
	// Addr is the loopback listen address. Empty means 127.0.0.1:0.
	Addr string
	// CallbackClient delivers callbacks. Nil means a client with a 5 s timeout.
	CallbackClient *http.Client
	// Credits is the starting balance. Zero means 1000.
	Credits int64
	// CreditsPerTask is what a create bills. Zero means 12.
	CreditsPerTask int64
	// MediaTTL is how long result URLs live after creation. Zero means 15 days.
	MediaTTL time.Duration
	// MirrorStatus makes the HTTP status mirror the body code when that code
	// is a valid HTTP status.
	MirrorStatus bool
	// CreateLimit and CreateWindow are the sliding create window. Zero
	// means 20 per 10 s.
	CreateLimit  int
	CreateWindow time.Duration
	// PollCap is the per-task query limit per second. Zero means 3.
	PollCap int
	// AutoAdvance, when positive, moves every task created afterwards one
	// stage per AutoAdvance of Clock on its own (text, first, complete),
	// sending each stage's callback as Advance does, until the task is
	// terminal, hung or in CALLBACK_EXCEPTION. On the wall clock (the
	// default) it runs on real timers; on a clock a test moves, a stage is
	// due when the clock has moved AutoAdvance. Zero keeps tasks still
	// until a test drives them (Advance, Complete, Fail...).
	AutoAdvance time.Duration
	// TrackDuration is the length of every track's MP3 (a piece composed
	// for the track, see internal/tune; about 8 KB a second). Zero means
	// 20 s.
	TrackDuration time.Duration
}

// Endpoint names an API endpoint for fault injection.
type Endpoint string

// Endpoints.
const (
	EndpointCreate  Endpoint = "create"
	EndpointQuery   Endpoint = "query"
	EndpointBalance Endpoint = "balance"
)

// Failure is an injected answer. Raw, when set, is sent as the body as is
// (a malformed JSON body for F5); else the envelope {Code, Msg, null}.
// HTTPStatus zero means 200 (or the mirrored code with MirrorStatus).
type Failure struct {
	HTTPStatus int
	Code       int
	Msg        string
	Raw        string
}

// SignatureMode is how callbacks are signed.
type SignatureMode int

// Signature modes.
const (
	SignValid SignatureMode = iota // correct signature, current timestamp
	SignNone                       // no signature headers
	SignBad                        // signed with a wrong key
	SignStale                      // correct signature over a timestamp one hour old
)

// MediaFault shapes the answers of a track's MP3 URL (F9).
type MediaFault struct {
	// Forbidden is how many GETs answer 403 before the file is served.
	Forbidden int
	// Empty serves 200 with zero bytes.
	Empty bool
	// ExpireAt, when set, makes the URL answer 404 from that time on.
	ExpireAt time.Time
	// URL, when set, is the track's final audio URL in callbacks and
	// records instead of the simulator's own /media path: media on another
	// host, such as an address the platform must refuse to fetch.
	URL string
}

// Delivery is one callback attempt.
type Delivery struct {
	TaskID string
	Type   string
	Body   []byte
	Header http.Header
	// Status is the receiver's HTTP status; 0 with Err on a transport error.
	Status int
	Err    string
}

// TaskInfo is a task as tests see it; its JSON form is what
// GET /_sim/tasks lists.
type TaskInfo struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	CallbackURL string `json:"callbackUrl"`
	Model       string `json:"model"`
	Billed      int64  `json:"billed"`
	// CreditsConsumed is what the market record reports when terminal.
	CreditsConsumed int64 `json:"creditsConsumed"`
	Terminal        bool  `json:"terminal"`
}

type task struct {
	id, callbackURL, model string
	param                  string
	theme                  string // the prompt, style and title: the tracks' seed
	stage                  int
	failed                 bool
	failCode               int
	failMsg, failStatus    string
	hung                   bool
	drop                   map[string]bool
	cbException, cbKeep    bool
	consumed               *int64
	cost                   int64
	created                time.Time
	polls                  []time.Time
	media                  [2]MediaFault
	hits                   [2]int
}

func (t *task) terminal() bool { return t.failed || t.stage >= 3 || (t.cbException && t.cbKeep) }

// Server is the simulator.
type Server struct {
	cfg    Config
	url    string
	srv    *http.Server
	run    *simctl.Runner // auto-advance, delayed answers, the serve loop
	events *simctl.Events
	fails  simctl.Script[Failure]       // by Endpoint
	delays simctl.Script[time.Duration] // of creates

	mu          sync.Mutex
	closed      bool
	balance     int64
	tasks       map[string]*task
	order       []string
	creates     []time.Time
	createCount int
	keyDrift    bool
	placeholder bool
	streamAudio bool
	sign        SignatureMode
}

// New starts a simulator on loopback.
func New(cfg Config) (*Server, error) {
	switch cfg.Dialect {
	case "":
		cfg.Dialect = DialectSunoAPI
	case DialectSunoAPI, DialectKie, DialectKieMarket:
	default:
		return nil, fmt.Errorf("provideratest: unknown dialect %q", cfg.Dialect)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = simctl.RandomHex(16)
	}
	if cfg.CallbackKey == "" {
		cfg.CallbackKey = simctl.RandomHex(16)
	}
	if cfg.Clock == nil {
		cfg.Clock = simctl.WallClock{}
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		return nil, errors.New("provideratest: Addr must be a loopback address")
	}
	if cfg.CallbackClient == nil {
		cfg.CallbackClient = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Credits == 0 {
		cfg.Credits = 1000
	}
	if cfg.CreditsPerTask == 0 {
		cfg.CreditsPerTask = 12
	}
	if cfg.MediaTTL <= 0 {
		cfg.MediaTTL = 15 * 24 * time.Hour
	}
	if cfg.CreateLimit <= 0 {
		cfg.CreateLimit = 20
	}
	if cfg.CreateWindow <= 0 {
		cfg.CreateWindow = 10 * time.Second
	}
	if cfg.PollCap <= 0 {
		cfg.PollCap = 3
	}
	if cfg.TrackDuration <= 0 {
		cfg.TrackDuration = 20 * time.Second
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("provideratest: listen: %w", err)
	}
	s := &Server{cfg: cfg, url: "http://" + ln.Addr().String(),
		run:     simctl.NewRunner(simctl.RunnerConfig{Clock: cfg.Clock}),
		events:  simctl.NewEvents(simctl.EventsConfig{Clock: cfg.Clock}),
		balance: cfg.Credits, tasks: map[string]*task{}}
	h, err := s.routes()
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.run.Context() }}
	s.run.Go(func(context.Context) { _ = s.srv.Serve(ln) })
	return s, nil
}

// URL is the simulator's base URL, the BaseURL of a providera client.
func (s *Server) URL() string { return s.url }

// APIKey is the key clients must present.
func (s *Server) APIKey() string { return s.cfg.APIKey }

// CallbackKey is the key callbacks are signed with.
func (s *Server) CallbackKey() string { return s.cfg.CallbackKey }

// Dialect is the simulator's dialect.
func (s *Server) Dialect() string { return s.cfg.Dialect }

// Close stops the server, interrupts delayed answers and callback
// deliveries, and waits for its goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.run.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	s.run.Wait()
	if err != nil {
		return fmt.Errorf("provideratest: close: %w", err)
	}
	return nil
}

func (s *Server) routes() (http.Handler, error) {
	m := http.NewServeMux()
	m.HandleFunc("POST /api/v1/generate", s.handleCreate)
	m.HandleFunc("GET /api/v1/generate/record-info", s.handleQuery)
	if s.cfg.Dialect == DialectKieMarket {
		m.HandleFunc("POST /api/v1/jobs/createTask", s.handleCreate)
		m.HandleFunc("GET /api/v1/jobs/recordInfo", s.handleQuery)
	}
	if s.cfg.Dialect == DialectSunoAPI {
		m.HandleFunc("GET /api/v1/generate/credit", s.handleBalance)
	} else {
		m.HandleFunc("GET /api/v1/chat/credit", s.handleBalance)
	}
	m.HandleFunc("GET /media/{task}/{file}", s.handleMedia)
	m.HandleFunc("GET /audiopipe/{task}/{n}", s.handleStream)
	m.HandleFunc("GET /image/{task}/{file}", s.handleImage)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, 404, "Not Found", nil)
	})
	if err := s.mountControl(m); err != nil {
		return nil, err
	}
	return s.events.Middleware(m), nil
}

func (s *Server) kie() bool { return s.cfg.Dialect != DialectSunoAPI }

func (s *Server) throttleCode() int {
	if s.kie() {
		return 429
	}
	return 405
}

// answer writes an envelope.
func (s *Server) answer(w http.ResponseWriter, code int, msg string, data any) {
	b, _ := json.Marshal(map[string]any{"code": code, "msg": msg, "data": data})
	status := 200
	if s.cfg.MirrorStatus && code >= 200 && code <= 599 {
		status = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// injected answers the next injected failure of ep, if any. mu is held.
func (s *Server) injectedLocked(ep Endpoint) (Failure, bool) {
	return s.fails.Next(string(ep))
}

func (s *Server) writeFailure(w http.ResponseWriter, f Failure) {
	if f.Raw != "" || f.HTTPStatus != 0 {
		status := f.HTTPStatus
		if status == 0 {
			status = 200
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if f.Raw != "" {
			_, _ = w.Write([]byte(f.Raw))
		} else {
			b, _ := json.Marshal(map[string]any{"code": f.Code, "msg": f.Msg, "data": nil})
			_, _ = w.Write(b)
		}
		return
	}
	s.answer(w, f.Code, f.Msg, nil)
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if simctl.Bearer(r, s.cfg.APIKey) != nil {
		s.refuse(w, r, nil)
		return false
	}
	return true
}

// refuse answers a request without the API key, on the API and the
// control routes alike.
func (s *Server) refuse(w http.ResponseWriter, _ *http.Request, _ error) {
	s.answer(w, 401, "Unauthorized: invalid API key", nil)
}

// createReq reads both the legacy and the market create bodies.
type createReq struct {
	CustomMode   *bool  `json:"customMode"`
	Instrumental bool   `json:"instrumental"`
	Model        string `json:"model"`
	Prompt       string `json:"prompt"`
	Style        string `json:"style"`
	Title        string `json:"title"`
	CallBackURL  string `json:"callBackUrl"`
	Input        *struct {
		CustomMode   bool   `json:"custom_mode"`
		Instrumental bool   `json:"instrumental"`
		Model        string `json:"model"`
		Prompt       string `json:"prompt"`
		Style        string `json:"style"`
		Title        string `json:"title"`
	} `json:"input"`
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var req createReq
	raw := make([]byte, 0)
	if r.Body != nil {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil || json.Unmarshal(m, &req) != nil {
			s.answer(w, s.invalidCode(), "Invalid JSON body", nil)
			return
		}
		raw = m
	}
	custom := req.CustomMode != nil && *req.CustomMode
	model, prompt, style, title := req.Model, req.Prompt, req.Style, req.Title
	if req.Input != nil {
		custom, model, prompt, style, title = req.Input.CustomMode, req.Input.Model, req.Input.Prompt, req.Input.Style, req.Input.Title
	}
	s.mu.Lock()
	if f, ok := s.injectedLocked(EndpointCreate); ok {
		s.mu.Unlock()
		s.writeFailure(w, f)
		return
	}
	now := s.cfg.Clock.Now()
	kept := s.creates[:0]
	for _, t := range s.creates {
		if now.Sub(t) < s.cfg.CreateWindow {
			kept = append(kept, t)
		}
	}
	s.creates = kept
	if len(s.creates) >= s.cfg.CreateLimit {
		s.mu.Unlock()
		s.answer(w, s.throttleCode(), "The call frequency is too high.", nil)
		return
	}
	s.creates = append(s.creates, now)
	switch {
	case req.CallBackURL == "":
		s.mu.Unlock()
		s.answer(w, 422, "Please enter callBackUrl", nil)
		return
	case (!custom && strings.TrimSpace(prompt) == "") || (custom && (style == "" || title == "")):
		s.mu.Unlock()
		s.answer(w, s.invalidCode(), "Invalid parameters", nil)
		return
	case (!custom && len([]rune(prompt)) > 500) || len([]rune(prompt)) > 5000:
		s.mu.Unlock()
		s.answer(w, 413, "Prompt is too long", nil)
		return
	case s.balance < s.cfg.CreditsPerTask:
		s.mu.Unlock()
		code := 429
		if s.kie() {
			code = 402
		}
		s.answer(w, code, "Insufficient credits", nil)
		return
	}
	s.balance -= s.cfg.CreditsPerTask
	t := &task{id: simctl.RandomHex(16), callbackURL: req.CallBackURL, model: model, param: string(raw),
		theme: strings.Join([]string{prompt, style, title}, "\x00"), cost: s.cfg.CreditsPerTask, created: now,
		drop: map[string]bool{}}
	s.tasks[t.id] = t
	s.order = append(s.order, t.id)
	s.createCount++
	s.stateLocked(t)
	s.autoLocked(t.id)
	delay, _ := s.delays.Next(string(EndpointCreate))
	s.mu.Unlock()
	_ = s.run.Sleep(r.Context(), delay) // the answer is sent however the wait ends
	s.answer(w, 200, "success", map[string]any{"taskId": t.id})
}

func (s *Server) invalidCode() int {
	if s.kie() {
		return 422
	}
	return 400
}

func (s *Server) handleQuery(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.URL.Query().Get("taskId")
	s.mu.Lock()
	if f, ok := s.injectedLocked(EndpointQuery); ok {
		s.mu.Unlock()
		s.writeFailure(w, f)
		return
	}
	t, ok := s.tasks[id]
	if !ok {
		s.mu.Unlock()
		if s.kie() {
			s.answer(w, 422, "recordInfo is null", nil)
		} else {
			s.answer(w, 200, "success", nil)
		}
		return
	}
	now := s.cfg.Clock.Now()
	kept := t.polls[:0]
	for _, p := range t.polls {
		if now.Sub(p) < time.Second {
			kept = append(kept, p)
		}
	}
	t.polls = kept
	if len(t.polls) >= s.cfg.PollCap {
		s.mu.Unlock()
		s.answer(w, s.throttleCode(), "Too many queries for this task.", nil)
		return
	}
	t.polls = append(t.polls, now)
	var data any
	if r.URL.Path == "/api/v1/jobs/recordInfo" {
		data = s.marketRecordLocked(t)
	} else {
		data = s.recordLocked(t)
	}
	s.mu.Unlock()
	s.answer(w, 200, "success", data)
}

func (s *Server) handleBalance(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	if f, ok := s.injectedLocked(EndpointBalance); ok {
		s.mu.Unlock()
		s.writeFailure(w, f)
		return
	}
	b := s.balance
	s.mu.Unlock()
	s.answer(w, 200, "success", b)
}

func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	n, err := strconv.Atoi(strings.TrimSuffix(file, ".mp3"))
	s.mu.Lock()
	t, ok := s.tasks[r.PathValue("task")]
	if err != nil || !ok || n < 0 || n > 1 || !strings.HasSuffix(file, ".mp3") || !(t.stage >= 3 || (t.cbException && t.cbKeep)) || t.failed {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	now := s.cfg.Clock.Now()
	mf := t.media[n]
	if !now.Before(t.created.Add(s.cfg.MediaTTL)) || (!mf.ExpireAt.IsZero() && !now.Before(mf.ExpireAt)) {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	t.hits[n]++
	if t.hits[n] <= mf.Forbidden {
		s.mu.Unlock()
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	theme := t.theme
	s.mu.Unlock()
	w.Header().Set("Content-Type", "audio/mpeg")
	if mf.Empty {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(200)
		return
	}
	b, err := s.track(theme, t.id, n)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	t, ok := s.tasks[r.PathValue("task")]
	ready := ok && t.stage >= 2 && err == nil && n >= 0 && n <= 1
	var theme string
	if ready {
		theme = t.theme
	}
	s.mu.Unlock()
	if !ready {
		http.NotFound(w, r)
		return
	}
	b, err := s.track(theme, t.id, n)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "audio/mpeg")
	_, _ = w.Write(b[:len(b)/2])
}

// track composes and encodes track n of the task with id and theme.
func (s *Server) track(theme, id string, n int) ([]byte, error) {
	b, err := tune.Piece(strings.Join([]string{theme, id, strconv.Itoa(n)}, "\x00"), s.cfg.TrackDuration)
	if err != nil {
		return nil, fmt.Errorf("provideratest: track %d of %s: %w", n, id, err)
	}
	return b, nil
}

func (s *Server) handleImage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, ok := s.tasks[r.PathValue("task")]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	_, _ = w.Write([]byte{0xFF, 0xD8, 0xFF, 0xD9})
}

// item builds one track item. ready: final MP3; else stream only.
// snake selects the callback casing.
func (s *Server) itemLocked(t *task, n int, ready, snake bool) map[string]any {
	stream := fmt.Sprintf("%s/audiopipe/%s/%d", s.url, t.id, n)
	audio := ""
	if ready {
		audio = fmt.Sprintf("%s/media/%s/%d.mp3", s.url, t.id, n)
		if u := t.media[n].URL; u != "" {
			audio = u
		}
	} else if s.streamAudio {
		audio = stream
	}
	image := fmt.Sprintf("%s/image/%s/%d.jpeg", s.url, t.id, n)
	dur := 0.0
	if ready {
		dur = math.Round(tune.Length(s.cfg.TrackDuration).Seconds()*100) / 100
	}
	id := fmt.Sprintf("%s-%d", t.id[:12], n)
	if snake {
		return map[string]any{"id": id, "audio_url": audio, "source_audio_url": audio, "stream_audio_url": stream,
			"source_stream_audio_url": stream, "image_url": image, "source_image_url": image, "prompt": "",
			"model_name": "chirp-v5", "title": "Sim track", "tags": "sim", "createTime": "2026-11-22 10:00:00", "duration": dur}
	}
	return map[string]any{"id": id, "audioUrl": audio, "sourceAudioUrl": audio, "streamAudioUrl": stream,
		"sourceStreamAudioUrl": stream, "imageUrl": image, "sourceImageUrl": image, "prompt": "",
		"modelName": "chirp-v5", "title": "Sim track", "tags": "sim", "createTime": "2026-11-22 10:00:00", "duration": dur}
}

func (s *Server) placeholderItem(snake bool) map[string]any {
	if snake {
		return map[string]any{"id": "", "audio_url": s.url + "/media/None.mp3", "stream_audio_url": "", "image_url": "", "duration": nil}
	}
	return map[string]any{"id": "", "audioUrl": s.url + "/media/None.mp3", "streamAudioUrl": "", "imageUrl": "", "duration": nil}
}

// itemsLocked are the tracks of a stage (0..3).
func (s *Server) itemsLocked(t *task, stage int, snake bool) []map[string]any {
	items := []map[string]any{}
	switch {
	case stage >= 3:
		items = append(items, s.itemLocked(t, 0, true, snake), s.itemLocked(t, 1, true, snake))
	case stage == 2:
		items = append(items, s.itemLocked(t, 0, false, snake))
		if s.placeholder {
			items = append(items, s.placeholderItem(snake))
		}
	default:
		if s.placeholder {
			items = append(items, s.placeholderItem(snake), s.placeholderItem(snake))
		}
	}
	return items
}

// statusName is the legacy status of a stage (0..3).
func statusName(stage int) string {
	switch stage {
	case 0:
		return "PENDING"
	case 1:
		return "TEXT_SUCCESS"
	case 2:
		return "FIRST_SUCCESS"
	}
	return "SUCCESS"
}

func (s *Server) statusLocked(t *task) string {
	switch {
	case t.failed:
		return t.failStatus
	case t.cbException:
		return "CALLBACK_EXCEPTION"
	}
	return statusName(t.stage)
}

func (s *Server) recordLocked(t *task) map[string]any {
	stage := t.stage
	if t.cbException {
		stage = -1
		if t.cbKeep {
			stage = 3
		}
	}
	var items []map[string]any
	if t.failed || stage < 0 {
		items = []map[string]any{}
	} else {
		items = s.itemsLocked(t, stage, false)
	}
	rec := map[string]any{"taskId": t.id, "parentMusicId": "", "param": t.param, "status": s.statusLocked(t),
		"type": "GENERATE", "operationType": "generate", "errorCode": nil, "errorMessage": nil}
	if t.failed {
		rec["errorCode"], rec["errorMessage"] = t.failCode, t.failMsg
	}
	if s.keyDrift {
		rec["sunoData"] = items
		rec["response"] = nil
	} else {
		rec["response"] = map[string]any{"taskId": t.id, "sunoData": items}
	}
	return rec
}

func (s *Server) consumedLocked(t *task) int64 {
	if t.consumed != nil {
		return *t.consumed
	}
	if t.failed {
		return 0
	}
	return t.cost
}

func (s *Server) marketRecordLocked(t *task) map[string]any {
	rec := map[string]any{"taskId": t.id, "model": "ai-music-api/generate", "param": t.param,
		"createTime": t.created.UnixMilli(), "failCode": "", "failMsg": "", "resultJson": ""}
	switch {
	case t.failed:
		rec["state"], rec["failCode"], rec["failMsg"] = "fail", strconv.Itoa(t.failCode), t.failMsg
		rec["creditsConsumed"] = s.consumedLocked(t)
	case t.stage >= 3 || (t.cbException && t.cbKeep):
		rec["state"], rec["creditsConsumed"] = "success", s.consumedLocked(t)
	case t.stage == 0:
		rec["state"] = "queuing"
	default:
		rec["state"] = "generating"
	}
	if !t.failed && t.stage >= 2 {
		res := map[string]any{"sunoData": s.itemsLocked(t, t.stage, false)}
		if s.keyDrift {
			res = map[string]any{"response": res}
		}
		b, _ := json.Marshal(res)
		rec["resultJson"] = string(b)
	}
	return rec
}

// callbackLocked builds a callback body of type typ.
func (s *Server) callbackLocked(t *task, typ string) []byte {
	code, msg := 200, ""
	var items []map[string]any
	switch typ {
	case "text":
		msg, items = "Text generation completed.", []map[string]any{}
	case "first":
		msg, items = "First audio generated.", s.itemsLocked(t, 2, true)
	case "complete":
		msg, items = "All generated successfully.", s.itemsLocked(t, 3, true)
	default:
		code, msg, items = t.failCode, t.failMsg, []map[string]any{}
	}
	d := map[string]any{"callbackType": typ, "data": items}
	if s.keyDrift {
		d["taskId"] = t.id
	} else {
		d["task_id"] = t.id
	}
	b, _ := json.Marshal(map[string]any{"code": code, "msg": msg, "data": d})
	return b
}

// Sign returns base64(HMAC-SHA256(key, taskID + "." + ts)).
func Sign(key, taskID string, ts int64) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(taskID + "." + strconv.FormatInt(ts, 10)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// deliver sends a prepared callback and records the attempt. mu must not
// be held.
func (s *Server) deliver(taskID, typ, url string, body []byte, h http.Header) error {
	d := Delivery{TaskID: taskID, Type: typ, Body: body, Header: h}
	req, err := http.NewRequestWithContext(s.run.Context(), http.MethodPost, url, strings.NewReader(string(body)))
	if err == nil {
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		var resp *http.Response
		resp, err = s.cfg.CallbackClient.Do(req)
		if err == nil {
			d.Status = resp.StatusCode
			resp.Body.Close()
		}
	}
	if err != nil {
		d.Err = err.Error()
	}
	s.events.Record(simctl.Event{Kind: simctl.KindDelivery, Name: d.Type, Subject: d.TaskID, Status: d.Status,
		Err: d.Err, Header: d.Header, Body: d.Body})
	if err != nil {
		return &deliveryError{fmt.Errorf("provideratest: deliver %s callback: %w", typ, err)}
	}
	if d.Status < 200 || d.Status > 299 {
		return &deliveryError{fmt.Errorf("provideratest: %s callback answered %d", typ, d.Status)}
	}
	return nil
}

// deliveryError is a callback's failure: the task moved all the same.
type deliveryError struct{ err error }

func (e *deliveryError) Error() string { return e.err.Error() }
func (e *deliveryError) Unwrap() error { return e.err }

// prepareLocked builds and signs a callback.
func (s *Server) prepareLocked(t *task, typ string) ([]byte, http.Header) {
	body := s.callbackLocked(t, typ)
	h := http.Header{}
	ts := s.cfg.Clock.Now().Unix()
	switch s.sign {
	case SignNone:
		return body, h
	case SignBad:
		h.Set("X-Webhook-Signature", Sign(s.cfg.CallbackKey+"-wrong", t.id, ts))
	case SignStale:
		ts -= 3600
		h.Set("X-Webhook-Signature", Sign(s.cfg.CallbackKey, t.id, ts))
	default:
		h.Set("X-Webhook-Signature", Sign(s.cfg.CallbackKey, t.id, ts))
	}
	h.Set("X-Webhook-Timestamp", strconv.FormatInt(ts, 10))
	return body, h
}
