// Package jobs runs durable background work: effects outside the database
// (provider calls, chain submission), recovery polls, reconciliation and
// outbox publication. A job is a row in the jobs table; a Pool of workers,
// split into classes with their own budgets, claims rows, runs the Handler
// registered for the row's kind and records the outcome. The package declares the ports it needs (Store for workers,
// Enqueuer for domains) and imports no adapter; package store implements
// both on SQLite and PostgreSQL.
//
// # Enqueuing
//
// A domain enqueues a job on the transaction handle of its unit of work
// (Enqueuer.JobInsert), so the job commits together with the business rows
// or not at all; an effect is never started for a write that rolled back.
// An optional UniqueKey makes the insert idempotent: a second insert with the
// same key is a no-op that reports inserted=false. Keys are unique for the
// life of the row, whatever its state, so use a business reference
// ("settle:op_01jd...") rather than a time-scoped key. After the unit of work
// commits, the domain may call Pool.Notify (for example through the store's
// AfterCommit hook) to wake the pollers instead of waiting for the next poll.
//
// # Classes
//
// A pool splits the kinds it runs into classes (Config.Classes): a class is
// a name, the kinds it runs, a worker budget and an optional per-group
// limit. Each class has its own dispatcher and its own workers, and claims
// only its own kinds, so the jobs of one class never wait for workers busy
// with another's: hour-long audio work cannot hold back a payment or a
// provider dispatch. When classes are configured every handler's kind must
// belong to exactly one class, and New refuses a kind without one. A pool
// without classes has one class, "default", that claims every kind.
//
// A job enqueued with a Group (a workspace id) counts against its class's
// GroupLimit: a claim skips a job whose group already has GroupLimit jobs
// of the class running under an unexpired lease, and takes no more of one
// group than it has room for. The limit holds across every pool on the
// database, not per host: on PostgreSQL the group-limited claims of one
// class take a transaction-scoped advisory lock named by the class's kinds
// and so run one after another (each one short statement), and each sees
// what the one before it leased; SQLite's single writer serializes them
// anyway. Concurrent claimers on several hosts therefore never overshoot a
// group's limit. A job whose lease expired no longer counts as running: its
// group's room is freed and the job itself is claimable again. When a job
// of a group-limited class ends, the class's dispatcher on that host
// claims again at once instead of at its next poll, so the queue of one
// group (a webhook endpoint's attempts) drains as fast as its jobs run,
// not one job per poll interval. Classes without a group limit keep
// claiming with SKIP LOCKED and never wait on each other.
//
// Deviation from a single shared claim: a job whose kind no class of a
// pool names is not claimed by that pool at all (it waits for a host whose
// pool runs the kind, as during a rolling deploy that adds one), instead of
// being claimed and failed for want of a handler; only the default class
// claims every kind.
//
// # Claiming
//
// A class's dispatcher claims up to as many jobs as it has free workers in
// one statement: rows of its kinds whose run_at has come and that are either
// available or running under an expired lease. Claiming sets state=running,
// locked_by to a token unique to that claim (the pool's ID, a per-process
// nonce and a sequence number), locked_until to now+Lease, and increments
// attempts. On PostgreSQL the candidate rows are selected FOR UPDATE SKIP
// LOCKED (or, for a group-limited class, under its advisory lock), so
// concurrent claimers on any number of hosts never take the same row; on
// SQLite the single writer connection serializes claims and one guarded
// UPDATE ... RETURNING does the same. All times in SQL come from the store's
// clock, never from the database's now(), so tests drive leases and retries
// with a fake clock on both dialects.
//
// # Leases
//
// A claim is a lease, not ownership. While a handler runs, its worker extends
// the lease every Lease/3. A worker that crashes, hangs without heartbeating
// or loses its database stops extending; once locked_until passes, any pool
// reclaims the job (attempts is incremented again, so a crash counts as an
// attempt). Complete, Fail and Extend are compare-and-set on the claim token
// (state=running AND locked_by=token): a worker whose job was reclaimed
// cannot complete or fail it and gets a CONFLICT error; if a heartbeat sees
// CONFLICT the worker cancels the handler's context. Delivery is therefore
// at least once: a handler must be idempotent with respect to its effects
// (use the provider's idempotency key, an inbox row or a unique business
// reference), because a job whose lease expired mid-run can run again.
//
// # Retries
//
// A handler that returns an error (or panics; the panic is recovered and
// becomes the error) fails the attempt. If attempts < max_attempts the job
// goes back to available with run_at = now + backoff, computed in Go by
// Backoff: exponential in the attempt number with equal jitter, capped at
// MaxBackoff. Otherwise the job is discarded. A failure that no retry can
// cure (an input that cannot be decoded, an output over its limit) is
// returned wrapped in Permanent: the job is discarded at once, after that
// one attempt, with the error as last_error. Only unmarked errors, the
// transient ones, are retried. A job whose kind has no
// handler in the pool fails with an error naming the kind and is discarded
// once its attempts are spent. The error text is stored in last_error
// (truncated to MaxErrorLen bytes) and shown to operators: handlers must not
// put secrets, credentials or personal data in their errors.
//
// # Scale-out
//
// Several hosts on one PostgreSQL database share the work with no
// coordination other than the jobs table: each host runs a Pool with its own
// ID, SKIP LOCKED keeps claims disjoint, leases recover the jobs of a host
// that died, and the claim token keeps a slow host from overwriting the
// outcome of the host that reclaimed its job. Adding hosts adds workers.
//
// # Lifecycle
//
// New validates a Config; Start runs the dispatchers until Stop or until
// the context passed to Start ends. Stop stops claiming, waits for running
// handlers until its context ends, then cancels their contexts. Health
// reports the dispatchers' state per class, and Backlog each class's
// runnable jobs and the age of the oldest (available and due, or running
// under an expired lease, and not held back by its group's limit), read
// from the store: a class whose oldest runnable job keeps ageing is starved,
// whatever this host's dispatchers say. RunOnce claims and runs one batch
// per class synchronously, for tests and benchmarks.
package jobs
