package sound_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/store/storetest"
)

// A run retried after its outputs were stored (a crash before the
// operation completed) stores no second copy and completes the operation.
func TestRetriedRunCompletesWithoutSecondOutputs(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenSQLite(t, storetest.NewClock(storetest.Epoch))
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	assets, err := asset.New(asset.Config{Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := sound.New(sound.Config{Assets: assets,
		Run: func(ctx context.Context, fn func(sound.Store) error) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
		},
		Read: func() sound.Store { return db.Read() }})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_1", "Tenant"); err != nil {
			return err
		}
		return tx.WorkspaceInsert(ctx, "ws_1", "ten_1", "Studio")
	}); err != nil {
		t.Fatal(err)
	}
	p := &access.Principal{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_1"}
	const rate, frames = 44100, 2 * 44100
	wav := assettest.WAVHeader(rate, 2, 16, false, frames*4)
	for i := range frames {
		v := uint16(int16(8000 * math.Sin(2*math.Pi*110*float64(i)/rate)))
		wav = binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(wav, v), v)
	}
	in, err := assets.Upload(ctx, db.Read(), asset.UploadInput{Scope: asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"},
		Body: bytes.NewReader(wav), DeclaredType: "audio/wav"}, func(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
		return db.InTx(ctx, func(tx *store.Tx) error { _, err := insert(tx); return err })
	})
	if err != nil {
		t.Fatal(err)
	}
	var op sound.Operation
	if err := db.InTx(ctx, func(tx *store.Tx) error {
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
