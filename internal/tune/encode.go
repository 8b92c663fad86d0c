package tune

import "fmt"

// The stream's format: MPEG-1 Layer III, mono, 44.1 kHz, 64 kb/s, no CRC.
const (
	// SampleRate is the sample rate of every encoded piece, in Hz.
	SampleRate = 44100
	// BitrateKbps is the constant bitrate of every encoded piece.
	BitrateKbps = 64
	// FundamentalHz is the spacing of the pitches the encoder can sound:
	// every note is a whole multiple of it (see the package doc).
	FundamentalHz = float64(SampleRate) / 1152

	lines          = 576  // spectral lines of a granule
	granuleSamples = 576  // output samples of a granule
	frameSamples   = 1152 // two granules
	sideInfoBytes  = 17   // MPEG-1 mono
	headerBytes    = 4
	bandsCoded     = 21 // long-block bands that carry a scalefactor
)

// longBandEdges are the first lines of the long-block scalefactor bands at
// 44.1 kHz, and the end.
func longBandEdges() [23]int {
	return [23]int{0, 4, 8, 12, 16, 20, 24, 30, 36, 44, 52, 62, 74, 90, 110, 134, 162, 196, 238, 288, 342, 418, 576}
}

// bandOf returns the long-block scalefactor band of line k.
func bandOf(k int) int {
	e := longBandEdges()
	for b := 1; b < len(e); b++ {
		if k < e[b] {
			return b - 1
		}
	}
	return len(e) - 2
}

// slens are the bit lengths (slen1 for bands 0-10, slen2 for 11-20) of
// each scalefac_compress value of MPEG-1.
func slens() [16][2]int {
	return [16][2]int{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {3, 0}, {1, 1}, {1, 2}, {1, 3},
		{2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {3, 3}, {4, 2}, {4, 3}}
}

// granule is one granule's quantized spectrum: 576 lines of -1, 0 or +1,
// a global gain and an attenuation per scalefactor band.
type granule struct {
	// gain is global_gain: a line of value 1 requantizes to
	// 2^((gain-210)/4) before its band's scalefactor.
	gain int
	// sf attenuates band b by 2^(-(sf[b]+preflag*pretab[b])*(1+scale)/2):
	// 3 dB a step with scale 0 (scalefac_scale), 6 dB with scale 1. It is
	// at most 15 for bands 0-10 and 7 for bands 11-20.
	sf [bandsCoded]int
	// scale and preflag are scalefac_scale and preflag, 0 or 1.
	scale, preflag int
	// line holds the quantized value of each line.
	line [lines]int8
}

// bitWriter appends bits, most significant first.
type bitWriter struct {
	buf []byte
	n   int // bits written
}

// write appends the low bits bits of v.
func (w *bitWriter) write(v uint32, bits int) {
	for bits > 0 {
		if w.n%8 == 0 {
			w.buf = append(w.buf, 0)
		}
		free := 8 - w.n%8
		take := min(free, bits)
		chunk := v >> uint(bits-take) & (1<<uint(take) - 1)
		w.buf[len(w.buf)-1] |= byte(chunk << uint(free-take))
		w.n += take
		bits -= take
	}
}

// bitsFor is how many bits hold v.
func bitsFor(v int) int {
	n := 0
	for v > 0 {
		n++
		v >>= 1
	}
	return n
}

// coded is the side information of a granule whose main data is written.
type coded struct {
	part23           int
	gain             int
	scalefacCompress int
	scale, preflag   int
}

// code appends a granule's scalefactors (part 2) and spectrum (part 3)
// to w.
// The whole spectrum sits in the count1 region (big_values 0), coded with
// table B: per quadruple of lines the 4-bit inverse of the four |values|,
// then a sign bit (1 negative) for each nonzero value. The region stops
// after the quadruple of the highest nonzero line.
func (g *granule) code(w *bitWriter) (coded, error) {
	var c coded
	start := w.n
	hi := -1
	for k := lines - 1; k >= 0; k-- {
		if g.line[k] != 0 {
			hi = k
			break
		}
	}
	if hi < 0 {
		return c, nil // part2_3_length 0: the decoder zeroes the granule
	}
	if hi >= longBandEdges()[bandsCoded] {
		return c, fmt.Errorf("tune: line %d is above the bands with scalefactors", hi)
	}
	c.gain, c.scale, c.preflag = g.gain, g.scale, g.preflag
	if c.gain < 0 || c.gain > 255 {
		return c, fmt.Errorf("tune: global gain %d out of range", c.gain)
	}
	// The smallest scalefac_compress whose lengths hold every scalefactor
	// of the bands up to hi (bands above it carry no line: zero).
	top := bandOf(hi)
	max1, max2 := 0, 0
	for b := 0; b <= top; b++ {
		switch {
		case g.sf[b] < 0:
			return c, fmt.Errorf("tune: negative scalefactor in band %d", b)
		case b < 11:
			max1 = max(max1, g.sf[b])
		default:
			max2 = max(max2, g.sf[b])
		}
	}
	n1, n2 := bitsFor(max1), bitsFor(max2)
	best, bestBits := -1, 0
	for i, s := range slens() {
		if s[0] >= n1 && s[1] >= n2 && (best < 0 || 11*s[0]+10*s[1] < bestBits) {
			best, bestBits = i, 11*s[0]+10*s[1]
		}
	}
	if best < 0 {
		return c, fmt.Errorf("tune: scalefactors %d and %d do not fit", max1, max2)
	}
	c.scalefacCompress = best
	s := slens()[best]
	for b := 0; b < bandsCoded; b++ {
		v := 0
		if b <= top {
			v = g.sf[b]
		}
		if b < 11 {
			w.write(uint32(v), s[0])
		} else {
			w.write(uint32(v), s[1])
		}
	}
	for k := 0; k <= hi; k += 4 {
		var mag uint32
		for j := range 4 {
			if g.line[k+j] != 0 {
				mag |= 8 >> uint(j)
			}
		}
		w.write(^mag&15, 4)
		for j := range 4 {
			switch v := g.line[k+j]; {
			case v < 0:
				w.write(1, 1)
			case v > 0:
				w.write(0, 1)
			}
		}
	}
	c.part23 = w.n - start
	return c, nil
}

// frameBytes is the length of frame i of the stream: 208 or 209 bytes, so
// that the stream keeps exactly BitrateKbps (144*64000/44100 = 208.98).
func frameBytes(i int) (n int, padded bool) {
	const num = 144 * BitrateKbps * 1000
	n = num / SampleRate
	padded = (i+1)*num/SampleRate-i*num/SampleRate > n
	if padded {
		n++
	}
	return n, padded
}

// encode writes granules as frames, two granules a frame (a last odd
// granule is paired with silence). Every frame is self-contained
// (main_data_begin 0): its main data follows its side information and the
// rest of the frame is zero.
func encode(grs []granule) ([]byte, error) {
	frames := (len(grs) + 1) / 2
	out := make([]byte, 0, frames*209)
	for i := range frames {
		size, padded := frameBytes(i)
		var cs [2]coded
		var m bitWriter
		m.buf = make([]byte, 0, size)
		for j := range 2 {
			if 2*i+j < len(grs) {
				c, err := grs[2*i+j].code(&m)
				if err != nil {
					return nil, fmt.Errorf("tune: granule %d: %w", 2*i+j, err)
				}
				cs[j] = c
			}
		}
		room := 8 * (size - headerBytes - sideInfoBytes)
		if cs[0].part23+cs[1].part23 > room {
			return nil, fmt.Errorf("tune: frame %d needs %d bits of main data, has %d", i, cs[0].part23+cs[1].part23, room)
		}
		f := bitWriter{buf: make([]byte, 0, size)}
		// Header: sync, MPEG-1, Layer III, no CRC; bitrate index 5
		// (64 kb/s), 44.1 kHz, padding, private 0; mono, no mode
		// extension, not copyrighted, original, no emphasis.
		f.write(0xFFFB, 16)
		f.write(5, 4)
		f.write(0, 2)
		if padded {
			f.write(1, 1)
		} else {
			f.write(0, 1)
		}
		f.write(0, 1)
		f.write(3, 2)
		f.write(0, 2)
		f.write(0, 1)
		f.write(1, 1)
		f.write(0, 2)
		// Side information.
		f.write(0, 9) // main_data_begin
		f.write(0, 5) // private_bits
		f.write(0, 4) // scfsi: every granule sends its scalefactors
		for _, c := range cs {
			f.write(uint32(c.part23), 12)
			f.write(0, 9) // big_values
			f.write(uint32(c.gain), 8)
			f.write(uint32(c.scalefacCompress), 4)
			f.write(0, 1)  // window_switching_flag: long blocks
			f.write(0, 15) // table_select[3], unused without big values
			f.write(0, 4)  // region0_count
			f.write(0, 3)  // region1_count
			f.write(uint32(c.preflag), 1)
			f.write(uint32(c.scale), 1) // scalefac_scale
			f.write(1, 1)               // count1table_select: table B
		}
		frame := append(f.buf, m.buf...)
		frame = append(frame, make([]byte, size-len(frame))...)
		out = append(out, frame...)
	}
	return out, nil
}
