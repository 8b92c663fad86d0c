package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/marketplace"
)

// AssetView is an asset record as the API shows it.
type AssetView struct {
	// ID is the asset's id.
	ID string `json:"id" example:"ast_01jd0000000000000000000000"`
	// Object is always "asset".
	Object string `json:"object" example:"asset"`
	// Environment is the environment (test or live) of the key or session that created the asset.
	Environment string `json:"environment" example:"test"`
	MediaType   string `json:"mediaType" doc:"The media type sniffed from the content, not the one declared." enum:"audio/wav,audio/flac,audio/mpeg" example:"audio/wav"`
	// SizeBytes is the content's length in bytes.
	SizeBytes int64  `json:"sizeBytes" example:"1764044"`
	SHA256    string `json:"sha256" doc:"Lowercase hex SHA-256 of the content; the content's ETag." example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Claimed holds the audio parameters the file's header claims.
	Claimed  AssetClaims `json:"claimed" doc:"The audio parameters the file's header claims, read without decoding: claims, not measurements. A header can claim an hour over a few kilobytes of audio, or a few seconds over an hour of it; sound operations count what they decode against their own bound whatever is claimed here (analysis measures the real duration)."`
	Origin   string      `json:"origin" doc:"How the bytes came to be; the asset's provenance route tells more. No route makes a remixed asset yet." enum:"uploaded,generated,derived,remixed" example:"uploaded"`
	Filename string      `json:"filename" doc:"The client's file name, sanitized; empty when none was sent." example:"take-1.wav"`
	// CreatedBy is who created the asset.
	CreatedBy AssetCreator `json:"createdBy"`
	// CreatedAt is when the asset was created.
	CreatedAt time.Time `json:"createdAt"`
}

// AssetClaims are the audio parameters an asset's header claims.
type AssetClaims struct {
	// DurationSeconds is the claimed duration; null when the header claims none.
	DurationSeconds *float64 `json:"durationSeconds" doc:"The duration the header claims, in seconds (millisecond precision); null when it claims none. At most 14400 (4 hours) is accepted at upload." example:"10"`
	// DurationEstimated marks a duration estimated from size and bitrate.
	DurationEstimated bool `json:"durationEstimated" doc:"True when durationSeconds is estimated from size and bitrate (constant-bitrate MP3 without a frame count) rather than read from the header." example:"false"`
	// SampleRate is the claimed sample rate.
	SampleRate *int `json:"sampleRate" doc:"The sample rate the header claims, in Hz (8000 to 192000 are accepted at upload); null when unknown." example:"44100"`
	// Channels is the claimed channel count.
	Channels *int `json:"channels" doc:"The channel count the header claims (1 to 8 are accepted at upload); null when unknown." example:"2"`
	// BitDepth is the claimed bits per sample.
	BitDepth *int `json:"bitDepth" doc:"The bits per sample the header claims; null for formats without one (MP3)." example:"16"`
}

// AssetCreator names who created an asset.
type AssetCreator struct {
	// UserID is the user who created the asset, or on whose behalf an API key did.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// KeyID is the API key that uploaded it, when a key did ("" for a session).
	KeyID string `json:"keyId" example:"key_01jd0000000000000000000000"`
}

func assetView(a asset.Asset) AssetView {
	v := AssetView{
		ID: a.ID, Object: "asset", Environment: a.Scope.Environment, MediaType: a.MediaType, SizeBytes: a.Size,
		SHA256: a.SHA256, Claimed: AssetClaims{DurationEstimated: a.DurationEstimated, SampleRate: a.SampleRate,
			Channels: a.Channels, BitDepth: a.BitDepth}, Origin: string(a.Origin), Filename: a.Filename,
		CreatedBy: AssetCreator{UserID: a.CreatedBy.UserID, KeyID: a.CreatedBy.KeyID}, CreatedAt: a.CreatedAt,
	}
	if a.DurationMs != nil {
		v.Claimed.DurationSeconds = new(float64(*a.DurationMs) / 1000)
	}
	return v
}

func exampleAsset() AssetView {
	d, rate, ch, bits := 10.0, 44100, 2, 16
	return AssetView{
		ID: "ast_01jd0000000000000000000000", Object: "asset", Environment: "test", MediaType: "audio/wav",
		SizeBytes: 1764044, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Claimed: AssetClaims{DurationSeconds: &d, SampleRate: &rate, Channels: &ch, BitDepth: &bits}, Origin: "uploaded", Filename: "take-1.wav",
		CreatedBy: AssetCreator{UserID: "usr_01jd0000000000000000000000", KeyID: "key_01jd0000000000000000000000"},
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// assetScope is the principal's tenant, workspace and environment.
func assetScope(p *access.Principal) asset.Scope {
	return asset.Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment)}
}

// multipartSlack is what a multipart body may carry beyond the file itself
// (boundaries, part headers, small fields).
const multipartSlack = 64 << 10

// assetFileField is the multipart field that carries the file.
const assetFileField = "file"

// assetContentTypes are the media types GET .../content answers with.
func assetContentTypes() []string {
	return []string{"audio/wav", "audio/flac", "audio/mpeg", "application/octet-stream"}
}

// assetRoutes are the asset routes, additions to the spec (which names
// assets by id and their provenance route but not their upload): upload,
// record and content. Reads need project.read (scope read), uploads
// project.update (scope projects:write). Every read is scoped to the
// caller's tenant, workspace and environment; another scope's asset is
// 404, except that the content of an asset the caller's workspace holds a
// license to (a marketplace order of it settled) is served to it through
// market.
func assetRoutes(svc *asset.Service, market *marketplace.Service) []Route {
	read := func(r Route) Route {
		r.Tag, r.Auth, r.Private = transport.TagProjects, transport.AuthSessionOrKey, true
		r.Permission, r.Scope, r.Idempotency = access.ProjectRead, access.ScopeRead, transport.IdempotencyNone
		return r
	}
	uploadTypes := append([]string{"multipart/form-data"}, asset.UploadMediaTypes()...)
	return []Route{
		{Method: http.MethodPost, Pattern: "/api/v1/assets", OperationID: "uploadAsset", Status: http.StatusCreated,
			Tag: transport.TagProjects, Auth: transport.AuthSessionOrKey, Private: true,
			Permission: access.ProjectUpdate, Scope: access.ScopeProjectsWrite, Idempotency: transport.IdempotencyNone,
			Summary: "Upload an audio asset",
			Description: "Addition to the spec. Streams a WAV, FLAC or MP3 file into platform storage, either as " +
				"`multipart/form-data` with the file in the field `file` (its part's Content-Type or filename extension is the " +
				"declared type) or as the raw body with an audio Content-Type. The content is sniffed: its real type, and " +
				"the sample rate, channels, bit depth and duration its header claims (shown under `claimed`: claims read " +
				"without decoding, not measurements), and a file that is not what it " +
				"declares, is empty or is truncated is 400 INVALID_INPUT (details.field `file`, details.detected, " +
				"details.reason) with nothing stored. A header claiming channels outside 1..8, a sample rate outside " +
				"8000..192000 Hz or a duration over 4 hours is 400 INVALID_INPUT naming the claim (details.field " +
				"`claimed.channels`, `claimed.sampleRate` or `claimed.durationSeconds`, details.reason `out_of_bounds`, " +
				"details.claimed, details.minimum, details.maximum). A declared type that is not audio is 415. Uploads over the host's " +
				"limit (default 200 MiB) are 413 PAYLOAD_TOO_LARGE (details.reason `file_size`, details.limit). Every asset's " +
				"bytes count against the workspace's storage quota in its environment, set by its plan (free 1 GiB, pro 20 GiB, " +
				"studio 100 GiB); an upload that would pass it is 413 PAYLOAD_TOO_LARGE with details.reason `storage_quota`, " +
				"details.limit (the quota in bytes) and details.used (the bytes stored), with nothing stored, and once the quota " +
				"is spent the body is refused before it is read. Sound outputs count and are held to the same quota; " +
				"generated tracks count but are never refused. Uploads take no Idempotency-Key: the body is " +
				"streamed, not buffered, so it cannot be hashed before it is read; identical content is stored once " +
				"(content-addressed by SHA-256) and a retry makes a second record pointing at the same bytes.",
			Stream: true, BodyLimit: svc.MaxUploadBytes() + multipartSlack, RequestContentTypes: uploadTypes,
			FormFileField: assetFileField, Response: exampleAsset(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				in, err := uploadSource(c)
				if err != nil {
					return nil, err
				}
				in.Scope = assetScope(c.Principal)
				in.Creator = asset.Creator{UserID: c.Principal.UserID, KeyID: c.Principal.KeyID}
				if c.Authority != nil {
					in.Plan = c.Authority.Plan
				}
				a, err := svc.Upload(ctx, c.Tx, in, func(ctx context.Context, insert func(asset.Store) (asset.Asset, error)) error {
					return c.Commit(ctx, func(tx Tx) error { _, err := insert(tx); return err })
				})
				if err != nil {
					return nil, transport.StreamReadError(err)
				}
				return assetView(a), nil
			}},
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/assets/{assetId}", OperationID: "getAsset",
			Summary: "Get an asset", Description: "Addition to the spec. The asset record of the caller's workspace and environment; any other asset is 404.",
			Response: exampleAsset(),
			Handle: func(ctx context.Context, c *Call) (any, error) {
				a, err := svc.Get(ctx, c.Tx, assetScope(c.Principal), c.PathValue("assetId"))
				if err != nil {
					return nil, err
				}
				return assetView(a), nil
			}}),
		read(Route{Method: http.MethodGet, Pattern: "/api/v1/assets/{assetId}/content", OperationID: "getAssetContent",
			Summary: "Download an asset's content",
			Description: "Addition to the spec. The asset's bytes with its media type, Content-Length, `ETag` (the quoted " +
				"SHA-256) and `Accept-Ranges: bytes`. One `Range: bytes=first-last` (or `first-`, `-suffix`) answers 206 " +
				"with Content-Range; a range starting past the end is 416 RANGE_NOT_SATISFIABLE with `Content-Range: bytes */size`; " +
				"several ranges are answered with the whole content. `If-None-Match` naming the ETag answers 304; `If-Range` " +
				"with another validator answers the whole content. The asset is the caller's workspace's, or one of another " +
				"workspace the caller's workspace holds a license to in the caller's environment (a marketplace order of it was " +
				"paid and fulfilled: GET /api/v1/entitlements); any other asset is 404.",
			ResponseContentTypes: assetContentTypes(), Ranges: true,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				a, err := svc.Get(ctx, c.Tx, assetScope(c.Principal), c.PathValue("assetId"))
				if fault.Is(err, fault.NotFound) && market != nil {
					a, err = market.LicensedAsset(ctx, c.Tx, c.Principal, c.PathValue("assetId"))
				}
				if err != nil {
					return nil, err
				}
				etag := `"` + a.SHA256 + `"`
				if inm := c.Request.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
					return notModified{etag: etag}, nil
				}
				start, length, partial := int64(0), a.Size, false
				if h := c.Request.Header.Get("Range"); h != "" {
					if ir := c.Request.Header.Get("If-Range"); ir == "" || ir == etag {
						s, n, ok, err := parseRange(h, a.Size)
						if err != nil {
							return nil, err
						}
						if ok {
							start, length, partial = s, n, true
						}
					}
				}
				b, err := svc.Open(ctx, a)
				if err != nil {
					return nil, err
				}
				return &content{blob: b, mediaType: a.MediaType, etag: etag, start: start, length: length, size: a.Size, partial: partial}, nil
			}}),
	}
}

// uploadSource finds the file of an upload: the multipart field "file", or
// the raw body.
func uploadSource(c *Call) (asset.UploadInput, error) {
	const op = "transport.uploadSource"
	ct := c.Request.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "multipart/form-data" {
		return asset.UploadInput{Body: c.Request.Body, DeclaredType: ct}, nil
	}
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return asset.UploadInput{}, &fault.Error{Op: op, Code: fault.InvalidInput, Message: "The multipart body is malformed.",
			Details: map[string]any{"field": assetFileField}, Err: err}
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return asset.UploadInput{}, fault.Invalid(op, assetFileField, "The multipart body has no file field.")
		}
		if err != nil {
			if err = transport.StreamReadError(err); fault.Is(err, fault.PayloadTooLarge) {
				return asset.UploadInput{}, err
			}
			return asset.UploadInput{}, &fault.Error{Op: op, Code: fault.InvalidInput, Message: "The multipart body is malformed.",
				Details: map[string]any{"field": assetFileField}, Err: err}
		}
		if p.FormName() == assetFileField {
			return asset.UploadInput{Body: p, DeclaredType: p.Header.Get("Content-Type"), Filename: p.FileName()}, nil
		}
		if _, err := io.Copy(io.Discard, p); err != nil { // other fields are ignored
			return asset.UploadInput{}, transport.StreamReadError(fault.Wrap(op, err))
		}
	}
}

// etagMatch reports whether an If-None-Match list names etag ("*" names
// every representation; weak validators compare weakly, RFC 9110 13.1.2).
func etagMatch(list, etag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// parseRange parses a Range header against a content of size bytes. ok is
// false when the header is to be ignored (not bytes, several ranges, or
// malformed: RFC 9110 14.2 lets a server ignore it); a range no byte
// satisfies is RANGE_NOT_SATISFIABLE with details.size.
func parseRange(h string, size int64) (start, length int64, ok bool, err error) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, nil
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, nil
	}
	unsatisfiable := fault.E("transport.parseRange", fault.RangeNotSatisfiable,
		fmt.Sprintf("The range %q lies outside the content's %d bytes.", spec, size)).With("size", size)
	if first == "" { // suffix: the last n bytes
		n, perr := strconv.ParseInt(last, 10, 64)
		if perr != nil || n < 0 {
			return 0, 0, false, nil
		}
		if n == 0 || size == 0 {
			return 0, 0, false, unsatisfiable
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	s, perr := strconv.ParseInt(first, 10, 64)
	if perr != nil || s < 0 {
		return 0, 0, false, nil
	}
	e := size - 1
	if last != "" {
		if e, perr = strconv.ParseInt(last, 10, 64); perr != nil || e < s {
			return 0, 0, false, nil
		}
		e = min(e, size-1)
	}
	if s >= size {
		return 0, 0, false, unsatisfiable
	}
	return s, e - s + 1, true, nil
}

// content writes an asset's bytes, whole or one range.
type content struct {
	blob          asset.Blob
	mediaType     string
	etag          string
	start, length int64
	size          int64
	partial       bool
}

// WriteResponse implements Writer. The bytes stream from the blob; memory
// does not grow with the content's size.
func (c *content) WriteResponse(w http.ResponseWriter, r *http.Request) int {
	defer c.blob.Close()
	h := w.Header()
	h.Set("Content-Type", c.mediaType)
	h.Set("Content-Length", strconv.FormatInt(c.length, 10))
	h.Set("ETag", c.etag)
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Content-Type-Options", "nosniff")
	// The content is immutable and private: clients may keep it and revalidate.
	h.Set("Cache-Control", "private, no-cache")
	status := http.StatusOK
	if c.partial {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", c.start, c.start+c.length-1, c.size))
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		// The client has gone if this fails; the status is already sent.
		_, _ = io.Copy(w, io.NewSectionReader(c.blob, c.start, c.length))
	}
	return status
}

// notModified answers 304 to a matching If-None-Match.
type notModified struct{ etag string }

// WriteResponse implements Writer.
func (n notModified) WriteResponse(w http.ResponseWriter, r *http.Request) int {
	w.Header().Set("ETag", n.etag)
	w.Header().Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusNotModified)
	return http.StatusNotModified
}

// Compile-time checks: both answers are Writers.
var (
	_ transport.Writer = (*content)(nil)
	_ transport.Writer = notModified{}
)
