package asset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

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
	// QuotaFunc returns the storage quota in bytes of a workspace on plan (the
	// plan in effect for the upload's scope, UploadInput.Plan); zero or less
	// means none. Nil means no quota for any plan.
	QuotaFunc func(plan string) int64
	// Logger receives the staging cleanup's removals; nil discards them.
	Logger *slog.Logger
}

// Service stores and serves assets. It is safe for concurrent use.
type Service struct {
	blobs     BlobStore
	max       int64
	quotaFunc func(string) int64
	locks     hashLocks
	log       *slog.Logger
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
	if cfg.QuotaFunc == nil {
		cfg.QuotaFunc = func(string) int64 { return 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{blobs: cfg.Blobs, max: cfg.MaxUploadBytes, quotaFunc: cfg.QuotaFunc, log: cfg.Logger}, nil
}

// Quota returns the storage quota of a workspace on plan; 0 when none.
func (s *Service) Quota(plan string) int64 { return max(s.quotaFunc(plan), 0) }

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
	// Lineage is what the maker knows of the content's sources; it goes
	// into the asset's Provenance with Origin and Creator.
	Lineage Lineage
	// Plan is the plan in effect for Scope's workspace in its environment:
	// it selects the storage quota (Config.QuotaFunc). A Generated asset is
	// counted but never refused.
	Plan string
}

// UnitFunc runs one unit of work (a transaction): it calls insert with the
// Store bound to it, which writes the asset row and its provenance record
// and returns the stored asset, and makes its own writes beside it (a request receipt, the
// operation an ingested or derived asset belongs to), all committed
// together. An error rolls the asset row back.
type UnitFunc func(ctx context.Context, insert func(Store) (Asset, error)) error

// Upload stages in.Body in the blob store while hashing it, sniffs the
// staged bytes, checks them against the declared type, publishes the blob
// and inserts the asset row with its Provenance (origin, creator, in.Lineage,
// the parents' and the content's hashes) in the unit of work that unit runs.
// read serves the reference check after a failed insert.
//
// Errors: INVALID_INPUT (details.field "file") for empty, truncated,
// malformed or mislabelled content (details.detected says what it is),
// INVALID_INPUT naming the claim (details.field "claimed.channels",
// "claimed.sampleRate" or "claimed.durationSeconds") for a header claim
// out of bounds (CheckClaims), PAYLOAD_TOO_LARGE (details.limit,
// details.reason "file_size") over MaxUploadBytes, PAYLOAD_TOO_LARGE
// (details.reason "storage_quota", details.limit the quota, details.used
// the bytes stored) when the content would take the workspace past its
// storage quota (checked before the body is read, when the quota is
// already spent, and again in the unit of work),
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
	quota := s.Quota(in.Plan)
	if in.Origin == Generated {
		quota = 0
	}
	if quota > 0 {
		// A quota already spent refuses before a byte of the body is read.
		used, err := read.AssetStorageUsed(ctx, in.Scope)
		if err != nil {
			return Asset{}, fault.Wrap(op, err)
		}
		if used >= quota {
			return Asset{}, quotaError(op, quota, used)
		}
	}
	lr := &limitReader{r: in.Body, left: s.max}
	staged, err := s.blobs.Stage(ctx, lr)
	if err != nil {
		if lr.over {
			return Asset{}, fault.E(op, fault.PayloadTooLarge, fmt.Sprintf("The file exceeds the limit of %d bytes.", s.max)).
				With("limit", s.max).With("field", "file").With("reason", "file_size")
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
	if err := CheckClaims(m); err != nil {
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
		used, ok, err := st.AssetStorageAdd(ctx, row.Scope, row.Size, quota)
		if err != nil {
			return Asset{}, err
		}
		if !ok {
			return Asset{}, quotaError(op, quota, used)
		}
		if a, err = st.AssetInsert(ctx, row); err != nil {
			return Asset{}, err
		}
		p, err := provenance(ctx, st, a, in.Lineage)
		if err != nil {
			return Asset{}, err
		}
		return a, st.AssetProvenanceInsert(ctx, p)
	})
	if err != nil {
		if created {
			s.dropUnreferenced(context.WithoutCancel(ctx), read, info.SHA256)
		}
		return Asset{}, fault.Wrap(op, err)
	}
	return a, nil
}

// quotaError is the refusal of content that would take a workspace past
// its storage quota.
func quotaError(op string, quota, used int64) error {
	return fault.E(op, fault.PayloadTooLarge, fmt.Sprintf("The workspace's storage quota of %d bytes would be exceeded.", quota)).
		With("reason", "storage_quota").With("limit", quota).With("used", used).With("field", "file")
}

// Bounds of the claims an upload may make (CheckClaims).
const (
	// MaxClaimedChannels is the most channels a header may claim.
	MaxClaimedChannels = 8
	// MinClaimedSampleRate and MaxClaimedSampleRate bound the sample rate
	// (Hz) a header may claim.
	MinClaimedSampleRate = 8000
	MaxClaimedSampleRate = 192000
	// MaxClaimedDuration is the longest duration a header may claim.
	MaxClaimedDuration = 4 * time.Hour
)

// CheckClaims refuses a header whose claims no accepted file makes:
// channels outside 1..MaxClaimedChannels, a sample rate outside
// MinClaimedSampleRate..MaxClaimedSampleRate, a duration over
// MaxClaimedDuration. Errors are INVALID_INPUT with details.field naming
// the claim as the asset shows it ("claimed.channels", "claimed.sampleRate",
// "claimed.durationSeconds"), details.reason "out_of_bounds",
// details.claimed, and details.minimum and details.maximum.
func CheckClaims(m Media) error {
	const op = "asset.CheckClaims"
	bad := func(field, msg string, claimed, lo, hi any) error {
		return fault.Invalid(op, "claimed."+field, msg).With("reason", "out_of_bounds").
			With("claimed", claimed).With("minimum", lo).With("maximum", hi)
	}
	switch {
	case m.Channels < 1 || m.Channels > MaxClaimedChannels:
		return bad("channels", fmt.Sprintf("The header claims %d channels; at most %d are accepted.", m.Channels, MaxClaimedChannels),
			m.Channels, 1, MaxClaimedChannels)
	case m.SampleRate < MinClaimedSampleRate || m.SampleRate > MaxClaimedSampleRate:
		return bad("sampleRate", fmt.Sprintf("The header claims a sample rate of %d Hz; %d to %d Hz are accepted.", m.SampleRate,
			MinClaimedSampleRate, MaxClaimedSampleRate), m.SampleRate, MinClaimedSampleRate, MaxClaimedSampleRate)
	case m.HasDuration && m.DurationMs > MaxClaimedDuration.Milliseconds():
		return bad("durationSeconds", fmt.Sprintf("The header claims %d seconds; at most %d are accepted.", m.DurationMs/1000,
			int64(MaxClaimedDuration.Seconds())), float64(m.DurationMs)/1000, 0, int64(MaxClaimedDuration.Seconds()))
	}
	return nil
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
