package stripetest

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/creatormusic/platform/internal/simctl"
)

// Pay pays an open checkout session as a customer on the hosted page
// would: the session completes (status complete, payment_status paid), a
// customer, an active subscription (first period from now to one interval
// later on the clock) and a paid subscription_create invoice are created,
// and checkout.session.completed, customer.subscription.created and
// invoice.paid are sent. It returns the subscription id. Delivery is
// asynchronous (see Drain).
func (s *Server) Pay(sessionID string) (subscriptionID string, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrClosed
	}
	subscriptionID, err = s.payLocked(sessionID)
	s.mu.Unlock()
	s.flushOutbox()
	return subscriptionID, err
}

func (s *Server) payLocked(id string) (string, error) {
	cs, ok := s.sessions[id]
	if !ok {
		return "", fmt.Errorf("stripetest: checkout session %q: %w", id, ErrNotFound)
	}
	s.expireIfDue(cs)
	if cs.status != "open" {
		return "", fmt.Errorf("stripetest: checkout session %q is %s: %w", id, cs.status, ErrState)
	}
	now := s.now().Unix()
	cus := &customer{id: newID("cus_"), email: cs.customerEmail, created: now}
	s.customers[cus.id] = cus
	sub := &subscription{
		id: newID("sub_"), customer: cus.id, created: now, itemID: newID("si_"), price: cs.price,
		periodStart: now, periodEnd: addInterval(now, cs.price.interval, cs.price.intervalCount),
		status: "active", metadata: copyMap(cs.subMetadata),
	}
	s.subs[sub.id] = sub
	inv := s.newInvoice(sub, "subscription_create", now, now, sub.periodStart, sub.periodEnd, true)
	sub.latestInvoice = inv.id
	cs.status, cs.paymentStatus = "complete", "paid"
	cs.customer, cs.subscription, cs.invoice = cus.id, sub.id, inv.id
	s.emit("checkout.session.completed", cs.id, s.sessionJSON(cs, nil), nil)
	s.emit("customer.subscription.created", sub.id, s.subscriptionJSON(sub, nil), nil)
	s.emit("invoice.paid", inv.id, s.invoiceJSON(inv), nil)
	return sub.id, nil
}

// newInvoice creates a finalized invoice for sub: paid, or open after one
// failed attempt. Called with s.mu held.
func (s *Server) newInvoice(sub *subscription, reason string, periodStart, periodEnd, lineStart, lineEnd int64, paid bool) *invoice {
	now := s.now().Unix()
	inv := &invoice{
		id: newID("in_"), customer: sub.customer, subscription: sub.id,
		subMetadata: copyMap(sub.metadata), created: now, billingReason: reason,
		amountDue: sub.price.amount(), currency: sub.price.currency,
		periodStart: periodStart, periodEnd: periodEnd,
		lineID: newID("il_"), lineStart: lineStart, lineEnd: lineEnd,
		description:  fmt.Sprintf("%d × %s", sub.price.quantity, sub.price.productName),
		attemptCount: 1,
	}
	inv.number = fmt.Sprintf("%s-%04d", strings.ToUpper(sub.customer[len(sub.customer)-8:]), len(s.invOrder)+1)
	if paid {
		inv.status, inv.amountPaid, inv.paidAt = "paid", inv.amountDue, now
	} else {
		inv.status = "open"
	}
	s.invoices[inv.id] = inv
	s.invOrder = append(s.invOrder, inv.id)
	return inv
}

// Renew bills a subscription's next period, as Stripe does when a period
// ends: the period moves forward one interval, a subscription_cycle invoice
// is created (its period_start/end is the period just ended, its line's
// period the new one), paid or, when paid is false, left open after a
// failed attempt with the subscription past_due. It sends invoice.paid or
// invoice.payment_failed, then customer.subscription.updated, and returns
// the invoice id. A subscription set to cancel at period end is ended with
// EndPeriod instead.
func (s *Server) Renew(subscriptionID string, paid bool) (invoiceID string, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrClosed
	}
	invoiceID, err = s.renewLocked(subscriptionID, paid)
	s.mu.Unlock()
	s.flushOutbox()
	return invoiceID, err
}

// AdvanceRenewal is Renew with a successful payment.
func (s *Server) AdvanceRenewal(subscriptionID string) (invoiceID string, err error) {
	return s.Renew(subscriptionID, true)
}

func (s *Server) renewLocked(id string, paid bool) (string, error) {
	sub, ok := s.subs[id]
	if !ok {
		return "", fmt.Errorf("stripetest: subscription %q: %w", id, ErrNotFound)
	}
	if sub.status != "active" && sub.status != "past_due" {
		return "", fmt.Errorf("stripetest: subscription %q is %s: %w", id, sub.status, ErrState)
	}
	if sub.cancelAtPeriodEnd {
		return "", fmt.Errorf("stripetest: subscription %q cancels at period end; use EndPeriod: %w", id, ErrState)
	}
	prev := map[string]any{
		"latest_invoice": sub.latestInvoice,
		"items": map[string]any{"object": "list", "data": []any{map[string]any{
			"id": sub.itemID, "current_period_start": sub.periodStart, "current_period_end": sub.periodEnd,
		}}},
	}
	oldStart, oldEnd := sub.periodStart, sub.periodEnd
	sub.periodStart = oldEnd
	sub.periodEnd = addInterval(oldEnd, sub.price.interval, sub.price.intervalCount)
	inv := s.newInvoice(sub, "subscription_cycle", oldStart, oldEnd, sub.periodStart, sub.periodEnd, paid)
	sub.latestInvoice = inv.id
	newStatus := "active"
	if !paid {
		newStatus = "past_due"
	}
	if newStatus != sub.status {
		prev["status"] = sub.status
		sub.status = newStatus
	}
	if paid {
		s.emit("invoice.paid", inv.id, s.invoiceJSON(inv), nil)
	} else {
		s.emit("invoice.payment_failed", inv.id, s.invoiceJSON(inv), nil)
	}
	s.emit("customer.subscription.updated", sub.id, s.subscriptionJSON(sub, nil), prev)
	return inv.id, nil
}

// EndPeriod ends a subscription at the end of its current period: one set
// to cancel at period end, or a past_due one whose retries are exhausted
// (cancellation reason payment_failed). It becomes canceled and
// customer.subscription.deleted is sent.
func (s *Server) EndPeriod(subscriptionID string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	err := s.endPeriodLocked(subscriptionID)
	s.mu.Unlock()
	s.flushOutbox()
	return err
}

func (s *Server) endPeriodLocked(id string) error {
	sub, ok := s.subs[id]
	if !ok {
		return fmt.Errorf("stripetest: subscription %q: %w", id, ErrNotFound)
	}
	switch {
	case sub.status == "canceled":
		return fmt.Errorf("stripetest: subscription %q is already canceled: %w", id, ErrState)
	case sub.cancelAtPeriodEnd:
		sub.cancellationReason = "cancellation_requested"
	case sub.status == "past_due":
		sub.cancellationReason = "payment_failed"
		sub.canceledAt = s.now().Unix()
	default:
		return fmt.Errorf("stripetest: subscription %q is %s and not set to cancel: %w", id, sub.status, ErrState)
	}
	sub.status = "canceled"
	sub.endedAt = sub.periodEnd
	s.emit("customer.subscription.deleted", sub.id, s.subscriptionJSON(sub, nil), nil)
	return nil
}

// pageTmpl is the hosted checkout page.
var pageTmpl = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pay {{.Product}} · stripetest</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
.amount{font-size:2rem;margin:.5rem 0}button{font-size:1.1rem;padding:.6rem 2rem}
.note{color:#666;font-size:.85rem}</style></head><body>
<p class="note">stripetest: a simulated Stripe Checkout page (test mode)</p>
<h1>{{.Product}}</h1>
<p class="amount">{{.Amount}} <small>/ {{.Interval}}</small></p>
{{if .Email}}<p>{{.Email}}</p>{{end}}
{{if eq .Status "open"}}
<form method="post" action="/pay/{{.ID}}"><button type="submit">Pay</button></form>
{{if .CancelURL}}<p><a href="{{.CancelURL}}">Cancel</a></p>{{end}}
{{else}}
<p>This checkout session is {{.Status}}.</p>
{{if .SuccessURL}}<p><a href="{{.SuccessURL}}">Return to the merchant</a></p>{{end}}
{{end}}
</body></html>
`))

// zeroDecimal reports whether a currency has no minor units.
func zeroDecimal(cur string) bool {
	switch cur {
	case "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf":
		return true
	}
	return false
}

// formatAmount renders minor units for display.
func formatAmount(minor int64, cur string) string {
	if zeroDecimal(cur) {
		return strconv.FormatInt(minor, 10) + " " + strings.ToUpper(cur)
	}
	return fmt.Sprintf("%d.%02d %s", minor/100, minor%100, strings.ToUpper(cur))
}

// successURL substitutes {CHECKOUT_SESSION_ID} as Stripe does.
func successURL(cs *session) string {
	return strings.ReplaceAll(cs.successURL, "{CHECKOUT_SESSION_ID}", cs.id)
}

// payPage is GET /pay/{id}.
func (s *Server) payPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cs, ok := s.sessions[r.PathValue("id")]
	var data map[string]any
	if ok {
		s.expireIfDue(cs)
		data = map[string]any{
			"ID": cs.id, "Product": cs.price.productName, "Status": cs.status, "Email": cs.customerEmail,
			"Amount":   formatAmount(cs.price.amount(), cs.price.currency),
			"Interval": cs.price.interval, "CancelURL": cs.cancelURL, "SuccessURL": successURL(cs),
		}
	}
	s.mu.Unlock()
	s.flushOutbox()
	if !ok {
		http.Error(w, "No such checkout session.", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pageTmpl.Execute(w, data)
}

// payForm is POST /pay/{id}: the Pay button. It redirects to the success
// URL.
func (s *Server) payForm(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	_, err := s.Pay(id)
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, "No such checkout session.", http.StatusNotFound)
		return
	case errors.Is(err, ErrState):
		http.Redirect(w, r, "/pay/"+url.PathEscape(id), http.StatusSeeOther)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	target := successURL(s.sessions[id])
	s.mu.Unlock()
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// mountControl serves the /_sim/ control routes on mux behind the secret
// key, every answer with a Request-Id.
func (s *Server) mountControl(mux *http.ServeMux) error {
	c, err := simctl.NewControl(mux, simctl.ControlConfig{Key: s.cfg.SecretKey,
		RefuseFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Request-Id", newID("req_"))
			refuse(w, r, err)
		}})
	if err != nil {
		return fmt.Errorf("stripetest: %w", err)
	}
	for _, route := range []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"POST /checkout/sessions/{id}/pay", s.simPay},
		{"POST /subscriptions/{id}/renew", s.simRenew},
		{"POST /subscriptions/{id}/end_period", s.simEndPeriod},
		{"POST /webhooks/replay_last", s.simReplay},
		{"GET /events", s.simEvents},
	} {
		c.HandleFunc(route.pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Request-Id", newID("req_"))
			route.h(w, r)
		})
	}
	return nil
}

// simResult answers a control route.
func simResult(w http.ResponseWriter, v map[string]any, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "id", err.Error())
	case errors.Is(err, ErrState):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "api_error", "", "", err.Error())
	default:
		writeRaw(w, http.StatusOK, mustJSON(v))
	}
}

func (s *Server) simPay(w http.ResponseWriter, r *http.Request) {
	sub, err := s.Pay(r.PathValue("id"))
	simResult(w, map[string]any{"subscription": sub}, err)
}

func (s *Server) simRenew(w http.ResponseWriter, r *http.Request) {
	paid := true
	if v := r.FormValue("paid"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "parameter_invalid_boolean", "paid", "Invalid boolean: "+v)
			return
		}
		paid = b
	}
	inv, err := s.Renew(r.PathValue("id"), paid)
	simResult(w, map[string]any{"invoice": inv}, err)
}

func (s *Server) simEndPeriod(w http.ResponseWriter, r *http.Request) {
	err := s.EndPeriod(r.PathValue("id"))
	simResult(w, map[string]any{"subscription": r.PathValue("id")}, err)
}

func (s *Server) simReplay(w http.ResponseWriter, r *http.Request) {
	simResult(w, map[string]any{"replayed": true}, s.ReplayLastWebhook())
}

func (s *Server) simEvents(w http.ResponseWriter, r *http.Request) {
	writeRaw(w, http.StatusOK, eventsJSON(s.Events()))
}
