package token

import (
	"fmt"
	"strings"

	"github.com/creatormusic/platform/chain"
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
type Transition struct {
	From  State `json:"from"`
	Event Event `json:"event"`
	To    State `json:"to"`
}

// Transitions is the deployment table for cluster. An ERROR run is no
// event: it moves nothing.
func Transitions(cluster chain.Cluster) []Transition {
	c, v := Configured(cluster), Verified(cluster)
	return []Transition{
		{PreDeployment, EventConfigure, c},
		{c, EventPassed, v},
		{c, EventFailed, c},
		{v, EventPassed, v},
		{v, EventFailed, c},
		{c, EventUnconfigure, PreDeployment},
		{v, EventUnconfigure, PreDeployment},
	}
}

// Transit applies event to from on cluster's table.
func Transit(cluster chain.Cluster, from State, event Event) (State, error) {
	for _, t := range Transitions(cluster) {
		if t.From == from && t.Event == event {
			return t.To, nil
		}
	}
	return from, fmt.Errorf("token: no transition from %s on %s", from, event)
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
