package sound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// errStopped ends a run whose operation ended meanwhile (cancelled,
// expired, or ended by another run); it is also the cause of a run
// context its watcher cancelled for that reason.
var errStopped = errors.New("sound: operation ended")

// errDeadline is the cause of a run context that ended at the
// operation's deadline.
var errDeadline = errors.New("sound: operation deadline passed")

// RunHandler is the handler of JobRun: it runs the engine on the input
// asset, storing the stage and progress as it goes, under a context that
// ends at the operation's deadline and that a watcher cancels once the
// stored status is terminal (see the package doc, Bounds). A cancelled or
// expired operation stops within a block and keeps its state (a run that
// reaches the deadline expires the operation itself); a permanent failure
// fails the operation once with its code (Failures); both complete the
// job. Only infrastructure errors, and the end of the job's own context
// (the pool stopping, the lease lost), return an error for the job to be
// retried.
func (s *Service) RunHandler() jobs.Handler {
	return s.handler(func(ctx context.Context, id string) error {
		o, err := s.cfg.ReadFunc().SoundOperationLock(ctx, id)
		if err != nil {
			return err
		}
		if o.Status.Terminal() {
			return nil
		}
		run, stop := s.watch(ctx, o)
		defer stop()
		return s.settle(ctx, run, o, s.run(run, o))
	})
}

// watch returns the context o's run works under: it ends at o's deadline
// (by the store's clock, read at every poll, as well as by a timer) and
// when o's stored status becomes terminal, with errDeadline or errStopped
// as its cause. stop releases it.
func (s *Service) watch(ctx context.Context, o Operation) (context.Context, func()) {
	run, cancel := context.WithCancelCause(ctx)
	left := o.DeadlineAt.Sub(s.cfg.ReadFunc().Now())
	timed, cancelTimer := context.WithDeadlineCause(run, time.Now().Add(left), errDeadline)
	go func() {
		t := time.NewTicker(s.cfg.WatchInterval)
		defer t.Stop()
		for {
			st := s.cfg.ReadFunc()
			if !st.Now().Before(o.DeadlineAt) {
				cancel(errDeadline)
				return
			}
			// A failed read is not a reason to stop the work: the next
			// poll tries again.
			if status, err := st.SoundOperationStatus(timed, o.ID); err == nil && status.Terminal() {
				cancel(errStopped)
				return
			}
			select {
			case <-timed.Done():
				return
			case <-t.C:
			}
		}
	}()
	return timed, func() {
		cancelTimer()
		cancel(nil)
	}
}

// settle decides what a run's outcome means for the job: nil when the
// work is done or need not be retried, the error otherwise.
func (s *Service) settle(job, run context.Context, o Operation, err error) error {
	switch {
	case err == nil, errors.Is(err, errStopped) && job.Err() == nil:
		return nil
	case job.Err() != nil:
		// The pool stops or lost the lease: another attempt finishes.
		return err
	case run.Err() != nil && errors.Is(context.Cause(run), errDeadline):
		return s.expire(context.WithoutCancel(job), o.ID)
	case run.Err() != nil:
		return nil // cancelled, or ended by another run
	}
	code, msg, details, ok := permanent(err, int64(s.inputBound(o).Seconds()))
	if !ok {
		return err
	}
	body, jerr := json.Marshal(details)
	if jerr != nil {
		return jerr
	}
	return s.cfg.Run(job, func(st Store) error {
		cur, err := st.SoundOperationLock(job, o.ID)
		if err != nil {
			return err
		}
		_, err = s.move(job, st, cur, EventFail, func(o *Operation) {
			o.FailureCode, o.FailureMessage, o.FailureDetails = string(code), msg, body
		})
		return err
	})
}

// expire moves an operation whose deadline passed to expired (a no-op on
// an ended one); an error, for a retry, while the store's clock has not
// reached the deadline.
func (s *Service) expire(ctx context.Context, id string) error {
	return s.cfg.Run(ctx, func(st Store) error {
		o, err := st.SoundOperationLock(ctx, id)
		if err != nil {
			return err
		}
		if st.Now().Before(o.DeadlineAt) {
			return fmt.Errorf("sound operation %s: deadline not reached", id)
		}
		_, err = s.move(ctx, st, o, EventExpire, func(*Operation) {})
		return err
	})
}

// permanent classifies a run's error: ok when it would recur on every
// attempt, with the code, client-safe message and details that fail the
// operation. limit is the input duration bound in seconds.
func permanent(err error, limit int64) (code fault.Code, msg string, details map[string]any, ok bool) {
	var size *outputSizeError
	switch {
	case errors.Is(err, ErrTooLong):
		e := durationError("sound.run", limit)
		return e.Code, e.Message, e.Details, true
	case errors.Is(err, ErrSilent):
		return fault.InvalidInput, "The input is silent: there is no loudness to master.",
			map[string]any{"field": "input.assetId", "reason": "silent"}, true
	case errors.Is(err, ErrUndecodable):
		return fault.InvalidInput, "The input audio could not be decoded.",
			map[string]any{"field": "input.assetId", "reason": "undecodable"}, true
	case errors.As(err, &size):
		return fault.PayloadTooLarge, fmt.Sprintf("The output exceeds the limit of %d bytes.", size.limit),
			map[string]any{"reason": "output_size", "limit": size.limit}, true
	}
	// Refusals of the asset service (an output over the upload limit or
	// the storage quota) and other coded errors of the domain are
	// permanent; uncoded errors (database, blob store, files) and
	// compare-and-set conflicts are not.
	switch c := fault.CodeOf(err); c {
	case fault.Internal, fault.Conflict, fault.ServiceUnavailable:
		return "", "", nil, false
	default:
		code, msg, details := fault.Public(err)
		if details == nil {
			details = map[string]any{}
		}
		return code, msg, details, true
	}
}

// run runs o on the engine under ctx.
func (s *Service) run(ctx context.Context, o Operation) error {
	o, err := s.step(ctx, o.ID, StageDecoding, 5)
	if err != nil {
		return err
	}
	a, err := s.cfg.Assets.Get(ctx, s.cfg.ReadFunc(), assetScope(o.Scope), o.InputAssetID)
	if err != nil {
		return err
	}
	blob, err := s.cfg.Assets.Open(ctx, a)
	if err != nil {
		return err
	}
	defer blob.Close()
	in := Input{Blob: blob, MaxDuration: s.inputBound(o)}
	switch o.Type {
	case TypeMastering:
		return s.runMaster(ctx, o, in)
	case TypeStemSeparation:
		return s.runStems(ctx, o, in)
	case TypeEnhancement:
		return s.runEnhance(ctx, o, in)
	}
	return s.runAnalysis(ctx, o, in)
}

// inputBound is the longest input o may process: its capability
// snapshot's limit, or its plan's for an operation accepted before
// snapshots carried one.
func (s *Service) inputBound(o Operation) time.Duration {
	var c Capabilities
	if json.Unmarshal(o.Capabilities, &c) == nil && c.Limits.MaxInputDurationSeconds > 0 {
		return time.Duration(c.Limits.MaxInputDurationSeconds) * time.Second
	}
	return s.maxInput(o.Plan)
}

// newOutput creates a temporary file for an output of spec and the sink
// an engine encodes it into: outputs are encoded to a file (seekable, so
// headers carry their sizes) and then stored, so memory stays bounded. The
// file may not grow past the host's upload limit: the write that would
// pass it fails with an *outputSizeError, so an output too large to store
// stops early instead of being computed to its end. done removes the file.
func (s *Service) newOutput(spec OutputSpec) (tmp *os.File, out Sink, done func(), err error) {
	tmp, err = os.CreateTemp("", "sound-output-*")
	if err != nil {
		return nil, Sink{}, nil, err
	}
	done = func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}
	return tmp, Sink{Spec: spec, W: &cappedFile{f: tmp, limit: s.cfg.Assets.MaxUploadBytes()}}, done, nil
}

// outputSizeError is an output that would pass the size limit.
type outputSizeError struct{ limit int64 }

func (e *outputSizeError) Error() string {
	return fmt.Sprintf("sound: the output exceeds the limit of %d bytes", e.limit)
}

// cappedFile writes and seeks a file whose size may not pass limit.
type cappedFile struct {
	f     *os.File
	limit int64
	pos   int64
}

func (c *cappedFile) Write(p []byte) (int, error) {
	if c.pos+int64(len(p)) > c.limit {
		return 0, &outputSizeError{limit: c.limit}
	}
	n, err := c.f.Write(p)
	c.pos += int64(n)
	return n, err
}

func (c *cappedFile) Seek(off int64, whence int) (int64, error) {
	pos, err := c.f.Seek(off, whence)
	if err == nil {
		c.pos = pos
	}
	return pos, err
}
