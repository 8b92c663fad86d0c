package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
)

// exerciseSound covers sound.Store, the operation half of the port (its
// asset, job and outbox halves have groups of their own): an operation
// round-trips whole and is read only in its own tenant, workspace and
// environment, or by id alone for the run's jobs; an update is a
// compare-and-set on the version, so moves made along the sound table
// (sound.Transition) are stored one after the other, a move computed from a
// stale read (a cancel racing the completion) is refused and changes
// nothing, of concurrent movers from one version exactly one wins, and
// lockers serialize; the status read sees every committed move and no
// rolled-back one; each output is stored once per operation and name, and
// listed by name.
//
// Expiry has no store method to cover: the run's deadline is a JobExpire
// job due at it (group Jobs), and the storage quota of outputs is the asset
// storage counter (group Assets).
func exerciseSound(t *testing.T, open Opener) {
	ctx := context.Background()
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	setup := func(t *testing.T) (*store.DB, *Clock, []string) {
		t.Helper()
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		// The input and the outputs are assets: the operation's rows name them.
		var assets []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range 4 {
				a, err := tx.AssetInsert(ctx, asset.Asset{Scope: asset.Scope{TenantID: scope.TenantID, WorkspaceID: scope.WorkspaceID,
					Environment: string(scope.Environment)}, MediaType: "audio/wav", Size: int64(100 + i),
					SHA256: fmt.Sprintf("%064x", i+1), Origin: asset.Uploaded})
				if err != nil {
					return err
				}
				assets = append(assets, a.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed assets: %v", err)
		}
		return db, clock, assets
	}
	// queued is an operation as accepted: no result, no failure, not started.
	queued := func(id, input string) sound.Operation {
		return sound.Operation{ID: id, Scope: scope, CreatedByUserID: "usr_1", CreatedByKeyID: "key_1", Type: sound.TypeMastering,
			Status: sound.StatusQueued, Stage: sound.StageAccepted, InputAssetID: input,
			Request:      json.RawMessage(`{"inputAssetId":"` + input + `","profile":"streaming"}`),
			Capabilities: json.RawMessage(`{"limits":{"maxInputDurationSeconds":600}}`),
			Plan:         "free", Version: 1, DeadlineAt: Epoch.Add(30 * time.Minute), CreatedAt: Epoch, UpdatedAt: Epoch}
	}
	insert := func(t *testing.T, db *store.DB, o sound.Operation) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SoundOperationInsert(ctx, o) }); err != nil {
			t.Fatalf("insert %s: %v", o.ID, err)
		}
	}
	get := func(t *testing.T, db *store.DB, id string) sound.Operation {
		t.Helper()
		o, err := db.Read().SoundOperationGet(ctx, scope, id)
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		return o
	}
	update := func(db *store.DB, o sound.Operation) error {
		return db.InTx(ctx, func(tx *store.Tx) error { return tx.SoundOperationUpdate(ctx, o) })
	}
	// move applies event e to o as the sound service does: the table
	// decides where it goes, the version counts the write.
	move := func(t *testing.T, o sound.Operation, e sound.Event, at time.Time) sound.Operation {
		t.Helper()
		to, err := sound.Transition(o.Status, e)
		if err != nil {
			t.Fatalf("sound.Transition(%s, %s): %v", o.Status, e, err)
		}
		o.Status, o.UpdatedAt = to, at
		o.Version++
		if to.Terminal() {
			o.EndedAt = &at
		}
		return o
	}

	t.Run("RoundTripScoped", func(t *testing.T) {
		db, _, assets := setup(t)
		started, ended := Epoch.Add(2*time.Second), Epoch.Add(9*time.Second)
		full := queued("snd_full", assets[0])
		full.Type, full.Status, full.Stage, full.Progress = sound.TypeAnalysis, sound.StatusFailed, sound.StageFinished, 40
		full.Result = json.RawMessage(`{"loudness":{"available":true,"value":-14.2,"unit":"LUFS"}}`)
		full.FailureCode, full.FailureMessage = "INVALID_INPUT", "The input runs past the plan's duration."
		full.FailureDetails = json.RawMessage(`{"reason":"duration_limit","limit":600}`)
		full.Version, full.StartedAt, full.UpdatedAt, full.EndedAt = 7, &started, ended, &ended
		// Every field is set, so a field the store drops shows in the diff.
		v := reflect.ValueOf(full)
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("sample operation leaves %s zero", v.Type().Field(i).Name)
			}
		}
		insert(t, db, full)
		if diff := cmp.Diff(full, get(t, db, full.ID)); diff != "" {
			t.Fatalf("round trip (-stored +read):\n%s", diff)
		}
		// As accepted: nothing measured, failed, started or ended reads back
		// as nil, and times read back in UTC.
		bare := queued("snd_bare", assets[0])
		insert(t, db, bare)
		got := get(t, db, bare.ID)
		if diff := cmp.Diff(bare, got); diff != "" {
			t.Fatalf("round trip of a queued operation (-stored +read):\n%s", diff)
		}
		if got.Result != nil || got.FailureDetails != nil || got.StartedAt != nil || got.EndedAt != nil || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("queued operation read back with %+v", got)
		}

		// The run's jobs read by id alone, locked or not.
		var locked sound.Operation
		if err := db.InTx(ctx, func(tx *store.Tx) (err error) { locked, err = tx.SoundOperationLock(ctx, full.ID); return err }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full, locked); diff != "" {
			t.Fatalf("locked read (-stored +read):\n%s", diff)
		}
		if plain, err := db.Read().SoundOperationLock(ctx, full.ID); err != nil || !cmp.Equal(full, plain) {
			t.Fatalf("lock on the read pool = %+v, %v", plain, err)
		}
		if st, err := db.Read().SoundOperationStatus(ctx, full.ID); err != nil || st != sound.StatusFailed {
			t.Fatalf("status = %q, %v", st, err)
		}

		// Reads on behalf of a caller never cross tenant, workspace or
		// environment: another scope's operation is NOT_FOUND, as a missing
		// one is.
		for name, sc := range map[string]access.Scope{
			"workspace":   {TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test},
			"environment": {TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live},
			"tenant":      {TenantID: "ten_2", WorkspaceID: "ws_1", Environment: access.Test},
		} {
			if _, err := db.Read().SoundOperationGet(ctx, sc, full.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("get from another %s = %v, want NOT_FOUND", name, err)
			}
		}
		if _, err := db.Read().SoundOperationGet(ctx, scope, "snd_missing"); !fault.Is(err, fault.NotFound) {
			t.Errorf("get missing = %v, want NOT_FOUND", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.SoundOperationLock(ctx, "snd_missing"); return err }); !fault.Is(err, fault.NotFound) {
			t.Errorf("lock missing = %v, want NOT_FOUND", err)
		}
		if _, err := db.Read().SoundOperationStatus(ctx, "snd_missing"); !fault.Is(err, fault.NotFound) {
			t.Errorf("status of a missing operation = %v, want NOT_FOUND", err)
		}
	})

	t.Run("MovesAlongTheTable", func(t *testing.T) {
		db, clock, assets := setup(t)
		o := queued("snd_1", assets[0])
		insert(t, db, o)
		// Dispatch, start, a progress step, completion: each move is written
		// whole from the version before it and read back as written.
		step := func(next sound.Operation) sound.Operation {
			t.Helper()
			if err := update(db, next); err != nil {
				t.Fatalf("update to %s (version %d): %v", next.Status, next.Version, err)
			}
			if diff := cmp.Diff(next, get(t, db, next.ID)); diff != "" {
				t.Fatalf("after the move to %s (-written +read):\n%s", next.Status, diff)
			}
			if st, err := db.Read().SoundOperationStatus(ctx, next.ID); err != nil || st != next.Status {
				t.Fatalf("status after the move to %s = %q, %v", next.Status, st, err)
			}
			return next
		}
		clock.Advance(time.Second)
		o = step(move(t, o, sound.EventDispatch, clock.Now()))
		clock.Advance(time.Second)
		o = move(t, o, sound.EventStart, clock.Now())
		started := clock.Now()
		o.StartedAt, o.Stage, o.Progress = &started, sound.StageDecoding, 5
		o = step(o)
		processing := o // the run's view before it completes
		clock.Advance(time.Second)
		o.Stage, o.Progress, o.UpdatedAt = sound.StageMastering, 60, clock.Now()
		o.Version++
		o = step(o)
		clock.Advance(time.Second)
		o = move(t, o, sound.EventComplete, clock.Now())
		o.Stage, o.Progress, o.Result = sound.StageFinished, 100, json.RawMessage(`{"outputs":["mastered"]}`)
		o = step(o)

		// A cancel computed from the stale processing view is legal in the
		// table, but the completion got there first: CONFLICT, and the
		// operation stays completed with its result.
		stale := move(t, processing, sound.EventCancel, clock.Now())
		if err := update(db, stale); !fault.Is(err, fault.Conflict) {
			t.Errorf("a cancel from a stale read = %v, want CONFLICT", err)
		}
		skip := o
		skip.Version += 2
		skip.Progress = 1
		if err := update(db, skip); !fault.Is(err, fault.Conflict) {
			t.Errorf("an update that skips a version = %v, want CONFLICT", err)
		}
		missing := queued("snd_missing", assets[0])
		missing.Version = 2
		if err := update(db, missing); !fault.Is(err, fault.Conflict) {
			t.Errorf("an update of a missing operation = %v, want CONFLICT", err)
		}
		if diff := cmp.Diff(o, get(t, db, o.ID)); diff != "" {
			t.Fatalf("refused updates changed the operation (-completed +read):\n%s", diff)
		}

		// A failure writes its code and details; a move whose unit of work
		// rolls back leaves the operation, and its status, as they were.
		f := queued("snd_2", assets[0])
		insert(t, db, f)
		clock.Advance(time.Second)
		failed := move(t, f, sound.EventFail, clock.Now())
		failed.FailureCode, failed.FailureMessage = "INVALID_INPUT", "The input cannot be decoded."
		failed.FailureDetails = json.RawMessage(`{"field":"input.assetId","reason":"undecodable"}`)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SoundOperationUpdate(ctx, failed); err != nil {
				return err
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("rolled-back move = %v", err)
		}
		if st, err := db.Read().SoundOperationStatus(ctx, f.ID); err != nil || st != sound.StatusQueued {
			t.Fatalf("status after a rolled-back move = %q, %v; want queued", st, err)
		}
		step(failed)
	})

	t.Run("ConcurrentMovers", func(t *testing.T) {
		db, clock, assets := setup(t)
		o := queued("snd_1", assets[0])
		insert(t, db, o)
		clock.Advance(time.Second)
		o = move(t, o, sound.EventDispatch, clock.Now())
		if err := update(db, o); err != nil {
			t.Fatal(err)
		}
		// Movers that all read the dispatched operation race: cancels,
		// expiries and starts, each a legal move from that view. Exactly one
		// is stored; the others are CONFLICT.
		events := []sound.Event{sound.EventCancel, sound.EventExpire, sound.EventStart, sound.EventFail}
		const n = 8
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			winner    = -1
			conflicts int
		)
		movers := make([]sound.Operation, n)
		for i := range movers {
			movers[i] = move(t, o, events[i%len(events)], clock.Now())
			movers[i].Progress = 10 + i
		}
		start := make(chan struct{})
		for i, mine := range movers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				err := update(db, mine)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					if winner >= 0 {
						t.Errorf("movers %d and %d both won", winner, i)
					}
					winner = i
				case fault.Is(err, fault.Conflict):
					conflicts++
				default:
					t.Errorf("mover %d: %v", i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if winner < 0 || conflicts != n-1 {
			t.Fatalf("winner %d, %d conflicts; want one winner and %d conflicts", winner, conflicts, n-1)
		}
		want, _ := sound.Transition(sound.StatusDispatched, events[winner%len(events)])
		got := get(t, db, o.ID)
		if got.Status != want || got.Progress != 10+winner || got.Version != o.Version+1 {
			t.Fatalf("after the race: %s at %d%%, version %d; want the winner's %s at %d%%, version %d",
				got.Status, got.Progress, got.Version, want, 10+winner, o.Version+1)
		}

		// Lockers serialize: each reads what its predecessor wrote, so a
		// step that locks after a cancel sees it and stops.
		r := queued("snd_2", assets[0])
		insert(t, db, r)
		var steps, stopped int
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					cur, err := tx.SoundOperationLock(ctx, r.ID)
					if err != nil {
						return err
					}
					if cur.Status.Terminal() {
						mu.Lock()
						stopped++
						mu.Unlock()
						return nil
					}
					next := cur
					if i == n/2 {
						to, err := sound.Transition(cur.Status, sound.EventCancel)
						if err != nil {
							return err
						}
						next.Status = to
					} else {
						next.Progress++
					}
					next.Version++
					if err := tx.SoundOperationUpdate(ctx, next); err != nil {
						return err
					}
					if i != n/2 {
						mu.Lock()
						steps++
						mu.Unlock()
					}
					return nil
				})
				if err != nil {
					t.Errorf("locked mover %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		got = get(t, db, r.ID)
		if got.Status != sound.StatusCancelled || got.Progress != steps || got.Version != int64(2+steps) || steps+stopped != n-1 {
			t.Fatalf("after locked movers: %s, progress %d, version %d, %d steps and %d stopped; want cancelled, progress and version+1 equal to the steps, %d in all",
				got.Status, got.Progress, got.Version, steps, stopped, n-1)
		}
	})

	t.Run("OutputsOnce", func(t *testing.T) {
		db, clock, assets := setup(t)
		o := queued("snd_1", assets[0])
		o.Type = sound.TypeStemSeparation
		insert(t, db, o)
		other := queued("snd_2", assets[0])
		insert(t, db, other)
		put := func(out sound.Output) bool {
			t.Helper()
			var ok bool
			if err := db.InTx(ctx, func(tx *store.Tx) (err error) { ok, err = tx.SoundOutputInsert(ctx, out); return err }); err != nil {
				t.Fatalf("insert output %s: %v", out.Name, err)
			}
			return ok
		}
		output := func(op, name, assetID string) sound.Output {
			return sound.Output{OperationID: op, Name: name, AssetID: assetID, ParentAssetID: assets[0], Format: "wav",
				SampleRate: 48000, BitDepth: 24, CreatedAt: clock.Now()}
		}
		if outs, err := db.Read().SoundOutputs(ctx, o.ID); err != nil || len(outs) != 0 {
			t.Fatalf("outputs before any = %+v, %v", outs, err)
		}
		vocals, drums := output(o.ID, "vocals", assets[1]), output(o.ID, "drums", assets[2])
		vocals.Format, vocals.SampleRate, vocals.BitDepth = "flac", 44100, 16
		if !put(vocals) || !put(drums) {
			t.Fatal("first inserts of two outputs were not stored")
		}
		// A retried run stores the same output again: refused, the first
		// one kept.
		clock.Advance(time.Minute)
		if put(output(o.ID, "vocals", assets[3])) {
			t.Fatal("a second vocals output was stored")
		}
		// Another operation's output of the same name is its own.
		if !put(output(other.ID, "vocals", assets[3])) {
			t.Fatal("another operation's output of the same name was refused")
		}
		// A rolled-back insert leaves nothing, so the retry stores it.
		bass := output(o.ID, "bass", assets[3])
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.SoundOutputInsert(ctx, bass); err != nil {
				return err
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatalf("rolled-back insert = %v", err)
		}
		outs, err := db.Read().SoundOutputs(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]sound.Output{drums, vocals}, outs); diff != "" {
			t.Fatalf("outputs by name (-want +got):\n%s", diff)
		}
		if !put(bass) {
			t.Fatal("the output of a rolled-back insert was refused on retry")
		}

		// Concurrent inserts of one output: exactly one is stored.
		var wg sync.WaitGroup
		var mu sync.Mutex
		stored := 0
		for i := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.InTx(ctx, func(tx *store.Tx) error {
					ok, err := tx.SoundOutputInsert(ctx, output(other.ID, "other", assets[1+i%3]))
					if ok {
						mu.Lock()
						stored++
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Errorf("concurrent insert: %v", err)
				}
			}()
		}
		wg.Wait()
		outs, err = db.Read().SoundOutputs(ctx, other.ID)
		if err != nil || stored != 1 || len(outs) != 2 || outs[0].Name != "other" || outs[1].Name != "vocals" {
			t.Fatalf("%d of 6 concurrent inserts stored; outputs %+v, %v", stored, outs, err)
		}
	})
}
