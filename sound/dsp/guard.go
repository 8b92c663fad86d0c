package dsp

import (
	"context"
	"errors"
	"fmt"
)

// ErrTooLong marks a stream that ran past the frame bound of a
// LimitFrames reader; errors.As finds the *LengthError with the bound.
var ErrTooLong = errors.New("dsp: the audio is longer than allowed")

// LengthError is a LimitFrames reader's failure: the stream went on past
// MaxFrames frames. It matches ErrTooLong.
type LengthError struct {
	// MaxFrames is the bound; SampleRate the stream's rate, so the bound
	// reads as MaxFrames/SampleRate seconds.
	MaxFrames  int64
	SampleRate int
}

// Error implements error.
func (e *LengthError) Error() string {
	return fmt.Sprintf("dsp: the audio runs past %d frames (%.1f s at %d Hz)", e.MaxFrames,
		float64(e.MaxFrames)/float64(e.SampleRate), e.SampleRate)
}

// Is reports whether target is ErrTooLong.
func (e *LengthError) Is(target error) bool { return target == ErrTooLong }

// LimitFrames returns a Reader that serves r's frames up to maxFrames and
// fails with a *LengthError as soon as r yields a frame past the bound,
// whatever r's header declared: the bound holds in decoded frames, so a
// file whose header claims less than it holds is stopped all the same.
// A stream of exactly maxFrames frames ends normally. The failure is
// sticky. maxFrames <= 0 means no bound (r itself is returned).
func LimitFrames(r Reader, maxFrames int64) Reader {
	if maxFrames <= 0 {
		return r
	}
	return &frameLimit{src: r, left: maxFrames, max: maxFrames}
}

type frameLimit struct {
	src  Reader
	left int64
	max  int64
	err  error
}

// Format implements Reader.
func (l *frameLimit) Format() Format { return l.src.Format() }

// Read implements Reader. It asks r for at most one frame more than the
// bound leaves, so the first frame past the bound is seen, never served.
func (l *frameLimit) Read(buf Block) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	want := buf.Frames()
	if int64(want) > l.left+1 {
		want = int(l.left + 1)
	}
	n, err := l.src.Read(buf.Slice(want))
	if int64(n) > l.left {
		l.err = &LengthError{MaxFrames: l.max, SampleRate: l.src.Format().SampleRate}
		return 0, l.err
	}
	l.left -= int64(n)
	return n, err
}

// WithContext returns a Reader that checks ctx before every read of r: once
// ctx is done each Read fails with an error wrapping context.Cause(ctx).
// Every consumer of the package reads block by block, so work on such a
// reader stops within one block of ctx ending.
func WithContext(ctx context.Context, r Reader) Reader {
	return &ctxReader{ctx: ctx, src: r}
}

type ctxReader struct {
	ctx context.Context
	src Reader
}

// Format implements Reader.
func (c *ctxReader) Format() Format { return c.src.Format() }

// Read implements Reader.
func (c *ctxReader) Read(buf Block) (int, error) {
	if c.ctx.Err() != nil {
		return 0, fmt.Errorf("dsp: reading stopped: %w", context.Cause(c.ctx))
	}
	return c.src.Read(buf)
}
