package asset_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/fault"
)

// memStore is an in-memory asset.Store.
type memStore struct {
	rows      []asset.Asset
	failWrite error
}

func (m *memStore) AssetInsert(ctx context.Context, a asset.Asset) (asset.Asset, error) {
	if m.failWrite != nil {
		return asset.Asset{}, m.failWrite
	}
	a.ID = "ast_" + string(rune('a'+len(m.rows)))
	m.rows = append(m.rows, a)
	return a, nil
}

func (m *memStore) AssetGet(ctx context.Context, s asset.Scope, id string) (asset.Asset, error) {
	for _, a := range m.rows {
		if a.ID == id && a.Scope == s {
			return a, nil
		}
	}
	return asset.Asset{}, fault.E("memStore.AssetGet", fault.NotFound, "")
}

func (m *memStore) AssetReferenced(ctx context.Context, sha string) (bool, error) {
	for _, a := range m.rows {
		if a.SHA256 == sha {
			return true, nil
		}
	}
	return false, nil
}

var _ asset.Store = (*memStore)(nil)

func (m *memStore) unit(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
	_, err := insert(m)
	return err
}

func blobFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	return n
}

func newService(t *testing.T, max int64) (*asset.Service, *fsblob.Store) {
	t.Helper()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := asset.New(asset.Config{Blobs: blobs, MaxUploadBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return svc, blobs
}

var scope = asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "test"}

func TestUpload(t *testing.T) {
	ctx := context.Background()
	svc, blobs := newService(t, 0)
	st := &memStore{}
	wav := assettest.WAV(48000, 2, 48000)
	a, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(wav), DeclaredType: "audio/x-wav",
		Filename: "../take.wav", Creator: asset.Creator{UserID: "usr_1"}}, st.unit)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if a.MediaType != "audio/wav" || a.Size != int64(len(wav)) || *a.DurationMs != 1000 || *a.SampleRate != 48000 ||
		*a.Channels != 2 || *a.BitDepth != 16 || a.Origin != asset.Uploaded || a.Filename != "take.wav" {
		t.Fatalf("asset = %+v", a)
	}
	b, err := svc.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	b.Close()
	if !bytes.Equal(got, wav) {
		t.Fatal("content differs")
	}
	if n := blobFiles(t, blobs.Root()); n != 1 {
		t.Fatalf("%d blob files", n)
	}
}

func TestUploadFailuresLeaveNothing(t *testing.T) {
	ctx := context.Background()
	wav := assettest.WAV(8000, 1, 8000)
	mp3 := assettest.MP3(assettest.MP3Options{})
	cases := []struct {
		name     string
		body     io.Reader
		declared string
		filename string
		max      int64
		code     fault.Code
		detected string
	}{
		{"empty", bytes.NewReader(nil), "audio/wav", "", 0, fault.InvalidInput, "unknown"},
		{"mp3AsWav", bytes.NewReader(mp3), "audio/wav", "", 0, fault.InvalidInput, "audio/mpeg"},
		{"mp3NamedWav", bytes.NewReader(mp3), "application/octet-stream", "song.wav", 0, fault.InvalidInput, "audio/mpeg"},
		{"garbage", bytes.NewReader([]byte("hello, not audio")), "audio/wav", "", 0, fault.InvalidInput, "unknown"},
		{"truncatedWav", bytes.NewReader(wav[:len(wav)/2]), "audio/wav", "", 0, fault.InvalidInput, "wav"},
		{"streamCutShort", io.MultiReader(bytes.NewReader(wav[:100]), iotest.ErrReader(io.ErrUnexpectedEOF)), "audio/wav", "", 0, fault.InvalidInput, ""},
		{"notAudio", bytes.NewReader(wav), "text/plain", "", 0, fault.UnsupportedMediaType, ""},
		{"tooLarge", bytes.NewReader(wav), "audio/wav", "", 1000, fault.PayloadTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc, blobs := newService(t, c.max)
			st := &memStore{}
			_, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: c.body, DeclaredType: c.declared, Filename: c.filename}, st.unit)
			if !fault.Is(err, c.code) {
				t.Fatalf("Upload = %v, want %s", err, c.code)
			}
			if _, _, d := fault.Public(err); c.detected != "" && (d["detected"] != c.detected || d["field"] != "file") {
				t.Fatalf("details = %v", d)
			}
			if len(st.rows) != 0 || blobFiles(t, blobs.Root()) != 0 {
				t.Fatalf("left %d rows, %d files", len(st.rows), blobFiles(t, blobs.Root()))
			}
		})
	}
}

func TestUploadInsertFailure(t *testing.T) {
	ctx := context.Background()
	wav := assettest.WAV(8000, 1, 800)
	boom := errors.New("database down")

	// The blob this upload created is removed.
	svc, blobs := newService(t, 0)
	st := &memStore{failWrite: boom}
	if _, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(wav)}, st.unit); !errors.Is(err, boom) {
		t.Fatalf("Upload = %v", err)
	}
	if n := blobFiles(t, blobs.Root()); n != 0 {
		t.Fatalf("%d blob files after a failed insert", n)
	}

	// A blob another asset references stays.
	st.failWrite = nil
	if _, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(wav)}, st.unit); err != nil {
		t.Fatal(err)
	}
	st.failWrite = boom
	if _, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(wav)}, st.unit); !errors.Is(err, boom) {
		t.Fatalf("Upload = %v", err)
	}
	if n := blobFiles(t, blobs.Root()); n != 1 {
		t.Fatalf("%d blob files, want the referenced one", n)
	}
}
