package dsp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	mp3 "github.com/hajimehoshi/go-mp3"
)

// MP3Reader streams the samples of an MPEG-1/2 Layer III stream through
// github.com/hajimehoshi/go-mp3, one MPEG frame (1152 samples) at a time.
// That decoder always produces 16-bit stereo, a mono stream coming out
// duplicated, so Format reports 2 channels and BitDepth 0 (MP3 has none).
//
// The decoder ends the stream quietly at a truncated last frame, so a
// truncated MP3 reads as a shorter one, not as ErrCorrupt.
type MP3Reader struct {
	dec    *mp3.Decoder
	format Format
	buf    []byte
	err    error // sticky end: io.EOF or the error to report
}

// mp3Source hides any io.Seeker of the caller's reader (go-mp3 would scan
// the whole stream up front to index its frames) and counts the bytes read,
// to tell no input from input without an MPEG frame.
type mp3Source struct {
	r io.Reader
	n int64
}

func (s *mp3Source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	return n, err
}

// NewMP3Reader finds and decodes the first frame of r. Errors wrap ErrEmpty
// (no input), ErrCorrupt (no MPEG audio frame, malformed) or ErrUnsupported
// (free bitrate, MPEG 2.5, as go-mp3 refuses them).
func NewMP3Reader(r io.Reader) (*MP3Reader, error) {
	src := &mp3Source{r: r}
	dec, err := mp3.NewDecoder(src)
	if err != nil {
		if errors.Is(err, io.EOF) {
			if src.n == 0 {
				return nil, fmt.Errorf("dsp: MP3: no input: %w", ErrEmpty)
			}
			return nil, fmt.Errorf("dsp: MP3: no complete MPEG audio frame: %w", ErrCorrupt)
		}
		return nil, mp3Error(err)
	}
	f := Format{SampleRate: dec.SampleRate(), Channels: 2}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	return &MP3Reader{dec: dec, format: f}, nil
}

// mp3Error classifies a go-mp3 error, which carries no type to test: its
// refusals say "not supported".
func mp3Error(err error) error {
	if strings.Contains(err.Error(), "not supported") {
		return fmt.Errorf("dsp: MP3: %v: %w", err, ErrUnsupported)
	}
	return fmt.Errorf("dsp: MP3: %v: %w", err, ErrCorrupt)
}

// Format implements Reader.
func (r *MP3Reader) Format() Format { return r.format }

// Read implements Reader.
func (r *MP3Reader) Read(buf Block) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(buf) != 2 {
		return 0, fmt.Errorf("dsp: MP3: read into a %d-channel block from a 2-channel stream", len(buf))
	}
	want := buf.Frames() * 4
	if want == 0 {
		return 0, nil
	}
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	b := r.buf[:want]
	got, err := io.ReadFull(r.dec, b)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		r.err = io.EOF
	default:
		r.err = mp3Error(err)
	}
	n := got / 4
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		buf[0][i] = float64(int16(le.Uint16(b[4*i:]))) / (1 << 15)
		buf[1][i] = float64(int16(le.Uint16(b[4*i+2:]))) / (1 << 15)
	}
	if n == 0 && r.err != nil {
		return 0, r.err
	}
	return n, nil
}
