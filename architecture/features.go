package architecture

// The reasons a feature's availability gives that this package decides;
// the owning domains give the others (cluster_not_configured,
// treasury_not_configured, not_checked, deployment_not_live, ...).
const (
	// ReasonEnabled: the feature serves the environment.
	ReasonEnabled = "enabled"
	// ReasonDisabledByFlag: the feature's flag is off for the workspace,
	// whatever its deployment.
	ReasonDisabledByFlag = "disabled_by_flag"
	// ReasonNotConfigured: the host configured nothing for the feature in
	// the environment.
	ReasonNotConfigured = "not_configured"
	// ReasonNotAvailable: this host does not build the feature.
	ReasonNotAvailable = "not_available"
)

// Availability is what a feature's owning domain reports of it in one
// environment: configured is not verified, and verified is not enabled.
type Availability struct {
	// Enabled is true when the feature serves the environment.
	Enabled bool
	// Configured is true when the host configured it for the environment.
	Configured bool
	// Verified is true when a check proved its prerequisites (on chain,
	// at a facilitator); a feature with nothing to prove is never verified.
	Verified bool
	// Reason says why it is not enabled, or enabled.
	Reason string
}

// Gate applies a workspace's feature flag to a domain's availability: a
// flag that is off disables the feature (disabled_by_flag), and no
// availability is ever reported enabled without the domain saying so. An
// enabled feature's reason is enabled; a disabled one without the domain's
// reason is not_configured, never a guess at something better.
func Gate(flagged, flagOn bool, a Availability) Availability {
	if flagged && !flagOn {
		a.Enabled, a.Reason = false, ReasonDisabledByFlag
		return a
	}
	switch {
	case a.Enabled:
		a.Reason = ReasonEnabled
	case a.Reason == "" || a.Reason == ReasonEnabled:
		a.Reason = ReasonNotConfigured
	}
	return a
}
