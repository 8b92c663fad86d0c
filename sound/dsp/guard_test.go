package dsp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/sound/dsp"
)

// count reads r to its end and returns the frames served and the error
// that ended it (nil at io.EOF).
func count(r dsp.Reader) (int64, error) {
	buf := dsp.NewBlock(r.Format().Channels, dsp.BlockFrames)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// The bound holds in decoded frames: a stream of exactly the bound ends
// normally, one frame more fails with the bound, and nothing past the
// bound is ever served.
func TestLimitFrames(t *testing.T) {
	f := dsp.Format{SampleRate: 8000, Channels: 1}
	for _, tc := range []struct {
		frames, max int
		tooLong     bool
	}{{10000, 10000, false}, {10001, 10000, true}, {4096, 4095, true}, {3, 0, false}, {50000, 4096, true}} {
		r := dsp.LimitFrames(dsp.NewBlockReader(f, dsp.NewBlock(1, tc.frames)), int64(tc.max))
		n, err := count(r)
		var le *dsp.LengthError
		if tc.tooLong != errors.Is(err, dsp.ErrTooLong) || tc.tooLong != errors.As(err, &le) {
			t.Fatalf("%d frames under %d: %d served, %v", tc.frames, tc.max, n, err)
		}
		if tc.tooLong && (n > int64(tc.max) || le.MaxFrames != int64(tc.max) || le.SampleRate != 8000) {
			t.Fatalf("%d frames under %d: %d served, %+v", tc.frames, tc.max, n, le)
		}
		if !tc.tooLong && n != int64(tc.frames) {
			t.Fatalf("%d frames under %d: %d served", tc.frames, tc.max, n)
		}
		if _, again := r.Read(dsp.NewBlock(1, 16)); tc.tooLong && !errors.Is(again, dsp.ErrTooLong) {
			t.Fatalf("the failure is not sticky: %v", again)
		}
	}
}

// A FLAC stream whose STREAMINFO claims one second but that holds twenty
// decodes all twenty seconds unbounded, and is stopped at the bound,
// whatever the header claimed.
func TestLimitFramesStopsALyingFLAC(t *testing.T) {
	const rate = 8000
	file := assettest.ConstantFLAC(rate, 1, 16, 4096, 20*rate, rate, 1000)
	open := func() dsp.Reader {
		r, kind, err := dsp.Open(bytes.NewReader(file))
		if err != nil || kind != "flac" {
			t.Fatalf("open: %s, %v", kind, err)
		}
		return r
	}
	if n, err := count(open()); err != nil || n != 20*rate {
		t.Fatalf("unbounded: %d frames, %v", n, err)
	}
	n, err := count(dsp.LimitFrames(open(), 10*rate))
	if !errors.Is(err, dsp.ErrTooLong) || n > 10*rate {
		t.Fatalf("bounded at 10 s: %d frames, %v", n, err)
	}
	t.Logf("%d-byte FLAC claiming 1 s, holding 20 s: stopped after %d frames", len(file), n)
}

// Once the context ends, the next read fails with its cause.
func TestWithContext(t *testing.T) {
	f := dsp.Format{SampleRate: 8000, Channels: 1}
	ctx, cancel := context.WithCancelCause(context.Background())
	r := dsp.WithContext(ctx, dsp.NewBlockReader(f, dsp.NewBlock(1, 100000)))
	buf := dsp.NewBlock(1, 4096)
	if n, err := r.Read(buf); n != 4096 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	stop := errors.New("stopped by the owner")
	cancel(stop)
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, stop) {
		t.Fatalf("read after cancel: %d, %v", n, err)
	}
}
