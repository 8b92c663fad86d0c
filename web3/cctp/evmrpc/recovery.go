package evmrpc

import (
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/creatormusic/platform/web3/cctp"
)

// Recovery recovers signers of secp256k1 signatures as
// MessageTransmitterV2 does (web3.md §2.7): a 65-byte r, s, v signature
// with v 27 or 28 (0 and 1 are taken too), s in the lower half of the
// curve order, over a 32-byte digest; the signer is the last 20 bytes of
// the Keccak-256 of its public key.
type Recovery struct{}

var _ cctp.SignerRecovery = Recovery{}

// halfOrder is secp256k1's curve order divided by two.
func halfOrder() *big.Int { return new(big.Int).Rsh(crypto.S256().Params().N, 1) }

// Recover implements cctp.SignerRecovery.
func (Recovery) Recover(digest cctp.Word, sig []byte) (cctp.EVMAddress, error) {
	if len(sig) != crypto.SignatureLength {
		return cctp.EVMAddress{}, errors.New("evmrpc: a signature is 65 bytes")
	}
	s := make([]byte, len(sig))
	copy(s, sig)
	switch s[64] {
	case 27, 28:
		s[64] -= 27
	case 0, 1:
	default:
		return cctp.EVMAddress{}, errors.New("evmrpc: the signature's recovery id is not 27 or 28")
	}
	if new(big.Int).SetBytes(s[32:64]).Cmp(halfOrder()) > 0 {
		return cctp.EVMAddress{}, errors.New("evmrpc: the signature's s is in the upper half of the order")
	}
	pub, err := crypto.SigToPub(digest[:], s)
	if err != nil {
		return cctp.EVMAddress{}, errors.New("evmrpc: the signature does not recover")
	}
	return cctp.EVMAddress(crypto.PubkeyToAddress(*pub)), nil
}
