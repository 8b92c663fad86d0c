package tune

import (
	"fmt"
	"time"
)

// Lengths a piece may have; Compose clamps to them.
const (
	MinLength = time.Second
	MaxLength = 10 * time.Minute
)

// Voice is the instrument that plays a note.
type Voice int

// The voices, each with its own harmonics and envelope.
const (
	// Bass plucks the chord's lowest tone, with a second and third harmonic.
	Bass Voice = iota + 1
	// Pad holds a chord tone through the bar, with a slow attack.
	Pad
	// Stab strikes a chord tone short on the off-beats.
	Stab
	// Arp plucks the chord's tones one at a time.
	Arp
	// Melody sings the tune above the chords, bell-like.
	Melody
	// Kick is a low thump that decays within a beat.
	Kick
	// Hat is a short burst of high noise (Harmonic 0).
	Hat
)

// String names the voice.
func (v Voice) String() string {
	switch v {
	case Bass:
		return "bass"
	case Pad:
		return "pad"
	case Stab:
		return "stab"
	case Arp:
		return "arp"
	case Melody:
		return "melody"
	case Kick:
		return "kick"
	case Hat:
		return "hat"
	}
	return fmt.Sprintf("Voice(%d)", int(v))
}

// Mode is a piece's key: the tonal centre it takes in the pitch set (see
// the package doc) and the scale that follows from it.
type Mode string

// The modes a piece may take.
const (
	// Ionian is major, centred on harmonic 3 (and its octaves).
	Ionian Mode = "ionian"
	// Aeolian is natural minor, centred on harmonic 5.
	Aeolian Mode = "aeolian"
	// Lydian is major with a raised fourth, centred on harmonic 4.
	Lydian Mode = "lydian"
	// Mixolydian is major with a lowered seventh, centred on harmonic 9.
	Mixolydian Mode = "mixolydian"
)

// tonic is the pitch class (0..6 for the letters C..B of the pitch set)
// the mode is centred on.
func (m Mode) tonic() int {
	switch m {
	case Aeolian:
		return 5
	case Lydian:
		return 3
	case Mixolydian:
		return 4
	}
	return 0
}

// Note is one note of a score.
type Note struct {
	// Voice plays the note.
	Voice Voice
	// Harmonic is the pitch: the note sounds at Harmonic × FundamentalHz
	// (with the voice's overtones at whole multiples of it). It is 0 for
	// Hat, which is noise.
	Harmonic int
	// Start and Length place the note from the start of the piece; the
	// voice's release rings on after Length.
	Start, Length time.Duration
	// Gain is the note's peak amplitude, 2^(Gain/4) of full scale: 0 is
	// full scale, -4 half of it (-6 dB), in steps of 1.5 dB.
	Gain int
}

// Score is a composed piece, ready to encode.
type Score struct {
	// Mode is the key.
	Mode Mode
	// Pentatonic reports a melody kept to the mode's five-note subset.
	Pentatonic bool
	// Tempo is in beats per minute, four beats a bar.
	Tempo int
	// Progression is the scale degree (0 the tonic) of each bar's chord,
	// looped over the piece; the last bar returns to the tonic.
	Progression []int
	// Notes are every voice's notes, by start.
	Notes []Note
	// Length is the piece's exact length once encoded: a whole number of
	// MPEG frames of 1152 samples.
	Length time.Duration
}

// granuleOf is the granule (576 samples) nearest to d.
func granuleOf(d time.Duration) int {
	const per = granuleSamples * int64(time.Second)
	return int((d.Nanoseconds()*SampleRate + per/2) / per)
}

// framesFor is the number of frames that hold length.
func framesFor(length time.Duration) int {
	const per = frameSamples * int64(time.Second)
	return int((length.Nanoseconds()*SampleRate + per - 1) / per)
}

// frameTime is the length of n frames.
func frameTime(n int) time.Duration {
	return time.Duration(int64(n) * frameSamples * int64(time.Second) / SampleRate)
}
