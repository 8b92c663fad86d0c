package stripetest

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// price is the inline price_data of a session's single line item.
type price struct {
	id, product   string
	productName   string
	currency      string
	unitAmount    int64
	interval      string
	quantity      int64
	createdUnix   int64
	intervalCount int64
}

func (p price) amount() int64 { return p.unitAmount * p.quantity }

type session struct {
	id            string
	created       int64
	expiresAt     int64
	price         price
	clientRef     string
	customerEmail string
	successURL    string
	cancelURL     string
	metadata      map[string]string
	subMetadata   map[string]string
	status        string // open, complete, expired
	paymentStatus string // unpaid, paid
	customer      string
	subscription  string
	invoice       string
}

type customer struct {
	id      string
	email   string
	created int64
}

type subscription struct {
	id                 string
	customer           string
	created            int64
	itemID             string
	price              price
	periodStart        int64
	periodEnd          int64
	status             string
	cancelAtPeriodEnd  bool
	canceledAt         int64
	endedAt            int64
	cancellationReason string
	latestInvoice      string
	metadata           map[string]string
}

type invoice struct {
	id            string
	number        string
	customer      string
	subscription  string
	subMetadata   map[string]string
	created       int64
	billingReason string
	status        string // open, paid
	amountDue     int64
	amountPaid    int64
	currency      string
	periodStart   int64
	periodEnd     int64
	lineID        string
	lineStart     int64
	lineEnd       int64
	description   string
	attemptCount  int64
	paidAt        int64
}

// nullable renders 0 and "" as JSON null, as Stripe renders unset fields.
func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// addInterval moves t one billing interval forward.
func addInterval(t int64, interval string, count int64) int64 {
	tt := time.Unix(t, 0).UTC()
	n := int(count)
	switch interval {
	case "day":
		tt = tt.AddDate(0, 0, n)
	case "week":
		tt = tt.AddDate(0, 0, 7*n)
	case "year":
		tt = tt.AddDate(n, 0, 0)
	default:
		tt = tt.AddDate(0, n, 0)
	}
	return tt.Unix()
}

// expansions reads expand[] / expand[N] parameters.
func expansions(form url.Values) map[string]bool {
	out := map[string]bool{}
	for k, vs := range form {
		if k == "expand" || strings.HasPrefix(k, "expand[") {
			for _, v := range vs {
				out[v] = true
			}
		}
	}
	return out
}

// checkExpand answers 400 for an expansion the object does not have.
func checkExpand(exp map[string]bool, allowed ...string) (int, any, bool) {
	for e := range exp {
		if !slices.Contains(allowed, e) {
			st, v := invalid("expand", "This property cannot be expanded ("+e+").")
			return st, v, false
		}
	}
	return 0, nil, true
}

func (s *Server) priceJSON(p price) map[string]any {
	return map[string]any{
		"id": p.id, "object": "price", "active": false, "billing_scheme": "per_unit",
		"created": p.createdUnix, "currency": p.currency, "livemode": false,
		"lookup_key": nil, "metadata": map[string]string{}, "nickname": nil,
		"product": p.product, "tax_behavior": "unspecified", "type": "recurring",
		"unit_amount": p.unitAmount, "unit_amount_decimal": strconv.FormatInt(p.unitAmount, 10),
		"recurring": map[string]any{
			"interval": p.interval, "interval_count": p.intervalCount,
			"usage_type": "licensed", "meter": nil, "trial_period_days": nil,
		},
	}
}

func (s *Server) sessionJSON(cs *session, exp map[string]bool) map[string]any {
	var cust, sub, inv any = nullable(cs.customer), nullable(cs.subscription), nullable(cs.invoice)
	if exp["customer"] && cs.customer != "" {
		cust = s.customerJSON(s.customers[cs.customer])
	}
	if exp["subscription"] && cs.subscription != "" {
		sub = s.subscriptionJSON(s.subs[cs.subscription], nil)
	}
	var details any
	if cs.customerEmail != "" {
		details = map[string]any{"email": cs.customerEmail, "name": nil, "phone": nil, "address": nil, "tax_exempt": "none", "tax_ids": []any{}}
	}
	return map[string]any{
		"id": cs.id, "object": "checkout.session", "livemode": false, "created": cs.created,
		"expires_at": cs.expiresAt, "mode": "subscription", "status": cs.status,
		"payment_status": cs.paymentStatus, "client_reference_id": nullable(cs.clientRef),
		"customer": cust, "customer_email": nullable(cs.customerEmail), "customer_details": details,
		"customer_creation": "always", "subscription": sub, "invoice": inv,
		"amount_subtotal": cs.price.amount(), "amount_total": cs.price.amount(),
		"currency": cs.price.currency, "metadata": cs.metadata,
		"success_url": nullable(cs.successURL), "cancel_url": nullable(cs.cancelURL),
		"url": func() any {
			if cs.status != "open" {
				return nil
			}
			return s.url + "/pay/" + cs.id
		}(),
		"ui_mode": "hosted", "payment_intent": nil, "payment_link": nil, "setup_intent": nil,
		"total_details": map[string]any{"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0},
	}
}

func (s *Server) customerJSON(c *customer) map[string]any {
	return map[string]any{
		"id": c.id, "object": "customer", "livemode": false, "created": c.created,
		"email": nullable(c.email), "name": nil, "phone": nil, "description": nil,
		"metadata": map[string]string{}, "currency": nil, "delinquent": false,
		"invoice_prefix": strings.ToUpper(c.id[len(c.id)-8:]),
	}
}

func (s *Server) subscriptionJSON(sub *subscription, exp map[string]bool) map[string]any {
	var cust, latest any = sub.customer, nullable(sub.latestInvoice)
	if exp["customer"] {
		cust = s.customerJSON(s.customers[sub.customer])
	}
	if exp["latest_invoice"] && sub.latestInvoice != "" {
		latest = s.invoiceJSON(s.invoices[sub.latestInvoice])
	}
	var cancelAt any
	if sub.cancelAtPeriodEnd {
		cancelAt = sub.periodEnd
	}
	var details = map[string]any{"comment": nil, "feedback": nil, "reason": nullable(sub.cancellationReason)}
	item := map[string]any{
		"id": sub.itemID, "object": "subscription_item", "created": sub.created,
		"current_period_start": sub.periodStart, "current_period_end": sub.periodEnd,
		"metadata": map[string]string{}, "price": s.priceJSON(sub.price), "quantity": sub.price.quantity,
		"subscription": sub.id, "tax_rates": []any{}, "discounts": []any{},
	}
	return map[string]any{
		"id": sub.id, "object": "subscription", "livemode": false, "created": sub.created,
		"start_date": sub.created, "billing_cycle_anchor": sub.created,
		"cancel_at": cancelAt, "cancel_at_period_end": sub.cancelAtPeriodEnd,
		"canceled_at": nullable(sub.canceledAt), "ended_at": nullable(sub.endedAt),
		"cancellation_details": details, "collection_method": "charge_automatically",
		"currency": sub.price.currency, "customer": cust, "latest_invoice": latest,
		"metadata": sub.metadata, "status": sub.status, "description": nil,
		"discounts": []any{}, "default_payment_method": nil, "schedule": nil, "test_clock": nil,
		"trial_start": nil, "trial_end": nil, "days_until_due": nil,
		"items": map[string]any{
			"object": "list", "data": []any{item}, "has_more": false,
			"total_count": 1, "url": "/v1/subscription_items?subscription=" + sub.id,
		},
	}
}

func (s *Server) invoiceJSON(inv *invoice) map[string]any {
	var paidAt any
	if inv.paidAt != 0 {
		paidAt = inv.paidAt
	}
	line := map[string]any{
		"id": inv.lineID, "object": "line_item", "livemode": false, "amount": inv.amountDue,
		"currency": inv.currency, "description": inv.description, "invoice": inv.id,
		"metadata": map[string]string{}, "quantity": 1,
		"period": map[string]any{"start": inv.lineStart, "end": inv.lineEnd},
		"parent": map[string]any{
			"type": "subscription_item_details",
			"subscription_item_details": map[string]any{
				"subscription": inv.subscription, "proration": false, "invoice_item": nil,
				"subscription_item": s.subs[inv.subscription].itemID,
			},
		},
	}
	remaining := inv.amountDue - inv.amountPaid
	return map[string]any{
		"id": inv.id, "object": "invoice", "livemode": false, "created": inv.created,
		"number": inv.number, "customer": inv.customer, "currency": inv.currency,
		"billing_reason": inv.billingReason, "collection_method": "charge_automatically",
		"status": inv.status, "amount_due": inv.amountDue, "amount_paid": inv.amountPaid,
		"amount_remaining": remaining, "subtotal": inv.amountDue, "total": inv.amountDue,
		"attempt_count": inv.attemptCount, "attempted": inv.attemptCount > 0,
		"period_start": inv.periodStart, "period_end": inv.periodEnd,
		"metadata": map[string]string{}, "description": nil, "due_date": nil,
		"hosted_invoice_url": s.url + "/invoices/" + inv.id,
		"status_transitions": map[string]any{
			"finalized_at": inv.created, "paid_at": paidAt, "marked_uncollectible_at": nil, "voided_at": nil,
		},
		"parent": map[string]any{
			"type": "subscription_details", "quote_details": nil,
			"subscription_details": map[string]any{
				"subscription": inv.subscription, "metadata": inv.subMetadata,
			},
		},
		"lines": map[string]any{
			"object": "list", "data": []any{line}, "has_more": false,
			"total_count": 1, "url": "/v1/invoices/" + inv.id + "/lines",
		},
	}
}

var (
	currencyRE = regexp.MustCompile(`^[a-z]{3}$`)
	lineItemRE = regexp.MustCompile(`^line_items\[(\d+)\]`)
)

// sessionParam reports whether createSession accepts the exact parameter k.
func sessionParam(k string) bool {
	switch k {
	case "mode", "client_reference_id", "customer_email", "success_url", "cancel_url",
		"line_items[0][quantity]", "line_items[0][price_data][currency]",
		"line_items[0][price_data][unit_amount]", "line_items[0][price_data][recurring][interval]",
		"line_items[0][price_data][recurring][interval_count]",
		"line_items[0][price_data][product_data][name]":
		return true
	}
	return false
}

// createSession is POST /v1/checkout/sessions.
func (s *Server) createSession(r *http.Request, form url.Values) (int, any) {
	for k := range r.PostForm {
		switch {
		case sessionParam(k),
			strings.HasPrefix(k, "metadata["), strings.HasPrefix(k, "subscription_data[metadata]["),
			k == "expand", strings.HasPrefix(k, "expand["):
		case lineItemRE.MatchString(k) && !strings.HasPrefix(k, "line_items[0]"):
			return invalid("line_items", "stripetest supports exactly one line item.")
		case strings.HasPrefix(k, "line_items[0][price]"):
			return invalid(k, "stripetest supports inline price_data only.")
		default:
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_unknown", k,
				"Received unknown parameter: "+k)
		}
	}
	mode := form.Get("mode")
	switch {
	case mode == "":
		return missing("mode")
	case mode != "subscription":
		return invalid("mode", "stripetest supports mode=subscription only.")
	case form.Get("success_url") == "":
		return missing("success_url")
	}
	for _, u := range []string{"success_url", "cancel_url"} {
		if v := form.Get(u); v != "" {
			if p, err := url.Parse(v); err != nil || !p.IsAbs() {
				return apiError(http.StatusBadRequest, "invalid_request_error", "url_invalid", u, "Not a valid URL")
			}
		}
	}
	const pd = "line_items[0][price_data]"
	if form.Get(pd+"[currency]") == "" {
		return missing(pd + "[currency]")
	}
	cur := form.Get(pd + "[currency]")
	if !currencyRE.MatchString(cur) {
		return invalid(pd+"[currency]", "Invalid currency: "+cur+".")
	}
	amount, err := strconv.ParseInt(form.Get(pd+"[unit_amount]"), 10, 64)
	if err != nil || amount < 0 {
		return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid_integer",
			pd+"[unit_amount]", "Invalid integer: "+form.Get(pd+"[unit_amount]"))
	}
	interval := form.Get(pd + "[recurring][interval]")
	if interval == "" {
		return invalid(pd+"[recurring]", "You must provide a recurring price in subscription mode.")
	}
	if !slices.Contains([]string{"day", "week", "month", "year"}, interval) {
		return invalid(pd+"[recurring][interval]", "Invalid interval: must be one of day, month, week, or year")
	}
	count := int64(1)
	if v := form.Get(pd + "[recurring][interval_count]"); v != "" {
		if count, err = strconv.ParseInt(v, 10, 64); err != nil || count < 1 {
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid_integer",
				pd+"[recurring][interval_count]", "Invalid integer: "+v)
		}
	}
	name := form.Get(pd + "[product_data][name]")
	if name == "" {
		return missing(pd + "[product_data][name]")
	}
	qty := int64(1)
	if v := form.Get("line_items[0][quantity]"); v != "" {
		if qty, err = strconv.ParseInt(v, 10, 64); err != nil || qty < 1 {
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid_integer",
				"line_items[0][quantity]", "Invalid integer: "+v)
		}
	} else {
		return missing("line_items[0][quantity]")
	}
	if exp := expansions(form); len(exp) > 0 {
		if st, v, ok := checkExpand(exp, "customer", "subscription"); !ok {
			return st, v
		}
	}
	now := s.now().Unix()
	cs := &session{
		id: newID("cs_test_"), created: now, expiresAt: now + 24*3600,
		price: price{
			id: newID("price_"), product: newID("prod_"), productName: name, currency: cur,
			unitAmount: amount, interval: interval, intervalCount: count, quantity: qty, createdUnix: now,
		},
		clientRef: form.Get("client_reference_id"), customerEmail: form.Get("customer_email"),
		successURL: form.Get("success_url"), cancelURL: form.Get("cancel_url"),
		metadata: prefixed(form, "metadata["), subMetadata: prefixed(form, "subscription_data[metadata]["),
		status: "open", paymentStatus: "unpaid",
	}
	s.sessions[cs.id] = cs
	return http.StatusOK, s.sessionJSON(cs, expansions(form))
}

// prefixed collects prefix<key>] parameters into a map.
func prefixed(form url.Values, prefix string) map[string]string {
	m := map[string]string{}
	for k, v := range form {
		if rest, ok := strings.CutPrefix(k, prefix); ok && strings.HasSuffix(rest, "]") && len(v) > 0 {
			m[strings.TrimSuffix(rest, "]")] = v[0]
		}
	}
	return m
}

// getSession is GET /v1/checkout/sessions/{id}.
func (s *Server) getSession(r *http.Request, form url.Values) (int, any) {
	cs, ok := s.sessions[r.PathValue("id")]
	if !ok {
		return noSuch("checkout.session", r.PathValue("id"))
	}
	exp := expansions(form)
	if st, v, ok := checkExpand(exp, "customer", "subscription"); !ok {
		return st, v
	}
	s.expireIfDue(cs)
	return http.StatusOK, s.sessionJSON(cs, exp)
}

// expireIfDue expires an open session past expires_at.
func (s *Server) expireIfDue(cs *session) {
	if cs.status == "open" && s.now().Unix() >= cs.expiresAt {
		cs.status = "expired"
		s.emit("checkout.session.expired", cs.id, s.sessionJSON(cs, nil), nil)
	}
}

// getSubscription is GET /v1/subscriptions/{id}.
func (s *Server) getSubscription(r *http.Request, form url.Values) (int, any) {
	sub, ok := s.subs[r.PathValue("id")]
	if !ok {
		return noSuch("subscription", r.PathValue("id"))
	}
	exp := expansions(form)
	if st, v, ok := checkExpand(exp, "customer", "latest_invoice"); !ok {
		return st, v
	}
	return http.StatusOK, s.subscriptionJSON(sub, exp)
}

// updateSubscription is POST /v1/subscriptions/{id}: cancel_at_period_end
// and metadata.
func (s *Server) updateSubscription(r *http.Request, form url.Values) (int, any) {
	sub, ok := s.subs[r.PathValue("id")]
	if !ok {
		return noSuch("subscription", r.PathValue("id"))
	}
	for k := range r.PostForm {
		if k != "cancel_at_period_end" && !strings.HasPrefix(k, "metadata[") && k != "expand" && !strings.HasPrefix(k, "expand[") {
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_unknown", k,
				"Received unknown parameter: "+k)
		}
	}
	exp := expansions(form)
	if st, v, ok := checkExpand(exp, "customer", "latest_invoice"); !ok {
		return st, v
	}
	if sub.status == "canceled" || sub.status == "incomplete_expired" {
		return invalid("", "A canceled subscription can only update its cancellation_details and metadata.")
	}
	prev := map[string]any{}
	if v := form.Get("cancel_at_period_end"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid_boolean",
				"cancel_at_period_end", "Invalid boolean: "+v)
		}
		if b != sub.cancelAtPeriodEnd {
			prev["cancel_at_period_end"] = sub.cancelAtPeriodEnd
			prev["cancel_at"] = map[bool]any{true: sub.periodEnd, false: nil}[sub.cancelAtPeriodEnd]
			prev["canceled_at"] = nullable(sub.canceledAt)
			sub.cancelAtPeriodEnd = b
			if b {
				sub.canceledAt = s.now().Unix()
				sub.cancellationReason = "cancellation_requested"
			} else {
				sub.canceledAt = 0
				sub.cancellationReason = ""
			}
		}
	}
	if md := prefixed(r.PostForm, "metadata["); len(md) > 0 {
		prev["metadata"] = copyMap(sub.metadata)
		for k, v := range md {
			if v == "" {
				delete(sub.metadata, k)
			} else {
				sub.metadata[k] = v
			}
		}
	}
	if len(prev) > 0 {
		s.emit("customer.subscription.updated", sub.id, s.subscriptionJSON(sub, nil), prev)
	}
	return http.StatusOK, s.subscriptionJSON(sub, exp)
}

// cancelSubscription is DELETE /v1/subscriptions/{id}: it ends the
// subscription now (status canceled, canceled_at and ended_at now,
// cancellation reason cancellation_requested) and sends
// customer.subscription.deleted. prorate and invoice_now may only be false:
// the simulator neither prorates nor invoices a cancellation. A subscription
// that is already canceled answers 400, as other changes to it do.
func (s *Server) cancelSubscription(r *http.Request, form url.Values) (int, any) {
	sub, ok := s.subs[r.PathValue("id")]
	if !ok {
		return noSuch("subscription", r.PathValue("id"))
	}
	for k := range form {
		if k != "prorate" && k != "invoice_now" && !strings.HasPrefix(k, "cancellation_details[") && k != "expand" && !strings.HasPrefix(k, "expand[") {
			return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_unknown", k,
				"Received unknown parameter: "+k)
		}
	}
	for _, k := range []string{"prorate", "invoice_now"} {
		if v := form.Get(k); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return apiError(http.StatusBadRequest, "invalid_request_error", "parameter_invalid_boolean", k, "Invalid boolean: "+v)
			}
			if b {
				return invalid(k, "stripetest does not simulate "+k+"=true.")
			}
		}
	}
	exp := expansions(form)
	if st, v, ok := checkExpand(exp, "customer", "latest_invoice"); !ok {
		return st, v
	}
	if sub.status == "canceled" || sub.status == "incomplete_expired" {
		return invalid("", "This subscription is already canceled: '"+sub.id+"'.")
	}
	now := s.now().Unix()
	sub.status, sub.canceledAt, sub.endedAt, sub.cancellationReason = "canceled", now, now, "cancellation_requested"
	s.emit("customer.subscription.deleted", sub.id, s.subscriptionJSON(sub, nil), nil)
	return http.StatusOK, s.subscriptionJSON(sub, exp)
}

// listInvoices is GET /v1/invoices, newest first.
func (s *Server) listInvoices(r *http.Request, form url.Values) (int, any) {
	limit := int64(10)
	if v := form.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 100 {
			return invalid("limit", "This value must be between 1 and 100 (it currently is '"+v+"').")
		}
		limit = n
	}
	if len(expansions(form)) > 0 {
		if st, v, ok := checkExpand(expansions(form)); !ok {
			return st, v
		}
	}
	subID, custID, status := form.Get("subscription"), form.Get("customer"), form.Get("status")
	after := form.Get("starting_after")
	if after != "" {
		if _, ok := s.invoices[after]; !ok {
			return noSuch("invoice", after)
		}
	}
	data := []any{}
	started := after == ""
	more := false
	for i := len(s.invOrder) - 1; i >= 0; i-- {
		inv := s.invoices[s.invOrder[i]]
		if !started {
			started = inv.id == after
			continue
		}
		if (subID != "" && inv.subscription != subID) || (custID != "" && inv.customer != custID) ||
			(status != "" && inv.status != status) {
			continue
		}
		if int64(len(data)) == limit {
			more = true
			break
		}
		data = append(data, s.invoiceJSON(inv))
	}
	return http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": more, "url": "/v1/invoices"}
}

// getInvoice is GET /v1/invoices/{id}.
func (s *Server) getInvoice(r *http.Request, form url.Values) (int, any) {
	inv, ok := s.invoices[r.PathValue("id")]
	if !ok {
		return noSuch("invoice", r.PathValue("id"))
	}
	return http.StatusOK, s.invoiceJSON(inv)
}

// getCustomer is GET /v1/customers/{id}.
func (s *Server) getCustomer(r *http.Request, form url.Values) (int, any) {
	c, ok := s.customers[r.PathValue("id")]
	if !ok {
		return noSuch("customer", r.PathValue("id"))
	}
	return http.StatusOK, s.customerJSON(c)
}
