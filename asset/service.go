package asset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/creatormusic/platform/fault"
)

// DefaultMaxUploadBytes bounds an upload when Config.MaxUploadBytes is zero.
const DefaultMaxUploadBytes = 200 << 20

// Config configures a Service.
type Config struct {
	// Blobs stores the bytes. Required.
	Blobs BlobStore
	// MaxUploadBytes bounds one upload's content. Zero means
	// DefaultMaxUploadBytes.
	MaxUploadBytes int64
}

// Service stores and serves assets. It is safe for concurrent use.
type Service struct {
	blobs BlobStore
	max   int64
	locks hashLocks
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Blobs == nil {
		return nil, errors.New("asset: Config.Blobs is required")
	}
	if cfg.MaxUploadBytes < 0 {
		return nil, errors.New("asset: Config.MaxUploadBytes must not be negative")
	}
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	return &Service{blobs: cfg.Blobs, max: cfg.MaxUploadBytes}, nil
}

// MaxUploadBytes returns the largest content an upload may carry.
func (s *Service) MaxUploadBytes() int64 { return s.max }

// UploadInput is one upload.
type UploadInput struct {
	// Scope and Creator come from the authenticated principal.
	Scope   Scope
	Creator Creator
	// Body is the content, read once to its end.
	Body io.Reader
	// DeclaredType is the media type the client sent with the content ("" or
	// application/octet-stream when it named none).
	DeclaredType string
	// Filename is the client's file name, sanitized before it is stored.
	Filename string
	// Origin defaults to Uploaded.
	Origin Origin
}

// UnitFunc runs one unit of work (a transaction): it calls insert with the
// Store bound to it, which writes the asset row and returns the stored
// asset, and makes its own writes beside it (a request receipt, the
// operation an ingested or derived asset belongs to), all committed
// together. An error rolls the asset row back.
type UnitFunc func(ctx context.Context, insert func(Store) (Asset, error)) error

// Upload stages in.Body in the blob store while hashing it, sniffs the
// staged bytes, checks them against the declared type, publishes the blob
// and inserts the asset row in the unit of work that unit runs. read serves
// the reference check after a failed insert.
//
// Errors: INVALID_INPUT (details.field "file") for empty, truncated,
// malformed or mislabelled content (details.detected says what it is),
// PAYLOAD_TOO_LARGE (details.limit) over MaxUploadBytes,
// UNSUPPORTED_MEDIA_TYPE for a declared type that is not audio. Read errors
// of the body are returned wrapped (an *http.MaxBytesError stays in the
// chain for the transport to map); io.ErrUnexpectedEOF, a stream shorter than
// announced, is INVALID_INPUT with details.reason "truncated".
//
// Nothing is left behind by a failure: the staged file is removed, and a
// blob published for this upload is deleted when the row insert fails,
// unless another asset already references the same content. Publishing,
// inserting and that clean-up hold a per-digest lock, so a concurrent upload
// of the same content in this process never loses its blob. Hosts that share
// one blob directory do not share that lock; a blob published by two hosts
// at once whose one row insert fails is kept if the other row committed by
// the time of the reference check (a narrower window, documented, not closed).
func (s *Service) Upload(ctx context.Context, read Store, in UploadInput, unit UnitFunc) (Asset, error) {
	const op = "asset.Upload"
	if in.Origin == "" {
		in.Origin = Uploaded
	}
	if !in.Origin.Valid() {
		return Asset{}, fault.Invalid(op, "origin", "Unknown origin.")
	}
	lr := &limitReader{r: in.Body, left: s.max}
	staged, err := s.blobs.Stage(ctx, lr)
	if err != nil {
		if lr.over {
			return Asset{}, fault.E(op, fault.PayloadTooLarge, fmt.Sprintf("The file exceeds the limit of %d bytes.", s.max)).
				With("limit", s.max).With("field", "file")
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Asset{}, &fault.Error{Op: op, Code: fault.InvalidInput, Message: "The upload ended before the announced length.",
				Details: map[string]any{"field": "file", "reason": "truncated"}, Err: err}
		}
		return Asset{}, fault.Wrap(op, err)
	}
	published := false
	defer func() {
		if !published {
			_ = staged.Discard()
		}
	}()
	info := staged.Info()
	m, err := Sniff(staged, info.Size)
	if err != nil {
		return Asset{}, err
	}
	if err := checkDeclared(in.DeclaredType, in.Filename, m.Format); err != nil {
		return Asset{}, err
	}
	a := Asset{
		Scope: in.Scope, MediaType: m.Format.MediaType(), Size: info.Size, SHA256: info.SHA256,
		Origin: in.Origin, Filename: SanitizeFilename(in.Filename), CreatedBy: in.Creator,
		DurationEstimated: m.DurationEstimated,
	}
	if m.HasDuration {
		d := m.DurationMs
		a.DurationMs = &d
	}
	if m.SampleRate > 0 {
		a.SampleRate = intPtr(m.SampleRate)
	}
	if m.Channels > 0 {
		a.Channels = intPtr(m.Channels)
	}
	if m.BitDepth > 0 {
		a.BitDepth = intPtr(m.BitDepth)
	}

	unlock := s.locks.lock(info.SHA256)
	defer unlock()
	created, err := staged.Commit(ctx)
	if err != nil {
		return Asset{}, fault.Wrap(op, err)
	}
	published = true
	_ = staged.Discard() // releases the staging handle; the content is published
	row := a
	err = unit(ctx, func(st Store) (Asset, error) {
		var err error
		a, err = st.AssetInsert(ctx, row)
		return a, err
	})
	if err != nil {
		if created {
			s.dropUnreferenced(context.WithoutCancel(ctx), read, info.SHA256)
		}
		return Asset{}, fault.Wrap(op, err)
	}
	return a, nil
}

// dropUnreferenced deletes a blob no asset row references. Failures leave a
// stray blob (harmless: content-addressed, re-used by the next identical
// upload) and are not reported over the upload's own error.
func (s *Service) dropUnreferenced(ctx context.Context, read Store, sha string) {
	ref, err := read.AssetReferenced(ctx, sha)
	if err != nil || ref {
		return
	}
	_ = s.blobs.Delete(ctx, sha)
}

// Get returns the asset with id in scope; NOT_FOUND when there is none.
func (s *Service) Get(ctx context.Context, st Store, scope Scope, id string) (Asset, error) {
	a, err := st.AssetGet(ctx, scope, id)
	if err != nil {
		return Asset{}, fault.Wrap("asset.Get", err)
	}
	return a, nil
}

// Open opens a's content. A blob missing under an existing row is INTERNAL
// (storage lost data), never NOT_FOUND.
func (s *Service) Open(ctx context.Context, a Asset) (Blob, error) {
	const op = "asset.Open"
	b, err := s.blobs.Open(ctx, a.SHA256)
	if err != nil {
		// %v, not %w: a missing blob under a row is not the client's NOT_FOUND.
		return nil, fault.Wrap(op, fmt.Errorf("blob %s of asset %s: %v", a.SHA256, a.ID, err))
	}
	if b.Size() != a.Size {
		b.Close()
		return nil, fault.Wrap(op, fmt.Errorf("blob %s is %d bytes, asset %s says %d", a.SHA256, b.Size(), a.ID, a.Size))
	}
	return b, nil
}

func intPtr(n int) *int { return &n }

// limitReader reads at most left bytes and fails, marking over, on more.
type limitReader struct {
	r    io.Reader
	left int64
	over bool
}

// errTooLarge is limitReader's failure.
var errTooLarge = errors.New("content exceeds the upload limit")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		l.over = true
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		l.over = true
		return 0, errTooLarge
	}
	return n, err
}

// hashLocks serializes publish, insert and clean-up per digest.
type hashLocks struct {
	mu sync.Mutex
	m  map[string]*hashLock
}

type hashLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes the digest's lock and returns its release.
func (h *hashLocks) lock(sha string) func() {
	h.mu.Lock()
	if h.m == nil {
		h.m = map[string]*hashLock{}
	}
	l := h.m[sha]
	if l == nil {
		l = &hashLock{}
		h.m[sha] = l
	}
	l.refs++
	h.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		h.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(h.m, sha)
		}
		h.mu.Unlock()
	}
}
