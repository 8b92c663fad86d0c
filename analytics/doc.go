// Package analytics answers product analytics (spec, Architecture and
// operations: GET /api/v1/analytics/product; its body is not shown there
// and is decided here): counts of the platform's own records per period
// over a query window, in one environment. Nothing is estimated, sampled
// or projected: every number is a count of stored rows, done in SQL by
// the store.
//
// # Who reads, and what
//
// Product analytics describe the product, across every tenant and
// workspace: signups and active workspaces have no meaning inside one
// workspace. They are the platform operator's view, read by a session
// holding the super_admin platform role, as the other platform-wide
// administration reads (the AI control plane's, the fee policy's) are;
// a workspace role, OWNER included, grants nothing here, and no API key
// reads them. The report names no tenant, workspace, user or record:
// counts alone. Every count is of the caller's environment (a session
// acts in live mode, or in test mode with Platform-Environment: test),
// except the two of records that have no environment (users and
// workspaces exist in both), which say so (EnvironmentScoped false).
//
// # Window and buckets
//
// A query names a period (day, week or month; default day) and a window
// by its first and last calendar days (from and to, YYYY-MM-DD, UTC;
// defaults: to today, from DefaultBuckets periods back). The window is
// widened to whole periods: it starts at the start of the period holding
// from (a day at 00:00 UTC, a week on its Monday, a month on its first
// day) and ends at the end of the period holding to, and is cut into one
// bucket per period, [start, end). to may not be after today (a future
// bucket would count nothing that could be observed), from may not be
// after to, and the window holds at most MaxBuckets buckets; each
// refusal is INVALID_INPUT naming the parameter (details.reason future,
// after_to, too_many_buckets with details.limit). The bucket holding the
// report's asOf time is not complete: its counts are those so far. A
// query may narrow the report to some metrics, in the order it names
// them (an unknown one is INVALID_INPUT, details.reason unknown_metric);
// each metric is answered with the window and the buckets' bounds.
//
// # Metrics
//
// Each metric (Catalogue) is the rows of one source whose timestamp
// falls in a bucket, its definition stated with it; a distinct metric
// (active_workspaces) counts distinct workspaces per bucket, and its
// total is the distinct workspaces of the whole window, not a sum. A
// metric with no row in the window says StatusNoData, with no total and
// no counts: it is not shown as an observed zero. A metric with rows
// says StatusObserved, and each bucket's count is then exact, zero
// included.
//
// The package imports no transport, store or SDK; package store
// implements ReadStore.
package analytics
