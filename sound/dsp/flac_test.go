package dsp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
)

func TestFLACRoundTripIsBitExact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		channels int
		bits     int
		seekable bool
	}{
		{"16-bit mono", 1, 16, true},
		{"16-bit stereo", 2, 16, true},
		{"24-bit stereo", 2, 24, true},
		{"24-bit 3 channels", 3, 24, true},
		{"16-bit stereo unseekable", 2, 16, false},
		{"24-bit mono unseekable", 1, 24, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Format{SampleRate: 44100, Channels: tc.channels, BitDepth: tc.bits}
			// A tone under noise on the target grid: fixed predictors
			// get something to predict, and every value is exact.
			src := codecGridBlock(tc.channels, 10001, tc.bits, false, 11)
			scale := float64(int64(1) << (tc.bits - 1))
			for c := range src {
				for i := 2; i < len(src[c]); i++ {
					tone := math.Round(0.6*scale*math.Sin(2*math.Pi*440*float64(i)/44100)) / scale
					src[c][i] = tone + math.Round(src[c][i]*64)/scale
				}
			}
			mem := &codecMemFile{}
			buf := &bytes.Buffer{}
			var out io.Writer = codecOnlyWriter{buf}
			if tc.seekable {
				out = mem
			}
			w, err := NewFLACWriter(out, f)
			if err != nil {
				t.Fatal(err)
			}
			codecWriteBlocks(t, w.Write, src)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			if tc.seekable {
				data = mem.b
				if mem.pos != len(mem.b) {
					t.Errorf("Close left the writer at %d of %d", mem.pos, len(mem.b))
				}
			}
			r, err := NewFLACReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != f {
				t.Fatalf("format %+v, want %+v", r.Format(), f)
			}
			if tc.seekable && r.total != 10001 {
				t.Errorf("StreamInfo declares %d frames", r.total)
			}
			got, err := ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			codecEqual(t, got, src)
			if raw := tc.channels * tc.bits / 8 * 10001; len(data) >= raw {
				t.Errorf("%d bytes of FLAC for %d bytes of PCM", len(data), raw)
			}
		})
	}
}

// codecFLAC encodes frames of a 440 Hz tone as 16-bit stereo FLAC.
func codecFLAC(t *testing.T, frames int, seekable bool) []byte {
	t.Helper()
	src := NewBlock(2, frames)
	for i := range src[0] {
		src[0][i] = 0.5 * math.Sin(2*math.Pi*440*float64(i)/44100)
		src[1][i] = -src[0][i]
	}
	mem := &codecMemFile{}
	buf := &bytes.Buffer{}
	var out io.Writer = buf
	if seekable {
		out = mem
	}
	w, err := NewFLACWriter(out, Format{SampleRate: 44100, Channels: 2, BitDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if seekable {
		return mem.b
	}
	return buf.Bytes()
}

func TestFLACReaderErrors(t *testing.T) {
	whole := codecFLAC(t, 9000, true)
	streamed := codecFLAC(t, 9000, false)
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-100] ^= 0x5A
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"no input", nil, ErrEmpty},
		{"no frames", codecFLAC(t, 0, false), ErrEmpty},
		{"not FLAC", []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00"), ErrCorrupt},
		{"truncated signature", []byte("fLa"), ErrCorrupt},
		{"truncated StreamInfo", whole[:20], ErrCorrupt},
		{"truncated inside a frame", whole[:len(whole)-10], ErrCorrupt},
		{"truncated inside a frame, length unknown", streamed[:len(streamed)-10], ErrCorrupt},
		{"a flipped byte", flipped, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewFLACReader(bytes.NewReader(tc.data))
			if err == nil {
				_, err = ReadAll(r)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestFLACWriterRejects(t *testing.T) {
	for _, f := range []Format{
		{SampleRate: 48000, Channels: 2, BitDepth: 20},
		{SampleRate: 48000, Channels: 2, BitDepth: 32},
		{SampleRate: 48000, Channels: 2, BitDepth: 32, Float: true},
		{SampleRate: 48000, Channels: 0, BitDepth: 16},
	} {
		if _, err := NewFLACWriter(&bytes.Buffer{}, f); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%+v: %v", f, err)
		}
	}
}
