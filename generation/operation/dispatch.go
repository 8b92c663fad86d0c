package operation

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/jobs"
)

// candidate is one way to create the operation's task: a provider route
// with a credential.
type candidate struct {
	provider  generation.ProviderID
	ownership credential.Ownership
	customer  credential.Credential // set for CustomerBYOK
}

// candidateKey identifies a candidate across dispatches.
type candidateKey struct {
	provider     generation.ProviderID
	ownership    credential.Ownership
	credentialID string
}

func (c candidate) key() candidateKey { return candidateKey{c.provider, c.ownership, c.customer.ID} }

// account names the provider account a candidate creates on, for the
// create scheduler: the platform's account per environment, or the
// customer credential.
func (c candidate) account(env access.Environment) string {
	if c.ownership == credential.CustomerBYOK {
		return "byok:" + c.customer.ID
	}
	return fmt.Sprintf("platform:%s:%s", env, c.provider)
}

// candidates lists the operation's candidates in order: the workspace's
// own keys on each route first (BYOK, and BYOK_WITH_PLATFORM_FALLBACK,
// which uses the customer's key before falling back), then the platform
// credential on each route (PLATFORM_MANAGED, and the fallback).
func (s *Service) candidates(ctx context.Context, st credential.Lister, o Operation) ([]candidate, error) {
	env := o.Scope.Environment
	var routes []generation.ProviderID
	for _, r := range o.Routes {
		if _, err := s.cfg.Credentials.Adapter(env, r); err == nil {
			routes = append(routes, r)
		}
	}
	var out []candidate
	if o.BillingMode != credential.ModePlatformManaged {
		usable, err := s.cfg.Credentials.Usable(ctx, st, o.Scope)
		if err != nil {
			return nil, err
		}
		for _, r := range routes {
			if c, ok := usable[r]; ok {
				out = append(out, candidate{provider: r, ownership: credential.CustomerBYOK, customer: c})
			}
		}
	}
	if o.BillingMode != credential.ModeBYOK {
		for _, r := range routes {
			if _, ok := s.cfg.Credentials.PlatformKey(env, r); ok {
				out = append(out, candidate{provider: r, ownership: credential.PlatformManaged})
			}
		}
	}
	return out, nil
}

// open returns the credential an attempt authenticates with.
func (s *Service) open(ctx context.Context, st credential.Getter, a Attempt) (generation.Credential, error) {
	if a.Ownership == credential.CustomerBYOK {
		c, err := st.ProviderCredentialGet(ctx, a.Scope, a.CredentialID)
		if err != nil {
			return generation.Credential{}, err
		}
		return s.cfg.Credentials.Open(c)
	}
	k, ok := s.cfg.Credentials.PlatformKey(a.Scope.Environment, a.Provider)
	if !ok {
		return generation.Credential{}, fault.E("operation.open", fault.ProviderUnavailable, "The platform credential is no longer configured.")
	}
	return k, nil
}

// Jobs returns music generation's job kinds, all of the provider class:
// dispatch, recovery polls, ingest, cost reconciliation, expiry and the
// resolution of ambiguous creates.
func (s *Service) Jobs() []jobs.Kind {
	return []jobs.Kind{
		{Name: JobDispatch, Class: jobs.ClassProvider, HandlerFunc: s.DispatchHandler()},
		{Name: JobPoll, Class: jobs.ClassProvider, HandlerFunc: s.PollHandler()},
		{Name: JobIngest, Class: jobs.ClassProvider, HandlerFunc: s.IngestHandler()},
		{Name: JobReconcile, Class: jobs.ClassProvider, HandlerFunc: s.ReconcileHandler()},
		{Name: JobExpire, Class: jobs.ClassProvider, HandlerFunc: s.ExpireHandler()},
		{Name: JobAmbiguous, Class: jobs.ClassProvider, HandlerFunc: s.AmbiguousHandler()},
	}
}

// DispatchHandler is the handler of JobDispatch.
func (s *Service) DispatchHandler() jobs.Handler {
	return handler("dispatch", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		return s.dispatch(ctx, ref.Operation)
	})
}

// sendPlan is what the first unit of work of a dispatch decided.
type sendPlan struct {
	op      Operation
	attempt Attempt
	token   string
}

// dispatch runs one dispatch of an operation: record an attempt, create
// the provider task after commit, record the answer.
func (s *Service) dispatch(ctx context.Context, id string) error {
	var plan *sendPlan
	err := s.cfg.DispatchRunFunc(ctx, func(st DispatchStore) error {
		var err error
		plan, err = s.prepare(ctx, st, id)
		return err
	})
	if err != nil || plan == nil {
		return err
	}
	a := plan.attempt
	adapter, err := s.cfg.Credentials.Adapter(a.Scope.Environment, a.Provider)
	if err != nil {
		return s.recordCreate(ctx, a, generation.Created{}, err)
	}
	cred, err := s.open(ctx, s.cfg.ReadFunc(), a)
	if err != nil {
		return s.recordCreate(ctx, a, generation.Created{}, fault.E("operation.dispatch", fault.ProviderCredentialInvalid, "The credential cannot be used.").With("reason", "credential_gone"))
	}
	cred = s.callbackKey(cred, a)
	req := plan.op.Request
	created, cerr := adapter.Create(ctx, cred, generation.CreateRequest{Prompt: req.Prompt, Instrumental: req.Instrumental,
		Model: req.Model, CallbackURL: s.callbackURL(a.Provider, plan.token)})
	if s.cfg.Hook != nil {
		if err := s.cfg.Hook(ctx, PointCreated); err != nil {
			return err
		}
	}
	return s.recordCreate(ctx, a, created, cerr)
}

// callbackKey supplies the per-attempt webhook secret of providers that
// take it with each create (B: webhook_secret) when the credential has no
// callback key of its own: derived from the attempt id with the server's
// pepper, so it is never stored and is different for every attempt.
func (s *Service) callbackKey(c generation.Credential, a Attempt) generation.Credential {
	if c.CallbackKey == "" && a.Provider == generation.ProviderB {
		c.CallbackKey = s.cfg.Digester.Digest("generation-webhook:" + a.ID)
	}
	return c
}

// callbackURL is an attempt's callback URL.
func (s *Service) callbackURL(p generation.ProviderID, token string) string {
	return fmt.Sprintf("%s/internal/providers/%s/callbacks/%s", s.cfg.CallbackBase, p, token)
}

// prepare is the first unit of work of a dispatch. It returns nil when
// there is nothing to send: the operation ended, an attempt is accepted or
// ambiguous (never a second task), the scheduler is full (a later dispatch
// is enqueued), or no candidate is left (the operation failed).
func (s *Service) prepare(ctx context.Context, st DispatchStore, id string) (*sendPlan, error) {
	const op = "operation.prepare"
	o, err := st.GenerationOperationLock(ctx, id)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if o.Status().Terminal() {
		return nil, nil
	}
	// The operation's deadline job, written once (here rather than at
	// accept, to keep the accept transaction short).
	if err := s.enqueue(ctx, st, JobExpire, jobRef{Operation: o.ID}, o.DeadlineAt, "gen-expire:"+o.ID); err != nil {
		return nil, err
	}
	as, err := st.GenerationAttempts(ctx, o.ID)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	now := st.Now()
	if n := len(as); n > 0 {
		last := as[n-1]
		switch last.State {
		case AttemptAccepted, AttemptAmbiguous:
			return nil, nil
		case AttemptSending:
			// The worker stopped between the create and recording its
			// answer: the task may exist. Never send again.
			if err := last.move(AttemptAnswerLost); err != nil {
				return nil, fault.Wrap(op, err)
			}
			last.ErrorCode, last.UpdatedAt = string(fault.ProviderTimeout), now
			if err := st.GenerationAttemptUpdate(ctx, last); err != nil {
				return nil, fault.Wrap(op, err)
			}
			return nil, s.enqueue(ctx, st, JobAmbiguous, jobRef{Operation: o.ID, Attempt: last.ID}, now.Add(s.cfg.AmbiguousWait), "gen-ambiguous:"+last.ID)
		}
	}
	cands, err := s.candidates(ctx, st, o)
	if err != nil {
		return nil, err
	}
	// The first candidate no refused attempt used: the list may shrink
	// between dispatches (a customer key found invalid), so candidates are
	// matched, not counted.
	refused := map[candidateKey]bool{}
	for _, a := range as {
		if a.State == AttemptRefused {
			refused[candidateKey{a.Provider, a.Ownership, a.CredentialID}] = true
		}
	}
	k := slices.IndexFunc(cands, func(c candidate) bool { return !refused[c.key()] })
	if k < 0 {
		code := string(fault.ProviderUnavailable)
		if n := len(as); n > 0 && as[n-1].ErrorCode != "" {
			code = as[n-1].ErrorCode
		}
		next, effects := generation.Merge(o.Snapshot, generation.Observation{Source: generation.SourcePoll, Key: "no-route:" + o.ID,
			State: generation.TaskState{Stage: generation.StageFailed, FailureCode: code}})
		_, err := s.commit(ctx, st, o, next, dropCost(effects), Attempt{})
		return nil, err
	}
	c := cands[k]
	ok, retryAt, err := st.ProviderCreateSlot(ctx, c.account(o.Scope.Environment), s.cfg.CreateLimit, s.cfg.CreateWindow)
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	if !ok {
		return nil, s.enqueue(ctx, st, JobDispatch, jobRef{Operation: o.ID}, retryAt,
			fmt.Sprintf("gen-dispatch:%s:%d:wait:%d", o.ID, len(as), retryAt.UnixNano()))
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	a := Attempt{ID: st.NewID(AttemptPrefix), OperationID: o.ID, Scope: o.Scope, Number: len(as) + 1, Provider: c.provider,
		CredentialID: c.customer.ID, Ownership: c.ownership, TokenDigest: s.cfg.Digester.Digest(token),
		State: AttemptSending, CreatedAt: now, UpdatedAt: now}
	if err := st.GenerationAttemptInsert(ctx, a); err != nil {
		return nil, fault.Wrap(op, err)
	}
	to, err := generation.Transition(o.Status(), generation.EventDispatched)
	if err != nil {
		return nil, err
	}
	// A new attempt follows a new task: the snapshot starts over.
	next := generation.Snapshot{Status: to, Stage: generation.StageQueued}
	o.Attempts = a.Number
	o.CurrentAttemptID = a.ID
	adapter, err := s.cfg.Credentials.Adapter(o.Scope.Environment, c.provider)
	if err != nil {
		return nil, err
	}
	applied := o.Request.Duration == 0 || adapter.SupportsDuration(o.Request.Model)
	o.DurationApplied = &applied
	o, err = s.commit(ctx, st, o, next, nil, a)
	if err != nil {
		return nil, err
	}
	return &sendPlan{op: o, attempt: a, token: token}, nil
}

// dropCost removes ReconcileCost: a failure the platform decided (no route
// left) has no provider task to reconcile.
func dropCost(effects []generation.Effect) []generation.Effect {
	out := effects[:0]
	for _, e := range effects {
		if _, ok := e.(generation.ReconcileCost); !ok {
			out = append(out, e)
		}
	}
	return out
}

// newToken returns an unguessable attempt token (256 bits).
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("attempt token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// recordCreate is the second unit of work of a dispatch: it records the
// provider's answer to a create.
func (s *Service) recordCreate(ctx context.Context, a Attempt, created generation.Created, cerr error) error {
	return s.cfg.AnswerRunFunc(ctx, func(st AnswerStore) error {
		const op = "operation.recordCreate"
		o, err := st.GenerationOperationLock(ctx, a.OperationID)
		if err != nil {
			return fault.Wrap(op, err)
		}
		cur, err := st.GenerationAttemptGet(ctx, a.ID)
		if err != nil {
			return fault.Wrap(op, err)
		}
		now := st.Now()
		if err := s.observed.record(ctx, st, credential.Observe(cur.Provider, cur.Scope.Environment, cerr, now)); err != nil {
			return fault.Wrap(op, err)
		}
		cur.UpdatedAt = now
		if cerr == nil {
			if cur.TaskID == "" {
				cur.TaskID = created.TaskID
			}
			if err := cur.move(AttemptCreateAccepted); err != nil {
				return fault.Wrap(op, err)
			}
			cur.ErrorCode = ""
			if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
				return fault.Wrap(op, err)
			}
			if o.Status().Terminal() {
				return nil // cancelled meanwhile; callbacks still reconcile the cost
			}
			return s.enqueue(ctx, st, JobPoll, jobRef{Operation: o.ID, Attempt: cur.ID, Seq: 1}, now.Add(s.cfg.PollAfter),
				fmt.Sprintf("gen-poll:%s:1", cur.ID))
		}
		if cur.State == AttemptAccepted {
			return nil // a callback named the task while the create was failing
		}
		code := fault.CodeOf(cerr)
		cur.ErrorCode = string(code)
		switch {
		case code == fault.ProviderTimeout || errors.Is(cerr, context.DeadlineExceeded) || code == fault.Internal || ambiguous(cerr):
			// Ambiguous: the task may exist and may be billed (F4). Wait for
			// its callback; never re-send.
			cur.ErrorCode = string(fault.ProviderTimeout)
			if err := cur.move(AttemptCreateAmbiguous); err != nil {
				return fault.Wrap(op, err)
			}
			if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
				return fault.Wrap(op, err)
			}
			return s.enqueue(ctx, st, JobAmbiguous, jobRef{Operation: o.ID, Attempt: cur.ID}, now.Add(s.cfg.AmbiguousWait), "gen-ambiguous:"+cur.ID)
		case code == fault.RateLimited || code == fault.ProviderUnavailable:
			as, err := st.GenerationAttempts(ctx, o.ID)
			if err != nil {
				return fault.Wrap(op, err)
			}
			streak := 1 // this attempt
			for i := len(as) - 1; i >= 0; i-- {
				if as[i].ID == cur.ID {
					continue
				}
				if as[i].State != AttemptTransient {
					break
				}
				streak++
			}
			ev := AttemptCreateThrottled
			if streak >= s.cfg.TransientRetries {
				ev = AttemptCreateRefused
			}
			if err := cur.move(ev); err != nil {
				return fault.Wrap(op, err)
			}
			if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
				return fault.Wrap(op, err)
			}
			wait := time.Duration(0)
			if cur.State == AttemptTransient {
				wait = jobs.Backoff(streak, 0.5)
			}
			return s.enqueue(ctx, st, JobDispatch, jobRef{Operation: o.ID}, now.Add(wait), fmt.Sprintf("gen-dispatch:%s:%d", o.ID, cur.Number))
		default:
			// Refused on this candidate (credits exhausted, a rejected key,
			// a refused request): the next candidate, if any.
			if err := cur.move(AttemptCreateRefused); err != nil {
				return fault.Wrap(op, err)
			}
			if err := st.GenerationAttemptUpdate(ctx, cur); err != nil {
				return fault.Wrap(op, err)
			}
			if code == fault.ProviderCredentialInvalid && cur.Ownership == credential.CustomerBYOK {
				if err := s.markInvalid(ctx, st, cur); err != nil {
					return err
				}
			}
			return s.enqueue(ctx, st, JobDispatch, jobRef{Operation: o.ID}, now, fmt.Sprintf("gen-dispatch:%s:%d", o.ID, cur.Number))
		}
	})
}

// ambiguous reports an error an adapter marked details.ambiguous: the
// connection failed after the request was sent, so the task may exist.
func ambiguous(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if f, ok := e.(*fault.Error); ok {
			if v, ok := f.Details["ambiguous"].(bool); ok && v {
				return true
			}
		}
	}
	return false
}

// markInvalid records that the provider rejected a customer key, so the
// key's health shows it and later operations skip it.
func (s *Service) markInvalid(ctx context.Context, st AnswerStore, a Attempt) error {
	c, err := st.ProviderCredentialGet(ctx, a.Scope, a.CredentialID)
	if fault.Is(err, fault.NotFound) {
		return nil
	}
	if err != nil {
		return fault.Wrap("operation.markInvalid", err)
	}
	now := st.Now()
	c.Health, c.CheckedAt, c.UpdatedAt = credential.Invalid, now, now
	if err := st.ProviderCredentialUpdate(ctx, c); err != nil && !fault.Is(err, fault.NotFound) {
		return fault.Wrap("operation.markInvalid", err)
	}
	return nil
}

// AmbiguousHandler is the handler of JobAmbiguous: an attempt whose create
// answer never arrived and that no callback named by its deadline fails
// the operation with PROVIDER_TIMEOUT and releases its credits.
func (s *Service) AmbiguousHandler() jobs.Handler {
	return handler("ambiguous", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
			o, a, err := load(ctx, st, ref)
			if err != nil {
				return err
			}
			if a.State != AttemptAmbiguous || a.TaskID != "" || o.CurrentAttemptID != a.ID {
				return nil
			}
			next, effects := generation.Merge(o.Snapshot, generation.Observation{Source: generation.SourcePoll, Key: "ambiguous:" + a.ID,
				State: generation.TaskState{Stage: generation.StageFailed, FailureCode: string(fault.ProviderTimeout)}})
			_, err = s.commit(ctx, st, o, next, effects, a)
			return err
		})
	})
}

// ExpireHandler is the handler of JobExpire: an operation still running at
// its deadline expires and its credits are released (F12).
func (s *Service) ExpireHandler() jobs.Handler {
	return handler("expire", func(ctx context.Context, job jobs.Job, ref jobRef) error {
		return s.cfg.TrackRunFunc(ctx, func(st TrackStore) error {
			o, err := st.GenerationOperationLock(ctx, ref.Operation)
			if err != nil {
				return err
			}
			if st.Now().Before(o.DeadlineAt) {
				return fmt.Errorf("operation %s: deadline not reached", o.ID)
			}
			next, effects, err := generation.Expire(o.Snapshot)
			if err != nil || next.Status == o.Status() {
				return nil
			}
			_, err = s.commit(ctx, st, o, next, effects, Attempt{})
			return err
		})
	})
}
