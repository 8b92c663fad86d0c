// Package id makes the platform's record identifiers: a short type prefix
// and a ULID (48-bit millisecond time from the caller's clock, 80 random
// bits), so identifiers are opaque, unique and sort by creation time.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"math/bits"
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
	entropy monotonic
}

// Next returns prefix followed by a ULID stamped with t that sorts after
// every earlier one from this Sequence with the same t.
func (s *Sequence) Next(prefix string, t time.Time) string {
	u := ulid.MustNew(ulid.Timestamp(t), &s.entropy)
	return prefix + strings.ToLower(u.String())
}

// monotonic is a Sequence's entropy (ulid.MonotonicReader): 80 fresh
// random bits for a new millisecond, and within one the previous bits
// plus a random increment from 1 to 2^32, so identifiers of one
// millisecond sort in the order they were made and stay unguessable. It
// reads the system's generator for the bytes it needs; ulid's
// MonotonicEntropy buffers (and fills) 4 KiB of it for every unit of work.
type monotonic struct {
	ms     uint64
	hi     uint16
	lo     uint64
	primed bool
}

// Read implements io.Reader with the system's generator.
func (m *monotonic) Read(p []byte) (int, error) { return rand.Read(p) }

// MonotonicRead implements ulid.MonotonicReader: it fills p (10 bytes)
// with the entropy of an identifier of millisecond ms.
func (m *monotonic) MonotonicRead(ms uint64, p []byte) error {
	if m.primed && ms == m.ms {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		lo, carry := bits.Add64(m.lo, uint64(binary.BigEndian.Uint32(b[:]))+1, 0)
		if carry == 1 && m.hi == math.MaxUint16 {
			return ulid.ErrMonotonicOverflow
		}
		m.lo, m.hi = lo, m.hi+uint16(carry)
	} else {
		var b [10]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		m.hi, m.lo = binary.BigEndian.Uint16(b[:2]), binary.BigEndian.Uint64(b[2:])
		m.ms, m.primed = ms, true
	}
	binary.BigEndian.PutUint16(p[:2], m.hi)
	binary.BigEndian.PutUint64(p[2:10], m.lo)
	return nil
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
