// Package id makes the platform's record identifiers: a short type prefix
// and a ULID (48-bit millisecond time from the caller's clock, 80 random
// bits), so identifiers are opaque, unique and sort by creation time.
package id

import (
	"crypto/rand"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// New returns prefix followed by a lower-case ULID stamped with t, for
// example New("key_", now) = "key_01jd3...".
func New(prefix string, t time.Time) string {
	u := ulid.MustNew(ulid.Timestamp(t), rand.Reader)
	return prefix + strings.ToLower(u.String())
}

// Sequence makes identifiers that sort in the order they were made, even
// within one millisecond: one Sequence serves one unit of work, so the
// events a transaction writes list in the order it wrote them. It is not
// safe for concurrent use.
type Sequence struct {
	entropy *ulid.MonotonicEntropy
}

// Next returns prefix followed by a ULID stamped with t that sorts after
// every earlier one from this Sequence with the same t.
func (s *Sequence) Next(prefix string, t time.Time) string {
	if s.entropy == nil {
		s.entropy = ulid.Monotonic(rand.Reader, 0)
	}
	u := ulid.MustNew(ulid.Timestamp(t), s.entropy)
	return prefix + strings.ToLower(u.String())
}

// Valid reports whether s is prefix followed by a well-formed ULID.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != ulid.EncodedSize {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(rest))
	return err == nil
}
