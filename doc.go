// Package platform is the creator-music platform as an embeddable Go
// library: New builds the whole system on an opened store, Handler serves
// its HTTP API, and Close stops its workers.
//
// # Embedding
//
// Open a store with the dialect you run (store/sqlite or store/postgres; a
// Postgres-only service links no SQLite), then:
//
//	db, err := sqlite.Open(ctx, sqlite.Config{Path: "platform.db"})
//	p, err := platform.New(ctx, platform.Config{Store: db, SecretKey: key, BlobDir: "blobs", Mailer: mailer})
//	defer p.Close()
//	http.ListenAndServe("127.0.0.1:8080", p.Handler())
//
// The handler serves /api/v1 (the business routes), /api/docs/ (an
// interactive, offline docs page over the OpenAPI 3.1 document at
// /api/docs/openapi.json) and /api/client-collection/ (a generated client
// collection). One route table (transport/api, served by the engine in
// transport) registers every handler, and transport/openapi writes the
// document from the same table, so runtime and contract agree.
//
// # Scale-out
//
// Several hosts can run New against one PostgreSQL database: durable jobs
// are claimed with FOR UPDATE SKIP LOCKED, idempotency records converge on a
// unique index, authority changes are version-stamped in the database and
// seen by every host on the next request, and monthly request budgets (of
// API keys, and of the users and workspaces that sessions and access tokens
// act for) are counted in the database. Per-minute rates and concurrency
// limits are enforced per host (see transport.Limiter).
//
// # What an embedding links
//
// Each package links only what it uses, so an embedder pays for what it
// embeds:
//
//   - Persistence alone, for example tokens on PostgreSQL (store/postgres
//     and token): the store's bun layer, the pgx driver and the domains'
//     types; no SQLite, no audio codec, no FFT. store/sqlite is the same
//     with SQLite in place of PostgreSQL.
//   - A domain alone (token, ledger, sound, ...): its package and the leaf
//     packages it builds on. The sound domain reaches its engine through
//     its own port (sound.Engine) and links no codec either.
//   - The whole platform (this package): every domain, transport, and the
//     built-in sound engine through sound/builtin, which links sound/dsp
//     with its decoders (MP3, FLAC) and gonum's FFT. It links neither
//     database driver: the host opens the store (examples/server links
//     both dialects).
//
// The dependency tests of this package keep the first two true.
//
// Domains live in their own packages (access, apikey, idempotency, outbox,
// jobs, ...), each declaring the ports it needs; package store implements
// them with bun (store.Runner hands a unit of work to a domain as its own
// port), and package fault holds the one error type. Each domain also owns
// its job kinds (name, class of workers, handler, retry and period) and
// its outbox events; New builds each domain and registers the kinds it
// returns.
//
// # Layout of this package
//
// platform.go holds the configuration, New, Handler and Close, and no
// domain rule. wire.go is the one list of domains: how each is built from
// the configuration, the job kinds each runs, what each schedules when a
// host starts, the services the route table serves, the event catalogue
// and the feature flags. operator.go holds the operator's calls
// (bootstrap, super admins, internal keys, feature flags, verifications
// and reconciliations run now). A domain's build step stays in wire.go,
// not in its package, because it reads this package's Config; everything
// else about the domain (its rules, ports, jobs and events) lives in its
// own package. The end-to-end tests live in package e2e.
package platform
