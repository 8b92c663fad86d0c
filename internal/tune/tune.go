package tune

import "time"

// Piece composes a piece of about length from seed and encodes it: the
// bytes of an MP3 file. The same seed and length always give the same
// bytes.
func Piece(seed string, length time.Duration) ([]byte, error) {
	return Compose(seed, length).Encode()
}

// Length is the exact length of a piece asked for length: length clamped
// to MinLength and MaxLength, rounded up to whole MPEG frames. It is the
// Length of every Score Compose writes for length.
func Length(length time.Duration) time.Duration {
	return frameTime(framesFor(min(max(length, MinLength), MaxLength)))
}
