package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/plan"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/urlguard/urlguardtest"
)

// The billing fault tests of the billing issue: each is a behaviour a
// customer or an operator notices, run on SQLite and PostgreSQL through the
// HTTP API, the Stripe simulator and the job pool on the fake clock. They
// never assert timings; every wait is bounded by billingWait.

// billingWait bounds every wait for an asynchronous effect (webhook
// delivery, a job run).
const billingWait = 20 * time.Second

// billingOptions run the job pool with a short poll, so jobs due on the fake
// clock run soon after it moves.
func billingOptions() platformtest.Options {
	return platformtest.Options{Jobs: platform.JobsConfig{PollInterval: 10 * time.Millisecond}}
}

// payer is a signed-up person owning a workspace who buys plans in test
// mode.
type payer struct {
	email, cookie         string
	tenantID, workspaceID string
}

// newPayer signs email up, signs in and onboards a workspace.
func newPayer(t testing.TB, s *platformtest.System, email string) *payer {
	t.Helper()
	s.Signup(email, testPassword, "Payer")
	cookie, _ := s.Login(email, testPassword)
	u := &payer{email: email, cookie: cookie}
	r := u.do(s, http.MethodPost, "/api/v1/auth/onboarding", map[string]string{"action": "create", "name": "Payer Studio", "goal": "creator"})
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("onboarding: %d %s", r.Status, r.Body)
	}
	var o api.Onboarded
	r.Data(t, &o)
	u.tenantID, u.workspaceID = o.Workspace.TenantID, o.Workspace.ID
	return u
}

// do sends one request as u in test mode.
func (u *payer) do(s *platformtest.System, method, path string, body any) *platformtest.Response {
	return s.Do(platformtest.Request{Method: method, Path: path, Cookie: u.cookie, Body: body,
		Header: map[string]string{"Platform-Environment": "test"}})
}

// relogin signs u in again: a session does not outlive a month of fake
// clock.
func (u *payer) relogin(s *platformtest.System) { u.cookie, _ = s.Login(u.email, testPassword) }

// me reads saas/me in test mode.
func (u *payer) me(t testing.TB, s *platformtest.System) api.SaasMe {
	t.Helper()
	r := u.do(s, http.MethodGet, "/api/v1/saas/me", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("saas/me: %d %s", r.Status, r.Body)
	}
	var me api.SaasMe
	r.Data(t, &me)
	return me
}

// checkout opens a checkout of planID and returns it with its provider
// session id.
func (u *payer) checkout(t testing.TB, s *platformtest.System, planID string) (api.CheckoutView, string) {
	t.Helper()
	r := u.do(s, http.MethodPost, "/api/v1/saas/checkout", map[string]string{"planId": planID})
	if r.Status != http.StatusCreated {
		t.Fatalf("checkout %s: %d %s", planID, r.Status, r.Body)
	}
	var chk api.CheckoutView
	r.Data(t, &chk)
	c, err := s.DB.Read().CheckoutGet(context.Background(), chk.ID)
	if err != nil {
		t.Fatal(err)
	}
	return chk, c.ProviderSessionID
}

// paidPlan is an activated subscription.
type paidPlan struct {
	checkoutID string
	// sub is the platform's subscription as activated.
	sub billing.WorkspaceSubscription
}

// subscribe checks out planID, pays on the simulator and reconciles, then
// waits until the payment's webhooks were received and applied, so that
// later steps start from a quiet system.
func (u *payer) subscribe(t testing.TB, s *platformtest.System, planID string) paidPlan {
	t.Helper()
	start := time.Now()
	chk, session := u.checkout(t, s, planID)
	if _, err := s.Stripe.Pay(session); err != nil {
		t.Fatal(err)
	}
	r := u.do(s, http.MethodPost, "/api/v1/saas/checkout/"+chk.ID+"/reconcile", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("reconcile: %d %s", r.Status, r.Body)
	}
	r.Data(t, &chk)
	if chk.Status != "activated" || chk.SubscriptionID == nil {
		t.Fatalf("reconciled checkout = %s", r.Body)
	}
	t.Logf("checkout to active subscription: %s (wall time: checkout, pay on the simulator, reconcile)", time.Since(start))
	sub, err := s.DB.Read().SubscriptionGet(context.Background(), *chk.SubscriptionID)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	settle(t, s, billing.JobApplyEvent)
	return paidPlan{checkoutID: chk.ID, sub: sub}
}

// drain waits for the simulator's webhook deliveries under way.
func drain(t testing.TB, s *platformtest.System) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), billingWait)
	defer cancel()
	if err := s.Stripe.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// jobRow is the part of a job row the waits read.
type jobRow struct {
	ID        string    `bun:"id"`
	State     string    `bun:"state"`
	UniqueKey string    `bun:"unique_key"`
	Attempts  int       `bun:"attempts"`
	RunAt     time.Time `bun:"run_at"`
	LastError string    `bun:"last_error"`
}

// pendingJobs lists the jobs matching where that have yet to finish: every
// one not succeeded, except available jobs never tried whose run_at is
// still ahead of the clock (a later period's renewal). A discarded job
// fails the test.
func pendingJobs(t testing.TB, s *platformtest.System, where string, args ...any) []jobRow {
	t.Helper()
	var rows []jobRow
	if err := s.DB.Read().IDB().NewRaw(`SELECT id, state, COALESCE(unique_key, '') AS unique_key, attempts, run_at,
		COALESCE(last_error, '') AS last_error FROM jobs WHERE `+where, args...).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	now := s.Clock.Now()
	var out []jobRow
	for _, j := range rows {
		switch {
		case j.State == string(jobs.Succeeded) || j.State == string(jobs.Cancelled):
		case j.State == string(jobs.Discarded):
			t.Fatalf("job %s (%s) discarded: %s", j.ID, j.UniqueKey, j.LastError)
		case j.State == string(jobs.Available) && j.Attempts == 0 && j.RunAt.After(now):
		default:
			out = append(out, j)
		}
	}
	return out
}

// waitJobs waits until no job matching where is pending. A job waiting
// for a retry (it failed an attempt) moves the fake clock to its run_at,
// so that a legitimate retry (a compare-and-set lost to a concurrent
// writer) runs; its error is logged.
func waitJobs(t testing.TB, s *platformtest.System, what, where string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(billingWait)
	logged := map[string]bool{}
	for {
		pending := pendingJobs(t, s, where, args...)
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: jobs still pending after %s: %+v", what, billingWait, pending)
		}
		for _, j := range pending {
			if j.State == string(jobs.Available) && j.Attempts > 0 {
				if !logged[j.ID+j.LastError] {
					logged[j.ID+j.LastError] = true
					t.Logf("%s: job %s retries after: %s", what, j.UniqueKey, j.LastError)
				}
				if j.RunAt.After(s.Clock.Now()) {
					s.Clock.Set(j.RunAt)
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle waits until every job of kind has finished (see waitJobs).
func settle(t testing.TB, s *platformtest.System, kind string) {
	t.Helper()
	waitJobs(t, s, kind, `kind = ?`, kind)
}

// waitJob waits until the job with uniqueKey exists and has finished.
func waitJob(t testing.TB, s *platformtest.System, uniqueKey string) {
	t.Helper()
	deadline := time.Now().Add(billingWait)
	for count(t, s, `SELECT COUNT(*) FROM jobs WHERE unique_key = ?`, uniqueKey) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no job %s after %s", uniqueKey, billingWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitJobs(t, s, uniqueKey, `unique_key = ?`, uniqueKey)
}

// waitFor polls cond until it holds, failing the test after billingWait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(billingWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, billingWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// count runs a COUNT(*) query.
func count(t testing.TB, s *platformtest.System, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB.Read().IDB().NewRaw(query, args...).Scan(context.Background(), &n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// subscription reads a subscription as stored.
func subscription(t testing.TB, s *platformtest.System, id string) billing.WorkspaceSubscription {
	t.Helper()
	sub, err := s.DB.Read().SubscriptionGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// periodGrants counts the credit ledger's movements of a subscription by
// period start (the movement's reference is the period's grant key).
func periodGrants(t testing.TB, s *platformtest.System, u *payer, subID string) map[time.Time]int {
	t.Helper()
	ms, _, err := ledger.New().List(context.Background(), s.DB.Read(), ledger.ListParams{
		Scope:   ledger.Scope{TenantID: u.tenantID, WorkspaceID: u.workspaceID, Environment: "test"},
		Ledgers: []ledger.Kind{ledger.Credits}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "grant:subscription:" + subID + ":"
	out := map[time.Time]int{}
	for _, m := range ms {
		if rest, ok := strings.CutPrefix(m.Reference, prefix); ok {
			at, err := time.Parse(time.RFC3339, rest)
			if err != nil {
				t.Fatalf("grant reference %q: %v", m.Reference, err)
			}
			out[at]++
		}
	}
	return out
}

// postWebhook posts a raw payload with a Stripe-Signature header to the
// test environment's receiver (an internal route, outside the OpenAPI
// document the client validates against).
func postWebhook(t testing.TB, s *platformtest.System, payload []byte, signature string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.Server.URL+"/internal/payments/test/webhook", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set(api.WebhookSignatureHeader, signature)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("webhook answer %d is not JSON: %s", res.StatusCode, raw)
	}
	return res.StatusCode, body
}

// event returns the simulator's newest event of typ about objectID.
func event(t testing.TB, s *platformtest.System, typ, objectID string) stripetest.Event {
	t.Helper()
	evs := s.Stripe.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ && evs[i].ObjectID == objectID {
			return evs[i]
		}
	}
	t.Fatalf("no %s event about %s", typ, objectID)
	return stripetest.Event{}
}

// resign signs an event's payload afresh, as Stripe's resend does.
func resign(s *platformtest.System, payload []byte) string {
	return stripetest.SignatureHeader(payload, s.Stripe.WebhookSecret(), s.Clock.Now())
}

// TestBillingWebhookSignatures: a forged, a stale, a tampered and an
// unsigned webhook are refused with 400 and leave nothing behind (no
// webhook row, no inbox row, no job, the checkout still open), while the
// same event validly signed activates the paid checkout.
func TestBillingWebhookSignatures(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u, chk, session := paidQuietly(t, s, "wh@example.test")
		stored := func() [3]int { return webhookRows(t, s) }
		before := stored()

		valid, validSig, err := s.Stripe.SignedWebhook(billing.WebhookCheckoutCompleted, session, stripetest.WebhookOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name    string
			signing stripetest.Signing
			// tamper changes the payload after signing.
			tamper, unsigned bool
		}{
			{name: "forged", signing: stripetest.SignForged},
			{name: "stale", signing: stripetest.SignStale},
			{name: "tampered", tamper: true},
			{name: "unsigned", unsigned: true},
		}
		for _, tc := range cases {
			payload, sig, err := s.Stripe.SignedWebhook(billing.WebhookCheckoutCompleted, session, stripetest.WebhookOptions{Signing: tc.signing})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.tamper:
				payload = bytes.Replace(payload, []byte(`"livemode":false`), []byte(`"livemode":true`), 1)
			case tc.unsigned:
				sig = ""
			}
			status, body := postWebhook(t, s, payload, sig)
			e, _ := body["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			if status != http.StatusBadRequest || e["code"] != "INVALID_INPUT" || d["reason"] != "signature" {
				t.Errorf("%s webhook: %d %v", tc.name, status, body)
			}
		}
		if after := stored(); after != before {
			t.Fatalf("refused webhooks stored something: (webhooks, inbox, jobs) %v -> %v", before, after)
		}
		r := u.do(s, http.MethodGet, "/api/v1/saas/checkout/"+chk.ID, nil)
		r.Data(t, &chk)
		if chk.Status != "open" || u.me(t, s).Subscription != nil {
			t.Fatalf("a refused webhook activated the checkout: %s", r.Body)
		}

		// The same event validly signed is kept once and activates.
		if status, body := postWebhook(t, s, valid, validSig); status != http.StatusOK {
			t.Fatalf("valid webhook: %d %v", status, body)
		}
		if status, body := postWebhook(t, s, valid, resign(s, valid)); status != http.StatusOK || body["data"].(map[string]any)["duplicate"] != true {
			t.Fatalf("replayed webhook: %d %v", status, body)
		}
		if after := stored(); after != [3]int{before[0] + 1, before[1] + 1, before[2] + 1} {
			t.Fatalf("a valid webhook and its replay: (webhooks, inbox, jobs) %v -> %v", before, after)
		}
		settle(t, s, billing.JobApplyEvent)
		if me := u.me(t, s); me.Subscription == nil || me.Subscription.Status != "active" || me.Subscription.CheckoutID != chk.ID {
			t.Fatalf("saas/me after the valid webhook = %+v", me.Subscription)
		}
	})
}

// TestBillingWebhookSecondTimestamp: an event signed 322 seconds ago (the
// window is 300) whose Stripe-Signature header gets a fresh t= in front is
// refused with 400 INVALID_INPUT (details.reason signature) and leaves
// nothing behind: the header is read as stripe-go reads it, the last t=
// being the one signed and judged. The same event signed now, with its
// header's elements reordered, is accepted and activates the checkout.
func TestBillingWebhookSecondTimestamp(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u, chk, session := paidQuietly(t, s, "second-t@example.test")
		stored := func() [3]int { return webhookRows(t, s) }
		before := stored()
		payload, stale, err := s.Stripe.SignedWebhook(billing.WebhookCheckoutCompleted, session,
			stripetest.WebhookOptions{Signing: stripetest.SignStale, StaleBy: 322 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		fresh := "t=" + strconv.FormatInt(s.Clock.Now().Unix(), 10)
		for name, header := range map[string]string{
			"fresh t in front":  fresh + "," + stale,
			"fresh t appended":  stale + "," + fresh,
			"stale as captured": stale,
		} {
			status, body := postWebhook(t, s, payload, header)
			e, _ := body["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			if status != http.StatusBadRequest || e["code"] != "INVALID_INPUT" || d["reason"] != "signature" {
				t.Errorf("%s: %d %v", name, status, body)
			}
		}
		if after := stored(); after != before {
			t.Fatalf("refused webhooks stored something: (webhooks, inbox, jobs) %v -> %v", before, after)
		}

		// Signed now, v1 before t: accepted.
		h := resign(s, payload)
		tPart, v1Part, _ := strings.Cut(h, ",")
		if status, body := postWebhook(t, s, payload, v1Part+","+tPart); status != http.StatusOK {
			t.Fatalf("reordered valid header: %d %v", status, body)
		}
		settle(t, s, billing.JobApplyEvent)
		if me := u.me(t, s); me.Subscription == nil || me.Subscription.Status != "active" || me.Subscription.CheckoutID != chk.ID {
			t.Fatalf("saas/me after the valid webhook = %+v", me.Subscription)
		}
	})
}

// TestBillingRenewalTwice: a paid renewal starts the next period with
// exactly one credit grant, whichever arrives first: the provider's
// webhooks, or the period-end job (webhooks held back). Then the
// invoice.paid webhook replayed, a new event about the same invoice and a
// second run of the period-end job grant nothing more.
func TestBillingRenewalTwice(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		t.Run("job first", func(t *testing.T) { renewTwice(t, s, "job@example.test", true) })
		t.Run("webhooks first", func(t *testing.T) { renewTwice(t, s, "hooks@example.test", false) })
	})
}

// renewTwice is TestBillingRenewalTwice for one order of arrival: with
// holdWebhooks the simulator sends nothing until the period-end job has
// renewed.
func renewTwice(t *testing.T, s *platformtest.System, email string, holdWebhooks bool) {
	ctx := context.Background()
	u := newPayer(t, s, email)
	first := u.subscribe(t, s, "pro").sub

	webhookURL := s.Server.URL + "/internal/payments/test/webhook"
	if holdWebhooks {
		if err := s.Stripe.SetWebhookURL(""); err != nil {
			t.Fatal(err)
		}
	}
	inv, err := s.Stripe.Renew(first.ProviderID, true)
	if err != nil {
		t.Fatal(err)
	}
	if !holdWebhooks {
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)
		if sub := subscription(t, s, first.ID); !sub.PeriodStart.Equal(first.PeriodEnd) {
			t.Fatalf("after the renewal webhooks: period starts %s, want %s", sub.PeriodStart, first.PeriodEnd)
		}
	}
	s.Clock.Set(first.PeriodEnd.Add(time.Second))
	renewalKey := billing.JobRenewal + ":" + first.ID + ":" + first.PeriodEnd.UTC().Format(time.RFC3339)
	waitJob(t, s, renewalKey)
	next := subscription(t, s, first.ID)
	if next.State != billing.SubscriptionActive || !next.PeriodStart.Equal(first.PeriodEnd) || !next.PeriodEnd.After(next.PeriodStart) {
		t.Fatalf("after the period-end job: %s %s..%s (first period ended %s)", next.State, next.PeriodStart, next.PeriodEnd, first.PeriodEnd)
	}
	want := map[time.Time]int{first.PeriodStart: 1, next.PeriodStart: 1}
	if g := periodGrants(t, s, u, first.ID); !mapsEqual(g, want) {
		t.Fatalf("grants after renewal = %v, want %v", g, want)
	}

	// The invoice.paid arrives (again), then a new event about the same
	// invoice, then the customer.subscription.updated (again).
	if err := s.Stripe.SetWebhookURL(webhookURL); err != nil {
		t.Fatal(err)
	}
	paid := event(t, s, billing.WebhookInvoicePaid, inv)
	if status, body := postWebhook(t, s, paid.Payload, resign(s, paid.Payload)); status != http.StatusOK {
		t.Fatalf("invoice.paid replayed: %d %v", status, body)
	}
	if _, err := s.Stripe.SendWebhook(billing.WebhookInvoicePaid, inv, stripetest.WebhookOptions{}); err != nil {
		t.Fatal(err)
	}
	updated := event(t, s, billing.WebhookSubscriptionUpdated, first.ProviderID)
	if status, body := postWebhook(t, s, updated.Payload, resign(s, updated.Payload)); status != http.StatusOK {
		t.Fatalf("subscription.updated replayed: %d %v", status, body)
	}
	// The period-end job of the first period runs a second time.
	payload, _ := json.Marshal(billing.RenewalPayload{SubscriptionID: first.ID, PeriodEnd: first.PeriodEnd})
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: billing.JobRenewal, Payload: payload, MaxAttempts: 3,
			UniqueKey: renewalKey + ":again"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitJob(t, s, renewalKey+":again")
	settle(t, s, billing.JobApplyEvent)

	again := subscription(t, s, first.ID)
	if again.State != billing.SubscriptionActive || !again.PeriodStart.Equal(next.PeriodStart) {
		t.Fatalf("after the replays: %s from %s", again.State, again.PeriodStart)
	}
	if g := periodGrants(t, s, u, first.ID); !mapsEqual(g, want) {
		t.Fatalf("grants after the replays = %v, want %v", g, want)
	}
	if n := count(t, s, `SELECT COUNT(*) FROM billing_credit_grants WHERE subscription_id = ?`, first.ID); n != 2 {
		t.Fatalf("credit grant rows = %d, want 2", n)
	}
	u.relogin(s)
	me := u.me(t, s)
	if me.Subscription == nil || me.Subscription.Status != "active" || !me.Subscription.CurrentPeriodStart.Equal(next.PeriodStart) {
		t.Fatalf("saas/me subscription = %+v", me.Subscription)
	}
	// The second period has its own period-end job.
	if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE unique_key = ?`,
		billing.JobRenewal+":"+first.ID+":"+next.PeriodEnd.UTC().Format(time.RFC3339)); n != 1 {
		t.Fatalf("next period's renewal jobs = %d", n)
	}
}

// TestBillingRenewalPaymentFailed: a renewal whose payment fails makes the
// subscription past_due at once; at period end the workspace falls back to
// the free plan (saas/me shows no subscription and the free entitlements)
// with no grant for the unpaid period; the platform then cancels the
// subscription at the provider from a durable job (so a later payment retry
// cannot charge), and the provider's deletion webhook changes nothing.
func TestBillingRenewalPaymentFailed(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u := newPayer(t, s, "unpaid@example.test")
		first := u.subscribe(t, s, "pro").sub

		if _, err := s.Stripe.Renew(first.ProviderID, false); err != nil {
			t.Fatal(err)
		}
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)
		if me := u.me(t, s); me.Subscription == nil || me.Subscription.Status != "past_due" {
			t.Fatalf("saas/me after a failed renewal = %+v", me.Subscription)
		}

		s.Clock.Set(first.PeriodEnd.Add(time.Second))
		waitJob(t, s, billing.JobRenewal+":"+first.ID+":"+first.PeriodEnd.UTC().Format(time.RFC3339))
		ended := subscription(t, s, first.ID)
		if ended.State != billing.SubscriptionUnpaid || ended.EndedAt == nil {
			t.Fatalf("after period end: %s ended %v", ended.State, ended.EndedAt)
		}
		// The fallback enqueued the provider cancellation with the ended
		// subscription; the job pool runs it after the commit, so a later
		// payment retry at the provider cannot charge the customer.
		waitJob(t, s, billing.JobProviderCancel+":"+first.ID)
		sim := simClient(t, s)
		waitFor(t, "the simulator's subscription canceled", func() bool {
			ps, err := sim.GetSubscription(context.Background(), first.ProviderID)
			if err != nil {
				t.Fatal(err)
			}
			return ps.Status == "canceled"
		})
		event(t, s, "customer.subscription.deleted", first.ProviderID)
		// The provider's customer.subscription.deleted webhook changes
		// nothing again.
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)
		if n := count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = ?`, billing.JobProviderCancel); n != 1 {
			t.Fatalf("provider cancel jobs = %d, want 1", n)
		}

		u.relogin(s)
		me := u.me(t, s)
		if me.Subscription != nil || !slices.Contains(me.Entitlements, "ai.basic") || slices.Contains(me.Entitlements, "ai.pro_models") {
			t.Fatalf("saas/me after falling back = subscription %+v, entitlements %v", me.Subscription, me.Entitlements)
		}
		if g := periodGrants(t, s, u, first.ID); !mapsEqual(g, map[time.Time]int{first.PeriodStart: 1}) {
			t.Fatalf("grants = %v, want only the first period's", g)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = ? AND target_id = ?`, billing.ActionSubscriptionEnded, first.ID); n != 1 {
			t.Fatalf("subscription.ended audit entries = %d", n)
		}
		if st := subscription(t, s, first.ID).State; st != billing.SubscriptionUnpaid {
			t.Fatalf("state after the provider ended it = %s", st)
		}
	})
}

// simClient is a payment provider client on the test environment's
// simulator, to read what the provider holds.
func simClient(t testing.TB, s *platformtest.System) *stripepay.Client {
	t.Helper()
	c, err := stripepay.New(stripepay.Config{SecretKey: s.Stripe.SecretKey(), BaseURL: s.Stripe.URL(), Timeout: billingWait,
		HTTPClient: urlguardtest.Client(t, s.Stripe.URL())})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBillingCancelAtPeriodEnd: cancelling keeps the plan until the period
// ends and refunds nothing; when the provider ends the subscription at
// period end the workspace is back on free, with no further grant.
func TestBillingCancelAtPeriodEnd(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u := newPayer(t, s, "cancel@example.test")
		first := u.subscribe(t, s, "pro").sub

		r := u.do(s, http.MethodPost, "/api/v1/subscriptions/"+first.ID+"/cancel", nil)
		var cv api.CancelView
		r.Data(t, &cv)
		if r.Status != http.StatusOK || cv.RefundIssued || cv.Subscription.Status != "cancel_scheduled" || !cv.Subscription.CancelAtPeriodEnd ||
			!cv.Subscription.CurrentPeriodEnd.Equal(first.PeriodEnd) {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)
		if me := u.me(t, s); me.Subscription == nil || me.Subscription.Status != "cancel_scheduled" {
			t.Fatalf("saas/me before period end = %+v", me.Subscription)
		}

		s.Clock.Set(first.PeriodEnd.Add(time.Second))
		if err := s.Stripe.EndPeriod(first.ProviderID); err != nil {
			t.Fatal(err)
		}
		drain(t, s)
		waitJob(t, s, billing.JobRenewal+":"+first.ID+":"+first.PeriodEnd.UTC().Format(time.RFC3339))
		settle(t, s, billing.JobApplyEvent)

		ended := subscription(t, s, first.ID)
		if ended.State != billing.SubscriptionCanceled || ended.EndedAt == nil {
			t.Fatalf("after period end: %s ended %v", ended.State, ended.EndedAt)
		}
		u.relogin(s)
		me := u.me(t, s)
		if me.Subscription != nil || !slices.Contains(me.Entitlements, "ai.basic") || slices.Contains(me.Entitlements, "ai.pro_models") {
			t.Fatalf("saas/me after period end = subscription %+v, entitlements %v", me.Subscription, me.Entitlements)
		}
		if g := periodGrants(t, s, u, first.ID); !mapsEqual(g, map[time.Time]int{first.PeriodStart: 1}) {
			t.Fatalf("grants = %v, want only the first period's", g)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = ? AND target_id = ?`, billing.ActionSubscriptionEnded, first.ID); n != 1 {
			t.Fatalf("subscription.ended audit entries = %d", n)
		}
		r = u.do(s, http.MethodPost, "/api/v1/subscriptions/"+first.ID+"/cancel", nil)
		if r.Status == http.StatusOK {
			t.Fatalf("cancelling an ended subscription: %d %s", r.Status, r.Body)
		}
	})
}

// TestBillingSupersededPrice: pro's price changes (the catalog is seeded
// again with a new amount) between the start of a checkout and its
// payment; the subscription keeps the price the checkout captured, and the
// provider charged exactly that, while a new checkout gets the new price.
func TestBillingSupersededPrice(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		ctx := context.Background()
		u := newPayer(t, s, "price@example.test")
		chk, session := u.checkout(t, s, "pro")
		if chk.Price.AmountMinor != "1900" {
			t.Fatalf("checkout price = %+v", chk.Price)
		}

		cat := plan.DefaultCatalog()
		for i := range cat.Plans {
			if cat.Plans[i].ID == "pro" {
				cat.Plans[i].Prices = []plan.Price{{Currency: "USD", Amount: 2_900, Interval: plan.Month}}
			}
		}
		svc, err := plan.New(cat)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error {
			res, err := svc.Seed(ctx, tx)
			if err == nil && res.PriceVersionsCreated != 1 {
				err = fmt.Errorf("seed created %d price versions", res.PriceVersionsCreated)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}

		if _, err := s.Stripe.Pay(session); err != nil {
			t.Fatal(err)
		}
		r := u.do(s, http.MethodPost, "/api/v1/saas/checkout/"+chk.ID+"/reconcile", nil)
		var done api.CheckoutView
		r.Data(t, &done)
		if done.Status != "activated" || done.Price != chk.Price {
			t.Fatalf("reconciled = %s; captured %+v", r.Body, chk.Price)
		}
		drain(t, s)
		settle(t, s, billing.JobApplyEvent)

		r = u.do(s, http.MethodGet, "/api/v1/admin/billing", nil)
		var o api.BillingOverview
		r.Data(t, &o)
		if o.Subscription == nil || o.Subscription.Price != chk.Price {
			t.Fatalf("subscription price = %+v, want the captured %+v", o.Subscription, chk.Price)
		}
		if len(o.Invoices) != 1 || o.Invoices[0].AmountPaid != "1900" || o.Invoices[0].Currency != "usd" {
			t.Fatalf("invoices = %+v, want one paid 1900 usd", o.Invoices)
		}
		// A checkout begun now gets the new price version.
		if now, _ := u.checkout(t, s, "pro"); now.Price.AmountMinor != "2900" || now.Price.PriceVersion != chk.Price.PriceVersion+1 ||
			now.Price.PriceVersionID == chk.Price.PriceVersionID {
			t.Fatalf("new checkout price = %+v", now.Price)
		}
	})
}

// TestBillingFeePolicyPublish: publishing a marketplace fee policy needs
// super_admin (403 without), a sign-in within ten minutes (401
// REAUTHENTICATION_REQUIRED, and the refusal does not burn the key), and
// an Idempotency-Key whose replay answers the same single version; a new
// body under a new key is the next version, and the earlier one stays
// readable.
func TestBillingFeePolicyPublish(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		sam := signIn(t, s, "sam@example.test", "Sam")
		onboard(t, s, &sam, "Sam Studio")
		put := func(cookie, key string, body any) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodPut, Path: "/api/v1/admin/fees/marketplace", Cookie: cookie, Body: body,
				Header: map[string]string{"Idempotency-Key": key}})
		}
		get := func(cookie, path string) *platformtest.Response {
			return s.Do(platformtest.Request{Method: http.MethodGet, Path: path, Cookie: cookie})
		}
		a := map[string]any{"feeBps": 500, "minimumFeeAtomic": "0"}
		b := map[string]any{"feeBps": 750, "minimumFeeAtomic": "100", "currency": "USD"}

		if r := put(sam.cookie, "fee-0", a); r.Status != http.StatusForbidden || r.Code() != "ACCESS_DENIED" {
			t.Fatalf("without super_admin: %d %s", r.Status, r.Body)
		}
		if err := s.P.GrantSuperAdmin(context.Background(), sam.email); err != nil {
			t.Fatal(err)
		}
		cookie, _ := s.Login(sam.email, testPassword)
		s.Clock.Advance(10*time.Minute + time.Second)
		if r := put(cookie, "fee-1", a); r.Status != http.StatusUnauthorized || r.Code() != "REAUTHENTICATION_REQUIRED" {
			t.Fatalf("stale sign-in: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM policy_versions WHERE policy_id = ?`, billing.FeePolicyID); n != 0 {
			t.Fatalf("refused publishes stored %d versions", n)
		}

		// Signed in again: without a key it is refused; the same request and
		// key as the stale attempt publish version 1.
		cookie, _ = s.Login(sam.email, testPassword)
		if r := put(cookie, "", a); r.Status != http.StatusBadRequest || r.Code() != "IDEMPOTENCY_KEY_REQUIRED" {
			t.Fatalf("without an Idempotency-Key: %d %s", r.Status, r.Body)
		}
		r := put(cookie, "fee-1", a)
		var v1 api.FeePolicyView
		r.Data(t, &v1)
		if r.Status != http.StatusCreated || v1.Version != 1 || v1.FeeBps != 500 {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
		replay := put(cookie, "fee-1", a)
		var again api.FeePolicyView
		replay.Data(t, &again)
		if replay.Status != http.StatusCreated || replay.Header.Get("Idempotent-Replayed") != "true" || again != v1 {
			t.Fatalf("replay: %d %v %s", replay.Status, replay.Header, replay.Body)
		}
		if r := put(cookie, "fee-1", b); r.Status != http.StatusConflict || r.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("same key, another body: %d %s", r.Status, r.Body)
		}
		var page api.FeePolicyPage
		get(cookie, "/api/v1/admin/fees").Data(t, &page)
		if len(page.Items) != 1 || page.Items[0] != v1 {
			t.Fatalf("versions after a replay = %+v", page.Items)
		}
		var cur api.FeePolicyView
		get(cookie, "/api/v1/fees/marketplace").Data(t, &cur)
		if cur != v1 {
			t.Fatalf("current = %+v, want %+v", cur, v1)
		}

		r = put(cookie, "fee-2", b)
		var v2 api.FeePolicyView
		r.Data(t, &v2)
		if r.Status != http.StatusCreated || v2.Version != 2 || v2.FeeBps != 750 || v2.Hash == v1.Hash {
			t.Fatalf("second publish: %d %s", r.Status, r.Body)
		}
		get(cookie, "/api/v1/admin/fees").Data(t, &page)
		if len(page.Items) != 2 || page.Items[0] != v2 || page.Items[1] != v1 {
			t.Fatalf("versions = %+v", page.Items)
		}
		// The largest page the route documents, and a page of one with its
		// cursor to the rest.
		if r := get(cookie, "/api/v1/admin/fees?limit=100"); r.Status != http.StatusOK {
			t.Fatalf("limit=100: %d %s", r.Status, r.Body)
		}
		var first, second api.FeePolicyPage
		get(cookie, "/api/v1/admin/fees?limit=1").Data(t, &first)
		if len(first.Items) != 1 || first.Items[0] != v2 || !first.HasMore || first.NextCursor == nil {
			t.Fatalf("first page of one = %+v", first)
		}
		get(cookie, "/api/v1/admin/fees?limit=1&cursor="+*first.NextCursor).Data(t, &second)
		if len(second.Items) != 1 || second.Items[0] != v1 || second.HasMore {
			t.Fatalf("second page of one = %+v", second)
		}
		get(cookie, "/api/v1/fees/marketplace").Data(t, &cur)
		if cur != v2 {
			t.Fatalf("current = %+v, want %+v", cur, v2)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_events WHERE action = ?`, billing.ActionFeePolicyPublished); n != 2 {
			t.Fatalf("fee_policy.published audit entries = %d, want 2", n)
		}
	})
}

// TestBillingLiveCheckoutUnavailable: platformtest configures only the
// provider's test account, so a live checkout answers 503
// PROVIDER_UNAVAILABLE and writes nothing, while the same person checks
// out in test mode.
func TestBillingLiveCheckoutUnavailable(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, billingOptions(), func(t *testing.T, s *platformtest.System) {
		u := newPayer(t, s, "live@example.test")
		for _, key := range []string{"", "live-checkout-1"} {
			r := s.Do(platformtest.Request{Method: http.MethodPost, Path: "/api/v1/saas/checkout", Cookie: u.cookie,
				Body: map[string]string{"planId": "pro"}, Header: map[string]string{"Idempotency-Key": key}})
			if r.Status != http.StatusServiceUnavailable || r.Code() != "PROVIDER_UNAVAILABLE" {
				t.Fatalf("live checkout (key %q): %d %s", key, r.Status, r.Body)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM billing_checkouts`); n != 0 {
			t.Fatalf("checkouts stored: %d", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM idempotency_records WHERE idem_key = ?`, "live-checkout-1"); n != 0 {
			t.Fatalf("idempotency records stored: %d", n)
		}
		if evs := s.Stripe.Events(); len(evs) != 0 {
			t.Fatalf("the test account saw %d events", len(evs))
		}
		if chk, _ := u.checkout(t, s, "pro"); chk.Environment != "test" {
			t.Fatalf("test checkout = %+v", chk)
		}
	})
}

// TestBillingReconcileProviderTimeout: the provider not answering in time
// during reconcile is 504 PROVIDER_TIMEOUT with nothing activated, and the
// next reconcile converges. It waits out the provider timeout, shortened
// to 2 s, on each dialect.
func TestBillingReconcileProviderTimeout(t *testing.T) {
	t.Parallel()
	o := billingOptions()
	o.PaymentTimeout = 2 * time.Second
	platformtest.Dialects(t, o, func(t *testing.T, s *platformtest.System) {
		u := newPayer(t, s, "slow@example.test")
		chk, session := u.checkout(t, s, "pro")
		// Only the reconciles below ask the provider about the session.
		if err := s.Stripe.SetWebhookURL(""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stripe.Pay(session); err != nil {
			t.Fatal(err)
		}
		s.Stripe.DelayNext(stripetest.GetCheckout, time.Minute)
		r := u.do(s, http.MethodPost, "/api/v1/saas/checkout/"+chk.ID+"/reconcile", nil)
		if r.Status != http.StatusGatewayTimeout || r.Code() != "PROVIDER_TIMEOUT" {
			t.Fatalf("reconcile on a slow provider: %d %s", r.Status, r.Body)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM billing_subscriptions`); n != 0 || u.me(t, s).Subscription != nil {
			t.Fatalf("a timed-out reconcile activated: %d subscriptions", n)
		}
		r = u.do(s, http.MethodPost, "/api/v1/saas/checkout/"+chk.ID+"/reconcile", nil)
		var done api.CheckoutView
		r.Data(t, &done)
		if done.Status != "activated" {
			t.Fatalf("reconcile after the timeout: %d %s", r.Status, r.Body)
		}
		if me := u.me(t, s); me.Subscription == nil || me.Subscription.Status != "active" {
			t.Fatalf("saas/me = %+v", me.Subscription)
		}
	})
}

// mapsEqual reports whether two grant counts are equal.
func mapsEqual(a, b map[time.Time]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// BenchmarkWebhookReceipts measures webhook receipts per second on SQLite
// and, with PLATFORM_TEST_POSTGRES_URL, PostgreSQL: b.N validly signed, distinct events (customer.updated, which billing
// keeps and ignores) posted over loopback by 16 concurrent clients, each
// verified, kept in the inbox and enqueued, with the job pool running.
func BenchmarkWebhookReceipts(b *testing.B) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		b.Run(name, func(b *testing.B) {
			o := billingOptions()
			o.Postgres = pg
			benchmarkWebhookReceipts(b, platformtest.New(b, o))
		})
	}
}

// benchmarkWebhookReceipts is BenchmarkWebhookReceipts on one System.
func benchmarkWebhookReceipts(b *testing.B, s *platformtest.System) {
	u := newPayer(b, s, "bench@example.test")
	pp := u.subscribe(b, s, "pro")
	type signed struct {
		payload []byte
		header  string
	}
	events := make([]signed, b.N)
	for i := range events {
		p, h, err := s.Stripe.SignedWebhook("customer.updated", pp.sub.ProviderCustomerID, stripetest.WebhookOptions{})
		if err != nil {
			b.Fatal(err)
		}
		events[i] = signed{p, h}
	}
	const clients = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}}
	url := s.Server.URL + "/internal/payments/test/webhook"
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(events)) {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(events[i].payload))
				req.Header.Set(api.WebhookSignatureHeader, events[i].header)
				res, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d receipts failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "receipts/s")
}

// paidQuietly signs up a payer, opens a pro checkout and pays it in the
// Stripe simulator with the simulator's own webhooks off, so only what a
// test posts reaches the receiver.
func paidQuietly(t *testing.T, s *platformtest.System, email string) (u *payer, chk api.CheckoutView, session string) {
	t.Helper()
	u = newPayer(t, s, email)
	chk, session = u.checkout(t, s, "pro")
	if err := s.Stripe.SetWebhookURL(""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stripe.Pay(session); err != nil {
		t.Fatal(err)
	}
	return u, chk, session
}

// webhookRows counts what a received webhook leaves: stored events, inbox
// rows of the test environment's consumer, and apply jobs.
func webhookRows(t *testing.T, s *platformtest.System) [3]int {
	return [3]int{
		count(t, s, `SELECT COUNT(*) FROM billing_webhook_events`),
		count(t, s, `SELECT COUNT(*) FROM inbox_events WHERE consumer = ?`, "billing.webhook:test"),
		count(t, s, `SELECT COUNT(*) FROM jobs WHERE kind = ?`, billing.JobApplyEvent),
	}
}
