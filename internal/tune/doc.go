// Package tune composes short procedural pieces of music for the music
// provider simulators (generation/providera/provideratest and
// generation/providerb/providerbtest) and encodes them as MP3, so that a
// person trying the product hears a distinct take for every track. Only
// the simulators and their tests use it; production code never links it.
//
// # Composition
//
// Compose turns a seed (the simulators use the task's prompt, the task id
// and the track's index) into a Score: a key (a Mode), a tempo, a
// four-bar chord progression, a bass pattern, a chord style (held pads,
// off-beat stabs or arpeggios), an optional drum pattern (kick and hats)
// and a melody in four-bar phrases (a motif that climbs, an answer, the
// motif again on the way down, an ending; phrases repeat as A A' B A). The
// piece opens with an intro bar or two when it is long enough, ends on the
// tonic chord and fades over its last second and a half. A fixed generator
// (splitmix64 over the seed's SHA-256) and integer arithmetic make the same
// seed give the same bytes everywhere.
//
// # Pitches
//
// The encoder can sound, cleanly, only whole multiples of FundamentalHz
// (44100/1152, about 38.3 Hz), so a piece's pitches are harmonic numbers.
// Luckily the harmonics hold a whole major scale in just intonation: with
// harmonic 3 as C (about 115 Hz), D is 27, E 15, F 4, G 9, A 5 and B 45,
// each times any power of two. The scale cannot be transposed, so a key
// is a tonal centre in it: C (major), A (minor), F (lydian) or G
// (mixolydian). The bass plays harmonics 4-10, the chords 12-27 and the
// melody 30-64 (1.1-2.5 kHz, a music-box register), where the scale is
// dense enough.
//
// # Encoding
//
// Encode writes MPEG-1 Layer III, mono, 44.1 kHz, at a constant 64 kb/s
// (frames of 208 or 209 bytes, padded so that the rate holds), without CRC
// or bit reservoir (main_data_begin 0: each frame carries its own two
// granules): about 8 KB a second. Each granule (576 samples) is coded with
// long blocks, big_values 0 and every spectral line in the count1 region
// with table B: per quadruple of lines a 4-bit code, the inverse of the
// four |values|, then a sign bit per nonzero value; the region stops after
// the quadruple of the highest nonzero line and part2_3_length counts the
// bits exactly. Values are therefore -1, 0 or +1, and loudness comes from
// elsewhere: global_gain sets the granule's loudest band (1.5 dB steps),
// the long-block scalefactors, with the scalefac_scale, preflag and
// scalefac_compress that fit best, attenuate every other band (3 or 6 dB
// steps) from it. A band holds one level, so the lines that share it take
// the loudest line's level, and lines more than 6 dB under it are dropped.
//
// A note of harmonic m is line m over the granules it sounds: held at one
// sign when m is even, alternating in sign from granule to granule when m
// is odd. A line's basis function advances its phase by a quarter turn
// from one granule to the next, and with the sine window the two granules
// that overlap add, for those sign patterns, to one steady sine at exactly
// m × FundamentalHz, half a line's width from the line's centre. Envelopes
// (attack, decay, release) are levels per granule; a voice's overtones are
// more lines at multiples of m, quieter; hats are high lines with random
// signs, which is noise. Notes above line 140 (5.4 kHz) are left out, and
// the hats sit on lines 150-229.
package tune
