package webhook

import (
	"context"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/outbox"
)

// maxFanoutPasses bounds the passes of one fan-out job run; the next
// period's run takes up the rest.
const maxFanoutPasses = 20

// fanoutJob is the periodic fan-out (package doc, Fan-out).
func (s *Service) fanoutJob(ctx context.Context, _ jobs.Job) error {
	_, err := s.Fanout(ctx)
	return err
}

// Fanout turns the outbox events no pass has fanned out yet into
// deliveries, pass after pass (each one unit of work of at most 500
// events) until it has caught up or made 20 passes, and reports how many
// deliveries it created. The fan-out job runs it every
// Tuning.FanoutEvery; any number of callers on any number of hosts may run
// it at once, since a delivery is unique per endpoint and event.
func (s *Service) Fanout(ctx context.Context) (int, error) {
	total := 0
	for range maxFanoutPasses {
		n, more, err := s.fanoutPass(ctx)
		if err != nil {
			return total, fault.Wrap("webhook.Fanout", err)
		}
		total += n
		if n > 0 && s.cfg.WakeFunc != nil {
			s.cfg.WakeFunc()
		}
		if !more {
			break
		}
	}
	return total, nil
}

// fanoutPass is one pass: read the unmarked events from the cursor's
// window on, then (after them, so that an endpoint whose creation
// committed before an event is seen with it) the endpoints of their
// scopes; make each matching (endpoint, event) pair's delivery and its
// first attempt's job; mark the events. A pass that read fewer events
// than its batch has caught up: it moves the cursor to its own start and
// forgets the marks the window has left behind.
func (s *Service) fanoutPass(ctx context.Context) (created int, more bool, err error) {
	err = s.cfg.FanoutRunFunc(ctx, func(st FanoutStore) error {
		created, more = 0, false
		now := st.Now()
		cursor, ok, err := st.WebhookFanoutCursor(ctx)
		if err != nil {
			return err
		}
		if !ok {
			cursor = now
		}
		evs, err := st.WebhookFanoutEvents(ctx, cursor.Add(-s.t.FanoutWindow), fanoutBatch)
		if err != nil {
			return err
		}
		endpoints := map[access.Scope][]Endpoint{}
		for _, ev := range evs {
			sc := scopeOf(ev)
			if _, ok := endpoints[sc]; ok {
				continue
			}
			if endpoints[sc], err = st.WebhookEndpointsOf(ctx, sc); err != nil {
				return err
			}
		}
		ids := make([]string, 0, len(evs))
		for _, ev := range evs {
			for _, e := range endpoints[scopeOf(ev)] {
				if !Matches(e, ev) {
					continue
				}
				d := newDelivery(st, e, ev)
				inserted, err := st.WebhookDeliveryInsert(ctx, d)
				if err != nil {
					return err
				}
				if inserted {
					if err := enqueueAttempt(ctx, st, d); err != nil {
						return err
					}
					created++
				}
			}
			ids = append(ids, ev.ID)
		}
		if len(ids) > 0 {
			if err := st.WebhookFanoutMark(ctx, ids); err != nil {
				return err
			}
		}
		if len(evs) == fanoutBatch {
			more = true
			return nil
		}
		if err := st.WebhookFanoutAdvance(ctx, now); err != nil {
			return err
		}
		return st.WebhookFanoutPrune(ctx, now.Add(-s.t.FanoutWindow))
	})
	return created, more, err
}

// scopeOf is the scope of an event.
func scopeOf(ev outbox.Event) access.Scope {
	return access.Scope{TenantID: ev.TenantID, WorkspaceID: ev.WorkspaceID, Environment: access.Environment(ev.Environment)}
}

// Matches reports whether endpoint e receives event ev: e is enabled, of
// ev's tenant, workspace and environment, created no later than ev
// occurred, and subscribes to ev's type (or to Wildcard); a webhook.test
// event goes to the endpoint it names alone.
func Matches(e Endpoint, ev outbox.Event) bool {
	switch {
	case e.Status != StatusEnabled, e.Scope != scopeOf(ev), ev.OccurredAt.Before(e.CreatedAt):
		return false
	case ev.Type == EventTypeTest:
		return ev.AggregateID == e.ID
	}
	return slices.Contains(e.EnabledEvents, Wildcard) || slices.Contains(e.EnabledEvents, ev.Type)
}
