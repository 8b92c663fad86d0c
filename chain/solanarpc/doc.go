// Package solanarpc is the adapter that reads a Solana cluster over
// JSON-RPC through gagliardetto/solana-go's rpc client (v1.14.0). A Client
// answers with the shared records and errors of package chain, so consumers
// that declare their ports in chain's terms (token.ChainClient, for one) can
// run against a real cluster through this package and against the loopback
// cluster of chain/chaintest in tests.
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
// # Requests
//
// Every call runs under context.WithTimeout(ctx, Config.Timeout) (10 s by
// default); the caller's own deadline still applies when it is earlier.
// Methods that take a commitment send it explicitly; an empty
// chain.Commitment means chain.Finalized (the server default, made
// explicit). getAccountInfo asks for base64 data and refuses any other
// encoding in the answer.
//
// # Error mapping
//
//	Node answer or failure                           Returned error
//	-----------------------------------------------  ------------------------------------------------------
//	JSON-RPC error object, any code                  *chain.RPCError{Method, Code, Message}, NumSlotsBehind
//	                                                 set from data.numSlotsBehind when it is a u64
//	-32005 node behind/unhealthy (GetHealth too)     *chain.RPCError, Unhealthy() true, NumSlotsBehind
//	getAccountInfo value null                        wraps chain.ErrAccountNotFound
//	getTokenAccountBalance value null                wraps chain.ErrAccountNotFound
//	getTokenAccountBalance -32602                    wraps chain.ErrAccountNotFound and *chain.RPCError
//	  "could not find account"
//	getTokenAccountBalance -32602                    wraps chain.ErrNotTokenAccount and *chain.RPCError
//	  "not a Token account" (or "not a v2.0 ...")
//	getBlockTime value null                          wraps chain.ErrBlockTimeUnavailable
//	getBlockTime -32004, -32007, -32009              wraps chain.ErrBlockTimeUnavailable and *chain.RPCError
//	transport failure, HTTP status outside 2xx,      wraps chain.ErrUnavailable and the URL-free cause
//	  Config.Timeout, caller's deadline or cancel      (context.DeadlineExceeded, *HTTPStatusError, ...)
//	malformed answer: undecodable body, unknown      wraps chain.ErrUnavailable
//	  envelope field (solana-go decodes the
//	  envelope strictly), null result, wrong types,
//	  numbers that do not fit (negative block time,
//	  amount over u64), data not base64, getHealth
//	  other than "ok"
//
// Where a sentinel and an RPC error both apply, the error is
// fmt.Errorf("%w: %w", sentinel, rpcErr), so errors.Is finds the sentinel
// and errors.As finds the *chain.RPCError. A commitment other than the
// three levels is the caller's mistake and fails before any request with a
// plain error.
//
// # What is not used from solana-go
//
// Only the rpc client and its JSON-RPC layer are used. solana-go v1.14.0's
// token helpers (solana.FindAssociatedTokenAddress, the associated token
// account and token instruction builders, token.SetProgramID) hard-code or
// globally switch the classic SPL Token program and know no Token-2022
// extensions (chain.md §9), so they are not used here: balances come from
// getTokenAccountBalance, which a node answers for both token programs, and
// layouts are left to chain/token2022.
package solanarpc
