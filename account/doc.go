// Package account owns people and their sign-in: signup and email
// verification, passwords (argon2id), login with throttling, sessions and
// their access tokens, password reset, onboarding, invitations, the web to
// studio handoff, and the administration of members and roles with its
// append-only audit log (spec, "Account authentication and onboarding" and
// "Administration").
//
// Every code and credential (verification, reset, invitation and handoff
// codes, session cookies, access tokens) is random, stored only as a keyed
// digest, and single-use or revocable. Sessions act in live mode; a request
// asks for test mode with the Platform-Environment: test header, as a
// dashboard's test-mode toggle does.
package account
