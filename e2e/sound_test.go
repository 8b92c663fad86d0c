package e2e_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/sound"
	"github.com/creatormusic/platform/sound/dsp"
	"github.com/creatormusic/platform/sound/dsp/dsptest"
	"github.com/creatormusic/platform/transport/api"
)

// pcmWAV encodes a stereo 16-bit PCM WAV at rate whose left and right
// channels are sample(i).
func pcmWAV(rate, frames int, sample func(i int) float64) []byte {
	b := assettest.WAVHeader(rate, 2, 16, false, int64(frames*4))
	for i := range frames {
		v := int16(math.Round(max(-1, min(1, sample(i))) * 32767))
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	return b
}

// uploadWAV uploads a WAV with the test key and returns its asset id.
func uploadWAV(t *testing.T, s *platformtest.System, wav []byte) string {
	t.Helper()
	r := upload(s, s.Boot.TestKey, "audio/wav", wav)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var a api.AssetView
	r.Data(t, &a)
	return a.ID
}

func analyze(s *platformtest.System, idem string, body any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/analyze", Key: s.Boot.TestKey, Body: body,
		Header: map[string]string{"Idempotency-Key": idem}})
}

func soundOp(t *testing.T, s *platformtest.System, id string) api.SoundOperationView {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id, Key: s.Boot.TestKey})
	if r.Status != 200 {
		t.Fatalf("GET sound operation: %d %s", r.Status, r.Body)
	}
	var v api.SoundOperationView
	r.Data(t, &v)
	return v
}

// analyzed accepts an analysis and waits until it is terminal.
func analyzed(t *testing.T, s *platformtest.System, idem string, body any) api.SoundOperationView {
	t.Helper()
	r := analyze(s, idem, body)
	if r.Status != http.StatusAccepted {
		t.Fatalf("analyze: %d %s", r.Status, r.Body)
	}
	var v api.SoundOperationView
	r.Data(t, &v)
	if v.Status != "queued" || v.Stage != "accepted" || v.Type != "analysis" {
		t.Fatalf("accepted = %+v", v)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		v = soundOp(t, s, v.ID)
		if v.Status == "completed" || v.Status == "failed" {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("analysis %s: %s/%s after 20s", v.ID, v.Status, v.Stage)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func soundResult(t *testing.T, s *platformtest.System, id string) api.SoundResult {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id + "/result", Key: s.Boot.TestKey})
	if r.Status != 200 {
		t.Fatalf("result: %d %s", r.Status, r.Body)
	}
	var res api.SoundResult
	r.Data(t, &res)
	return res
}

func soundOptions() platformtest.Options {
	return platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 5 * time.Millisecond}}
}

func TestSoundAnalysis(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, soundOptions(), func(t *testing.T, s *platformtest.System) {
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/capabilities", Key: s.Boot.TestKey})
		var caps map[string]any
		r.Data(t, &caps)
		if r.Status != 200 || caps["features"].(map[string]any)["analysis"].(map[string]any)["supported"] != true ||
			caps["features"].(map[string]any)["mastering"].(map[string]any)["supported"] != true ||
			caps["features"].(map[string]any)["enhancement"].(map[string]any)["features"].(map[string]any)["dehum"] != true {
			t.Fatalf("capabilities: %d %s", r.Status, r.Body)
		}
		// EBU Tech 3341 case 1: a 1 kHz sine at -23 dBFS in both channels
		// reads -23.0 LUFS.
		amp := math.Pow(10, -23.0/20)
		const rate = 48000
		tone := uploadWAV(t, s, pcmWAV(rate, 6*rate, func(i int) float64 { return amp * math.Sin(2*math.Pi*1000*float64(i)/rate) }))
		v := analyzed(t, s, "an-1", map[string]any{"input": map[string]any{"assetId": tone}})
		if v.Status != "completed" || v.Stage != "finished" || v.StartedAt == nil || v.EndedAt == nil || v.Progress != nil {
			t.Fatalf("completed view = %+v", v)
		}
		a := soundResult(t, s, v.ID).Analysis
		if a.IntegratedLoudness == nil || !a.IntegratedLoudness.Available || math.Abs(*a.IntegratedLoudness.Value+23) > 0.1 {
			t.Fatalf("integrated loudness = %+v", a.IntegratedLoudness)
		}
		if *a.Duration.Value != 6 || *a.SampleRate.Value != rate || *a.BitDepth.Value != 16 || *a.ChannelCount.Value != 2 {
			t.Fatalf("format measures = %+v %+v %+v %+v", a.Duration, a.SampleRate, a.BitDepth, a.ChannelCount)
		}
		if !a.TruePeak.Available || *a.TruePeak.Value < *a.SamplePeak.Value || math.Abs(*a.SamplePeak.Value+23) > 0.1 {
			t.Fatalf("peaks = %+v %+v", a.SamplePeak, a.TruePeak)
		}
		if a.BPM == nil || a.BPM.Available || a.BPM.Reason == nil || a.BPM.Value != nil {
			t.Fatalf("a steady tone has no tempo, got %+v", a.BPM)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outbox_events WHERE type = 'sound.operation.completed' AND aggregate_id = ?`, v.ID); n != 1 {
			t.Fatalf("completed events = %d", n)
		}

		// A click track at 120 BPM, asking for the tempo only.
		clicks := uploadWAV(t, s, pcmWAV(44100, 12*44100, func(i int) float64 {
			if k := i % 22050; k < 441 {
				return 0.8 * math.Exp(-float64(k)/80) * math.Sin(2*math.Pi*1000*float64(k)/44100)
			}
			return 0
		}))
		v = analyzed(t, s, "an-2", map[string]any{"input": map[string]any{"assetId": clicks}, "fields": []string{"bpm"}})
		a = soundResult(t, s, v.ID).Analysis
		if a.BPM == nil || !a.BPM.Available || math.Abs(*a.BPM.Value-120) > 1 || a.IntegratedLoudness != nil || a.Duration != nil {
			t.Fatalf("tempo analysis = %+v (bpm %+v)", a, a.BPM)
		}
	})
}

func TestSoundAnalysisRequests(t *testing.T) {
	t.Parallel()
	opts := soundOptions()
	opts.Jobs.Disabled = true
	platformtest.Dialects(t, opts, func(t *testing.T, s *platformtest.System) {
		wav := uploadWAV(t, s, pcmWAV(44100, 44100, func(i int) float64 { return 0.1 * math.Sin(float64(i)/10) }))
		body := map[string]any{"input": map[string]any{"assetId": wav}}
		for _, c := range []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"unknown field", map[string]any{"input": map[string]any{"assetId": wav}, "fields": []string{"tempo"}}, 400, "INVALID_INPUT"},
			{"repeated field", map[string]any{"input": map[string]any{"assetId": wav}, "fields": []string{"key", "key"}}, 400, "INVALID_INPUT"},
			{"no asset", map[string]any{"input": map[string]any{}}, 400, "INVALID_INPUT"},
			{"unknown asset", map[string]any{"input": map[string]any{"assetId": "ast_01jd0000000000000000000000"}}, 404, "NOT_FOUND"},
		} {
			if r := analyze(s, "bad-"+c.name, c.body); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/analyze", Key: s.Boot.TestKey, Body: body}); r.Code() != "IDEMPOTENCY_KEY_REQUIRED" {
			t.Fatalf("no key: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM sound_operations`); n != 0 {
			t.Fatalf("operations after refused requests = %d", n)
		}
		// 50 concurrent duplicates: one operation.
		raiseKeyLimits(t, s)
		ids := make(chan string, 50)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				r := analyze(s, "dup", body)
				var v api.SoundOperationView
				if r.Status == http.StatusAccepted {
					r.Data(t, &v)
				}
				ids <- v.ID
			})
		}
		wg.Wait()
		close(ids)
		var id string
		for got := range ids {
			if id == "" {
				id = got
			}
			if got == "" || got != id {
				t.Fatalf("duplicate answers differ: %q %q", id, got)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM sound_operations`); n != 1 {
			t.Fatalf("operations = %d, want 1", n)
		}
		// The pool is stopped: no result yet, then an idempotent cancel.
		r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id + "/result", Key: s.Boot.TestKey})
		if r.Status != 409 || r.Code() != "RESULT_NOT_READY" {
			t.Fatalf("early result: %d %s", r.Status, r.Body)
		}
		for i := range 2 {
			r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/operations/" + id + "/cancel", Key: s.Boot.TestKey,
				Header: map[string]string{"Idempotency-Key": fmt.Sprintf("cancel-%d", i)}})
			var v api.SoundOperationView
			r.Data(t, &v)
			if r.Status != 200 || v.Status != "cancelled" {
				t.Fatalf("cancel %d: %d %s", i, r.Status, r.Body)
			}
		}
		other := s.Bootstrap("Other")
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/operations/" + id, Key: other.TestKey}); r.Status != 404 {
			t.Fatalf("another tenant reads the operation: %d", r.Status)
		}
	})
}

func TestSoundMastering(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, soundOptions(), func(t *testing.T, s *platformtest.System) {
		// A quiet, music-like input: two tones with a beating envelope at
		// about -30 LUFS, and bursts of white noise (hats) whose peaks the
		// limiter must catch between samples.
		const rate = 44100
		rng := rand.New(rand.NewPCG(12, 34))
		in := uploadWAV(t, s, pcmWAV(rate, 8*rate, func(i int) float64 {
			x := float64(i) / rate
			hat := 0.06 * math.Exp(-math.Mod(x, 0.25)/0.01) * rng.NormFloat64()
			return hat + 0.03*(1+0.5*math.Sin(2*math.Pi*0.5*x))*(math.Sin(2*math.Pi*220*x)+0.5*math.Sin(2*math.Pi*660*x))
		}))
		master := func(idem string, body map[string]any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/master", Key: s.Boot.TestKey, Body: body,
				Header: map[string]string{"Idempotency-Key": idem}})
		}
		out := func(format string, rate, bits int) map[string]any {
			return map[string]any{"format": format, "sampleRate": rate, "bitDepth": bits}
		}
		// High-resolution output needs audio.hires, which a subscription
		// to the studio plan would give this free workspace.
		for _, o := range []map[string]any{out("wav", 96000, 24), out("wav", 48000, 32)} {
			r := master("hires", map[string]any{"input": map[string]any{"assetId": in}, "output": o})
			if r.Status != 403 || r.Code() != "SUBSCRIPTION_REQUIRED" || detail(r, "entitlement") != "audio.hires" {
				t.Errorf("%v: %d %s", o, r.Status, r.Body)
			}
		}
		for _, c := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"rate", map[string]any{"input": map[string]any{"assetId": in}, "output": out("wav", 192000, 24)}, "output.sampleRate"},
			{"depth", map[string]any{"input": map[string]any{"assetId": in}, "output": out("wav", 48000, 20)}, "output.bitDepth"},
			{"format", map[string]any{"input": map[string]any{"assetId": in}, "output": out("mp3", 48000, 16)}, "output.format"},
			{"target", map[string]any{"input": map[string]any{"assetId": in}, "targetLufs": -3, "output": out("wav", 48000, 24)}, "targetLufs"},
		} {
			r := master("bad-"+c.name, c.body)
			if r.Status != 422 || r.Code() != "CAPABILITY_UNSUPPORTED" || detail(r, "field") != c.field {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		r := master("m-1", map[string]any{"input": map[string]any{"assetId": in}, "profile": "streaming", "output": out("wav", 48000, 24)})
		if r.Status != http.StatusAccepted {
			t.Fatalf("master: %d %s", r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		deadline := time.Now().Add(30 * time.Second)
		for v.Status != "completed" && v.Status != "failed" {
			if time.Now().After(deadline) {
				t.Fatalf("mastering: %s/%s after 30s", v.Status, v.Stage)
			}
			time.Sleep(10 * time.Millisecond)
			v = soundOp(t, s, v.ID)
		}
		res := soundResult(t, s, v.ID)
		m := res.Mastering
		if v.Status != "completed" || m == nil || math.Abs(m.AchievedLUFS+14) > 0.5 || m.AchievedTruePeakDB > -1 || len(res.Outputs) != 1 {
			t.Fatalf("mastering result: %+v %+v", v, res)
		}
		o := res.Outputs[0]
		if o.Format != "wav" || o.SampleRate != 48000 || o.BitDepth != 24 {
			t.Fatalf("output = %+v", o)
		}
		// The output is a derived asset of the workspace; analysing it
		// reads the loudness the mastering reported.
		a := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + o.AssetID, Key: s.Boot.TestKey})
		var av api.AssetView
		a.Data(t, &av)
		if a.Status != 200 || av.Origin != "derived" || av.MediaType != "audio/wav" || av.Claimed.SampleRate == nil || *av.Claimed.SampleRate != 48000 {
			t.Fatalf("output asset: %d %s", a.Status, a.Body)
		}
		check := analyzed(t, s, "an-master", map[string]any{"input": map[string]any{"assetId": o.AssetID}, "fields": []string{"loudness", "peak"}})
		got := soundResult(t, s, check.ID).Analysis
		if math.Abs(*got.IntegratedLoudness.Value-m.AchievedLUFS) > 0.1 || *got.TruePeak.Value > -1 {
			t.Fatalf("re-analysed output: %+v %+v", got.IntegratedLoudness, got.TruePeak)
		}
		// A meter independent of the engine's (FFT zero-padding to 16x)
		// reads the stored output under the ceiling, and within 0.1 dB of
		// the true peak the result reports.
		c := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + o.AssetID + "/content", Key: s.Boot.TestKey})
		dec, _, err := dsp.Open(bytes.NewReader(c.Body))
		if err != nil {
			t.Fatal(err)
		}
		blk, err := dsp.ReadAll(dec)
		if err != nil {
			t.Fatal(err)
		}
		ref := dsptest.TruePeakDB(blk)
		if ref > m.CeilingDBTP+dsptest.EdgeErrorDB || math.Abs(ref-m.AchievedTruePeakDB) > 0.1 {
			t.Fatalf("reference true peak %.3f dBTP; reported %.3f dBTP, ceiling %g", ref, m.AchievedTruePeakDB, m.CeilingDBTP)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM sound_outputs WHERE operation_id = ? AND parent_asset_id = ?`, v.ID, in); n != 1 {
			t.Fatalf("outputs rows = %d", n)
		}
	})
}

func TestSoundStems(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, soundOptions(), func(t *testing.T, s *platformtest.System) {
		// The capability says what the separation is and how well it
		// separates: signal processing, with a measured SDR per stem.
		cr := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/sound/capabilities", Key: s.Boot.TestKey})
		var caps sound.Capabilities
		cr.Data(t, &caps)
		sep := caps.Features.StemSeparation
		if cr.Status != 200 || sep.Method != "signal_processing" || sep.Quality.Metric != "global_sdr" || sep.Quality.MeasuredOn == "" ||
			len(sep.Quality.Stems) != 4 {
			t.Fatalf("stem capability: %d %s", cr.Status, cr.Body)
		}
		for _, q := range sep.Quality.Stems {
			if q.SDRDB <= 0 {
				t.Fatalf("stem quality: %s", cr.Body)
			}
		}
		const rate = 44100
		// Bass and a centred tone above it, with clicks every half second.
		in := uploadWAV(t, s, pcmWAV(rate, 4*rate, func(i int) float64 {
			x := float64(i) / rate
			v := 0.2*math.Sin(2*math.Pi*55*x) + 0.1*math.Sin(2*math.Pi*440*x)
			if k := i % (rate / 2); k < 300 {
				v += 0.3 * math.Exp(-float64(k)/50)
			}
			return v
		}))
		stems := func(idem string, body map[string]any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/stems", Key: s.Boot.TestKey, Body: body,
				Header: map[string]string{"Idempotency-Key": idem}})
		}
		output := map[string]any{"format": "wav", "sampleRate": rate, "bitDepth": 16}
		if r := stems("bad-1", map[string]any{"input": map[string]any{"assetId": in}, "stems": []string{"vocals", "piano"}, "output": output}); r.Status != 422 ||
			r.Code() != "CAPABILITY_UNSUPPORTED" || detail(r, "field") != "stems[1]" {
			t.Fatalf("unknown stem: %d %s", r.Status, r.Body)
		}
		r := stems("st-1", map[string]any{"input": map[string]any{"assetId": in}, "stems": []string{"bass", "drums"}, "output": output})
		if r.Status != http.StatusAccepted {
			t.Fatalf("stems: %d %s", r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		if v.Type != "stem_separation" {
			t.Fatalf("type = %s", v.Type)
		}
		deadline := time.Now().Add(30 * time.Second)
		for v.Status != "completed" && v.Status != "failed" {
			if time.Now().After(deadline) {
				t.Fatalf("stems: %s/%s after 30s", v.Status, v.Stage)
			}
			time.Sleep(10 * time.Millisecond)
			v = soundOp(t, s, v.ID)
		}
		res := soundResult(t, s, v.ID)
		if v.Status != "completed" || len(res.Outputs) != 2 {
			t.Fatalf("stems result: %+v %+v", v, res)
		}
		got := map[string]string{}
		for _, o := range res.Outputs {
			if o.Type != "stem" || o.Format != "wav" || o.SampleRate != rate || o.BitDepth != 16 {
				t.Fatalf("output = %+v", o)
			}
			got[o.Stem] = o.AssetID
		}
		if got["bass"] == "" || got["drums"] == "" || got["bass"] == got["drums"] {
			t.Fatalf("outputs = %+v", res.Outputs)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM assets WHERE origin = 'derived'`); n != 2 {
			t.Fatalf("derived assets = %d", n)
		}
		// The bass stem holds the 55 Hz line: it is the louder of the two.
		loud := func(id, idem string) float64 {
			op := analyzed(t, s, idem, map[string]any{"input": map[string]any{"assetId": id}, "fields": []string{"loudness"}})
			m := soundResult(t, s, op.ID).Analysis.IntegratedLoudness
			if !m.Available {
				t.Fatalf("stem %s has no loudness: %+v", id, m)
			}
			return *m.Value
		}
		if b, d := loud(got["bass"], "an-bass"), loud(got["drums"], "an-drums"); b <= d {
			t.Fatalf("bass stem %.1f LUFS is not louder than drums %.1f", b, d)
		}
	})
}

func TestSoundEnhance(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, soundOptions(), func(t *testing.T, s *platformtest.System) {
		const rate = 48000
		// A 1 kHz tone under a 50 Hz hum with harmonics.
		in := uploadWAV(t, s, pcmWAV(rate, 6*rate, func(i int) float64 {
			x := float64(i) / rate
			return 0.2*math.Sin(2*math.Pi*1000*x) + 0.1*math.Sin(2*math.Pi*50*x) + 0.05*math.Sin(2*math.Pi*100*x)
		}))
		enhance := func(idem string, body map[string]any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/sound/enhance", Key: s.Boot.TestKey, Body: body,
				Header: map[string]string{"Idempotency-Key": idem}})
		}
		output := map[string]any{"format": "flac", "sampleRate": rate, "bitDepth": 24}
		for _, c := range []struct {
			name     string
			features []map[string]any
			field    string
		}{
			{"unknown", []map[string]any{{"name": "dehum"}, {"name": "autotune"}}, "features[1].name"},
			{"repeated", []map[string]any{{"name": "dehum"}, {"name": "dehum"}}, "features[1].name"},
			{"none", []map[string]any{}, "features"},
			{"amount", []map[string]any{{"name": "dehum"}, {"name": "clarity", "amount": 20}}, "features[1].amount"},
		} {
			r := enhance("bad-"+c.name, map[string]any{"input": map[string]any{"assetId": in}, "features": c.features, "output": output})
			if r.Status != 422 || r.Code() != "CAPABILITY_UNSUPPORTED" || detail(r, "field") != c.field {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		r := enhance("en-1", map[string]any{"input": map[string]any{"assetId": in}, "features": []map[string]any{{"name": "dehum"}}, "output": output})
		if r.Status != http.StatusAccepted {
			t.Fatalf("enhance: %d %s", r.Status, r.Body)
		}
		var v api.SoundOperationView
		r.Data(t, &v)
		deadline := time.Now().Add(30 * time.Second)
		for v.Status != "completed" && v.Status != "failed" {
			if time.Now().After(deadline) {
				t.Fatalf("enhance: %s/%s after 30s", v.Status, v.Stage)
			}
			time.Sleep(10 * time.Millisecond)
			v = soundOp(t, s, v.ID)
		}
		res := soundResult(t, s, v.ID)
		if v.Status != "completed" || v.Type != "enhancement" || len(res.Outputs) != 1 || res.Outputs[0].Format != "flac" {
			t.Fatalf("enhance result: %+v %+v", v, res)
		}
		a := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + res.Outputs[0].AssetID, Key: s.Boot.TestKey})
		var av api.AssetView
		a.Data(t, &av)
		if av.Origin != "derived" || av.MediaType != "audio/flac" {
			t.Fatalf("output asset: %s", a.Body)
		}
		// Past the notch filters' first second, the hum and its harmonic are
		// down by more than 30 dB and the 1 kHz tone is unchanged within
		// 0.1 dB.
		c := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/assets/" + res.Outputs[0].AssetID + "/content", Key: s.Boot.TestKey})
		dec, _, err := dsp.Open(bytes.NewReader(c.Body))
		if err != nil {
			t.Fatal(err)
		}
		blk, err := dsp.ReadAll(dec)
		if err != nil {
			t.Fatal(err)
		}
		x := blk[0][rate:]
		amp := func(f float64) float64 {
			var re, im float64
			for n, v := range x {
				re += v * math.Cos(2*math.Pi*f*float64(n)/rate)
				im -= v * math.Sin(2*math.Pi*f*float64(n)/rate)
			}
			return 2 * math.Hypot(re, im) / float64(len(x))
		}
		if h := 20 * math.Log10(amp(50)/0.1); h > -30 {
			t.Fatalf("50 Hz hum only %.1f dB down", h)
		}
		if h := 20 * math.Log10(amp(100)/0.05); h > -30 {
			t.Fatalf("100 Hz harmonic only %.1f dB down", h)
		}
		if d := 20 * math.Log10(amp(1000)/0.2); math.Abs(d) > 0.1 {
			t.Fatalf("1 kHz tone changed by %.2f dB", d)
		}
	})
}
