// Package e2e holds the platform's end-to-end tests: each file drives one
// area of the API (generation, sound, billing, keys, chain payments, …)
// through the whole system that platformtest builds, over HTTP, with the
// provider, payment and chain simulators on loopback, and validates every
// response against the served OpenAPI document.
//
// The tests run on SQLite; with PLATFORM_TEST_POSTGRES_URL set they run a
// second time on PostgreSQL, one fresh schema per test
// (platformtest.Dialects). Each test builds its own systems, so every test
// runs in parallel (t.Parallel) but TestMeasureLoginMemory, which reads the
// process's memory. The package has no API of its own.
package e2e
