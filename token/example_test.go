package token_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/urlguard"
)

// A service that embeds only the registry verifies a mint against a
// cluster: here the loopback simulator, reached over HTTP through the
// solana-go adapter, exactly as a real cluster would be.
func Example() {
	ctx := context.Background()
	cluster, err := chaintest.New(chaintest.Config{})
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	deployed, err := tokentest.Deploy(ctx, cluster) // a mint that meets the policy
	if err != nil {
		panic(err)
	}
	cluster.AdvanceSlots(40) // finalized
	// The adapter's own client refuses loopback (urlguard); a guard that
	// allows http and exactly the simulator's address reaches it.
	sim, err := urlguard.LoopbackOf(cluster.URL())
	if err != nil {
		panic(err)
	}
	guard, err := urlguard.New(urlguard.Config{AllowHTTP: true, AllowLoopback: []netip.AddrPort{sim}})
	if err != nil {
		panic(err)
	}
	client, err := solanarpc.New(solanarpc.Config{URL: cluster.URL(), HTTPClient: guard.Client()})
	if err != nil {
		panic(err)
	}
	run := token.Verify(ctx, client, deployed.Config, clockFunc(time.Now))
	fmt.Println(run.Outcome, len(run.Checks), "checks on", run.Cluster)
	state := token.StateOf(deployed.Config, &run)
	fmt.Println(state, state.IsVerified())
	// Output:
	// PASSED 13 checks on localnet
	// LOCALNET_VERIFIED true
}
