// Package solanarpc is the adapter that reads a Solana cluster over
// JSON-RPC through gagliardetto/solana-go's rpc client (v1.14.0), and
// sends and follows the transactions of a payment path (blockhashes,
// sendTransaction, signature statuses, landed transactions, an address's
// signature history). A Client answers with the shared records and errors
// of package chain, so consumers that declare their ports in chain's terms
// (token.ChainClient, for one) can run against a real cluster through this
// package and against the loopback cluster of chain/chaintest in tests.
//
// # The URL is a secret
//
// A cluster URL from an RPC provider usually carries an API key in its path
// or query. Config.URL is therefore never logged and never put in an error
// message: errors name the cluster by its scheme and host only, and every
// URL that solana-go or net/http writes into an error's text is replaced by
// that redacted form before the error leaves the package. The causes kept
// for errors.Is and errors.As are the URL-free ones (context deadline, a
// dial error, an HTTP status).
//
// # Outbound policy
//
// Without Config.HTTPClient the adapter sends through a urlguard client
// (https only, public addresses only, every resolved address judged and
// pinned, redirects re-checked, no proxy from the environment), and New
// refuses a URL that guard refuses; a refusal reads as chain.ErrUnavailable
// with the guard's error (urlguard.ErrRefused) as its cause. A client that
// is set owns the outbound policy. User info in the URL is sent as a Basic
// Authorization header, as net/http would, and never appears in the URL a
// client sees.
//
// # Requests
//
// Every call runs under context.WithTimeout(ctx, Config.Timeout) (10 s by
// default); the caller's own deadline still applies when it is earlier.
// Methods that take a commitment send it explicitly; an empty
// chain.Commitment means chain.Finalized (the server default, made
// explicit). getAccountInfo asks for base64 data and refuses any other
// encoding in the answer. GetBalance (getBalance [addr, {commitment}])
// returns the lamports and the answer's context slot; a node answers 0 for
// an account that does not exist, so a missing account is balance 0, not
// an error, and only a null value is malformed.
//
// The payment path's methods follow the same rules:
//
//	Method                   Request
//	-----------------------  -------------------------------------------------------------
//	GetLatestBlockhash       getLatestBlockhash [{commitment}]
//	GetBlockHeight           getBlockHeight [{commitment}]
//	IsBlockhashValid         isBlockhashValid [hash, {commitment}]
//	SendTransaction          sendTransaction [base64 tx, {encoding: base64, skipPreflight,
//	                           preflightCommitment}]
//	GetSignatureStatuses     getSignatureStatuses [[sig...], {searchTransactionHistory}],
//	                           1 to 256 signatures (none: no request, empty answer)
//	GetTransaction           getTransaction [sig, {encoding: base64, commitment,
//	                           maxSupportedTransactionVersion: 0}]
//	GetSignaturesForAddress  getSignaturesForAddress [addr, {commitment, limit, before?, until?}],
//	                           limit 1..1000 always sent (zero means 1000)
//
// GetTransaction and GetSignaturesForAddress take confirmed or finalized
// only: a node refuses processed, so the adapter does before any request.
// SendTransaction never logs the transaction nor puts its bytes in an
// error. GetTransaction decodes the base64 message with solana-go and
// accepts only a canonical legacy or v0 transaction (re-encoding gives the
// same bytes) whose first signature is the one asked for and whose
// signature count matches its header; instruction and token-balance
// account indexes and the lamport balances (meta.preBalances and
// postBalances, one per key) resolve over the static keys followed by
// meta.loadedAddresses (writable, then read-only), whose sizes must match
// the message's address-table lookups; chain.Transaction carries them as
// AccountKeys, LoadedWritable and LoadedReadonly, and Keys() is the full
// list. Transaction errors (meta.err, a
// status's err) are returned as compact JSON, "" for null.
//
// # Error mapping
//
//	Node answer or failure                           Returned error
//	-----------------------------------------------  ------------------------------------------------------
//	JSON-RPC error object, any code                  *chain.RPCError{Method, Code, Message, Data}; Data is
//	                                                 the error's data re-encoded as compact JSON ("" when
//	                                                 absent or null); NumSlotsBehind set from
//	                                                 data.numSlotsBehind when it is a u64
//	-32005 node behind/unhealthy (GetHealth too)     *chain.RPCError, Unhealthy() true, NumSlotsBehind
//	sendTransaction -32002 preflight failure         *chain.RPCError; Data is the simulation result, its
//	                                                 "err" the reason: "BlockhashNotFound",
//	                                                 "AlreadyProcessed", {"InstructionError":[i,{"Custom":n}]}
//	sendTransaction -32003 bad signature,            *chain.RPCError
//	  -32602 undecodable transaction
//	getAccountInfo value null                        wraps chain.ErrAccountNotFound
//	getTokenAccountBalance value null                wraps chain.ErrAccountNotFound
//	getTokenAccountBalance -32602                    wraps chain.ErrAccountNotFound and *chain.RPCError
//	  "could not find account"
//	getTokenAccountBalance -32602                    wraps chain.ErrNotTokenAccount and *chain.RPCError
//	  "not a Token account" (or "not a v2.0 ...")
//	getBlockTime value null                          wraps chain.ErrBlockTimeUnavailable
//	getBlockTime -32004, -32007, -32009              wraps chain.ErrBlockTimeUnavailable and *chain.RPCError
//	getTransaction null                              wraps chain.ErrTransactionNotFound
//	getSignatureStatuses null entry                  nil entry in the answer (unknown signature), no error
//	transport failure, HTTP status outside 2xx,      wraps chain.ErrUnavailable and the URL-free cause
//	  Config.Timeout, caller's deadline or cancel      (context.DeadlineExceeded, *HTTPStatusError, ...)
//	malformed answer: undecodable body, unknown      wraps chain.ErrUnavailable
//	  envelope field (solana-go decodes the
//	  envelope strictly), null result, wrong types,
//	  numbers that do not fit (negative block time,
//	  amount over u64), data not base64, getHealth
//	  other than "ok", zero blockhash or signature,
//	  a sendTransaction signature other than the
//	  transaction's first, statuses not one per
//	  signature, a confirmationStatus other than the
//	  three levels or disagreeing with confirmations
//	  (null exactly when finalized), a transaction
//	  that is not canonical base64 legacy/v0 or not
//	  the one asked for, a version disagreeing with
//	  the message, an index outside the keys,
//	  loadedAddresses not matching the lookups,
//	  balance arrays not one entry per key,
//	  more signatures than the limit
//
// Where a sentinel and an RPC error both apply, the error is
// fmt.Errorf("%w: %w", sentinel, rpcErr), so errors.Is finds the sentinel
// and errors.As finds the *chain.RPCError. The caller's mistakes fail
// before any request with a plain error: a commitment other than the three
// levels (or processed where only confirmed or finalized is served), a
// signature or blockhash that is not base58 of 64 or 32 bytes, more than
// 256 signatures, a limit outside 1..1000, an empty transaction.
//
// # What is not used from solana-go
//
// Only the rpc client and its JSON-RPC layer are used, with solana-go's
// key, hash and signature types and its transaction decoder (for
// getTransaction's base64 message). solana-go v1.14.0's
// token helpers (solana.FindAssociatedTokenAddress, the associated token
// account and token instruction builders, token.SetProgramID) hard-code or
// globally switch the classic SPL Token program and know no Token-2022
// extensions (chain.md §9), so they are not used here: balances come from
// getTokenAccountBalance, which a node answers for both token programs, and
// layouts are left to chain/token2022.
package solanarpc
