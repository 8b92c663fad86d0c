package tune

import (
	"fmt"
	"slices"
	"time"
)

// Levels are kept in sixteenths of a global_gain step (1.5 dB / 16), on
// the global_gain scale: 210*16 is full scale. Integer arithmetic keeps
// every piece the same bytes on every platform.
const (
	fullScale = 210 * 16
	unit      = 16 // one global_gain step, 1.5 dB
	silent    = 48 * unit
	maxTonal  = 140 // highest line a voice's harmonic may take (5.4 kHz)
	hatLo     = 150 // the hats' noise band, lines [hatLo, hatHi)
	hatHi     = 230
	peakLimit = 0.95 // the most the lines' amplitudes may add up to
)

// shape is how a voice sounds: its overtones and envelope.
type shape struct {
	// overtones are pairs of a multiple of the note's harmonic and its
	// gain in global_gain steps; the first is the note itself.
	overtones [][2]int
	// attack is how many granules the onset ramps over (0: at once).
	attack int
	// decay is how much the level falls per granule while held, and
	// floor the most it falls, in sixteenths of a step.
	decay, floor int
	// release is how much it falls per granule after the note ends.
	release int
}

func shapeOf(v Voice) shape {
	switch v {
	case Bass:
		return shape{overtones: [][2]int{{1, 0}, {2, -6}, {3, -12}}, decay: 2, floor: 10 * unit, release: 2 * unit}
	case Pad:
		return shape{overtones: [][2]int{{1, 0}, {2, -10}}, attack: 6, release: unit}
	case Stab:
		return shape{overtones: [][2]int{{1, 0}, {2, -6}, {3, -12}}, decay: 6, floor: 24 * unit, release: 3 * unit}
	case Arp:
		return shape{overtones: [][2]int{{1, 0}, {2, -8}, {3, -14}}, decay: 3, floor: 16 * unit, release: 3 * unit / 2}
	case Melody:
		return shape{overtones: [][2]int{{1, 0}, {2, -8}, {3, -14}}, decay: 1, floor: 10 * unit, release: 3 * unit / 2}
	case Kick:
		return shape{overtones: [][2]int{{1, 0}, {2, -8}}, decay: 4 * unit, floor: silent, release: 4 * unit}
	case Hat:
		return shape{decay: 6 * unit, floor: silent, release: 6 * unit}
	}
	return shape{}
}

// envelope is how far below its peak a note is i granules after its onset,
// n granules long, in sixteenths of a step; ok is false once it is silent.
func (s shape) envelope(i, n int) (att int, ok bool) {
	if i < s.attack {
		att = (s.attack - i) * 18 * unit / s.attack
	} else {
		att = min((i-s.attack)*s.decay, s.floor)
	}
	if i >= n {
		att += (i - n + 1) * s.release
	}
	return att, att < silent
}

// voiced is a note placed on granules.
type voiced struct {
	note   Note
	shape  shape
	g0, n  int // onset granule and length in granules
	seed   uint64
	ending int // first granule it is silent
}

// partial is one line's wish for a granule: its level (on the scale of
// fullScale) and sign.
type partial struct {
	line, level int
	sign        int8
}

// ampTable is the amplitude of a line at each global_gain (scalefactor
// 0): 2^((gain-210)/4), built by repeated multiplication.
func ampTable() [256]float64 {
	var t [256]float64
	const down = 0.8408964152537145 // 2^(-1/4)
	t[210] = 1
	for g := 209; g >= 0; g-- {
		t[g] = t[g+1] * down
	}
	for g := 211; g < 256; g++ {
		t[g] = t[g-1] / down
	}
	return t
}

// pretab is the long-block preemphasis of MPEG-1 Layer III, added to the
// scalefactors of bands 11-20 when preflag is set.
func pretab() [bandsCoded]int {
	return [bandsCoded]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 2}
}

// Encode renders the score and encodes it as MPEG-1 Layer III (see the
// package doc): mono, 44.1 kHz, 64 kb/s, Length long, fading out over its
// last second and a half.
func (s Score) Encode() ([]byte, error) {
	frames := framesFor(s.Length)
	if frames <= 0 {
		return nil, fmt.Errorf("tune: encode: a score of length %v", s.Length)
	}
	total := 2 * frames
	vs := make([]voiced, 0, len(s.Notes))
	for i, n := range s.Notes {
		v := voiced{note: n, shape: shapeOf(n.Voice), g0: granuleOf(n.Start), seed: mix64(uint64(i) + 1)}
		v.n = max(1, granuleOf(n.Start+n.Length)-v.g0)
		if v.shape.release <= 0 {
			return nil, fmt.Errorf("tune: encode: note %d has no voice", i)
		}
		v.ending = v.g0 + v.n + (silent+v.shape.release-1)/v.shape.release
		vs = append(vs, v)
	}
	slices.SortStableFunc(vs, func(a, b voiced) int { return a.g0 - b.g0 })
	fade := min(granuleOf(1500*time.Millisecond), total/4)
	mx := newMixer()
	grs := make([]granule, total)
	var active []*voiced
	var ps []partial
	next := 0
	for g := range total {
		for next < len(vs) && vs[next].g0 <= g {
			active = append(active, &vs[next])
			next++
		}
		kept := active[:0]
		for _, v := range active {
			if g < v.ending {
				kept = append(kept, v)
			}
		}
		active = kept
		down := 0
		if g >= total-fade {
			down = (g - (total - fade) + 1) * 24 * unit / fade
		}
		ps = ps[:0]
		for _, v := range active {
			ps = v.partials(ps, g, down)
		}
		mx.mixGranule(&grs[g], ps)
	}
	return encode(grs)
}

// partials appends the note's lines at granule g, down the fade.
func (v *voiced) partials(ps []partial, g, down int) []partial {
	att, ok := v.shape.envelope(g-v.g0, v.n)
	if !ok {
		return ps
	}
	peak := fullScale + v.note.Gain*unit - att - down
	if v.note.Voice == Hat {
		for k := hatLo; k < hatHi; k++ {
			h := mix64(v.seed ^ uint64(g)<<32 ^ uint64(k))
			if h&1 == 0 {
				continue
			}
			sign := int8(1)
			if h&2 != 0 {
				sign = -1
			}
			ps = append(ps, partial{line: k, level: peak, sign: sign})
		}
		return ps
	}
	for _, o := range v.shape.overtones {
		m := v.note.Harmonic * o[0]
		if m <= 0 || m > maxTonal {
			continue
		}
		ps = append(ps, partial{line: m, level: peak + o[1]*unit, sign: toneSign(m, g)})
	}
	return ps
}

// toneSign is the sign of harmonic m's line at granule g. Line m, held at
// one value, sounds m × FundamentalHz when m is even; when m is odd, the
// value must alternate in sign from granule to granule. (A line's basis
// function shifts its phase by a quarter turn from one granule to the
// next; the two sign patterns turn that into a steady tone half a line
// below or above the line's centre frequency.)
func toneSign(m, g int) int8 {
	s := int8(1)
	if mix64(uint64(m))&1 != 0 {
		s = -1
	}
	if m%2 == 1 && g%2 == 1 {
		s = -s
	}
	return s
}

// mixer holds the tables a granule's quantization reads.
type mixer struct {
	amp    [256]float64
	bandOf [lines]int
	pre    [bandsCoded]int
	// err is each band's rounding error in the previous granule, in
	// sixteenths of a step: a band's error should hold still from one
	// granule to the next, as a wobbling level is heard as roughness.
	err [bandsCoded]int
}

func newMixer() *mixer {
	mx := &mixer{amp: ampTable(), pre: pretab()}
	for k := range lines {
		mx.bandOf[k] = bandOf(k)
	}
	return mx
}

// mixGranule quantizes a granule's partials: every line takes the value
// ±1, each scalefactor band the level of its loudest line (quieter lines
// more than 6 dB under it are dropped), global_gain the loudest band's,
// and the scalefactors, with the scale and preemphasis that fit the
// bands' levels best, the rest.
func (mx *mixer) mixGranule(gr *granule, ps []partial) {
	var level [lines]int
	var band [bandsCoded]int
	used := false
	for _, p := range ps {
		if p.line < 0 || p.line >= longBandEdges()[bandsCoded] || p.level <= 0 {
			continue
		}
		// A line two notes share takes the louder.
		if gr.line[p.line] == 0 || p.level > level[p.line] {
			level[p.line], gr.line[p.line] = p.level, p.sign
			used = true
		}
	}
	if !used {
		mx.err = [bandsCoded]int{}
		return
	}
	top := 0
	for k, v := range gr.line {
		if v != 0 {
			b := mx.bandOf[k]
			band[b] = max(band[b], level[k])
			top = max(top, level[k])
		}
	}
	var count [bandsCoded]int // lines kept per band
	for k, v := range gr.line {
		switch b := mx.bandOf[k]; {
		case v == 0:
		case level[k] < band[b]-4*unit:
			gr.line[k] = 0
		default:
			count[b]++
		}
	}
	low := (top + unit - 1) / unit
	if low <= 0 {
		*gr, mx.err = granule{}, [bandsCoded]int{}
		return
	}
	// The global gain (up to three steps above the loudest band), scale
	// (2 or 4 steps a scalefactor) and preflag that come nearest to every
	// band's level and keep each band's error where it was in the last
	// granule, the loud bands weighing most: a band's level then moves
	// with its notes, not with the rounding of other bands.
	pre := mx.pre
	bestErr := -1
	var best, bestErrs [bandsCoded]int
	gain, bestScale, bestPre := 0, 0, 0
	for g := low; g <= min(low+3, 255); g++ {
		for _, scale := range []int{0, 1} {
			step := (2 + 2*scale) * unit
			for _, pf := range []int{0, 1} {
				var sf, errs [bandsCoded]int
				e := 0
				for b := range bandsCoded {
					if band[b] == 0 {
						continue
					}
					want := g*unit - band[b]
					limit := 15
					if b >= 11 {
						limit = 7
					}
					sf[b] = min(max((want-pf*pre[b]*step+step/2)/step, 0), limit)
					w := 1
					switch {
					case band[b] >= top-6*unit:
						w = 4
					case band[b] >= top-16*unit:
						w = 2
					}
					errs[b] = want - (sf[b]+pf*pre[b])*step
					e += w * (abs(errs[b]) + 2*abs(errs[b]-mx.err[b]))
				}
				if bestErr < 0 || e < bestErr {
					bestErr, best, bestErrs, gain, bestScale, bestPre = e, sf, errs, g, scale, pf
				}
			}
		}
	}
	gr.sf, gr.scale, gr.preflag, mx.err = best, bestScale, bestPre, bestErrs
	// Keep the sum of the lines' amplitudes under peakLimit.
	for ; gain > 0; gain-- {
		sum := 0.0
		for b, n := range count {
			if g := gain - (gr.sf[b]+gr.preflag*pre[b])*(2+2*gr.scale); n > 0 && g >= 0 {
				sum += float64(n) * mx.amp[g]
			}
		}
		if sum <= peakLimit {
			break
		}
	}
	gr.gain = gain
}
