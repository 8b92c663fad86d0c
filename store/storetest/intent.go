package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/store"
)

// exerciseIntent covers the chain/intent Store: an intent and a payment
// request round-trip whole; NOT_FOUND for missing rows; updates are a
// compare-and-set on the version (of concurrent updaters from one version
// exactly one wins; lockers serialize); a signature binds to one intent
// only, even under concurrent binders; one payment request per intent;
// the sweep lists pending intents, least recently updated first; one
// reconciliation record per intent, even under concurrent writers; the
// settlement reader's ledger read finds a reference in every workspace and
// environment of the tenant, and no other tenant's.
func exerciseIntent(t *testing.T, open Opener) {
	ctx := context.Background()
	setup := func(t *testing.T) (*store.DB, *Clock) {
		t.Helper()
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.UserInsert(ctx, "usr_1", "ten_1", "usr_1@example.com", "User One")
		}); err != nil {
			t.Fatalf("seed user: %v", err)
		}
		return db, clock
	}
	insert := func(t *testing.T, db *store.DB, it intent.Intent) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertIntent(ctx, it) }); err != nil {
			t.Fatalf("insert %s: %v", it.ID, err)
		}
	}
	get := func(t *testing.T, db *store.DB, id string) intent.Intent {
		t.Helper()
		it, err := db.Read().Intent(ctx, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		return it
	}
	update := func(db *store.DB, it intent.Intent, prev int64) error {
		return db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateIntent(ctx, it, prev) })
	}

	t.Run("RoundTrip", func(t *testing.T) {
		db, _ := setup(t)
		full := sampleIntent("txi_full", Epoch)
		// Every field is set, so a field the store drops shows in the diff.
		v := reflect.ValueOf(full)
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("sample intent leaves %s zero", v.Type().Field(i).Name)
			}
		}
		insert(t, db, full)
		if diff := cmp.Diff(full, get(t, db, full.ID)); diff != "" {
			t.Fatalf("round trip (-stored +read):\n%s", diff)
		}
		// A fresh intent: nil slices and zero times stay nil and zero.
		bare := freshIntent("txi_bare", Epoch)
		insert(t, db, bare)
		got := get(t, db, bare.ID)
		if diff := cmp.Diff(bare, got); diff != "" {
			t.Fatalf("round trip of a fresh intent (-stored +read):\n%s", diff)
		}
		if got.Evidence != nil || got.SignedTransaction != nil || !got.SettledAt.IsZero() || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("fresh intent read back with %+v", got)
		}
		// An empty, non-nil evidence list stays empty and non-nil.
		empty := freshIntent("txi_empty", Epoch)
		empty.Evidence = []intent.Mismatch{}
		empty.SignedTransaction = []byte{}
		insert(t, db, empty)
		if diff := cmp.Diff(empty, get(t, db, empty.ID)); diff != "" {
			t.Fatalf("round trip of empty slices (-stored +read):\n%s", diff)
		}
		var locked intent.Intent
		if err := db.InTx(ctx, func(tx *store.Tx) (err error) { locked, err = tx.LockIntent(ctx, full.ID); return err }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full, locked); diff != "" {
			t.Fatalf("locked read (-stored +read):\n%s", diff)
		}

		if _, err := db.Read().Intent(ctx, "txi_missing"); !fault.Is(err, fault.NotFound) {
			t.Errorf("get missing = %v, want NOT_FOUND", err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.LockIntent(ctx, "txi_missing"); return err })
		if !fault.Is(err, fault.NotFound) {
			t.Errorf("lock missing = %v, want NOT_FOUND", err)
		}
		// The id and the business reference are unique.
		again := freshIntent(full.ID, Epoch)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertIntent(ctx, again) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("duplicate id = %v, want CONFLICT", err)
		}
		sameRef := freshIntent("txi_other", Epoch)
		sameRef.BusinessReference = full.BusinessReference
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertIntent(ctx, sameRef) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("duplicate business reference = %v, want CONFLICT", err)
		}
		if diff := cmp.Diff(full, get(t, db, full.ID)); diff != "" {
			t.Fatalf("a refused insert changed the intent:\n%s", diff)
		}
	})

	t.Run("Legs", func(t *testing.T) {
		db, _ := setup(t)
		// legRows reads the copied rows of an intent, in leg order.
		legRows := func(t *testing.T, id string) []string {
			t.Helper()
			var rows []struct {
				Index       int    `bun:"leg_index"`
				Role        string `bun:"role"`
				Recipient   string `bun:"recipient"`
				Destination string `bun:"destination"`
				Gross       string `bun:"gross_atomic"`
				Fee         string `bun:"fee_atomic"`
				Net         string `bun:"net_atomic"`
			}
			if err := db.Read().IDB().NewRaw(`SELECT leg_index, role, recipient, destination, CAST(gross_atomic AS TEXT) AS gross_atomic,
				CAST(fee_atomic AS TEXT) AS fee_atomic, CAST(net_atomic AS TEXT) AS net_atomic FROM transaction_intent_legs
				WHERE intent_id = ? ORDER BY leg_index`, id).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			var out []string
			for _, r := range rows {
				out = append(out, fmt.Sprintf("%d %s %s %s %s/%s/%s", r.Index, r.Role, r.Recipient, r.Destination, r.Gross, r.Fee, r.Net))
			}
			return out
		}
		split := freshIntent("txi_split", Epoch)
		split.Purpose, split.BusinessReference = "split_sale", "split_sale:txi_split"
		split.Legs = sampleLegs(split)
		insert(t, db, split)
		// Every read path returns the legs.
		if diff := cmp.Diff(split, get(t, db, split.ID)); diff != "" {
			t.Fatalf("round trip (-stored +read):\n%s", diff)
		}
		var locked intent.Intent
		if err := db.InTx(ctx, func(tx *store.Tx) (err error) { locked, err = tx.LockIntent(ctx, split.ID); return err }); err != nil {
			t.Fatal(err)
		}
		listed, err := db.Read().IntentsToReconcile(ctx, 10)
		if err != nil || len(listed) != 1 {
			t.Fatalf("listed %d, %v", len(listed), err)
		}
		for _, got := range []intent.Intent{locked, listed[0]} {
			if diff := cmp.Diff(split, got); diff != "" {
				t.Fatalf("read (-stored +read):\n%s", diff)
			}
		}
		want := []string{
			"0 seller " + split.Recipient.String() + " " + split.Destination.String() + " 18446744073709551615/9223372036854775808/9223372036854775807",
			"1 platform_fee " + testAddress(6).String() + " " + testAddress(7).String() + " 10201/201/10000",
		}
		if got := legRows(t, split.ID); !cmp.Equal(got, want) {
			t.Fatalf("leg rows = %v, want %v", got, want)
		}
		// An update rewrites the body and leaves the frozen rows alone.
		next := split
		next.Version, next.State = 2, intent.StateSubmitted
		if err := update(db, next, 1); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(next, get(t, db, split.ID)); diff != "" || !cmp.Equal(legRows(t, split.ID), want) {
			t.Fatalf("after update: %s %v", diff, legRows(t, split.ID))
		}
		// One payment to the treasury has no legs: no rows, no "legs" in
		// its body, which is written as before legs existed.
		single := freshIntent("txi_single", Epoch)
		insert(t, db, single)
		var body string
		if err := db.Read().IDB().NewRaw(`SELECT body FROM transaction_intents WHERE id = ?`, single.ID).Scan(ctx, &body); err != nil {
			t.Fatal(err)
		}
		if got := get(t, db, single.ID); got.Legs != nil || strings.Contains(body, `"legs"`) || len(legRows(t, single.ID)) != 0 {
			t.Fatalf("single payment: legs %v, body %s, rows %v", got.Legs, body, legRows(t, single.ID))
		}
		// Roles and recipients are unique within an intent: nothing is stored.
		for _, dup := range []func(ls []intent.Leg){
			func(ls []intent.Leg) { ls[1].Role = ls[0].Role },
			func(ls []intent.Leg) { ls[1].Recipient = ls[0].Recipient },
		} {
			bad := freshIntent("txi_dup", Epoch)
			bad.BusinessReference = "split_sale:txi_dup"
			bad.Legs = sampleLegs(bad)
			dup(bad.Legs)
			err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertIntent(ctx, bad) })
			if !fault.Is(err, fault.Conflict) {
				t.Fatalf("duplicate leg = %v, want CONFLICT", err)
			}
			if _, err := db.Read().Intent(ctx, bad.ID); !fault.Is(err, fault.NotFound) {
				t.Fatalf("a refused intent was stored: %v", err)
			}
		}
	})

	t.Run("UpdateCompareAndSet", func(t *testing.T) {
		db, clock := setup(t)
		it := freshIntent("txi_1", Epoch)
		insert(t, db, it)

		next := sampleIntent("txi_1", Epoch)
		next.Version = 2
		next.UpdatedAt = clock.Now().Add(time.Minute + 7*time.Nanosecond)
		if err := update(db, next, 1); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(next, get(t, db, "txi_1")); diff != "" {
			t.Fatalf("updated intent (-written +read):\n%s", diff)
		}
		stale := next
		stale.State = intent.StateFailed
		if err := update(db, stale, 1); !fault.Is(err, fault.Conflict) {
			t.Errorf("update from a stale version = %v, want CONFLICT", err)
		}
		skip := next
		skip.Version = 4
		if err := update(db, skip, 2); !fault.Is(err, fault.Conflict) {
			t.Errorf("update that skips a version = %v, want CONFLICT", err)
		}
		missing := freshIntent("txi_missing", Epoch)
		missing.Version = 2
		if err := update(db, missing, 1); !fault.Is(err, fault.Conflict) {
			t.Errorf("update of a missing intent = %v, want CONFLICT", err)
		}
		if got := get(t, db, "txi_1"); got.Version != 2 || got.State != next.State {
			t.Fatalf("refused updates changed the intent: version %d, state %s", got.Version, got.State)
		}

		// Concurrent updaters that all read version 2: exactly one wins.
		const n = 8
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			winner    = -1
			conflicts int
		)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := next
				mine.Version = 3
				mine.SendAttempts = 100 + i
				<-start
				err := update(db, mine, 2)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					if winner >= 0 {
						t.Errorf("updaters %d and %d both won", winner, i)
					}
					winner = i
				case fault.Is(err, fault.Conflict):
					conflicts++
				default:
					t.Errorf("updater %d: %v", i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if winner < 0 || conflicts != n-1 {
			t.Fatalf("winner %d, %d conflicts; want one winner and %d conflicts", winner, conflicts, n-1)
		}
		if got := get(t, db, "txi_1"); got.Version != 3 || got.SendAttempts != 100+winner {
			t.Fatalf("after the race: version %d, send attempts %d; want 3 and %d", got.Version, got.SendAttempts, 100+winner)
		}

		// Lockers serialize: each reads the version its predecessor wrote.
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					cur, err := tx.LockIntent(ctx, "txi_1")
					if err != nil {
						return err
					}
					nx := cur
					nx.Version++
					nx.SendAttempts++
					return tx.UpdateIntent(ctx, nx, cur.Version)
				})
				if err != nil {
					t.Errorf("locked update: %v", err)
				}
			}()
		}
		wg.Wait()
		if got := get(t, db, "txi_1"); got.Version != 3+n || got.SendAttempts != 100+winner+n {
			t.Fatalf("after locked updates: version %d, send attempts %d; want %d and %d", got.Version, got.SendAttempts, 3+n, 100+winner+n)
		}
	})

	t.Run("BindSignature", func(t *testing.T) {
		db, _ := setup(t)
		const n = 6
		for i := range n {
			insert(t, db, freshIntent(fmt.Sprintf("txi_%d", i), Epoch))
		}
		bind := func(sig, id string) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return tx.BindSignature(ctx, sig, id) })
		}
		if err := bind("sig_a", "txi_0"); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.BindSignature(ctx, "sig_a", "txi_0"); err != nil {
				return err
			}
			return tx.BindSignature(ctx, "sig_a", "txi_0")
		}); err != nil {
			t.Fatalf("binding the same pair again = %v, want nil", err)
		}
		if err := bind("sig_a", "txi_1"); !fault.Is(err, fault.Conflict) {
			t.Errorf("binding a held signature to another intent = %v, want CONFLICT", err)
		}
		// An intent may hold more than one signature.
		if err := bind("sig_b", "txi_0"); err != nil {
			t.Fatal(err)
		}
		for sig, want := range map[string]string{"sig_a": "txi_0", "sig_b": "txi_0"} {
			if got, err := db.Read().SignatureIntent(ctx, sig); err != nil || got != want {
				t.Errorf("signature %s -> %q, %v; want %s", sig, got, err, want)
			}
		}
		if _, err := db.Read().SignatureIntent(ctx, "sig_missing"); !fault.Is(err, fault.NotFound) {
			t.Errorf("unknown signature = %v, want NOT_FOUND", err)
		}

		// Concurrent binders of one signature to n intents: one wins.
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			winner    = ""
			conflicts int
		)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("txi_%d", i)
				<-start
				err := bind("sig_race", id)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					if winner != "" {
						t.Errorf("%s and %s both bound the signature", winner, id)
					}
					winner = id
				case fault.Is(err, fault.Conflict):
					conflicts++
				default:
					t.Errorf("binder %s: %v", id, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if winner == "" || conflicts != n-1 {
			t.Fatalf("winner %q, %d conflicts; want one winner and %d conflicts", winner, conflicts, n-1)
		}
		if got, err := db.Read().SignatureIntent(ctx, "sig_race"); err != nil || got != winner {
			t.Fatalf("raced signature -> %q, %v; want %s", got, err, winner)
		}
		// A rolled-back binding leaves the signature free.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.BindSignature(ctx, "sig_rolled", "txi_1"); err != nil {
				return err
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("rolled-back bind = %v", err)
		}
		if err := bind("sig_rolled", "txi_2"); err != nil {
			t.Fatalf("binding a signature freed by a rollback = %v", err)
		}
	})

	t.Run("PaymentRequest", func(t *testing.T) {
		db, _ := setup(t)
		it := freshIntent("txi_1", Epoch)
		insert(t, db, it)
		insert(t, db, freshIntent("txi_2", Epoch))
		pr := samplePaymentRequest("cpr_1", it)
		v := reflect.ValueOf(pr)
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("sample payment request leaves %s zero", v.Type().Field(i).Name)
			}
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPaymentRequest(ctx, pr) }); err != nil {
			t.Fatal(err)
		}
		byID, err := db.Read().PaymentRequest(ctx, "cpr_1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pr, byID); diff != "" {
			t.Fatalf("by id (-stored +read):\n%s", diff)
		}
		byIntent, err := db.Read().PaymentRequestByIntent(ctx, "txi_1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pr, byIntent); diff != "" {
			t.Fatalf("by intent (-stored +read):\n%s", diff)
		}
		second := samplePaymentRequest("cpr_2", it)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPaymentRequest(ctx, second) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("second request for one intent = %v, want CONFLICT", err)
		}
		sameID := samplePaymentRequest("cpr_1", freshIntent("txi_2", Epoch))
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPaymentRequest(ctx, sameID) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("duplicate request id = %v, want CONFLICT", err)
		}
		if _, err := db.Read().PaymentRequest(ctx, "cpr_2"); !fault.Is(err, fault.NotFound) {
			t.Errorf("refused request readable: %v", err)
		}
		if _, err := db.Read().PaymentRequestByIntent(ctx, "txi_2"); !fault.Is(err, fault.NotFound) {
			t.Errorf("request of an intent without one = %v, want NOT_FOUND", err)
		}
		// A request without requirements reads back with none.
		bare := samplePaymentRequest("cpr_3", freshIntent("txi_2", Epoch))
		bare.Requirements = nil
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPaymentRequest(ctx, bare) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().PaymentRequestByIntent(ctx, "txi_2"); err != nil || !cmp.Equal(bare, got) {
			t.Fatalf("bare request = %+v, %v; want %+v", got, err, bare)
		}
	})

	t.Run("IntentsToReconcile", func(t *testing.T) {
		db, _ := setup(t)
		// Inserted out of update order; terminal intents never listed.
		cases := []struct {
			id    string
			state intent.State
			age   time.Duration // before Epoch
		}{
			{"txi_a", intent.StateSubmitted, 3 * time.Minute},
			{"txi_b", intent.StateSettled, 9 * time.Minute},
			{"txi_c", intent.StateCreated, 5 * time.Minute},
			{"txi_d", intent.StateExpired, 8 * time.Minute},
			{"txi_e", intent.StateVerified, 1 * time.Minute},
			{"txi_f", intent.StateFailed, 7 * time.Minute},
			{"txi_g", intent.StateConfirming, 4 * time.Minute},
			{"txi_h", intent.StateRequiresReview, 6 * time.Minute},
			{"txi_i", intent.StateReconciling, 11 * time.Minute},
			{"txi_j", intent.StateReconciled, 12 * time.Minute},
		}
		stored := map[string]intent.Intent{}
		for _, c := range cases {
			it := freshIntent(c.id, Epoch.Add(-10*time.Minute))
			it.State = c.state
			it.UpdatedAt = Epoch.Add(-c.age)
			insert(t, db, it)
			stored[c.id] = it
		}
		list := func(limit int) []string {
			t.Helper()
			its, err := db.Read().IntentsToReconcile(ctx, limit)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(its))
			for i, it := range its {
				ids[i] = it.ID
				if diff := cmp.Diff(stored[it.ID], it); diff != "" {
					t.Errorf("listed %s (-stored +read):\n%s", it.ID, diff)
				}
			}
			return ids
		}
		if got, want := list(10), []string{"txi_c", "txi_g", "txi_a", "txi_e"}; !cmp.Equal(got, want) {
			t.Fatalf("to reconcile = %v, want %v", got, want)
		}
		if got, want := list(2), []string{"txi_c", "txi_g"}; !cmp.Equal(got, want) {
			t.Fatalf("limit 2 = %v, want %v", got, want)
		}
		if got := list(0); len(got) != 0 {
			t.Fatalf("limit 0 = %v", got)
		}
		// An update moves an intent to the back; a terminal one drops out.
		c := stored["txi_c"]
		c.Version, c.UpdatedAt, c.State = 2, Epoch, intent.StateSubmitted
		g := stored["txi_g"]
		g.Version, g.UpdatedAt, g.State = 2, Epoch, intent.StateSettled
		for _, it := range []intent.Intent{c, g} {
			if err := update(db, it, 1); err != nil {
				t.Fatal(err)
			}
			stored[it.ID] = it
		}
		if got, want := list(10), []string{"txi_a", "txi_e", "txi_c"}; !cmp.Equal(got, want) {
			t.Fatalf("after updates = %v, want %v", got, want)
		}
	})

	t.Run("Reconciliation", func(t *testing.T) {
		db, _ := setup(t)
		it := freshIntent("txi_1", Epoch)
		insert(t, db, it)
		insert(t, db, freshIntent("txi_2", Epoch))
		rec := sampleReconciliation("rec_1", it)
		v := reflect.ValueOf(rec)
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("sample reconciliation leaves %s zero", v.Type().Field(i).Name)
			}
		}
		if _, err := db.Read().Reconciliation(ctx, it.ID); !fault.Is(err, fault.NotFound) {
			t.Fatalf("before = %v, want NOT_FOUND", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertReconciliation(ctx, rec) }); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().Reconciliation(ctx, it.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rec, got); diff != "" {
			t.Fatalf("round trip (-stored +read):\n%s", diff)
		}
		// One record per intent; ids are unique.
		second := sampleReconciliation("rec_2", it)
		second.Outcome = intent.OutcomeMatch
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertReconciliation(ctx, second) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("second record = %v, want CONFLICT", err)
		}
		sameID := sampleReconciliation("rec_1", freshIntent("txi_2", Epoch))
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertReconciliation(ctx, sameID) }); !fault.Is(err, fault.Conflict) {
			t.Fatalf("duplicate id = %v, want CONFLICT", err)
		}
		if got, _ := db.Read().Reconciliation(ctx, it.ID); got.ID != "rec_1" || got.Outcome != rec.Outcome {
			t.Fatalf("a refused insert changed the record: %+v", got)
		}
		// Concurrent writers for one intent: exactly one record.
		racer := freshIntent("txi_race", Epoch)
		insert(t, db, racer)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := sampleReconciliation(fmt.Sprintf("rec_race_%d", i), racer)
				errs[i] = db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertReconciliation(ctx, r) })
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !fault.Is(err, fault.Conflict):
				t.Fatalf("racer: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d concurrent records for one intent, want 1", won)
		}
		// A record without checks or a block time reads back so.
		bare := sampleReconciliation("rec_bare", freshIntent("txi_2", Epoch))
		bare.Checks, bare.BlockTime, bare.Slot = []intent.Check{}, time.Time{}, 0
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertReconciliation(ctx, bare) }); err != nil {
			t.Fatal(err)
		}
		if got, err := db.Read().Reconciliation(ctx, "txi_2"); err != nil || !cmp.Equal(bare, got) {
			t.Fatalf("bare record = %+v, %v; want %+v", got, err, bare)
		}
	})

	t.Run("LedgerMovementsByReference", func(t *testing.T) {
		db, _ := setup(t)
		grant := func(sc access.Scope, ref string, n money.Atomic) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				_, _, err := ledger.New().Grant(ctx, tx, ledger.CreditsInput{Scope: sc, Ref: ref, Amount: n})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		ws1 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
		ws2 := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Live}
		other := access.Scope{TenantID: "ten_2", WorkspaceID: "ws_9", Environment: access.Test}
		grant(ws1, "credit_purchase:txi_1", 100)
		grant(ws2, "credit_purchase:txi_1", 7)
		grant(other, "credit_purchase:txi_1", 5)
		grant(ws1, "credit_purchase:txi_2", 100)
		ms, err := db.Read().LedgerMovementsByReference(ctx, "ten_1", "grant:credit_purchase:txi_1")
		if err != nil {
			t.Fatal(err)
		}
		amounts := map[access.Scope]money.Atomic{}
		for _, m := range ms {
			if m.Reference != "grant:credit_purchase:txi_1" || len(m.Postings) != 2 {
				t.Fatalf("movement = %+v", m)
			}
			amounts[m.Scope] = m.Postings[1].Amount
		}
		if len(ms) != 2 || amounts[ws1] != 100 || amounts[ws2] != 7 {
			t.Fatalf("movements = %+v", ms)
		}
		if ms, err := db.Read().LedgerMovementsByReference(ctx, "ten_1", "grant:credit_purchase:txi_none"); err != nil || len(ms) != 0 {
			t.Fatalf("none = %+v, %v", ms, err)
		}
	})
}

// sampleReconciliation is a reconciliation record of it with every field
// set.
func sampleReconciliation(id string, it intent.Intent) intent.Reconciliation {
	at := it.CreatedAt.Add(10 * time.Minute)
	return intent.Reconciliation{ID: id, IntentID: it.ID, Actor: it.Actor, Outcome: intent.OutcomeDriftDetected,
		Reason: "failed checks: chain.net",
		Checks: []intent.Check{{Name: "chain.net", Expected: "5000000", Actual: "4999999"},
			{Name: "settlement.movements", Expected: "1", Actual: "1", Passed: true}},
		Signature: "5VERYLongBase58Signature", Slot: 312_000_123, BlockTime: at.Add(-time.Minute).Truncate(time.Second),
		ObservedAt: at.Add(-time.Second + 7), CreatedAt: at}
}

// testAddress returns an address whose bytes count up from seed.
func testAddress(seed byte) chain.Address {
	var a chain.Address
	for i := range a {
		a[i] = seed + byte(i)
	}
	return a
}

// freshIntent is an intent as Create leaves it: CREATED, unsent, no
// signature, evidence or progress times.
func freshIntent(id string, at time.Time) intent.Intent {
	at = at.UTC()
	return intent.Intent{
		ID: id, Version: 1,
		Actor:   intent.Actor{TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", Environment: access.Test},
		Purpose: intent.PurposeCreditPurchase, BusinessReference: intent.PurposeCreditPurchase + ":" + id,
		Quantity: "500", Description: "500 credits",
		Policy:  intent.PolicyRef{ID: intent.CreditPacksPolicyID, Version: 3, Hash: "9f2c"},
		Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
		Payer:   testAddress(1), Source: testAddress(2), Recipient: testAddress(3), Destination: testAddress(4),
		Mint: testAddress(5), TokenProgram: token2022.ProgramID(), Decimals: 6,
		GrossAtomic: 5_010_000, FeeAtomic: 10_000, NetAtomic: 5_000_000, FeeEpoch: 812,
		TransferFee:    token2022.TransferFee{Epoch: 800, MaximumFee: 1 << 63, BasisPoints: 200},
		HasTransferFee: true,
		Reference:      testAddress(200), Memo: id,
		CreatedAt: at.Add(123_456_789 * time.Nanosecond), ExpiresAt: at.Add(15 * time.Minute),
		EconomicsHash: "ab12", RequestFingerprint: "cd34",
		Transaction: intent.Prepared{Message: []byte{1, 0, 2, 5, 0xff, 0x00, 0x7f}, Blockhash: "GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi",
			LastValidBlockHeight: 1<<64 - 1, ExpiresAt: at.Add(90*time.Second + 1)},
		State: intent.StateCreated, NetworkState: intent.NetworkUnsent,
		UpdatedAt: at.Add(123_456_789 * time.Nanosecond),
	}
}

// sampleIntent is an intent with every field set.
func sampleIntent(id string, at time.Time) intent.Intent {
	it := freshIntent(id, at)
	it.State, it.NetworkState = intent.StateRequiresReview, intent.NetworkConfirmed
	it.Signature = "5VERYLongBase58Signature"
	it.SignedTransaction = []byte{1, 0xaa, 0xbb, 0x00, 0x01, 2, 5, 0xff}
	it.Origin = intent.OriginSigned
	it.SendAttempts = 2
	it.LastError = fault.SubmissionUncertain
	it.ChainError = `{"InstructionError":[1,{"Custom":1}]}`
	it.Slot = 312_000_123
	it.Evidence = []intent.Mismatch{{Field: "netAtomic", Expected: "5000000", Actual: "4990000"}, {Field: "memo", Expected: id, Actual: ""}}
	it.SubmittedAt = it.CreatedAt.Add(time.Minute)
	it.VerifiedAt = it.CreatedAt.Add(2 * time.Minute)
	it.SettledAt = it.CreatedAt.Add(3 * time.Minute)
	it.UpdatedAt = it.CreatedAt.Add(4 * time.Minute)
	it.ReconciliationID = "rec_" + id
	it.ReconciliationOutcome = intent.OutcomeDriftDetected
	it.ReconciledAt = it.CreatedAt.Add(5*time.Minute + 1)
	it.Legs = sampleLegs(it)
	return it
}

// sampleLegs are two legs of it: the first to its recipient and
// destination, amounts up to the u64 maximum.
func sampleLegs(it intent.Intent) []intent.Leg {
	return []intent.Leg{
		{Role: "seller", Recipient: it.Recipient, Destination: it.Destination, GrossAtomic: 1<<64 - 1, FeeAtomic: 1 << 63, NetAtomic: 1<<63 - 1},
		{Role: "platform_fee", Recipient: testAddress(6), Destination: testAddress(7), GrossAtomic: 10_201, FeeAtomic: 201, NetAtomic: 10_000},
	}
}

// samplePaymentRequest is the payment request of it with every field set.
func samplePaymentRequest(id string, it intent.Intent) intent.PaymentRequest {
	return intent.PaymentRequest{ID: id, IntentID: it.ID, Actor: it.Actor,
		URI:       "solana:" + it.Recipient.String() + "?amount=5.01&spl-token=" + it.Mint.String(),
		Recipient: it.Recipient, Mint: it.Mint, Reference: it.Reference, Memo: it.ID,
		AmountAtomic: it.GrossAtomic, Amount: "5.01", NetAtomic: it.NetAtomic, FeeAtomic: it.FeeAtomic, Decimals: it.Decimals,
		Label: "Creator Music", Message: "500 credits", Network: it.Network,
		ExpiresAt: it.ExpiresAt, CreatedAt: it.CreatedAt.Add(time.Second),
		Requirements: []intent.Requirement{{Field: "netAtomic", Value: "5000000"}, {Field: "reference", Value: it.Reference.String()}}}
}
