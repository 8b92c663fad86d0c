package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/internal/id"
	"github.com/creatormusic/platform/outbox"
)

// ServiceHealth is the state of one service the platform depends on.
type ServiceHealth struct {
	// Name is the service's name: database; jobs (this host's job worker);
	// or jobs.<class>, the queue of one job class (jobs.money,
	// jobs.provider, jobs.audio, jobs.maintenance, jobs.outbound) over every host.
	Name string `json:"name" example:"database"`
	// Status is up, degraded or down. A service that cannot be checked is
	// reported down with a reason, never up. A job class is degraded when
	// its oldest runnable job has waited past the host's starvation
	// threshold (one minute by default) and down past ten times it.
	Status string `json:"status" example:"up"`
	// Detail explains a degraded or down state; it never holds a secret.
	Detail string `json:"detail,omitempty" example:""`
	// CheckedAt is when the state was observed.
	CheckedAt time.Time `json:"checkedAt"`
	// OldestJobAgeSeconds is, for a job class, how long its oldest runnable
	// job (due and waiting for a worker, or left by a worker whose lease
	// expired; not one held back by its workspace's limit) has waited, in
	// whole seconds; 0 when none waits. Absent for other services.
	OldestJobAgeSeconds *int64 `json:"oldestJobAgeSeconds,omitempty" example:"0"`
	// RunnableJobs is, for a job class, how many of its jobs are runnable
	// now. Absent for other services.
	RunnableJobs *int64 `json:"runnableJobs,omitempty" example:"0"`
}

// Health statuses.
const (
	StatusUp       = "up"
	StatusDegraded = "degraded"
	StatusDown     = "down"
)

// HealthCheck observes one service.
type HealthCheck struct {
	Name      string
	CheckFunc func(ctx context.Context) ServiceHealth
}

// HealthReport answers GET /api/v1/health/services.
type HealthReport struct {
	// Status is down if any service is down, degraded if any is degraded,
	// else up.
	Status string `json:"status" example:"up"`
	// Services are the states of the services the platform depends on.
	Services []ServiceHealth `json:"services"`
}

// OutboxPage is one page of outbox events in occurrence order.
type OutboxPage struct {
	// Items are the page's events, in occurrence order.
	Items []outbox.Event `json:"items"`
	// HasMore is true when another page follows.
	HasMore bool `json:"hasMore" example:"false"`
	// NextCursor is passed as cursor to read the next page; null on the last.
	NextCursor *string `json:"nextCursor" example:"Y3Vyc29yOmV2dF8wMWpk"`
}

func exampleEvent() outbox.Event {
	return outbox.Event{ID: "evt_01jd0000000000000000000000", WorkspaceID: "ws_01jd0000000000000000000000", Environment: "test",
		Type: "api_key.created", SchemaVersion: 1, AggregateID: "key_01jd0000000000000000000000", AggregateVersion: 1,
		OccurredAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Payload: []byte(`{"keyId":"key_01jd0000000000000000000000"}`)}
}

func opsRoutes(checks []HealthCheck) []Route {
	return []Route{
		{Method: http.MethodGet, Pattern: "/api/v1/health/services", OperationID: "getServiceHealth", Tag: transport.TagArchitecture,
			Auth: transport.AuthSessionOrKey, AnyMember: true, Private: true, Idempotency: transport.IdempotencyNone,
			Summary: "Report the health of the platform's services",
			Description: "The database, the job worker and each configured adapter, each observed on this request (the worker from its last poll). " +
				"Each job class's queue (jobs.money, jobs.provider, jobs.audio, jobs.maintenance, jobs.outbound) reports the age of its oldest runnable job, " +
				"read from the database: a starved class is degraded, never up. Nothing is reported up that was not observed up.",
			Response: HealthReport{Status: StatusUp, Services: []ServiceHealth{{Name: "database", Status: StatusUp, CheckedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
				{Name: "jobs", Status: StatusUp, CheckedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
				{Name: "jobs.audio", Status: StatusUp, CheckedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), OldestJobAgeSeconds: new(int64), RunnableJobs: new(int64)}}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				rep := HealthReport{Status: StatusUp, Services: make([]ServiceHealth, 0, len(checks))}
				for _, hc := range checks {
					h := hc.CheckFunc(ctx)
					h.Name = hc.Name
					rep.Services = append(rep.Services, h)
					switch {
					case h.Status == StatusDown:
						rep.Status = StatusDown
					case h.Status == StatusDegraded && rep.Status == StatusUp:
						rep.Status = StatusDegraded
					}
				}
				return rep, nil
			}},
		{Method: http.MethodGet, Pattern: "/api/v1/internal/events/outbox", OperationID: "listOutboxEvents", Tag: transport.TagArchitecture,
			Auth: transport.AuthInternal, Permission: access.InternalEvents, Scope: access.ScopeInternal, Private: true, Idempotency: transport.IdempotencyNone,
			Summary: "List outbox events",
			Description: "For publishers holding the internal scope (keys issued by the host's operator only). Events of the key's environment " +
				"(a test key lists test events, a live key live events) in occurrence order across every workspace; unpublished=true (the default) " +
				"lists only events not yet marked published.",
			Query: []transport.Param{{Name: "unpublished", Description: "true (default) or false.", Example: "true"},
				{Name: "limit", Description: "Page size, 1 to 100 (default 20).", Example: "20"},
				{Name: "cursor", Description: "The nextCursor of the previous page.", Example: "Y3Vyc29yOmV2dF8wMWpk"}},
			Response: OutboxPage{Items: []outbox.Event{exampleEvent()}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				unpublished := true
				if s := c.Query("unpublished"); s != "" {
					var err error
					if unpublished, err = strconv.ParseBool(s); err != nil {
						return nil, fault.Invalid("transport.listOutbox", "unpublished", "unpublished must be true or false.")
					}
				}
				evs, more, next, err := transport.PageOf(c, "evt_", func(after string, n int) ([]outbox.Event, error) {
					return outbox.List(ctx, c.Tx, outbox.ListParams{Environment: string(c.Principal.Environment), After: after, Limit: n,
						Unpublished: unpublished})
				}, func(e outbox.Event) string { return e.ID })
				if err != nil {
					return nil, err
				}
				return OutboxPage{Items: evs, HasMore: more, NextCursor: next}, nil
			}},
		{Method: http.MethodPost, Pattern: "/api/v1/internal/events/outbox/{id}/published", OperationID: "markOutboxEventPublished", Tag: transport.TagArchitecture,
			Auth: transport.AuthInternal, Permission: access.InternalEvents, Scope: access.ScopeInternal, Private: true, Idempotency: transport.IdempotencyOptional,
			Summary: "Mark an outbox event published",
			Description: "Idempotent: marking a published event again keeps its first publication time. An event of the other " +
				"environment than the key's is NOT_FOUND, as an unknown one is.",
			Response: exampleEvent(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				eid := c.PathValue("id")
				if !id.Valid("evt_", eid) {
					return nil, fault.E("transport.markPublished", fault.NotFound, "")
				}
				return outbox.MarkPublished(ctx, c.Tx, string(c.Principal.Environment), eid)
			}},
	}
}
