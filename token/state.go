package token

import (
	"strings"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fsm"
)

// State is the registry's deployment state (see the package doc for the
// names on clusters other than mainnet).
type State string

// PreDeployment is the state of a registry with no configured mint.
const PreDeployment State = "PRE_DEPLOYMENT"

// Configured is cluster's configured state (MAINNET_CONFIGURED on mainnet).
func Configured(cluster chain.Cluster) State {
	return State(strings.ToUpper(string(cluster)) + "_CONFIGURED")
}

// Verified is cluster's verified state (MAINNET_VERIFIED on mainnet).
func Verified(cluster chain.Cluster) State {
	return State(strings.ToUpper(string(cluster)) + "_VERIFIED")
}

// IsVerified reports whether s is a verified state.
func (s State) IsVerified() bool { return strings.HasSuffix(string(s), "_VERIFIED") }

// Event moves the deployment state.
type Event string

// The events of the deployment table.
const (
	// EventConfigure: the registry configuration sets the required
	// deployment fields (moved by configuration).
	EventConfigure Event = "configure"
	// EventUnconfigure: the configuration no longer names a mint.
	EventUnconfigure Event = "unconfigure"
	// EventPassed: a run of the current configuration passed every
	// required check (moved by the verification service only).
	EventPassed Event = "verification_passed"
	// EventFailed: a run of the current configuration failed a required
	// check (moved by the verification service only).
	EventFailed Event = "verification_failed"
)

// Transition is one row of the deployment table.
type Transition = fsm.Row[State, Event]

// Transitions is the deployment table for cluster. An ERROR run is no
// event: it moves nothing.
func Transitions(cluster chain.Cluster) []Transition {
	c, v := Configured(cluster), Verified(cluster)
	return []Transition{
		{From: PreDeployment, Event: EventConfigure, To: c},
		{From: c, Event: EventPassed, To: v},
		{From: c, Event: EventFailed, To: c},
		{From: v, Event: EventPassed, To: v},
		{From: v, Event: EventFailed, To: c},
		{From: c, Event: EventUnconfigure, To: PreDeployment},
		{From: v, Event: EventUnconfigure, To: PreDeployment},
	}
}

// Transit applies event to from on cluster's table.
// A pair the table lacks is INVALID_STATE_TRANSITION, and from is returned
// with it.
func Transit(cluster chain.Cluster, from State, event Event) (State, error) {
	to, err := fsm.New("token.Transit", "A token registry", Transitions(cluster)).Transition(from, event)
	if err != nil {
		return from, err
	}
	return to, nil
}

// StateOf derives the current state: configuration moves PRE_DEPLOYMENT to
// configured, then the newest decisive (PASSED or FAILED) run of the
// current configuration, when there is one, applies its event.
func StateOf(cfg Config, decisive *Run) State {
	cfg = cfg.withDefaults()
	if !cfg.Configured() {
		return PreDeployment
	}
	s, err := Transit(cfg.Cluster, PreDeployment, EventConfigure)
	if err != nil || decisive == nil || decisive.ConfigHash != cfg.Hash() || decisive.Cluster != cfg.Cluster {
		return s
	}
	ev := EventFailed
	if decisive.Outcome == Passed {
		ev = EventPassed
	}
	if next, err := Transit(cfg.Cluster, s, ev); err == nil {
		return next
	}
	return s
}
