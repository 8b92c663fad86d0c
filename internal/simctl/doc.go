// Package simctl is the control plane the project's loopback simulators
// share: the ...test packages that speak an external party's wire
// (generation/providera/provideratest, generation/providerb/providerbtest,
// billing/stripetest, chain/chaintest) and the ones to come. It lives in
// internal/ because only those packages use it; nothing here speaks any
// party's wire, and production code never links it.
//
// # Pieces
//
//   - Bearer and Control: a simulator's control routes live under Prefix
//     (/_sim/) on its own mux and answer only a request that presents the
//     control key as "Authorization: Bearer <key>", compared in constant
//     time. A refused request is answered by the simulator's RefuseFunc, in
//     its own wire's error shape. Bearer also checks a simulator's API key.
//   - Log and Events: an append-only, bounded, concurrency-safe log a
//     simulator records what happened in: the requests it answered
//     (Events.Middleware), the callbacks and webhooks it delivered, and its
//     tasks' state changes. Tests read it in Go (List, Reset); Events.Mount
//     serves it as JSON under /_sim/events for a person driving the example
//     host. Log is generic for simulators whose log holds their own records
//     (Stripe's events, with their delivery attempts).
//   - Runner: a simulator's background work (auto-advance of tasks,
//     deliveries, delayed answers). Every moves a task forward one step per
//     interval of the simulator's Clock; Close stops everything and waits
//     for it, so no goroutine outlives the simulator and nothing is sent
//     after Close returns.
//   - Script: scripted faults per endpoint or method, "fail N times then
//     succeed", used up in the order they were added.
//   - RandomHex, RandomAlnum, RandomUUID and Counter: identifiers, random
//     as the music and payment providers' are, or counted for simulators
//     that must be deterministic.
//
// Time comes through Clock, the one-method shape every simulator's
// Config.Clock already has (Now), and the shape the jobs package uses.
// Only Runner.Sleep uses real time, for faults that must outlast a
// client's real timeout.
package simctl
