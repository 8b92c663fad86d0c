package token_test

import (
	"context"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/solanarpc"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/tokentest"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// BenchmarkVerify measures one verification run (genesis hash, epoch, the
// mint account and its block time over loopback HTTP, then the thirteen
// checks) against the simulator.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	cluster, err := chaintest.New(chaintest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	d, err := tokentest.Deploy(ctx, cluster)
	if err != nil {
		b.Fatal(err)
	}
	cluster.AdvanceSlots(40)
	client, err := solanarpc.New(solanarpc.Config{URL: cluster.URL(), HTTPClient: urlguardtest.Client(b, cluster.URL())})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := token.Verify(ctx, client, d.Config, clockFunc(time.Now)); r.Outcome != token.Passed {
			b.Fatalf("outcome %s", r.Outcome)
		}
	}
}
