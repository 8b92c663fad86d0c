// Package network is the creative-network topology record (spec, Network
// topology record; GET /api/v1/network/platform): how the platform's loop
// runs from creating to rewards and back, as a record with its own version.
//
// # The record
//
// The loop is fixed by the platform's design and carries its own Version
// (bumped when a node, branch or principle changes): Create, Music, the
// studio app, Project, Community, Production, external distribution and
// audience, the Creator Network, Rewards, the chain and the token, and
// back to Create (LoopClosesAt names the node the loop returns to).
// Community production branches into Video, Art and Story, each naming
// the submission types (package project) that are its work.
//
// # The token node
//
// Only the token node carries state, and that state is read, never
// written here: Platform takes the token registry's view (package token)
// of the caller's environment. Until a verification run of the current
// configuration passed, the node is deployment-gated, its deployment
// status planned, its mint null and verified false, whatever mint is
// configured (configured is not verified, spec Invariant 6). Once verified
// it is deployed, with the verified mint. The Deployment node repeats the
// same three facts (status, mint, verified) under the chain's name.
//
// # Nothing fabricated
//
// External nodes (distribution and audience) are places work goes, not
// measured audiences: no node carries views, reach, engagement, revenue or
// any other count, since the platform observes none of them (spec,
// Invariant 5). TokenGate is false: no step of the loop needs the token.
package network
