package fsblob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/creatormusic/platform/asset/fsblob"
	"github.com/creatormusic/platform/fault"
)

// files lists the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestPutOpenStatDelete(t *testing.T) {
	ctx := context.Background()
	s, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("platform"), 100_000)
	info, err := s.Put(ctx, iotest.HalfReader(bytes.NewReader(content)))
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if info.SHA256 != digest(content) || info.Size != int64(len(content)) {
		t.Fatalf("Put = %+v", info)
	}
	p, _ := s.Path(info.SHA256)
	if want := filepath.Join(s.Root(), "sha256", info.SHA256[:2], info.SHA256[2:4], info.SHA256); p != want {
		t.Fatalf("path = %s, want %s", p, want)
	}
	if got := files(t, s.Root()); len(got) != 1 || got[0] != p {
		t.Fatalf("files = %v", got)
	}
	b, err := s.Open(ctx, info.SHA256)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer b.Close()
	if b.Size() != info.Size {
		t.Fatalf("Size = %d", b.Size())
	}
	part := make([]byte, 8)
	if _, err := b.ReadAt(part, 8*500); err != nil || string(part) != "platform" {
		t.Fatalf("ReadAt = %q, %v", part, err)
	}
	if st, err := s.Stat(ctx, info.SHA256); err != nil || st != info {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	// A duplicate is a no-op.
	if again, err := s.Put(ctx, bytes.NewReader(content)); err != nil || again != info {
		t.Fatalf("second Put = %+v, %v", again, err)
	}
	if got := files(t, s.Root()); len(got) != 1 {
		t.Fatalf("files after duplicate = %v", got)
	}
	if err := s.Delete(ctx, info.SHA256); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Open(ctx, info.SHA256); !fault.Is(err, fault.NotFound) {
		t.Fatalf("Open after Delete = %v", err)
	}
	if _, err := s.Stat(ctx, "../../etc/passwd"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("Stat of a path = %v", err)
	}
	if err := s.Delete(ctx, info.SHA256); err != nil {
		t.Fatalf("Delete twice: %v", err)
	}
}

func TestStageIsInvisibleUntilCommit(t *testing.T) {
	ctx := context.Background()
	s, _ := fsblob.New(t.TempDir())
	content := []byte("staged bytes")
	st, err := s.Stage(ctx, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, st.Info().SHA256); !fault.Is(err, fault.NotFound) {
		t.Fatalf("staged content visible: %v", err)
	}
	buf := make([]byte, 5)
	if _, err := st.ReadAt(buf, 7); err != nil || string(buf) != "bytes" {
		t.Fatalf("ReadAt = %q, %v", buf, err)
	}
	created, err := st.Commit(ctx)
	if err != nil || !created {
		t.Fatalf("Commit = %v, %v", created, err)
	}
	if err := st.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, st.Info().SHA256); err != nil {
		t.Fatalf("committed content: %v", err)
	}
	// A discarded stage leaves nothing.
	st2, _ := s.Stage(ctx, bytes.NewReader([]byte("never published")))
	if err := st2.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := files(t, s.Root()); len(got) != 1 {
		t.Fatalf("files = %v", got)
	}
	if tmp, _ := os.ReadDir(filepath.Join(s.Root(), "tmp")); len(tmp) != 0 {
		t.Fatalf("temp files left: %v", tmp)
	}
}

func TestFailedStreamLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := fsblob.New(t.TempDir())
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(make([]byte, 1<<20)), iotest.ErrReader(boom))
	if _, err := s.Stage(ctx, r); !errors.Is(err, boom) {
		t.Fatalf("Stage = %v, want the read error", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Put(cctx, bytes.NewReader([]byte("x"))); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a cancelled context = %v", err)
	}
	if got := files(t, s.Root()); len(got) != 0 {
		t.Fatalf("files = %v", got)
	}
}

func TestConcurrentIdenticalPuts(t *testing.T) {
	ctx := context.Background()
	s, _ := fsblob.New(t.TempDir())
	content := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 300_000)
	const writers = 16
	var wg sync.WaitGroup
	created := make(chan bool, writers)
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.Stage(ctx, bytes.NewReader(content))
			if err != nil {
				errs <- err
				return
			}
			defer st.Discard()
			c, err := st.Commit(ctx)
			if err != nil {
				errs <- err
				return
			}
			created <- c
		}()
	}
	wg.Wait()
	close(errs)
	close(created)
	for err := range errs {
		t.Fatal(err)
	}
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d writers report creating the blob, want 1", n)
	}
	got := files(t, s.Root())
	if len(got) != 1 {
		t.Fatalf("files = %v", got)
	}
	b, err := os.ReadFile(got[0])
	if err != nil || !bytes.Equal(b, content) {
		t.Fatalf("stored content differs (%d bytes, %v)", len(b), err)
	}
}

// TestStreamingMemory streams 64 MiB through Put; the heap must not grow
// with the content (asserted loosely: far less than the content's size).
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	ctx := context.Background()
	s, _ := fsblob.New(t.TempDir())
	const size = 64 << 20
	var before, after runtimeStats
	before.read()
	info, err := s.Put(ctx, io.LimitReader(zeros{}, size))
	if err != nil {
		t.Fatal(err)
	}
	after.read()
	if info.Size != size {
		t.Fatalf("size = %d", info.Size)
	}
	if grew := after.totalAlloc - before.totalAlloc; grew > size/8 {
		t.Fatalf("Put allocated %d bytes for %d bytes of content", grew, size)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
