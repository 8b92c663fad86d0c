// Package fsblob is the filesystem adapter of asset.BlobStore: content is
// addressed by its SHA-256 and stored at root/sha256/ab/cd/<hex>.
//
// Writes are streamed and atomic. Stage copies the content into a temporary
// file under root/tmp (the same filesystem as its final place, so publishing
// is atomic), hashing it as it goes, and fsyncs it. Commit hard-links the
// file to its final path, which fails harmlessly if the content is already
// there (a duplicate is a no-op, and the link reports whether this call
// created it), then fsyncs the directory. Where hard links are not supported
// Commit falls back to rename. Readers therefore never see a partial file,
// and any number of concurrent writers of the same content converge on one
// file. Files are read-only (0o444) once published.
//
// Stray temporary files of a crashed process are left in root/tmp; Clean
// removes those older than a given age.
package fsblob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
)

// Compile-time check: *Store implements the asset port.
var (
	_ asset.BlobStore      = (*Store)(nil)
	_ asset.StagingCleaner = (*Store)(nil)
)

// Store is a content-addressed blob store in a directory.
type Store struct {
	root string
}

// New returns a Store rooted at dir, creating dir/sha256 and dir/tmp.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("fsblob: directory is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fsblob: %w", err)
	}
	for _, d := range []string{filepath.Join(abs, "sha256"), filepath.Join(abs, "tmp")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("fsblob: create %s: %w", d, err)
		}
	}
	return &Store{root: abs}, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// Path returns the file path of the content with digest sha (lowercase
// hex); ok is false for a malformed digest.
func (s *Store) Path(sha string) (string, bool) {
	if !validDigest(sha) {
		return "", false
	}
	return filepath.Join(s.root, "sha256", sha[0:2], sha[2:4], sha), true
}

// validDigest reports whether sha is 64 lowercase hex characters, so it can
// never name a path outside the store.
func validDigest(sha string) bool {
	if len(sha) != 64 {
		return false
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// copyBuffer is the size of the copy buffer: memory per upload is bounded by it.
const copyBuffer = 256 << 10

// Stage implements asset.BlobStore.
func (s *Store) Stage(ctx context.Context, r io.Reader) (asset.Staged, error) {
	const op = "fsblob.Stage"
	f, err := os.CreateTemp(filepath.Join(s.root, "tmp"), "stage-*")
	if err != nil {
		return nil, fault.Wrap(op, fmt.Errorf("create temp file: %w", err))
	}
	st := &staged{s: s, f: f}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(f, h), ctxReader{ctx: ctx, r: r}, make([]byte, copyBuffer))
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		st.Discard()
		return nil, fault.Wrap(op, fmt.Errorf("write %s: %w", f.Name(), err))
	}
	st.info = asset.BlobInfo{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}
	return st, nil
}

// Put implements asset.BlobStore.
func (s *Store) Put(ctx context.Context, r io.Reader) (asset.BlobInfo, error) {
	st, err := s.Stage(ctx, r)
	if err != nil {
		return asset.BlobInfo{}, err
	}
	defer st.Discard()
	if _, err := st.Commit(ctx); err != nil {
		return asset.BlobInfo{}, err
	}
	return st.Info(), nil
}

// Open implements asset.BlobStore.
func (s *Store) Open(ctx context.Context, sha string) (asset.Blob, error) {
	const op = "fsblob.Open"
	p, ok := s.Path(sha)
	if !ok {
		return nil, fault.E(op, fault.NotFound, "")
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.E(op, fault.NotFound, "")
	}
	if err != nil {
		return nil, fault.Wrap(op, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fault.Wrap(op, err)
	}
	return blob{File: f, size: fi.Size()}, nil
}

// Stat implements asset.BlobStore.
func (s *Store) Stat(ctx context.Context, sha string) (asset.BlobInfo, error) {
	const op = "fsblob.Stat"
	p, ok := s.Path(sha)
	if !ok {
		return asset.BlobInfo{}, fault.E(op, fault.NotFound, "")
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return asset.BlobInfo{}, fault.E(op, fault.NotFound, "")
	}
	if err != nil {
		return asset.BlobInfo{}, fault.Wrap(op, err)
	}
	return asset.BlobInfo{SHA256: sha, Size: fi.Size()}, nil
}

// Delete implements asset.BlobStore.
func (s *Store) Delete(ctx context.Context, sha string) error {
	p, ok := s.Path(sha)
	if !ok {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Wrap("fsblob.Delete", err)
	}
	return nil
}

// Clean implements asset.StagingCleaner: it removes staging files older
// than age, left by a process that crashed mid-upload, and returns how many
// it removed.
func (s *Store) Clean(age time.Duration, now time.Time) (int, error) {
	dir := filepath.Join(s.root, "tmp")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("fsblob: clean: %w", err)
	}
	n := 0
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < age {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}

// blob is an opened content file.
type blob struct {
	*os.File
	size int64
}

// Size implements asset.Blob.
func (b blob) Size() int64 { return b.size }

// staged is a hashed temporary file awaiting Commit.
type staged struct {
	s    *Store
	f    *os.File
	info asset.BlobInfo
	done bool
}

// ReadAt implements io.ReaderAt over the staged content.
func (st *staged) ReadAt(p []byte, off int64) (int, error) { return st.f.ReadAt(p, off) }

// Info implements asset.Staged.
func (st *staged) Info() asset.BlobInfo { return st.info }

// Commit implements asset.Staged.
func (st *staged) Commit(ctx context.Context) (bool, error) {
	const op = "fsblob.Commit"
	if st.done {
		return false, fault.Wrap(op, errors.New("staged content already discarded"))
	}
	final, _ := st.s.Path(st.info.SHA256)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return false, fault.Wrap(op, err)
	}
	if err := os.Chmod(st.f.Name(), 0o444); err != nil {
		return false, fault.Wrap(op, err)
	}
	err := os.Link(st.f.Name(), final)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		// No hard links here: rename, which replaces identical content atomically.
		if _, serr := os.Stat(final); serr == nil {
			return false, nil
		}
		if rerr := os.Rename(st.f.Name(), final); rerr != nil {
			return false, fault.Wrap(op, fmt.Errorf("publish %s: link: %v; rename: %w", st.info.SHA256, err, rerr))
		}
	}
	if err := syncDir(dir); err != nil {
		return true, fault.Wrap(op, err)
	}
	return true, nil
}

// Discard implements asset.Staged.
func (st *staged) Discard() error {
	if st.done {
		return nil
	}
	st.done = true
	err := st.f.Close()
	if rerr := os.Remove(st.f.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fault.Wrap("fsblob.Discard", err)
	}
	return nil
}

// syncDir fsyncs a directory so a new entry survives a crash. Systems that
// cannot sync directories (Windows) report nothing.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
