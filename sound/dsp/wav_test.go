package dsp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// codecMemFile is an in-memory io.WriteSeeker.
type codecMemFile struct {
	b   []byte
	pos int
}

func (m *codecMemFile) Write(p []byte) (int, error) {
	if end := m.pos + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	copy(m.b[m.pos:], p)
	m.pos += len(p)
	return len(p), nil
}

func (m *codecMemFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += int64(m.pos)
	case io.SeekEnd:
		off += int64(len(m.b))
	}
	m.pos = int(off)
	return off, nil
}

// codecOnlyWriter hides every method but Write.
type codecOnlyWriter struct{ w io.Writer }

func (o codecOnlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// codecGridBlock returns random samples that lie on the grid of bits-bit
// integers (float32 values when float), including both extremes.
func codecGridBlock(channels, frames, bits int, float bool, seed uint64) Block {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := NewBlock(channels, frames)
	scale := float64(int64(1) << (bits - 1))
	for c := range b {
		for i := range b[c] {
			switch {
			case float:
				b[c][i] = float64(float32(rng.Float64()*2 - 1))
			default:
				b[c][i] = float64(rng.Int64N(int64(2*scale))-int64(scale)) / scale
			}
		}
		if !float {
			b[c][0], b[c][1] = -1, (scale-1)/scale
		}
	}
	return b
}

// codecEqual reports the first difference between two blocks.
func codecEqual(t *testing.T, got, want Block) {
	t.Helper()
	if len(got) != len(want) || got.Frames() != want.Frames() {
		t.Fatalf("got %d channels x %d frames, want %d x %d", len(got), got.Frames(), len(want), want.Frames())
	}
	for c := range want {
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				t.Fatalf("channel %d frame %d: got %v, want %v", c, i, got[c][i], want[c][i])
			}
		}
	}
}

// codecWriteBlocks writes b in uneven pieces.
func codecWriteBlocks(t *testing.T, write func(Block) error, b Block) {
	t.Helper()
	for i, step := 0, 1; i < b.Frames(); step = step*3 + 7 {
		n := min(step, b.Frames()-i)
		part := make(Block, len(b))
		for c := range b {
			part[c] = b[c][i : i+n]
		}
		if err := write(part); err != nil {
			t.Fatal(err)
		}
		i += n
	}
}

func TestWAVRoundTripIsBitExact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		channels int
		bits     int
		float    bool
		seekable bool
	}{
		{"16-bit mono", 1, 16, false, true},
		{"16-bit stereo", 2, 16, false, true},
		{"24-bit mono odd length", 1, 24, false, true},
		{"24-bit stereo", 2, 24, false, true},
		{"32-bit PCM stereo", 2, 32, false, true},
		{"32-bit float stereo", 2, 32, true, true},
		{"24-bit 6 channels extensible", 6, 24, false, true},
		{"float 8 channels extensible", 8, 32, true, true},
		{"16-bit stereo unseekable", 2, 16, false, false},
		{"24-bit mono unseekable", 1, 24, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Format{SampleRate: 48000, Channels: tc.channels, BitDepth: tc.bits, Float: tc.float}
			src := codecGridBlock(tc.channels, 5001, tc.bits, tc.float, 7)
			var out io.Writer
			mem := &codecMemFile{}
			buf := &bytes.Buffer{}
			if tc.seekable {
				out = mem
			} else {
				out = codecOnlyWriter{buf}
			}
			w, err := NewWAVWriter(out, f)
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
				if riff := binary.LittleEndian.Uint32(data[4:]); int(riff) != len(data)-8 {
					t.Errorf("RIFF size %d for %d bytes", riff, len(data))
				}
			}
			if len(data)%2 != 0 {
				t.Errorf("odd file length %d", len(data))
			}
			r, err := NewWAVReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != f {
				t.Fatalf("format %+v, want %+v", r.Format(), f)
			}
			got, err := ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			codecEqual(t, got, src)
		})
	}
}

// codecChunk is a RIFF chunk for codecWAV.
type codecChunk struct {
	id   string
	body []byte
	size uint32 // declared size; 0 means len(body)
}

// codecFmt builds a fmt chunk body; sub != 0 makes it extensible with that
// sub-format tag.
func codecFmt(tag uint16, channels, rate, bits int, sub uint16) []byte {
	le := binary.LittleEndian
	align := channels * bits / 8
	b := le.AppendUint16(nil, tag)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*align))
	b = le.AppendUint16(b, uint16(align))
	b = le.AppendUint16(b, uint16(bits))
	if sub != 0 {
		b = le.AppendUint16(b, 22)
		b = le.AppendUint16(b, uint16(bits))
		b = le.AppendUint32(b, 3)
		b = le.AppendUint16(b, sub)
		b = append(b, wavGUIDTail...)
	}
	return b
}

// codecWAV assembles a RIFF/WAVE stream from chunks, padding odd ones.
func codecWAV(chunks ...codecChunk) []byte {
	le := binary.LittleEndian
	var body []byte
	for _, c := range chunks {
		size := c.size
		if size == 0 {
			size = uint32(len(c.body))
		}
		body = append(body, c.id...)
		body = le.AppendUint32(body, size)
		body = append(body, c.body...)
		if len(c.body)%2 == 1 && c.id != "data" {
			body = append(body, 0)
		}
	}
	out := append([]byte("RIFF"), le.AppendUint32(nil, uint32(4+len(body)))...)
	return append(append(out, "WAVE"...), body...)
}

func TestWAVReaderLayouts(t *testing.T) {
	le := binary.LittleEndian
	pcm16 := le.AppendUint16(le.AppendUint16(nil, 0x4000), 0xC000) // 0.5, -0.5
	pcm24 := []byte{0, 0, 0x40, 0, 0, 0xC0}
	float := le.AppendUint32(le.AppendUint32(nil, math.Float32bits(0.5)), math.Float32bits(-0.5))
	list := codecChunk{id: "LIST", body: []byte("INFOISFT\x03\x00\x00\x00ab\x00")} // odd size
	for _, tc := range []struct {
		name string
		wav  []byte
		want Format
	}{
		{"PCM 16 with odd LIST chunks around fmt", codecWAV(list, codecChunk{id: "fmt ", body: codecFmt(1, 2, 44100, 16, 0)}, list, codecChunk{id: "data", body: pcm16}),
			Format{SampleRate: 44100, Channels: 2, BitDepth: 16}},
		{"extensible PCM 24", codecWAV(codecChunk{id: "fmt ", body: codecFmt(0xFFFE, 2, 48000, 24, 1)}, codecChunk{id: "data", body: pcm24}),
			Format{SampleRate: 48000, Channels: 2, BitDepth: 24}},
		{"float with an 18-byte fmt and a fact chunk", codecWAV(codecChunk{id: "fmt ", body: append(codecFmt(3, 2, 96000, 32, 0), 0, 0)}, codecChunk{id: "fact", body: []byte{1, 0, 0, 0}}, codecChunk{id: "data", body: float}),
			Format{SampleRate: 96000, Channels: 2, BitDepth: 32, Float: true}},
		{"extensible float", codecWAV(codecChunk{id: "fmt ", body: codecFmt(0xFFFE, 2, 48000, 32, 3)}, codecChunk{id: "data", body: float}),
			Format{SampleRate: 48000, Channels: 2, BitDepth: 32, Float: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewWAVReader(bytes.NewReader(tc.wav))
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != tc.want {
				t.Fatalf("format %+v, want %+v", r.Format(), tc.want)
			}
			got, err := ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			codecEqual(t, got, Block{{0.5}, {-0.5}})
		})
	}
}

func TestWAVReaderErrors(t *testing.T) {
	fmt16 := codecChunk{id: "fmt ", body: codecFmt(1, 2, 48000, 16, 0)}
	frames := make([]byte, 40)
	for _, tc := range []struct {
		name string
		wav  []byte
		want error
	}{
		{"no input", nil, ErrEmpty},
		{"not RIFF", []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"), ErrCorrupt},
		{"RIFF but not WAVE", []byte("RIFF\x04\x00\x00\x00AVI "), ErrCorrupt},
		{"truncated RIFF header", []byte("RIFF\x04\x00"), ErrCorrupt},
		{"RF64", []byte("RF64\xff\xff\xff\xffWAVE"), ErrUnsupported},
		{"no chunks", codecWAV(), ErrCorrupt},
		{"no data chunk", codecWAV(fmt16), ErrCorrupt},
		{"data before fmt", codecWAV(codecChunk{id: "data", body: frames}, fmt16), ErrCorrupt},
		{"truncated chunk header", append(codecWAV(fmt16), "da"...), ErrCorrupt},
		{"truncated LIST chunk", codecWAV(fmt16, codecChunk{id: "LIST", body: []byte("INFO"), size: 100}), ErrCorrupt},
		{"short fmt chunk", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 2, 48000, 16, 0)[:14]}, codecChunk{id: "data", body: frames}), ErrCorrupt},
		{"truncated fmt chunk", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 2, 48000, 16, 0), size: 40}), ErrCorrupt},
		{"zero channels", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 0, 48000, 16, 0)}, codecChunk{id: "data", body: frames}), ErrCorrupt},
		{"zero rate", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 2, 0, 16, 0)}, codecChunk{id: "data", body: frames}), ErrCorrupt},
		{"wrong block align", codecWAV(codecChunk{id: "fmt ", body: func() []byte { b := codecFmt(1, 2, 48000, 16, 0); b[12] = 3; return b }()}, codecChunk{id: "data", body: frames}), ErrCorrupt},
		{"zero-length data", codecWAV(fmt16, codecChunk{id: "data"}), ErrEmpty},
		{"truncated data", codecWAV(fmt16, codecChunk{id: "data", body: frames, size: 400}), ErrCorrupt},
		{"partial last frame", codecWAV(fmt16, codecChunk{id: "data", body: frames[:38]}), ErrCorrupt},
		{"partial last frame, unknown size", codecWAV(fmt16, codecChunk{id: "data", body: frames[:38], size: wavUnknownSize}), ErrCorrupt},
		{"8-bit PCM", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 1, 8000, 8, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"12-bit PCM", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 1, 8000, 12, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"A-law", codecWAV(codecChunk{id: "fmt ", body: codecFmt(6, 1, 8000, 8, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"mu-law", codecWAV(codecChunk{id: "fmt ", body: codecFmt(7, 1, 8000, 8, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"MS ADPCM", codecWAV(codecChunk{id: "fmt ", body: codecFmt(2, 1, 8000, 4, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"IMA ADPCM", codecWAV(codecChunk{id: "fmt ", body: codecFmt(0x11, 1, 8000, 4, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"extensible A-law", codecWAV(codecChunk{id: "fmt ", body: codecFmt(0xFFFE, 1, 8000, 8, 6)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"64-bit float", codecWAV(codecChunk{id: "fmt ", body: codecFmt(3, 1, 48000, 64, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
		{"9 channels", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 9, 48000, 16, 0)}, codecChunk{id: "data", body: frames[:36]}), ErrUnsupported},
		{"rate out of range", codecWAV(codecChunk{id: "fmt ", body: codecFmt(1, 2, 100, 16, 0)}, codecChunk{id: "data", body: frames}), ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewWAVReader(bytes.NewReader(tc.wav))
			if err == nil {
				_, err = ReadAll(r)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestWAVReaderYieldsWholeFramesBeforeTruncation(t *testing.T) {
	fmt16 := codecChunk{id: "fmt ", body: codecFmt(1, 1, 48000, 16, 0)}
	r, err := NewWAVReader(bytes.NewReader(codecWAV(fmt16, codecChunk{id: "data", body: make([]byte, 10), size: 20})))
	if err != nil {
		t.Fatal(err)
	}
	buf := NewBlock(1, 100)
	if n, err := r.Read(buf); n != 5 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("second read: %d, %v", n, err)
	}
}

func TestWAVWriterQuantises(t *testing.T) {
	f := Format{SampleRate: 48000, Channels: 1, BitDepth: 16}
	const lsb = 1.0 / (1 << 15)
	src := NewBlock(1, 4000)
	for i := range src[0] {
		src[0][i] = 0.3 * lsb
	}
	src[0][0], src[0][1], src[0][2], src[0][3] = 2, -2, math.NaN(), 1
	decode := func(dither *Ditherer) Block {
		mem := &codecMemFile{}
		w, err := NewWAVWriter(mem, f)
		if err != nil {
			t.Fatal(err)
		}
		w.SetDither(dither)
		if err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewWAVReader(bytes.NewReader(mem.b))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, d := range []*Ditherer{nil, NewDitherer(1)} {
		got := decode(d)
		if got[0][0] != 1-lsb || got[0][1] != -1 || got[0][2] != 0 || got[0][3] != 1-lsb {
			t.Errorf("dither %v: clamping gave %v", d != nil, got[0][:4])
		}
		mean := 0.0
		for _, v := range got[0][4:] {
			mean += v / lsb
		}
		mean /= float64(len(got[0]) - 4)
		switch {
		case d == nil && mean != 0:
			t.Errorf("rounding: mean %.3f LSB, want 0", mean)
		case d != nil && math.Abs(mean-0.3) > 0.05:
			t.Errorf("dither: mean %.3f LSB, want 0.3 (dither keeps sub-LSB levels)", mean)
		}
	}
}

func TestWAVWriterRejects(t *testing.T) {
	for _, f := range []Format{
		{SampleRate: 48000, Channels: 2, BitDepth: 8},
		{SampleRate: 48000, Channels: 2, BitDepth: 16, Float: true},
		{SampleRate: 48000, Channels: 9, BitDepth: 16},
	} {
		if _, err := NewWAVWriter(&bytes.Buffer{}, f); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%+v: %v", f, err)
		}
	}
	w, err := NewWAVWriter(&bytes.Buffer{}, Format{SampleRate: 48000, Channels: 2, BitDepth: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(NewBlock(1, 10)); err == nil {
		t.Error("a mono block went into a stereo file")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(NewBlock(2, 10)); err == nil {
		t.Error("write after Close")
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		head string
		want string
	}{
		{"RIFF\x00\x00\x00\x00WAVEfmt ", "wav"},
		{"fLaC\x00\x00\x00\x22", "flac"},
		{"ID3\x04\x00\x00", "mp3"},
		{"\xFF\xFB\x90\x00", "mp3"},
		{"\xFF\xF3\x64\xC4", "mp3"},
		{"\xFF\xF1\x50\x80", ""}, // ADTS AAC: layer 0
		{"RIFF\x00\x00\x00\x00AVI ", ""},
		{"OggS\x00\x02", ""},
		{"RIF", ""},
		{"", ""},
	} {
		got, ok := Sniff([]byte(tc.head))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Sniff(%q) = %q, %v; want %q", tc.head, got, ok, tc.want)
		}
	}
}

func TestOpen(t *testing.T) {
	f := Format{SampleRate: 44100, Channels: 2, BitDepth: 16}
	src := codecGridBlock(2, 3000, 16, false, 3)
	var wav, fl bytes.Buffer
	ww, err := NewWAVWriter(&wav, f)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := NewFLACWriter(&fl, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []interface {
		Write(Block) error
		Close() error
	}{ww, fw} {
		if err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		data   []byte
		kind   string
		frames int
	}{
		{wav.Bytes(), "wav", 3000},
		{fl.Bytes(), "flac", 3000},
		{codecSilentMP3(3), "mp3", 3 * 1152},
	} {
		r, kind, err := Open(bytes.NewReader(tc.data))
		if err != nil || kind != tc.kind {
			t.Fatalf("%s: Open gave %q, %v", tc.kind, kind, err)
		}
		got, err := ReadAll(r)
		if err != nil || got.Frames() != tc.frames {
			t.Fatalf("%s: %d frames, %v", kind, got.Frames(), err)
		}
		if kind != "mp3" {
			codecEqual(t, got, src)
		}
	}
	if _, _, err := Open(bytes.NewReader(nil)); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := Open(bytes.NewReader([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00"))); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Ogg: %v", err)
	}
	if _, _, err := Open(bytes.NewReader([]byte("RIFF\x04\x00\x00\x00WAVE"))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("WAV without chunks: %v", err)
	}
}
