package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// Job kinds of this package. The platform registers their handlers
// (Service.ScheduleHandler, Service.GrantHandler).
const (
	// JobMonthlyGrant books one workspace's grant for one environment and
	// period. Payload: GrantPayload. Unique key: the grant's Reference.
	JobMonthlyGrant = "plan.monthly_grant"
	// JobScheduleGrants enqueues every workspace's grants of a period, then
	// schedules the next period. Payload: SchedulePayload. Unique key:
	// "plan.schedule_grants:<YYYY-MM>".
	JobScheduleGrants = "plan.schedule_grants"
)

// GrantMaxAttempts is the attempt budget of a grant job. With the job pool's
// backoff capped at an hour it keeps retrying for about six weeks, longer
// than a period, so a ledger outage delays a grant but does not drop it.
const GrantMaxAttempts = 1000

// scheduleBatch bounds the workspaces one unit of work of the scheduler
// enqueues grants for.
const scheduleBatch = 200

// GrantPayload is the payload of a JobMonthlyGrant job.
type GrantPayload struct {
	TenantID    string             `json:"tenantId"`
	WorkspaceID string             `json:"workspaceId"`
	Environment access.Environment `json:"environment"`
	// Period is "YYYY-MM".
	Period string `json:"period"`
}

// SchedulePayload is the payload of a JobScheduleGrants job.
type SchedulePayload struct {
	// Period is "YYYY-MM".
	Period string `json:"period"`
}

// SeedResult counts what Seed wrote.
type SeedResult struct {
	// PlansWritten counts plans created or changed.
	PlansWritten int
	// PriceVersionsCreated counts new price versions.
	PriceVersionsCreated int
}

// Service applies the catalog. It is safe for concurrent use.
type Service struct {
	catalog Catalog
}

// New validates c (zero fields take their documented defaults) and returns
// a Service for it.
func New(c Catalog) (*Service, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("plan catalog: %w", err)
	}
	return &Service{catalog: c}, nil
}

// TestCredits is the monthly test-credit grant in effect.
func (s *Service) TestCredits() uint64 { return s.catalog.TestCredits }

// Paid reports whether planID is a plan of the catalog with a price above
// zero; "" and unknown plans are not. It and Granting make the service the
// access evaluator's access.Offers.
func (s *Service) Paid(planID string) bool {
	for _, sp := range s.catalog.Plans {
		if sp.ID == planID {
			return slices.ContainsFunc(sp.Prices, func(p Price) bool { return p.Amount > 0 })
		}
	}
	return false
}

// Limits returns the limits of planID as the catalog configures them. A
// plan the catalog does not list ("", or a plan dropped from the
// configuration) is held to the free plan's limits.
func (s *Service) Limits(planID string) Limits {
	free := DefaultLimits()
	for _, sp := range s.catalog.Plans {
		if sp.ID == planID {
			return sp.Limits
		}
		if sp.ID == FreeID {
			free = sp.Limits
		}
	}
	return free
}

// Granting returns the paid plans of the catalog that grant entitlement, in
// display order.
func (s *Service) Granting(entitlement string) []string {
	var out []string
	for _, sp := range s.catalog.Plans {
		if s.Paid(sp.ID) && slices.Contains(sp.Entitlements, entitlement) {
			out = append(out, sp.ID)
		}
	}
	return out
}

// Seed persists the catalog on st (see the package doc): idempotent, a
// changed amount appends a price version and keeps the old one inactive, and
// plans left out of the configuration are deactivated. Several hosts may
// seed the same catalog at once; they converge on the same versions.
func (s *Service) Seed(ctx context.Context, st Store) (SeedResult, error) {
	const op = "plan.Seed"
	var res SeedResult
	existing, err := st.PlanList(ctx)
	if err != nil {
		return res, fault.Wrap(op, err)
	}
	byID := map[string]Plan{}
	for _, p := range existing {
		byID[p.ID] = p
	}
	ids := make([]string, 0, len(s.catalog.Plans))
	for pos, spec := range s.catalog.Plans {
		ids = append(ids, spec.ID)
		cur, ok := byID[spec.ID]
		want := Plan{ID: spec.ID, Name: spec.Name, Entitlements: spec.Entitlements, MonthlyCredits: spec.MonthlyCredits,
			Position: pos, Active: true}
		if !ok || cur.Name != want.Name || !slices.Equal(cur.Entitlements, want.Entitlements) ||
			cur.MonthlyCredits != want.MonthlyCredits || cur.Position != pos || !cur.Active {
			if err := st.PlanUpsert(ctx, want); err != nil {
				return res, fault.Wrap(op, err)
			}
			res.PlansWritten++
		}
		var active []string
		for _, price := range spec.Prices {
			pv, created, err := s.seedPrice(ctx, st, cur, spec.ID, price)
			if err != nil {
				return res, fault.Wrap(op, err)
			}
			if created {
				res.PriceVersionsCreated++
			}
			active = append(active, pv.ID)
		}
		slices.Sort(active)
		var was []string
		for _, pv := range cur.ActivePrices() {
			was = append(was, pv.ID)
		}
		slices.Sort(was)
		if !slices.Equal(active, was) {
			if err := st.PriceVersionActivate(ctx, spec.ID, active); err != nil {
				return res, fault.Wrap(op, err)
			}
		}
	}
	var stale bool
	for _, p := range existing {
		if p.Active && !slices.Contains(ids, p.ID) {
			stale = true
		}
	}
	if stale {
		if err := st.PlanDeactivateExcept(ctx, ids); err != nil {
			return res, fault.Wrap(op, err)
		}
	}
	return res, nil
}

// seedPrice returns the price version matching price, appending one when
// the newest version of its (currency, interval) has another amount.
func (s *Service) seedPrice(ctx context.Context, st Store, cur Plan, planID string, price Price) (PriceVersion, bool, error) {
	for range 3 {
		latest, ok := cur.latest(price.Currency, price.Interval)
		if ok && latest.Amount == price.Amount {
			return latest, false, nil
		}
		next := 1
		if ok {
			next = latest.Version + 1
		}
		pv, inserted, err := st.PriceVersionInsert(ctx, PriceVersion{PlanID: planID, Currency: price.Currency,
			Interval: price.Interval, Version: next, Amount: price.Amount})
		if err != nil {
			return PriceVersion{}, false, err
		}
		if inserted {
			return pv, true, nil
		}
		// Another host seeded concurrently: re-read and decide again.
		if cur, err = st.PlanGet(ctx, planID); err != nil {
			return PriceVersion{}, false, err
		}
	}
	return PriceVersion{}, false, fault.E("plan.seedPrice", fault.Conflict, "The catalog is being seeded concurrently; retry.")
}

// List returns the active catalog: active plans in display order, each with
// all its price versions (use Plan.ActivePrices for the offered ones).
func (s *Service) List(ctx context.Context, st Reader) ([]Plan, error) {
	all, err := st.PlanList(ctx)
	if err != nil {
		return nil, fault.Wrap("plan.List", err)
	}
	out := all[:0:0]
	for _, p := range all {
		if p.Active {
			out = append(out, p)
		}
	}
	return out, nil
}

// Start puts a new workspace on the free plan in both environments, in the
// unit of work that creates it: the free entitlements are written for test
// and live (bumping the workspace's authority version) and the current
// period's grants are enqueued.
func (s *Service) Start(ctx context.Context, st Store, tenantID, workspaceID string) error {
	const op = "plan.Start"
	for _, env := range []access.Environment{access.Live, access.Test} {
		if err := s.Assign(ctx, st, tenantID, workspaceID, env, FreeID); err != nil {
			return fault.Wrap(op, err)
		}
	}
	if err := s.EnqueueGrants(ctx, st, tenantID, workspaceID, PeriodOf(st.Now())); err != nil {
		return fault.Wrap(op, err)
	}
	return nil
}

// Assign puts a workspace on an active plan in environment env only: the
// entitlements of its previous plan in env that the new one lacks are
// turned off in env, the new plan's are turned on in env with source
// "plan:<id>". The other environment keeps its plan and entitlements.
// NOT_FOUND for an unknown or inactive plan; INVALID_INPUT for an unknown
// environment.
func (s *Service) Assign(ctx context.Context, st Store, tenantID, workspaceID string, env access.Environment, planID string) error {
	const op = "plan.Assign"
	if tenantID == "" || workspaceID == "" {
		return fault.Invalid(op, "workspaceId", "A tenant and a workspace are required.")
	}
	if !env.Valid() {
		return fault.Invalid(op, "environment", "A plan is assigned in the test or the live environment.")
	}
	next, err := st.PlanGet(ctx, planID)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if !next.Active {
		return fault.E(op, fault.NotFound, "The plan is not offered.")
	}
	prev, err := st.WorkspacePlanGet(ctx, workspaceID, env)
	switch {
	case err == nil && prev.PlanID != planID:
		old, err := st.PlanGet(ctx, prev.PlanID)
		if err != nil && !fault.Is(err, fault.NotFound) {
			return fault.Wrap(op, err)
		}
		for _, e := range old.Entitlements {
			if !slices.Contains(next.Entitlements, e) {
				if err := st.EntitlementSet(ctx, workspaceID, e, Source(old.ID), string(env), false); err != nil {
					return fault.Wrap(op, err)
				}
			}
		}
	case err != nil && !fault.Is(err, fault.NotFound):
		return fault.Wrap(op, err)
	}
	if err := st.WorkspacePlanSet(ctx, Assignment{TenantID: tenantID, WorkspaceID: workspaceID, Environment: env, PlanID: planID}); err != nil {
		return fault.Wrap(op, err)
	}
	for _, e := range next.Entitlements {
		if err := st.EntitlementSet(ctx, workspaceID, e, Source(planID), string(env), true); err != nil {
			return fault.Wrap(op, err)
		}
	}
	return nil
}

// EnqueueGrants enqueues a workspace's live and test grants for period p,
// each once (the job's unique key is the grant's Reference).
func (s *Service) EnqueueGrants(ctx context.Context, st jobs.Enqueuer, tenantID, workspaceID string, p Period) error {
	for _, env := range []access.Environment{access.Live, access.Test} {
		payload, err := json.Marshal(GrantPayload{TenantID: tenantID, WorkspaceID: workspaceID, Environment: env, Period: p.String()})
		if err != nil {
			return fmt.Errorf("plan: encode grant payload: %w", err)
		}
		if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobMonthlyGrant, Payload: payload,
			MaxAttempts: GrantMaxAttempts, UniqueKey: Reference(workspaceID, env, p)}); err != nil {
			return fault.Wrap("plan.EnqueueGrants", err)
		}
	}
	return nil
}

// scheduleKey is the unique key of period p's scheduler job.
func scheduleKey(p Period) string { return JobScheduleGrants + ":" + p.String() }

// EnsureSchedule enqueues the scheduler jobs of the current period (due now:
// it covers workspaces that have none of this period's grants) and of the
// next one (due at its start). Unique keys make it safe to call on every
// start of every host.
func (s *Service) EnsureSchedule(ctx context.Context, st Store) error {
	cur := PeriodOf(st.Now())
	if err := enqueueSchedule(ctx, st, cur, st.Now()); err != nil {
		return err
	}
	return enqueueSchedule(ctx, st, cur.Next(), cur.Next().Start())
}

func enqueueSchedule(ctx context.Context, st jobs.Enqueuer, p Period, at time.Time) error {
	payload, err := json.Marshal(SchedulePayload{Period: p.String()})
	if err != nil {
		return fmt.Errorf("plan: encode schedule payload: %w", err)
	}
	if _, err := st.JobInsert(ctx, jobs.InsertParams{Kind: JobScheduleGrants, Payload: payload, RunAt: at,
		UniqueKey: scheduleKey(p)}); err != nil {
		return fault.Wrap("plan.EnsureSchedule", err)
	}
	return nil
}

// ScheduleHandler returns the handler of JobScheduleGrants: it enqueues the
// period's grants of every workspace that has a plan, a batch per unit of
// work, then schedules the next period at its start.
func (s *Service) ScheduleHandler(run RunFunc) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var pl SchedulePayload
		if err := json.Unmarshal(job.Payload, &pl); err != nil {
			return fmt.Errorf("plan.schedule_grants: decode payload: %w", err)
		}
		p, err := ParsePeriod(pl.Period)
		if err != nil {
			return fmt.Errorf("plan.schedule_grants: %w", err)
		}
		after := ""
		for {
			var n int
			err := run(ctx, func(st Store) error {
				as, err := st.WorkspacePlanList(ctx, after, scheduleBatch)
				if err != nil {
					return err
				}
				for _, a := range as {
					if err := s.EnqueueGrants(ctx, st, a.TenantID, a.WorkspaceID, p); err != nil {
						return err
					}
					after = a.WorkspaceID
				}
				n = len(as)
				return nil
			})
			if err != nil {
				return fmt.Errorf("plan.schedule_grants %s: %w", p, err)
			}
			if n < scheduleBatch {
				break
			}
		}
		err = run(ctx, func(st Store) error { return enqueueSchedule(ctx, st, p.Next(), p.Next().Start()) })
		if err != nil {
			return fmt.Errorf("plan.schedule_grants %s: schedule the next period: %w", p, err)
		}
		return nil
	}
}

// GrantFor computes the grant a JobMonthlyGrant payload stands for, from the
// workspace's current plan in the payload's environment: the live plan's
// MonthlyCredits in live, the catalog's TestCredits in test (whatever the
// test plan: test credits are a setting, and a paid test subscription grants
// its plan's credits per subscription period itself, see the package doc).
// NOT_FOUND when the workspace has no plan in that environment;
// INVALID_INPUT for a malformed payload.
func (s *Service) GrantFor(ctx context.Context, st Store, pl GrantPayload) (Grant, error) {
	const op = "plan.GrantFor"
	p, err := ParsePeriod(pl.Period)
	if err != nil {
		return Grant{}, fault.Wrap(op, err)
	}
	if !pl.Environment.Valid() || pl.WorkspaceID == "" {
		return Grant{}, fault.Invalid(op, "payload", "A grant needs a workspace and an environment.")
	}
	a, err := st.WorkspacePlanGet(ctx, pl.WorkspaceID, pl.Environment)
	if err != nil {
		return Grant{}, fault.Wrap(op, err)
	}
	g := Grant{TenantID: a.TenantID, WorkspaceID: a.WorkspaceID, Environment: pl.Environment, PlanID: a.PlanID,
		Period: p, Reference: Reference(a.WorkspaceID, pl.Environment, p), Credits: s.catalog.TestCredits}
	if pl.Environment == access.Live {
		pn, err := st.PlanGet(ctx, a.PlanID)
		if err != nil {
			return Grant{}, fault.Wrap(op, err)
		}
		g.Credits = pn.MonthlyCredits
	}
	return g, nil
}

// GrantHandler returns the handler of JobMonthlyGrant: it computes the
// grant (GrantFor) and hands it to granter, which books it once per
// Reference. A grant of zero credits books nothing.
func (s *Service) GrantHandler(run RunFunc, granter CreditGranter) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var pl GrantPayload
		if err := json.Unmarshal(job.Payload, &pl); err != nil {
			return fmt.Errorf("plan.monthly_grant: decode payload: %w", err)
		}
		var g Grant
		err := run(ctx, func(st Store) (err error) {
			g, err = s.GrantFor(ctx, st, pl)
			return err
		})
		if err != nil {
			return fmt.Errorf("plan.monthly_grant %s/%s/%s: %w", pl.WorkspaceID, pl.Environment, pl.Period, err)
		}
		if g.Credits == 0 {
			return nil
		}
		if err := granter.GrantCredits(ctx, g); err != nil {
			return fmt.Errorf("plan.monthly_grant %s: %w", g.Reference, err)
		}
		return nil
	}
}

// Jobs returns plan's job kinds, both of the money class: the period's
// grant scheduler and the monthly grant, which granter books (billing's
// PlanGranter, which also decides when a grant is skipped). Each runs its
// units of work through run.
func (s *Service) Jobs(run RunFunc, granter CreditGranter) []jobs.Kind {
	return []jobs.Kind{
		{Name: JobScheduleGrants, Class: jobs.ClassMoney, HandlerFunc: s.ScheduleHandler(run)},
		{Name: JobMonthlyGrant, Class: jobs.ClassMoney, HandlerFunc: s.GrantHandler(run, granter)},
	}
}
