package sound_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// A run retried after its outputs were stored (a crash before the
// operation completed) stores no second copy and completes the operation.
func TestRetriedRunCompletesWithoutSecondOutputs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storetest.OpenSQLite, 0, time.Minute)
	db, svc, p := f.db, f.svc, f.p
	const rate, frames = 44100, 2 * 44100
	wav := assettest.WAVHeader(rate, 2, 16, false, frames*4)
	for i := range frames {
		v := uint16(int16(8000 * math.Sin(2*math.Pi*110*float64(i)/rate)))
		wav = binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(wav, v), v)
	}
	in := f.upload(t, wav)
	var op sound.Operation
	if err := db.InTx(ctx, func(tx *store.Tx) (err error) {
		op, err = svc.Stems(ctx, tx, p, nil, sound.StemsRequest{InputAssetID: in.ID, Stems: []string{"bass", "drums"},
			Output: sound.OutputSpec{Format: "wav", SampleRate: rate, BitDepth: 16}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		payload, _ := json.Marshal(map[string]string{"operation": op.ID})
		if err := svc.RunHandler()(ctx, jobs.Job{Kind: sound.JobRun, Payload: payload, Attempts: 1, MaxAttempts: 5}); err != nil {
			t.Fatal(err)
		}
	}
	run()
	// Undo the completion only, as if the worker stopped after storing
	// the outputs and before completing: the retry finds both outputs.
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.IDB().ExecContext(ctx, `UPDATE sound_operations SET status = 'processing', stage = 'persisting', result = NULL,
			ended_at = NULL, version = version + 1 WHERE id = ?`, op.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	run()
	got, err := svc.Get(ctx, db.Read(), p, op.ID)
	if err != nil || got.Status != sound.StatusCompleted {
		t.Fatalf("after the retry: %+v, %v", got.Status, err)
	}
	outs, err := svc.Outputs(ctx, db.Read(), op.ID)
	if err != nil || len(outs) != 2 {
		t.Fatalf("outputs = %d, %v", len(outs), err)
	}
	var derived int
	if err := db.Read().IDB().NewRaw(`SELECT COUNT(*) FROM assets WHERE origin = 'derived'`).Scan(ctx, &derived); err != nil || derived != 2 {
		t.Fatalf("derived assets = %d, %v", derived, err)
	}
}
