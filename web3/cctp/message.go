package cctp

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/crypto/sha3"

	"github.com/creatormusic/platform/fault"
)

// The CCTP V2 message format (web3.md §2.4): a 148-byte header, then the
// burn message body, whose fixed part is 228 bytes and whose hook data
// runs to the end. Integers are big-endian.
const (
	// MessageVersion is a V2 message's header version.
	MessageVersion uint32 = 1
	// BurnMessageVersion is a V2 burn body's version.
	BurnMessageVersion uint32 = 1
	// HeaderSize is the header's length; the body starts there.
	HeaderSize = 148
	// BurnBodySize is the burn body's fixed length; hook data follows.
	BurnBodySize = 228
	// MinMessageSize is the shortest burn message: header and fixed body.
	MinMessageSize = HeaderSize + BurnBodySize
)

// Header offsets.
const (
	offVersion           = 0
	offSourceDomain      = 4
	offDestinationDomain = 8
	offNonce             = 12
	offSender            = 44
	offRecipient         = 76
	offDestinationCaller = 108
	offMinFinality       = 140
	offFinalityExecuted  = 144
)

// Burn body offsets, from the body's start.
const (
	offBodyVersion     = 0
	offBurnToken       = 4
	offMintRecipient   = 36
	offAmount          = 68
	offMessageSender   = 100
	offMaxFee          = 132
	offFeeExecuted     = 164
	offExpirationBlock = 196
	offHookData        = 228
)

// BurnBody is the body of a burn message.
type BurnBody struct {
	// Version is the body's version (BurnMessageVersion).
	Version uint32
	// BurnToken is the burned token on the source chain (an address word).
	BurnToken Word
	// MintRecipient receives the mint: on Solana the USDC token account.
	MintRecipient Word
	// Amount is the burned amount (uint256).
	Amount Word
	// MessageSender is the depositor (an address word).
	MessageSender Word
	// MaxFee is the most the depositor allowed the mint to keep (uint256).
	MaxFee Word
	// FeeExecuted is the fee the attester charged; zero on the source
	// chain (uint256).
	FeeExecuted Word
	// ExpirationBlock is filled by the attester; zero on the source chain.
	ExpirationBlock Word
	// HookData is the depositor's hook data, empty without a hook.
	HookData []byte
}

// Message is a CCTP V2 message that carries a burn.
type Message struct {
	// Version is the header's version (MessageVersion).
	Version uint32
	// SourceDomain and DestinationDomain are the chains it moves between.
	SourceDomain, DestinationDomain Domain
	// Nonce is the attester's nonce; zero in the source chain's log.
	Nonce Word
	// Sender is the source TokenMessenger, Recipient the destination's
	// (on Solana the TokenMessengerMinterV2 program).
	Sender, Recipient Word
	// DestinationCaller may relay the mint; zero lets anyone.
	DestinationCaller Word
	// MinFinalityThreshold is the depositor's finality;
	// FinalityThresholdExecuted the attester's (zero on the source chain).
	MinFinalityThreshold, FinalityThresholdExecuted uint32
	// Body is the burn.
	Body BurnBody
}

// DecodeMessage decodes a V2 burn message; INVALID_INPUT when b is shorter
// than MinMessageSize or either version is not V2's.
func DecodeMessage(b []byte) (Message, error) {
	const op = "cctp.DecodeMessage"
	if len(b) < MinMessageSize {
		return Message{}, fault.E(op, fault.InvalidInput, "a CCTP V2 burn message is at least 376 bytes").With("length", len(b))
	}
	word := func(off int) (w Word) { copy(w[:], b[off:off+32]); return w }
	u32 := func(off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }
	m := Message{Version: u32(offVersion), SourceDomain: Domain(u32(offSourceDomain)),
		DestinationDomain: Domain(u32(offDestinationDomain)), Nonce: word(offNonce), Sender: word(offSender),
		Recipient: word(offRecipient), DestinationCaller: word(offDestinationCaller),
		MinFinalityThreshold: u32(offMinFinality), FinalityThresholdExecuted: u32(offFinalityExecuted)}
	body := HeaderSize
	m.Body = BurnBody{Version: u32(body + offBodyVersion), BurnToken: word(body + offBurnToken),
		MintRecipient: word(body + offMintRecipient), Amount: word(body + offAmount), MessageSender: word(body + offMessageSender),
		MaxFee: word(body + offMaxFee), FeeExecuted: word(body + offFeeExecuted), ExpirationBlock: word(body + offExpirationBlock),
		HookData: bytes.Clone(b[body+offHookData:])}
	if m.Version != MessageVersion || m.Body.Version != BurnMessageVersion {
		return Message{}, fault.E(op, fault.InvalidInput, "not a CCTP V2 burn message").
			With("version", m.Version).With("bodyVersion", m.Body.Version)
	}
	return m, nil
}

// Encode returns m in the wire format DecodeMessage reads.
func (m Message) Encode() []byte {
	b := make([]byte, MinMessageSize, MinMessageSize+len(m.Body.HookData))
	put := func(off int, w Word) { copy(b[off:off+32], w[:]) }
	u32 := func(off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
	u32(offVersion, m.Version)
	u32(offSourceDomain, uint32(m.SourceDomain))
	u32(offDestinationDomain, uint32(m.DestinationDomain))
	put(offNonce, m.Nonce)
	put(offSender, m.Sender)
	put(offRecipient, m.Recipient)
	put(offDestinationCaller, m.DestinationCaller)
	u32(offMinFinality, m.MinFinalityThreshold)
	u32(offFinalityExecuted, m.FinalityThresholdExecuted)
	body := HeaderSize
	u32(body+offBodyVersion, m.Body.Version)
	put(body+offBurnToken, m.Body.BurnToken)
	put(body+offMintRecipient, m.Body.MintRecipient)
	put(body+offAmount, m.Body.Amount)
	put(body+offMessageSender, m.Body.MessageSender)
	put(body+offMaxFee, m.Body.MaxFee)
	put(body+offFeeExecuted, m.Body.FeeExecuted)
	put(body+offExpirationBlock, m.Body.ExpirationBlock)
	return append(b, m.Body.HookData...)
}

// SourceForm returns m as the source chain's MessageSent log carries it:
// the fields the attester fills (nonce, finality executed, fee executed,
// expiration block) zeroed (web3.md §2.4). An attested message and the
// burn's log agree exactly when their source forms are equal.
func (m Message) SourceForm() Message {
	m.Nonce, m.FinalityThresholdExecuted = Word{}, 0
	m.Body.FeeExecuted, m.Body.ExpirationBlock = Word{}, Word{}
	m.Body.HookData = bytes.Clone(m.Body.HookData)
	return m
}

// Keccak256 returns the Keccak-256 digest of b (the EVM's hash: the
// attesters sign the message's).
func Keccak256(b []byte) Word {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	var w Word
	h.Sum(w[:0])
	return w
}
