package tune

import (
	"slices"
	"time"
)

// The registers of the voices, as harmonic numbers.
const (
	bassLo, bassHi     = 4, 10  // 153-383 Hz
	chordLo, chordHi   = 12, 27 // 459-1034 Hz
	melodyLo, melodyHi = 30, 64 // 1148-2450 Hz
)

// classOf returns the pitch class of harmonic m, 0..6 for the letters C
// to B of the pitch set, or -1 when m is not in the set. The set is the
// major scale in just intonation on harmonic 3 (C): D 9/8, E 5/4, F 4/3,
// G 3/2, A 5/3 and B 15/8 of C, that is the harmonics whose odd part is
// 3, 27, 15, 1, 9, 5 or 45.
func classOf(m int) int {
	if m <= 0 {
		return -1
	}
	for m%2 == 0 {
		m /= 2
	}
	switch m {
	case 3:
		return 0
	case 27:
		return 1
	case 15:
		return 2
	case 1:
		return 3
	case 9:
		return 4
	case 5:
		return 5
	case 45:
		return 6
	}
	return -1
}

// harmonicsIn returns, in order, the harmonics in [lo, hi] whose class is
// one of classes.
func harmonicsIn(lo, hi int, classes []int) []int {
	var out []int
	for m := lo; m <= hi; m++ {
		if slices.Contains(classes, classOf(m)) {
			out = append(out, m)
		}
	}
	return out
}

// triad returns the classes of the chord on scale degree d: root, third, fifth.
func (m Mode) triad(d int) []int {
	t := m.tonic()
	return []int{(t + d) % 7, (t + d + 2) % 7, (t + d + 4) % 7}
}

// melodyClasses are the classes the melody may use.
func (m Mode) melodyClasses(pentatonic bool) []int {
	if !pentatonic {
		return []int{0, 1, 2, 3, 4, 5, 6}
	}
	if m == Lydian {
		return []int{3, 4, 5, 0, 1} // F G A C D
	}
	return []int{0, 1, 2, 4, 5} // C D E G A: major, minor and G pentatonic
}

// progressions are four-bar chord loops, as scale degrees, that suit the
// mode and whose chords the registers can voice.
func (m Mode) progressions() [][]int {
	switch m {
	case Aeolian:
		return [][]int{{0, 5, 2, 6}, {0, 3, 5, 4}, {0, 6, 5, 6}, {0, 5, 3, 6}, {0, 2, 6, 5}}
	case Lydian:
		return [][]int{{0, 1, 0, 1}, {0, 1, 2, 1}, {0, 4, 1, 0}, {0, 5, 1, 4}}
	case Mixolydian:
		return [][]int{{0, 6, 3, 0}, {0, 3, 6, 0}, {0, 4, 3, 0}, {0, 6, 0, 3}}
	}
	return [][]int{{0, 4, 5, 3}, {0, 5, 3, 4}, {0, 3, 4, 3}, {5, 3, 0, 4}, {0, 3, 1, 4}, {0, 2, 3, 4}}
}

// chord is a bar's harmony as the voices play it.
type chord struct {
	classes []int // root, third, fifth
	voicing []int // the chord voices' harmonics, low to high
	bass    int   // the bass's main tone
	other   int   // another tone for the bass's patterns
}

// voice builds the chord on degree d: the bass takes the root, or the
// fifth or third when the root has no harmonic in its register; the
// chords take the lowest harmonic of each class in theirs.
func (m Mode) voice(d int) chord {
	c := chord{classes: m.triad(d)}
	for _, cl := range []int{c.classes[0], c.classes[2], c.classes[1]} {
		if hs := harmonicsIn(bassLo, bassHi, []int{cl}); len(hs) > 0 {
			c.bass = hs[0]
			break
		}
	}
	c.other = 2 * c.bass
	best := 0
	for _, h := range harmonicsIn(bassLo, bassHi+2, c.classes) {
		if h != c.bass && classOf(h) != classOf(c.bass) && (best == 0 || abs(h-c.bass) < abs(best-c.bass)) {
			best = h
		}
	}
	if best != 0 {
		c.other = best
	}
	for _, cl := range c.classes {
		if hs := harmonicsIn(chordLo, chordHi, []int{cl}); len(hs) > 0 {
			c.voicing = append(c.voicing, hs[0])
		}
	}
	slices.Sort(c.voicing)
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// bassPatterns are one bar of the bass in eighths: start, length, and the
// tone (0 main, 1 other, 2 main an octave up).
func bassPatterns() [][][3]int {
	return [][][3]int{
		{{0, 4, 0}, {4, 4, 0}},
		{{0, 3, 0}, {3, 1, 0}, {4, 4, 1}},
		{{0, 2, 0}, {2, 2, 2}, {4, 2, 0}, {6, 2, 1}},
		{{0, 6, 0}, {6, 2, 1}},
		{{0, 1, 0}, {1, 1, 0}, {2, 1, 0}, {3, 1, 0}, {4, 1, 0}, {5, 1, 0}, {6, 1, 1}, {7, 1, 2}},
	}
}

// rhythms are one bar of the melody in eighths, a negative length a rest;
// endings close a phrase.
func rhythms() [][]int {
	return [][]int{{2, 2, 2, 2}, {3, 1, 2, 2}, {2, 1, 1, 2, 2}, {4, 2, 2}, {1, 1, 2, 1, 1, 2},
		{3, 3, 2}, {2, 2, 1, 1, 2}, {-2, 2, 2, 2}, {2, -1, 1, 2, 2}, {6, 2}}
}

func endings() [][]int {
	return [][]int{{2, 2, 4}, {4, 4}, {3, 1, 4}, {8}, {2, 6}}
}

// mnote is a melody note within a bar: start and length in eighths, and
// its index in the melody's scale.
type mnote struct{ pos, n, idx int }

// composer holds what every part of a piece shares.
type composer struct {
	r      *rng
	mode   Mode
	eighth time.Duration
	chords []chord // by bar
	scale  []int   // the melody's harmonics, low to high
	notes  []Note
}

// Compose writes a piece of about length (clamped to MinLength and
// MaxLength) from seed: the seed picks the key, scale, tempo, chord
// progression, the bass, chord and drum patterns and the melody, so one
// seed always gives the same score and another seed almost surely a
// different one.
func Compose(seed string, length time.Duration) Score {
	r := newRNG(seed)
	s := Score{Mode: pick(r, []Mode{Ionian, Aeolian, Lydian, Mixolydian}), Tempo: r.between(84, 136),
		Pentatonic: r.chance(1, 3)}
	s.Progression = slices.Clone(pick(r, s.Mode.progressions()))
	s.Length = Length(length)
	c := &composer{r: r, mode: s.Mode, eighth: time.Minute / time.Duration(2*s.Tempo)}
	c.scale = harmonicsIn(melodyLo, melodyHi, s.Mode.melodyClasses(s.Pentatonic))
	// Whole bars, the last of which rings to the end: a remainder of half
	// a bar or more (or any, in a piece shorter than two bars) makes a
	// last bar of its own; a shorter one lengthens the last bar.
	bar := 8 * c.eighth
	bars := int(s.Length / bar)
	if rem := s.Length - time.Duration(bars)*bar; bars < 2 && rem > 0 || rem >= bar/2 {
		bars++
	}
	for b := range bars {
		d := s.Progression[b%len(s.Progression)]
		if bars >= 2 && b == bars-1 {
			d = 0
		}
		c.chords = append(c.chords, s.Mode.voice(d))
	}
	intro := 0
	switch {
	case bars >= 12:
		intro = r.between(1, 2)
	case bars >= 6:
		intro = 1
	}
	bassStyle := pick(r, bassPatterns())
	chordStyle := pick(r, []Voice{Pad, Stab, Arp})
	drums := r.intn(4)
	last := bars - 1
	end := s.Length - time.Duration(last)*bar // the last bar rings to the end
	for b := range last {
		at := time.Duration(b) * bar
		c.bassBar(at, c.chords[b], bassStyle)
		c.chordBar(at, c.chords[b], chordStyle, b)
		if b >= intro {
			c.drumBar(at, drums)
		}
	}
	c.melody(intro, last)
	// The ending: the last chord held, the bass's main tone, and a last
	// kick when there are drums.
	at := time.Duration(last) * bar
	ch := c.chords[last]
	c.add(Bass, ch.bass, at, end, -10)
	for _, h := range ch.voicing {
		c.add(Pad, h, at, end, -15)
	}
	if drums > 1 {
		c.add(Kick, 2, at, c.eighth, -10)
	}
	slices.SortStableFunc(c.notes, func(a, b Note) int { return int(a.Start - b.Start) })
	s.Notes = c.notes
	return s
}

// add appends a note.
func (c *composer) add(v Voice, h int, start, length time.Duration, gain int) {
	c.notes = append(c.notes, Note{Voice: v, Harmonic: h, Start: start, Length: length, Gain: gain})
}

func (c *composer) bassBar(at time.Duration, ch chord, pattern [][3]int) {
	for _, p := range pattern {
		h := ch.bass
		switch p[2] {
		case 1:
			h = ch.other
		case 2:
			h = 2 * ch.bass
		}
		gain := -10
		if p[0]%4 != 0 {
			gain = -12
		}
		c.add(Bass, h, at+time.Duration(p[0])*c.eighth, time.Duration(p[1])*c.eighth, gain)
	}
}

func (c *composer) chordBar(at time.Duration, ch chord, v Voice, bar int) {
	switch v {
	case Pad:
		for _, h := range ch.voicing {
			c.add(Pad, h, at, 8*c.eighth, -16)
		}
	case Stab:
		for _, pos := range []int{2, 6} {
			for _, h := range ch.voicing {
				c.add(Stab, h, at+time.Duration(pos)*c.eighth, c.eighth, -15)
			}
		}
	case Arp:
		tones := append(slices.Clone(ch.voicing), 2*ch.voicing[0])
		for i := range 8 {
			j := i % (2*len(tones) - 2) // up, then down
			if j >= len(tones) {
				j = 2*len(tones) - 2 - j
			}
			if bar%2 == 1 {
				j = len(tones) - 1 - j
			}
			c.add(Arp, tones[j], at+time.Duration(i)*c.eighth, 2*c.eighth, -13)
		}
	}
}

// drumBar plays one of the drum patterns: none, hats on every eighth,
// kicks on the beats one and three with hats between, or a syncopated
// kick under steady hats.
func (c *composer) drumBar(at time.Duration, style int) {
	e := c.eighth
	switch style {
	case 1:
		for i := range 8 {
			c.add(Hat, 0, at+time.Duration(i)*e, e, -31-2*(i%2))
		}
	case 2:
		c.add(Kick, 2, at, e, -10)
		c.add(Kick, 2, at+4*e, e, -10)
		for _, i := range []int{1, 2, 3, 5, 6, 7} {
			c.add(Hat, 0, at+time.Duration(i)*e, e, -31-2*(i%2))
		}
	case 3:
		for _, i := range []int{0, 3, 4} {
			c.add(Kick, 2, at+time.Duration(i)*e, e, -10)
		}
		for i := range 8 {
			c.add(Hat, 0, at+time.Duration(i)*e, e, -32-2*(i%2))
		}
	}
}

// melody writes the tune from bar first to bar last (the held ending) in
// four-bar phrases A A' B A: A' is A with a new last bar, B new.
func (c *composer) melody(first, last int) {
	var a [][]mnote
	cur := len(c.scale) / 2
	for p := 0; first+4*p < last; p++ {
		start := first + 4*p
		n := min(4, last-start)
		var ph [][]mnote
		switch {
		case p%4 == 0 && a != nil || p%4 == 3:
			ph = a
		case p%4 == 1:
			ph = slices.Clone(a)
			ph[len(ph)-1], cur = c.bar(start+3, endings(), lastIdx(ph[len(ph)-2], cur), c.r.between(1, len(c.scale)/2))
		default:
			ph, cur = c.phrase(start, cur)
			if a == nil {
				a = ph
			}
		}
		for j := range min(n, len(ph)) {
			at := time.Duration(start+j) * 8 * c.eighth
			for _, mn := range ph[j] {
				gain := -9
				if mn.pos%4 != 0 {
					gain = -10
				}
				c.add(Melody, c.scale[mn.idx], at+time.Duration(mn.pos)*c.eighth, time.Duration(mn.n)*c.eighth, gain)
			}
			cur = lastIdx(ph[j], cur)
		}
	}
	// The final note: the tonic nearest to the tune's last note, held.
	tonic := c.mode.tonic()
	best := -1
	for i, h := range c.scale {
		if classOf(h) == tonic && (best < 0 || abs(i-cur) < abs(best-cur)) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	at := time.Duration(last) * 8 * c.eighth
	c.add(Melody, c.scale[best], at, 8*c.eighth, -9)
}

func lastIdx(bar []mnote, cur int) int {
	if len(bar) == 0 {
		return cur
	}
	return bar[len(bar)-1].idx
}

// phrase writes four bars from bar start: a motif that climbs toward a
// high point, an answer, the motif's rhythm again on the way down, and an
// ending low in the register.
func (c *composer) phrase(start, cur int) ([][]mnote, int) {
	n := len(c.scale)
	high, low := c.r.between(n/2, n-1), c.r.between(1, n/2)
	first := pick(c.r, rhythms())
	var ph [][]mnote
	for j, set := range [][][]int{{first}, rhythms(), {first}, endings()} {
		target := []int{high, high, (high + low) / 2, low}[j]
		var bar []mnote
		bar, cur = c.bar(start+j, set, cur, target)
		ph = append(ph, bar)
	}
	return ph, cur
}

// bar writes one bar of melody on a rhythm from set, from scale index cur
// toward target: a chord tone on the beats one and three, steps and small
// leaps between, leaning toward the target.
func (c *composer) bar(b int, set [][]int, cur, target int) ([]mnote, int) {
	ch := c.chords[min(b, len(c.chords)-1)]
	var out []mnote
	pos := 0
	for _, n := range pick(c.r, set) {
		if n < 0 {
			pos -= n
			continue
		}
		if pos%4 == 0 {
			cur = c.chordToneNear(ch, cur, target)
		} else {
			step := pick(c.r, []int{-3, -2, -2, -1, -1, -1, 0, 1, 1, 1, 2, 2, 3})
			if (target-cur)*step < 0 && c.r.chance(1, 2) {
				step = -step
			}
			cur = min(max(cur+step, 0), len(c.scale)-1)
		}
		out = append(out, mnote{pos: pos, n: n, idx: cur})
		pos += n
	}
	return out, cur
}

// chordToneNear returns the index of a chord tone of the melody's scale
// near cur, on the way to target, rather another than cur itself: the
// best, or the second best one time in three.
func (c *composer) chordToneNear(ch chord, cur, target int) int {
	var idx []int
	for i, h := range c.scale {
		if slices.Contains(ch.classes, classOf(h)) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return cur
	}
	cost := func(i int) int {
		k := 2*abs(i-cur) + abs(i-target)
		if i == cur {
			k += 2
		}
		return k
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cost(a) - cost(b) })
	if len(idx) > 1 && c.r.chance(1, 3) {
		return idx[1]
	}
	return idx[0]
}
