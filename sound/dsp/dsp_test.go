package dsp

import (
	"errors"
	"io"
	"testing"
)

func TestBlockReaderStreamsEveryFrame(t *testing.T) {
	src := NewBlock(2, 10000)
	for i := range src[0] {
		src[0][i], src[1][i] = float64(i), -float64(i)
	}
	r := NewBlockReader(Format{SampleRate: 48000, Channels: 2}, src)
	got, err := ReadAll(r)
	if err != nil || got.Frames() != 10000 || got[0][9999] != 9999 || got[1][1234] != -1234 {
		t.Fatalf("ReadAll: %d frames, %v", got.Frames(), err)
	}
	if n, err := r.Read(NewBlock(2, 16)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("read past the end: %d, %v", n, err)
	}
}

func TestFormatValidate(t *testing.T) {
	for _, f := range []Format{{SampleRate: 0, Channels: 2}, {SampleRate: 44100, Channels: 0}, {SampleRate: 44100, Channels: 2, BitDepth: 40}} {
		if f.Validate() == nil {
			t.Errorf("%+v validated", f)
		}
	}
	if err := (Format{SampleRate: 44100, Channels: 2, BitDepth: 24}).Validate(); err != nil {
		t.Fatal(err)
	}
}
