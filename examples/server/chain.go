package main

import (
	"context"
	"fmt"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/token/sale"
	"github.com/creatormusic/platform/token/tokentest"
)

// chainSim is the loopback Solana cluster the host started (-chain-sim).
type chainSim struct {
	cluster *chaintest.Cluster
	stop    func()
	mint    string
}

// close stops the cluster's clock and the cluster.
func (c *chainSim) close() {
	if c == nil {
		return
	}
	c.stop()
	c.cluster.Close()
}

// startChainSim starts the loopback cluster, deploys a mint that meets the
// token policy and an open token sale with its accounts (contract, funded
// inventory, a pool), advances a slot every slot interval, and returns
// the test environment's chain configuration: the cluster reached over
// HTTP through the solana-go adapter, as a real cluster would be.
func startChainSim(ctx context.Context, slot time.Duration) (*chainSim, platform.ChainEnvironment, error) {
	if slot <= 0 {
		return nil, platform.ChainEnvironment{}, fmt.Errorf("-chain-sim-slot must be positive")
	}
	// Slot 0 is now, so block times and the cluster's lag read true.
	now := time.Now().UTC().Truncate(time.Second)
	c, err := chaintest.New(chaintest.Config{Start: now})
	if err != nil {
		return nil, platform.ChainEnvironment{}, err
	}
	d, err := tokentest.Deploy(ctx, c)
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, err
	}
	sd, err := tokentest.DeploySale(c, d, "presale-demo", sale.Window{Opens: now.Add(-time.Hour), Closes: now.Add(30 * 24 * time.Hour)})
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, err
	}
	c.AdvanceSlots(40) // the deployment is finalized before the first run
	client, err := solanarpc.New(solanarpc.Config{URL: c.URL(), Timeout: 5 * time.Second})
	if err != nil {
		c.Close()
		return nil, platform.ChainEnvironment{}, err
	}
	env := platform.ChainEnvironment{Client: client, Token: d.Config, Sale: sale.EnvConfig{
		Sales: []sale.Sale{sd.Sale}, Current: sd.Sale.ID,
		Jurisdictions: sale.JurisdictionPolicy{Allowed: []string{"DE", "FR", "GB", "NL", "ES", "IT"}, Blocked: []string{"KP", "IR"}},
		Disclosure:    sale.Disclosure{Version: "demo-1"}}}
	return &chainSim{cluster: c, stop: c.Run(slot), mint: d.Mint.String()}, env, nil
}
