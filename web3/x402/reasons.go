package x402

// The reasons a payment is refused (VerifyResponse.InvalidReason,
// SettleResponse.ErrorReason). They are open strings in the protocol; the
// platform uses the specification's generic ones and the reference
// facilitator's exact-on-Solana ones (web3.md §1.7), and names the rules
// the reference leaves unnamed in the same style.
const (
	// ReasonVersion: the payload's x402Version is not 2.
	ReasonVersion = "invalid_x402_version"
	// ReasonScheme: the accepted scheme is not exact.
	ReasonScheme = "unsupported_scheme"
	// ReasonNetwork: the accepted network is not the environment's.
	ReasonNetwork = "invalid_network"
	// ReasonRequirements: the accepted requirement is not one the
	// platform offers (amount, asset, payTo or the fee payer differ).
	ReasonRequirements = "invalid_payment_requirements"
	// ReasonPayload: the scheme's payload is not {"transaction": base64}.
	ReasonPayload = "invalid_exact_solana_payload_transaction"
	// ReasonUndecodable: the transaction's bytes are not a transaction.
	ReasonUndecodable = "invalid_exact_solana_payload_transaction_could_not_be_decoded"
	// ReasonLookupTables: the transaction loads keys from address lookup
	// tables, which the facilitator does not resolve.
	ReasonLookupTables = "invalid_exact_solana_payload_transaction_lookup_tables"
	// ReasonInstructionsLength: fewer than 3 or more than 6 instructions.
	ReasonInstructionsLength = "invalid_exact_solana_payload_transaction_instructions_length"
	// ReasonComputeLimit: the first instruction is not SetComputeUnitLimit.
	ReasonComputeLimit = "invalid_exact_solana_payload_transaction_instructions_compute_limit_instruction"
	// ReasonComputePrice: the second instruction is not
	// SetComputeUnitPrice.
	ReasonComputePrice = "invalid_exact_solana_payload_transaction_instructions_compute_price_instruction"
	// ReasonComputePriceTooHigh: the unit price is over MaxComputeUnitPrice.
	ReasonComputePriceTooHigh = "invalid_exact_solana_payload_transaction_instructions_compute_price_instruction_too_high"
	// ReasonNoTransfer: the third instruction is not a TransferChecked of
	// the SPL Token or Token-2022 program.
	ReasonNoTransfer = "invalid_exact_solana_payload_no_transfer_instruction"
	// ReasonFourth, ReasonFifth and ReasonSixth: an optional instruction
	// is neither Lighthouse nor Memo.
	ReasonFourth = "invalid_exact_solana_payload_unknown_fourth_instruction"
	ReasonFifth  = "invalid_exact_solana_payload_unknown_fifth_instruction"
	ReasonSixth  = "invalid_exact_solana_payload_unknown_sixth_instruction"
	// ReasonFeePayerMismatch: the transaction's fee payer is not the
	// requirements' feePayer.
	ReasonFeePayerMismatch = "invalid_exact_solana_fee_payer_mismatch"
	// ReasonFeePayerInInstruction: the fee payer is an account of an
	// instruction (an authority, a source, or any other).
	ReasonFeePayerInInstruction = "invalid_exact_solana_payload_transaction_fee_payer_transferring_funds"
	// ReasonFeePayerSigned: the fee payer's signature slot is not empty.
	ReasonFeePayerSigned = "invalid_exact_solana_payload_fee_payer_signed"
	// ReasonSigners: the transaction needs signatures beyond the fee
	// payer's and the transfer authority's.
	ReasonSigners = "invalid_exact_solana_payload_unexpected_signers"
	// ReasonSignature: the authority's signature is missing or does not
	// verify.
	ReasonSignature = "invalid_exact_solana_payload_signature"
	// ReasonMint: the transfer's mint is not the asset.
	ReasonMint = "invalid_exact_solana_payload_mint_mismatch"
	// ReasonRecipient: the destination is not payTo's associated token
	// account of the asset under the transfer's token program.
	ReasonRecipient = "invalid_exact_solana_payload_recipient_mismatch"
	// ReasonAmount: the transfer's amount is not exactly the amount.
	ReasonAmount = "invalid_exact_solana_payload_amount_mismatch"
	// ReasonMemoCount: not exactly one Memo instruction though the
	// requirements name a memo.
	ReasonMemoCount = "invalid_exact_solana_payload_memo_count"
	// ReasonMemoMismatch: the memo differs from the requirements' memo,
	// or the memo was not issued to the caller for the resource.
	ReasonMemoMismatch = "invalid_exact_solana_payload_memo_mismatch"
	// ReasonDecimals: the transfer states other decimals than the mint's.
	ReasonDecimals = "invalid_exact_solana_payload_decimals_mismatch"
	// ReasonTokenProgram: the transfer's program does not own the mint.
	ReasonTokenProgram = "invalid_exact_solana_payload_token_program_mismatch"
	// ReasonSourceMissing: the source token account does not exist, or
	// is not the authority's account of the asset.
	ReasonSourceMissing = "invalid_exact_solana_payload_source_missing"
	// ReasonDestinationMissing: payTo's token account does not exist (the
	// layout admits no instruction that would create it).
	ReasonDestinationMissing = "invalid_exact_solana_payload_destination_missing"
	// ReasonInsufficientFunds: the source holds less than the amount.
	ReasonInsufficientFunds = "insufficient_funds"
	// ReasonBlockhash: the transaction's blockhash can no longer land.
	ReasonBlockhash = "invalid_exact_solana_payload_blockhash_expired"
	// ReasonTransactionFailed: the chain refused the transaction or it
	// landed with an error.
	ReasonTransactionFailed = "invalid_exact_solana_transaction_failed"
	// ReasonDuplicate: the transaction was settled (or is being settled)
	// already, under another request.
	ReasonDuplicate = "duplicate_settlement"
	// ReasonUnexplained: a facilitator said the payment succeeded but the
	// chain does not show it, or its signature is not of the payment.
	ReasonUnexplained = "unexpected_settle_error"
)
