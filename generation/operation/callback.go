package operation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/jobs"
)

// Received is the outcome of a callback.
type Received struct {
	// Duplicate reports a callback stored before (F1): nothing changed.
	Duplicate bool
}

// Callback takes a provider callback for the attempt named by token:
// verifies it with the attempt's credential as the provider signs it,
// parses it leniently and stores it once. A callback whose signature
// covers its body (B) is merged. A callback whose signature covers only
// the task id (A; generation.MusicProvider.CallbackSignsBody) is a
// notification: it is stored once per task and claimed stage, and a
// confirmation query of the task (job generation.poll) is queued for each
// claimed stage at most once; what that authenticated record query
// returns is merged, and nothing of the body is. A callback whose attempt
// had no task id yet (its create answer was lost) records the task id and
// starts recovery polls.
//
// Errors: NOT_FOUND for an unknown token or provider; CALLBACK_FAILED for
// a bad or stale signature, a malformed body, or a task id other than the
// attempt's.
func (s *Service) Callback(ctx context.Context, provider generation.ProviderID, token string, cb generation.Callback) (Received, error) {
	const op = "operation.Callback"
	read := s.cfg.ReadFunc()
	a, err := read.GenerationAttemptByToken(ctx, provider, s.cfg.Digester.Digest(token))
	if err != nil {
		return Received{}, fault.Wrap(op, err)
	}
	adapter, err := s.cfg.Credentials.Adapter(a.Scope.Environment, a.Provider)
	if err != nil {
		return Received{}, fault.Wrap(op, err)
	}
	cred, err := s.open(ctx, read, a)
	if err != nil {
		return Received{}, fault.E(op, fault.CallbackFailed, "The callback's credential is gone.").With("reason", "credential_gone")
	}
	if err := adapter.VerifyCallback(s.callbackKey(cred, a), cb, read.Now()); err != nil {
		return Received{}, fault.Wrap(op, err)
	}
	state, err := adapter.ParseCallback(cb)
	if err != nil {
		return Received{}, fault.Wrap(op, err)
	}
	if state.TaskID == "" || (a.TaskID != "" && state.TaskID != a.TaskID) {
		return Received{}, fault.E(op, fault.CallbackFailed, "The callback names another task.").With("reason", "task_mismatch")
	}
	signsBody := adapter.CallbackSignsBody()
	sum := sha256.Sum256(cb.Body)
	if !signsBody {
		// Only the task id is the provider's word: bodies that differ only
		// in what nobody signed are one notification, so a captured
		// signature cannot store or queue more than one per claimed stage.
		sum = sha256.Sum256([]byte("notification\x00" + state.TaskID + "\x00" + string(state.Stage)))
	}
	hash := hex.EncodeToString(sum[:])
	var out Received
	err = s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
		o, cur, err := load(ctx, st, jobRef{Operation: a.OperationID, Attempt: a.ID})
		if err != nil {
			return err
		}
		now := st.Now()
		if cur.TaskID == "" {
			// The create's answer was lost; the callback names the task.
			if err := cur.move(AttemptTaskNamed); err != nil {
				return err
			}
			cur.TaskID, cur.ErrorCode, cur.UpdatedAt = state.TaskID, "", now
			if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
				return err
			}
			if !o.Status().Terminal() {
				if err := s.enqueue(ctx, st, JobPoll, jobRef{Operation: o.ID, Attempt: cur.ID, Seq: 1}, now.Add(s.cfg.PollAfter),
					fmt.Sprintf("gen-poll:%s:1", cur.ID)); err != nil {
					return err
				}
			}
		} else if cur.TaskID != state.TaskID {
			return fault.E(op, fault.CallbackFailed, "The callback names another task.").With("reason", "task_mismatch")
		}
		created, err := st.GenerationCallbackInsert(ctx, CallbackRecord{ID: st.NewID("gcb_"), Provider: provider, TaskID: state.TaskID,
			Stage: state.Stage, PayloadHash: hash, AttemptID: cur.ID, OperationID: o.ID, Body: cb.Body, ReceivedAt: now})
		if err != nil {
			return err
		}
		if !created {
			out.Duplicate = true
			return nil
		}
		if !signsBody {
			if !confirmable(o, cur) {
				return nil // nothing a record query could still change
			}
			return s.enqueue(ctx, st, JobPoll, jobRef{Operation: o.ID, Attempt: cur.ID, Confirm: string(state.Stage)}, now,
				fmt.Sprintf("gen-confirm:%s:%s", cur.ID, state.Stage))
		}
		_, err = s.observe(ctx, st, o, cur, generation.Observation{Source: generation.SourceCallback,
			Key: fmt.Sprintf("cb:%s:%s:%s:%s", provider, state.TaskID, state.Stage, hash), State: state})
		return err
	})
	if err != nil {
		return Received{}, fault.Wrap(op, err)
	}
	return out, nil
}

// confirmable reports whether a record query of attempt a could still
// change o: a is o's current attempt, o has not started ingesting, and o
// is not terminal unless it has yet to learn the provider's outcome (an
// operation cancelled or expired while the task ran still reconciles the
// provider's cost from it).
func confirmable(o Operation, a Attempt) bool {
	if o.CurrentAttemptID != a.ID || o.Snapshot.Stage.Rank() >= generation.StageIngesting.Rank() {
		return false
	}
	return !o.Status().Terminal() || o.Snapshot.Outcome == generation.OutcomePending
}

// observe merges an observation of attempt a's task into o, commits the
// effects and returns the operation as it now is. An observation of an
// attempt that is not the operation's current one changes nothing.
func (s *Service) observe(ctx context.Context, st Writer, o Operation, a Attempt, obs generation.Observation) (Operation, error) {
	if o.CurrentAttemptID != a.ID {
		return o, nil
	}
	next, effects := generation.Merge(o.Snapshot, obs)
	if equalSnapshots(next, o.Snapshot) && len(effects) == 0 {
		return o, nil
	}
	return s.commit(ctx, st, o, next, effects, a)
}

// equalSnapshots reports whether two snapshots are the same.
func equalSnapshots(a, b generation.Snapshot) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// PollHandler is the handler of JobPoll: one recovery poll of an
// attempt's task, then the next one with backoff while the provider has
// not finished. A poll that fails (F5: 5xx, a throttle, a malformed
// body; F13: an unknown task) only schedules the next one; the operation's
// deadline bounds them all.
//
// A confirmation (a poll queued by a notification callback, jobRef.Confirm
// naming the stage the callback claimed) queries at once, without waiting
// for PollMinInterval (at most one per claimed stage, so a handful per
// task), merges what the record says and schedules nothing: the recovery
// polls go on as before. A record that does not yet show the claimed
// stage, or a query that fails, leaves the task to those polls. Like a
// callback before it, a confirmation also reaches an operation cancelled
// or expired while its task ran, whose cost reconciliation needs the
// provider's outcome.
func (s *Service) PollHandler() jobs.Handler {
	return handler("poll", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		return s.poll(ctx, ref)
	})
}

func (s *Service) poll(ctx context.Context, ref jobRef) error {
	read := s.cfg.ReadFunc()
	o, a, err := load(ctx, read, ref)
	if err != nil {
		return err
	}
	if a.TaskID == "" {
		return nil
	}
	if ref.Confirm != "" {
		if !confirmable(o, a) {
			return nil
		}
	} else if o.Status().Terminal() || o.CurrentAttemptID != a.ID || o.Snapshot.Stage.Rank() >= generation.StageIngesting.Rank() {
		return nil
	}
	now := read.Now()
	if ref.Confirm == "" && a.LastPolledAt != nil && now.Before(a.LastPolledAt.Add(s.cfg.PollMinInterval)) {
		at := a.LastPolledAt.Add(s.cfg.PollMinInterval)
		return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
			return s.enqueue(ctx, st, JobPoll, jobRef{Operation: o.ID, Attempt: a.ID, Seq: ref.Seq}, at, fmt.Sprintf("gen-poll:%s:%d:later", a.ID, ref.Seq))
		})
	}
	adapter, err := s.cfg.Credentials.Adapter(a.Scope.Environment, a.Provider)
	if err != nil {
		return err
	}
	cred, err := s.open(ctx, read, a)
	if err != nil {
		return nil // the customer deleted the key: callbacks or the deadline end it
	}
	state, qerr := adapter.Query(ctx, cred, a.TaskID)
	return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
		o, cur, err := load(ctx, st, jobRef{Operation: ref.Operation, Attempt: a.ID})
		if err != nil {
			return err
		}
		now := st.Now()
		if err := s.observed.record(ctx, st, credential.Observe(cur.Provider, cur.Scope.Environment, qerr, now)); err != nil {
			return err
		}
		cur.Polls++
		cur.LastPolledAt = &now
		cur.UpdatedAt = now
		if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
			return err
		}
		if qerr == nil && state.TaskID == cur.TaskID {
			if o, err = s.observe(ctx, st, o, cur, generation.Observation{Source: generation.SourcePoll, State: state}); err != nil {
				return err
			}
		}
		if ref.Confirm != "" || o.Status().Terminal() || o.Snapshot.Stage.Rank() >= generation.StageIngesting.Rank() {
			return nil
		}
		wait := s.cfg.PollAfter
		for i := 1; i < ref.Seq && wait < s.cfg.PollMax; i++ {
			wait *= 2
		}
		wait = min(wait, s.cfg.PollMax)
		return s.enqueue(ctx, st, JobPoll, jobRef{Operation: o.ID, Attempt: cur.ID, Seq: ref.Seq + 1}, now.Add(wait),
			fmt.Sprintf("gen-poll:%s:%d", cur.ID, ref.Seq+1))
	})
}
