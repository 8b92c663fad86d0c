package provideratest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/internal/simctl"
	"github.com/creatormusic/platform/internal/tune"
)

// ErrUnknownTask is returned by control methods for a task id the
// simulator never created.
var ErrUnknownTask = errors.New("provideratest: unknown task")

// ErrTerminal is returned when a control method would move a finished task.
var ErrTerminal = errors.New("provideratest: task is terminal")

// stageType is the callbackType of a stage (1..3).
func stageType(stage int) string {
	switch stage {
	case 1:
		return "text"
	case 2:
		return "first"
	}
	return "complete"
}

func (s *Server) taskLocked(id string) (*task, error) {
	t, ok := s.tasks[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTask, id)
	}
	return t, nil
}

// Advance moves a task one stage (PENDING -> TEXT_SUCCESS -> FIRST_SUCCESS
// -> SUCCESS) and sends that stage's callback unless dropped, before
// returning. It returns the new status. A hung task (F12) does not move
// and nothing is sent. The error is ErrTerminal for a finished task, or the
// delivery's failure (the stage has moved all the same).
func (s *Server) Advance(taskID string) (string, error) {
	s.mu.Lock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		s.mu.Unlock()
		return "", err
	}
	if t.terminal() {
		st := s.statusLocked(t)
		s.mu.Unlock()
		return st, ErrTerminal
	}
	if t.hung || t.cbException {
		st := s.statusLocked(t)
		s.mu.Unlock()
		return st, nil
	}
	t.stage++
	st := s.statusLocked(t)
	s.stateLocked(t)
	typ := stageType(t.stage)
	if t.drop[typ] || t.drop["*"] {
		s.mu.Unlock()
		return st, nil
	}
	body, h := s.prepareLocked(t, typ)
	url := t.callbackURL
	s.mu.Unlock()
	return st, s.deliver(taskID, typ, url, body, h)
}

// stateLocked records the task's status in the event log. mu is held.
func (s *Server) stateLocked(t *task) {
	s.events.Record(simctl.Event{Kind: simctl.KindState, Name: s.statusLocked(t), Subject: t.id})
}

// autoLocked starts moving a new task on its own, one stage per
// Config.AutoAdvance of the clock, when AutoAdvance is set. mu is held; a
// closed server starts nothing.
func (s *Server) autoLocked(taskID string) {
	if s.cfg.AutoAdvance <= 0 {
		return
	}
	s.run.Every(s.cfg.AutoAdvance, func(ctx context.Context) bool { return s.autoStep(ctx, taskID) })
}

// autoStep moves a task one stage through Advance, ignoring a failed
// delivery as Advance documents, and reports whether it may move again.
func (s *Server) autoStep(ctx context.Context, taskID string) bool {
	if ctx.Err() != nil || !s.autoMovable(taskID) {
		return false
	}
	if _, err := s.Advance(taskID); errors.Is(err, ErrTerminal) || errors.Is(err, ErrUnknownTask) {
		return false
	}
	return ctx.Err() == nil && s.autoMovable(taskID)
}

// autoMovable reports whether auto-advance may still move a task: not
// terminal, not hung (F12), not in CALLBACK_EXCEPTION (F3).
func (s *Server) autoMovable(taskID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[taskID]
	return ok && !t.terminal() && !t.hung && !t.cbException
}

// Complete advances a task to SUCCESS, sending each remaining callback. A
// hung task returns an error.
func (s *Server) Complete(taskID string) error {
	for i := 0; i < 4; i++ {
		st, err := s.Advance(taskID)
		if errors.Is(err, ErrTerminal) {
			return nil
		}
		if err != nil {
			return err
		}
		if st == "SUCCESS" {
			return nil
		}
	}
	return fmt.Errorf("provideratest: task %s does not finish", taskID)
}

// Fail ends a task with a provider failure code and sends an error
// callback (unless dropped): 400 gives status SENSITIVE_WORD_ERROR, any
// other GENERATE_AUDIO_FAILED; 531 refunds the balance. creditsConsumed is
// 0 (unless SetCreditsConsumed overrides it).
func (s *Server) Fail(taskID string, code int) error {
	s.mu.Lock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if t.terminal() {
		s.mu.Unlock()
		return ErrTerminal
	}
	t.failed, t.failCode, t.failStatus = true, code, "GENERATE_AUDIO_FAILED"
	switch code {
	case 400:
		t.failStatus, t.failMsg = "SENSITIVE_WORD_ERROR", "Lyrics contain copyrighted or sensitive content."
	case 531:
		t.failMsg = "Generation failed; credits refunded."
		s.balance += t.cost
	default:
		t.failMsg = "Audio generation failed."
	}
	s.stateLocked(t)
	if t.drop["error"] || t.drop["*"] {
		s.mu.Unlock()
		return nil
	}
	body, h := s.prepareLocked(t, "error")
	url := t.callbackURL
	s.mu.Unlock()
	return s.deliver(taskID, "error", url, body, h)
}

// Redeliver sends the callback of type typ ("text", "first", "complete" or
// "error") again, whatever the task's state (F1 duplicates, F2 reorder).
func (s *Server) Redeliver(taskID, typ string) error {
	s.mu.Lock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	body, h := s.prepareLocked(t, typ)
	url := t.callbackURL
	s.mu.Unlock()
	return s.deliver(taskID, typ, url, body, h)
}

// DropCallbacks makes the task's callbacks of the given types ("text",
// "first", "complete", "error", or "*" for all) never be sent (F2, F3).
func (s *Server) DropCallbacks(taskID string, types ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		return err
	}
	for _, typ := range types {
		t.drop[typ] = true
	}
	return nil
}

// CallbackException sets the task's status to CALLBACK_EXCEPTION without
// sending anything (F3). keepTracks finishes the audio, so the record
// carries both tracks and their URLs serve; otherwise the record has no
// tracks and the task never moves again.
func (s *Server) CallbackException(taskID string, keepTracks bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		return err
	}
	t.cbException, t.cbKeep = true, keepTracks
	if keepTracks {
		t.stage = 3
	}
	s.stateLocked(t)
	return nil
}

// Hang makes the task never move again (F12).
func (s *Server) Hang(taskID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		return err
	}
	t.hung = true
	return nil
}

// SetMediaFault shapes the answers of track n's MP3 URL (F9).
func (s *Server) SetMediaFault(taskID string, n int, f MediaFault) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		return err
	}
	if n < 0 || n > 1 {
		return fmt.Errorf("provideratest: track %d out of range", n)
	}
	t.media[n] = f
	return nil
}

// SetCreditsConsumed overrides the creditsConsumed the market record
// reports at the end, so it can differ from the expected charge.
func (s *Server) SetCreditsConsumed(taskID string, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.taskLocked(taskID)
	if err != nil {
		return err
	}
	t.consumed = &n
	return nil
}

// FailNext answers the next request to ep with f before anything else
// (no task is created). Calls queue.
func (s *Server) FailNext(ep Endpoint, f Failure) {
	s.fails.Add(string(ep), f, 1)
}

// DelayNextCreate makes the next successful create hold its answer for d
// after the task is created and billed (F4). The wait ends early when the
// client goes away or the server closes. Calls queue.
func (s *Server) DelayNextCreate(d time.Duration) {
	s.delays.Add(string(EndpointCreate), d, 1)
}

// SetKeyDrift switches callbacks to taskId and records to a top-level
// sunoData (market: a nested response.sunoData) (F11).
func (s *Server) SetKeyDrift(on bool) {
	s.mu.Lock()
	s.keyDrift = on
	s.mu.Unlock()
}

// SetPlaceholders adds tracks with empty ids and .../None.mp3 URLs before
// the tracks are ready (F10).
func (s *Server) SetPlaceholders(on bool) {
	s.mu.Lock()
	s.placeholder = on
	s.mu.Unlock()
}

// SetStreamInAudioURL puts the stream link in audio_url before the MP3 is
// ready (F8).
func (s *Server) SetStreamInAudioURL(on bool) {
	s.mu.Lock()
	s.streamAudio = on
	s.mu.Unlock()
}

// SetSignature chooses how later callbacks are signed.
func (s *Server) SetSignature(m SignatureMode) {
	s.mu.Lock()
	s.sign = m
	s.mu.Unlock()
}

// SetCredits sets the account balance.
func (s *Server) SetCredits(n int64) {
	s.mu.Lock()
	s.balance = n
	s.mu.Unlock()
}

// Credits is the account balance.
func (s *Server) Credits() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance
}

// CreateCount is how many tasks creates have made (each billed).
func (s *Server) CreateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createCount
}

// Tasks lists the tasks in creation order.
func (s *Server) Tasks() []TaskInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TaskInfo, 0, len(s.order))
	for _, id := range s.order {
		t := s.tasks[id]
		info := TaskInfo{ID: t.id, Status: s.statusLocked(t), CallbackURL: t.callbackURL, Model: t.model,
			Billed: t.cost, Terminal: t.terminal()}
		if info.Terminal {
			info.CreditsConsumed = s.consumedLocked(t)
		}
		out = append(out, info)
	}
	return out
}

// Deliveries lists the callback attempts the event log holds, in order.
func (s *Server) Deliveries() []Delivery {
	evs := s.events.List(simctl.KindDelivery)
	out := make([]Delivery, len(evs))
	for i, e := range evs {
		out[i] = Delivery{TaskID: e.Subject, Type: e.Name, Body: e.Body, Header: e.Header, Status: e.Status, Err: e.Err}
	}
	return out
}

// Events lists the event log, oldest first: the API requests answered
// (simctl.KindRequest, Name "METHOD /path?query"), the callback attempts
// (KindDelivery, Name the callbackType, Subject the task) and the tasks'
// statuses as they change (KindState, Name the status, Subject the task).
func (s *Server) Events() []simctl.Event { return s.events.List() }

// ResetEvents empties the event log, Deliveries included.
func (s *Server) ResetEvents() { s.events.Reset() }

// mountControl serves the control routes on m (see the package doc).
func (s *Server) mountControl(m *http.ServeMux) error {
	c, err := simctl.NewControl(m, simctl.ControlConfig{Key: s.cfg.APIKey, RefuseFunc: s.refuse})
	if err != nil {
		return fmt.Errorf("provideratest: %w", err)
	}
	s.events.Mount(c)
	c.HandleFunc("GET /tasks", func(w http.ResponseWriter, r *http.Request) {
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.Tasks()})
	})
	c.HandleFunc("POST /tasks/{id}/advance", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.Advance(r.PathValue("id"))
		var de *deliveryError
		if err != nil && !errors.As(err, &de) {
			controlError(w, err)
			return
		}
		out := map[string]any{"status": st}
		if err != nil {
			out["deliveryError"] = err.Error()
		}
		simctl.WriteJSON(w, http.StatusOK, out)
	})
	c.HandleFunc("POST /tasks/{id}/complete", func(w http.ResponseWriter, r *http.Request) {
		controlResult(w, s.Complete(r.PathValue("id")))
	})
	c.HandleFunc("POST /tasks/{id}/fail", func(w http.ResponseWriter, r *http.Request) {
		code := 501
		if v := r.FormValue("code"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				simctl.WriteError(w, http.StatusBadRequest, "code must be a number")
				return
			}
			code = n
		}
		controlResult(w, s.Fail(r.PathValue("id"), code))
	})
	c.HandleFunc("POST /fail_next", func(w http.ResponseWriter, r *http.Request) {
		ep := Endpoint(r.FormValue("endpoint"))
		switch ep {
		case EndpointCreate, EndpointQuery, EndpointBalance:
		default:
			simctl.WriteError(w, http.StatusBadRequest, "endpoint must be create, query or balance")
			return
		}
		f := Failure{Msg: r.FormValue("msg"), Raw: r.FormValue("raw")}
		for _, field := range []struct {
			name string
			dst  *int
		}{{"code", &f.Code}, {"status", &f.HTTPStatus}} {
			if v := r.FormValue(field.name); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					simctl.WriteError(w, http.StatusBadRequest, field.name+" must be a number")
					return
				}
				*field.dst = n
			}
		}
		s.FailNext(ep, f)
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"endpoint": ep, "queued": true})
	})
	return nil
}

// controlResult answers a control route: {"ok": true}, with
// "deliveryError" when the task moved but its callback failed, or the
// error.
func controlResult(w http.ResponseWriter, err error) {
	var de *deliveryError
	switch {
	case errors.As(err, &de):
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "deliveryError": err.Error()})
	case err != nil:
		controlError(w, err)
	default:
		simctl.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	}
}

// controlError answers 404 for an unknown task, 409 for one that cannot
// move.
func controlError(w http.ResponseWriter, err error) {
	status := http.StatusConflict
	if errors.Is(err, ErrUnknownTask) {
		status = http.StatusNotFound
	}
	simctl.WriteError(w, status, err.Error())
}

// TrackMP3 returns the MP3 of track n (0 or 1) of a task: the bytes its
// final audio URL serves, whatever the task's stage or media faults.
func (s *Server) TrackMP3(taskID string, n int) ([]byte, error) {
	s.mu.Lock()
	t, err := s.taskLocked(taskID)
	var theme string
	if err == nil {
		theme = t.theme
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1 {
		return nil, fmt.Errorf("provideratest: track %d out of range", n)
	}
	return s.track(theme, taskID, n)
}

// TrackLength is the exact length of every track's MP3, the duration
// records and callbacks report (rounded to 10 ms).
func (s *Server) TrackLength() time.Duration { return tune.Length(s.cfg.TrackDuration) }
