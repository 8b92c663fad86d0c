package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/creatormusic/platform/outbox"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// eventStore is a domain port as a domain would declare it: a subset of
// what *store.Tx implements.
type eventStore interface {
	outbox.Writer
	OutboxList(ctx context.Context, p outbox.ListParams) ([]outbox.Event, error)
}

// notATx is a port *store.Tx does not implement.
type notATx interface {
	ReticulateSplines(ctx context.Context) error
}

// TestRunnerBindsTheUnitOfWork: a runner made for a port hands each unit
// of work its transaction as that port, commits what fn wrote when fn
// returns nil and nothing when it fails; the reader sees the commit; a
// port *Tx does not implement is refused when the runner is made.
func TestRunnerBindsTheUnitOfWork(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenSQLite(t, nil)
	run, read := store.Runner[eventStore](db), store.Reader[eventStore](db)
	write := func(agg string, fail error) error {
		return run(ctx, func(st eventStore) error {
			if _, err := st.OutboxInsert(ctx, outbox.Event{Environment: "test", Type: "test.written", AggregateID: agg, AggregateVersion: 1}); err != nil {
				return err
			}
			return fail
		})
	}
	stop := errors.New("stop")
	if err := write("agg_rolled_back", stop); !errors.Is(err, stop) {
		t.Fatalf("failing unit = %v, want its error", err)
	}
	if err := write("agg_kept", nil); err != nil {
		t.Fatal(err)
	}
	evs, err := read().OutboxList(ctx, outbox.ListParams{Environment: "test", Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].AggregateID != "agg_kept" {
		t.Fatalf("events after one failed and one committed unit = %+v, %v", evs, err)
	}

	for name, build := range map[string]func(){
		"Runner": func() { store.Runner[notATx](db) },
		"Reader": func() { store.Reader[notATx](db) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "notATx") {
					t.Errorf("%s over a port *Tx lacks: recovered %v, want a panic naming the port", name, r)
				}
			}()
			build()
		}()
	}
}
