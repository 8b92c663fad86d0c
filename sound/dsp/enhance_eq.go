package dsp

import (
	"fmt"
	"math"
)

// DehumOptions configure NewDehum. The zero value detects the mains
// frequency and notches ten harmonics at Q 30.
type DehumOptions struct {
	// Frequency is the mains frequency, 50 or 60 Hz; 0 (the default)
	// detects it from the first 4 s of the programme.
	Frequency float64
	// Harmonics is how many multiples of Frequency are notched (the
	// fundamental included), 1 to 20; 0 means 10. Multiples at or above
	// 0.45 of the sample rate are skipped.
	Harmonics int
	// Q is each notch's quality factor, 5 to 100; 0 means 30 (1.7 Hz wide
	// at 50 Hz). A higher Q is narrower but settles more slowly.
	Q float64
}

func (o *DehumOptions) validate() error {
	if o.Frequency != 0 && o.Frequency != 50 && o.Frequency != 60 {
		return &OptionError{Op: "dehum", Field: "Frequency", Value: o.Frequency, Reason: "must be 0 (detect), 50 or 60"}
	}
	if o.Harmonics < 0 || o.Harmonics > 20 {
		return &OptionError{Op: "dehum", Field: "Harmonics", Value: o.Harmonics, Reason: "must be within [0, 20]"}
	}
	if o.Q != 0 {
		if err := optionRange("dehum", "Q", o.Q, 5, 100); err != nil {
			return err
		}
	}
	return nil
}

// dehumDetectSeconds is how much of the programme mains detection reads
// ahead (held in memory once).
const dehumDetectSeconds = 4

// NewDehum returns r with mains hum removed by a cascade of RBJ notch
// biquads (b = [1, -2cos w0, 1], a = [1+alpha, -2cos w0, 1-alpha]) at the
// mains frequency and its harmonics, run forward (causal, so the notches
// shift phase near their frequencies; the rest of the spectrum is left
// within hundredths of a dB).
//
// With Frequency 0 the first 4 s are read ahead and the mono mixdown's
// narrow-band power at k*50 and k*60 Hz (k = 1..6) is compared with the
// power 3 Hz to either side; the candidate whose harmonics stand out more
// wins, 50 Hz on a tie (no hum). Errors are *OptionError for invalid
// options and the reader's while reading ahead.
func NewDehum(r Reader, o DehumOptions) (Reader, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := r.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.Harmonics == 0 {
		o.Harmonics = 10
	}
	if o.Q == 0 {
		o.Q = 30
	}
	fs := float64(f.SampleRate)
	if o.Frequency == 0 {
		head, rr, err := prefetch(r, dehumDetectSeconds*f.SampleRate)
		if err != nil {
			return nil, fmt.Errorf("dsp: dehum: %w", err)
		}
		r = rr
		o.Frequency = detectMains(head, fs)
	}
	var sections []biquad
	for k := 1; k <= o.Harmonics; k++ {
		fk := float64(k) * o.Frequency
		if fk >= 0.45*fs {
			break
		}
		sections = append(sections, rbjNotch(fs, fk, o.Q))
	}
	eq := newEQCascade(f.Channels, sections)
	return &mapReader{src: r, processFunc: eq.process}, nil
}

// detectMains picks 50 or 60 Hz for the hum in b.
func detectMains(b Block, fs float64) float64 {
	n := b.Frames()
	if n == 0 {
		return 50
	}
	mono := make([]float64, n)
	for _, ch := range b {
		for i, v := range ch {
			mono[i] += v
		}
	}
	for i := range mono {
		mono[i] *= 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
	}
	score := func(f0 float64) float64 {
		var s float64
		for k := 1; k <= 6; k++ {
			fk := float64(k) * f0
			side := (goertzel(mono, fs, fk-3) + goertzel(mono, fs, fk+3)) / 2
			s += math.Log10((goertzel(mono, fs, fk) + 1e-20) / (side + 1e-20))
		}
		return s
	}
	if score(60) > score(50) {
		return 60
	}
	return 50
}

// goertzel returns the power of x at frequency f (Hz).
func goertzel(x []float64, fs, f float64) float64 {
	w := 2 * math.Pi * f / fs
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range x {
		s1, s2 = v+c*s1-s2, s1
	}
	return s1*s1 + s2*s2 - c*s1*s2
}

// StereoWidthOptions configure NewStereoWidth.
type StereoWidthOptions struct {
	// Width multiplies the side signal (L-R)/2 and leaves the mid (L+R)/2
	// alone, so the side-to-mid RMS ratio changes by Width and the energy
	// ratio by Width². 1 leaves the image as it is, above 1 widens, below
	// narrows. Range (0, 4]; 0 means the default 1.5.
	Width float64
}

func (o *StereoWidthOptions) validate() error {
	if o.Width == 0 {
		return nil
	}
	return optionRange("stereo_width", "Width", o.Width, 0.01, 4)
}

// NewStereoWidth returns r with its stereo image widened or narrowed by
// mid/side scaling (see StereoWidthOptions). Only stereo has a side
// signal: other channel counts pass through unchanged. Widening can raise
// peaks; the output is not limited.
func NewStereoWidth(r Reader, o StereoWidthOptions) (Reader, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Width == 0 {
		o.Width = 1.5
	}
	if r.Format().Channels != 2 {
		return r, nil
	}
	w := o.Width
	return &mapReader{src: r, processFunc: func(b Block) {
		l, rr := b[0], b[1]
		for i := range l {
			m, s := (l[i]+rr[i])/2, (l[i]-rr[i])/2*w
			l[i], rr[i] = m+s, m-s
		}
	}}, nil
}

// Clarity band edges and shape.
const (
	clarityLowHz  = 2000
	clarityHighHz = 5000
	// clarityQ gives a bell about two octaves wide centred on the band.
	clarityQ = 0.7
)

// ClarityOptions configure NewClarity.
type ClarityOptions struct {
	// BoostDB is the lift of the 2-5 kHz presence band: the mean power
	// gain over the band for a flat spectrum. Range [-12, 12]; 0 means the
	// default +3 dB.
	BoostDB float64
	// CeilingDBTP is the true peak the output may not pass; a limiter
	// (Master's, 5 ms look-ahead, 50 ms release) catches the peaks the lift
	// raises over it. Range [-20, 0]; 0 means the default -1 dBTP.
	CeilingDBTP float64
}

func (o *ClarityOptions) validate() error {
	if err := optionRange("clarity", "BoostDB", o.BoostDB, -12, 12); err != nil {
		return err
	}
	return optionRange("clarity", "CeilingDBTP", o.CeilingDBTP, -20, 0)
}

// NewClarity returns r with the presence band lifted by an RBJ peaking
// biquad centred at 3.16 kHz (the band's geometric centre) with Q 0.7,
// whose peak gain is solved so the band's mean power gain is BoostDB,
// followed by a true-peak safety limiter at CeilingDBTP (which touches
// only what would pass the ceiling).
func NewClarity(r Reader, o ClarityOptions) (Reader, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := r.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.BoostDB == 0 {
		o.BoostDB = 3
	}
	if o.CeilingDBTP == 0 {
		o.CeilingDBTP = -1
	}
	fs := float64(f.SampleRate)
	eq := newEQCascade(f.Channels, []biquad{clarityBell(fs, o.BoostDB)})
	lifted := &mapReader{src: r, processFunc: eq.process}
	return newLimitReader(lifted, 1, math.Pow(10, (o.CeilingDBTP-masterMarginDB)/20), 0.05), nil
}

// clarityBell solves the peaking filter whose mean power gain over the
// clarity band is boostDB.
func clarityBell(fs, boostDB float64) biquad {
	hi := min(clarityHighHz, 0.45*fs)
	mean := func(peak float64) float64 {
		q := rbjPeaking(fs, math.Sqrt(clarityLowHz*clarityHighHz), clarityQ, peak)
		const n = 256
		var s float64
		for i := range n {
			s += biquadPower(q, fs, clarityLowHz+(hi-clarityLowHz)*(float64(i)+0.5)/n)
		}
		return 10 * math.Log10(s/n)
	}
	// The band's mean gain grows with the peak gain: bisect.
	lo, up := -40.0, 40.0
	for range 60 {
		mid := (lo + up) / 2
		if mean(mid) < boostDB {
			lo = mid
		} else {
			up = mid
		}
	}
	return rbjPeaking(fs, math.Sqrt(clarityLowHz*clarityHighHz), clarityQ, (lo+up)/2)
}

// VoiceCleanupOptions configure NewVoiceCleanup.
type VoiceCleanupOptions struct {
	// CutoffHz is the high-pass corner (4th-order Butterworth, -24 dB per
	// octave). Range [40, 300]; 0 means the default 100 Hz, which takes
	// rumble at 50 Hz down 24 dB and at 30 Hz down 42 dB.
	CutoffHz float64
	// ReductionDB is the denoiser's largest reduction (see
	// DenoiseOptions). Range [3, 40]; 0 means the default 18 dB.
	ReductionDB float64
}

func (o *VoiceCleanupOptions) validate() error {
	if o.CutoffHz != 0 {
		if err := optionRange("voice_cleanup", "CutoffHz", o.CutoffHz, 40, 300); err != nil {
			return err
		}
	}
	if o.ReductionDB != 0 {
		return optionRange("voice_cleanup", "ReductionDB", o.ReductionDB, 3, 40)
	}
	return nil
}

// NewVoiceCleanup returns r cleaned up for speech: a 4th-order
// Butterworth high-pass (two biquads, Q 0.5412 and 1.3066) removes rumble
// and handling noise, then NewDenoise reduces the broadband noise floor.
func NewVoiceCleanup(r Reader, o VoiceCleanupOptions) (Reader, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	f := r.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if o.CutoffHz == 0 {
		o.CutoffHz = 100
	}
	fs := float64(f.SampleRate)
	eq := newEQCascade(f.Channels, []biquad{
		rbjHighPass(fs, o.CutoffHz, 0.5411961001461970),
		rbjHighPass(fs, o.CutoffHz, 1.3065629648763766),
	})
	return NewDenoise(&mapReader{src: r, processFunc: eq.process}, DenoiseOptions{ReductionDB: o.ReductionDB})
}
