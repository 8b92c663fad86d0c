package intent

import (
	"testing"

	"github.com/creatormusic/platform/fsm"
)

// TestTransitionTablesAreEnforced: the business and network tables served
// as data are functions of (state, event), and Transit and TransitNetwork
// answer exactly what they say, refusing every pair they lack.
func TestTransitionTablesAreEnforced(t *testing.T) {
	business := fsm.New("intent", "a record", Transitions())
	network := fsm.New("intent network", "a record", NetworkTransitions())
	for _, err := range []error{business.Check(), business.Enforced(Transit), network.Check(), network.Enforced(TransitNetwork)} {
		if err != nil {
			t.Error(err)
		}
	}
}
