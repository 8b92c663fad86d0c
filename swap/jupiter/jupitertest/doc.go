// Package jupitertest is a loopback simulator of Jupiter's aggregator for
// swap/jupiter and the platform's tests: it speaks the Metis V1 wire
// (shared/spec/swap.md §1.2–§1.6) on 127.0.0.1 and routes through the
// constant-product pools of a chain/chaintest cluster, so a swap it prices
// can be signed and landed on that cluster. The pool program (its account
// layout, vault addresses, swap arithmetic and instruction) is
// chaintest's; this package keeps only what an aggregator adds: choosing
// the pool, the quote's threshold and price impact, and the HTTP wire.
// Production binaries never import it.
//
// # Wire
//
//	GET  /quote               inputMint, outputMint, amount, slippageBps (default 50),
//	                          swapMode (ExactIn only), dexes / excludeDexes (the pools' label)
//	POST /swap-instructions   {quoteResponse, userPublicKey | taker, payer, wrapAndUnwrapSol,
//	                          destinationTokenAccount, computeUnitPriceMicroLamports,
//	                          prioritizationFeeLamports, ...}
//
// Every answer carries x-api-gateway-request-id (LastRequestID returns the
// latest), and served ones x-ratelimit-remaining, -current and -reset
// over a fixed 60-second window of Config.RateLimit requests (reported,
// not enforced). Errors are {"error": msg} with "errorCode" where Jupiter
// sends one. With Config.APIKey set, a request presenting another
// x-api-key gets 401; one presenting none is served (keyless), unless
// Config.RequireKey.
//
// # Quotes
//
// Pools are registered with AddPool and read from the cluster on every
// quote through its in-process reads (GetAccountInfo,
// GetTokenAccountBalance, GetEpochInfo), so swaps that land move the next
// quote. The pool account is decoded with chaintest.DecodePool and priced
// with chaintest.PoolAmountOut, the program's own arithmetic, ExactIn
// only, one hop:
//
//	received_in = amount − the input mint's Token-2022 transfer fee at the current epoch
//	outAmount   = reserve_out × received_in × (10000 − fee_bps)
//	              / (reserve_in × 10000 + received_in × (10000 − fee_bps))        (floor)
//	otherAmountThreshold = floor(outAmount × (10000 − slippageBps) / 10000)
//	priceImpactPct = 1 − (outAmount / received_in) / (reserve_out / reserve_in), floored
//	                 to 6 decimals, "0" when not positive
//
// A Token-2022 output fee is not subtracted. The pool with the largest
// outAmount wins; routePlan has its one step (percent 100, bps 10000).
// No pool for the pair, or an output of 0, is 400 COULD_NOT_FIND_ANY_ROUTE;
// equal mints are 400 CIRCULAR_ARBITRAGE_IS_DISABLED; swapMode ExactOut is
// 400 NOT_SUPPORTED. Bodies are compact JSON without HTML escaping, as
// Jupiter's servers write them, and every quote sent is remembered by the
// SHA-256 of its exact bytes (the newest 4096).
//
// # Swap instructions
//
// The posted quoteResponse must be, byte for byte, a quote the simulator
// sent: otherwise 400, or 500 "Dynamic swap is missing dynamic swap
// details" when it is a DynamicSwap quote re-serialized without its
// details object. The answer holds:
//
//   - computeBudgetInstructions: SetComputeUnitLimit(Config.ComputeUnitLimit)
//     and SetComputeUnitPrice(price), price being computeUnitPriceMicroLamports,
//     or an integer prioritizationFeeLamports × 10^6 / limit, else
//     Config.ComputeUnitPrice; both set is 400
//     INVALID_COMPUTE_UNIT_PRICE_AND_PRIORITIZATION_FEE. computeUnitLimit,
//     prioritizationFeeLamports (ceil(limit × price / 10^6)) and
//     prioritizationType.computeBudget report the same values.
//   - setupInstructions: the Associated Token Account program's
//     CreateIdempotent of the user's output account when it does not exist
//     (payer: payer, else the user), none with destinationTokenAccount.
//   - swapInstruction: the pool program's route instruction as
//     chaintest.PoolSwapInstruction builds it for the quoted pool, data
//     discriminator ‖ in_amount ‖ quoted_out_amount ‖ slippage_bps ‖ 0, over
//     the contract's ten accounts: pool, user (signer), the user's
//     associated token accounts of the input and output mints (for each
//     mint's token program; the output one replaced by
//     destinationTokenAccount when set), vault in, vault out, both mints,
//     both token programs.
//   - cleanupInstruction null, otherInstructions [], simulationError null
//     (unless injected), dynamicSlippageReport null.
//   - addressLookupTableAddresses: the pool's table from AddPool, and
//     lastValidBlockHeight from the cluster's latest blockhash.
//
// wrapAndUnwrapSol (default true, as Jupiter's) has nothing to do unless a
// mint is wrapped SOL, which the simulator refuses with 400 NOT_SUPPORTED.
//
// Config.V2 answers with Swap V2's differences instead: routePlan percent
// null and no swapMode in quotes; addressesByLookupTableAddress (the
// table's addresses read from the cluster when it exists) and
// blockhashWithMetadata {blockhash as 32 numbers, lastValidBlockHeight}
// instead of addressLookupTableAddresses and lastValidBlockHeight. taker
// is accepted for userPublicKey in either mode.
//
// # Faults
//
// Inject queues a Fault for a path (or every path), used up in order as
// chaintest's are: Delay holds the answer (a slow aggregator; it honours
// the client's disconnect and Close); Status with ErrorCode and Message,
// or Body as is, replaces it (NoRoute, ServerError, malformed and
// oversized bodies); RateLimit answers 429 with the gateway's headers
// (TooManyRequests); DynamicSwap adds undocumented fields to a quote (a
// swapInfo.details object, top-level extras); SimulationError fills a
// /swap-instructions simulationError. Calls counts requests per path and
// Events lists them with their headers and bodies.
//
// # Pools and their lookup tables
//
// SeedPool creates a pool with chaintest's CreatePool and an address
// lookup table (CreateLookupTable) holding PoolAccounts: the pool, its two
// vaults, its two mints and their token programs. Registered with AddPool,
// the table is what /swap-instructions names, so a v0 message compiled
// with it loads every pool account from the table and keeps only the
// user's accounts and the programs it invokes static. As on a node, the
// table is usable from the slot after the one it was filled in.
package jupitertest
