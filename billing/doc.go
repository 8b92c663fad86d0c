// Package billing owns checkout, subscriptions, renewals and their credit
// grants, and the marketplace fee policy (spec, "Checkout and
// subscriptions" and the fee half of "Administration and fee policy").
//
// Payment goes through the PaymentProvider port. Activation happens only
// from provider-confirmed state (a protected reconcile that asks the
// provider, or a verified webhook), never from the browser's success
// redirect, and once per checkout identity under any race or replay.
//
// # Ports
//
// The service reads and writes through ports cut by path, so that a fake of
// one is small; the store package's *Tx implements them all, and a route
// or job hands its unit of work over as the port of the path it runs:
//
//   - CheckoutPreparer, CheckoutWriter and CheckoutStarter: a checkout's
//     preparation (outside any transaction) and its insert;
//   - CheckoutReader, SubscriptionGetter, SubscriptionReader and
//     OverviewReader: the reads of a checkout, a subscription, a scope's
//     subscriptions and the administration view;
//   - CancelStore: a cancellation at period end;
//   - WebhookStore: keeping a verified webhook event and enqueueing its
//     application;
//   - FeeStore: publishing the marketplace fee policy (its reads take a
//     policy.Store);
//   - GrantStore: the plans' monthly grants (Service.PlanGranter);
//   - ActivateStore, RenewStore and EventStore: settling a subscription
//     (a checkout's reconcile, a sync with the provider or a period end,
//     and a webhook event, which leads to either), each PeriodWriter (the
//     period's credit grant, invoices, jobs, audit and outbox) with the
//     rows of its path.
//
// Each port stays within 20 methods. Settling also assigns the workspace's
// plan, and billing's port with plan.Store would exceed that: a
// SettleRunFunc hands fn the same unit of work as two ports, billing's and
// the plans' plan.Store, rather than one port that is both. A path that
// commits its own units of work takes a RunFunc or SettleRunFunc of its
// port.
package billing
