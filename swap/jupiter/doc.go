// Package jupiter is the route adapter of the token-swap domain: it asks
// Jupiter's aggregator for an ExactIn quote and for the instructions that
// execute it (reference: shared/spec/swap.md §1.2–§1.7 and §3). It knows
// the wire and nothing of the platform's swap rules; the swap domain
// declares the port this adapter fills, and chain/solanarpc, not this
// package, reads the chain.
//
// # Why the V1 wire
//
// The platform quotes, shows the quote, freezes it in an intent under a
// hash, and only then builds the transaction the wallet signs. That is the
// quote-then-build flow of Metis V1: GET /quote, then POST
// /swap-instructions with the quote. V2's /order and /execute quote and
// land in one step through Jupiter's routers (RFQ included) and leave no
// frozen quote to verify against; V2's /build has no separate quote. V2
// also serves /quote and /swap-instructions (key required), so the adapter
// speaks V1 and tolerates V2's differences: Config.Version V2 sends taker
// instead of userPublicKey, and answers are read the same way whatever
// their generation (routePlan percent null, addressesByLookupTableAddress,
// blockhashWithMetadata, swapMode absent).
//
// The adapter asks /swap-instructions rather than /swap: instructions let
// the platform compose the transaction itself (adding its own fee
// transfer, as swap.md §1.7's option b does) and check every
// instruction's program before the wallet signs, where a ready-made
// transaction would have to be taken apart first.
//
// # Byte for byte
//
// Quote.Raw is the body of the /quote answer exactly as received, and
// SwapInstructions posts it back exactly so: the request body is spliced
// together as {"quoteResponse": <raw bytes>, ...the SwapRequest fields},
// never built by marshalling the quote. Jupiter's quotes carry fields no
// schema lists (a step whose swapInfo has details.dynamicSwapV2, for one);
// a client that decodes and re-encodes a quote drops them and Jupiter
// answers 500 "Dynamic swap is missing dynamic swap details". Even
// json.RawMessage is not safe to marshal: encoding/json compacts it and
// escapes <, > and &. Quote.Hash is the SHA-256 of those bytes, so the
// hash a quote is frozen under is the hash of what is executed.
//
// The parsed fields are read from the same bytes and are strict: u64
// amounts are JSON strings of canonical digits (no sign, no leading zero,
// no exponent, no overflow: an amount that does not fit is an error, never
// truncated), integers are canonical JSON numbers within their type,
// otherAmountThreshold is at most outAmount, swapMode (when present) is
// ExactIn, and Quote checks that the answer echoes the request's mints,
// amount and slippage. priceImpactPct is kept as the string received and
// converted to PriceImpactBps = round(pct × 10000), half away from zero
// (swap.md §3); a negative impact (a price improvement) stays negative.
// Unknown fields are ignored by the parser and kept in Raw.
//
// SwapRequest.WrapAndUnwrapSol is always sent, false included: the
// server's default is true, which closes the wallet's wSOL account.
// dynamicSlippage is never sent: it would replace the quote's slippage
// after the quote was frozen (swap.md §3).
//
// # Errors
//
// Every error is a *fault.Error with a platform code and details.retryable,
// and wraps one of four classes (errors.Is) with a typed cause (errors.As):
//
//	Answer                                              Class                Code                 Cause
//	400/4xx with a routing errorCode (NO_ROUTES_FOUND,  ErrNoRoute           ROUTE_UNAVAILABLE    *APIError
//	  COULD_NOT_FIND_ANY_ROUTE, TOKEN_NOT_TRADABLE,
//	  CIRCULAR_ARBITRAGE_IS_DISABLED, MARKET_NOT_FOUND,
//	  NOT_SUPPORTED, ROUTE_PLAN_DOES_NOT_CONSUME_ALL_
//	  THE_AMOUNT, CANNOT_COMPUTE_OTHER_AMOUNT_THRESHOLD),
//	  or a 400 without errorCode saying "Could not find
//	  any route" / "No routes found"
//	429                                                 ErrUnavailable       PROVIDER_UNAVAILABLE *RateLimited
//	5xx                                                 ErrUnavailable       PROVIDER_UNAVAILABLE *APIError
//	timeout, transport failure, guard refusal,          ErrUnavailable       PROVIDER_UNAVAILABLE the cause
//	  malformed / oversized / mismatched answer
//	other 400                                           ErrRejected          QUOTE_UNAVAILABLE    *APIError
//	401, 403, other 4xx                                 ErrRejected          PROVIDER_UNAVAILABLE *APIError
//	simulationError not null                            ErrSimulationFailed  SIMULATION_FAILED    *SimulationError
//
// This is swap.md §1.6's mapping. details.reason names the case
// (rate_limited, server_error, timeout, malformed_response with
// details.field, response_too_large, quote_mismatch, credential_refused,
// provider_rejected...); details.provider_code carries Jupiter's
// errorCode. A 429's *RateLimited holds x-ratelimit-remaining, -current
// and -reset, and every *APIError and *RateLimited the
// x-api-gateway-request-id. The errorCode field itself is unconfirmed in
// Jupiter's published schema, hence the message fallback for "no route".
// A timeout is never ambiguous here: neither call changes any state.
//
// The API key travels only in the x-api-key header. The adapter logs
// nothing; no error holds the key (texts kept from an answer are cut to
// 200 bytes and have the key removed), and Config redacts it when printed
// or logged.
//
// # Outbound policy and limits
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, pinned addresses, no proxy), and New
// refuses a BaseURL the guard refuses. Each call runs under
// Config.Timeout (10 s by default) on top of the caller's context, and an
// answer's body is read up to Config.MaxResponseBytes (1 MiB by default);
// a longer one is PROVIDER_UNAVAILABLE with reason response_too_large.
//
// The loopback simulator of this wire is swap/jupiter/jupitertest.
package jupiter
