// Package plan owns the plan catalog, its immutable price versions, each
// workspace's plan and the monthly credit grants plans carry (spec, Identity
// and access: "plans: active plan catalog with published price versions;
// annual pricing is reported unavailable until an annual price version
// exists"; Checkout and subscriptions: a checkout captures one of these
// immutable price versions).
//
// # Catalog
//
// The catalog is configuration (Catalog, DefaultCatalog: free, pro and
// studio, monthly USD prices only). Service.Seed persists it on every
// platform start and is idempotent: seeding the same catalog again writes
// nothing; a changed amount appends a new price version for that (plan,
// currency, interval) and deactivates the old one, which is kept forever
// (a checkout that captured it still names it). Plans dropped from the
// configuration are deactivated, never deleted. A plan reports annual
// pricing unavailable (Annual, reason ReasonNoAnnualPrice) until it has an
// active price version with interval Year.
//
// # Limits
//
// Each plan carries Limits (DefaultCatalog documents the defaults): the
// longest audio one sound operation processes (SoundMaxDuration, enforced by
// package sound at admission on the input's claimed duration and, whatever
// the header claimed, in decoded frames while it runs) and the storage
// quota of a workspace in one environment (StorageQuotaBytes, enforced by
// package asset when an upload or a sound output is stored). Limits are
// configuration, read from the catalog through Service.Limits by the plan
// in effect for the workspace in the caller's environment; a plan the
// catalog no longer lists is held to the free plan's limits.
//
// # Workspace plans
//
// A workspace has a plan in each environment, test and live, as checkouts
// and subscriptions carry the environment of their checkout: a
// test-mode subscription moves only the test plan, a live one only the live
// plan. The entitlements a plan grants are written for the environment it is
// assigned in (package access loads a snapshot per environment: the rows of
// its environment plus those held in both). Every workspace starts on the
// free plan in both environments (Service.Start, called in the unit of work
// that creates the workspace): the plan's entitlements are written with
// source "plan:<id>" (which bumps the workspace's authority version, so
// every host sees them on its next request) and the current period's grants
// are enqueued. Service.Assign moves one environment to a plan; billing
// calls it on activation and, with FreeID, when a subscription ends.
//
// # Monthly credit grants
//
// A period is a calendar month in UTC, taken from the unit of work's
// injected clock (Store.Now). For each workspace and period two grants are
// made, each by one durable job of kind JobMonthlyGrant whose unique key is
// the grant's Reference, "plan-grant:<workspace>:<environment>:<YYYY-MM>":
// the live environment receives its live plan's MonthlyCredits and the test
// environment receives Catalog.TestCredits of test credits. While an
// environment has a paid subscription, that subscription grants its plan's
// credits once per subscription period (package billing) and the
// CreditGranter skips the calendar grant of that environment, so no
// environment is granted twice. The job unique
// key makes each grant enqueued once per period; the same Reference handed
// to the CreditGranter (the credit ledger) makes it booked once even if a
// job runs twice. Grants are enqueued when a workspace starts and, for every
// workspace, by the periodic job JobScheduleGrants, which runs at each
// period start (its own unique key is "plan.schedule_grants:<YYYY-MM>") and
// schedules the next one.
package plan
