package store_test

import (
	"testing"

	"github.com/creatormusic/platform/store/storetest"
)

// TestProvenanceBackfill checks that the marketplace migration gives every
// asset stored before it a provenance record built from its rows.
func TestProvenanceBackfill(t *testing.T) { backfill(t, storetest.ProvenanceBackfill) }
