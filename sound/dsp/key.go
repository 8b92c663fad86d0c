package dsp

import (
	"math"
)

// Key is a global key estimate (spec section 4).
type Key struct {
	// Tonic is the pitch class of the tonic, spelled with sharps: "C",
	// "C#", "D", ... "B"; empty when not Available.
	Tonic string
	// Mode is "major" or "minor"; empty when not Available.
	Mode string
	// Confidence in [0, 1] grows with the margin between the best and the
	// second-best key's correlation.
	Confidence float64
	// Available is false when the signal has no tonal content (silence,
	// noise); Tonic and Mode are then empty.
	Available bool
	// Reason says why the key is not Available; empty when it is.
	Reason string
}

// keyTonics names the twelve pitch classes from C, as Key.Tonic spells
// them.
var keyTonics = [12]string{"C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"}

// Krumhansl-Kessler key profiles, index 0 the tonic (spec section 4).
var (
	keyProfileMajor = [12]float64{6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88}
	keyProfileMinor = [12]float64{6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17}
)

// Chroma analysis bounds and thresholds.
const (
	keyMinHz = 50.0
	keyMaxHz = 5000.0
	// keyPeakRatio is how far (in magnitude) a spectral peak must stand
	// above the mean magnitude of its neighbourhood to count as a partial.
	keyPeakRatio = 4.0
	// keyNeighbourHz is the half-width of that neighbourhood.
	keyNeighbourHz = 100.0
	// keyMinTonalShare is the share of the band's magnitude that partials
	// must carry, over the whole signal, for a key to be estimated.
	keyMinTonalShare = 0.02
	// keyMinCorrelation is the best profile correlation below which the
	// chroma is taken as having no tonal centre.
	keyMinCorrelation = 0.5
	// keyFullMargin is the best-minus-second correlation margin that earns
	// full confidence.
	keyFullMargin = 0.25
)

// EstimateKey estimates the global key of r in one streaming pass. Each
// Hann STFT frame (about 186 ms, half overlapping) of the mono mixdown is
// searched for spectral peaks between 50 Hz and 5 kHz that stand clear of
// their neighbourhood; each peak's frequency is refined by parabolic
// interpolation and its magnitude added to the pitch class nearest to it
// (A4 = 440 Hz), weighted down as it strays from the semitone. The 12-bin
// chroma summed over the signal is Pearson-correlated with the
// Krumhansl-Kessler major and minor profiles rotated to all 12 tonics; the
// best of the 24 wins, and Confidence is its margin over the runner-up.
// Memory is one frame plus the 12 sums.
//
// Silence and signals without sustained partials (noise) are reported as
// not Available with a Reason; errors are the reader's.
func EstimateKey(r Reader) (Key, error) {
	f := r.Format()
	if err := f.Validate(); err != nil {
		return Key{}, err
	}
	size := stftSizeFor(f.SampleRate, 0.186)
	stft, err := NewSTFT(size, size/2)
	if err != nil {
		return Key{}, err
	}
	c := newKeyChroma(size, f.SampleRate)
	frames, meanSquare, err := stft.Run(r, c.push)
	if err != nil {
		return Key{}, err
	}
	switch {
	case frames == 0:
		return Key{}, ErrEmpty
	case meanSquare < tempoKeySilence:
		return Key{Reason: "silent"}, nil
	case c.frames == 0:
		return Key{Reason: "too short for a key"}, nil
	case c.band == 0 || c.tonal/c.band < keyMinTonalShare:
		return Key{Reason: "no tonal content"}, nil
	}
	return keyFromChroma(c.chroma), nil
}

// keyChroma sums the magnitudes of spectral peaks by pitch class.
type keyChroma struct {
	lo, hi int     // bin range searched for peaks
	reach  int     // neighbourhood half-width in bins
	binHz  float64 // Hz per bin
	chroma [12]float64
	tonal  float64 // magnitude in peaks
	band   float64 // magnitude in the band
	frames int
	prefix []float64 // running sums of one frame's magnitudes
}

func newKeyChroma(size, sampleRate int) *keyChroma {
	binHz := float64(sampleRate) / float64(size)
	bins := size/2 + 1
	return &keyChroma{
		lo:     max(2, int(math.Floor(keyMinHz/binHz))),
		hi:     min(bins-2, int(math.Ceil(keyMaxHz/binHz))),
		reach:  max(2, int(math.Round(keyNeighbourHz/binHz))),
		binHz:  binHz,
		prefix: make([]float64, bins+1),
	}
}

// push consumes one magnitude spectrum.
func (c *keyChroma) push(mag []float64) {
	c.frames++
	for i, m := range mag {
		c.prefix[i+1] = c.prefix[i] + m
	}
	c.band += c.prefix[c.hi+1] - c.prefix[c.lo]
	for k := c.lo; k <= c.hi; k++ {
		m := mag[k]
		if m <= mag[k-1] || m < mag[k+1] || m == 0 {
			continue
		}
		a, b := max(0, k-c.reach), min(len(mag)-1, k+c.reach)
		mean := (c.prefix[b+1] - c.prefix[a]) / float64(b-a+1)
		if m < keyPeakRatio*mean {
			continue
		}
		// Parabolic interpolation on log magnitudes (exact for a Gaussian
		// lobe, close for Hann).
		la, lb, lg := math.Log(mag[k-1]+1e-300), math.Log(m), math.Log(mag[k+1]+1e-300)
		off := 0.0
		if den := la - 2*lb + lg; den < 0 {
			off = math.Max(-0.5, math.Min(0.5, 0.5*(la-lg)/den))
		}
		hz := (float64(k) + off) * c.binHz
		if hz < keyMinHz || hz > keyMaxHz {
			continue
		}
		pitch := 69 + 12*math.Log2(hz/440)
		nearest := math.Round(pitch)
		w := math.Cos(math.Pi * (pitch - nearest)) // 1 on the semitone, 0 half-way
		pc := (int(nearest)%12 + 12) % 12
		c.chroma[pc] += m * w * w
		c.tonal += m
	}
}

// keyFromChroma correlates chroma with the 24 rotated profiles.
func keyFromChroma(chroma [12]float64) Key {
	type scored struct {
		tonic int
		minor bool
		r     float64
	}
	var best, second scored
	best.r, second.r = math.Inf(-1), math.Inf(-1)
	for _, minor := range []bool{false, true} {
		profile := keyProfileMajor
		if minor {
			profile = keyProfileMinor
		}
		for tonic := range 12 {
			var rotated [12]float64
			for pc := range 12 {
				rotated[pc] = profile[(pc-tonic+12)%12]
			}
			s := scored{tonic, minor, keyCorrelation(chroma[:], rotated[:])}
			switch {
			case s.r > best.r:
				best, second = s, best
			case s.r > second.r:
				second = s
			}
		}
	}
	if math.IsNaN(best.r) || best.r < keyMinCorrelation {
		return Key{Reason: "no tonal centre"}
	}
	mode := "major"
	if best.minor {
		mode = "minor"
	}
	return Key{
		Tonic:      keyTonics[best.tonic],
		Mode:       mode,
		Confidence: math.Min(1, (best.r-second.r)/keyFullMargin),
		Available:  true,
	}
}

// keyCorrelation is the Pearson correlation of two equal-length vectors; NaN when
// either is constant.
func keyCorrelation(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
