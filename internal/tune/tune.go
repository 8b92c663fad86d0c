package tune

import "time"

// Piece composes a piece of about length from seed and encodes it: the
// bytes of an MP3 file. The same seed and length always give the same
// bytes.
func Piece(seed string, length time.Duration) ([]byte, error) {
	return Compose(seed, length).Encode()
}
