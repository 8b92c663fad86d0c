package providerb_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/providerb"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
	"github.com/creatormusic/platform/urlguard"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// receiver records webhooks.
type receiver struct {
	mu  sync.Mutex
	cbs []generation.Callback
	srv *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		b, _ := io.ReadAll(q.Body)
		r.mu.Lock()
		r.cbs = append(r.cbs, generation.Callback{Header: q.Header.Clone(), Body: b})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) all() []generation.Callback {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]generation.Callback(nil), r.cbs...)
}

type env struct {
	sim  *providerbtest.Server
	c    *providerb.Client
	cred generation.Credential
	rcv  *receiver
	clk  *clock
}

func setup(t *testing.T, cfg providerbtest.Config) *env {
	t.Helper()
	clk := &clock{t: time.Unix(1_790_000_000, 0)}
	if cfg.Clock == nil {
		cfg.Clock = clk
	}
	sim, err := providerbtest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	c, err := providerb.New(providerb.Config{BaseURL: sim.URL(), Timeout: 5 * time.Second, HTTPClient: urlguardtest.Client(t, sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	return &env{sim: sim, c: c, rcv: newReceiver(t), clk: clk,
		cred: generation.Credential{APIKey: sim.APIKey(), CallbackKey: "whsec-test"}}
}

func (e *env) create(t *testing.T) string {
	t.Helper()
	got, err := e.c.Create(context.Background(), e.cred, generation.CreateRequest{
		Prompt: "a calm piano piece", Model: "v5", CallbackURL: e.rcv.srv.URL + "/cb/attempt-token"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return got.TaskID
}

func wantCode(t *testing.T, err error, code fault.Code) *fault.Error {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("err = %v, want %s", err, code)
	}
	var fe *fault.Error
	errors.As(err, &fe)
	return fe
}

func (e *env) query(t *testing.T, id string) generation.TaskState {
	t.Helper()
	st, err := e.c.Query(context.Background(), e.cred, id)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	return st
}

func (e *env) parseLast(t *testing.T) generation.TaskState {
	t.Helper()
	cbs := e.rcv.all()
	if len(cbs) == 0 {
		t.Fatal("no webhook")
	}
	cb := cbs[len(cbs)-1]
	if err := e.c.VerifyCallback(e.cred, cb, e.clk.Now()); err != nil {
		t.Fatalf("VerifyCallback: %v", err)
	}
	st, err := e.c.ParseCallback(cb)
	if err != nil {
		t.Fatalf("ParseCallback: %v", err)
	}
	return st
}

func TestHappyPath(t *testing.T) {
	e := setup(t, providerbtest.Config{StreamingWebhooks: true})
	id := e.create(t)
	if st := e.query(t, id); st.Stage != generation.StageQueued || len(st.Tracks) != 2 {
		t.Fatalf("initial = %+v", st)
	}
	if err := e.sim.Advance(id); err != nil { // running: placeholder URLs (F10)
		t.Fatal(err)
	}
	st := e.query(t, id)
	if st.Stage != generation.StageQueued || st.Tracks[0].AudioURL != "" || st.Tracks[0].StreamURL != "" {
		t.Fatalf("running = %+v", st)
	}
	if err := e.sim.Advance(id); err != nil { // streaming (F8)
		t.Fatal(err)
	}
	st = e.parseLast(t)
	if st.TaskID != id || st.Stage != generation.StageFirst || st.Tracks[0].AudioURL != "" || st.Tracks[0].StreamURL == "" {
		t.Fatalf("streaming webhook = %+v", st)
	}
	if err := e.sim.Advance(id); err != nil {
		t.Fatal(err)
	}
	cbs := e.rcv.all()
	if ev := http.Header(cbs[len(cbs)-1].Header).Get(providerb.HeaderWebhookEvent); ev != providerb.EventCompleted {
		t.Fatalf("event = %q", ev)
	}
	st = e.parseLast(t) // duration as a string
	if st.Stage != generation.StageProviderComplete || st.CreditsConsumed != nil {
		t.Fatalf("completed webhook = %+v", st)
	}
	q := e.query(t, id) // duration as a number
	for i, tr := range append(st.Tracks, q.Tracks...) {
		if tr.DurationMs != e.sim.TrackLength().Round(10*time.Millisecond).Milliseconds() || tr.AudioURL == "" || tr.ProviderTrackID == "" || tr.Model != "chirp-v5" {
			t.Fatalf("track %d = %+v", i, tr)
		}
	}
	resp, err := http.Get(q.Tracks[0].AudioURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m, err := asset.Sniff(bytes.NewReader(b), int64(len(b))); err != nil || m.Format != asset.MP3 {
		t.Fatalf("Sniff = %+v, %v", m, err)
	}
	bal, err := e.c.Balance(context.Background(), e.cred)
	if err != nil || bal.Credits != 1000-providerbtest.CreditsPerCreate {
		t.Fatalf("Balance = %+v, %v", bal, err)
	}
	if e.c.SupportsDuration("v5") {
		t.Fatal("B supports no duration")
	}
}

func TestCreateValidation(t *testing.T) {
	e := setup(t, providerbtest.Config{})
	long := func(n int) string { return string(bytes.Repeat([]byte("a"), n)) }
	for _, c := range []struct {
		r     generation.CreateRequest
		field string
	}{
		{generation.CreateRequest{Prompt: "x", Model: "v9"}, "model"},
		{generation.CreateRequest{Prompt: ""}, "prompt"},
		{generation.CreateRequest{Prompt: long(200)}, "prompt"},
		{generation.CreateRequest{Prompt: long(3000), Title: "t", Model: "v4"}, "prompt"},
		{generation.CreateRequest{Prompt: long(5001), Title: "t", Model: "v5"}, "prompt"},
		{generation.CreateRequest{Prompt: "l", Title: long(80)}, "title"},
		{generation.CreateRequest{Prompt: "l", Style: long(200)}, "style"},
	} {
		_, err := e.c.Create(context.Background(), e.cred, c.r)
		fe := wantCode(t, err, fault.InvalidInput)
		if fe.Details["field"] != c.field {
			t.Fatalf("field = %v, want %s", fe.Details["field"], c.field)
		}
	}
	if _, err := e.c.Create(context.Background(), e.cred, generation.CreateRequest{Prompt: long(5000), Title: "t", Style: "pop", Model: "v5"}); err != nil {
		t.Fatalf("max lyrics: %v", err)
	}
	if e.sim.CreateCount() != 1 {
		t.Fatalf("creates = %d", e.sim.CreateCount())
	}
}

func TestProviderErrors(t *testing.T) {
	e := setup(t, providerbtest.Config{})
	ctx := context.Background()
	r := generation.CreateRequest{Prompt: "song"}
	_, err := e.c.Create(ctx, generation.Credential{APIKey: "wrong"}, r)
	wantCode(t, err, fault.ProviderCredentialInvalid)
	_, err = e.c.Balance(ctx, generation.Credential{APIKey: "wrong"})
	wantCode(t, err, fault.ProviderCredentialInvalid)

	e.sim.SetCredits(0, 0)
	_, err = e.c.Create(ctx, e.cred, r)
	wantCode(t, err, fault.ProviderCreditsExhausted)
	e.sim.SetCredits(100, 0)

	_, err = e.c.Create(ctx, e.cred, generation.CreateRequest{Prompt: "copyrighted lyrics please"})
	wantCode(t, err, fault.ContentPolicyRejected)

	// F5: transient 5xx on create, poll and credits; malformed poll body.
	e.sim.FailNext(providerbtest.EndpointCreate, 500, 1)
	_, err = e.c.Create(ctx, e.cred, r)
	if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["retryable"] != true {
		t.Fatalf("details = %v", fe.Details)
	}
	id := e.create(t)
	e.sim.FailNext(providerbtest.EndpointTask, 503, 1)
	_, err = e.c.Query(ctx, e.cred, id)
	wantCode(t, err, fault.ProviderUnavailable)
	e.sim.MalformedNextPoll(1)
	_, err = e.c.Query(ctx, e.cred, id)
	wantCode(t, err, fault.ProviderUnavailable)
	e.sim.FailNext(providerbtest.EndpointCredits, 502, 1)
	_, err = e.c.Balance(ctx, e.cred)
	wantCode(t, err, fault.ProviderUnavailable)
	if st := e.query(t, id); st.Stage != generation.StageQueued {
		t.Fatalf("after faults = %+v", st)
	}
	// F13.
	_, err = e.c.Query(ctx, e.cred, "00000000-0000-4000-8000-000000000000")
	wantCode(t, err, fault.NotFound)
}

func TestRateLimited(t *testing.T) { // F6
	e := setup(t, providerbtest.Config{RateLimit: 2, RateWindow: 10 * time.Second})
	e.create(t)
	e.create(t)
	_, err := e.c.Create(context.Background(), e.cred, generation.CreateRequest{Prompt: "x"})
	if fe := wantCode(t, err, fault.RateLimited); fe.Details["retryable"] != true {
		t.Fatalf("details = %v", fe.Details)
	}
	if e.sim.CreateCount() != 2 {
		t.Fatalf("creates = %d", e.sim.CreateCount())
	}
	e.clk.Add(11 * time.Second)
	e.create(t)
}

func TestAmbiguousTimeout(t *testing.T) { // F4
	e := setup(t, providerbtest.Config{})
	c, err := providerb.New(providerb.Config{BaseURL: e.sim.URL(), Timeout: 200 * time.Millisecond, HTTPClient: urlguardtest.Client(t, e.sim.URL())})
	if err != nil {
		t.Fatal(err)
	}
	e.sim.AnswerCreateLate()
	_, err = c.Create(context.Background(), e.cred, generation.CreateRequest{Prompt: "x", CallbackURL: e.rcv.srv.URL})
	if fe := wantCode(t, err, fault.ProviderTimeout); fe.Details["ambiguous"] != true {
		t.Fatalf("details = %v", fe.Details)
	}
	tasks := e.sim.Tasks()
	if len(tasks) != 1 || e.sim.CreateCount() != 1 {
		t.Fatalf("tasks = %d", len(tasks))
	}
	if st := e.query(t, tasks[0].ID); st.TaskID != tasks[0].ID {
		t.Fatalf("query = %+v", st)
	}
	// The webhook carries the attempt's callback URL, so it still matches.
	if err := e.sim.Complete(tasks[0].ID); err != nil {
		t.Fatal(err)
	}
	if st := e.parseLast(t); st.Stage != generation.StageProviderComplete {
		t.Fatalf("webhook = %+v", st)
	}
}

func TestFailures(t *testing.T) {
	e := setup(t, providerbtest.Config{})
	// F7 moderation.
	id := e.create(t)
	if err := e.sim.Fail(id, "Your lyrics were flagged by moderation review."); err != nil {
		t.Fatal(err)
	}
	cbs := e.rcv.all()
	if ev := http.Header(cbs[len(cbs)-1].Header).Get(providerb.HeaderWebhookEvent); ev != providerb.EventFailed {
		t.Fatalf("event = %q", ev)
	}
	if st := e.parseLast(t); st.Stage != generation.StageFailed || st.FailureCode != string(fault.ContentPolicyRejected) {
		t.Fatalf("moderation = %+v", st)
	}
	if st := e.query(t, id); st.FailureCode != string(fault.ContentPolicyRejected) {
		t.Fatalf("moderation poll = %+v", st)
	}
	// Plain failure.
	id = e.create(t)
	_ = e.sim.Fail(id, "Audio generation failed.")
	if st := e.query(t, id); st.Stage != generation.StageFailed || st.FailureCode != string(fault.GenerationFailed) {
		t.Fatalf("failed = %+v", st)
	}
	// F12: a hung task stays queued through Advance and Complete.
	id = e.create(t)
	_ = e.sim.Hang(id)
	_ = e.sim.Advance(id)
	_ = e.sim.Complete(id)
	if st := e.query(t, id); st.Stage != generation.StageQueued {
		t.Fatalf("hung = %+v", st)
	}
}

func TestWebhookOrderingAndDuplicates(t *testing.T) {
	e := setup(t, providerbtest.Config{StreamingWebhooks: true})
	e.sim.SetWebhookDuplicates(1) // F1: each webhook twice, same id
	id := e.create(t)
	_ = e.sim.Advance(id)
	_ = e.sim.Advance(id) // streaming webhook x2
	// F2: one clip finishes first.
	if err := e.sim.AdvanceClip(id, 0); err != nil {
		t.Fatal(err)
	}
	if st := e.parseLast(t); st.Stage != generation.StageFirst || st.Tracks[0].AudioURL == "" || st.Tracks[1].AudioURL != "" {
		t.Fatalf("one clip done = %+v", st)
	}
	_ = e.sim.AdvanceClip(id, 1)
	if st := e.parseLast(t); st.Stage != generation.StageProviderComplete {
		t.Fatalf("complete = %+v", st)
	}
	cbs := e.rcv.all()
	if len(cbs) != 6 || http.Header(cbs[4].Header).Get(providerb.HeaderWebhookID) != http.Header(cbs[5].Header).Get(providerb.HeaderWebhookID) {
		t.Fatalf("webhooks = %d", len(cbs))
	}
	// F1 after terminal with a new id; F2 an old streaming webhook after it.
	if err := e.sim.Redeliver(5, true); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.Redeliver(0, false); err != nil {
		t.Fatal(err)
	}
	cbs = e.rcv.all()
	if http.Header(cbs[6].Header).Get(providerb.HeaderWebhookID) == http.Header(cbs[5].Header).Get(providerb.HeaderWebhookID) {
		t.Fatal("redelivery with a new id kept the old one")
	}
	if st := e.parseLast(t); st.Stage != generation.StageFirst {
		t.Fatalf("stale streaming = %+v", st)
	}
	// F2: complete with no streaming before it.
	id2 := e.create(t)
	_ = e.sim.Complete(id2)
	if st := e.parseLast(t); st.TaskID != id2 || st.Stage != generation.StageProviderComplete {
		t.Fatalf("direct complete = %+v", st)
	}
}

func TestDroppedWebhookAndMedia(t *testing.T) {
	e := setup(t, providerbtest.Config{})
	id := e.create(t)
	e.sim.DropWebhooks(id) // F3
	_ = e.sim.Complete(id)
	if len(e.rcv.all()) != 0 {
		t.Fatal("webhook not dropped")
	}
	st := e.query(t, id)
	if st.Stage != generation.StageProviderComplete {
		t.Fatalf("poll = %+v", st)
	}
	get := func(u string) (int, int) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, len(b)
	}
	// F9.
	c0, c1 := st.Tracks[0], st.Tracks[1]
	e.sim.SetMedia(c0.ProviderTrackID, providerbtest.Media{Forbidden: 1})
	if s, _ := get(c0.AudioURL); s != 403 {
		t.Fatalf("first GET = %d", s)
	}
	if s, n := get(c0.AudioURL); s != 200 || n == 0 {
		t.Fatalf("second GET = %d, %d bytes", s, n)
	}
	e.sim.SetMedia(c1.ProviderTrackID, providerbtest.Media{Empty: true})
	if s, n := get(c1.AudioURL); s != 200 || n != 0 {
		t.Fatalf("empty = %d, %d", s, n)
	}
	e.sim.SetMedia(c1.ProviderTrackID, providerbtest.Media{Expired: true})
	if s, _ := get(c1.AudioURL); s != 404 {
		t.Fatalf("expired = %d", s)
	}
}

func TestTaskIDPlacement(t *testing.T) { // F11
	for _, p := range []providerbtest.TaskIDPlacement{providerbtest.TaskIDPerClip, providerbtest.TaskIDTopLevel,
		providerbtest.TaskIDCamelTop, providerbtest.TaskIDBoth} {
		e := setup(t, providerbtest.Config{})
		e.sim.SetTaskIDPlacement(p)
		id := e.create(t)
		_ = e.sim.Complete(id)
		if st := e.parseLast(t); st.TaskID != id {
			t.Fatalf("placement %d: task id %q", p, st.TaskID)
		}
	}
}

func TestSignatures(t *testing.T) {
	e := setup(t, providerbtest.Config{})
	id := e.create(t)
	_ = e.sim.Complete(id)
	good := e.rcv.all()[0]
	check := func(name string, cb generation.Callback, cred generation.Credential, now time.Time, reason string) {
		t.Helper()
		err := e.c.VerifyCallback(cred, cb, now)
		if reason == "" {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return
		}
		fe := wantCode(t, err, fault.CallbackFailed)
		if fe.Details["reason"] != reason {
			t.Fatalf("%s: reason %v, want %s", name, fe.Details["reason"], reason)
		}
	}
	now := e.clk.Now()
	check("good", good, e.cred, now, "")
	check("good within skew", good, e.cred, now.Add(4*time.Minute), "")
	check("late", good, e.cred, now.Add(6*time.Minute), "stale")
	check("early", good, e.cred, now.Add(-6*time.Minute), "stale")
	check("wrong secret", good, generation.Credential{APIKey: "k", CallbackKey: "other"}, now, "bad_signature")
	check("no secret", good, generation.Credential{APIKey: "k"}, now, "no_secret")
	tampered := generation.Callback{Header: good.Header, Body: append(bytes.Clone(good.Body), ' ')}
	check("tampered", tampered, e.cred, now, "bad_signature")
	// A body whose audio URLs were swapped under the same headers fails too:
	// B's signature covers the body, so its verified webhooks are believed.
	swapped := generation.Callback{Header: good.Header, Body: bytes.ReplaceAll(good.Body, []byte("http://"), []byte("http://169.254.169.254/x/"))}
	if bytes.Equal(swapped.Body, good.Body) {
		t.Fatal("the webhook names no http URL to swap")
	}
	check("URLs swapped", swapped, e.cred, now, "bad_signature")
	if !e.c.CallbackSignsBody() {
		t.Fatal("CallbackSignsBody is false, but B's signature covers the body")
	}
	lower := map[string][]string{}
	for k, v := range good.Header {
		lower[http.CanonicalHeaderKey(k)] = v
	}
	lower["x-webhook-signature"] = lower[providerb.HeaderWebhookSignature]
	delete(lower, providerb.HeaderWebhookSignature)
	check("lowercase header", generation.Callback{Header: lower, Body: good.Body}, e.cred, now, "")

	ts, _ := strconv.ParseInt(http.Header(good.Header).Get(providerb.HeaderWebhookTimestamp), 10, 64)
	if providerb.Sign(e.cred.CallbackKey, ts, good.Body) != http.Header(good.Header).Get(providerb.HeaderWebhookSignature) {
		t.Fatal("Sign differs from the simulator")
	}
	for _, m := range []struct {
		mode   providerbtest.Signing
		reason string
	}{{providerbtest.SignBad, "bad_signature"}, {providerbtest.SignStale, "stale"}, {providerbtest.SignMissing, "missing_signature"}} {
		e.sim.SetSigning(m.mode)
		_ = e.sim.Redeliver(0, true)
		cbs := e.rcv.all()
		check("sim "+m.reason, cbs[len(cbs)-1], e.cred, now, m.reason)
	}
	noTS := generation.Callback{Header: http.Header{providerb.HeaderWebhookSignature: {"sha256=00"}}, Body: good.Body}
	check("missing timestamp", noTS, e.cred, now, "missing_timestamp")
}

func TestParseCallbackLenient(t *testing.T) {
	c, _ := providerb.New(providerb.Config{})
	st, err := c.ParseCallback(generation.Callback{Body: []byte(`{"code":200,"data":{"task_id":"t1","data":[{"clip_id":"a","state":"succeeded","audio_url":"https://x.test/a.mp3","duration":"12.5"},{"clip_id":"b","state":"streaming","audio_url":"https://x.test/None.mp3","duration":3}]}}`)})
	if err != nil || st.TaskID != "t1" || st.Stage != generation.StageFirst || st.Tracks[0].DurationMs != 12500 ||
		st.Tracks[1].StreamURL != "" || st.Tracks[1].DurationMs != 3000 {
		t.Fatalf("st = %+v, %v", st, err)
	}
	_, err = c.ParseCallback(generation.Callback{Body: []byte(`{"code":200,"data":[]}`)})
	wantCode(t, err, fault.CallbackFailed)
	_, err = c.ParseCallback(generation.Callback{Body: []byte(`{`)})
	wantCode(t, err, fault.CallbackFailed)
}

// TestOutboundPolicy: without an HTTPClient the adapter refuses a base URL
// the URL guard refuses; a guarded client that does not allow the address
// refuses before sending: PROVIDER_UNAVAILABLE, never INVALID_INPUT (the
// provider did not judge the request) and never an ambiguous create.
func TestOutboundPolicy(t *testing.T) {
	for base, reason := range map[string]string{
		"http://api.musicapi.ai":  urlguard.ReasonScheme,
		"https://10.1.2.3":        urlguard.ReasonPrivateAddress,
		"https://[fd00:ec2::254]": urlguard.ReasonPrivateAddress,
		"https://metadata.goog":   urlguard.ReasonBlockedHost,
		"https://127.1":           urlguard.ReasonHostSpelling,
	} {
		_, err := providerb.New(providerb.Config{BaseURL: base})
		if fe := wantCode(t, err, fault.InvalidInput); fe.Details["field"] != "baseURL" || fe.Details["reason"] != reason {
			t.Errorf("New(%s): details %v, want baseURL %s", base, fe.Details, reason)
		}
	}
	e := setup(t, providerbtest.Config{})
	c, err := providerb.New(providerb.Config{BaseURL: e.sim.URL(), HTTPClient: urlguardtest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Create(context.Background(), e.cred, generation.CreateRequest{
		Prompt: "a calm piano piece", Model: "v5", CallbackURL: e.rcv.srv.URL + "/cb/attempt-token"})
	if fe := wantCode(t, err, fault.ProviderUnavailable); fe.Details["ambiguous"] != nil || fe.Details["retryable"] != true ||
		fe.Details["reason"] != "address_refused" {
		t.Fatalf("refused create: details %v", fe.Details)
	}
	if _, err := c.Balance(context.Background(), e.cred); !fault.Is(err, fault.ProviderUnavailable) {
		t.Fatalf("refused balance: %v", err)
	}
	if n := e.sim.CreateCount(); n != 0 {
		t.Fatalf("the simulator saw %d creates", n)
	}
}
