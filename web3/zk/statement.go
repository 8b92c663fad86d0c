package zk

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// BindingDomain is the domain tag that starts the binding hash.
const BindingDomain = "platform/zk/v1"

// statementDomain starts the statement hash.
const statementDomain = "platform/zk/statement/v1"

// Binding is the public input that binds a proof to one tenant, user and
// transaction intent (package doc, Statement binding):
//
//	SHA-256("platform/zk/v1" 0x00 tenantId 0x00 userId 0x00 intentId 0x00 economicsHash)
//
// read as a big-endian 256-bit integer and reduced modulo r, BN254's
// scalar field. economicsHash is the intent's lowercase hex economics
// hash, so the binding also pins the intent's frozen terms. No field holds
// a 0x00 byte, so the encoding is unambiguous.
func Binding(tenantID, userID, intentID, economicsHash string) fr.Element {
	h := sha256.New()
	for i, part := range []string{BindingDomain, tenantID, userID, intentID, economicsHash} {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(part))
	}
	var e fr.Element
	e.SetBigInt(new(big.Int).SetBytes(h.Sum(nil))) // SetBigInt reduces modulo r
	return e
}

// StatementHash names one statement: a circuit version and the whole
// vector of its public inputs, as the lowercase hex SHA-256 of
// "platform/zk/statement/v1" 0x00 circuitId 0x00 version 0x00 followed by
// each input as 32 big-endian bytes. Every proof of a statement, however
// re-randomized, has the same statement hash; it is the key verifications
// are deduplicated on.
func StatementHash(circuitID, version string, public []fr.Element) string {
	h := sha256.New()
	h.Write([]byte(statementDomain))
	for _, part := range []string{circuitID, version} {
		h.Write([]byte{0})
		h.Write([]byte(part))
	}
	h.Write([]byte{0})
	for i := range public {
		b := public[i].Bytes()
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
