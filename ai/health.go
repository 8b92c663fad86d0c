package ai

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// Outcome classifies how one call to a model ended, for its health
// record (RecordOutcome) and for a fallback's reason (Attempt).
type Outcome string

// The outcomes.
const (
	// OutcomeSuccess: the model answered.
	OutcomeSuccess Outcome = "success"
	// OutcomeRateLimit: the provider refused for rate (429).
	OutcomeRateLimit Outcome = "rate_limit"
	// OutcomeServer: the provider failed (5xx, overloaded, an error in a
	// 200 stream, a stream dropped or malformed).
	OutcomeServer Outcome = "server"
	// OutcomeTimeout: the provider did not answer in time.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeAuth: the provider refused the platform's key (401, 403).
	OutcomeAuth Outcome = "auth"
	// OutcomeCredits: the provider account is out of credits or quota.
	OutcomeCredits Outcome = "credits"
	// OutcomeContextWindow: the request did not fit the model's context.
	OutcomeContextWindow Outcome = "context_window"
	// OutcomeContentPolicy: the provider refused the content.
	OutcomeContentPolicy Outcome = "content_policy"
	// OutcomeInvalidRequest: the provider refused the request as
	// malformed for another reason.
	OutcomeInvalidRequest Outcome = "invalid_request"
	// OutcomeCancelled: the caller gave up (its context was cancelled);
	// it says nothing of the model and is not recorded.
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every outcome.
func Outcomes() []Outcome {
	return []Outcome{OutcomeSuccess, OutcomeRateLimit, OutcomeServer, OutcomeTimeout, OutcomeAuth, OutcomeCredits,
		OutcomeContextWindow, OutcomeContentPolicy, OutcomeInvalidRequest, OutcomeCancelled}
}

// Valid reports whether o is a known outcome.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes(), o) }

// Unhealthy reports whether o is a failure of the model or its provider,
// which counts towards a cooldown: rate limit, server, timeout, auth and
// credits. A refusal of the request itself (context window, content
// policy, invalid request) says nothing of the model's health.
func (o Outcome) Unhealthy() bool {
	switch o {
	case OutcomeRateLimit, OutcomeServer, OutcomeTimeout, OutcomeAuth, OutcomeCredits:
		return true
	}
	return false
}

// OutcomeOf classifies an error a provider adapter returned (Provider):
// by its class (ClassOf), and an error of no adapter by its fault code.
// Rate limits, exhausted credits and refused keys are their own
// outcomes; server failures, unreadable answers and interrupted streams
// are server failures, or timeouts when their code is PROVIDER_TIMEOUT;
// a context overflow, a content refusal and a request refused as built
// are refusals of the request. A nil error is a success; the caller's own
// cancellation is OutcomeCancelled.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeSuccess
	}
	timeout := fault.Is(err, fault.ProviderTimeout)
	switch ClassOf(err) {
	case ClassRateLimit:
		return OutcomeRateLimit
	case ClassCredits:
		return OutcomeCredits
	case ClassAuth:
		return OutcomeAuth
	case ClassContext:
		return OutcomeContextWindow
	case ClassFilter:
		return OutcomeContentPolicy
	case ClassRequest:
		return OutcomeInvalidRequest
	case ClassServer, ClassMalformed, ClassInterrupted:
		if timeout {
			return OutcomeTimeout
		}
		return OutcomeServer
	}
	switch {
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	}
	switch fault.CodeOf(err) {
	case fault.RateLimited:
		return OutcomeRateLimit
	case fault.ProviderTimeout:
		return OutcomeTimeout
	case fault.ProviderCredentialInvalid:
		return OutcomeAuth
	case fault.ProviderCreditsExhausted:
		return OutcomeCredits
	case fault.ContentPolicyRejected:
		return OutcomeContentPolicy
	case fault.InvalidInput:
		return OutcomeInvalidRequest
	}
	return OutcomeServer
}

// HealthPolicy says when a model cools down.
type HealthPolicy struct {
	// Threshold is how many unhealthy outcomes in a row cool a model;
	// zero means DefaultThreshold.
	Threshold int
	// Cooldown is how long a cooled model is left out of routing; zero
	// means DefaultCooldown. After it, the model is tried again: a
	// success ends the streak, another unhealthy outcome cools it again.
	Cooldown time.Duration
}

// Defaults of HealthPolicy.
const (
	DefaultThreshold = 3
	DefaultCooldown  = time.Minute
)

// withDefaults returns p with its zero fields set to the defaults.
func (p HealthPolicy) withDefaults() HealthPolicy {
	if p.Threshold <= 0 {
		p.Threshold = DefaultThreshold
	}
	if p.Cooldown <= 0 {
		p.Cooldown = DefaultCooldown
	}
	return p
}

// Observation is one call's outcome as the completion path reports it.
type Observation struct {
	// Model is the model that was called.
	Model string
	// Outcome is how the call ended.
	Outcome Outcome
	// At is when it ended.
	At time.Time
	// Latency is how long a successful call took; zero when unknown. It
	// is not recorded for failures (a fast refusal is no measure of the
	// model's speed).
	Latency time.Duration
}

// Health is a model's record of observed outcomes in one environment.
// It starts empty: nothing is known of a model until it is called, and
// configuration never makes one healthy.
type Health struct {
	// Environment is the environment of the observed calls.
	Environment access.Environment
	// ModelID names the model.
	ModelID string
	// ConsecutiveFailures counts unhealthy outcomes since the last success.
	ConsecutiveFailures int
	// LastFailure is the last unhealthy outcome ("" when none).
	LastFailure Outcome
	// LastFailureAt is when it happened.
	LastFailureAt time.Time
	// LastSuccessAt is when the model last answered.
	LastSuccessAt time.Time
	// CooldownUntil, when after now, leaves the model out of routing.
	CooldownUntil time.Time
	// CooldownCause is the outcome that cooled it.
	CooldownCause Outcome
	// Successes, Failures (unhealthy outcomes) and Rejections (refusals of
	// a request) count every observation.
	Successes, Failures, Rejections int64
	// LatencyMillis is an exponentially weighted mean of successful
	// calls' latency (each new one weighs a fifth), LastLatencyMillis the
	// last one; LatencyObservations counts them (none: no latency known).
	LatencyMillis, LastLatencyMillis, LatencyObservations int64
	// Version counts the record's writes, from 1 (0: never written).
	Version int64
	// UpdatedAt is when the last observation was recorded.
	UpdatedAt time.Time
}

// HealthStatus is what a health record says of its model at a time.
type HealthStatus string

// The health statuses.
const (
	// HealthUnobserved: no call to the model was observed yet.
	HealthUnobserved HealthStatus = "unobserved"
	// HealthHealthy: its last observed call succeeded.
	HealthHealthy HealthStatus = "healthy"
	// HealthDegraded: its last calls failed, not yet enough to cool it.
	HealthDegraded HealthStatus = "degraded"
	// HealthCooldown: it failed repeatedly and is out of routing until
	// CooldownUntil.
	HealthCooldown HealthStatus = "cooldown"
)

// HealthStatuses lists the health statuses.
func HealthStatuses() []HealthStatus {
	return []HealthStatus{HealthUnobserved, HealthHealthy, HealthDegraded, HealthCooldown}
}

// Cooling reports whether the model is out of routing at t.
func (h Health) Cooling(t time.Time) bool { return h.CooldownUntil.After(t) }

// Status returns what h says of its model at t.
func (h Health) Status(t time.Time) HealthStatus {
	switch {
	case h.Cooling(t):
		return HealthCooldown
	case h.ConsecutiveFailures > 0:
		return HealthDegraded
	case h.Successes > 0:
		return HealthHealthy
	}
	return HealthUnobserved
}

// Observe returns h after observation o under policy p: a success ends
// the failure streak and any cooldown and feeds the latency mean; an
// unhealthy outcome extends the streak and, at p's threshold, cools the
// model until o.At plus p's cooldown; a refusal of the request is only
// counted; a cancelled call changes nothing. It is pure: the store
// writes its result.
func Observe(h Health, o Observation, p HealthPolicy) Health {
	p = p.withDefaults()
	if o.Outcome == OutcomeCancelled {
		return h
	}
	switch {
	case o.Outcome == OutcomeSuccess:
		h.ConsecutiveFailures, h.CooldownUntil, h.CooldownCause = 0, time.Time{}, ""
		h.LastSuccessAt = o.At
		h.Successes++
		if ms := o.Latency.Milliseconds(); o.Latency > 0 {
			if h.LatencyObservations == 0 {
				h.LatencyMillis = ms
			} else {
				h.LatencyMillis = (4*h.LatencyMillis + ms + 2) / 5
			}
			h.LastLatencyMillis = ms
			h.LatencyObservations++
		}
	case o.Outcome.Unhealthy():
		h.ConsecutiveFailures++
		h.Failures++
		h.LastFailure, h.LastFailureAt = o.Outcome, o.At
		if h.ConsecutiveFailures >= p.Threshold {
			h.CooldownUntil, h.CooldownCause = o.At.Add(p.Cooldown), o.Outcome
		}
	default:
		h.Rejections++
	}
	h.Version++
	h.UpdatedAt = o.At
	return h
}
