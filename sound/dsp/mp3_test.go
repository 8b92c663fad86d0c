package dsp

import (
	"bytes"
	"errors"
	"testing"
)

// codecSilentMP3 returns frames MPEG-1 Layer III frames of silence at
// 128 kbps, 44.1 kHz, stereo, without CRC: header FF FB 90 00 and zeroed side
// information and main data, 417 bytes each.
func codecSilentMP3(frames int) []byte {
	const frameLen = 144 * 128000 / 44100
	out := make([]byte, 0, frames*frameLen)
	for range frames {
		f := make([]byte, frameLen)
		f[0], f[1], f[2], f[3] = 0xFF, 0xFB, 0x90, 0x00
		out = append(out, f...)
	}
	return out
}

func TestMP3ReaderDecodesSilence(t *testing.T) {
	const frames = 40
	// Junk before the first frame is skipped by the decoder's resync.
	data := append([]byte{0, 1, 2}, codecSilentMP3(frames)...)
	r, err := NewMP3Reader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Format{SampleRate: 44100, Channels: 2}); r.Format() != want {
		t.Fatalf("format %+v, want %+v", r.Format(), want)
	}
	got, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if got.Frames() != frames*1152 {
		t.Fatalf("%d frames, want %d", got.Frames(), frames*1152)
	}
	for c := range got {
		for i, v := range got[c] {
			if v != 0 {
				t.Fatalf("channel %d frame %d: %v, want silence", c, i, v)
			}
		}
	}
}

func TestMP3ReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"no input", nil, ErrEmpty},
		{"no MPEG frame", bytes.Repeat([]byte("not audio "), 100), ErrCorrupt},
		{"a truncated first frame", codecSilentMP3(1)[:200], ErrCorrupt},
		{"free bitrate", append([]byte{0xFF, 0xFB, 0x00, 0x00}, make([]byte, 500)...), ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewMP3Reader(bytes.NewReader(tc.data))
			if err == nil {
				_, err = ReadAll(r)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
