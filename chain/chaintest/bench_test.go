package chaintest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/creatormusic/platform/chain/chaintest"
)

// BenchmarkGetAccountInfo16 reads a Token-2022 mint over HTTP with 16
// concurrent solana-go clients (each with its own connection pool); ns/op is
// wall time per request, so 1e9 / ns/op is the cluster's requests/second.
func BenchmarkGetAccountInfo16(b *testing.B) {
	c, err := chaintest.New(chaintest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	_, auth := chaintest.NewKeypair()
	_, mint := chaintest.NewKeypair()
	if err := c.CreateMint(mint, feeMintSpec(mint, auth, 1_000_000)); err != nil {
		b.Fatal(err)
	}
	const clients = 16
	rpcs := make([]*rpc.Client, clients)
	for i := range rpcs {
		rpcs[i] = rpc.New(c.URL())
		defer rpcs[i].Close()
	}
	ctx := context.Background()
	opts := &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentConfirmed}
	before := c.Calls("getAccountInfo")
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, cl := range rpcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := cl.GetAccountInfoWithOpts(ctx, solana.PublicKey(mint), opts); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if got := c.Calls("getAccountInfo") - before; got != b.N {
		b.Fatalf("cluster served %d calls, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
