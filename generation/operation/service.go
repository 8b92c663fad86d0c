package operation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/outbox"
)

// Digester digests attempt tokens with the server's pepper;
// secret.Keyring satisfies it.
type Digester interface {
	Digest(credential string) string
}

// Hook is a fault-injection point for tests: the dispatch job calls it
// with PointCreated after the provider answered a create and before the
// answer is recorded. An error stops the job there, as a crash would.
type Hook func(ctx context.Context, point string) error

// PointCreated is the hook point between a provider create and recording
// its answer.
const PointCreated = "dispatch.created"

// Config configures a Service. Zero durations and limits take the
// documented defaults.
type Config struct {
	// Credentials resolves adapters, platform keys and customer keys.
	// Required.
	Credentials *credential.Service
	// Ledger reserves, settles and releases credits. Required.
	Ledger *ledger.Service
	// Assets stores ingested tracks. Required.
	Assets *asset.Service
	// Digester digests attempt tokens. Required.
	Digester Digester
	// DispatchRunFunc, AnswerRunFunc, TrackRunFunc and IngestRunFunc run
	// the units of work of the jobs and the callback, each handing its
	// function the transaction as that path's port (see DispatchStore,
	// AnswerStore, TrackStore, IngestStore); ReadFunc returns the read
	// pool. Required.
	DispatchRunFunc RunFunc[DispatchStore]
	AnswerRunFunc   RunFunc[AnswerStore]
	TrackRunFunc    RunFunc[TrackStore]
	IngestRunFunc   RunFunc[IngestStore]
	ReadFunc        func() PoolReader
	// CallbackBase is the public base URL providers call back
	// (scheme://host[:port]); callbacks go to
	// CallbackBase/internal/providers/{provider}/callbacks/{token}. Required.
	CallbackBase string
	// Tuning holds the limits and timings; zero values take its defaults.
	Tuning
	// Hook injects faults in tests; nil in production.
	Hook Hook
}

// Tuning is what an operator may tune about generation. Zero values take
// the documented defaults.
type Tuning struct {
	// Fetcher downloads the final tracks through its urlguard policy; nil
	// means a Fetcher with its defaults (no loopback allowance).
	Fetcher *generation.Fetcher
	// Prices is the providers' published price table for cost
	// reconciliation; nil means generation.DefaultPriceTable.
	Prices generation.PriceTable
	// CostDriftBps is the drift above which PROVIDER_COST_DRIFT is written;
	// zero means 1000 (10 %).
	CostDriftBps int64
	// CreateLimit creates per CreateWindow per provider account; zero means
	// 18 per 10 s (below provider A's 20 per 10 s).
	CreateLimit  int
	CreateWindow time.Duration
	// TransientRetries is how many throttled or unavailable creates a
	// candidate gets before the next candidate is tried; zero means 5.
	TransientRetries int
	// PollAfter is when the first recovery poll runs after a create was
	// accepted (zero: 90 s); later polls back off by doubling to PollMax
	// (zero: 5 min). PollMinInterval is the least time between two queries
	// of one task (zero: 1 s; provider A allows 3 per second per task).
	PollAfter       time.Duration
	PollMax         time.Duration
	PollMinInterval time.Duration
	// Deadline is how long an operation may take from accept before it
	// expires and its credits are released (F12); zero means 30 min.
	Deadline time.Duration
	// AmbiguousWait is how long an attempt whose create answer is unknown
	// waits for a callback before the operation fails with
	// PROVIDER_TIMEOUT; zero means 20 min (provider A retries callbacks
	// at 1, 5 and 15 minutes).
	AmbiguousWait time.Duration
	// PricingTTL is how long the Service keeps an environment's current
	// pricing policy before it reads it again: a newly published version
	// prices the requests each host accepts from at most this long after.
	// Zero means DefaultPricingTTL; a negative value reads the policy for
	// every request.
	PricingTTL time.Duration
	// AcceptsInFlight is how many accepts of one workspace and environment
	// that reserve credits this host runs against the database at once,
	// admitted in arrival order (Service.Admit); zero means
	// DefaultAcceptsInFlight, a negative value admits every accept at
	// once. The platform turns it off on SQLite unless it is set: the
	// single writer already runs units of work in arrival order.
	AcceptsInFlight int
	// Routes is the default route order when a request names no provider
	// policy; nil means provider A, then provider B. Routes not configured
	// in an environment are skipped.
	Routes []generation.ProviderID
}

// Service runs generation operations. It is safe for concurrent use.
type Service struct {
	cfg       Config
	pricing   *pricingCache
	customer  *customerRoutes
	admission *admission
	// observed decides which provider observations this host writes.
	observed *observations
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Credentials == nil, cfg.Ledger == nil, cfg.Assets == nil, cfg.Digester == nil:
		return nil, errors.New("operation: Credentials, Ledger, Assets and Digester are required")
	case cfg.DispatchRunFunc == nil, cfg.AnswerRunFunc == nil, cfg.TrackRunFunc == nil, cfg.IngestRunFunc == nil, cfg.ReadFunc == nil:
		return nil, errors.New("operation: DispatchRunFunc, AnswerRunFunc, TrackRunFunc, IngestRunFunc and ReadFunc are required")
	case cfg.CallbackBase == "":
		return nil, errors.New("operation: CallbackBase is required")
	}
	cfg.CallbackBase = strings.TrimRight(cfg.CallbackBase, "/")
	if cfg.Fetcher == nil {
		cfg.Fetcher = &generation.Fetcher{}
	}
	if cfg.Prices == nil {
		cfg.Prices = generation.DefaultPriceTable()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if cfg.CostDriftBps <= 0 {
		cfg.CostDriftBps = 1000
	}
	if cfg.CreateLimit <= 0 {
		cfg.CreateLimit = 18
	}
	if cfg.TransientRetries <= 0 {
		cfg.TransientRetries = 5
	}
	def(&cfg.CreateWindow, 10*time.Second)
	def(&cfg.PollAfter, 90*time.Second)
	def(&cfg.PollMax, 5*time.Minute)
	def(&cfg.PollMinInterval, time.Second)
	def(&cfg.Deadline, 30*time.Minute)
	def(&cfg.AmbiguousWait, 20*time.Minute)
	if cfg.Routes == nil {
		cfg.Routes = credential.Routes()
	}
	if cfg.PricingTTL == 0 {
		cfg.PricingTTL = DefaultPricingTTL
	}
	if cfg.AcceptsInFlight == 0 {
		cfg.AcceptsInFlight = DefaultAcceptsInFlight
	}
	return &Service{cfg: cfg, pricing: &pricingCache{ttl: cfg.PricingTTL}, customer: &customerRoutes{},
		admission: newAdmission(cfg.AcceptsInFlight), observed: &observations{}}, nil
}

// Input bounds.
const (
	maxPromptLen = 5000
	maxDuration  = 480 // seconds
)

// Plan is a generate request validated, priced and routed, ready for
// Accept. It is made outside the accept transaction, so the reads it
// needs (the pricing policy, the workspace's keys) never hold the writer.
type Plan struct {
	request Request
	quote   quote
	routes  []generation.ProviderID
	mode    credential.BillingMode
	reserve int64
}

// Prepare validates a generate request of p, prices it under the current
// pricing policy and chooses its routes and billing mode, reading through
// st (the read pool). Who may choose providers (a request with a provider
// policy needs the providers:select scope, spec Authentication 8) is the
// caller's access policy, decided before Prepare: the route declares it and
// the gateway's permission step enforces it.
//
// Errors: INVALID_INPUT (details.field); PROVIDER_UNAVAILABLE
// when no named or default route is configured with a usable credential.
func (s *Service) Prepare(ctx context.Context, st PlanReader, p *access.Principal, in Request) (Plan, error) {
	in, err := s.validate(in)
	if err != nil {
		return Plan{}, err
	}
	q, err := s.pricing.priceOf(ctx, st, p.Environment, in.Model, st.Now())
	if err != nil {
		return Plan{}, err
	}
	routes, mode, err := s.route(ctx, st, p, in)
	if err != nil {
		return Plan{}, err
	}
	reserve := q.credits
	if mode == credential.ModeBYOK {
		reserve = q.byok
	}
	return Plan{request: in, quote: q, routes: routes, mode: mode, reserve: reserve}, nil
}

// Accept writes a prepared operation of p with its dispatch job and
// reserves its credits, in st's unit of work. The reservation runs just
// before the commit (st.BeforeCommit): on PostgreSQL it locks a slot of
// each of the workspace's credit balances (ledger.Spread), which another
// accept of the workspace may wait for when every slot is held, so the
// locks are held only until the commit.
// INSUFFICIENT_CREDITS then fails the whole unit of work. It writes the
// outbox event generation.operation.accepted.
func (s *Service) Accept(ctx context.Context, st AcceptStore, p *access.Principal, plan Plan) (Operation, error) {
	const op = "operation.Accept"
	now := st.Now()
	o := Operation{
		ID: st.NewID(IDPrefix), Scope: p.Scope(), CreatedByUserID: p.UserID, CreatedByKeyID: p.KeyID, Request: plan.request,
		BillingMode: plan.mode, CreditsReserved: plan.reserve, ByokCredits: plan.quote.byok, Pricing: plan.quote.ref, Routes: plan.routes,
		Snapshot: generation.Snapshot{Status: generation.StatusQueued, Stage: generation.StageQueued},
		Version:  1, DeadlineAt: now.Add(s.cfg.Deadline), CreatedAt: now, UpdatedAt: now,
	}
	if err := st.GenerationOperationInsert(ctx, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	body := map[string]any{"operationId": o.ID, "status": string(o.Status()), "billingMode": string(o.BillingMode),
		"creditsReserved": strconv.FormatInt(o.CreditsReserved, 10)}
	if err := s.event(ctx, st, o, EventAccepted, body); err != nil {
		return Operation{}, err
	}
	// The deadline job is written by the first dispatch.
	if err := s.enqueue(ctx, st, JobDispatch, jobRef{Operation: o.ID}, now, "gen-dispatch:"+o.ID+":0"); err != nil {
		return Operation{}, err
	}
	if plan.reserve > 0 {
		in := ledger.CreditsInput{Scope: o.Scope, Ref: o.ID, Amount: money.Atomic(plan.reserve), Actor: ledger.ActorOf(p), Fresh: true}
		st.BeforeCommit(func(ctx context.Context) error {
			if _, _, err := s.cfg.Ledger.Reserve(ctx, st, in); err != nil {
				return fault.Wrap(op, err)
			}
			return nil
		})
	}
	return o, nil
}

// validate normalizes and checks a request.
func (s *Service) validate(in Request) (Request, error) {
	const op = "operation.validate"
	in.Prompt = strings.TrimSpace(in.Prompt)
	in.Model = strings.TrimSpace(in.Model)
	if in.Model == "" {
		in.Model = "v5"
	}
	switch {
	case in.Prompt == "":
		return in, fault.Invalid(op, "prompt", "prompt is required.")
	case utf8.RuneCountInString(in.Prompt) > maxPromptLen || !utf8.ValidString(in.Prompt):
		return in, fault.Invalid(op, "prompt", fmt.Sprintf("prompt must be at most %d characters.", maxPromptLen)).With("max", maxPromptLen)
	case in.Duration < 0 || in.Duration > maxDuration:
		return in, fault.Invalid(op, "duration", fmt.Sprintf("duration is in seconds, from 0 to %d.", maxDuration)).With("max", maxDuration)
	}
	pp := in.ProviderPolicy
	if pp == nil {
		return in, nil
	}
	if pp.Preferred == "" && len(pp.Fallback) == 0 {
		return in, fault.Invalid(op, "providerPolicy", "providerPolicy names no provider.")
	}
	seen := map[generation.ProviderID]bool{}
	check := func(field string, id generation.ProviderID) error {
		if !slices.Contains(credential.Routes(), id) {
			return fault.Invalid(op, field, "A provider is MUSIC_PROVIDER_A or MUSIC_PROVIDER_B.")
		}
		if seen[id] {
			return fault.Invalid(op, field, "A provider is named twice.")
		}
		seen[id] = true
		return nil
	}
	if pp.Preferred != "" {
		if err := check("providerPolicy.preferred", pp.Preferred); err != nil {
			return in, err
		}
	}
	for i, id := range pp.Fallback {
		if err := check(fmt.Sprintf("providerPolicy.fallback[%d]", i), id); err != nil {
			return in, err
		}
	}
	return in, nil
}

// route returns the operation's routes and billing mode: the provider
// policy's routes (each must be configured) or the configured default
// routes; BYOK_WITH_PLATFORM_FALLBACK when the routes offer both a
// customer key and a platform credential, BYOK or PLATFORM_MANAGED when
// they offer only one.
func (s *Service) route(ctx context.Context, st credential.Lister, p *access.Principal, in Request) ([]generation.ProviderID, credential.BillingMode, error) {
	const op = "operation.route"
	env := p.Environment
	var routes []generation.ProviderID
	if pp := in.ProviderPolicy; pp != nil {
		if pp.Preferred != "" {
			routes = append(routes, pp.Preferred)
		}
		routes = append(routes, pp.Fallback...)
		for _, r := range routes {
			if _, err := s.cfg.Credentials.Adapter(env, r); err != nil {
				return nil, "", fault.Wrap(op, err)
			}
		}
	} else {
		for _, r := range s.cfg.Routes {
			if _, err := s.cfg.Credentials.Adapter(env, r); err == nil {
				routes = append(routes, r)
			}
		}
	}
	usable, err := s.customer.routes(p, func() (map[generation.ProviderID]credential.Credential, error) {
		return s.cfg.Credentials.Usable(ctx, st, p.Scope())
	})
	if err != nil {
		return nil, "", err
	}
	var byok, platform bool
	for _, r := range routes {
		if _, ok := s.cfg.Credentials.PlatformKey(env, r); ok {
			platform = true
		}
		byok = byok || usable[r]
	}
	switch {
	case byok && platform:
		return routes, credential.ModeBYOKWithPlatformFallback, nil
	case byok:
		return routes, credential.ModeBYOK, nil
	case platform:
		return routes, credential.ModePlatformManaged, nil
	}
	return nil, "", fault.E(op, fault.ProviderUnavailable, "No music provider is configured with a usable credential in this environment.").
		With("reason", "no_credential")
}

// jobRef is the payload of this package's jobs: ids only, never secrets or
// URLs.
type jobRef struct {
	Operation string `json:"operation"`
	Attempt   string `json:"attempt,omitempty"`
	Slot      int    `json:"slot,omitempty"`
	Seq       int    `json:"seq,omitempty"`
	// Confirm, on a JobPoll, is the stage a notification callback claimed:
	// the poll is that callback's one confirmation query.
	Confirm string `json:"confirm,omitempty"`
}

// enqueue inserts a job in st's unit of work.
func (s *Service) enqueue(ctx context.Context, st Enqueuer, kind string, ref jobRef, at time.Time, unique string) error {
	if err := st.JobEnqueue(ctx, jobs.InsertParams{Kind: kind, Payload: payload(ref), RunAt: at, UniqueKey: unique}); err != nil {
		return fault.Wrap("operation.enqueue", err)
	}
	return nil
}

// event writes an outbox event of o.
func (s *Service) event(ctx context.Context, st ledger.Mover, o Operation, typ string, body map[string]any) error {
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID,
		Environment: string(o.Scope.Environment), Type: typ, SchemaVersion: 1, AggregateID: o.ID,
		AggregateVersion: o.Version, OccurredAt: st.Now(), Payload: payload(body)})
	if err != nil {
		return fault.Wrap("operation.event", err)
	}
	return nil
}

// Resource returns an operation of p's scope as the access evaluator's
// resource-scope step sees it: its creator and workspace. A grant at own
// scope (CREATOR, MEMBER) reaches only the operations its holder started.
// NOT_FOUND for an operation of any other scope.
func (s *Service) Resource(ctx context.Context, st Getter, p *access.Principal, id string) (*access.Resource, error) {
	o, err := st.GenerationOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return nil, fault.Wrap("operation.Resource", err)
	}
	return &access.Resource{OwnerUserID: o.CreatedByUserID, WorkspaceID: o.Scope.WorkspaceID}, nil
}

// CheckCancel reports whether cancelling an operation of p's scope is a
// valid move now (the access evaluator's workflow step):
// INVALID_STATE_TRANSITION for a completed operation or one whose delivery
// has begun, as Cancel would answer. Cancel still decides under the
// operation's lock.
func (s *Service) CheckCancel(ctx context.Context, st Getter, p *access.Principal, id string) error {
	o, err := st.GenerationOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return fault.Wrap("operation.CheckCancel", err)
	}
	_, _, err = generation.Cancel(o.Snapshot)
	return err
}

// Get reads an operation of p's scope with its attempts, outputs and cost
// reconciliations; NOT_FOUND for any other.
func (s *Service) Get(ctx context.Context, st Reader, p *access.Principal, id string) (View, error) {
	const op = "operation.Get"
	o, err := st.GenerationOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return View{}, fault.Wrap(op, err)
	}
	as, err := st.GenerationAttempts(ctx, o.ID)
	if err != nil {
		return View{}, fault.Wrap(op, err)
	}
	cs, err := st.GenerationCosts(ctx, o.ID)
	if err != nil {
		return View{}, fault.Wrap(op, err)
	}
	return View{Operation: o, Attempts: as, Costs: cs}, nil
}

// View is an operation with its attempts and cost reconciliations.
type View struct {
	Operation Operation
	Attempts  []Attempt
	Costs     []Cost
}

// Track is one delivered output of a completed operation.
type Track struct {
	Index  int
	Output generation.Output
	Asset  asset.Asset
}

// Result returns the delivered tracks of a completed operation of p's
// scope. RESULT_NOT_READY (409) before completion, with details.status;
// for a failed, cancelled or expired operation too, with its status and
// failure code (it will never have a result). NOT_FOUND for any other
// scope.
func (s *Service) Result(ctx context.Context, st Reader, p *access.Principal, id string) (Operation, []Track, error) {
	const op = "operation.Result"
	o, err := st.GenerationOperationGet(ctx, p.Scope(), id)
	if err != nil {
		return Operation{}, nil, fault.Wrap(op, err)
	}
	if o.Status() != generation.StatusCompleted {
		e := fault.E(op, fault.ResultNotReady, "The operation has no result yet.").With("status", string(o.Status()))
		if o.Status().Terminal() {
			e = fault.E(op, fault.ResultNotReady, "The operation ended without a result.").With("status", string(o.Status()))
			if o.Snapshot.FailureCode != "" {
				e = e.With("failureCode", o.Snapshot.FailureCode)
			}
		}
		return Operation{}, nil, e
	}
	sc := asset.Scope{TenantID: o.Scope.TenantID, WorkspaceID: o.Scope.WorkspaceID, Environment: string(o.Scope.Environment)}
	tracks := make([]Track, 0, len(o.Snapshot.Outputs))
	for i, out := range o.Snapshot.Outputs {
		a, err := s.cfg.Assets.Get(ctx, st, sc, out.AssetID)
		if err != nil {
			return Operation{}, nil, fault.Wrap(op, err)
		}
		tracks = append(tracks, Track{Index: i, Output: out, Asset: a})
	}
	return o, tracks, nil
}

// Cancel cancels an operation of p's scope: idempotent; the reserved
// credits are released once; work already done at the provider is not
// undone, and nothing it produces afterwards becomes an asset.
// INVALID_STATE_TRANSITION (409) for a completed operation; a failed or
// expired one is returned unchanged.
func (s *Service) Cancel(ctx context.Context, st CancelStore, p *access.Principal, id string) (Operation, error) {
	const op = "operation.Cancel"
	if _, err := st.GenerationOperationGet(ctx, p.Scope(), id); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	o, err := st.GenerationOperationLock(ctx, id)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	next, effects, err := generation.Cancel(o.Snapshot)
	if err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	return s.commit(ctx, st, o, next, effects, Attempt{})
}

// commit stores next as o's snapshot and performs effects in st's unit
// of work: jobs for ingestion and reconciliation, ledger movements for
// settle and release, and the terminal outbox event. att is the attempt the
// effects come from (its ownership decides the settled price).
func (s *Service) commit(ctx context.Context, st Writer, o Operation, next generation.Snapshot, effects []generation.Effect, att Attempt) (Operation, error) {
	const op = "operation.commit"
	was := o.Status()
	o.Snapshot = next
	o.Version++
	now := st.Now()
	o.UpdatedAt = now
	if !was.Terminal() && next.Status.Terminal() {
		o.EndedAt = &now
	}
	for _, e := range effects {
		var err error
		switch e := e.(type) {
		case generation.IngestTrack:
			err = s.enqueue(ctx, st, JobIngest, jobRef{Operation: o.ID, Slot: e.Slot}, now, fmt.Sprintf("gen-ingest:%s:%d", o.ID, e.Slot))
		case generation.ReconcileCost:
			if att.ID != "" {
				err = s.enqueue(ctx, st, JobReconcile, jobRef{Operation: o.ID, Attempt: att.ID}, now, "gen-cost:"+att.ID)
			}
		case generation.SettleCredits:
			err = s.settle(ctx, st, &o, att)
		case generation.ReleaseCredits:
			err = s.release(ctx, st, o)
		}
		if err != nil {
			return Operation{}, err
		}
	}
	if err := st.GenerationOperationUpdate(ctx, o); err != nil {
		return Operation{}, fault.Wrap(op, err)
	}
	if !was.Terminal() && next.Status.Terminal() {
		typ := map[generation.Status]string{generation.StatusCompleted: EventCompleted, generation.StatusFailed: EventFailed,
			generation.StatusCancelled: EventCancelled, generation.StatusExpired: EventExpired}[next.Status]
		body := map[string]any{"operationId": o.ID, "status": string(next.Status)}
		if next.FailureCode != "" {
			body["failureCode"] = next.FailureCode
		}
		if err := s.event(ctx, st, o, typ, body); err != nil {
			return Operation{}, err
		}
	}
	return o, nil
}

// settle consumes the price of what delivered the result — the BYOK fee
// when a customer key did, the full price otherwise — and releases the
// rest of the reservation, in one ledger call that locks the accounts of
// both in order.
func (s *Service) settle(ctx context.Context, st ledger.Mover, o *Operation, att Attempt) error {
	amount := o.CreditsReserved
	if att.Ownership == credential.CustomerBYOK {
		amount = min(o.ByokCredits, o.CreditsReserved)
	}
	in := ledger.CreditsInput{Scope: o.Scope, Ref: o.ID, Amount: money.Atomic(amount)}
	if err := s.cfg.Ledger.SettleAndRelease(ctx, st, in, money.Atomic(o.CreditsReserved-amount)); err != nil {
		return fault.Wrap("operation.settle", err)
	}
	o.CreditsSettled = &amount
	return nil
}

// release returns the whole reservation to the workspace.
func (s *Service) release(ctx context.Context, st ledger.Mover, o Operation) error {
	if o.CreditsReserved <= 0 {
		return nil
	}
	if _, _, err := s.cfg.Ledger.Release(ctx, st, ledger.CreditsInput{Scope: o.Scope, Ref: o.ID, Amount: money.Atomic(o.CreditsReserved)}); err != nil {
		return fault.Wrap("operation.release", err)
	}
	return nil
}
