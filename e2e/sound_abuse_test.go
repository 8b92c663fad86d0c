package e2e_test

import (
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
)

// abuseOptions are a system whose jobs are polled often and whose leases
// outlast the clock jumps of the expiry test (a lease passed by the fake
// clock would let the pool reclaim its own running job).
func abuseOptions() platformtest.Options {
	return platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond, Lease: 24 * time.Hour}}
}

// runJob reads the state and attempts of an operation's run job.
func runJob(t *testing.T, s *platformtest.System, opID string) (state string, attempts int) {
	t.Helper()
	var row struct {
		State    string `bun:"state"`
		Attempts int    `bun:"attempts"`
	}
	if err := s.DB.Read().IDB().NewRaw(`SELECT state, attempts FROM jobs WHERE unique_key = ?`, "sound-run:"+opID).
		Scan(context.Background(), &row); err != nil {
		t.Fatalf("run job of %s: %v", opID, err)
	}
	return row.State, row.Attempts
}

// untilJobEnds waits, up to bound, until the run job of an operation is
// in a final state, and returns how long that took.
func untilJobEnds(t *testing.T, s *platformtest.System, opID string, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if st, _ := runJob(t, s, opID); st == "succeeded" || st == "discarded" {
			return time.Since(start)
		}
		if time.Since(start) > bound {
			st, n := runJob(t, s, opID)
			t.Fatalf("the run job of %s is %s (%d attempts) %s later", opID, st, n, bound)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// untilStage waits until an operation reaches stage.
func untilStage(t *testing.T, s *platformtest.System, opID, stage string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := soundOp(t, s, opID)
		if v.Stage == stage && v.Status == "processing" {
			return
		}
		if time.Now().After(deadline) || (v.Status != "queued" && v.Status != "dispatched" && v.Status != "processing") {
			t.Fatalf("operation %s: %s/%s, waiting for %s", opID, v.Status, v.Stage, stage)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// uploadFile uploads audio with the test key and returns the asset.
func uploadFile(t *testing.T, s *platformtest.System, mediaType string, file []byte) api.AssetView {
	t.Helper()
	r := upload(s, s.Boot.TestKey, mediaType, file)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var a api.AssetView
	r.Data(t, &a)
	return a
}

// acceptAnalysis starts an analysis of every field and returns its id.
func acceptAnalysis(t *testing.T, s *platformtest.System, idem, assetID string) string {
	t.Helper()
	r := analyze(s, idem, map[string]any{"input": map[string]any{"assetId": assetID}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("analyze: %d %s", r.Status, r.Body)
	}
	var v api.SoundOperationView
	r.Data(t, &v)
	return v.ID
}

// longFLAC is ten minutes of 48 kHz stereo, the free plan's bound, in
// about 110 KB: an analysis of it takes seconds of work.
func longFLAC() []byte { return assettest.ConstantFLAC(48000, 2, 16, 4096, 600*48000, 600*48000, 300) }

// The decoding bomb. A header claiming ten hours, or sixteen channels, is
// refused at upload naming the claim. A 34 KB FLAC holding a real hour is
// stored (its claims shown as claims) but an analysis of it on the free
// plan is refused at admission. A FLAC whose header claims one second but
// that holds eleven minutes is accepted and stopped by the decoder at the
// plan's ten minutes: the operation fails once with INVALID_INPUT and the
// limit, and its job ran once and completed.
func TestSoundDecodingBomb(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, abuseOptions(), func(t *testing.T, s *platformtest.System) {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/capabilities", Key: s.Boot.TestKey})
		var caps map[string]any
		r.Data(t, &caps)
		if caps["limits"].(map[string]any)["maxInputDurationSeconds"] != float64(600) {
			t.Fatalf("capabilities: %s", r.Body)
		}

		for name, c := range map[string]struct {
			file      []byte
			mediaType string
			field     string
		}{
			"ten hours":        {assettest.FLAC(44100, 2, 16, 10*3600*44100), "audio/flac", "claimed.durationSeconds"},
			"sixteen channels": {append(assettest.WAVHeader(48000, 16, 16, false, 320), make([]byte, 320)...), "audio/wav", "claimed.channels"},
		} {
			r := upload(s, s.Boot.TestKey, c.mediaType, c.file)
			d, _ := r.JSON()["error"].(map[string]any)["details"].(map[string]any)
			if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || d["field"] != c.field || d["reason"] != "out_of_bounds" {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM assets`); n != 0 {
			t.Fatalf("%d assets stored by refused uploads", n)
		}

		hour := assettest.ConstantFLAC(44100, 2, 16, 65535, 3600*44100, 3600*44100, 300)
		a := uploadFile(t, s, "audio/flac", hour)
		if *a.Claimed.DurationSeconds != 3600 || *a.Claimed.Channels != 2 || *a.Claimed.SampleRate != 44100 {
			t.Fatalf("claims of the hour: %+v", a.Claimed)
		}
		t.Logf("an hour of 44.1 kHz stereo in a %d-byte FLAC", len(hour))
		r = analyze(s, "bomb-hour", map[string]any{"input": map[string]any{"assetId": a.ID}})
		d, _ := r.JSON()["error"].(map[string]any)["details"].(map[string]any)
		if r.Status != http.StatusBadRequest || r.Code() != "INVALID_INPUT" || d["reason"] != "duration_limit" ||
			d["limit"] != float64(600) || d["claimedDurationSeconds"] != float64(3600) || d["field"] != "input.assetId" {
			t.Fatalf("analysis of the hour: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM sound_operations`); n != 0 {
			t.Fatalf("%d operations after a refused admission", n)
		}

		lying := uploadFile(t, s, "audio/flac", assettest.ConstantFLAC(8000, 1, 16, 4096, 660*8000, 8000, 300))
		if *lying.Claimed.DurationSeconds != 1 {
			t.Fatalf("the lying header's claim: %+v", lying.Claimed)
		}
		id := acceptAnalysis(t, s, "bomb-lying", lying.ID)
		took := untilJobEnds(t, s, id, 20*time.Second)
		v := soundOp(t, s, id)
		if v.Status != "failed" || v.Failure == nil || v.Failure.Code != "INVALID_INPUT" || v.Failure.Details["reason"] != "duration_limit" ||
			v.Failure.Details["limit"] != float64(600) {
			t.Fatalf("the lying header's analysis: %+v %+v", v, v.Failure)
		}
		if st, n := runJob(t, s, id); st != "succeeded" || n != 1 {
			t.Fatalf("run job: %s after %d attempts", st, n)
		}
		t.Logf("a FLAC claiming 1 s and holding 11 min was stopped at the 10 min bound in %v", took.Round(time.Millisecond))
		r = s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id + "/result", Key: s.Boot.TestKey})
		if r.Status != http.StatusConflict || r.Code() != "RESULT_NOT_READY" {
			t.Fatalf("result: %d %s", r.Status, r.Body)
		}
	})
}

// A long analysis cancelled through the route stops within a second: its
// run job completes, once, and the operation stays cancelled with no
// result.
func TestSoundCancelStopsRunningWork(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, abuseOptions(), func(t *testing.T, s *platformtest.System) {
		a := uploadFile(t, s, "audio/flac", longFLAC())
		id := acceptAnalysis(t, s, "cancel-long", a.ID)
		untilStage(t, s, id, "analyzing")
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/operations/" + id + "/cancel", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "cancel-long"}})
		if r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		took := untilJobEnds(t, s, id, 10*time.Second)
		t.Logf("the run job ended %v after the cancel", took.Round(time.Millisecond))
		if st, n := runJob(t, s, id); st != "succeeded" || n != 1 {
			t.Fatalf("run job: %s after %d attempts", st, n)
		}
		assertEndedWithoutResult(t, s, id, "cancelled")
	})
}

// A long analysis whose deadline passes (on the test clock) stops within a
// second of the clock passing it and ends expired with no result.
func TestSoundExpiryStopsRunningWork(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, abuseOptions(), func(t *testing.T, s *platformtest.System) {
		a := uploadFile(t, s, "audio/flac", longFLAC())
		id := acceptAnalysis(t, s, "expire-long", a.ID)
		untilStage(t, s, id, "analyzing")
		s.Clock.Advance(31 * time.Minute) // the deadline is 30 minutes
		took := untilJobEnds(t, s, id, 10*time.Second)
		t.Logf("the run job ended %v after the deadline passed", took.Round(time.Millisecond))
		assertEndedWithoutResult(t, s, id, "expired")
	})
}

// assertEndedWithoutResult checks an operation ended in status with no
// result, event or output, and stays so.
func assertEndedWithoutResult(t *testing.T, s *platformtest.System, id, status string) {
	t.Helper()
	time.Sleep(50 * time.Millisecond) // room for a late write, were there one
	if v := soundOp(t, s, id); v.Status != status || v.EndedAt == nil || v.Failure != nil {
		t.Fatalf("operation: %+v", v)
	}
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id + "/result", Key: s.Boot.TestKey})
	d, _ := r.JSON()["error"].(map[string]any)["details"].(map[string]any)
	if r.Status != http.StatusConflict || d["status"] != status {
		t.Fatalf("result: %d %s", r.Status, r.Body)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM sound_operations WHERE id = ? AND result IS NULL`, id); n != 1 {
		t.Fatal("a result was stored")
	}
	if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE aggregate_id = ?`, id); n != 0 {
		t.Fatalf("%d events", n)
	}
}

// A mastering whose output would pass the host's upload limit fails once
// with PAYLOAD_TOO_LARGE and the limit: its job ran once and completed,
// and no output asset was stored.
func TestSoundOutputOverTheLimitFailsOnce(t *testing.T) {
	t.Parallel()
	opts := abuseOptions()
	opts.MaxUploadBytes = 64 << 10
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		in := uploadFile(t, s, "audio/wav", monoTone(8000, 8000)) // 16 KB; the 48 kHz 24-bit master is 144 KB
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/master", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "master-big"},
			Body:   map[string]any{"input": map[string]any{"assetId": in.ID}, "output": map[string]any{"format": "wav", "sampleRate": 48000, "bitDepth": 24}}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("master: %d %s", r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		untilJobEnds(t, s, v.ID, 20*time.Second)
		v = soundOp(t, s, v.ID)
		if v.Status != "failed" || v.Failure.Code != "PAYLOAD_TOO_LARGE" || v.Failure.Details["reason"] != "output_size" ||
			v.Failure.Details["limit"] != float64(64<<10) {
			t.Fatalf("operation: %+v %+v", v, v.Failure)
		}
		if st, n := runJob(t, s, v.ID); st != "succeeded" || n != 1 {
			t.Fatalf("run job: %s after %d attempts", st, n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM assets WHERE origin = 'derived'`); n != 0 {
			t.Fatalf("%d derived assets", n)
		}
	})
}

// monoTone is a 16-bit mono WAV of a 220 Hz tone.
func monoTone(rate, frames int) []byte {
	b := assettest.WAVHeader(rate, 1, 16, false, int64(frames*2))
	for i := range frames {
		b = binary.LittleEndian.AppendUint16(b, uint16(int16(8000*math.Sin(2*math.Pi*220*float64(i)/float64(rate)))))
	}
	return b
}

// The storage quota of the workspace's plan holds under concurrent
// uploads: of six 30 KB uploads against a 100 KB quota, three are stored
// and three refused with PAYLOAD_TOO_LARGE, reason storage_quota, and the
// workspace never stores more than its quota. A sound output that would
// pass what is left fails its operation once with the same code.
func TestStorageQuotaHoldsUnderConcurrentUploads(t *testing.T) {
	t.Parallel()
	opts := abuseOptions()
	const quota = 100_000
	opts.Plans = plan.Catalog{Plans: []plan.Spec{{ID: plan.FreeID, Name: "Free", Entitlements: []string{"ai.basic"},
		Prices: []plan.Price{{Currency: "USD", Interval: plan.Month}}, Limits: plan.Limits{StorageQuotaBytes: quota}}}}
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		wav := monoTone(8000, 15000) // 30,044 bytes
		var wg sync.WaitGroup
		statuses := make([]*platformtest.Response, 6)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = upload(s, s.Boot.TestKey, "audio/wav", wav)
			}()
		}
		wg.Wait()
		created, refused := 0, 0
		var input string
		for _, r := range statuses {
			switch r.Status {
			case http.StatusCreated:
				created++
				var a api.AssetView
				r.Data(t, &a)
				input = a.ID
			case http.StatusRequestEntityTooLarge:
				d, _ := r.JSON()["error"].(map[string]any)["details"].(map[string]any)
				if r.Code() != "PAYLOAD_TOO_LARGE" || d["reason"] != "storage_quota" || d["limit"] != float64(quota) {
					t.Fatalf("refusal: %s", r.Body)
				}
				refused++
			default:
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
		}
		stored := count(t, s, `SELECT COALESCE(SUM(size_bytes), 0) FROM assets`)
		counted := count(t, s, `SELECT bytes FROM asset_storage WHERE workspace_id = ? AND environment = 'test'`, s.Boot.WorkspaceID)
		if created != 3 || refused != 3 || stored != 3*len(wav) || counted != stored {
			t.Fatalf("%d created, %d refused, %d bytes stored, %d counted", created, refused, stored, counted)
		}

		// About 10 KB are left; a 1.9 s master at 22.05 kHz is 83 KB.
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/master", Key: s.Boot.TestKey,
			Header: map[string]string{"Idempotency-Key": "master-quota"},
			Body:   map[string]any{"input": map[string]any{"assetId": input}, "output": map[string]any{"format": "wav", "sampleRate": 22050, "bitDepth": 16}}})
		if r.Status != http.StatusAccepted {
			t.Fatalf("master: %d %s", r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		untilJobEnds(t, s, v.ID, 20*time.Second)
		v = soundOp(t, s, v.ID)
		if v.Status != "failed" || v.Failure.Code != "PAYLOAD_TOO_LARGE" || v.Failure.Details["reason"] != "storage_quota" {
			t.Fatalf("operation: %+v %+v", v, v.Failure)
		}
		if st, n := runJob(t, s, v.ID); st != "succeeded" || n != 1 {
			t.Fatalf("run job: %s after %d attempts", st, n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM assets`); n != 3 {
			t.Fatalf("%d assets after the refused output", n)
		}
	})
}
