package dsp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// WAV format tags (the fmt chunk's wFormatTag) the reader tells apart.
const (
	wavTagPCM        = 0x0001
	wavTagADPCM      = 0x0002
	wavTagFloat      = 0x0003
	wavTagALaw       = 0x0006
	wavTagMuLaw      = 0x0007
	wavTagIMAADPCM   = 0x0011
	wavTagExtensible = 0xFFFE
)

// wavGUIDTail is the part of a WAVE_FORMAT_EXTENSIBLE sub-format GUID that
// follows its leading 16-bit format tag (KSDATAFORMAT_SUBTYPE_*).
var wavGUIDTail = []byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// wavUnknownSize is the chunk size a writer that cannot seek leaves in the
// header; the reader takes it to mean "to the end of the stream".
const wavUnknownSize = 0xFFFFFFFF

// WAVReader streams the samples of a RIFF/WAVE file: integer PCM of 16, 24
// or 32 bits, IEEE float of 32 bits, either plain or as
// WAVE_FORMAT_EXTENSIBLE, 1 to 8 channels. Integer samples map to [-1, 1)
// by dividing by 2^(bits-1); float samples pass through unchanged.
//
// It reads the header chunks up to the data chunk and then streams that
// chunk, holding no more than one caller's block of bytes. Chunks other
// than fmt and data (LIST, fact, cue, ...) are skipped. The fmt chunk must
// precede the data chunk, as in every file seen in practice: a stream cannot
// come back for samples it has passed.
type WAVReader struct {
	r        io.Reader
	format   Format
	bytes    int   // bytes per sample
	align    int   // bytes per frame
	left     int64 // bytes of whole frames of the data chunk not yet read
	toEOF    bool  // the data size is unknown: read to the end of r
	ragged   bool  // the declared data size ends inside a frame
	consumed int64 // bytes of the data chunk read so far
	buf      []byte
	err      error // sticky end: io.EOF or the error to report
}

// NewWAVReader parses the header of the WAV stream r up to the start of its
// samples. Errors wrap ErrEmpty (no input, or a data chunk of zero bytes),
// ErrCorrupt (not RIFF/WAVE, a truncated header, a missing or malformed fmt
// chunk, no data chunk) or ErrUnsupported (8-bit PCM, A-law, mu-law, ADPCM,
// float other than 32-bit, more than 8 channels, a sample rate out of
// range, RIFX or RF64). A data size of 0xFFFFFFFF, which writers that
// cannot seek leave behind, means the samples run to the end of r.
func NewWAVReader(r io.Reader) (*WAVReader, error) {
	var hdr [12]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, wavHeaderError(n, err)
	}
	switch id := string(hdr[0:4]); {
	case id == "RIFX" || id == "RF64":
		return nil, fmt.Errorf("dsp: WAV: %s container: %w", id, ErrUnsupported)
	case id != "RIFF" || string(hdr[8:12]) != "WAVE":
		return nil, fmt.Errorf("dsp: WAV: not a RIFF/WAVE stream: %w", ErrCorrupt)
	}
	w := &WAVReader{r: r}
	haveFmt := false
	for {
		var ch [8]byte
		if n, err := io.ReadFull(r, ch[:]); err != nil {
			if n == 0 && errors.Is(err, io.EOF) {
				if !haveFmt {
					return nil, fmt.Errorf("dsp: WAV: no fmt chunk: %w", ErrCorrupt)
				}
				return nil, fmt.Errorf("dsp: WAV: no data chunk: %w", ErrCorrupt)
			}
			return nil, wavTruncated("chunk header", err)
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if haveFmt {
				return nil, fmt.Errorf("dsp: WAV: two fmt chunks: %w", ErrCorrupt)
			}
			if err := w.parseFmt(size); err != nil {
				return nil, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("dsp: WAV: data chunk before the fmt chunk: %w", ErrCorrupt)
			}
			switch size {
			case 0:
				return nil, fmt.Errorf("dsp: WAV: the data chunk is empty: %w", ErrEmpty)
			case wavUnknownSize:
				w.toEOF = true
			default:
				w.left = size - size%int64(w.align)
				w.ragged = size%int64(w.align) != 0
			}
			return w, nil
		default:
			if _, err := io.CopyN(io.Discard, r, size+size&1); err != nil {
				return nil, wavTruncated(fmt.Sprintf("%q chunk", id), err)
			}
		}
	}
}

// wavHeaderError classifies a failed read of the first n bytes of a WAV.
func wavHeaderError(n int, err error) error {
	if n == 0 && errors.Is(err, io.EOF) {
		return fmt.Errorf("dsp: WAV: no input: %w", ErrEmpty)
	}
	return wavTruncated("RIFF header", err)
}

// wavTruncated reports a header read that ended early as ErrCorrupt and
// passes any other read error through.
func wavTruncated(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("dsp: WAV: truncated %s: %w", what, ErrCorrupt)
	}
	return fmt.Errorf("dsp: WAV: reading the %s: %w", what, err)
}

// parseFmt reads and checks a fmt chunk of size bytes.
func (w *WAVReader) parseFmt(size int64) error {
	if size < 16 {
		return fmt.Errorf("dsp: WAV: fmt chunk of %d bytes: %w", size, ErrCorrupt)
	}
	b := make([]byte, min(size, 40))
	if _, err := io.ReadFull(w.r, b); err != nil {
		return wavTruncated("fmt chunk", err)
	}
	if rest := size - int64(len(b)) + size&1; rest > 0 {
		if _, err := io.CopyN(io.Discard, w.r, rest); err != nil {
			return wavTruncated("fmt chunk", err)
		}
	}
	le := binary.LittleEndian
	tag := le.Uint16(b[0:])
	channels := int(le.Uint16(b[2:]))
	rate := int(le.Uint32(b[4:]))
	align := int(le.Uint16(b[12:]))
	bits := int(le.Uint16(b[14:]))
	if tag == wavTagExtensible {
		if len(b) < 40 {
			return fmt.Errorf("dsp: WAV: extensible fmt chunk of %d bytes: %w", size, ErrCorrupt)
		}
		if !bytes.Equal(b[26:40], wavGUIDTail) {
			return fmt.Errorf("dsp: WAV: extensible sub-format is not a standard one: %w", ErrUnsupported)
		}
		tag = le.Uint16(b[24:])
	}
	switch tag {
	case wavTagPCM:
		switch bits {
		case 16, 24, 32:
		case 8:
			return fmt.Errorf("dsp: WAV: 8-bit PCM: %w", ErrUnsupported)
		default:
			return fmt.Errorf("dsp: WAV: %d-bit PCM: %w", bits, ErrUnsupported)
		}
	case wavTagFloat:
		if bits != 32 {
			return fmt.Errorf("dsp: WAV: %d-bit float: %w", bits, ErrUnsupported)
		}
	case wavTagALaw:
		return fmt.Errorf("dsp: WAV: A-law: %w", ErrUnsupported)
	case wavTagMuLaw:
		return fmt.Errorf("dsp: WAV: mu-law: %w", ErrUnsupported)
	case wavTagADPCM, wavTagIMAADPCM:
		return fmt.Errorf("dsp: WAV: ADPCM: %w", ErrUnsupported)
	default:
		return fmt.Errorf("dsp: WAV: format tag 0x%04X: %w", tag, ErrUnsupported)
	}
	switch {
	case channels == 0:
		return fmt.Errorf("dsp: WAV: zero channels: %w", ErrCorrupt)
	case channels > 8:
		return fmt.Errorf("dsp: WAV: %d channels: %w", channels, ErrUnsupported)
	case rate == 0:
		return fmt.Errorf("dsp: WAV: zero sample rate: %w", ErrCorrupt)
	case align != channels*bits/8:
		return fmt.Errorf("dsp: WAV: block align %d for %d channels of %d bits: %w", align, channels, bits, ErrCorrupt)
	}
	w.format = Format{SampleRate: rate, Channels: channels, BitDepth: bits, Float: tag == wavTagFloat}
	if err := w.format.Validate(); err != nil {
		return fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	w.bytes, w.align = bits/8, align
	return nil
}

// Format implements Reader. BitDepth is the container's bits per sample.
func (w *WAVReader) Format() Format { return w.format }

// Read implements Reader. A data chunk shorter than its declared size, or
// one that ends inside a frame, yields its whole frames and then an error
// wrapping ErrCorrupt.
func (w *WAVReader) Read(buf Block) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(buf) != w.format.Channels {
		return 0, fmt.Errorf("dsp: WAV: read into a %d-channel block from a %d-channel stream", len(buf), w.format.Channels)
	}
	want := int64(buf.Frames()) * int64(w.align)
	if !w.toEOF {
		want = min(want, w.left)
	}
	if want == 0 {
		if buf.Frames() == 0 {
			return 0, nil
		}
		w.err = io.EOF
		if w.ragged {
			w.err = fmt.Errorf("dsp: WAV: the data chunk ends inside a frame: %w", ErrCorrupt)
		}
		return 0, w.err
	}
	if int64(cap(w.buf)) < want {
		w.buf = make([]byte, want)
	}
	b := w.buf[:want]
	got, err := io.ReadFull(w.r, b)
	w.left -= int64(got)
	w.consumed += int64(got)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		switch {
		case !w.toEOF:
			w.err = fmt.Errorf("dsp: WAV: the data chunk ends at least %d bytes short of its declared size: %w", w.left, ErrCorrupt)
		case got%w.align != 0 && !(got%w.align == 1 && w.consumed%2 == 0):
			// One byte after whole frames of odd total length is the
			// chunk's pad byte.
			w.err = fmt.Errorf("dsp: WAV: the data ends inside a frame: %w", ErrCorrupt)
		default:
			w.err = io.EOF
		}
	default:
		w.err = fmt.Errorf("dsp: WAV: reading samples: %w", err)
	}
	n := got / w.align
	w.decode(buf, b[:n*w.align])
	if n == 0 && w.err != nil {
		return 0, w.err
	}
	return n, nil
}

// decode de-interleaves whole frames of b into buf.
func (w *WAVReader) decode(buf Block, b []byte) {
	ch := w.format.Channels
	le := binary.LittleEndian
	for i := 0; len(b) > 0; i++ {
		for c := 0; c < ch; c++ {
			var v float64
			switch {
			case w.format.Float:
				v = float64(math.Float32frombits(le.Uint32(b)))
			case w.bytes == 2:
				v = float64(int16(le.Uint16(b))) / (1 << 15)
			case w.bytes == 3:
				v = float64(int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24)>>8) / (1 << 23)
			default:
				v = float64(int32(le.Uint32(b))) / (1 << 31)
			}
			buf[c][i] = v
			b = b[w.bytes:]
		}
	}
}

// WAVWriter encodes blocks as a WAV file: integer PCM of 16, 24 or 32 bits,
// or 32-bit IEEE float when the format's Float is set. Samples are clamped
// to [-1, 1]; 16- and 24-bit output is quantised with TPDF dither (see
// Ditherer: samples already on the target grid pass unchanged, so a
// same-depth round trip is bit-exact), 32-bit integer output is rounded.
// More than two channels are written as WAVE_FORMAT_EXTENSIBLE with an
// unspecified channel mask; float output carries a fact chunk.
//
// It holds one block of bytes at a time.
type WAVWriter struct {
	w         io.Writer
	ws        io.WriteSeeker // w, when it can seek
	start     int64          // offset of the header in ws
	format    Format
	bytes     int
	dither    *Ditherer
	factAt    int // offset of the fact chunk's frame count, or 0
	dataAt    int // offset of the data chunk's size
	data      int64
	buf       []byte
	closed    bool
	err       error
	maxFrames int64
}

// NewWAVWriter writes a WAV header for f to w and returns a writer for its
// samples. f.BitDepth must be 16, 24 or 32 (f.Float only with 32).
//
// When w is an io.WriteSeeker, Close goes back to fill in the RIFF, fact
// and data sizes; otherwise they stay 0xFFFFFFFF, which this package's
// reader (like other streaming readers) takes as "to the end of the
// stream". Errors wrap ErrUnsupported for a format WAV output cannot hold.
func NewWAVWriter(w io.Writer, f Format) (*WAVWriter, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	switch {
	case f.Float && f.BitDepth != 32:
		return nil, fmt.Errorf("dsp: WAV: %d-bit float output: %w", f.BitDepth, ErrUnsupported)
	case f.BitDepth != 16 && f.BitDepth != 24 && f.BitDepth != 32:
		return nil, fmt.Errorf("dsp: WAV: %d-bit output: %w", f.BitDepth, ErrUnsupported)
	}
	ww := &WAVWriter{w: w, format: f, bytes: f.BitDepth / 8, dither: NewDitherer(ditherDefaultSeed)}
	if ws, ok := w.(io.WriteSeeker); ok {
		if pos, err := ws.Seek(0, io.SeekCurrent); err == nil {
			ww.ws, ww.start = ws, pos
		}
	}
	hdr := ww.header()
	ww.maxFrames = (math.MaxUint32 - 1 - int64(len(hdr))) / int64(f.Channels*ww.bytes)
	if _, err := w.Write(hdr); err != nil {
		return nil, fmt.Errorf("dsp: WAV: writing the header: %w", err)
	}
	return ww, nil
}

// header builds the header with placeholder sizes and records where the
// sizes go.
func (w *WAVWriter) header() []byte {
	f := w.format
	le := binary.LittleEndian
	tag := uint16(wavTagPCM)
	if f.Float {
		tag = wavTagFloat
	}
	align := f.Channels * w.bytes
	fmtBody := le.AppendUint16(nil, tag)
	if f.Channels > 2 {
		fmtBody = le.AppendUint16(nil, wavTagExtensible)
	}
	fmtBody = le.AppendUint16(fmtBody, uint16(f.Channels))
	fmtBody = le.AppendUint32(fmtBody, uint32(f.SampleRate))
	fmtBody = le.AppendUint32(fmtBody, uint32(f.SampleRate*align))
	fmtBody = le.AppendUint16(fmtBody, uint16(align))
	fmtBody = le.AppendUint16(fmtBody, uint16(f.BitDepth))
	switch {
	case f.Channels > 2:
		fmtBody = le.AppendUint16(fmtBody, 22)
		fmtBody = le.AppendUint16(fmtBody, uint16(f.BitDepth))
		fmtBody = le.AppendUint32(fmtBody, 0) // channel mask: unspecified
		fmtBody = le.AppendUint16(fmtBody, tag)
		fmtBody = append(fmtBody, wavGUIDTail...)
	case f.Float:
		fmtBody = le.AppendUint16(fmtBody, 0)
	}
	h := []byte("RIFF")
	h = le.AppendUint32(h, wavUnknownSize)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, uint32(len(fmtBody)))
	h = append(h, fmtBody...)
	if f.Float {
		h = append(h, "fact"...)
		h = le.AppendUint32(h, 4)
		w.factAt = len(h)
		h = le.AppendUint32(h, wavUnknownSize)
	}
	h = append(h, "data"...)
	w.dataAt = len(h)
	return le.AppendUint32(h, wavUnknownSize)
}

// SetDither sets the ditherer for 16- and 24-bit output; nil rounds to
// nearest without dither. A new writer dithers with a fixed seed, so one
// input always gives one file.
func (w *WAVWriter) SetDither(d *Ditherer) { w.dither = d }

// Format is the format being written.
func (w *WAVWriter) Format() Format { return w.format }

// Write encodes the frames of b, which must have the format's channel
// count.
func (w *WAVWriter) Write(b Block) error {
	switch {
	case w.err != nil:
		return w.err
	case w.closed:
		return errors.New("dsp: WAV: write after Close")
	case len(b) != w.format.Channels:
		return fmt.Errorf("dsp: WAV: writing a %d-channel block to a %d-channel file", len(b), w.format.Channels)
	}
	frames := b.Frames()
	align := w.format.Channels * w.bytes
	if w.data/int64(align)+int64(frames) > w.maxFrames {
		return errors.New("dsp: WAV: output exceeds the 4 GiB RIFF limit")
	}
	need := frames * align
	if cap(w.buf) < need {
		w.buf = make([]byte, need)
	}
	p := w.buf[:0]
	le := binary.LittleEndian
	for i := 0; i < frames; i++ {
		for c := range b {
			x := b[c][i]
			switch {
			case w.format.Float:
				if math.IsNaN(x) {
					x = 0
				}
				p = le.AppendUint32(p, math.Float32bits(float32(max(-1, min(1, x)))))
			case w.bytes == 2:
				p = le.AppendUint16(p, uint16(w.dither.Quantize(x, 16)))
			case w.bytes == 3:
				v := uint32(w.dither.Quantize(x, 24))
				p = append(p, byte(v), byte(v>>8), byte(v>>16))
			default:
				p = le.AppendUint32(p, uint32((*Ditherer)(nil).Quantize(x, 32)))
			}
		}
	}
	if _, err := w.w.Write(p); err != nil {
		w.err = fmt.Errorf("dsp: WAV: writing samples: %w", err)
		return w.err
	}
	w.data += int64(need)
	return nil
}

// Close pads the data chunk to an even length and, when the writer can
// seek, fills in the header's sizes and returns to the end of the file. It
// does not close the underlying writer.
func (w *WAVWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if w.data&1 == 1 {
		if _, err := w.w.Write([]byte{0}); err != nil {
			w.err = fmt.Errorf("dsp: WAV: writing the pad byte: %w", err)
			return w.err
		}
	}
	if w.ws == nil {
		return nil
	}
	end := int64(w.dataAt) + 4 + w.data + w.data&1
	le := binary.LittleEndian
	patches := []struct {
		at int
		v  uint32
	}{{4, uint32(end - 8)}, {w.dataAt, uint32(w.data)}}
	if w.factAt != 0 {
		patches = append(patches, struct {
			at int
			v  uint32
		}{w.factAt, uint32(w.data / int64(w.format.Channels*w.bytes))})
	}
	for _, p := range patches {
		if _, err := w.ws.Seek(w.start+int64(p.at), io.SeekStart); err != nil {
			w.err = fmt.Errorf("dsp: WAV: seeking to patch the header: %w", err)
			return w.err
		}
		if _, err := w.ws.Write(le.AppendUint32(nil, p.v)); err != nil {
			w.err = fmt.Errorf("dsp: WAV: patching the header: %w", err)
			return w.err
		}
	}
	if _, err := w.ws.Seek(w.start+end, io.SeekStart); err != nil {
		w.err = fmt.Errorf("dsp: WAV: seeking to the end: %w", err)
	}
	return w.err
}

// Sniff names the container of a stream from its first bytes: "wav"
// (RIFF....WAVE, 12 bytes needed), "flac" ("fLaC") or "mp3" (an ID3v2 tag
// or an MPEG audio frame sync with a valid layer). It reports false for
// anything else, including too short a header.
func Sniff(header []byte) (string, bool) {
	h := header
	switch {
	case len(h) >= 12 && string(h[0:4]) == "RIFF" && string(h[8:12]) == "WAVE":
		return "wav", true
	case len(h) >= 4 && string(h[0:4]) == "fLaC":
		return "flac", true
	case len(h) >= 3 && string(h[0:3]) == "ID3":
		return "mp3", true
	case len(h) >= 3 && h[0] == 0xFF && h[1]&0xE0 == 0xE0 &&
		(h[1]>>3)&3 != 1 && (h[1]>>1)&3 != 0 && h[2]>>4 != 0xF:
		// sync, version not reserved, layer not reserved, bitrate not bad
		return "mp3", true
	}
	return "", false
}

// Open sniffs the container of r (see Sniff) and returns a Reader for it
// with the container's name. The Reader reads r through a buffer, so r must
// not be read otherwise afterwards. Errors wrap ErrEmpty for no input,
// ErrUnsupported for a container it does not recognise, and otherwise what
// the container's reader reports.
func Open(r io.Reader) (Reader, string, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(12)
	if len(head) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, "", fmt.Errorf("dsp: no input: %w", ErrEmpty)
		}
		return nil, "", fmt.Errorf("dsp: reading the header: %w", err)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", fmt.Errorf("dsp: reading the header: %w", err)
	}
	kind, ok := Sniff(head)
	if !ok {
		return nil, "", fmt.Errorf("dsp: unrecognised audio container: %w", ErrUnsupported)
	}
	var rd Reader
	switch kind {
	case "wav":
		rd, err = NewWAVReader(br)
	case "flac":
		rd, err = NewFLACReader(br)
	default:
		rd, err = NewMP3Reader(br)
	}
	if err != nil {
		return nil, kind, err
	}
	return rd, kind, nil
}
