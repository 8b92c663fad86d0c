package dsp

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// FLACReader streams the samples of a FLAC stream (github.com/mewkiz/flac),
// one codec frame at a time: at most 65535 samples per channel are held.
// Samples of b bits map to [-1, 1) by dividing by 2^(b-1).
type FLACReader struct {
	stream *flac.Stream
	format Format
	total  uint64 // frames the StreamInfo declares; 0 when unknown
	read   uint64 // frames decoded so far
	cur    *frame.Frame
	pos    int // next sample of cur
	scale  float64
	err    error // sticky end: io.EOF or the error to report
}

// flacCounter counts the bytes read through it, to tell no input from bad
// input.
type flacCounter struct {
	r io.Reader
	n int64
}

func (c *flacCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// NewFLACReader parses the FLAC signature and metadata of r and its first
// audio frame. Errors wrap ErrEmpty (no input, or a stream without a
// frame), ErrCorrupt (not FLAC, malformed or truncated) or ErrUnsupported
// (a sample rate or channel count outside Format's range).
func NewFLACReader(r io.Reader) (*FLACReader, error) {
	cr := &flacCounter{r: r}
	stream, err := flac.New(cr)
	if err != nil {
		if cr.n == 0 && errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("dsp: FLAC: no input: %w", ErrEmpty)
		}
		return nil, fmt.Errorf("dsp: FLAC: reading the header: %v: %w", err, ErrCorrupt)
	}
	info := stream.Info
	f := Format{SampleRate: int(info.SampleRate), Channels: int(info.NChannels), BitDepth: int(info.BitsPerSample)}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	fr := &FLACReader{stream: stream, format: f, total: info.NSamples, scale: 1 / float64(int64(1)<<(f.BitDepth-1))}
	if err := fr.next(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("dsp: FLAC: the stream has no audio frame: %w", ErrEmpty)
		}
		return nil, err
	}
	return fr, nil
}

// next decodes the next frame into cur; at the end it returns io.EOF, or
// ErrCorrupt when fewer frames came than the StreamInfo declared.
func (r *FLACReader) next() error {
	fr, err := r.stream.ParseNext()
	switch {
	case errors.Is(err, io.EOF):
		if r.total != 0 && r.read < r.total {
			return fmt.Errorf("dsp: FLAC: the stream ends after %d of %d frames: %w", r.read, r.total, ErrCorrupt)
		}
		return io.EOF
	case err != nil:
		return fmt.Errorf("dsp: FLAC: decoding frame %d: %v: %w", r.read, err, ErrCorrupt)
	}
	if len(fr.Subframes) != r.format.Channels {
		return fmt.Errorf("dsp: FLAC: a frame of %d channels in a %d-channel stream: %w", len(fr.Subframes), r.format.Channels, ErrCorrupt)
	}
	if bps := int(fr.BitsPerSample); bps != 0 && bps != r.format.BitDepth {
		return fmt.Errorf("dsp: FLAC: a frame of %d bits in a %d-bit stream: %w", bps, r.format.BitDepth, ErrCorrupt)
	}
	for _, sf := range fr.Subframes {
		if len(sf.Samples) != int(fr.BlockSize) {
			return fmt.Errorf("dsp: FLAC: a subframe of %d samples in a frame of %d: %w", len(sf.Samples), fr.BlockSize, ErrCorrupt)
		}
	}
	r.cur, r.pos = fr, 0
	r.read += uint64(fr.BlockSize)
	return nil
}

// Format implements Reader.
func (r *FLACReader) Format() Format { return r.format }

// Read implements Reader.
func (r *FLACReader) Read(buf Block) (int, error) {
	if len(buf) != r.format.Channels {
		return 0, fmt.Errorf("dsp: FLAC: read into a %d-channel block from a %d-channel stream", len(buf), r.format.Channels)
	}
	n := 0
	for n < buf.Frames() {
		if r.err != nil {
			break
		}
		if r.cur == nil || r.pos >= int(r.cur.BlockSize) {
			r.cur = nil
			if err := r.next(); err != nil {
				r.err = err
				break
			}
		}
		m := min(buf.Frames()-n, int(r.cur.BlockSize)-r.pos)
		for c, sf := range r.cur.Subframes {
			dst := buf[c][n : n+m]
			for i, s := range sf.Samples[r.pos : r.pos+m] {
				dst[i] = float64(s) * r.scale
			}
		}
		r.pos += m
		n += m
	}
	if n == 0 && r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// flacBlockFrames is the block size, in samples per channel, of the frames
// the FLAC writer encodes (a common choice of reference encoders).
const flacBlockFrames = 4096

// FLACWriter encodes blocks as a 16- or 24-bit FLAC stream through
// flac.NewEncoder, in frames of 4096 samples per channel with fixed
// predictors chosen per subframe. Samples are clamped to [-1, 1] and
// quantised with TPDF dither like WAVWriter's, so a same-depth round trip is
// bit-exact.
//
// It holds one codec frame at a time.
type FLACWriter struct {
	enc     *flac.Encoder
	sink    *flacSink
	format  Format
	frame   *frame.Frame
	pending int
	dither  *Ditherer
	closed  bool
	err     error
}

// NewFLACWriter writes the FLAC signature and StreamInfo for f to w and
// returns a writer for its samples. f.BitDepth must be 16 or 24 and f.Float
// false, else the error wraps ErrUnsupported.
//
// When w is an io.WriteSeeker, Close goes back to record the sample count
// and MD5 sum in the StreamInfo; otherwise they stay "unknown", which FLAC
// allows. w is written through a buffer that Close flushes; Close does not
// close w.
func NewFLACWriter(w io.Writer, f Format) (*FLACWriter, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	if f.Float || (f.BitDepth != 16 && f.BitDepth != 24) {
		return nil, fmt.Errorf("dsp: FLAC: %d-bit output (float %t): %w", f.BitDepth, f.Float, ErrUnsupported)
	}
	sink := &flacSink{bw: bufio.NewWriter(w)}
	var out io.Writer = sink
	if ws, ok := w.(io.WriteSeeker); ok {
		if pos, err := ws.Seek(0, io.SeekCurrent); err == nil {
			sink.ws, sink.start = ws, pos
			out = &flacSeekSink{sink}
		}
	}
	info := &meta.StreamInfo{
		BlockSizeMin:  flacBlockFrames,
		BlockSizeMax:  flacBlockFrames,
		SampleRate:    uint32(f.SampleRate),
		NChannels:     uint8(f.Channels),
		BitsPerSample: uint8(f.BitDepth),
	}
	enc, err := flac.NewEncoder(out, info)
	if err != nil {
		return nil, fmt.Errorf("dsp: FLAC: starting the encoder: %w", err)
	}
	fr := &frame.Frame{
		Header: frame.Header{
			HasFixedBlockSize: true,
			SampleRate:        flacHeaderRate(f.SampleRate),
			Channels:          frame.Channels(f.Channels - 1), // ChannelsMono .. ChannelsLRCLfeLsRsSlSr
			BitsPerSample:     uint8(f.BitDepth),
		},
		Subframes: make([]*frame.Subframe, f.Channels),
	}
	for c := range fr.Subframes {
		fr.Subframes[c] = &frame.Subframe{Samples: make([]int32, flacBlockFrames)}
	}
	return &FLACWriter{enc: enc, sink: sink, format: f, frame: fr, dither: NewDitherer(ditherDefaultSeed)}, nil
}

// flacHeaderRate is the sample rate a frame header states: the rate when a
// header can code it, else 0 ("as in the StreamInfo").
func flacHeaderRate(rate int) uint32 {
	switch {
	case rate <= 65535, rate <= 255000 && rate%1000 == 0, rate <= 655350 && rate%10 == 0:
		return uint32(rate)
	}
	return 0
}

// SetDither sets the ditherer; nil rounds to nearest without dither. A new
// writer dithers with a fixed seed, so one input always gives one stream.
func (w *FLACWriter) SetDither(d *Ditherer) { w.dither = d }

// Format is the format being written.
func (w *FLACWriter) Format() Format { return w.format }

// Write encodes the frames of b, which must have the format's channel
// count.
func (w *FLACWriter) Write(b Block) error {
	switch {
	case w.err != nil:
		return w.err
	case w.closed:
		return errors.New("dsp: FLAC: write after Close")
	case len(b) != w.format.Channels:
		return fmt.Errorf("dsp: FLAC: writing a %d-channel block to a %d-channel stream", len(b), w.format.Channels)
	}
	bits := w.format.BitDepth
	for i := 0; i < b.Frames(); {
		m := min(b.Frames()-i, flacBlockFrames-w.pending)
		for c, sf := range w.frame.Subframes {
			dst := sf.Samples[w.pending : w.pending+m]
			for j, x := range b[c][i : i+m] {
				dst[j] = w.dither.Quantize(x, bits)
			}
		}
		w.pending += m
		i += m
		if w.pending == flacBlockFrames {
			if err := w.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush encodes the pending samples as one frame.
func (w *FLACWriter) flush() error {
	if w.pending == 0 {
		return nil
	}
	w.frame.BlockSize = uint16(w.pending)
	for _, sf := range w.frame.Subframes {
		// The encoder's analysis rewrites the prediction of a verbatim
		// subframe, so every frame starts over from verbatim.
		sf.SubHeader = frame.SubHeader{Pred: frame.PredVerbatim}
		sf.Samples = sf.Samples[:w.pending]
		sf.NSamples = w.pending
	}
	err := w.enc.WriteFrame(w.frame)
	for _, sf := range w.frame.Subframes {
		sf.Samples = sf.Samples[:flacBlockFrames]
	}
	w.pending = 0
	if err != nil {
		w.err = fmt.Errorf("dsp: FLAC: encoding a frame: %w", err)
	}
	return w.err
}

// Close encodes the last, possibly short, frame, flushes the output and,
// when the writer can seek, completes the StreamInfo and returns to the end
// of the stream. It does not close the underlying writer.
func (w *FLACWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if err := w.flush(); err != nil {
		return err
	}
	var end int64
	if w.sink.ws != nil {
		var err error
		if end, err = w.sink.seek(0, io.SeekCurrent); err != nil {
			w.err = fmt.Errorf("dsp: FLAC: finding the end: %w", err)
			return w.err
		}
	}
	if err := w.enc.Close(); err != nil {
		w.err = fmt.Errorf("dsp: FLAC: closing the encoder: %w", err)
		return w.err
	}
	if err := w.sink.bw.Flush(); err != nil {
		w.err = fmt.Errorf("dsp: FLAC: flushing: %w", err)
		return w.err
	}
	if w.sink.ws != nil {
		if _, err := w.sink.seek(end, io.SeekStart); err != nil {
			w.err = fmt.Errorf("dsp: FLAC: seeking to the end: %w", err)
		}
	}
	return w.err
}

// flacSink buffers the encoder's many small writes. It has no Close, so the
// encoder's Close leaves the caller's writer open.
type flacSink struct {
	bw    *bufio.Writer
	ws    io.WriteSeeker // the underlying writer, when it can seek
	start int64          // offset of the stream in ws
}

func (s *flacSink) Write(p []byte) (int, error) { return s.bw.Write(p) }

// WriteByte lets the encoder's bit writer use the buffer directly.
func (s *flacSink) WriteByte(c byte) error { return s.bw.WriteByte(c) }

// seek flushes the buffer and seeks ws, with offsets relative to the start
// of the stream.
func (s *flacSink) seek(off int64, whence int) (int64, error) {
	if err := s.bw.Flush(); err != nil {
		return 0, err
	}
	if whence == io.SeekStart {
		off += s.start
	}
	pos, err := s.ws.Seek(off, whence)
	return pos - s.start, err
}

// flacSeekSink is a flacSink the encoder sees as an io.WriteSeeker.
type flacSeekSink struct{ *flacSink }

// Seek implements io.Seeker.
func (s *flacSeekSink) Seek(off int64, whence int) (int64, error) { return s.seek(off, whence) }
