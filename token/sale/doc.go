// Package sale is the token sale domain: the public projections of a
// planned sale, the verification that separates configuration from proof,
// the market status, and access intents that hand a signed-in user over to
// the sale provider without the platform ever taking custody (spec, Token
// sale records; States and transitions, Token sale; Endpoints, Token sale).
//
// # Configuration is not evidence
//
// A sale is configured per environment (Config.Environments): its stage,
// planning window, provider candidates, allocation envelope, prices,
// addresses, terms, venues and the jurisdiction policy. Configuration only
// ever sets "configured" facts. Every "verified", "funded", "reconciled" and
// "activationAllowed" flag is false, with a reason, unless a recorded
// verification Run supplies the evidence:
//
//   - saleContract.verified: the sale contract account exists at finalized
//     commitment and its owner is the configured sale program;
//   - inventory.funded: the inventory token account holds the production
//     mint (decoded with chain/token2022) and its balance is at least
//     allocationMaxAtomic; inventory.reconciled: the balance equals the
//     configured expected inventory exactly;
//   - liquidity.verified: every approved pool account exists and is owned
//     by its configured program (and there is at least one);
//   - productionMint.verified: the token registry verified that same mint
//     (Verify's tokenVerified argument, supplied by the registry's caller);
//   - provider.verified: always false ("no provider attestation source");
//   - activationAllowed: sale contract, production mint, inventory funded
//     and reconciled verified, terms published and a provider configured.
//     Provider attestation and liquidity are not required: the first has
//     no source, the second comes after a sale (DEX_BOOTSTRAP).
//
// Verify reads the chain through the ChainClient port (finalized
// commitment) and returns a Run; it never touches the store, so a durable
// job runs it and records the Run with RecordRun. A run that cannot reach
// the chain (no client configured, a transport failure, an RPC error) has
// outcome ERROR and verifies nothing. A run carries the hash of the sale
// configuration it checked; projections ignore a run whose hash differs
// from the current configuration ("verification run predates the current
// configuration"). Read methods never call the chain.
//
// # Status
//
// Configuration may set a sale's status only to PLANNED, ANNOUNCED or OPEN
// (OPEN needs a window); New refuses any other status. The projected
// status is the configured one capped by evidence, computed by walking the
// state table (Moves) from PLANNED: a verified run moves PLANNED to
// VERIFIED, a configured ANNOUNCED or OPEN sale then moves to ANNOUNCED,
// a configured OPEN sale inside its window to OPEN, and any announced or
// open sale past its window's end to CLOSED. So an unverified sale is
// always projected PLANNED, whatever its configuration says; a configured
// PLANNED sale stays PLANNED even when verified. Planning values
// (allocation envelope, prices, target window) are never presented as
// funded, open or executable.
//
// The spec lists the recommended states but does not show the transitions;
// the table in Moves is this package's choice and is served as data.
//
// # Decisions where the spec says "not shown"
//
//   - current: Config names the current sale per environment
//     (EnvConfig.Current); when it is empty there is no publishable sale
//     and current is null.
//   - Disclosures: every projection embeds the environment's disclosure
//     {version, url, statements[]}; the four required risk statements
//     (prices can fall, liquidity can disappear, listings are not
//     guaranteed, participation may be restricted by jurisdiction) are
//     always present, ahead of any configured statements.
//   - Markets: only approved venues are listed; pools additionally only
//     when the current run verified their account. An aggregator is never a
//     pool: it carries routeAvailable and no address; routeAvailable is
//     false because no route source is wired. exchangeA and exchangeAAlpha
//     carry the configured status (TBA by default) and verified false with
//     a reason: there is no listing evidence source.
//   - Access intent request: {"jurisdiction": "DE"}, an ISO 3166-1 alpha-2
//     code in upper case. The first declaration is recorded on the account
//     (per user, first write wins, all environments); later requests may
//     omit it, and a different code is 409 CONFLICT with details.reason
//     JURISDICTION_ALREADY_DECLARED. The policy is deny by default: a
//     jurisdiction must be in Allowed and not in Blocked.
//   - Access intent result: ELIGIBLE or INELIGIBLE with stable reason
//     codes. A handoff {url, expiresAt} is issued only when every check
//     passes: the sale verified and OPEN, now inside its window, the
//     jurisdiction allowed, the email verified, the user in the session's
//     tenant, and the provider URL canonical (https, a DNS name, not a
//     loopback, private, reserved or mock/simulator host). The URL carries
//     a signed, expiring, single-purpose token (HMAC-SHA256 under
//     Config.HandoffKey). The URL is a bearer credential, so it is never
//     stored: the POST response carries it once (the gateway seals the
//     idempotency record), and a later GET shows handoff.expiresAt with
//     url null.
package sale
