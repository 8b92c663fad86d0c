package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
	"github.com/creatormusic/platform/web3/cctp"
)

// CreateCCTPTransferRequest is the body of POST /api/v1/cctp/transfers.
type CreateCCTPTransferRequest struct {
	// Amount is the USDC to burn in atomic units (6 decimals), an integer string from 1 to 10000000000000 (10,000,000 USDC).
	Amount string `json:"amount" example:"25000000"`
	// SourceDomain is the CCTP domain of the EVM chain the burn happens on (one the environment reads burns on: 6 is Base).
	SourceDomain int64 `json:"sourceDomain" example:"6"`
	// DestinationDomain is the CCTP domain of the destination: 5, Solana, where the mint is verified.
	DestinationDomain int64 `json:"destinationDomain" example:"5"`
	// MintRecipient is the Solana USDC token account the mint credits (base58; the token account, not the wallet), which must exist.
	MintRecipient string `json:"mintRecipient" example:"Rcpt111111111111111111111111111111111111111"`
}

// CCTPSourceRequest is the body of POST /api/v1/cctp/transfers/{id}/source-submitted.
type CCTPSourceRequest struct {
	// TxHash is the burn transaction's hash on the source chain (0x and 64 hex digits); the server reads everything else.
	TxHash string `json:"txHash" example:"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"`
	// LogIndex is the DepositForBurn log's index, needed only when the transaction holds several burns.
	LogIndex *uint32 `json:"logIndex,omitempty" example:"1"`
}

// CCTPDestinationRequest is the body of POST /api/v1/cctp/transfers/{id}/destination-submitted.
type CCTPDestinationRequest struct {
	// Signature is the Solana transaction's signature (base58) that called receive_message; the server reads the rest.
	Signature string `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
}

// CCTPBurnView is the verified burn.
type CCTPBurnView struct {
	// TxHash is the burn transaction's hash.
	TxHash string `json:"txHash" example:"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"`
	// LogIndex is the DepositForBurn log's index.
	LogIndex uint32 `json:"logIndex" example:"1"`
	// Block is the block the burn was read in.
	Block uint64 `json:"block" example:"21000000"`
	// Depositor is the address that burned (read from the DepositForBurn log).
	Depositor string `json:"depositor" example:"0x00000000000000000000000000000000deadbeef"`
	// MaxFee is the most the depositor allowed the mint to keep, atomic USDC, an integer string.
	MaxFee string `json:"maxFee" example:"2500"`
	// MinFinalityThreshold is the finality the depositor asked for (1000 fast, 2000 standard).
	MinFinalityThreshold uint32 `json:"minFinalityThreshold" example:"2000"`
}

// CCTPAttestationView is the attestation the server fetched and verified.
type CCTPAttestationView struct {
	// MessageHash is the Keccak-256 of the attested message.
	MessageHash string `json:"messageHash" example:"0x9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	// Nonce is the message's nonce: the key of its used-nonce record on Solana.
	Nonce string `json:"nonce" example:"0x3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b"`
	// FeeExecuted is the fee the mint keeps, atomic USDC, an integer string.
	FeeExecuted string `json:"feeExecuted" example:"1250"`
	// FinalityThresholdExecuted is the finality the attestation was made at.
	FinalityThresholdExecuted uint32 `json:"finalityThresholdExecuted" example:"2000"`
	// Message is the attested message, 0x hex: the bytes a mint must carry.
	Message string `json:"message" example:"0x00000001000000060000000500"`
	// Attestation is the attesters' signatures, 0x hex.
	Attestation string `json:"attestation" example:"0x9a1b"`
}

// CCTPMintView is the verified mint.
type CCTPMintView struct {
	// Signature is the Solana transaction that used the message's nonce.
	Signature string `json:"signature" example:"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"`
	// Slot is the slot it landed in.
	Slot uint64 `json:"slot" example:"312000123"`
	// Received is what the recipient received: the amount minus the fee executed, atomic USDC, an integer string.
	Received string `json:"received" example:"24998750"`
}

// CCTPCheckView is one comparison a step made.
type CCTPCheckView struct {
	// Name names the check (amount, mint_recipient, signatures, used_nonce, ...).
	Name string `json:"name" example:"mint_recipient"`
	// Passed reports whether it held.
	Passed bool `json:"passed" example:"true"`
	// Expected is what the transfer expected, as text.
	Expected string `json:"expected" example:"Rcpt111111111111111111111111111111111111111"`
	// Actual is what the chain or the attestation service showed, as text.
	Actual string `json:"actual" example:"Rcpt111111111111111111111111111111111111111"`
}

// CCTPEvidenceView is what one step observed and concluded.
type CCTPEvidenceView struct {
	// ID identifies the evidence record.
	ID string `json:"id" example:"cte_01jd0000000000000000000000"`
	// Step is the step: source, attestation, destination or reconcile.
	Step string `json:"step" example:"source" enum:"source,attestation,destination,reconcile"`
	// Outcome is what the step concluded.
	Outcome string `json:"outcome" example:"verified" enum:"verified,pending,attested,replayed,review,completed"`
	// Reference is what was read: the burn (CAIP-2 network, hash and log index), the attestation lookup, the mint's signature.
	Reference string `json:"reference" example:"eip155:84532:0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060#1"`
	// Checks are the comparisons, in the order they were made.
	Checks []CCTPCheckView `json:"checks"`
	// ObservedAt is when it was read.
	ObservedAt time.Time `json:"observedAt"`
}

// CCTPTransferView is a cross-chain transfer with its evidence.
type CCTPTransferView struct {
	// ID identifies the transfer.
	ID string `json:"id" example:"ctp_01jd0000000000000000000000"`
	// Object is always "cctp_transfer".
	Object string `json:"object" example:"cctp_transfer"`
	// Environment is the environment (test or live) the transfer belongs to.
	Environment string `json:"environment" example:"test" enum:"test,live"`
	// State is where the transfer stands in its table.
	State string `json:"state" example:"CREATED" enum:"CREATED,SOURCE_VERIFIED,ATTESTATION_PENDING,ATTESTED,DESTINATION_VERIFIED,COMPLETED,REQUIRES_REVIEW"`
	// Terminal reports a state no request moves on from (COMPLETED, REQUIRES_REVIEW).
	Terminal bool `json:"terminal" example:"false"`
	// Amount is the USDC burned, atomic (6 decimals), an integer string.
	Amount string `json:"amount" example:"25000000"`
	// SourceDomain is the CCTP domain of the EVM chain of the burn.
	SourceDomain uint32 `json:"sourceDomain" example:"6"`
	// SourceNetwork is that chain's CAIP-2 id; null when the environment no longer configures it.
	SourceNetwork *string `json:"sourceNetwork" example:"eip155:84532"`
	// DestinationDomain is 5, Solana.
	DestinationDomain uint32 `json:"destinationDomain" example:"5"`
	// MintRecipient is the Solana USDC token account the mint credits.
	MintRecipient string `json:"mintRecipient" example:"Rcpt111111111111111111111111111111111111111"`
	// Burn is the verified burn; null before SOURCE_VERIFIED.
	Burn *CCTPBurnView `json:"burn"`
	// Attestation is the fetched, verified attestation; null before ATTESTED.
	Attestation *CCTPAttestationView `json:"attestation"`
	// Mint is the verified mint; null before DESTINATION_VERIFIED.
	Mint *CCTPMintView `json:"mint"`
	// ReviewReason names the check that sent the transfer to REQUIRES_REVIEW; null otherwise.
	ReviewReason *string `json:"reviewReason" example:"attestation_message_mismatch"`
	// Observed is what the attestation service answered to this request (not_indexed, pending or complete); null for the other routes and when the service was not asked.
	Observed *string `json:"observed" example:"pending" enum:"not_indexed,pending,complete"`
	// Evidence is every step's evidence, oldest first.
	Evidence []CCTPEvidenceView `json:"evidence"`
	// Version counts the transfer's writes, from 1.
	Version int64 `json:"version" example:"1"`
	// CreatedAt is when the transfer was created.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// cctpView renders a transfer with its evidence.
func cctpView(svc *cctp.Service, t cctp.Transfer, ev []cctp.Evidence, observed string) CCTPTransferView {
	v := CCTPTransferView{ID: t.ID, Object: "cctp_transfer", Environment: string(t.Owner.Environment), State: string(t.State),
		Terminal: t.State.Terminal(), Amount: t.Amount.String(), SourceDomain: uint32(t.SourceDomain),
		SourceNetwork: optional(svc.SourceNetwork(t.Owner.Environment, t.SourceDomain)), DestinationDomain: uint32(t.DestinationDomain),
		MintRecipient: t.MintRecipient.String(), ReviewReason: optional(t.ReviewReason), Observed: optional(observed),
		Evidence: []CCTPEvidenceView{}, Version: t.Version, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if !t.BurnTxHash.IsZero() {
		v.Burn = &CCTPBurnView{TxHash: t.BurnTxHash.String(), LogIndex: t.BurnLogIndex, Block: t.BurnBlock, Depositor: t.Depositor.String(),
			MaxFee: t.MaxFee.String(), MinFinalityThreshold: t.MinFinalityThreshold}
	}
	if t.Message != nil {
		v.Attestation = &CCTPAttestationView{MessageHash: t.MessageHash.String(), Nonce: t.Nonce.String(), FeeExecuted: t.FeeExecuted.String(),
			FinalityThresholdExecuted: t.FinalityThresholdExecuted, Message: cctp.HexBytes(t.Message), Attestation: cctp.HexBytes(t.Attestation)}
	}
	if t.MintSignature != "" {
		v.Mint = &CCTPMintView{Signature: t.MintSignature, Slot: t.MintSlot, Received: t.Received().String()}
	}
	for _, e := range ev {
		ev := CCTPEvidenceView{ID: e.ID, Step: string(e.Step), Outcome: e.Outcome, Reference: e.Reference, Checks: []CCTPCheckView{},
			ObservedAt: e.ObservedAt}
		for _, c := range e.Checks {
			ev.Checks = append(ev.Checks, CCTPCheckView{Name: c.Name, Passed: c.Passed, Expected: c.Expected, Actual: c.Actual})
		}
		v.Evidence = append(v.Evidence, ev)
	}
	return v
}

// exampleCCTP is a transfer as created.
func exampleCCTP() CCTPTransferView {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	network := "eip155:84532"
	return CCTPTransferView{ID: "ctp_01jd0000000000000000000000", Object: "cctp_transfer", Environment: "test", State: "CREATED",
		Amount: "25000000", SourceDomain: 6, SourceNetwork: &network, DestinationDomain: 5,
		MintRecipient: "Rcpt111111111111111111111111111111111111111", Evidence: []CCTPEvidenceView{}, Version: 1, CreatedAt: t, UpdatedAt: t}
}

// cctpFeature reports the cross-chain feature of an environment from its
// newest readiness run.
func cctpFeature(svc *cctp.Service) func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error) {
	return func(ctx context.Context, tx Tx, env access.Environment) (Web3FeatureView, error) {
		c, err := svc.Capability(ctx, tx, env)
		if err != nil {
			return Web3FeatureView{}, err
		}
		return Web3FeatureView{Feature: "cross_chain_transfers", Enabled: c.Enabled(), Configured: c.Configured, Verified: c.Verified,
			Reason: optional(c.Reason)}, nil
	}
}

// cctpNote is what every transfer route says of its unit of work.
const cctpNote = " The chains and the attestation service are read before the transfer is written; the move, its evidence, the " +
	"outbox event cctp_transfer.<state> and an audit record are written together, compare-and-setting the transfer's version (409 " +
	"CONFLICT when another request moved it meanwhile, or when the burn or mint is bound to another transfer). Another user's " +
	"transfer is 404. An environment without cross-chain transfers configured is 503 SERVICE_UNAVAILABLE (details.reason " +
	"not_configured)."

// cctpRoutes are the cross-chain transfer routes (spec, Web3 adapters):
// a signed-in user's transfer steps with wallet.sign (API keys hold no
// scope for it), and the operator's reconciliation with the internal
// scope.
func cctpRoutes(svc *cctp.Service) []Route {
	if svc == nil {
		return nil
	}
	user := func(r Route) Route {
		r.Method, r.Tag, r.Auth, r.Private, r.Permission = http.MethodPost, transport.TagWeb3, transport.AuthSession, true, access.WalletSign
		r.OwnUnitOfWork = true
		if r.Idempotency == "" {
			r.Idempotency = transport.IdempotencyOptional
		}
		return r
	}
	// step runs a step's reads on the read pool, then applies its result
	// in the call's unit of work and answers the transfer.
	step := func(read func(ctx context.Context, c *Call) (cctp.Result, error)) HandlerFunc {
		return func(ctx context.Context, c *Call) (any, error) {
			r, err := read(ctx, c)
			if err != nil {
				return nil, err
			}
			return c.CommitResult(ctx, func(tx Tx) (any, error) {
				t, err := svc.Apply(ctx, tx, c.Principal, r, c.RequestID)
				if err != nil {
					return nil, err
				}
				ev, err := svc.Evidence(ctx, tx, t.ID)
				if err != nil {
					return nil, err
				}
				return cctpView(svc, t, ev, r.Observed), nil
			})
		}
	}
	stepErrs := []string{string(fault.InvalidState), string(fault.ServiceUnavailable), string(fault.ProviderUnavailable),
		string(fault.Conflict)}
	return []Route{
		user(Route{Pattern: "/api/v1/cctp/transfers", OperationID: "createCCTPTransfer", Status: http.StatusCreated,
			Idempotency: transport.IdempotencyRequired, Policy: Policy{Feature: cctp.FeatureCCTP},
			Summary: "Create a cross-chain transfer",
			Description: "Pins a USDC transfer over CCTP V2 from an EVM chain to Solana, owned by the signed-in user in the caller's " +
				"environment: the amount (atomic USDC, 6 decimals, 1 to 10,000,000 USDC; else 400 INVALID_AMOUNT), the source domain (an " +
				"EVM chain the environment reads burns on), the destination domain (5, Solana) and the recipient: the Solana USDC token " +
				"account, not a wallet, read from the cluster now (an initialized, unfrozen token account of the environment's USDC " +
				"mint; else 400 INVALID_INPUT naming the field with details.reason token_account_missing, not_a_token_account, " +
				"not_a_usdc_token_account or token_account_frozen). Fails closed: until the environment's newest readiness run passed " +
				"(each source chain's id and contracts, the USDC mint and programs on Solana, the attestation service) it is 503 " +
				"SERVICE_UNAVAILABLE with details.reason not_configured, not_verified or verification_failed. The platform signs " +
				"nothing and claims nothing: the depositor burns with its own wallet and the next steps verify what the chains show. " +
				"Idempotency-Key is required: the same key and body return the same transfer, another body is 409 " +
				"IDEMPOTENCY_CONFLICT. Writes the outbox event cctp_transfer.created and an audit record.",
			Request: CreateCCTPTransferRequest{Amount: "25000000", SourceDomain: 6, DestinationDomain: 5,
				MintRecipient: "Rcpt111111111111111111111111111111111111111"},
			Response: exampleCCTP(), Errors: []string{string(fault.InvalidAmount), string(fault.ServiceUnavailable), string(fault.ProviderUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CreateCCTPTransferRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				t, err := svc.PrepareCreate(ctx, c.Tx, c.Principal, cctp.CreateInput{Amount: in.Amount, SourceDomain: in.SourceDomain,
					DestinationDomain: in.DestinationDomain, MintRecipient: in.MintRecipient})
				if err != nil {
					return nil, err
				}
				return c.CommitResult(ctx, func(tx Tx) (any, error) {
					t, err := svc.RecordCreate(ctx, tx, c.Principal, t, c.RequestID)
					if err != nil {
						return nil, err
					}
					return cctpView(svc, t, nil, ""), nil
				})
			}}),
		user(Route{Pattern: "/api/v1/cctp/transfers/{id}/source-submitted", OperationID: "submitCCTPSource",
			Summary: "Submit a transfer's burn",
			Description: "Takes the burn transaction's hash and nothing else: the server reads the receipt from the source chain and " +
				"checks the DepositForBurn of the configured TokenMessengerV2 (the configured USDC burned, the pinned destination domain, " +
				"recipient and amount, Solana's TokenMessengerMinterV2 as destination messenger, no hook, a finality threshold from 1000 " +
				"to 2000, a maxFee below the amount and within the environment's bound) and that the MessageSent the configured " +
				"MessageTransmitterV2 logged before it carries exactly that burn. A burn that fails a check is not this transfer's: 422 " +
				"VERIFICATION_FAILED with details.check, expected and actual, and nothing is recorded. A reverted transaction is 422 " +
				"TRANSACTION_FAILED; a receipt the node does not have yet is 409 RESULT_NOT_READY; a node that cannot be read is 503 " +
				"PROVIDER_UNAVAILABLE; a transaction with several burns needs logIndex (400 INVALID_INPUT). On success the transfer is " +
				"SOURCE_VERIFIED with the evidence. The same burn again answers the transfer as it is; another burn after one was " +
				"verified is 409 INVALID_STATE_TRANSITION." + cctpNote,
			Request:  CCTPSourceRequest{TxHash: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"},
			Response: exampleCCTP(), Errors: append([]string{string(fault.ResultNotReady), string(fault.TransactionFailed),
				string(fault.VerificationFailed)}, stepErrs...),
			Handle: step(func(ctx context.Context, c *Call) (cctp.Result, error) {
				var in CCTPSourceRequest
				if err := c.Decode(&in); err != nil {
					return cctp.Result{}, err
				}
				return svc.VerifySource(ctx, c.Tx, c.Principal, c.PathValue("id"), cctp.SourceInput{TxHash: in.TxHash, LogIndex: in.LogIndex})
			})}),
		user(Route{Pattern: "/api/v1/cctp/transfers/{id}/attestation", OperationID: "fetchCCTPAttestation",
			Summary: "Fetch a transfer's attestation",
			Description: "The server asks the attestation service (Iris V2) for the message of the verified burn; an attestation is " +
				"never taken from a caller, and the request has no body. observed says what the service answered: not_indexed (404: " +
				"nothing changes, ask again), pending (the transfer moves to ATTESTATION_PENDING) or complete. A complete attestation " +
				"moves the transfer to ATTESTED once the attested message is the burn's (equal to the logged MessageSent once the " +
				"attester's fields are zeroed), its nonce is set, the fee executed is within maxFee, the finality executed reaches the " +
				"burn's, and its signatures recover, in increasing order, to as many distinct configured attesters as the threshold. " +
				"A service that answers another message for the burn's transaction, or a complete attestation that fails a check, is " +
				"unexplained: the transfer moves to REQUIRES_REVIEW with the evidence (reviewReason names the check). After a 429 the " +
				"platform backs off (the service's Retry-After, else five minutes): 503 PROVIDER_UNAVAILABLE with details.reason " +
				"rate_limited and retryAfterSeconds, without asking the service. Before the burn is verified: 409 " +
				"INVALID_STATE_TRANSITION; once attested or closed, the transfer as it is." + cctpNote,
			Response: exampleCCTP(), Errors: stepErrs,
			Handle: step(func(ctx context.Context, c *Call) (cctp.Result, error) {
				return svc.FetchAttestation(ctx, c.Tx, c.Principal, c.PathValue("id"))
			})}),
		user(Route{Pattern: "/api/v1/cctp/transfers/{id}/destination-submitted", OperationID: "submitCCTPDestination",
			Summary: "Submit a transfer's mint",
			Description: "Takes the Solana mint transaction's signature and nothing else: the server reads it from the cluster. It " +
				"must call MessageTransmitterV2's receive_message with exactly the attested message (else 422 VERIFICATION_FAILED: not " +
				"this transfer's mint, nothing recorded). Landed without error, the message's used-nonce account must be set and the " +
				"recipient's USDC token account must have gained the amount minus the fee executed: then the transfer is " +
				"DESTINATION_VERIFIED. A repeated mint fails on chain because the nonce is used: the server reads the used-nonce " +
				"account, finds the mint that used it among its transactions, verifies that one instead and records the repeat as " +
				"replayed evidence. A failed mint whose nonce is unused is 422 TRANSACTION_FAILED (nothing was minted). A mint that " +
				"delivered another amount, or a nonce used with no mint of the message to show for it, moves the transfer to " +
				"REQUIRES_REVIEW. A signature the cluster does not show yet is 409 RESULT_NOT_READY. The transfer must be ATTESTED " +
				"(409 INVALID_STATE_TRANSITION otherwise; the verified mint again answers the transfer as it is)." + cctpNote,
			Request:  CCTPDestinationRequest{Signature: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"},
			Response: exampleCCTP(), Errors: append([]string{string(fault.ResultNotReady), string(fault.TransactionFailed),
				string(fault.VerificationFailed)}, stepErrs...),
			Handle: step(func(ctx context.Context, c *Call) (cctp.Result, error) {
				var in CCTPDestinationRequest
				if err := c.Decode(&in); err != nil {
					return cctp.Result{}, err
				}
				return svc.VerifyDestination(ctx, c.Tx, c.Principal, c.PathValue("id"), cctp.DestinationInput{Signature: in.Signature})
			})}),
		{Method: http.MethodPost, Pattern: "/api/v1/cctp/transfers/{id}/reconcile", OperationID: "reconcileCCTPTransfer",
			Tag: transport.TagWeb3, Auth: transport.AuthInternal, Private: true, Idempotency: transport.IdempotencyNone, OwnUnitOfWork: true,
			Summary: "Reconcile a cross-chain transfer",
			Description: "Internal scope (an operator's key, for a transfer of any tenant in its environment): completion is the " +
				"operator's act, never a workspace role's. Reads both sides again at finality: the burn's receipt in a finalized block " +
				"with the recorded DepositForBurn and MessageSent still passing the source checks, the stored attestation still the " +
				"burn's message and still signed by the configured attesters, and the mint at finalized commitment carrying the " +
				"attested message with the nonce used and the recipient credited with the amount minus the fee executed. All hold: " +
				"COMPLETED. Anything else is unexplained: REQUIRES_REVIEW with the evidence, never a correction. A side not final yet " +
				"is 409 RESULT_NOT_READY (details.reason source_not_final or destination_not_final). Only a DESTINATION_VERIFIED " +
				"transfer is reconciled (409 INVALID_STATE_TRANSITION otherwise); a COMPLETED or REQUIRES_REVIEW one answers as it is.",
			Response: exampleCCTP(), Errors: append([]string{string(fault.ResultNotReady)}, stepErrs...),
			Handle: step(func(ctx context.Context, c *Call) (cctp.Result, error) {
				return svc.Reconcile(ctx, c.Tx, c.Principal.Environment, c.PathValue("id"))
			})},
	}
}
