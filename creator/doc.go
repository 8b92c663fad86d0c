// Package creator is the public read model of creators: who stands behind
// a verified wallet, and what they have made public (spec, Challenges,
// creators, rewards: GET /api/v1/creators/{wallet}, its projects and its
// contributions).
//
// It is its own package because it is a read model that no domain owns:
// it reads across tenants and across domains (the user's display name and
// membership date that accounts keep, the wallet links chain/wallet
// writes when a signature verifies, the public projects of the project
// package) and writes nothing. The domains stay the only writers of their
// rows, and none of them has to learn about public profiles.
//
// # Wallet
//
// The path's wallet is a Solana public key: base58 text that decodes to
// exactly 32 bytes (ParseWallet). Anything else is INVALID_INPUT with
// details.field "wallet", answered before any store call (spec,
// Challenges and rewards: creator wallet path parameters are validated
// before any provider or database work). The HTTP routes check it even
// before they read the caller's credential.
//
// # Which link stands
//
// A wallet link exists only for a verified wallet: chain/wallet writes it
// when a signed challenge verifies, and no unverified link is stored. A
// link is unique per tenant, network and address, so one address may be
// linked in several tenants, by one user or by several (each proved
// control of the key). The link that stands for a reader is the one of
// the reader's own tenant when there is one (the creator its colleagues
// know); else the earliest verified link across tenants, the first
// account that proved control (ties broken by link id). Links record the
// network "solana" (chain/wallet.Network): one ed25519 key controls the
// same address on every cluster, so a link holds in both environments and
// the caller's environment selects no other link. An address no link
// holds is NOT_FOUND.
//
// # Profile
//
// A profile carries public fields only: the creator's id (their user id),
// display name, the wallet with its network and verification time, when
// the account was created, and counts of rows in the caller's environment
// (PublicProjects: the creator's public projects in every tenant;
// Contributions: the creator's contributions, as Contributions lists
// them). No email, tenant, workspace, role or other wallet is shown, and
// no count is anything but a count of stored rows.
//
// # Projects
//
// Projects lists the creator's public projects in every tenant of the
// caller's environment, newest first, keyset-paginated by id, filtered by
// status and type: the project package's public listing narrowed to the
// creator as owner. A workspace project never appears, whoever asks.
//
// # Contributions
//
// A contribution is a submission of the creator's that was ACCEPTED into
// a public project: Contributions lists them across every tenant of the
// caller's environment, newest first (by submission id, that is by
// submission time), keyset-paginated, filtered by submission type. A
// submission in any other status (submitted, under review, rejected, a
// revision requested) is no contribution: it is the submitter's and the
// project's business, read through the submission routes. A submission
// accepted into a workspace project never appears either, whoever asks,
// the project's own workspace included: a profile is public, and listing
// it would name a project its workspace keeps to itself (its title, that
// it exists, that it took outside work). The project's visibility and
// title are read with the contribution, not copied when it was accepted.
// Each contribution carries the submission's public fields and the
// project's title; the review's note and reviewer stay on the submission
// routes.
//
// # Access
//
// Any signed-in caller reads creators (a session of an active member, or
// an API key with scope read); the environment is the caller's, so a test
// credential counts and lists test projects and submissions only.
//
// # Later reads
//
// A creator's rewards are a further read of a resolved Creator: it adds
// one Store method and one Service method beside Projects and
// Contributions.
package creator
