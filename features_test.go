package platform

import (
	"testing"

	"github.com/creatormusic/platform/transport/api"
)

// TestCheckFeaturesRefusesUnlistedFlags: a route declaring a flag that
// FeatureFlags does not list (and so is never seeded on) fails start-up.
func TestCheckFeaturesRefusesUnlistedFlags(t *testing.T) {
	listed := api.Route{OperationID: "listed", Policy: api.Policy{Feature: FeatureFlags()[0].Name}}
	if err := checkFeatures([]api.Route{listed, {OperationID: "none"}}); err != nil {
		t.Fatal(err)
	}
	unlisted := api.Route{OperationID: "unlisted", Policy: api.Policy{Feature: "swap.execute"}}
	if err := checkFeatures([]api.Route{listed, unlisted}); err == nil {
		t.Fatal("an unlisted flag passed")
	}
}
