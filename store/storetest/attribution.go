package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseAttribution covers attribution.Store: a record round-trips
// with both touches; it is unique per environment and user (a second
// insert is CONFLICT and leaves the unit of work usable; the other
// environment's is another row); an update compare-and-sets the version,
// writes the last touch and the counter and never the first touch; the
// schema refuses what the domain bounds (an empty or over-long source, a
// count past the bound).
func exerciseAttribution(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	seedWorkspaces(t, db)
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		return tx.UserInsert(ctx, "usr_1", "ten_1", "one@example.com", "One")
	}); err != nil {
		t.Fatal(err)
	}
	read := db.Read()
	if _, err := read.AttributionGet(ctx, access.Live, "usr_1"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("get before any touch: %v, want NOT_FOUND", err)
	}
	clock.Set(time.Date(2026, 3, 2, 10, 0, 0, 123456000, time.UTC))
	first := attribution.Touch{Source: "google", Medium: "cpc", Campaign: "spring sale", Term: "piano", Content: "hero",
		Referrer: "https://www.google.com/search", LandingPath: "/pricing", At: clock.Now()}
	a := attribution.Attribution{ID: "atr_1", Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "", Environment: access.Live},
		UserID: "usr_1", First: first, Last: first, TouchCount: 1, Version: 1, CreatedAt: first.At, UpdatedAt: first.At}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AttributionInsert(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	got, err := read.AttributionGet(ctx, access.Live, "usr_1")
	if err != nil || got != a {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, a)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		dup := a
		dup.ID = "atr_dup"
		if err := tx.AttributionInsert(ctx, dup); !fault.Is(err, fault.Conflict) {
			t.Errorf("a second record of the user: %v, want CONFLICT", err)
		}
		// The unit of work goes on after the conflict: the other
		// environment's record is another row.
		other := a
		other.ID, other.Scope.Environment = "atr_2", access.Test
		return tx.AttributionInsert(ctx, other)
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	next := a.Next(attribution.Touch{Source: "newsletter", At: clock.Now()})
	next.First.Source = "rewritten" // never written by an update
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AttributionUpdate(ctx, next) }); err != nil {
		t.Fatal(err)
	}
	got, err = read.AttributionGet(ctx, access.Live, "usr_1")
	if err != nil || got.First != first || got.Last != next.Last || got.TouchCount != 2 || got.Version != 2 || !got.UpdatedAt.Equal(clock.Now()) ||
		!got.CreatedAt.Equal(first.At) {
		t.Fatalf("after an update = %+v, %v", got, err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AttributionUpdate(ctx, next) }); !fault.Is(err, fault.Conflict) {
		t.Errorf("an update from a stale version: %v, want CONFLICT", err)
	}
	if test, err := read.AttributionGet(ctx, access.Test, "usr_1"); err != nil || test.ID != "atr_2" || test.TouchCount != 1 {
		t.Errorf("the test-mode record = %+v, %v", test, err)
	}
	i := 0
	for name, bad := range map[string]func(a *attribution.Attribution){
		"empty source": func(a *attribution.Attribution) { a.First.Source = "" },
		"long source":  func(a *attribution.Attribution) { a.Last.Source = strings.Repeat("s", attribution.MaxValue+1) },
		"long referrer": func(a *attribution.Attribution) {
			a.First.Referrer = "https://x.example/" + strings.Repeat("r", attribution.MaxStored)
		},
		"count past max":  func(a *attribution.Attribution) { a.TouchCount = attribution.MaxTouchCount + 1 },
		"count zero":      func(a *attribution.Attribution) { a.TouchCount = 0 },
		"no such user":    func(a *attribution.Attribution) { a.UserID = "usr_missing" },
		"bad environment": func(a *attribution.Attribution) { a.Scope.Environment = "staging" },
	} {
		i++
		r := a
		r.ID, r.UserID = fmt.Sprintf("atr_b%d", i), fmt.Sprintf("usr_b%d", i)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.UserInsert(ctx, r.UserID, "ten_1", r.UserID+"@example.com", "B")
		}); err != nil {
			t.Fatal(err)
		}
		bad(&r)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.AttributionInsert(ctx, r) }); err == nil {
			t.Errorf("%s: stored", name)
		}
	}
}
