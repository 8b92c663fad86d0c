package platform

import (
	"testing"

	"github.com/creatormusic/platform/transport"
)

// TestCheckFeaturesRefusesUnlistedFlags: a route declaring a flag that
// FeatureFlags does not list (and so is never seeded on) fails start-up.
func TestCheckFeaturesRefusesUnlistedFlags(t *testing.T) {
	listed := transport.Route{OperationID: "listed", Policy: transport.Policy{Feature: FeatureFlags()[0].Name}}
	if err := checkFeatures([]transport.Route{listed, {OperationID: "none"}}); err != nil {
		t.Fatal(err)
	}
	unlisted := transport.Route{OperationID: "unlisted", Policy: transport.Policy{Feature: "swap.execute"}}
	if err := checkFeatures([]transport.Route{listed, unlisted}); err == nil {
		t.Fatal("an unlisted flag passed")
	}
}
