package e2e_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/transport/api"
	"github.com/creatormusic/platform/web3/x402"
	"github.com/creatormusic/platform/web3/x402/x402test"
)

// TestX402RemoteFacilitator settles through a remote facilitator (the
// loopback simulator, reached through the adapter): a purchase; the
// simulator's refusals and outages as the routes answer them; and a
// settlement whose answer was lost after the payment landed, which the
// platform never settles on the facilitator's word: the watch keeps it
// SUBMITTING while the blockhash could land it, then it needs review.
func TestX402RemoteFacilitator(t *testing.T) {
	dialects(t, func(t *testing.T, pg bool) {
		fx := newX402(t, pg, x402Setup{remote: true})
		s, key := fx.s, fx.s.Boot.TestKey
		var list api.X402ResourcesView
		s.Do(platformtest.Request{Method: http.MethodGet, Path: "/api/v1/x402/resources", Key: key}).Data(t, &list)
		if !list.Verified || list.Facilitator == nil || *list.Facilitator != fx.sim.URL() {
			t.Fatalf("resources %+v", list)
		}

		// A purchase through the remote.
		_, _, required := fx.requirements(t, key)
		_, _, second := fx.requirements(t, key)
		r := fx.settle(key, "remote-1", header(t, fx.pay(t, required)))
		v, sr := settled(t, r)
		if r.Status != http.StatusOK || !sr.Success || v.Grant == nil || fx.received(t) != x402Price || fx.sim.Calls(x402test.PathSettle) != 1 {
			t.Fatalf("settle: %d %s", r.Status, r.Body)
		}

		// Its refusals and outages.
		sig := header(t, fx.pay(t, second))
		fx.sim.Inject(x402test.Fault{Path: x402test.PathVerify, Status: http.StatusInternalServerError, Times: 1,
			Body: `{"error":"invalid_exact_solana_payload_amount_mismatch: 1 != 250000"}`})
		var vv api.X402VerifyView
		if r := fx.verify(key, sig); r.Status != http.StatusOK {
			t.Fatalf("a Go-style refusal: %d %s", r.Status, r.Body)
		} else if r.Data(t, &vv); vv.IsValid || vv.InvalidReason != x402.ReasonAmount {
			t.Fatalf("a Go-style refusal: %s", r.Body)
		}
		fx.sim.Inject(x402test.Fault{Path: x402test.PathVerify, Status: http.StatusServiceUnavailable, Body: "down", Times: 2})
		if r := fx.verify(key, sig); r.Status != http.StatusServiceUnavailable || r.Code() != "PROVIDER_UNAVAILABLE" {
			t.Fatalf("verify while the remote is down: %d %s", r.Status, r.Body)
		}
		if r := fx.settle(key, "remote-down", sig); r.Status != http.StatusServiceUnavailable || r.Code() != "PROVIDER_UNAVAILABLE" {
			t.Fatalf("settle while the remote is down: %d %s", r.Status, r.Body)
		}

		// The settlement happens; its answer is lost.
		fx.sim.Inject(x402test.Fault{Path: x402test.PathSettle, Forward: true, Status: http.StatusBadGateway, Body: "gateway", Times: 1})
		r = fx.settle(key, "remote-2", sig)
		if r.Status != http.StatusBadGateway || r.Code() != "SUBMISSION_UNCERTAIN" {
			t.Fatalf("a lost answer: %d %s", r.Status, r.Body)
		}
		if got := fx.received(t); got != 2*x402Price {
			t.Fatalf("payTo received %d: the payment should have landed", got)
		}
		// The key's request recorded no answer yet, but its settlement holds
		// the key: another payment under it is a conflict all the same.
		_, _, third := fx.requirements(t, key)
		if c := fx.settle(key, "remote-2", header(t, fx.pay(t, third))); c.Status != http.StatusConflict || c.Code() != "IDEMPOTENCY_CONFLICT" {
			t.Fatalf("another payment under the uncertain key: %d %s", c.Status, c.Body)
		}
		ctx := context.Background()
		scope := access.Scope{TenantID: s.Boot.TenantID, WorkspaceID: s.Boot.WorkspaceID, Environment: access.Test}
		set, err := s.DB.Read().X402SettlementByKey(ctx, scope, "remote-2")
		if err != nil || set.State != x402.StateSubmitting {
			t.Fatalf("the settlement: %+v, %v", set, err)
		}
		// The watch asks again; the remote's duplicate guard refuses, which
		// proves nothing while the blockhash could still land it.
		calls := fx.sim.Calls(x402test.PathSettle)
		s.Clock.Advance(11 * time.Second)
		waitFor(t, "the watch to ask the remote again", func() bool { return fx.sim.Calls(x402test.PathSettle) > calls })
		if set, _ := s.DB.Read().X402SettlementByKey(ctx, scope, "remote-2"); set.State != x402.StateSubmitting {
			t.Fatalf("settled on a duplicate refusal: %+v", set)
		}
		// Once the blockhash can no longer land, its outcome cannot be
		// established: review, nothing granted.
		s.Cluster.AdvanceSlots(chaintest.MaxBlockhashAge + 40)
		waitFor(t, "the watch to end the settlement", func() bool {
			s.Clock.Advance(time.Second)
			set, _ := s.DB.Read().X402SettlementByKey(ctx, scope, "remote-2")
			return set.State == x402.StateRequiresReview
		})
		r = fx.settle(key, "remote-2", sig)
		v, sr = settled(t, r)
		if r.Status != http.StatusPaymentRequired || sr.Success || sr.ErrorReason != x402.ReasonUnexplained || v.State == nil ||
			*v.State != "REQUIRES_REVIEW" || v.Grant != nil {
			t.Fatalf("the retry after review: %d %s", r.Status, r.Body)
		}
		if rows := outboxTypes(t, s, "test"); rows["x402_settlement.requires_review"] != 1 || rows["x402_settlement.settled"] != 1 {
			t.Fatalf("outbox %v", rows)
		}
	})
}
