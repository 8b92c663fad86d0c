// Package secret derives the platform's keys from Config.SecretKey and uses
// them: AES-256-GCM sealing of secrets at rest (provider keys, callback
// secrets, idempotent responses that carry a one-time secret) and keyed
// HMAC-SHA256 digests (API keys, tokens, idempotency request hashes).
//
// One master secret feeds HKDF-SHA256 with a distinct label per use, so a
// digest key never doubles as a sealing key.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sync"
)

// MinKeyLen is the shortest master secret accepted, in bytes.
const MinKeyLen = 32

// Keyring holds the keys derived from the master secret.
type Keyring struct {
	seal   cipher.AEAD
	digest []byte
	idem   []byte
	// digests keeps HMACs keyed with digest for reuse: every
	// authenticated request digests its credential, and a reset HMAC
	// skips the key schedule and allocations of a new one.
	digests sync.Pool
}

// New derives a Keyring from master, which must be at least MinKeyLen bytes
// of high-entropy material.
func New(master []byte) (*Keyring, error) {
	if len(master) < MinKeyLen {
		return nil, fmt.Errorf("secret: master key must be at least %d bytes, got %d", MinKeyLen, len(master))
	}
	derive := func(label string) ([]byte, error) {
		return hkdf.Key(sha256.New, master, nil, "platform/"+label, 32)
	}
	sk, err := derive("seal/v1")
	if err != nil {
		return nil, fmt.Errorf("secret: derive: %w", err)
	}
	block, err := aes.NewCipher(sk)
	if err != nil {
		return nil, fmt.Errorf("secret: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: gcm: %w", err)
	}
	dk, err := derive("digest/v1")
	if err != nil {
		return nil, fmt.Errorf("secret: derive: %w", err)
	}
	ik, err := derive("idempotency/v1")
	if err != nil {
		return nil, fmt.Errorf("secret: derive: %w", err)
	}
	return &Keyring{seal: aead, digest: dk, idem: ik}, nil
}

// Seal encrypts plaintext with AES-256-GCM, binding it to aad (for example
// the record id, so a sealed value cannot be moved to another row). The
// result is nonce || ciphertext.
func (k *Keyring) Seal(plaintext, aad []byte) []byte {
	nonce := make([]byte, k.seal.NonceSize(), k.seal.NonceSize()+len(plaintext)+k.seal.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("secret: crypto/rand failed: " + err.Error())
	}
	return k.seal.Seal(nonce, nonce, plaintext, aad)
}

// ErrOpen is returned when a sealed value fails authentication.
var ErrOpen = errors.New("secret: sealed value failed authentication")

// Open decrypts a value produced by Seal with the same aad.
func (k *Keyring) Open(sealed, aad []byte) ([]byte, error) {
	n := k.seal.NonceSize()
	if len(sealed) < n+k.seal.Overhead() {
		return nil, ErrOpen
	}
	pt, err := k.seal.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// Digest is the keyed HMAC-SHA256 of a credential (API key, token), hex
// encoded. Only digests are stored; the plaintext is never kept.
func (k *Keyring) Digest(credential string) string {
	m, _ := k.digests.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.digest)
	}
	m.Write([]byte(credential))
	var sum [sha256.Size]byte
	d := hex.EncodeToString(m.Sum(sum[:0]))
	m.Reset()
	k.digests.Put(m)
	return d
}

// IdempotencyHash is the keyed HMAC-SHA256 over the given parts, each
// length-prefixed so no two part lists collide.
func (k *Keyring) IdempotencyHash(parts ...[]byte) string {
	m := hmac.New(sha256.New, k.idem)
	var n [8]byte
	for _, p := range parts {
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (56 - 8*i))
		}
		m.Write(n[:])
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}
