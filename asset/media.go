package asset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"

	"github.com/creatormusic/platform/fault"
)

// Format is an audio container the platform accepts.
type Format string

const (
	// WAV is RIFF/WAVE with PCM (8, 16, 24, 32-bit) or IEEE float (32-bit) samples.
	WAV Format = "wav"
	// FLAC is native FLAC with a STREAMINFO block.
	FLAC Format = "flac"
	// MP3 is MPEG-1, 2 or 2.5 audio layer III, optionally behind an ID3v2 tag.
	MP3 Format = "mp3"
)

// Unknown is the details.detected value of content that is no accepted format.
const Unknown = "unknown"

// MediaType returns the format's canonical media type.
func (f Format) MediaType() string {
	switch f {
	case WAV:
		return "audio/wav"
	case FLAC:
		return "audio/flac"
	case MP3:
		return "audio/mpeg"
	}
	return "application/octet-stream"
}

// UploadMediaTypes lists the media types an upload may declare, canonical
// names first, then the common aliases.
func UploadMediaTypes() []string {
	return []string{"audio/wav", "audio/flac", "audio/mpeg", "audio/x-wav", "audio/wave", "audio/vnd.wave", "audio/x-flac", "audio/mp3"}
}

// FormatOfMediaType maps a declared media type (parameters allowed) to a
// format; ok is false for types no format answers to.
func FormatOfMediaType(mediaType string) (Format, bool) {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return "", false
	}
	switch mt {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return WAV, true
	case "audio/flac", "audio/x-flac":
		return FLAC, true
	case "audio/mpeg", "audio/mp3":
		return MP3, true
	}
	return "", false
}

// formatOfFilename maps a file name's extension to a format.
func formatOfFilename(name string) (Format, bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".wav", ".wave":
		return WAV, true
	case ".flac":
		return FLAC, true
	case ".mp3":
		return MP3, true
	}
	return "", false
}

// Media is what sniffing read from a file's header.
type Media struct {
	// Format is the detected container.
	Format Format
	// SampleRate is in Hz; Channels counts channels; BitDepth is bits per
	// sample (0 for MP3, which has none).
	SampleRate int
	Channels   int
	BitDepth   int
	// Float marks IEEE float WAV samples.
	Float bool
	// BitrateKbps is the first MP3 frame's bitrate; 0 for other formats.
	BitrateKbps int
	// DurationMs is the duration; valid only when HasDuration.
	DurationMs  int64
	HasDuration bool
	// DurationEstimated marks an MP3 duration estimated from size and the
	// first frame's bitrate (no Xing, Info or VBRI frame count).
	DurationEstimated bool
}

// Sniffing limits.
const (
	// maxWAVChunks bounds the chunks walked before the data chunk.
	maxWAVChunks = 64
	// maxFLACBlocks bounds the metadata blocks walked.
	maxFLACBlocks = 1024
	// maxMP3Padding is how many zero bytes may sit between an ID3v2 tag and
	// the first frame.
	maxMP3Padding = 64 << 10
)

// errTruncated and errMalformed classify a sniffer's failure on content
// whose format was recognised.
var (
	errTruncated = errors.New("truncated")
	errMalformed = errors.New("malformed")
)

// Sniff reads the header of the content in r (size bytes) and returns what
// it is. Content of no accepted format is INVALID_INPUT with details.field
// "file" and details.detected "unknown"; a recognised format whose header is
// malformed, unsupported (for example 12-bit PCM or MPEG layer II) or
// truncated (a WAV data chunk longer than the file, FLAC metadata or an MP3
// frame cut short) is INVALID_INPUT with details.detected naming the format
// and details.reason "malformed", "unsupported" or "truncated". Empty
// content is INVALID_INPUT with details.reason "empty".
//
// The parsers read only headers: WAV's fmt and data chunk headers, FLAC's
// metadata blocks and first frame sync, MP3's ID3v2 header and the first two
// frame headers (plus the Xing, Info or VBRI header inside the first frame).
// A FLAC or MP3 file whose audio frames are cut short after the first is not
// detected, since that needs decoding.
func Sniff(r io.ReaderAt, size int64) (Media, error) {
	const op = "asset.Sniff"
	if size == 0 {
		return Media{}, fault.Invalid(op, "file", "The file is empty.").With("reason", "empty").With("detected", Unknown)
	}
	head := make([]byte, 12)
	n, err := r.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Media{}, fault.Wrap(op, fmt.Errorf("read header: %w", err))
	}
	head = head[:n]
	var m Media
	var f Format
	switch {
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		f = WAV
		m, err = sniffWAV(r, size)
	case len(head) >= 4 && string(head[:4]) == "fLaC":
		f = FLAC
		m, err = sniffFLAC(r, size)
	case len(head) >= 3 && string(head[:3]) == "ID3", len(head) >= 4 && mp3Sync(head):
		f = MP3
		m, err = sniffMP3(r, size)
	default:
		return Media{}, fault.Invalid(op, "file", "The file is not WAV, FLAC or MP3 audio.").With("detected", Unknown)
	}
	if err == nil {
		return m, nil
	}
	var reason, msg string
	switch {
	case errors.Is(err, errTruncated):
		reason, msg = "truncated", "The "+strings.ToUpper(string(f))+" file is truncated."
	case errors.Is(err, errUnsupported):
		reason, msg = "unsupported", "The "+strings.ToUpper(string(f))+" encoding is not supported."
	case errors.Is(err, errMalformed):
		reason, msg = "malformed", "The "+strings.ToUpper(string(f))+" header is malformed."
	default:
		return Media{}, fault.Wrap(op, err)
	}
	if f == MP3 && errors.Is(err, errMalformed) {
		// A stray sync pattern is not enough to call it MP3.
		return Media{}, fault.Invalid(op, "file", "The file is not WAV, FLAC or MP3 audio.").With("detected", Unknown)
	}
	return Media{}, &fault.Error{Op: op, Code: fault.InvalidInput, Message: msg, Err: err,
		Details: map[string]any{"field": "file", "detected": string(f), "reason": reason}}
}

// errUnsupported marks a recognised format in an encoding the platform does not take.
var errUnsupported = errors.New("unsupported")

// readAt reads exactly len(b) bytes at off, or reports errTruncated.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return errTruncated
	}
	return fmt.Errorf("read at %d: %w", off, err)
}

// sniffWAV walks the RIFF chunks to fmt and data.
func sniffWAV(r io.ReaderAt, size int64) (Media, error) {
	var m Media
	m.Format = WAV
	var haveFmt bool
	var blockAlign int
	off := int64(12)
	hdr := make([]byte, 8)
	for range maxWAVChunks {
		if off+8 > size {
			return Media{}, fmt.Errorf("no data chunk: %w", errTruncated)
		}
		if err := readAt(r, hdr, off); err != nil {
			return Media{}, err
		}
		id, n := string(hdr[:4]), int64(binary.LittleEndian.Uint32(hdr[4:]))
		body := off + 8
		switch id {
		case "fmt ":
			if n < 16 {
				return Media{}, fmt.Errorf("fmt chunk of %d bytes: %w", n, errMalformed)
			}
			b := make([]byte, min(n, 40))
			if err := readAt(r, b, body); err != nil {
				return Media{}, err
			}
			tag := binary.LittleEndian.Uint16(b[0:])
			m.Channels = int(binary.LittleEndian.Uint16(b[2:]))
			m.SampleRate = int(binary.LittleEndian.Uint32(b[4:]))
			blockAlign = int(binary.LittleEndian.Uint16(b[12:]))
			m.BitDepth = int(binary.LittleEndian.Uint16(b[14:]))
			if tag == 0xFFFE { // WAVE_FORMAT_EXTENSIBLE: the subformat GUID starts with the tag
				if len(b) < 40 {
					return Media{}, fmt.Errorf("extensible fmt chunk of %d bytes: %w", n, errMalformed)
				}
				tag = binary.LittleEndian.Uint16(b[24:])
			}
			switch {
			case tag == 1 && (m.BitDepth == 8 || m.BitDepth == 16 || m.BitDepth == 24 || m.BitDepth == 32):
			case tag == 3 && m.BitDepth == 32:
				m.Float = true
			default:
				return Media{}, fmt.Errorf("format tag %#x with %d bits: %w", tag, m.BitDepth, errUnsupported)
			}
			if m.Channels < 1 || m.SampleRate < 1 || m.SampleRate > 768000 || blockAlign != m.Channels*m.BitDepth/8 {
				return Media{}, fmt.Errorf("channels %d, rate %d, block align %d: %w", m.Channels, m.SampleRate, blockAlign, errMalformed)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Media{}, fmt.Errorf("data chunk before fmt: %w", errMalformed)
			}
			if body+n > size {
				return Media{}, fmt.Errorf("data chunk declares %d bytes, %d present: %w", n, size-body, errTruncated)
			}
			frames := n / int64(blockAlign)
			m.DurationMs, m.HasDuration = frames*1000/int64(m.SampleRate), true
			return m, nil
		}
		off = body + n + n&1 // chunks are padded to an even length
	}
	return Media{}, fmt.Errorf("more than %d chunks before data: %w", maxWAVChunks, errMalformed)
}

// sniffFLAC reads STREAMINFO, walks the metadata blocks and checks the first
// frame's sync code.
func sniffFLAC(r io.ReaderAt, size int64) (Media, error) {
	m := Media{Format: FLAC}
	off := int64(4)
	hdr := make([]byte, 4)
	for i := 0; i < maxFLACBlocks; i++ {
		if err := readAt(r, hdr, off); err != nil {
			return Media{}, err
		}
		last, typ := hdr[0]&0x80 != 0, hdr[0]&0x7F
		n := int64(hdr[1])<<16 | int64(hdr[2])<<8 | int64(hdr[3])
		if i == 0 {
			if typ != 0 || n != 34 {
				return Media{}, fmt.Errorf("first block type %d, %d bytes: %w", typ, n, errMalformed)
			}
			si := make([]byte, 34)
			if err := readAt(r, si, off+4); err != nil {
				return Media{}, err
			}
			minBlock := int(binary.BigEndian.Uint16(si[0:]))
			// Bits 80-143: sample rate (20), channels-1 (3), bits-1 (5), total samples (36).
			v := binary.BigEndian.Uint64(si[10:18])
			m.SampleRate = int(v >> 44)
			m.Channels = int(v>>41&0x7) + 1
			m.BitDepth = int(v>>36&0x1F) + 1
			total := int64(v & (1<<36 - 1))
			if minBlock < 16 || m.SampleRate == 0 || m.SampleRate > 655350 || m.BitDepth < 4 {
				return Media{}, fmt.Errorf("STREAMINFO block %d, rate %d, bits %d: %w", minBlock, m.SampleRate, m.BitDepth, errMalformed)
			}
			if total > 0 {
				m.DurationMs, m.HasDuration = total*1000/int64(m.SampleRate), true
			}
		} else if typ == 127 {
			return Media{}, fmt.Errorf("block type 127: %w", errMalformed)
		}
		off += 4 + n
		if off > size {
			return Media{}, fmt.Errorf("metadata block runs past the end: %w", errTruncated)
		}
		if last {
			sync := make([]byte, 2)
			if err := readAt(r, sync, off); err != nil {
				return Media{}, fmt.Errorf("no audio frame: %w", err)
			}
			if sync[0] != 0xFF || sync[1]&0xFE != 0xF8 {
				return Media{}, fmt.Errorf("no frame sync after metadata: %w", errMalformed)
			}
			return m, nil
		}
	}
	return Media{}, fmt.Errorf("more than %d metadata blocks: %w", maxFLACBlocks, errMalformed)
}

// mp3Frame is a parsed MPEG audio frame header.
type mp3Frame struct {
	version     int // 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5)
	layer       int
	crc         bool
	bitrateKbps int
	sampleRate  int
	padding     bool
	mono        bool
}

// length returns the frame's length in bytes (layer III).
func (f mp3Frame) length() int64 {
	coef := int64(144)
	if f.version != 1 {
		coef = 72
	}
	n := coef * int64(f.bitrateKbps) * 1000 / int64(f.sampleRate)
	if f.padding {
		n++
	}
	return n
}

// samples returns the samples per frame (layer III).
func (f mp3Frame) samples() int64 {
	if f.version == 1 {
		return 1152
	}
	return 576
}

// mp3Sync reports whether b starts with an MPEG audio frame sync.
func mp3Sync(b []byte) bool { return len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 }

var (
	mp3Bitrates = map[int][16]int{ // layer III, by version; index 0 is free format, 15 bad
		1:  {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, -1},
		2:  {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
		25: {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, -1},
	}
	mp3Rates = map[int][3]int{1: {44100, 48000, 32000}, 2: {22050, 24000, 16000}, 25: {11025, 12000, 8000}}
)

// parseMP3Frame parses a 4-byte frame header.
func parseMP3Frame(b []byte) (mp3Frame, error) {
	if !mp3Sync(b) {
		return mp3Frame{}, fmt.Errorf("no frame sync: %w", errMalformed)
	}
	var f mp3Frame
	switch b[1] >> 3 & 0x3 {
	case 0:
		f.version = 25
	case 2:
		f.version = 2
	case 3:
		f.version = 1
	default:
		return mp3Frame{}, fmt.Errorf("reserved version: %w", errMalformed)
	}
	f.layer = 4 - int(b[1]>>1&0x3)
	if f.layer == 4 {
		return mp3Frame{}, fmt.Errorf("reserved layer: %w", errMalformed)
	}
	f.crc = b[1]&1 == 0
	bi, si := b[2]>>4, b[2]>>2&0x3
	if bi == 15 || si == 3 {
		return mp3Frame{}, fmt.Errorf("bad bitrate or sample rate index: %w", errMalformed)
	}
	f.bitrateKbps = mp3Bitrates[f.version][bi]
	f.sampleRate = mp3Rates[f.version][si]
	f.padding = b[2]&0x2 != 0
	f.mono = b[3]>>6 == 3
	if f.layer != 3 {
		return f, fmt.Errorf("MPEG layer %d: %w", f.layer, errUnsupported)
	}
	if f.bitrateKbps == 0 {
		return f, fmt.Errorf("free-format bitrate: %w", errUnsupported)
	}
	return f, nil
}

// sniffMP3 skips an ID3v2 tag and zero padding, parses the first frame,
// confirms the second, and reads the frame count of a Xing, Info or VBRI
// header when the first frame carries one.
func sniffMP3(r io.ReaderAt, size int64) (Media, error) {
	m := Media{Format: MP3}
	off := int64(0)
	id3 := make([]byte, 10)
	if err := readAt(r, id3[:3], 0); err == nil && string(id3[:3]) == "ID3" {
		if err := readAt(r, id3, 0); err != nil {
			return Media{}, err
		}
		for _, c := range id3[6:10] {
			if c&0x80 != 0 {
				return Media{}, fmt.Errorf("ID3v2 size not syncsafe: %w", errMalformed)
			}
		}
		n := int64(id3[6])<<21 | int64(id3[7])<<14 | int64(id3[8])<<7 | int64(id3[9])
		off = 10 + n
		if id3[5]&0x10 != 0 {
			off += 10 // footer
		}
		if off >= size {
			return Media{}, fmt.Errorf("ID3v2 tag of %d bytes in a %d-byte file: %w", off, size, errTruncated)
		}
		// Skip zero padding a tagger left after the tag.
		buf := make([]byte, 1)
		for pad := 0; pad < maxMP3Padding && off < size; pad++ {
			if err := readAt(r, buf, off); err != nil {
				return Media{}, err
			}
			if buf[0] != 0 {
				break
			}
			off++
		}
	}
	hdr := make([]byte, 4)
	if err := readAt(r, hdr, off); err != nil {
		return Media{}, err
	}
	f, err := parseMP3Frame(hdr)
	if err != nil {
		return Media{}, err
	}
	flen := f.length()
	if off+flen > size {
		return Media{}, fmt.Errorf("first frame of %d bytes cut short: %w", flen, errTruncated)
	}
	if off+flen+4 <= size {
		if err := readAt(r, hdr, off+flen); err != nil {
			return Media{}, err
		}
		g, err := parseMP3Frame(hdr)
		if err != nil || g.version != f.version || g.sampleRate != f.sampleRate {
			if !bytes.Equal(hdr[:3], []byte("TAG")) { // an ID3v1 tag may follow a single frame
				return Media{}, fmt.Errorf("second frame does not follow the first: %w", errMalformed)
			}
		}
	}
	m.SampleRate, m.BitrateKbps = f.sampleRate, f.bitrateKbps
	m.Channels = 2
	if f.mono {
		m.Channels = 1
	}
	frames, ok, err := mp3FrameCount(r, off, f)
	if err != nil {
		return Media{}, err
	}
	if ok {
		m.DurationMs, m.HasDuration = frames*f.samples()*1000/int64(f.sampleRate), true
		return m, nil
	}
	// Constant bitrate assumed: estimate from the audio bytes, without a
	// trailing ID3v1 tag.
	audio := size - off
	tag := make([]byte, 3)
	if size-off >= 128 {
		if err := readAt(r, tag, size-128); err == nil && string(tag) == "TAG" {
			audio -= 128
		}
	}
	m.DurationMs, m.HasDuration, m.DurationEstimated = audio*8/int64(f.bitrateKbps), true, true
	return m, nil
}

// mp3FrameCount reads the frame count of a Xing/Info or VBRI header in the
// first frame at off.
func mp3FrameCount(r io.ReaderAt, off int64, f mp3Frame) (int64, bool, error) {
	side := int64(32)
	switch {
	case f.version == 1 && f.mono:
		side = 17
	case f.version != 1 && !f.mono:
		side = 17
	case f.version != 1 && f.mono:
		side = 9
	}
	xing := off + 4 + side
	if f.crc {
		xing += 2
	}
	b := make([]byte, 12)
	if xing+12 <= off+f.length() {
		if err := readAt(r, b, xing); err != nil {
			return 0, false, err
		}
		if tag := string(b[:4]); tag == "Xing" || tag == "Info" {
			if binary.BigEndian.Uint32(b[4:])&1 == 0 {
				return 0, false, nil // no frame count: estimate
			}
			return int64(binary.BigEndian.Uint32(b[8:])), true, nil
		}
	}
	vbri := off + 4 + 32
	b = make([]byte, 18)
	if vbri+18 <= off+f.length() {
		if err := readAt(r, b, vbri); err != nil {
			return 0, false, err
		}
		if string(b[:4]) == "VBRI" {
			return int64(binary.BigEndian.Uint32(b[14:])), true, nil
		}
	}
	return 0, false, nil
}

// checkDeclared compares what the client declared (a media type, else the
// file name's extension) with what the content is. A declared media type
// that is neither an accepted audio type nor generic
// (application/octet-stream, empty) is UNSUPPORTED_MEDIA_TYPE; a declared
// format other than the detected one is INVALID_INPUT with details.field
// "file", details.declared and details.detected.
func checkDeclared(declaredType, filename string, detected Format) error {
	const op = "asset.checkDeclared"
	want, ok := Format(""), false
	if mt, _, err := mime.ParseMediaType(declaredType); declaredType != "" && (err != nil || mt != "application/octet-stream") {
		if want, ok = FormatOfMediaType(declaredType); !ok {
			return fault.E(op, fault.UnsupportedMediaType, "The file's content type is not an accepted audio type.").
				With("contentType", declaredType).With("accepted", UploadMediaTypes())
		}
	}
	if !ok {
		want, ok = formatOfFilename(filename)
	}
	if ok && want != detected {
		return fault.Invalid(op, "file", "The file is not what it claims to be.").
			With("declared", want.MediaType()).With("detected", detected.MediaType())
	}
	return nil
}

// SanitizeFilename returns the base name of a client-sent file name with
// control characters, path separators and invalid UTF-8 removed, trimmed,
// and cut to at most 255 bytes on a character boundary.
func SanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0) || r == 0x2028 || r == 0x2029 || r == 0xFEFF {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "." || name == ".." {
		return ""
	}
	for len(name) > 255 {
		_, size := lastRune(name)
		name = name[:len(name)-size]
	}
	return name
}

// lastRune returns the last rune of s and its size.
func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 1
}
