package cctp

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
)

// The CCTP V2 programs on Solana (web3.md §2.2; the same on mainnet and
// devnet).
const (
	// TransmitterProgram is MessageTransmitterV2's program id.
	TransmitterProgram = "CCTPV2Sm4AdWt5296sk4P66VBZ7bEhcARwFaaS9YPbeC"
	// MinterProgram is TokenMessengerMinterV2's program id.
	MinterProgram = "CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe"
	// SPLTokenProgram is the classic SPL Token program, which owns USDC's
	// mint on Solana.
	SPLTokenProgram = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
)

// mustKey parses a base58 constant of this package.
func mustKey(s string) chain.Address {
	k, err := token2022.ParsePublicKey(s)
	if err != nil {
		panic("cctp: bad program id constant " + s)
	}
	return k
}

// TransmitterProgramID returns MessageTransmitterV2's program id.
func TransmitterProgramID() chain.Address { return mustKey(TransmitterProgram) }

// MinterProgramID returns TokenMessengerMinterV2's program id.
func MinterProgramID() chain.Address { return mustKey(MinterProgram) }

// anchorDiscriminator is Anchor's 8-byte prefix: sha256(namespace:name).
func anchorDiscriminator(namespace, name string) []byte {
	sum := sha256.Sum256([]byte(namespace + ":" + name))
	return sum[:8]
}

// ReceiveMessageDiscriminator starts MessageTransmitterV2's
// receive_message instruction data: sha256("global:receive_message")[:8].
func ReceiveMessageDiscriminator() []byte { return anchorDiscriminator("global", "receive_message") }

// UsedNonceDiscriminator starts a UsedNonce account's data:
// sha256("account:UsedNonce")[:8]; one byte, is_used, follows.
func UsedNonceDiscriminator() []byte { return anchorDiscriminator("account", "UsedNonce") }

// UsedNonceSize is a UsedNonce account's data length.
const UsedNonceSize = 9

// UsedNonceAddress returns the PDA that records nonce as used under
// transmitter: seeds "used_nonce" and the 32-byte nonce (web3.md §2.7).
func UsedNonceAddress(transmitter chain.Address, nonce Word) (chain.Address, error) {
	k, _, err := token2022.FindProgramAddress([][]byte{[]byte("used_nonce"), nonce[:]}, transmitter)
	return k, err
}

// UsedNonceSet reports whether a's data is a UsedNonce with is_used set.
func UsedNonceSet(data []byte) bool {
	return len(data) == UsedNonceSize && bytes.Equal(data[:8], UsedNonceDiscriminator()) && data[8] == 1
}

// EncodeReceiveMessage returns receive_message's instruction data: the
// discriminator, then Borsh's ReceiveMessageParams (message and
// attestation, each a u32 little-endian length and the bytes).
func EncodeReceiveMessage(message, attestation []byte) []byte {
	out := append([]byte(nil), ReceiveMessageDiscriminator()...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(message)))
	out = append(out, message...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(attestation)))
	return append(out, attestation...)
}

// DecodeReceiveMessage reads receive_message's instruction data; ok is
// false for other data.
func DecodeReceiveMessage(data []byte) (message, attestation []byte, ok bool) {
	if len(data) < 8 || !bytes.Equal(data[:8], ReceiveMessageDiscriminator()) {
		return nil, nil, false
	}
	rest := data[8:]
	vec := func() ([]byte, bool) {
		if len(rest) < 4 {
			return nil, false
		}
		n := binary.LittleEndian.Uint32(rest)
		if uint64(len(rest)-4) < uint64(n) {
			return nil, false
		}
		v := rest[4 : 4+n]
		rest = rest[4+n:]
		return v, true
	}
	m, ok1 := vec()
	a, ok2 := vec()
	if !ok1 || !ok2 || len(rest) != 0 {
		return nil, nil, false
	}
	return bytes.Clone(m), bytes.Clone(a), true
}
