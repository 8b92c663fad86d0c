package simctl

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
)

// RandomHex returns n random bytes as 2n lowercase hex digits.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomAlnum returns n random characters of [0-9A-Za-z].
func RandomAlnum(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

// RandomUUID returns a random (version 4) UUID in its canonical form.
func RandomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Counter makes deterministic identifiers for a simulator that must
// answer the same ids on every run: a prefix and a sequence number. The
// zero value starts at 1; it is safe for concurrent use.
type Counter struct {
	n atomic.Uint64
}

// Next returns prefix followed by the next sequence number, zero-padded
// to six digits: "chatcmpl-000001".
func (c *Counter) Next(prefix string) string {
	return fmt.Sprintf("%s%06d", prefix, c.n.Add(1))
}
