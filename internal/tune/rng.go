package tune

import (
	"crypto/sha256"
	"encoding/binary"
)

// rng is a splitmix64 generator: a fixed algorithm, so a seed gives the same
// piece on every Go release and platform.
type rng struct{ s uint64 }

// newRNG seeds a generator from the SHA-256 of seed.
func newRNG(seed string) *rng {
	h := sha256.Sum256([]byte(seed))
	return &rng{s: binary.LittleEndian.Uint64(h[:8])}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// mix64 is splitmix64's finalizer, also used to hash small integers.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool { return r.intn(den) < num }

// pick returns one element of xs.
func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }
