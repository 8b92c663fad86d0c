package platform

import (
	"context"
	"fmt"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	genop "github.com/creatormusic/platform/generation/operation"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
)

// FeatureFlag is one feature flag a route of the platform declares
// (transport.Policy.Feature): its name, its platform default and what it
// turns on.
type FeatureFlag struct {
	Name    string
	Default bool
	Doc     string
}

// FeatureFlags lists the platform's feature flags. New seeds each default
// once (an operator's later choice survives restarts); SetFeatureFlag
// changes one for a workspace or the platform. A flag with no row is off.
func FeatureFlags() []FeatureFlag {
	return []FeatureFlag{
		{Name: genop.FeatureGenerate, Default: true, Doc: "starting music generations"},
		{Name: sound.FeatureEngine, Default: true, Doc: "starting sound engine operations"},
	}
}

// seedFeatureFlags writes the platform default of every flag that has none.
func (p *Platform) seedFeatureFlags(ctx context.Context) error {
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, f := range FeatureFlags() {
			if err := tx.FlagDefault(ctx, f.Name, f.Default); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("platform: seed feature flags: %w", err)
	}
	return nil
}

// SetFeatureFlag turns a feature flag on or off for one workspace, or for
// the platform (its default) when workspaceID is "", for the host's
// operator; no route can. It bumps the affected authority version, so it
// applies from the next request on every host, and is recorded in the
// live audit log with an empty actor (the operator) under tenantID (empty
// for a platform default). An unknown flag is an error.
func (p *Platform) SetFeatureFlag(ctx context.Context, tenantID, workspaceID, flag string, enabled bool) error {
	if !slices.ContainsFunc(FeatureFlags(), func(f FeatureFlag) bool { return f.Name == flag }) {
		return fmt.Errorf("platform: unknown feature flag %q", flag)
	}
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.FlagSet(ctx, flag, workspaceID, enabled); err != nil {
			return err
		}
		// A flag applies to both environments; the operator's change is
		// platform production work, recorded in live as the operator's
		// other acts are.
		return account.Audit(ctx, tx, nil, account.AuditEntry{TenantID: tenantID, WorkspaceID: workspaceID, Environment: access.Live,
			Action: account.ActionFeatureFlagSet, TargetType: account.TargetFeatureFlag, TargetID: flag, After: struct {
				Enabled bool `json:"enabled"`
			}{enabled}})
	})
	if err != nil {
		return fmt.Errorf("platform: set feature flag %s: %w", flag, err)
	}
	return nil
}

// checkFeatures refuses a route table whose routes declare a feature flag
// FeatureFlags does not list: such a flag would never be seeded, and a
// flag with no row is off, so the route would answer FEATURE_DISABLED to
// everyone.
func checkFeatures(routes []api.Route) error {
	for _, rt := range routes {
		f := rt.Policy.Feature
		if f != "" && !slices.ContainsFunc(FeatureFlags(), func(x FeatureFlag) bool { return x.Name == f }) {
			return fmt.Errorf("platform: route %s declares feature flag %q, which FeatureFlags does not list", rt.OperationID, f)
		}
	}
	return nil
}
