package swap

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/money"
)

// canon is the canonical encoding the quote and intent hashes cover: a
// sequence of fields, each its name and its value, each of those an 8-byte
// big-endian length followed by the bytes. Length prefixes make it
// unambiguous (no two field lists encode alike, whatever the strings hold,
// invalid UTF-8 included), and nothing in it depends on a serializer's
// choices. Integers are canonical decimal text, addresses their 32 raw
// bytes, times RFC 3339 UTC at millisecond precision (the precision
// records are stored at), and a list is its length, then each element
// encoded on its own as one value.
type canon struct{ b []byte }

// put appends one length-prefixed byte string.
func (c *canon) put(v []byte) {
	c.b = binary.BigEndian.AppendUint64(c.b, uint64(len(v)))
	c.b = append(c.b, v...)
}

// field appends a name and its value.
func (c *canon) field(name string, v []byte) {
	c.put([]byte(name))
	c.put(v)
}

// str appends a string field.
func (c *canon) str(name, v string) { c.field(name, []byte(v)) }

// uint appends an unsigned integer field.
func (c *canon) uint(name string, v uint64) { c.str(name, strconv.FormatUint(v, 10)) }

// atomic appends an amount field.
func (c *canon) atomic(name string, v money.Atomic) { c.uint(name, uint64(v)) }

// addr appends an address field.
func (c *canon) addr(name string, v chain.Address) { c.field(name, v[:]) }

// time appends a time field.
func (c *canon) time(name string, t time.Time) { c.str(name, canonTime(t)) }

// transferFee appends a Token-2022 fee schedule entry.
func (c *canon) transferFee(name string, f token2022.TransferFee) {
	var e canon
	e.uint("epoch", f.Epoch)
	e.uint("maximumFee", f.MaximumFee)
	e.uint("basisPoints", uint64(f.BasisPoints))
	c.field(name, e.b)
}

// list appends n elements, each encoded by enc into its own buffer.
func (c *canon) list(name string, n int, enc func(e *canon, i int)) {
	var l canon
	l.uint("length", uint64(n))
	for i := range n {
		var e canon
		enc(&e, i)
		l.put(e.b)
	}
	c.field(name, l.b)
}

// sum returns the hex SHA-256 of the encoding.
func (c *canon) sum() string {
	s := sha256.Sum256(c.b)
	return hex.EncodeToString(s[:])
}

// canonTime renders t as its record is stored: UTC, milliseconds, RFC 3339.
func canonTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00")
}

// FreezeTime returns t as records freeze it: UTC, truncated to the
// millisecond, so a stored and re-read record hashes as it did when built.
func FreezeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// HashBytes returns the hex SHA-256 of b: the provider's raw quote and the
// prepared message are bound by this digest.
func HashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
