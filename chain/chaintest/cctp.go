package chaintest

import (
	"crypto/ed25519"
	"fmt"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/web3/cctp"
)

// The loopback CCTP V2 receive side (web3.md §2.7). InstallCCTP deploys
// MessageTransmitterV2 and TokenMessengerMinterV2 at their real program
// ids as executable accounts, and the transmitter runs one instruction,
// receive_message: data as the real program takes it (Anchor's
// discriminator, then Borsh's ReceiveMessageParams: message and
// attestation), accounts a subset of the real ones in their order — payer
// (w, s), caller (s), used_nonce (w), receiver (TokenMessengerMinterV2),
// System program, fee recipient token account (w), recipient token
// account (w), USDC mint (w), token program (ReceiveMessageInstruction
// builds it). It checks, in order: the data (Anchor's Custom 102), the
// accounts (NotEnoughAccountKeys), the signers, the message (6025
// MalformedMessage), the attestation through CCTPConfig's
// VerifyAttestationFunc (6027 InvalidAttesterSignature), the destination
// domain (6018), the destination caller (6014), the used-nonce account's
// address, the PDA of "used_nonce" and the message's nonce (Anchor's 2006
// ConstraintSeeds), and that it does not exist yet: a repeat fails as
// Anchor's init does, with the System program's Custom(0) "already in
// use"; then the receiver (6021 InvalidRecipientProgram), the body's
// recipient and mint (the minter's 6006 InvalidMintRecipient and 6007
// InvalidTokenMint), and the fee executed against the max fee (6008
// InvalidFeeExecuted). It then creates the used-nonce account (owned by
// the transmitter, Anchor's UsedNonce with is_used set, rent paid by the
// payer), mints the amount minus the fee executed to the recipient and
// the fee to the fee recipient, and raises the mint's supply.

// CCTP receive errors the loopback programs answer, as Custom codes.
const (
	CCTPErrInstructionDidNotDeserialize uint32 = 102
	CCTPErrConstraintSeeds              uint32 = 2006
	CCTPErrDestinationCaller            uint32 = 6014
	CCTPErrDestinationDomain            uint32 = 6018
	CCTPErrRecipientProgram             uint32 = 6021
	CCTPErrMalformedMessage             uint32 = 6025
	CCTPErrAttesterSignature            uint32 = 6027
	CCTPErrMintRecipient                uint32 = 6006
	CCTPErrTokenMint                    uint32 = 6007
	CCTPErrFeeExecuted                  uint32 = 6008
)

// cctpTransmitterProgram is MessageTransmitterV2's id, whose
// receive_message the bank runs once InstallCCTP set it up.
var cctpTransmitterProgram = cctp.TransmitterProgramID()

// bpfLoaderUpgradeable owns the deployed programs.
const bpfLoaderUpgradeable = "BPFLoaderUpgradeab1e11111111111111111111111"

// CCTPConfig configures the loopback CCTP receive side.
type CCTPConfig struct {
	// LocalDomain is the cluster's domain; zero means 5 (Solana).
	LocalDomain cctp.Domain
	// Mint is the local USDC mint the minter mints (an SPL Token mint).
	Mint chain.Address
	// VerifyAttestationFunc checks an attestation of a message (iristest's
	// Verify); nil accepts any non-empty attestation.
	VerifyAttestationFunc func(message, attestation []byte) error
}

// InstallCCTP deploys the transmitter and minter programs and makes
// receive_message run with cfg.
func (c *Cluster) InstallCCTP(cfg CCTPConfig) error {
	if cfg.Mint.IsZero() {
		return fmt.Errorf("chaintest: InstallCCTP: the mint is required")
	}
	if cfg.LocalDomain == 0 {
		cfg.LocalDomain = cctp.DomainSolana
	}
	loader := chain.Address(solana.MustPublicKeyFromBase58(bpfLoaderUpgradeable))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range []chain.Address{cctp.TransmitterProgramID(), cctp.MinterProgramID()} {
		c.accounts[p] = newStored(Account{Owner: loader, Lamports: RentExemptMinimum(36), Data: make([]byte, 36), Executable: true})
	}
	c.cctp = &cfg
	return nil
}

// ReceiveMessageInstruction is a receive_message of message and
// attestation crediting recipient (a token account of mint, as is
// feeRecipient) paid by payer, who is also the caller.
func ReceiveMessageInstruction(payer, recipient, feeRecipient, mint chain.Address, msg, attestation []byte) (message.Instruction, error) {
	m, err := cctp.DecodeMessage(msg)
	if err != nil {
		return message.Instruction{}, err
	}
	used, err := cctp.UsedNonceAddress(cctp.TransmitterProgramID(), m.Nonce)
	if err != nil {
		return message.Instruction{}, err
	}
	return message.Instruction{ProgramID: cctp.TransmitterProgramID(), Data: cctp.EncodeReceiveMessage(msg, attestation),
		Accounts: []message.AccountMeta{
			{Key: payer, Signer: true, Writable: true}, {Key: payer, Signer: true}, {Key: used, Writable: true},
			{Key: cctp.MinterProgramID()}, {Key: systemProgram}, {Key: feeRecipient, Writable: true},
			{Key: recipient, Writable: true}, {Key: mint, Writable: true}, {Key: tokenProgram},
		}}, nil
}

// runReceiveMessage executes receive_message on b.
func (b *bank) runReceiveMessage(accts []int, data []byte) (uint64, []string, *instrErr) {
	const units = 60_000
	cfg := b.c.cctp
	if cfg == nil {
		return 0, nil, namedErr("UnsupportedProgramId")
	}
	logs := []string{"Program log: Instruction: ReceiveMessage"}
	msg, att, ok := cctp.DecodeReceiveMessage(data)
	if !ok {
		return units, logs, customErr(CCTPErrInstructionDidNotDeserialize)
	}
	if len(accts) < 9 {
		return units, logs, namedErr("NotEnoughAccountKeys")
	}
	key := func(i int) chain.Address { return b.p.keys[accts[i]] }
	payer, caller, used, fees, recipient, mintIdx := accts[0], accts[1], accts[2], accts[5], accts[6], accts[7]
	if !b.p.isSigner(payer) || !b.p.isSigner(caller) {
		return units, logs, namedErr("MissingRequiredSignature")
	}
	m, err := cctp.DecodeMessage(msg)
	if err != nil {
		return units, logs, customErr(CCTPErrMalformedMessage)
	}
	if f := cfg.VerifyAttestationFunc; (f != nil && f(msg, att) != nil) || len(att) == 0 {
		return units, logs, customErr(CCTPErrAttesterSignature)
	}
	if m.DestinationDomain != cfg.LocalDomain {
		return units, logs, customErr(CCTPErrDestinationDomain)
	}
	if !m.DestinationCaller.IsZero() && m.DestinationCaller != cctp.WordOfAddress(key(1)) {
		return units, logs, customErr(CCTPErrDestinationCaller)
	}
	pda, err := cctp.UsedNonceAddress(cctp.TransmitterProgramID(), m.Nonce)
	if err != nil || key(2) != pda {
		return units, logs, customErr(CCTPErrConstraintSeeds)
	}
	if _, exists := b.get(pda); exists {
		logs = append(logs, fmt.Sprintf("Allocate: account Address { address: %s, base: None } already in use", pda))
		return units, logs, customErr(0)
	}
	if key(3) != cctp.MinterProgramID() || m.Recipient != cctp.WordOfAddress(key(3)) {
		return units, logs, customErr(CCTPErrRecipientProgram)
	}
	amount, okA := m.Body.Amount.Uint64()
	fee, okF := m.Body.FeeExecuted.Uint64()
	maxFee, okM := m.Body.MaxFee.Uint64()
	if !okA || !okF || !okM || fee > maxFee || fee > amount {
		return units, logs, customErr(CCTPErrFeeExecuted)
	}
	if m.Body.MintRecipient != cctp.WordOfAddress(key(6)) {
		return units, logs, customErr(CCTPErrMintRecipient)
	}
	if key(7) != cfg.Mint {
		return units, logs, customErr(CCTPErrTokenMint)
	}
	ma, ok := b.get(cfg.Mint)
	mint, merr := token2022.DecodeMint(ma.Data)
	if !ok || merr != nil {
		return units, logs, customErr(CCTPErrTokenMint)
	}
	credit := func(idx int, n uint64) *instrErr {
		a, ok := b.get(b.p.keys[idx])
		t, err := token2022.DecodeAccount(a.Data)
		if !ok || err != nil || a.Owner != ma.Owner || t.Mint != cfg.Mint || t.State != token2022.StateInitialized {
			return customErr(CCTPErrMintRecipient)
		}
		t.Amount += n
		a.Data = token2022.EncodeAccount(t)
		return b.write(idx, a)
	}
	if e := credit(recipient, amount-fee); e != nil {
		return units, logs, e
	}
	if fee > 0 {
		if e := credit(fees, fee); e != nil {
			return units, logs, e
		}
	}
	mint.Supply += amount
	ma.Data = token2022.EncodeMint(mint)
	if e := b.write(mintIdx, ma); e != nil {
		return units, logs, e
	}
	rent := RentExemptMinimum(cctp.UsedNonceSize)
	pa, _ := b.get(key(0))
	if pa.Lamports < rent {
		return units, logs, customErr(1)
	}
	pa.Lamports -= rent
	if e := b.write(payer, pa); e != nil {
		return units, logs, e
	}
	if e := b.write(used, Account{Owner: cctp.TransmitterProgramID(), Lamports: rent,
		Data: append(cctp.UsedNonceDiscriminator(), 1)}); e != nil {
		return units, logs, e
	}
	return units, append(logs, fmt.Sprintf("Program log: minted %d, fee %d, nonce %s", amount-fee, fee, m.Nonce)), nil
}

// SignedTransaction compiles ixs into a legacy message paid by payer at
// blockhash and returns the wire bytes signed by every key in signers
// (the payer's first), for tests that send their own transactions.
func SignedTransaction(payer chain.Address, blockhash string, ixs []message.Instruction, signers ...ed25519.PrivateKey) ([]byte, error) {
	msg, err := message.CompileLegacy(payer, blockhash, ixs)
	if err != nil {
		return nil, err
	}
	wire := message.AppendCompactU16(nil, len(signers))
	for _, k := range signers {
		wire = append(wire, ed25519.Sign(k, msg)...)
	}
	return append(wire, msg...), nil
}
