package provideratest

// MP3 returns a small valid MPEG-1 Layer III stream of silence, for tests
// that need an MP3 served from elsewhere than the simulator (whose tracks
// are composed pieces, see TrackMP3): frames at 128 kbps, 44.1 kHz,
// stereo, no CRC (header FF FB 90 00, 417 bytes per frame, zeroed side
// information and main data). frames <= 0 means 77 frames (about two
// seconds).
func MP3(frames int) []byte {
	if frames <= 0 {
		frames = 77
	}
	const frameLen = 144 * 128000 / 44100 // 417, no padding
	out := make([]byte, 0, frames*frameLen)
	for i := 0; i < frames; i++ {
		f := make([]byte, frameLen)
		f[0], f[1], f[2], f[3] = 0xFF, 0xFB, 0x90, 0x00
		out = append(out, f...)
	}
	return out
}
