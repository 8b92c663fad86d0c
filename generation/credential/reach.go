package credential

import (
	"context"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
)

// Reach is what the platform's last call to a provider in one environment
// observed of the provider's service. It is an observation, never read
// from configuration: a configured provider no call has reached yet has
// none.
type Reach string

const (
	// ReachAvailable: the provider answered (a task created or queried, or
	// a refusal it made itself: a rejected key, exhausted credits, a
	// throttle, a refused prompt).
	ReachAvailable Reach = "available"
	// ReachUnreachable: the call found no answer (a transport failure, a
	// timeout, a 5xx or an answer the adapter could not read).
	ReachUnreachable Reach = "unreachable"
)

// ReachOf classifies the error of one provider call: nil and the codes a
// provider answers with are ReachAvailable; PROVIDER_UNAVAILABLE,
// PROVIDER_TIMEOUT, a context deadline and an unclassified error are
// ReachUnreachable.
func ReachOf(err error) Reach {
	if err == nil {
		return ReachAvailable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ReachUnreachable
	}
	switch fault.CodeOf(err) {
	case fault.ProviderCredentialInvalid, fault.ProviderCreditsExhausted, fault.RateLimited, fault.InvalidInput,
		fault.ContentPolicyRejected, fault.GenerationFailed, fault.NotFound:
		return ReachAvailable
	}
	return ReachUnreachable
}

// Observation is the newest observation of a provider route in one
// environment, kept per route and environment whoever's credential made
// the call (reachability is the provider's, not a key's).
type Observation struct {
	Provider    generation.ProviderID
	Environment access.Environment
	Reach       Reach
	// Code is the error code of an unreachable call; "" when available.
	Code fault.Code
	// ObservedAt is when the call's answer (or its failure) came.
	ObservedAt time.Time
}

// Observe returns the observation of one call to provider in env that
// ended with err at now.
func Observe(provider generation.ProviderID, env access.Environment, err error, now time.Time) Observation {
	o := Observation{Provider: provider, Environment: env, Reach: ReachOf(err), ObservedAt: now}
	if o.Reach == ReachUnreachable {
		o.Code = fault.CodeOf(err)
	}
	return o
}

// Observer records observations; package store implements it. Writes keep
// the newest: an older observation never replaces a newer one.
type Observer interface {
	ProviderObserve(ctx context.Context, o Observation) error
}

// ObservationReader reads the observations of an environment.
type ObservationReader interface {
	ProviderObservations(ctx context.Context, env access.Environment) ([]Observation, error)
}
