// Package billing owns checkout, subscriptions, renewals and their credit
// grants, and the marketplace fee policy (spec, "Checkout and
// subscriptions" and the fee half of "Administration and fee policy").
//
// Payment goes through the PaymentProvider port. Activation happens only
// from provider-confirmed state (a protected reconcile that asks the
// provider, or a verified webhook), never from the browser's success
// redirect, and once per checkout identity under any race or replay.
package billing
