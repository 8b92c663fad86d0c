package stripepay_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform/billing/stripepay"
	"github.com/creatormusic/platform/billing/stripetest"
	"github.com/creatormusic/platform/fault"
	"github.com/stripe/stripe-go/v85/webhook"
)

// TestVerifyWebhookHeaderElements: the Stripe-Signature header is read as
// stripe-go's webhook package reads it, whatever its elements' number and
// order. Each case is accepted or refused as its name says, and the
// verdict is the one stripe-go's webhook.ValidatePayloadWithTolerance
// gives for the same payload and header with the default 300-second
// tolerance (the injected clock is set to the wall clock, so both judge the
// same age). The second-t= case is the reported bypass: an event signed
// 322 seconds ago, with a fresh t= put in front of its header.
func TestVerifyWebhookHeaderElements(t *testing.T) {
	e := newEnv(t, stripetest.Config{}, stripepay.Config{})
	e.clock.Add(time.Since(e.clock.Now())) // the clock reads the wall clock's time
	cs, err := e.client.CreateCheckout(context.Background(), request("chk_header"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _, err := e.sim.SignedWebhook("checkout.session.completed", cs.ID, stripetest.WebhookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	fresh, old, within, future := now, now.Add(-322*time.Second), now.Add(-290*time.Second), now.Add(10*time.Minute)
	ts := func(at time.Time) string { return strconv.FormatInt(at.Unix(), 10) }
	// v1 is the hex signature of payload at `at` with secret.
	v1 := func(secret string, at time.Time) string {
		h := stripetest.SignatureHeader(payload, secret, at)
		return h[strings.Index(h, "v1=")+len("v1="):]
	}
	good := func(at time.Time) string { return v1(e.sim.WebhookSecret(), at) }
	other := v1("whsec_another_secret", fresh)

	cases := []struct {
		name   string
		header string
		reason string // "" when accepted
	}{
		{"one t and one v1 accepted", "t=" + ts(fresh) + ",v1=" + good(fresh), ""},
		{"fresh t before the signed t of a 322s old event refused as stale", "t=" + ts(fresh) + ",t=" + ts(old) + ",v1=" + good(old), "timestamp"},
		{"fresh t after the signature of a 322s old event refused as unsigned for it", "t=" + ts(old) + ",v1=" + good(old) + ",t=" + ts(fresh), "signature"},
		{"old t then fresh signed t accepted", "t=" + ts(old) + ",t=" + ts(fresh) + ",v1=" + good(fresh), ""},
		{"fresh signed t then old t refused as stale", "t=" + ts(fresh) + ",v1=" + good(fresh) + ",t=" + ts(old), "timestamp"},
		{"v1 before t accepted", "v1=" + good(fresh) + ",t=" + ts(fresh), ""},
		{"unknown scheme first and t last accepted", "v0=" + other + ",v1=" + good(fresh) + ",t=" + ts(fresh), ""},
		{"two v1 one valid accepted", "t=" + ts(fresh) + ",v1=" + other + ",v1=" + good(fresh), ""},
		{"non-hex v1 beside a valid one accepted", "t=" + ts(fresh) + ",v1=zz-not-hex,v1=" + good(fresh), ""},
		{"two v1 none valid refused", "t=" + ts(fresh) + ",v1=" + other + ",v1=" + v1("whsec_third", fresh), "signature"},
		{"only a non-hex v1 refused", "t=" + ts(fresh) + ",v1=zz", "signature"},
		{"missing t refused as stale", "v1=" + good(fresh), "timestamp"},
		{"non-numeric t refused", "t=abc,v1=" + good(fresh), "signature"},
		{"element without equals refused", "t=" + ts(fresh) + ",v1=" + good(fresh) + ",garbage", "signature"},
		{"element with two equals refused", "t=" + ts(fresh) + ",v1=" + good(fresh) + "=x", "signature"},
		{"space after comma hides v1 refused", "t=" + ts(fresh) + ", v1=" + good(fresh), "signature"},
		{"empty header refused", "", "signature"},
		{"322s old event refused as stale", "t=" + ts(old) + ",v1=" + good(old), "timestamp"},
		{"290s old event accepted", "t=" + ts(within) + ",v1=" + good(within), ""},
		{"future t accepted", "t=" + ts(future) + ",v1=" + good(future), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			libErr := webhook.ValidatePayloadWithTolerance(payload, tc.header, e.sim.WebhookSecret(), webhook.DefaultTolerance)
			if (libErr == nil) != (tc.reason == "") {
				t.Fatalf("stripe-go decides %v, the case expects reason %q", libErr, tc.reason)
			}
			ev, err := e.client.VerifyWebhook(payload, tc.header)
			if tc.reason == "" {
				if err != nil || ev.ObjectID != cs.ID {
					t.Fatalf("refused: %v (event %+v)", err, ev)
				}
				return
			}
			checkFault(t, err, fault.CallbackFailed, "reason", tc.reason)
		})
	}
}
