package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// multipartBody builds a multipart/form-data body with the file in field
// "file" (part Content-Type partType) and returns it with its Content-Type.
func multipartBody(t *testing.T, filename, partType string, content []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.WriteField("note", "ignored"); err != nil {
		t.Fatal(err)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", partType)
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func upload(s *platformtest.System, key, contentType string, body []byte) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/assets", Key: key, Body: body,
		Header: map[string]string{"Content-Type": contentType}})
}

// blobFiles counts the files under the blob directory (published and staged).
func blobFiles(t *testing.T, s *platformtest.System) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(s.BlobDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func assetCount(t *testing.T, s *platformtest.System) int {
	t.Helper()
	n, err := s.DB.Read().AssetCount(context.Background(), s.Boot.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAssetUploadAndDownload(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		wav := assettest.WAV(44100, 2, 44100*2)
		r := upload(s, s.Boot.TestKey, "audio/wav", wav)
		if r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		var a api.AssetView
		r.Data(t, &a)
		if !strings.HasPrefix(a.ID, "ast_") || a.MediaType != "audio/wav" || a.SizeBytes != int64(len(wav)) ||
			*a.Claimed.DurationSeconds != 2 || *a.Claimed.SampleRate != 44100 || *a.Claimed.Channels != 2 || *a.Claimed.BitDepth != 16 ||
			a.Origin != "uploaded" || a.CreatedBy.KeyID != s.Boot.KeyID || a.Environment != "test" || len(a.SHA256) != 64 {
			t.Fatalf("asset = %+v", a)
		}
		if n, _ := s.DB.Read().ReceiptCount(context.Background(), s.Boot.WorkspaceID, "uploadAsset"); n != 1 {
			t.Fatalf("receipts = %d", n)
		}

		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + a.ID, Key: s.Boot.TestKey})
		var got api.AssetView
		r.Data(t, &got)
		if got.ID != a.ID || got.SHA256 != a.SHA256 {
			t.Fatalf("get = %+v", got)
		}

		content := "/api/v1/assets/" + a.ID + "/content"
		etag := `"` + a.SHA256 + `"`
		r = s.Do(platformtest.Request{Method: "GET", Path: content, Key: s.Boot.TestKey})
		if r.Status != 200 || !bytes.Equal(r.Body, wav) || r.Header.Get("Content-Type") != "audio/wav" ||
			r.Header.Get("ETag") != etag || r.Header.Get("Accept-Ranges") != "bytes" ||
			r.Header.Get("Content-Length") != fmt.Sprint(len(wav)) || r.Header.Get("X-Request-Id") == "" {
			t.Fatalf("content: %d %v (%d bytes)", r.Status, r.Header, len(r.Body))
		}

		rng := func(h map[string]string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "GET", Path: content, Key: s.Boot.TestKey, Header: h})
		}
		r = rng(map[string]string{"Range": "bytes=10-19"})
		if r.Status != 206 || !bytes.Equal(r.Body, wav[10:20]) || r.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(wav)) {
			t.Fatalf("range: %d %v %q", r.Status, r.Header, r.Body)
		}
		r = rng(map[string]string{"Range": "bytes=-4"})
		if r.Status != 206 || !bytes.Equal(r.Body, wav[len(wav)-4:]) {
			t.Fatalf("suffix range: %d %v", r.Status, r.Header)
		}
		r = rng(map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(wav))})
		if r.Status != 416 || r.Code() != "RANGE_NOT_SATISFIABLE" || r.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(wav)) {
			t.Fatalf("past the end: %d %v %s", r.Status, r.Header, r.Body)
		}
		r = rng(map[string]string{"If-None-Match": etag})
		if r.Status != 304 || len(r.Body) != 0 || r.Header.Get("ETag") != etag {
			t.Fatalf("If-None-Match: %d %v", r.Status, r.Header)
		}
		r = rng(map[string]string{"If-None-Match": `"other"`})
		if r.Status != 200 {
			t.Fatalf("If-None-Match other: %d", r.Status)
		}
		r = rng(map[string]string{"Range": "bytes=0-3", "If-Range": `"stale"`})
		if r.Status != 200 || len(r.Body) != len(wav) {
			t.Fatalf("If-Range stale: %d", r.Status)
		}

		// Multipart, FLAC, with a file name; the same bytes twice share one blob.
		flac := assettest.FLAC(48000, 2, 24, 48000*3)
		body, ct := multipartBody(t, `dir/My "Song".flac`, "audio/flac", flac)
		var ids []string
		for range 2 {
			r = upload(s, s.Boot.TestKey, ct, body)
			if r.Status != 201 {
				t.Fatalf("multipart: %d %s", r.Status, r.Body)
			}
			var f api.AssetView
			r.Data(t, &f)
			if f.MediaType != "audio/flac" || *f.Claimed.DurationSeconds != 3 || *f.Claimed.BitDepth != 24 || f.Filename != `My "Song".flac` {
				t.Fatalf("flac = %+v", f)
			}
			ids = append(ids, f.ID)
		}
		if ids[0] == ids[1] || blobFiles(t, s) != 2 {
			t.Fatalf("ids %v, %d blob files (want 2: the WAV and the shared FLAC)", ids, blobFiles(t, s))
		}

		// MP3 as application/octet-stream with a .mp3 name: the content decides.
		mp3 := assettest.MP3(assettest.MP3Options{Frames: 40, Xing: true, ID3: 64})
		body, ct = multipartBody(t, "beat.mp3", "application/octet-stream", mp3)
		r = upload(s, s.Boot.TestKey, ct, body)
		var m api.AssetView
		r.Data(t, &m)
		if m.MediaType != "audio/mpeg" || m.Claimed.BitDepth != nil || m.Claimed.DurationEstimated || *m.Claimed.DurationSeconds != 1.018 {
			t.Fatalf("mp3 = %+v", m)
		}
	})
}

func TestAssetUploadRejects(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{MaxUploadBytes: 64 << 10}, func(t *testing.T, s *platformtest.System) {
		wav := assettest.WAV(8000, 1, 8000)
		mp3 := assettest.MP3(assettest.MP3Options{})
		mislabelled, mct := multipartBody(t, "song.wav", "audio/wav", mp3)
		noFile, nct := multipartBody(t, "x.wav", "audio/wav", nil)
		noFile = bytes.Replace(noFile, []byte(`name="file"`), []byte(`name="other"`), 1)
		cases := []struct {
			name, contentType string
			body              []byte
			status            int
			code, detected    string
		}{
			{"truncated", "audio/wav", wav[:len(wav)-500], 400, "INVALID_INPUT", "wav"},
			{"empty", "audio/wav", []byte{}, 400, "INVALID_INPUT", "unknown"},
			{"mp3AsWav", "audio/wav", mp3, 400, "INVALID_INPUT", "audio/mpeg"},
			{"mislabelledPart", mct, mislabelled, 400, "INVALID_INPUT", "audio/mpeg"},
			{"garbage", "audio/flac", []byte(strings.Repeat("garbage ", 100)), 400, "INVALID_INPUT", "unknown"},
			{"noFileField", nct, noFile, 400, "INVALID_INPUT", ""},
			{"json", "application/json", []byte(`{"file":"x"}`), 415, "UNSUPPORTED_MEDIA_TYPE", ""},
			{"overLimit", "audio/wav", assettest.WAV(8000, 1, 40000), 413, "PAYLOAD_TOO_LARGE", ""},
			{"overBodyLimit", "audio/wav", assettest.WAV(44100, 2, 100000), 413, "PAYLOAD_TOO_LARGE", ""},
		}
		for _, c := range cases {
			r := upload(s, s.Boot.TestKey, c.contentType, c.body)
			if r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
				continue
			}
			if c.detected != "" {
				d, _ := r.JSON()["error"].(map[string]any)["details"].(map[string]any)
				if d["field"] != "file" || d["detected"] != c.detected {
					t.Errorf("%s: details %v", c.name, d)
				}
			}
		}
		// A stream shorter than its Content-Length.
		resp := rawUpload(t, s, s.Boot.TestKey, wav, len(wav)+1000)
		if resp.StatusCode != 400 {
			t.Errorf("short stream: %d", resp.StatusCode)
		}
		if n := assetCount(t, s); n != 0 {
			t.Fatalf("%d asset rows after rejected uploads", n)
		}
		if n := blobFiles(t, s); n != 0 {
			t.Fatalf("%d blob files after rejected uploads", n)
		}
		// Without the write scope: 403 before the body is read.
		_, ro := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "ro", "scopes": []string{"read"}}, "")
		if r := upload(s, ro.Secret, "audio/wav", wav); r.Code() != "ACCESS_DENIED" {
			t.Fatalf("read-only key upload: %d %s", r.Status, r.Body)
		}
		if r := upload(s, "", "audio/wav", wav); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous upload: %d %s", r.Status, r.Body)
		}
	})
}

// rawUpload sends announced bytes of Content-Length but only body, then
// closes its side of the connection.
func rawUpload(t *testing.T, s *platformtest.System, key string, body []byte, announced int) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/assets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: audio/wav\r\nContent-Length: %d\r\n\r\n", key, announced)
	conn.Write(body)
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	resp.Body.Close()
	return resp
}

func TestAssetScoping(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		r := upload(s, s.Boot.TestKey, "audio/wav", assettest.WAV(8000, 1, 800))
		var a api.AssetView
		r.Data(t, &a)
		other := s.Bootstrap("Other")
		for _, p := range []string{"/api/v1/assets/" + a.ID, "/api/v1/assets/" + a.ID + "/content"} {
			if r := s.Do(platformtest.Request{Method: "GET", Path: p, Key: other.TestKey}); r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Fatalf("other tenant %s: %d %s", p, r.Status, r.Body)
			}
			// The same workspace's live key sees no test asset.
			if r := s.Do(platformtest.Request{Method: "GET", Path: p, Key: s.Boot.LiveKey}); r.Status != 404 {
				t.Fatalf("live key %s: %d %s", p, r.Status, r.Body)
			}
		}
	})
}

// TestStaleUploadStagingIsCleaned checks that the platform's hourly job
// removes staging files a crashed upload left behind, and only old ones.
func TestStaleUploadStagingIsCleaned(t *testing.T) {
	t.Parallel()
	s := platformtest.New(t, platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 20 * time.Millisecond}})
	dir := filepath.Join(s.BlobDir, "tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(dir, "crashed-upload"), filepath.Join(dir, "upload-in-progress")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Hour) // the hourly job becomes due
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(stale); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stale staging file was not cleaned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a recent staging file was removed: %v", err)
	}
}
