package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// BenchmarkLedgerPost measures ledger movements per second with 16
// concurrent writers, each movement one unit of work (reserve: two locked
// accounts, the movement, two postings, the outbox event). "hot" has every
// writer debit one workspace balance; "spread" gives each writer its own
// workspace. PostgreSQL runs when PLATFORM_TEST_POSTGRES_URL is set.
//
//	go test ./store/ -run '^$' -bench LedgerPost -benchtime 2000x
func BenchmarkLedgerPost(b *testing.B) {
	const writers = 16
	for name, open := range storetest.Dialects() {
		for _, mode := range []string{"hot", "spread"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				db := open(b, storetest.NewClock(time.Now()))
				svc := ledger.New()
				ctx := context.Background()
				scope := func(w int) ledger.Scope {
					ws := "ws_hot"
					if mode == "spread" {
						ws = fmt.Sprintf("ws_%02d", w)
					}
					return ledger.Scope{TenantID: "ten_1", WorkspaceID: ws, Environment: access.Test}
				}
				for w := range writers {
					if err := db.InTx(ctx, func(tx *store.Tx) error {
						_, _, err := svc.Grant(ctx, tx, ledger.CreditsInput{Scope: scope(w), Ref: "seed", Amount: money.MaxAtomic / 32})
						return err
					}); err != nil {
						b.Fatal(err)
					}
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				start := time.Now()
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							if err := db.InTx(ctx, func(tx *store.Tx) error {
								_, _, err := svc.Reserve(ctx, tx, ledger.CreditsInput{Scope: scope(w), Ref: fmt.Sprintf("op_%d", i), Amount: 1})
								return err
							}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "movements/s")
			})
		}
	}
}
