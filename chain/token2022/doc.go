// Package token2022 decodes and encodes the account bytes of the SPL Token and
// Token-2022 programs, and holds Token-2022's transfer-fee rules.
//
// It owns the layouts of chain.md §5: the 82-byte base mint and the 165-byte
// token account (§5.1), Token-2022's extended layout with its account-type
// byte and extension TLV (§5.2), the TransferFeeConfig, TransferFeeAmount,
// MetadataPointer and TokenMetadata extensions (§5.3, §5.5), and the fee rules
// (§5.4). The token registry proves its claims from these bytes, and the
// loopback cluster writes them with the encoders, so both read a mint the same
// way a real cluster and its standard clients do.
//
// The package exists because solana-go, the client the chain adapter is built
// on, decodes neither Token-2022 extensions nor the transfer-fee rules. It is
// pure: no I/O, no clock, no RPC, nothing of the module but the fault error
// type. Its one dependency beyond the standard library is
// filippo.io/edwards25519, which tells whether a program-derived address
// candidate is a curve point (FindProgramAddress); the standard library's
// ed25519 does not expose point decoding. Decoders never panic on
// any input; malformed bytes give a fault.InvalidInput error whose details name
// the offending offset. Policy (such as the registry's cap on basis points)
// belongs to its callers, not here.
package token2022
