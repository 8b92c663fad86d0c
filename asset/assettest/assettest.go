// Package assettest generates small, valid audio files for tests: WAV
// (whole, or streamed at any length without holding it in memory), FLAC
// headers with STREAMINFO and a frame sync, decodable FLAC streams of
// constant frames of any length (ConstantFLAC), and MP3 frames with valid MPEG
// headers, optionally behind an ID3v2 tag and with a Xing frame count. The
// bytes are synthetic (a tone or silence); only the headers are exact.
package assettest

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
)

// WAVHeader returns the 44-byte header of a canonical WAV file (RIFF, a fmt
// chunk and the data chunk header) declaring dataBytes of samples. float
// selects IEEE float (format tag 3) instead of PCM.
func WAVHeader(rate, channels, bits int, float bool, dataBytes int64) []byte {
	var b bytes.Buffer
	tag := uint16(1)
	if float {
		tag = 3
	}
	align := channels * bits / 8
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+dataBytes))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, binary.LittleEndian, uint32(16))
	binary.Write(&b, binary.LittleEndian, tag)
	binary.Write(&b, binary.LittleEndian, uint16(channels))
	binary.Write(&b, binary.LittleEndian, uint32(rate))
	binary.Write(&b, binary.LittleEndian, uint32(rate*align))
	binary.Write(&b, binary.LittleEndian, uint16(align))
	binary.Write(&b, binary.LittleEndian, uint16(bits))
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(dataBytes))
	return b.Bytes()
}

// WAV returns a whole 16-bit PCM WAV file of frames sample frames.
func WAV(rate, channels, frames int) []byte {
	r := WAVReader(rate, channels, 16, int64(frames*channels*2))
	b, _ := io.ReadAll(r)
	return b
}

// WAVReader streams a WAV file with dataBytes of sample data (a 440 Hz tone
// for 16-bit PCM, a repeating pattern otherwise), generated as it is read:
// memory does not grow with the length.
func WAVReader(rate, channels, bits int, dataBytes int64) io.Reader {
	return io.MultiReader(bytes.NewReader(WAVHeader(rate, channels, bits, false, dataBytes)),
		&tone{left: dataBytes, rate: rate, channels: channels, bits: bits})
}

// tone generates sample bytes.
type tone struct {
	left     int64
	n        int64
	rate     int
	channels int
	bits     int
}

func (t *tone) Read(p []byte) (int, error) {
	if t.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > t.left {
		p = p[:t.left]
	}
	for i := range p {
		pos := t.n + int64(i)
		if t.bits == 16 {
			frame := pos / int64(2*t.channels)
			v := int16(8000 * math.Sin(2*math.Pi*440*float64(frame)/float64(t.rate)))
			if pos%2 == 0 {
				p[i] = byte(v)
			} else {
				p[i] = byte(uint16(v) >> 8)
			}
			continue
		}
		p[i] = byte(pos * 31)
	}
	t.n += int64(len(p))
	t.left -= int64(len(p))
	return len(p), nil
}

// FLAC returns a FLAC file: the fLaC marker, a STREAMINFO block (the last
// metadata block) and a few bytes starting with a frame sync code.
// totalSamples zero means unknown.
func FLAC(rate, channels, bits int, totalSamples int64) []byte {
	var b bytes.Buffer
	b.WriteString("fLaC")
	b.Write([]byte{0x80, 0, 0, 34}) // last block, STREAMINFO, 34 bytes
	binary.Write(&b, binary.BigEndian, uint16(4096))
	binary.Write(&b, binary.BigEndian, uint16(4096))
	b.Write([]byte{0, 0, 0, 0, 0, 0}) // min and max frame size unknown
	v := uint64(rate)<<44 | uint64(channels-1)<<41 | uint64(bits-1)<<36 | uint64(totalSamples)&(1<<36-1)
	binary.Write(&b, binary.BigEndian, v)
	b.Write(make([]byte, 16)) // MD5 unset
	b.Write([]byte{0xFF, 0xF8, 0x69, 0x08, 0x00, 0x00, 0x00, 0x00})
	return b.Bytes()
}

// ConstantFLAC returns a decodable FLAC stream of frames sample frames,
// every sample of every channel equal to value (a constant of bits-bit
// PCM, bits 8, 16 or 24: 0 is silence), in frames of block samples (16..65535) made of
// constant subframes, so an hour of audio takes a few kilobytes. The
// STREAMINFO block declares declared total samples, which may differ from
// frames (a lying header; zero means unknown), and leaves the MD5 unset.
func ConstantFLAC(rate, channels, bits, block int, frames, declared int64, value int) []byte {
	var b bytes.Buffer
	b.WriteString("fLaC")
	b.Write([]byte{0x80, 0, 0, 34})
	binary.Write(&b, binary.BigEndian, uint16(block))
	binary.Write(&b, binary.BigEndian, uint16(block))
	b.Write([]byte{0, 0, 0, 0, 0, 0})
	v := uint64(rate)<<44 | uint64(channels-1)<<41 | uint64(bits-1)<<36 | uint64(declared)&(1<<36-1)
	binary.Write(&b, binary.BigEndian, v)
	b.Write(make([]byte, 16))
	for num, left := uint64(0), frames; left > 0; num++ {
		n := min(left, int64(block))
		left -= n
		// Sync and fixed blocking; block size from the 16 bits after the
		// frame number (0111), sample rate from STREAMINFO; independent
		// channels; the sample size coded (8, 16 or 24 bits).
		f := []byte{0xFF, 0xF8, 0x70, byte(channels-1)<<4 | map[int]byte{8: 1, 16: 4, 24: 6}[bits]<<1}
		f = append(f, utf8Number(num)...)
		f = binary.BigEndian.AppendUint16(f, uint16(n-1))
		f = append(f, crc8(f))
		var bw bitWriter
		for range channels {
			bw.write(0, 8) // padding, SUBFRAME_CONSTANT, no wasted bits
			bw.write(uint64(value)&(1<<bits-1), bits)
		}
		f = append(f, bw.bytes()...)
		f = binary.BigEndian.AppendUint16(f, crc16(f))
		b.Write(f)
	}
	return b.Bytes()
}

// utf8Number codes a frame number as FLAC does (UTF-8's scheme, up to 36 bits).
func utf8Number(n uint64) []byte {
	if n < 0x80 {
		return []byte{byte(n)}
	}
	extra := 1
	for n >= 1<<(6*extra+6-extra) {
		extra++
	}
	out := make([]byte, extra+1)
	for i := extra; i > 0; i-- {
		out[i] = 0x80 | byte(n&0x3F)
		n >>= 6
	}
	out[0] = byte(0xFF<<(7-extra)) | byte(n)
	return out
}

// bitWriter packs bits MSB first, padding the last byte with zeros.
type bitWriter struct {
	buf  []byte
	acc  uint64
	bits int
}

func (w *bitWriter) write(v uint64, n int) {
	for i := n - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | v>>uint(i)&1
		if w.bits++; w.bits == 8 {
			w.buf, w.acc, w.bits = append(w.buf, byte(w.acc)), 0, 0
		}
	}
}

func (w *bitWriter) bytes() []byte {
	if w.bits > 0 {
		return append(w.buf, byte(w.acc<<uint(8-w.bits)))
	}
	return w.buf
}

// crc8 is FLAC's frame header CRC (polynomial x^8 + x^2 + x + 1).
func crc8(p []byte) byte {
	var c byte
	for _, x := range p {
		c ^= x
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// crc16 is FLAC's frame CRC (polynomial x^16 + x^15 + x^2 + 1).
func crc16(p []byte) uint16 {
	var c uint16
	for _, x := range p {
		c ^= uint16(x) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// MP3Options shape an MP3 file.
type MP3Options struct {
	// Version is 1 (MPEG-1, the default), 2 or 25 (MPEG-2.5).
	Version int
	// BitrateKbps defaults to 128; SampleRate to 44100 (MPEG-1).
	BitrateKbps int
	SampleRate  int
	// Mono selects one channel instead of stereo.
	Mono bool
	// Frames is how many frames to write (default 10).
	Frames int
	// ID3 prepends an ID3v2.4 tag of this many payload bytes (0: none).
	ID3 int
	// Xing writes a Xing header with the frame count into the first frame.
	Xing bool
}

var (
	bitrateIndex = map[int]map[int]byte{
		1: {32: 1, 40: 2, 48: 3, 56: 4, 64: 5, 80: 6, 96: 7, 112: 8, 128: 9, 160: 10, 192: 11, 224: 12, 256: 13, 320: 14},
		2: {8: 1, 16: 2, 24: 3, 32: 4, 40: 5, 48: 6, 56: 7, 64: 8, 80: 9, 96: 10, 112: 11, 128: 12, 144: 13, 160: 14},
	}
	rateIndex = map[int]byte{44100: 0, 48000: 1, 32000: 2, 22050: 0, 24000: 1, 16000: 2, 11025: 0, 12000: 1, 8000: 2}
)

// MP3 returns an MPEG audio layer III file of silent frames with valid
// headers.
func MP3(o MP3Options) []byte {
	if o.Version == 0 {
		o.Version = 1
	}
	if o.BitrateKbps == 0 {
		o.BitrateKbps = 128
	}
	if o.SampleRate == 0 {
		o.SampleRate = map[int]int{1: 44100, 2: 22050, 25: 11025}[o.Version]
	}
	if o.Frames == 0 {
		o.Frames = 10
	}
	var b bytes.Buffer
	if o.ID3 > 0 {
		n := o.ID3
		b.WriteString("ID3")
		b.Write([]byte{4, 0, 0, byte(n >> 21 & 0x7F), byte(n >> 14 & 0x7F), byte(n >> 7 & 0x7F), byte(n & 0x7F)})
		b.Write(make([]byte, n))
	}
	verBits := map[int]byte{1: 3, 2: 2, 25: 0}[o.Version]
	bi := bitrateIndex[min(o.Version, 2)][o.BitrateKbps]
	mode := byte(0) // stereo
	if o.Mono {
		mode = 3
	}
	coef := 144
	if o.Version != 1 {
		coef = 72
	}
	flen := coef * o.BitrateKbps * 1000 / o.SampleRate
	for i := 0; i < o.Frames; i++ {
		frame := make([]byte, flen)
		frame[0] = 0xFF
		frame[1] = 0xE0 | verBits<<3 | 1<<1 | 1 // layer III, no CRC
		frame[2] = bi<<4 | rateIndex[o.SampleRate]<<2
		frame[3] = mode << 6
		if i == 0 && o.Xing {
			side := 32
			switch {
			case o.Version == 1 && o.Mono, o.Version != 1 && !o.Mono:
				side = 17
			case o.Version != 1 && o.Mono:
				side = 9
			}
			copy(frame[4+side:], "Xing")
			binary.BigEndian.PutUint32(frame[4+side+4:], 1)
			binary.BigEndian.PutUint32(frame[4+side+8:], uint32(o.Frames-1))
		}
		b.Write(frame)
	}
	return b.Bytes()
}
