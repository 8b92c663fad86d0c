package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/plan"
)

// Webhook event types billing applies; others are kept and ignored.
const (
	WebhookCheckoutCompleted    = "checkout.session.completed"
	WebhookInvoicePaid          = "invoice.paid"
	WebhookInvoicePaymentFailed = "invoice.payment_failed"
	WebhookSubscriptionUpdated  = "customer.subscription.updated"
	WebhookSubscriptionDeleted  = "customer.subscription.deleted"
	webhookConsumerPrefix       = "billing.webhook:"
	reasonSignature             = "signature"
)

// ApplyPayload is the payload of a JobApplyEvent job.
type ApplyPayload struct {
	Environment access.Environment `json:"environment"`
	EventID     string             `json:"eventId"`
	Type        string             `json:"type"`
	ObjectID    string             `json:"objectId"`
	// SubscriptionID is the provider subscription an invoice event names,
	// used only to know which subscription to re-read from the provider.
	SubscriptionID string `json:"subscriptionId,omitempty"`
}

// ReceiveWebhook verifies a webhook's raw payload and signature header
// through env's provider (within its tolerance window; the Stripe adapter
// reads the header with stripe-go's webhook package, so a second t= or a
// reordered header is judged as Stripe's library judges it), keeps the event in
// the inbox with its payload, deduplicated by event id, and enqueues the
// job that applies it, in one unit of work. It does not act on the event:
// the job re-reads the provider's objects first. created is false for a
// replayed event.
//
// Errors: INVALID_INPUT (details.reason signature) for a forged, stale or
// malformed webhook, with nothing stored; PROVIDER_UNAVAILABLE when env has
// no provider account.
func (s *Service) ReceiveWebhook(ctx context.Context, run RunFunc[WebhookStore], env access.Environment, payload []byte, signature string) (created bool, err error) {
	const op = "billing.ReceiveWebhook"
	prov, err := s.provider(op, env)
	if err != nil {
		return false, err
	}
	ev, err := prov.VerifyWebhook(payload, signature)
	if err != nil || ev.ID == "" {
		return false, &fault.Error{Op: op, Code: fault.InvalidInput, Message: "The webhook signature is not valid.",
			Details: map[string]any{"field": "Stripe-Signature", "reason": reasonSignature}, Err: err}
	}
	if ev.Payload == nil {
		ev.Payload = payload
	}
	ap := ApplyPayload{Environment: env, EventID: ev.ID, Type: ev.Type, ObjectID: ev.ObjectID, SubscriptionID: invoiceSubscription(ev.Payload)}
	body, err := json.Marshal(ap)
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	err = run(ctx, func(st WebhookStore) error {
		first, err := st.InboxRecord(ctx, webhookConsumerPrefix+string(env), ev.ID)
		if err != nil || !first {
			return err
		}
		if _, err := st.WebhookEventInsert(ctx, WebhookRecord{Environment: env, Event: ev, ReceivedAt: st.Now()}); err != nil {
			return err
		}
		created = true
		_, err = st.JobInsert(ctx, jobs.InsertParams{Kind: JobApplyEvent, Payload: body, MaxAttempts: RenewalMaxAttempts,
			UniqueKey: "billing.event:" + string(env) + ":" + ev.ID})
		return err
	})
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	return created, nil
}

// invoiceSubscription finds the subscription id of an invoice event's
// object, where the provider's API versions put it.
func invoiceSubscription(payload []byte) string {
	var ev struct {
		Data struct {
			Object struct {
				Object                string          `json:"object"`
				WorkspaceSubscription json.RawMessage `json:"subscription"`
				Parent                struct {
					SubscriptionDetails struct {
						WorkspaceSubscription json.RawMessage `json:"subscription"`
					} `json:"subscription_details"`
				} `json:"parent"`
			} `json:"object"`
		} `json:"data"`
	}
	if json.Unmarshal(payload, &ev) != nil || ev.Data.Object.Object != "invoice" {
		return ""
	}
	for _, raw := range []json.RawMessage{ev.Data.Object.WorkspaceSubscription, ev.Data.Object.Parent.SubscriptionDetails.WorkspaceSubscription} {
		var id string
		if json.Unmarshal(raw, &id) == nil && id != "" {
			return id
		}
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.ID != "" {
			return obj.ID
		}
	}
	return ""
}

// ApplyHandler returns the handler of JobApplyEvent. Every event goes
// through the path a reconcile takes: the provider's object is re-read
// through the port before anything changes (the webhook body is never
// trusted alone), and activation and grants are once per checkout and
// period, so replays and races converge.
func (s *Service) ApplyHandler(run SettleRunFunc[EventStore]) jobs.Handler {
	return func(ctx context.Context, job jobs.Job) error {
		var pl ApplyPayload
		if err := json.Unmarshal(job.Payload, &pl); err != nil {
			return fmt.Errorf("billing.apply_event: decode payload: %w", err)
		}
		if err := s.ApplyEvent(ctx, run, pl); err != nil {
			return fmt.Errorf("billing.apply_event %s %s: %w", pl.Type, pl.EventID, err)
		}
		return nil
	}
}

// ApplyEvent applies one verified webhook event (see ApplyHandler). Events
// about objects billing does not know are ignored.
func (s *Service) ApplyEvent(ctx context.Context, run SettleRunFunc[EventStore], pl ApplyPayload) error {
	const op = "billing.ApplyEvent"
	switch {
	case pl.Type == WebhookCheckoutCompleted || strings.HasPrefix(pl.Type, "checkout.session."):
		var c Checkout
		err := run(ctx, func(st EventStore, _ plan.Store) (err error) {
			c, err = st.CheckoutGetBySession(ctx, pl.Environment, pl.ObjectID)
			return err
		})
		if fault.Is(err, fault.NotFound) {
			return nil
		}
		if err != nil {
			return fault.Wrap(op, err)
		}
		_, err = s.reconcile(ctx, narrowSettle(run, func(st EventStore) ActivateStore { return st }), c)
		if fault.Is(err, fault.Conflict) && pl.Type != WebhookCheckoutCompleted {
			return nil
		}
		return err
	case pl.Type == WebhookInvoicePaid || pl.Type == WebhookInvoicePaymentFailed ||
		pl.Type == WebhookSubscriptionUpdated || pl.Type == WebhookSubscriptionDeleted:
		providerSub := pl.ObjectID
		if strings.HasPrefix(pl.Type, "invoice.") {
			providerSub = pl.SubscriptionID
		}
		if providerSub == "" {
			return nil
		}
		var sub WorkspaceSubscription
		err := run(ctx, func(st EventStore, _ plan.Store) (err error) {
			sub, err = st.SubscriptionGetByProvider(ctx, pl.Environment, providerSub)
			return err
		})
		if fault.Is(err, fault.NotFound) {
			return nil // not activated yet: the checkout's reconcile or webhook activates it
		}
		if err != nil {
			return fault.Wrap(op, err)
		}
		return s.Sync(ctx, narrowSettle(run, func(st EventStore) RenewStore { return st }), sub.ID, nil)
	}
	return nil
}
