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

// memStore is an in-memory asset.Store. Its unit of work does not roll
// back: tests of failures look at what an insert left.
type memStore struct {
	rows      []asset.Asset
	failWrite error
	stored    map[asset.Scope]int64
	prov      []asset.Provenance
}

func (m *memStore) AssetProvenanceInsert(ctx context.Context, p asset.Provenance) error {
	m.prov = append(m.prov, p)
	return nil
}

func (m *memStore) AssetStorageAdd(ctx context.Context, s asset.Scope, bytes, quota int64) (int64, bool, error) {
	if m.stored == nil {
		m.stored = map[asset.Scope]int64{}
	}
	if quota > 0 && m.stored[s]+bytes > quota {
		return m.stored[s], false, nil
	}
	m.stored[s] += bytes
	return m.stored[s], true, nil
}

func (m *memStore) AssetStorageUsed(ctx context.Context, s asset.Scope) (int64, error) {
	return m.stored[s], nil
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

// A header claiming what no accepted file claims is refused at upload,
// naming the claim, and nothing is stored; an hour claimed over a few
// kilobytes is within the bounds and recorded as the claim it is.
func TestUploadRefusesAbsurdClaims(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		file  []byte
		field string
	}{
		{"nineChannels", append(assettest.WAVHeader(48000, 9, 16, false, 18*10), make([]byte, 18*10)...), "claimed.channels"},
		{"rateTooLow", append(assettest.WAVHeader(4000, 1, 16, false, 2*10), make([]byte, 2*10)...), "claimed.sampleRate"},
		{"rateTooHigh", append(assettest.WAVHeader(384000, 2, 16, false, 4*10), make([]byte, 4*10)...), "claimed.sampleRate"},
		{"flacRateTooHigh", assettest.FLAC(352800, 2, 24, 352800), "claimed.sampleRate"},
		{"tenHours", assettest.FLAC(44100, 2, 16, 10*3600*44100), "claimed.durationSeconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc, blobs := newService(t, 0)
			st := &memStore{}
			_, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(c.file)}, st.unit)
			code, _, d := fault.Public(err)
			if code != fault.InvalidInput || d["field"] != c.field || d["reason"] != "out_of_bounds" || d["maximum"] == nil {
				t.Fatalf("Upload = %v %v", err, d)
			}
			if len(st.rows) != 0 || blobFiles(t, blobs.Root()) != 0 {
				t.Fatalf("left %d rows, %d files", len(st.rows), blobFiles(t, blobs.Root()))
			}
		})
	}
	svc, _ := newService(t, 0)
	st := &memStore{}
	hour := assettest.ConstantFLAC(44100, 2, 16, 65535, 3600*44100, 3600*44100, 0)
	a, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(hour)}, st.unit)
	if err != nil || *a.DurationMs != 3600_000 || *a.Channels != 2 || *a.SampleRate != 44100 {
		t.Fatalf("an hour claimed = %+v, %v", a, err)
	}
	t.Logf("an hour of stereo 44.1 kHz FLAC in %d bytes", len(hour))
}

// The storage quota of the upload's plan bounds the workspace's bytes: an
// upload that would pass it is refused with the quota and what is stored,
// leaving nothing; once the quota is spent the body is not even read;
// generated tracks count but are never refused; other plans and scopes
// have their own room.
func TestUploadStorageQuota(t *testing.T) {
	ctx := context.Background()
	blobs, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wav := assettest.WAV(8000, 1, 300) // 644 bytes
	svc, err := asset.New(asset.Config{Blobs: blobs, QuotaFunc: func(plan string) int64 {
		if plan == "tiny" {
			return 1000
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := &memStore{}
	up := func(body io.Reader, origin asset.Origin, plan string) error {
		_, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: body, Origin: origin, Plan: plan}, st.unit)
		return err
	}
	if err := up(bytes.NewReader(wav), "", "tiny"); err != nil {
		t.Fatal(err)
	}
	err = up(bytes.NewReader(assettest.WAV(8000, 1, 200)), "", "tiny")
	code, _, d := fault.Public(err)
	if code != fault.PayloadTooLarge || d["reason"] != "storage_quota" || d["limit"] != int64(1000) || d["used"] != int64(len(wav)) {
		t.Fatalf("second upload = %v %v", err, d)
	}
	if len(st.rows) != 1 || blobFiles(t, blobs.Root()) != 1 {
		t.Fatalf("%d rows, %d blobs after the refusal", len(st.rows), blobFiles(t, blobs.Root()))
	}
	// A generated track is stored past the quota, and counted.
	if err := up(bytes.NewReader(assettest.WAV(8000, 1, 400)), asset.Generated, "tiny"); err != nil {
		t.Fatalf("generated: %v", err)
	}
	// The quota is spent: the body is refused unread.
	if err := up(iotest.ErrReader(errors.New("the body was read")), "", "tiny"); !fault.Is(err, fault.PayloadTooLarge) {
		t.Fatalf("spent quota = %v", err)
	}
	// A plan without a quota, and another scope, are not held to it.
	if err := up(bytes.NewReader(assettest.WAV(8000, 1, 500)), "", "studio"); err != nil {
		t.Fatalf("plan without a quota: %v", err)
	}
	other := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: "live"}
	if _, err := svc.Upload(ctx, st, asset.UploadInput{Scope: other, Body: bytes.NewReader(wav), Plan: "tiny"}, st.unit); err != nil {
		t.Fatalf("other environment: %v", err)
	}
}

// TestUploadRecordsProvenance: Upload writes the asset's provenance in
// its unit of work, with the parents' content hashes read there; a parent
// of another scope fails the upload.
func TestUploadRecordsProvenance(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t, 0)
	st := &memStore{}
	in, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(assettest.WAV(48000, 2, 4800)),
		DeclaredType: "audio/wav", Creator: asset.Creator{UserID: "usr_1", KeyID: "key_1"}}, st.unit)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.prov) != 1 {
		t.Fatalf("%d provenance records after an upload", len(st.prov))
	}
	up := st.prov[0]
	if up.AssetID != in.ID || up.Origin != asset.Uploaded || up.CreatorUserID != "usr_1" || up.OutputSHA256 != in.SHA256 ||
		up.Basis != asset.BasisCreation || up.Provider != "" || len(up.Parents) != 0 || up.Scope != scope {
		t.Fatalf("upload provenance = %+v", up)
	}
	out, err := svc.Upload(ctx, st, asset.UploadInput{Scope: scope, Body: bytes.NewReader(assettest.WAV(44100, 1, 4410)),
		DeclaredType: "audio/wav", Creator: asset.Creator{UserID: "usr_2"}, Origin: asset.Derived,
		Lineage: asset.Lineage{OperationID: "snd_1", ParentIDs: []string{in.ID}}}, st.unit)
	if err != nil {
		t.Fatal(err)
	}
	d := st.prov[1]
	if d.AssetID != out.ID || d.Origin != asset.Derived || d.OperationID != "snd_1" || d.OutputSHA256 != out.SHA256 ||
		len(d.Parents) != 1 || d.Parents[0] != (asset.Parent{AssetID: in.ID, SHA256: in.SHA256}) {
		t.Fatalf("derived provenance = %+v", d)
	}
	other := asset.Scope{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: "test"}
	_, err = svc.Upload(ctx, st, asset.UploadInput{Scope: other, Body: bytes.NewReader(assettest.WAV(44100, 1, 441)),
		DeclaredType: "audio/wav", Origin: asset.Derived, Lineage: asset.Lineage{ParentIDs: []string{in.ID}}}, st.unit)
	if !fault.Is(err, fault.NotFound) || len(st.prov) != 2 {
		t.Fatalf("a parent of another scope: %v, %d records", err, len(st.prov))
	}
}
