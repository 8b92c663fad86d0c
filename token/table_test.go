package token_test

import (
	"testing"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fsm"
	"github.com/creatormusic/platform/token"
)

// TestTransitionTableIsEnforced: on every cluster the deployment table is a
// function of (state, event) and Transit answers exactly what it says.
func TestTransitionTableIsEnforced(t *testing.T) {
	for _, c := range []chain.Cluster{chain.Devnet, chain.Mainnet} {
		tb := fsm.New("token", "a registry", token.Transitions(c))
		if err := tb.Check(); err != nil {
			t.Fatal(err)
		}
		if err := tb.Enforced(func(s token.State, e token.Event) (token.State, error) { return token.Transit(c, s, e) }); err != nil {
			t.Fatal(err)
		}
	}
}
