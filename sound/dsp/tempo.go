package dsp

import (
	"math"
)

// Tempo is a global tempo estimate (spec section 4).
type Tempo struct {
	// BPM is the tempo in beats per minute, in [60, 200]; 0 when not
	// Available.
	BPM float64
	// Confidence in [0, 1] grows with how strongly the onsets repeat at the
	// estimated period.
	Confidence float64
	// Available is false when the signal has no clear periodicity
	// (silence, noise, too short); BPM is then 0 and never a guess.
	Available bool
	// Reason says why the tempo is not Available; empty when it is.
	Reason string
}

// Bounds and thresholds of the tempo search.
const (
	tempoMinBPM = 60.0
	tempoMaxBPM = 200.0
	// The octave a tempo is folded into when it and its double (or half)
	// both score.
	tempoPreferLow  = 80.0
	tempoPreferHigh = 160.0
	// tempoEnvelopeRate is the onset envelope's nominal frame rate (Hz).
	tempoEnvelopeRate = 100.0
	// tempoMaxLagSeconds bounds the autocorrelation: four periods at the
	// slowest tempo, plus room for interpolation.
	tempoMaxLagSeconds = 4.1
	// tempoDetrendSeconds is the moving-average length removed from the
	// envelope so its autocorrelation sees pulses, not loudness.
	tempoDetrendSeconds = 1.5
	// tempoMinSeconds is the shortest signal analysed.
	tempoMinSeconds = 5.0
	// tempoMinScore is the normalised periodicity below which the onsets
	// are taken as aperiodic; 20 s of white noise scores about 0.03.
	tempoMinScore = 0.15
	// tempoTieRatio is the share of the best comb score within which a
	// shorter period is preferred to a longer one.
	tempoTieRatio = 0.85
	// tempoCombTeeth is how many multiples of a candidate period its score
	// averages.
	tempoCombTeeth = 4
	// tempoKeySilence is the mean square (about -90 dBFS) under which a
	// signal counts as silent.
	tempoKeySilence = 1e-9
)

// EstimateTempo estimates the global tempo of r in one streaming pass: a
// spectral-flux onset envelope at about 100 frames per second (log-compressed
// Hann STFT magnitudes, about 46 ms frames), whose autocorrelation is
// accumulated as the envelope arrives. Candidate periods between 60 and 200
// BPM are scored by the mean autocorrelation at their first four
// multiples, and the shortest period scoring within 15 % of the best wins
// (a period's multiples score as well as it does). A winner outside 80-160
// BPM is folded into that range when the autocorrelation also peaks, at
// least half as high, at the period of its double (or half). The period is
// then refined by parabolic interpolation of the autocorrelation peak at
// its largest reliable multiple. Memory is bounded by the 4-second lag range, not the signal.
//
// Silence, noise and signals shorter than 5 seconds are reported as not
// Available with a Reason; errors are the reader's.
func EstimateTempo(r Reader) (Tempo, error) {
	f := r.Format()
	if err := f.Validate(); err != nil {
		return Tempo{}, err
	}
	hop := max(1, int(math.Round(float64(f.SampleRate)/tempoEnvelopeRate)))
	stft, err := NewSTFT(stftSizeFor(f.SampleRate, 0.046), hop)
	if err != nil {
		return Tempo{}, err
	}
	rate := float64(f.SampleRate) / float64(hop)
	env := newTempoOnsets(stft, f.SampleRate, rate)
	frames, meanSquare, err := stft.Run(r, env.push)
	if err != nil {
		return Tempo{}, err
	}
	switch {
	case frames == 0:
		return Tempo{}, ErrEmpty
	case meanSquare < tempoKeySilence:
		return Tempo{Reason: "silent"}, nil
	case float64(frames) < tempoMinSeconds*float64(f.SampleRate):
		return Tempo{Reason: "too short for a tempo (under 5 s)"}, nil
	}
	return env.tempo(), nil
}

// tempoOnsets turns magnitude spectra into a detrended spectral-flux
// envelope and accumulates its autocorrelation, keeping only the last
// maxLag+1 envelope values.
type tempoOnsets struct {
	rate   float64   // envelope frames per second
	scale  float64   // magnitude normalisation: a full-scale sine -> 1
	hiBin  int       // highest bin counted in the flux
	prev   []float64 // previous frame's log magnitudes
	primed bool

	detrend    []float64 // ring of the last raw flux values
	detrendSum float64
	ring       []float64 // ring of the last detrended values
	acf        []float64 // acf[k] = sum over t of d[t]*d[t-k]
	n          int       // envelope frames seen
}

func newTempoOnsets(s *STFT, sampleRate int, rate float64) *tempoOnsets {
	maxLag := int(math.Ceil(tempoMaxLagSeconds * rate))
	hiBin := min(s.Bins()-1, int(16000*float64(s.Size())/float64(sampleRate)))
	return &tempoOnsets{
		rate:    rate,
		scale:   4 / float64(s.Size()),
		hiBin:   hiBin,
		prev:    make([]float64, hiBin+1),
		detrend: make([]float64, max(1, int(math.Round(tempoDetrendSeconds*rate)))),
		ring:    make([]float64, maxLag+1),
		acf:     make([]float64, maxLag+1),
	}
}

// push consumes one magnitude spectrum.
func (e *tempoOnsets) push(mag []float64) {
	var flux float64
	for k := 1; k <= e.hiBin; k++ {
		l := math.Log1p(1000 * e.scale * mag[k])
		if d := l - e.prev[k]; d > 0 {
			flux += d
		}
		e.prev[k] = l
	}
	if !e.primed {
		// The first frame has no predecessor; its "flux" is its level.
		e.primed = true
		return
	}
	flux /= float64(e.hiBin)

	w := len(e.detrend)
	slot := e.n % w
	e.detrendSum += flux - e.detrend[slot]
	e.detrend[slot] = flux
	d := flux - e.detrendSum/float64(min(e.n+1, w))

	size := len(e.ring)
	pos := e.n % size
	e.ring[pos] = d
	lags := min(e.n+1, size)
	for k := range lags {
		e.acf[k] += d * e.ring[(pos-k+size)%size]
	}
	e.n++
}

// normalised returns the autocorrelation at lag k (integer) as an unbiased
// estimate divided by the lag-0 value.
func (e *tempoOnsets) normalised() []float64 {
	r := make([]float64, len(e.acf))
	if e.acf[0] <= 0 {
		return r
	}
	zero := e.acf[0] / float64(e.n)
	for k := range r {
		if c := e.n - k; c > 0 {
			r[k] = e.acf[k] / float64(c) / zero
		}
	}
	return r
}

// tempo picks the period from the accumulated autocorrelation.
func (e *tempoOnsets) tempo() Tempo {
	r := e.normalised()
	if e.acf[0] <= 0 {
		return Tempo{Reason: "no onsets"}
	}
	at := func(x float64) float64 { // linear interpolation of r
		i := int(x)
		if i < 0 || i+1 >= len(r) {
			return 0
		}
		fr := x - float64(i)
		return r[i]*(1-fr) + r[i+1]*fr
	}
	comb := func(lag float64) float64 {
		var s float64
		for m := 1; m <= tempoCombTeeth; m++ {
			s += at(float64(m) * lag)
		}
		return s / tempoCombTeeth
	}
	minLag := 60 * e.rate / tempoMaxBPM
	maxLag := 60 * e.rate / tempoMinBPM
	const step = 0.05
	scores := make([]float64, 0, int((maxLag-minLag)/step)+1)
	bestScore := math.Inf(-1)
	for i := range cap(scores) {
		s := comb(minLag + float64(i)*step)
		scores = append(scores, s)
		bestScore = max(bestScore, s)
	}
	// Every multiple of the beat period scores as well as the period
	// itself, so the shortest period scoring close to the best wins.
	best := minLag
	for i, s := range scores {
		if s >= tempoTieRatio*bestScore && (i+1 == len(scores) || s >= scores[i+1]) {
			best = minLag + float64(i)*step
			break
		}
	}
	// White noise scores about 2.5/sqrt(frames); short signals need more.
	if bestScore < max(tempoMinScore, 5/math.Sqrt(float64(e.n))) {
		return Tempo{Reason: "no clear periodicity in the onsets"}
	}
	// Octave errors: the double (or half) tempo "scores" when the
	// autocorrelation peaks at its own period too, at least half as high
	// as at the winner's; then the one inside 80-160 BPM is preferred.
	// Every periodic winner above 160 BPM has its half scoring; a winner
	// below 80 BPM has its double scoring only when onsets fall between
	// its beats.
	bpm := 60 * e.rate / best
	var alt float64
	switch {
	case bpm < tempoPreferLow && bpm*2 <= tempoMaxBPM:
		alt = best / 2
	case bpm > tempoPreferHigh && bpm/2 >= tempoMinBPM:
		alt = best * 2
	}
	if alt > 0 {
		if p := tempoClimb(at, alt, step); p.score >= at(best)/2 {
			best = p.lag
		}
	}
	best = tempoRefineLag(r, best)
	return Tempo{
		BPM:        60 * e.rate / best,
		Confidence: math.Min(1, (bestScore-tempoMinScore)/(0.6-tempoMinScore)),
		Available:  true,
	}
}

type tempoLagScore struct{ lag, score float64 }

// tempoClimb returns the maximum of score within a couple of frames of lag.
func tempoClimb(score func(float64) float64, lag, step float64) tempoLagScore {
	best := tempoLagScore{lag, score(lag)}
	for x := lag - 2; x <= lag+2; x += step {
		if s := score(x); s > best.score {
			best = tempoLagScore{x, s}
		}
	}
	return best
}

// tempoRefineLag sharpens a period estimate: it finds the autocorrelation peak
// at the largest multiple of lag inside r that still holds at least half
// the first peak's height, interpolates it with a parabola and divides by
// the multiple, dividing the interpolation error too.
func tempoRefineLag(r []float64, lag float64) float64 {
	peak := func(centre float64, reach int) (float64, float64, bool) {
		c := int(math.Round(centre))
		k := -1
		for i := c - reach; i <= c+reach; i++ {
			if i >= 1 && i+1 < len(r) && (k < 0 || r[i] > r[k]) {
				k = i
			}
		}
		if k < 0 || r[k] < r[k-1] || r[k] < r[k+1] {
			return 0, 0, false // the window's edge, not a peak
		}
		a, b, g := r[k-1], r[k], r[k+1]
		off := 0.0
		if den := a - 2*b + g; den < 0 {
			off = 0.5 * (a - g) / den
		}
		return float64(k) + off, b - 0.25*(a-g)*off, true
	}
	first, h1, ok := peak(lag, 2)
	if !ok {
		return lag
	}
	for m := int(float64(len(r)-2) / first); m >= 2; m-- {
		reach := max(2, int(math.Ceil(0.02*float64(m)*first)))
		p, h, ok := peak(float64(m)*first, reach)
		if ok && h >= h1/2 && math.Abs(p/float64(m)-first) < 1 {
			return p / float64(m)
		}
	}
	return first
}
