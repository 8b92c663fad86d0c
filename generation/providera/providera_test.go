package providera_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/providera"
	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

var dialects = []string{provideratest.DialectSunoAPI, provideratest.DialectKie, provideratest.DialectKieMarket}

// receiver collects callbacks.
type receiver struct {
	mu  sync.Mutex
	got []generation.Callback
	srv *httptest.Server
}

func (r *receiver) all() []generation.Callback {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]generation.Callback(nil), r.got...)
}

func (r *receiver) last(t *testing.T) generation.Callback {
	t.Helper()
	all := r.all()
	if len(all) == 0 {
		t.Fatal("no callback received")
	}
	return all[len(all)-1]
}

type rig struct {
	sim   *provideratest.Server
	c     *providera.Client
	cred  generation.Credential
	recv  *receiver
	clock *provideratest.ManualClock
}

func newRig(t *testing.T, dialect string, timeout time.Duration) *rig {
	t.Helper()
	clock := provideratest.NewManualClock(time.Unix(1_800_000_000, 0))
	sim, err := provideratest.New(provideratest.Config{Dialect: dialect, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	recv := &receiver{}
	recv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		recv.mu.Lock()
		recv.got = append(recv.got, generation.Callback{Header: r.Header.Clone(), Body: b})
		recv.mu.Unlock()
	}))
	t.Cleanup(recv.srv.Close)
	c, err := providera.New(providera.Config{BaseURL: sim.URL(), Dialect: providera.Dialect(dialect), Timeout: timeout,
		HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{sim: sim, c: c, recv: recv, clock: clock,
		cred: generation.Credential{APIKey: sim.APIKey(), CallbackKey: sim.CallbackKey()}}
}

func (r *rig) req() generation.CreateRequest {
	return generation.CreateRequest{Prompt: "a calm piano song", Model: "v5", CallbackURL: r.recv.srv.URL + "/cb/attempt-token"}
}

func (r *rig) create(t *testing.T) string {
	t.Helper()
	cr, err := r.c.Create(context.Background(), r.cred, r.req())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if cr.TaskID == "" {
		t.Fatal("empty task id")
	}
	return cr.TaskID
}

// verified verifies and parses the last callback.
func (r *rig) verified(t *testing.T) generation.TaskState {
	t.Helper()
	cb := r.recv.last(t)
	if err := r.c.VerifyCallback(r.cred, cb, r.clock.Now()); err != nil {
		t.Fatalf("VerifyCallback: %v", err)
	}
	st, err := r.c.ParseCallback(cb)
	if err != nil {
		t.Fatalf("ParseCallback: %v", err)
	}
	return st
}

func wantCode(t *testing.T, err error, code fault.Code) *fault.Error {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	var fe *fault.Error
	errors.As(err, &fe)
	return fe
}

func fetch(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestHappyPath(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			ctx := context.Background()
			id := r.create(t)
			st, err := r.c.Query(ctx, r.cred, id)
			if err != nil || st.Stage != generation.StageQueued || st.TaskID != id {
				t.Fatalf("Query = %+v, %v", st, err)
			}
			wantStages := []generation.Stage{generation.StageText, generation.StageFirst, generation.StageProviderComplete}
			for i, want := range wantStages {
				r.clock.Add(time.Second)
				if _, err := r.sim.Advance(id); err != nil {
					t.Fatal(err)
				}
				st := r.verified(t)
				if st.Stage != want || st.TaskID != id {
					t.Fatalf("callback %d = %+v, want %s", i, st, want)
				}
				if want == generation.StageFirst && (len(st.Tracks) != 1 || st.Tracks[0].AudioURL != "" || st.Tracks[0].StreamURL == "") {
					t.Fatalf("first tracks = %+v", st.Tracks)
				}
				if want == generation.StageProviderComplete && len(st.Tracks) != 2 {
					t.Fatalf("complete tracks = %+v", st.Tracks)
				}
			}
			r.clock.Add(time.Second)
			st, err = r.c.Query(ctx, r.cred, id)
			if err != nil || st.Stage != generation.StageProviderComplete || len(st.Tracks) != 2 {
				t.Fatalf("Query = %+v, %v", st, err)
			}
			if d == provideratest.DialectKieMarket {
				if st.CreditsConsumed == nil || *st.CreditsConsumed != 12 {
					t.Fatalf("creditsConsumed = %v", st.CreditsConsumed)
				}
			} else if st.CreditsConsumed != nil {
				t.Fatalf("legacy creditsConsumed = %v", *st.CreditsConsumed)
			}
			for _, tr := range st.Tracks {
				if tr.ProviderTrackID == "" || tr.DurationMs != r.sim.TrackLength().Round(10*time.Millisecond).Milliseconds() || tr.StreamURL == "" || tr.ImageURL == "" {
					t.Fatalf("track = %+v", tr)
				}
				code, b := fetch(t, tr.AudioURL)
				if code != 200 {
					t.Fatalf("GET %s = %d", tr.AudioURL, code)
				}
				if m, err := asset.Sniff(bytes.NewReader(b), int64(len(b))); err != nil || m.Format != asset.MP3 {
					t.Fatalf("Sniff = %+v, %v", m, err)
				}
			}
			bal, err := r.c.Balance(ctx, r.cred)
			if err != nil || bal.Credits != 1000-12 {
				t.Fatalf("Balance = %+v, %v", bal, err)
			}
			if r.c.SupportsDuration("v5") || r.c.ID() != generation.ProviderA {
				t.Fatal("SupportsDuration/ID")
			}
		})
	}
}

func TestF1DuplicatesAndF2Reorder(t *testing.T) {
	r := newRig(t, provideratest.DialectKie, 0)
	id := r.create(t)
	if err := r.sim.Complete(id); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := r.sim.Redeliver(id, "complete"); err != nil {
			t.Fatal(err)
		}
		if st := r.verified(t); st.Stage != generation.StageProviderComplete || len(st.Tracks) != 2 {
			t.Fatalf("duplicate = %+v", st)
		}
	}
	if err := r.sim.Redeliver(id, "first"); err != nil { // first after complete
		t.Fatal(err)
	}
	if st := r.verified(t); st.Stage != generation.StageFirst || st.Tracks[0].AudioURL != "" {
		t.Fatalf("late first = %+v", st)
	}
	// complete without text or first
	id2 := r.create(t)
	if err := r.sim.DropCallbacks(id2, "text", "first"); err != nil {
		t.Fatal(err)
	}
	n := len(r.recv.all())
	if err := r.sim.Complete(id2); err != nil {
		t.Fatal(err)
	}
	if got := r.recv.all(); len(got) != n+1 {
		t.Fatalf("callbacks = %d, want %d", len(got), n+1)
	}
	if st := r.verified(t); st.Stage != generation.StageProviderComplete || st.TaskID != id2 {
		t.Fatalf("lone complete = %+v", st)
	}
}

func TestF3DroppedCallbacksAndCallbackException(t *testing.T) {
	r := newRig(t, provideratest.DialectSunoAPI, 0)
	ctx := context.Background()
	id := r.create(t)
	_ = r.sim.DropCallbacks(id, "*")
	if err := r.sim.Complete(id); err != nil {
		t.Fatal(err)
	}
	if len(r.recv.all()) != 0 {
		t.Fatal("dropped callbacks were sent")
	}
	if st, err := r.c.Query(ctx, r.cred, id); err != nil || st.Stage != generation.StageProviderComplete {
		t.Fatalf("Query = %+v, %v", st, err)
	}
	keep := r.create(t)
	_ = r.sim.CallbackException(keep, true)
	if st, err := r.c.Query(ctx, r.cred, keep); err != nil || st.Stage != generation.StageProviderComplete || len(st.Tracks) != 2 {
		t.Fatalf("CALLBACK_EXCEPTION with tracks = %+v, %v", st, err)
	}
	lost := r.create(t)
	_ = r.sim.CallbackException(lost, false)
	if st, err := r.c.Query(ctx, r.cred, lost); err != nil || st.Stage != generation.StageFailed || st.FailureCode != string(fault.GenerationFailed) {
		t.Fatalf("CALLBACK_EXCEPTION without tracks = %+v, %v", st, err)
	}
}

func TestF4AmbiguousTimeout(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 200*time.Millisecond)
			r.sim.DelayNextCreate(time.Minute)
			_, err := r.c.Create(context.Background(), r.cred, r.req())
			fe := wantCode(t, err, fault.ProviderTimeout)
			if fe.Details["ambiguous"] != true {
				t.Fatalf("details = %v", fe.Details)
			}
			if r.sim.CreateCount() != 1 {
				t.Fatalf("CreateCount = %d", r.sim.CreateCount())
			}
			task := r.sim.Tasks()[0]
			if task.Billed != 12 || r.sim.Credits() != 1000-12 {
				t.Fatalf("not billed: %+v", task)
			}
			st, err := r.c.Query(context.Background(), r.cred, task.ID)
			if err != nil || st.TaskID != task.ID {
				t.Fatalf("Query = %+v, %v", st, err)
			}
			if r.sim.CreateCount() != 1 {
				t.Fatal("a second task was created")
			}
		})
	}
}

func TestF5TransientAndMalformed(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			ctx := context.Background()
			for _, code := range []int{500, 455} {
				r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: code, Msg: "flicker"})
				_, err := r.c.Create(ctx, r.cred, r.req())
				if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["retryable"] != true || fe.Details["provider_code"] != code {
					t.Fatalf("details = %v", fe.Details)
				}
			}
			throttle := 405
			if d != provideratest.DialectSunoAPI {
				throttle = 429
			}
			r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: throttle})
			_, err := r.c.Create(ctx, r.cred, r.req())
			wantCode(t, err, fault.RateLimited)
			if r.sim.CreateCount() != 0 {
				t.Fatal("failed creates made tasks")
			}
			id := r.create(t)
			r.sim.FailNext(provideratest.EndpointQuery, provideratest.Failure{Code: 500})
			_, err = r.c.Query(ctx, r.cred, id)
			wantCode(t, err, fault.ProviderUnavailable)
			r.sim.FailNext(provideratest.EndpointQuery, provideratest.Failure{Code: throttle})
			_, err = r.c.Query(ctx, r.cred, id)
			wantCode(t, err, fault.RateLimited)
			r.clock.Add(time.Second)
			r.sim.FailNext(provideratest.EndpointQuery, provideratest.Failure{Raw: `{"code":200,"msg":"success","data":{"taskId":`})
			_, err = r.c.Query(ctx, r.cred, id)
			if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["reason"] != "malformed_response" || fe.Details["retryable"] != true {
				t.Fatalf("details = %v", fe.Details)
			}
			r.sim.FailNext(provideratest.EndpointQuery, provideratest.Failure{HTTPStatus: 502, Raw: "<html>bad gateway</html>"})
			_, err = r.c.Query(ctx, r.cred, id)
			wantCode(t, err, fault.ProviderUnavailable)
			if st, err := r.c.Query(ctx, r.cred, id); err != nil || st.Stage != generation.StageQueued {
				t.Fatalf("Query after faults = %+v, %v", st, err)
			}
			r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: 505, Msg: "feature disabled"})
			_, err = r.c.Create(ctx, r.cred, r.req())
			if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["reason"] != "feature_disabled" || fe.Details["retryable"] != false {
				t.Fatalf("details = %v", fe.Details)
			}
		})
	}
}

func TestBodyCodeBeatsHTTPStatus(t *testing.T) {
	r := newRig(t, provideratest.DialectSunoAPI, 0)
	ctx := context.Background()
	// HTTP 500 but body 429: sunoapi's "no credits", not a 5xx.
	r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{HTTPStatus: 500, Code: 429, Msg: "insufficient credits"})
	_, err := r.c.Create(ctx, r.cred, r.req())
	wantCode(t, err, fault.ProviderCreditsExhausted)
	// HTTP 200 but body 430: a throttle.
	r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{HTTPStatus: 200, Code: 430})
	_, err = r.c.Create(ctx, r.cred, r.req())
	wantCode(t, err, fault.RateLimited)
	// HTTP 429 but body 200 with a task id: success.
	r.sim.FailNext(provideratest.EndpointBalance, provideratest.Failure{HTTPStatus: 429, Raw: `{"code":200,"msg":"success","data":7}`})
	if b, err := r.c.Balance(ctx, r.cred); err != nil || b.Credits != 7 {
		t.Fatalf("Balance = %+v, %v", b, err)
	}
}

func TestF6CreateThrottle(t *testing.T) {
	for _, d := range []string{provideratest.DialectSunoAPI, provideratest.DialectKie} {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			for range 20 {
				r.create(t)
			}
			_, err := r.c.Create(context.Background(), r.cred, r.req())
			fe := wantCode(t, err, fault.RateLimited)
			want := 405
			if d == provideratest.DialectKie {
				want = 429
			}
			if fe.Details["provider_code"] != want || fe.Details["retryable"] != true {
				t.Fatalf("details = %v", fe.Details)
			}
			if r.sim.CreateCount() != 20 {
				t.Fatalf("CreateCount = %d", r.sim.CreateCount())
			}
			r.clock.Add(10 * time.Second)
			r.create(t)
		})
	}
}

func TestCreditsExhaustedAndBadKey(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			r.sim.SetCredits(0)
			_, err := r.c.Create(context.Background(), r.cred, r.req())
			fe := wantCode(t, err, fault.ProviderCreditsExhausted)
			want := 429
			if d != provideratest.DialectSunoAPI {
				want = 402
			}
			if fe.Details["provider_code"] != want {
				t.Fatalf("details = %v", fe.Details)
			}
			bad := generation.Credential{APIKey: "wrong-key-secret"}
			_, err = r.c.Balance(context.Background(), bad)
			wantCode(t, err, fault.ProviderCredentialInvalid)
			if strings.Contains(err.Error(), "wrong-key-secret") {
				t.Fatal("the API key leaked into the error")
			}
		})
	}
}

func TestF7AcceptedThenFailed(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			ctx := context.Background()
			cases := []struct {
				code     int
				want     fault.Code
				refunded bool
			}{
				{400, fault.ContentPolicyRejected, false},
				{531, fault.GenerationFailed, true},
				{501, fault.GenerationFailed, false},
			}
			for _, c := range cases {
				id := r.create(t)
				_, _ = r.sim.Advance(id)
				if err := r.sim.Fail(id, c.code); err != nil {
					t.Fatal(err)
				}
				st := r.verified(t)
				if st.Stage != generation.StageFailed || st.FailureCode != string(c.want) || st.Refunded != c.refunded {
					t.Fatalf("callback %d = %+v", c.code, st)
				}
				r.clock.Add(time.Second)
				st, err := r.c.Query(ctx, r.cred, id)
				if err != nil || st.Stage != generation.StageFailed || st.FailureCode != string(c.want) || st.Refunded != c.refunded {
					t.Fatalf("query %d = %+v, %v", c.code, st, err)
				}
				if d == provideratest.DialectKieMarket && (st.CreditsConsumed == nil || *st.CreditsConsumed != 0) {
					t.Fatalf("creditsConsumed = %v", st.CreditsConsumed)
				}
			}
		})
	}
}

func TestF8StreamNeverAudio(t *testing.T) {
	for _, streamInAudio := range []bool{false, true} {
		r := newRig(t, provideratest.DialectKie, 0)
		r.sim.SetStreamInAudioURL(streamInAudio)
		id := r.create(t)
		_, _ = r.sim.Advance(id)
		_, _ = r.sim.Advance(id)
		st := r.verified(t)
		if len(st.Tracks) != 1 || st.Tracks[0].AudioURL != "" || !strings.Contains(st.Tracks[0].StreamURL, "audiopipe") {
			t.Fatalf("first (streamInAudio=%v) = %+v", streamInAudio, st.Tracks)
		}
		q, err := r.c.Query(context.Background(), r.cred, id)
		if err != nil || q.Stage != generation.StageFirst || len(q.Tracks) != 1 || q.Tracks[0].AudioURL != "" {
			t.Fatalf("query = %+v, %v", q, err)
		}
		_, _ = r.sim.Advance(id)
		st = r.verified(t)
		for _, tr := range st.Tracks {
			if !strings.HasSuffix(tr.AudioURL, ".mp3") || tr.AudioURL == tr.StreamURL {
				t.Fatalf("complete track = %+v", tr)
			}
		}
	}
}

func TestF9MediaFaults(t *testing.T) {
	r := newRig(t, provideratest.DialectSunoAPI, 0)
	id := r.create(t)
	if code, _ := fetch(t, r.sim.URL()+"/media/"+id+"/0.mp3"); code != 404 {
		t.Fatalf("MP3 before completion = %d", code)
	}
	_ = r.sim.Complete(id)
	st := r.verified(t)
	_ = r.sim.SetMediaFault(id, 0, provideratest.MediaFault{Forbidden: 1})
	_ = r.sim.SetMediaFault(id, 1, provideratest.MediaFault{Empty: true})
	if code, _ := fetch(t, st.Tracks[0].AudioURL); code != 403 {
		t.Fatalf("first GET = %d", code)
	}
	if code, b := fetch(t, st.Tracks[0].AudioURL); code != 200 || len(b) == 0 {
		t.Fatalf("second GET = %d, %d bytes", code, len(b))
	}
	if code, b := fetch(t, st.Tracks[1].AudioURL); code != 200 || len(b) != 0 {
		t.Fatalf("empty GET = %d, %d bytes", code, len(b))
	}
	_ = r.sim.SetMediaFault(id, 1, provideratest.MediaFault{ExpireAt: r.clock.Now().Add(time.Hour)})
	if code, _ := fetch(t, st.Tracks[1].AudioURL); code != 200 {
		t.Fatalf("before expiry = %d", code)
	}
	r.clock.Add(time.Hour)
	if code, _ := fetch(t, st.Tracks[1].AudioURL); code != 404 {
		t.Fatalf("after expiry = %d", code)
	}
	r.clock.Add(15 * 24 * time.Hour)
	if code, _ := fetch(t, st.Tracks[0].AudioURL); code != 404 {
		t.Fatalf("after TTL = %d", code)
	}
}

func TestF10Placeholders(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			r.sim.SetPlaceholders(true)
			id := r.create(t)
			_, _ = r.sim.Advance(id)
			if st := r.verified(t); len(st.Tracks) != 0 {
				t.Fatalf("text tracks = %+v", st.Tracks)
			}
			if st, err := r.c.Query(context.Background(), r.cred, id); err != nil || len(st.Tracks) != 0 {
				t.Fatalf("query at text = %+v, %v", st, err)
			}
			_, _ = r.sim.Advance(id)
			cb := r.recv.last(t)
			if !bytes.Contains(cb.Body, []byte("None.mp3")) {
				t.Fatal("no placeholder sent")
			}
			if st := r.verified(t); len(st.Tracks) != 1 || st.Tracks[0].ProviderTrackID == "" {
				t.Fatalf("first tracks = %+v", st.Tracks)
			}
		})
	}
}

func TestF11KeyDrift(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			r.sim.SetKeyDrift(true)
			id := r.create(t)
			_ = r.sim.Complete(id)
			cb := r.recv.last(t)
			if bytes.Contains(cb.Body, []byte("task_id")) {
				t.Fatal("drift not applied")
			}
			if st := r.verified(t); st.TaskID != id || len(st.Tracks) != 2 {
				t.Fatalf("callback = %+v", st)
			}
			if st, err := r.c.Query(context.Background(), r.cred, id); err != nil || len(st.Tracks) != 2 {
				t.Fatalf("query = %+v, %v", st, err)
			}
		})
	}
}

func TestF12Hang(t *testing.T) {
	r := newRig(t, provideratest.DialectKieMarket, 0)
	id := r.create(t)
	_, _ = r.sim.Advance(id)
	_ = r.sim.Hang(id)
	for range 3 {
		r.clock.Add(time.Minute)
		if st, _ := r.sim.Advance(id); st != "TEXT_SUCCESS" {
			t.Fatalf("hung task moved to %s", st)
		}
		if st, err := r.c.Query(context.Background(), r.cred, id); err != nil || st.Stage == generation.StageProviderComplete || st.Stage == generation.StageFailed {
			t.Fatalf("query = %+v, %v", st, err)
		}
	}
	if err := r.sim.Complete(id); err == nil {
		t.Fatal("Complete of a hung task succeeded")
	}
}

func TestF13AndValidation(t *testing.T) {
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			r := newRig(t, d, 0)
			ctx := context.Background()
			_, err := r.c.Query(ctx, r.cred, "0123456789abcdef")
			wantCode(t, err, fault.NotFound)
			cases := []struct {
				mod   func(*generation.CreateRequest)
				field string
			}{
				{func(q *generation.CreateRequest) { q.CallbackURL = "" }, "callbackUrl"},
				{func(q *generation.CreateRequest) { q.Prompt = strings.Repeat("a", 501) }, "prompt"},
				{func(q *generation.CreateRequest) { q.Style = "jazz" }, "title"},
				{func(q *generation.CreateRequest) { q.Title = "T" }, "style"},
				{func(q *generation.CreateRequest) { q.Title, q.Style, q.Prompt = "T", "jazz", "" }, "prompt"},
				{func(q *generation.CreateRequest) { q.Title, q.Style, q.Model = strings.Repeat("t", 81), "jazz", "v4" }, "title"},
				{func(q *generation.CreateRequest) { q.Model = "v99" }, "model"},
			}
			for i, c := range cases {
				q := r.req()
				c.mod(&q)
				_, err := r.c.Create(ctx, r.cred, q)
				if fe := wantCode(t, err, fault.InvalidInput); fe.Details["field"] != c.field {
					t.Fatalf("case %d: details = %v", i, fe.Details)
				}
			}
			q := r.req()
			q.Title, q.Style, q.Prompt, q.Instrumental = "T", "ambient", "", true
			if _, err := r.c.Create(ctx, r.cred, q); err != nil {
				t.Fatalf("instrumental custom: %v", err)
			}
			if r.sim.CreateCount() != 1 {
				t.Fatalf("CreateCount = %d", r.sim.CreateCount())
			}
			r.sim.FailNext(provideratest.EndpointCreate, provideratest.Failure{Code: 422, Msg: "Please enter callBackUrl"})
			_, err = r.c.Create(ctx, r.cred, r.req())
			wantCode(t, err, fault.InvalidInput)
		})
	}
}

func TestPollCap(t *testing.T) {
	for _, d := range []string{provideratest.DialectSunoAPI, provideratest.DialectKie} {
		r := newRig(t, d, 0)
		id := r.create(t)
		for range 3 {
			if _, err := r.c.Query(context.Background(), r.cred, id); err != nil {
				t.Fatal(err)
			}
		}
		_, err := r.c.Query(context.Background(), r.cred, id)
		wantCode(t, err, fault.RateLimited)
		r.clock.Add(time.Second)
		if _, err := r.c.Query(context.Background(), r.cred, id); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCallbackSignature(t *testing.T) {
	r := newRig(t, provideratest.DialectKie, 0)
	id := r.create(t)
	verify := func(mode provideratest.SignatureMode) error {
		r.sim.SetSignature(mode)
		if err := r.sim.Redeliver(id, "text"); err != nil {
			t.Fatal(err)
		}
		return r.c.VerifyCallback(r.cred, r.recv.last(t), r.clock.Now())
	}
	if err := verify(provideratest.SignValid); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for mode, reason := range map[provideratest.SignatureMode]string{
		provideratest.SignBad: "signature", provideratest.SignStale: "stale", provideratest.SignNone: "missing_signature",
	} {
		if fe := wantCode(t, verify(mode), fault.CallbackFailed); fe.Details["reason"] != reason {
			t.Fatalf("mode %d: details = %v", mode, fe.Details)
		}
	}
	_ = verify(provideratest.SignValid)
	cb := r.recv.last(t)
	// Within the window in both directions; outside it in the future too.
	if err := r.c.VerifyCallback(r.cred, cb, r.clock.Now().Add(-4*time.Minute)); err != nil {
		t.Fatalf("4 min skew: %v", err)
	}
	if fe := wantCode(t, r.c.VerifyCallback(r.cred, cb, r.clock.Now().Add(-6*time.Minute)), fault.CallbackFailed); fe.Details["reason"] != "stale" {
		t.Fatalf("details = %v", fe.Details)
	}
	// Another task's id in the body breaks the signature.
	tampered := generation.Callback{Header: cb.Header, Body: bytes.Replace(cb.Body, []byte(id), []byte("ffffffffffffffff"), 1)}
	if fe := wantCode(t, r.c.VerifyCallback(r.cred, tampered, r.clock.Now()), fault.CallbackFailed); fe.Details["reason"] != "signature" {
		t.Fatalf("details = %v", fe.Details)
	}
	if fe := wantCode(t, r.c.VerifyCallback(generation.Credential{}, cb, r.clock.Now()), fault.CallbackFailed); fe.Details["reason"] != "not_configured" {
		t.Fatalf("details = %v", fe.Details)
	}
	if providera.Sign("k", "t", 1) != provideratest.Sign("k", "t", 1) {
		t.Fatal("adapter and simulator sign differently")
	}
}

// TestCallbackSignatureLeavesBodyOpen: A's signature covers task id and
// timestamp only, so the text callback's headers also verify a body that
// claims completion with other audio URLs; the adapter says so
// (CallbackSignsBody is false), which makes the platform confirm every A
// callback through Query and take nothing from its body.
func TestCallbackSignatureLeavesBodyOpen(t *testing.T) {
	r := newRig(t, provideratest.DialectKie, 0)
	id := r.create(t)
	if _, err := r.sim.Advance(id); err != nil {
		t.Fatal(err)
	}
	text := r.recv.last(t)
	forged := generation.Callback{Header: text.Header, Body: []byte(`{"code":200,"msg":"ok","data":{"callbackType":"complete","task_id":"` + id +
		`","data":[{"id":"evil","audio_url":"http://169.254.169.254/latest/meta-data/a.mp3","duration":9}]}}`)}
	if err := r.c.VerifyCallback(r.cred, forged, r.clock.Now()); err != nil {
		t.Fatalf("the changed body no longer verifies (%v): the signature now covers the body; revisit CallbackSignsBody", err)
	}
	if st, err := r.c.ParseCallback(forged); err != nil || st.Stage != generation.StageProviderComplete {
		t.Fatalf("ParseCallback = %+v, %v", st, err)
	}
	if r.c.CallbackSignsBody() {
		t.Fatal("CallbackSignsBody is true, but a body changed under a valid signature verifies")
	}
}

func TestMarketCreditsConsumedDrift(t *testing.T) {
	r := newRig(t, provideratest.DialectKieMarket, 0)
	id := r.create(t)
	_ = r.sim.SetCreditsConsumed(id, 5)
	_ = r.sim.Complete(id)
	st, err := r.c.Query(context.Background(), r.cred, id)
	if err != nil || st.CreditsConsumed == nil || *st.CreditsConsumed != 5 {
		t.Fatalf("Query = %+v, %v", st, err)
	}
	if r.sim.Tasks()[0].CreditsConsumed != 5 {
		t.Fatal("TaskInfo.CreditsConsumed")
	}
}

func TestParseCallbackLenient(t *testing.T) {
	c, err := providera.New(providera.Config{BaseURL: "https://api.sunoapi.org"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		body  string
		stage generation.Stage
		code  string
		n     int
	}{
		{`{"code":200,"msg":"ok","data":{"callbackType":"complete","taskId":"t1","data":[{"id":"a","audio_url":"http://x/a.mp3","duration":"12.5"}]}}`, generation.StageProviderComplete, "", 1},
		{`{"code":531,"msg":"refunded","data":{"callbackType":"error","task_id":"t1","data":[]}}`, generation.StageFailed, "GENERATION_FAILED", 0},
		{`{"code":413,"msg":"matches existing work","data":{"callbackType":"failed","task_id":"t1","data":null}}`, generation.StageFailed, "CONTENT_POLICY_REJECTED", 0},
		{`{"code":451,"msg":"download failed","data":{"callbackType":"error","task_id":"t1"}}`, generation.StageFailed, "GENERATION_FAILED", 0},
		{`{"code":200,"msg":"ok","callbackType":"first","task_id":"t1","data":[{"id":"a","stream_audio_url":"http://x/stream/a"},{"id":"None","audio_url":"http://x/None.mp3"}]}`, generation.StageFirst, "", 1},
		{`{"code":200,"msg":"ok","data":{"taskId":"t1","state":"success","resultJson":"{\"sunoData\":[{\"id\":\"a\",\"audioUrl\":\"http://x/a.mp3\"}]}","creditsConsumed":12}}`, generation.StageProviderComplete, "", 1},
	}
	for i, c2 := range cases {
		st, err := c.ParseCallback(generation.Callback{Body: []byte(c2.body)})
		if err != nil || st.Stage != c2.stage || st.FailureCode != c2.code || len(st.Tracks) != c2.n || st.TaskID != "t1" {
			t.Fatalf("case %d: %+v, %v", i, st, err)
		}
	}
	if _, err := c.ParseCallback(generation.Callback{Body: []byte(`{"code":200,"data":{"callbackType":"text"}}`)}); !fault.Is(err, fault.CallbackFailed) {
		t.Fatalf("no task id: %v", err)
	}
}

// TestOutboundPolicy: without an HTTPClient the adapter refuses a base URL
// the URL guard refuses; a guarded client refuses an address it does not
// allow before sending anything, which is never an ambiguous create.
func TestOutboundPolicy(t *testing.T) {
	for base, reason := range map[string]string{
		"http://api.sunoapi.org":     urlguard.ReasonScheme,
		"https://127.0.0.1:8443":     urlguard.ReasonPrivateAddress,
		"https://169.254.169.254":    urlguard.ReasonPrivateAddress,
		"https://api.localhost":      urlguard.ReasonBlockedHost,
		"https://key:pw@api.kie.ai":  urlguard.ReasonCredentials,
		"https://0x7f000001/api/v1/": urlguard.ReasonHostSpelling,
	} {
		_, err := providera.New(providera.Config{BaseURL: base})
		if fe := wantCode(t, err, fault.InvalidInput); fe.Details["field"] != "baseUrl" || fe.Details["reason"] != reason {
			t.Errorf("New(%s): details %v, want baseUrl %s", base, fe.Details, reason)
		}
	}
	if _, err := providera.New(providera.Config{BaseURL: "https://api.kie.ai", Dialect: providera.DialectKie}); err != nil {
		t.Errorf("New(https://api.kie.ai): %v", err)
	}

	r := newRig(t, provideratest.DialectSunoAPI, 5*time.Second)
	c, err := providera.New(providera.Config{BaseURL: r.sim.URL(), HTTPClient: urlguardtest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Create(context.Background(), r.cred, r.req())
	if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["ambiguous"] != nil || fe.Details["retryable"] != true ||
		fe.Details["reason"] != "address_refused" {
		t.Fatalf("refused create: details %v, want retryable and not ambiguous", fe.Details)
	}
	if n := r.sim.CreateCount(); n != 0 {
		t.Fatalf("the simulator saw %d creates", n)
	}
}
