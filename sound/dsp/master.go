package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Mastering (spec sound-dsp.md section 6): measure the programme's
// integrated loudness, apply the static gain that brings it to the
// profile's target, hold the true peak under the ceiling with a
// look-ahead limiter, re-measure, and raise the gain by any shortfall the
// limiter caused before the final pass.

var (
	// ErrSilence marks a programme without an integrated loudness (digital
	// silence, or only sound below the -70 LUFS absolute gate): no gain
	// can bring it to a target, so it cannot be mastered.
	ErrSilence = errors.New("dsp: cannot master silence")
	// ErrInvalidOption marks an option outside its documented range; the
	// error is an *OptionError naming the field.
	ErrInvalidOption = errors.New("dsp: invalid option")
)

// OptionError reports an option of Master or an enhancement feature that
// is out of range or unknown. It matches ErrInvalidOption with errors.Is.
type OptionError struct {
	// Op is the operation refusing the option, for example "master".
	Op string
	// Field names the option, as the caller spelled it in Go
	// ("TargetLUFS", "Profile", "Feature.Name", ...).
	Field string
	// Value is the rejected value.
	Value any
	// Reason says what was expected, for example "within [-30, -6]".
	Reason string
}

// Error implements error.
func (e *OptionError) Error() string {
	return fmt.Sprintf("dsp: %s: %s %v: %s", e.Op, e.Field, e.Value, e.Reason)
}

// Is makes an OptionError match ErrInvalidOption.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOption }

// MasterProfile is a named set of mastering targets.
type MasterProfile struct {
	// Name is the profile's name as MasterOptions.Profile spells it.
	Name string
	// TargetLUFS is the integrated loudness aimed for.
	TargetLUFS float64
	// CeilingDBTP is the largest true peak the output may reach.
	CeilingDBTP float64
	// ReleaseMS is the limiter's release time constant in milliseconds.
	ReleaseMS float64
	// Makeup reports whether the gain is raised again when limiting
	// pulled the loudness below the target. Without it the limiter only
	// catches peaks and a shortfall is accepted.
	Makeup bool
}

// The mastering profiles (spec section 6, targets table).
const (
	// ProfileBalanced aims at -14 LUFS, -1 dBTP with an 80 ms release:
	// the default, suited to most music.
	ProfileBalanced = "balanced"
	// ProfileStreaming aims at the streaming services' -14 LUFS, -1 dBTP
	// (Spotify normal, YouTube, Tidal, Amazon) with a 60 ms release.
	ProfileStreaming = "streaming"
	// ProfileTransparent aims at -16 LUFS (Apple Music, AES TD1008),
	// -1 dBTP, gently: a 100 ms release and no make-up gain, so the
	// limiter only catches the peaks the static gain pushes over.
	ProfileTransparent = "transparent"
	// ProfileLoud aims at -9 LUFS, -1 dBTP with a 50 ms release, the
	// club convention (not a standard); expect heavy limiting.
	ProfileLoud = "loud"
)

// MasterProfiles returns the profiles Master knows, the default first.
func MasterProfiles() []MasterProfile {
	return []MasterProfile{
		{Name: ProfileBalanced, TargetLUFS: -14, CeilingDBTP: -1, ReleaseMS: 80, Makeup: true},
		{Name: ProfileStreaming, TargetLUFS: -14, CeilingDBTP: -1, ReleaseMS: 60, Makeup: true},
		{Name: ProfileTransparent, TargetLUFS: -16, CeilingDBTP: -1, ReleaseMS: 100, Makeup: false},
		{Name: ProfileLoud, TargetLUFS: -9, CeilingDBTP: -1, ReleaseMS: 50, Makeup: true},
	}
}

// Limits of MasterOptions.TargetLUFS.
const (
	// MinTargetLUFS is the quietest target Master accepts.
	MinTargetLUFS = -30.0
	// MaxTargetLUFS is the loudest target Master accepts.
	MaxTargetLUFS = -6.0
)

// MasterOptions configure Master. The zero value masters with the
// balanced profile.
type MasterOptions struct {
	// Profile names one of MasterProfiles; empty means "balanced".
	Profile string
	// TargetLUFS overrides the profile's integrated loudness target when
	// non-zero. It must lie within [MinTargetLUFS, MaxTargetLUFS]
	// ([-30, -6]); otherwise Master returns an *OptionError with Field
	// "TargetLUFS".
	TargetLUFS float64
}

// MasterReport describes what Master did. Output values are measured by
// the same meter (Measure's) on the samples handed to the sink.
type MasterReport struct {
	// Profile is the profile used.
	Profile string
	// TargetLUFS and CeilingDBTP are the targets aimed for.
	TargetLUFS, CeilingDBTP float64
	// InputLUFS and InputTruePeakDBTP are the input's integrated loudness
	// and true peak.
	InputLUFS, InputTruePeakDBTP float64
	// GainDB is the static gain applied before the limiter.
	GainDB float64
	// MaxReductionDB is the largest gain reduction the limiter applied
	// (0 when it never engaged), as a positive number of dB.
	MaxReductionDB float64
	// OutputLUFS and OutputTruePeakDBTP are the output's integrated
	// loudness and true peak.
	OutputLUFS, OutputTruePeakDBTP float64
	// Passes is how many times the source was read (one measurement pass,
	// trial passes, and the final pass).
	Passes int
}

// Limiter and iteration constants.
const (
	// masterLookahead is the limiter's look-ahead (and attack) time.
	masterLookahead = 0.005
	// masterMarginDB is how far under the ceiling the limiter aims, for
	// the overshoot its time-varying gain causes between samples.
	masterMarginDB = 0.2
	// masterTolerance is the loudness error (LU) below which no further
	// make-up pass is run.
	masterTolerance = 0.1
	// masterMaxTrials bounds the trial passes that tune the gain.
	masterMaxTrials = 4
)

// Master masters a programme in bounded memory by streaming it several
// times: open must return a fresh Reader over the same programme at the
// start of each call (a Reader that is also an io.Closer is closed after
// its pass). The first pass measures the integrated loudness; the static
// gain is target minus that loudness. When the gained signal's true peak
// would pass the ceiling, trial passes run the limiter and re-measure;
// with the profile's Makeup the gain is raised by the shortfall (by the
// secant of the measured gain-to-loudness slope after the first trial)
// until the loudness is within 0.1 LU of the target or four trials have
// run, and the limiter's aim is lowered if the output's true peak passed
// the ceiling. The final pass hands the output to sink block by block
// (blocks are reused after sink returns) and measures it for the report.
//
// The limiter delays the signal internally by the look-ahead (5 ms) and
// returns it aligned, so the output has exactly the input's frames. Its
// detector is the BS.1770-4 Annex 2 4x interpolator (the meter's), so
// inter-sample peaks are caught; the required gain min(1, ceiling/peak)
// is minimum-filtered over the look-ahead, released exponentially with
// the profile's time constant and smoothed by a moving average over the
// look-ahead, which never exceeds the required gain at any sample. It aims
// 0.2 dB under the ceiling.
//
// Errors: an *OptionError (ErrInvalidOption) for an unknown profile or a
// TargetLUFS out of range; ErrSilence when the programme has no integrated
// loudness; ErrEmpty for no frames; open's, the reader's and sink's errors
// as they come.
func Master(open func() (Reader, error), opts MasterOptions, sink func(Block) error) (MasterReport, error) {
	prof, err := masterProfile(opts)
	if err != nil {
		return MasterReport{}, err
	}
	rep := MasterReport{Profile: prof.Name, TargetLUFS: prof.TargetLUFS, CeilingDBTP: prof.CeilingDBTP}
	r, err := open()
	if err != nil {
		return rep, fmt.Errorf("dsp: master: open: %w", err)
	}
	in, err := Measure(r)
	closeReader(r)
	rep.Passes++
	if err != nil {
		return rep, fmt.Errorf("dsp: master: %w", err)
	}
	if !in.IntegratedAvailable {
		return rep, fmt.Errorf("%w: %s", ErrSilence, in.IntegratedReason)
	}
	rep.InputLUFS, rep.InputTruePeakDBTP = in.IntegratedLUFS, in.TruePeakDBTP
	gain := prof.TargetLUFS - in.IntegratedLUFS
	aim := prof.CeilingDBTP - masterMarginDB

	if in.TruePeakDBTP+gain > aim {
		var prevGain, prevI float64
		havePrev := false
		for trial := 0; trial < masterMaxTrials; trial++ {
			out, _, err := masterPass(open, gain, aim, prof.ReleaseMS, nil)
			rep.Passes++
			if err != nil {
				return rep, err
			}
			if !out.IntegratedAvailable {
				return rep, fmt.Errorf("%w: %s", ErrSilence, out.IntegratedReason)
			}
			overshoot := out.TruePeakAvailable && out.TruePeakDBTP > prof.CeilingDBTP
			if overshoot {
				aim -= out.TruePeakDBTP - prof.CeilingDBTP + 0.05
			}
			shortfall := prof.TargetLUFS - out.IntegratedLUFS
			if !prof.Makeup || (math.Abs(shortfall) < masterTolerance && !overshoot) {
				break
			}
			step := shortfall
			if havePrev && gain != prevGain {
				// The loudness gained per dB shrinks as the limiter works
				// harder; the secant tracks it.
				slope := (out.IntegratedLUFS - prevI) / (gain - prevGain)
				step = shortfall / min(max(slope, 0.1), 1)
			}
			prevGain, prevI, havePrev = gain, out.IntegratedLUFS, true
			gain += min(step, 12)
		}
	}

	out, minGain, err := masterPass(open, gain, aim, prof.ReleaseMS, sink)
	rep.Passes++
	if err != nil {
		return rep, err
	}
	rep.GainDB = gain
	if minGain < 1 {
		rep.MaxReductionDB = -20 * math.Log10(minGain)
	}
	rep.OutputLUFS, rep.OutputTruePeakDBTP = out.IntegratedLUFS, out.TruePeakDBTP
	return rep, nil
}

// masterProfile resolves and validates the options.
func masterProfile(opts MasterOptions) (MasterProfile, error) {
	name := opts.Profile
	if name == "" {
		name = ProfileBalanced
	}
	var prof MasterProfile
	found := false
	for _, p := range MasterProfiles() {
		if p.Name == name {
			prof, found = p, true
		}
	}
	if !found {
		return prof, &OptionError{Op: "master", Field: "Profile", Value: opts.Profile,
			Reason: "unknown profile (balanced, streaming, transparent, loud)"}
	}
	if t := opts.TargetLUFS; t != 0 {
		if !(t >= MinTargetLUFS && t <= MaxTargetLUFS) {
			return prof, &OptionError{Op: "master", Field: "TargetLUFS", Value: t,
				Reason: fmt.Sprintf("must be within [%g, %g]", MinTargetLUFS, MaxTargetLUFS)}
		}
		prof.TargetLUFS = t
	}
	return prof, nil
}

// masterPass streams one opening of the programme through the gain and
// the limiter into sink (when not nil) and the meter.
func masterPass(open func() (Reader, error), gainDB, aimDBTP, releaseMS float64, sink func(Block) error) (Loudness, float64, error) {
	r, err := open()
	if err != nil {
		return Loudness{}, 1, fmt.Errorf("dsp: master: open: %w", err)
	}
	defer closeReader(r)
	lr := newLimitReader(r, math.Pow(10, gainDB/20), math.Pow(10, aimDBTP/20), releaseMS/1000)
	f := r.Format()
	if err := f.Validate(); err != nil {
		return Loudness{}, 1, fmt.Errorf("dsp: master: %w", err)
	}
	m := NewMeter(f)
	buf := NewBlock(f.Channels, BlockFrames)
	for {
		n, err := lr.Read(buf)
		if n > 0 {
			b := buf.Slice(n)
			m.Write(b)
			if sink != nil {
				if err := sink(b); err != nil {
					return m.Result(), lr.lim.minGain, err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m.Result(), lr.lim.minGain, fmt.Errorf("dsp: master: %w", err)
		}
	}
	res := m.Result()
	if res.Frames == 0 {
		return res, 1, fmt.Errorf("dsp: master: %w", ErrEmpty)
	}
	return res, lr.lim.minGain, nil
}

// closeReader closes r when it is an io.Closer.
func closeReader(r Reader) {
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}

// limitReader applies a static gain and a true-peak limiter to a Reader,
// frame-aligned with its input.
type limitReader struct {
	src    Reader
	gain   float64
	lim    *peakLimiter
	in     Block
	inPos  int
	inLen  int
	eof    bool
	pend   int // zero frames still to push after the end
	frame  []float64
	outBuf []float64
}

func newLimitReader(src Reader, gain, ceiling, release float64) *limitReader {
	f := src.Format()
	ch := max(f.Channels, 1)
	rate := max(f.SampleRate, 1)
	lim := newPeakLimiter(ch, rate, ceiling, release)
	return &limitReader{
		src: src, gain: gain, lim: lim,
		in:     NewBlock(ch, BlockFrames),
		pend:   lim.latency(),
		frame:  make([]float64, ch),
		outBuf: make([]float64, ch),
	}
}

func (r *limitReader) Format() Format { return r.src.Format() }

func (r *limitReader) Read(buf Block) (int, error) {
	n := 0
	want := buf.Frames()
	for n < want {
		if r.inPos == r.inLen && !r.eof {
			k, err := r.src.Read(r.in)
			r.inPos, r.inLen = 0, k
			if errors.Is(err, io.EOF) {
				r.eof = true
			} else if err != nil {
				return n, err
			}
			continue
		}
		if r.inPos < r.inLen {
			for c := range r.frame {
				r.frame[c] = r.in[c][r.inPos] * r.gain
			}
			r.inPos++
		} else if r.pend > 0 {
			for c := range r.frame {
				r.frame[c] = 0
			}
			r.pend--
		} else {
			break
		}
		if r.lim.push(r.frame, r.outBuf) {
			for c := range buf {
				buf[c][n] = r.outBuf[c]
			}
			n++
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// peakLimiter is a look-ahead true-peak limiter working one frame at a
// time (channels linked: one gain for all). See Master for the method.
type peakLimiter struct {
	ceiling float64
	look    int     // look-ahead in frames (L)
	relCoef float64 // release smoothing per frame
	size    int     // ring length of x and ym
	x       [][]float64
	ym      []float64
	i       int // frames pushed

	// Sliding minimum of the required gain over the last L frames: a
	// monotonic deque in a ring of L+1 entries.
	dqIdx []int
	dqVal []float64
	dqH   int
	dqN   int

	rel     float64   // release state
	rRing   []float64 // last L released gains
	rSum    float64
	minGain float64
}

func newPeakLimiter(channels, rate int, ceiling, release float64) *peakLimiter {
	look := max(int(math.Round(masterLookahead*float64(rate))), 1)
	l := &peakLimiter{
		ceiling: ceiling,
		look:    look,
		relCoef: 1 - math.Exp(-1/(max(release, 0.001)*float64(rate))),
		size:    look + 32,
		x:       make([][]float64, channels),
		dqIdx:   make([]int, look+1),
		dqVal:   make([]float64, look+1),
		rel:     1,
		rRing:   make([]float64, look),
		rSum:    float64(look),
		minGain: 1,
	}
	for c := range l.x {
		l.x[c] = make([]float64, l.size)
	}
	l.ym = make([]float64, l.size)
	for j := range l.rRing {
		l.rRing[j] = 1
	}
	return l
}

// latency is how many frames push takes in before it returns the first.
func (l *peakLimiter) latency() int { return l.look + 5 }

func (l *peakLimiter) at(i int) int { return ((i % l.size) + l.size) % l.size }

// push takes the next input frame and, once the look-ahead is full,
// writes the output frame latency() frames earlier to out and returns
// true.
func (l *peakLimiter) push(frame, out []float64) bool {
	i := l.i
	l.i++
	pos := l.at(i)
	var ym float64
	for c, v := range frame {
		xc := l.x[c]
		xc[pos] = v
		var w [truePeakTaps]float64
		for j := range w {
			w[j] = xc[l.at(i-truePeakTaps+1+j)]
		}
		ym = max(ym, interpolate4(w[:]))
	}
	l.ym[pos] = ym

	// The frame whose neighbourhood is now fully interpolated: the window
	// ending at i covers (i-6, i-5), the one ending at i-1 (i-7, i-6).
	k := i - 6
	if k < 0 {
		return false
	}
	kp := l.at(k)
	q := max(ym, l.ym[l.at(i-1)])
	for c := range l.x {
		q = max(q, math.Abs(l.x[c][kp]))
	}
	t := 1.0
	if q > l.ceiling {
		t = l.ceiling / q
	}

	// Sliding minimum over [k-L+1, k].
	n := len(l.dqIdx)
	for l.dqN > 0 && l.dqVal[(l.dqH+l.dqN-1)%n] >= t {
		l.dqN--
	}
	l.dqIdx[(l.dqH+l.dqN)%n], l.dqVal[(l.dqH+l.dqN)%n] = k, t
	l.dqN++
	for l.dqIdx[l.dqH] <= k-l.look {
		l.dqH = (l.dqH + 1) % n
		l.dqN--
	}
	hmin := l.dqVal[l.dqH]

	// Instant attack to the minimum, exponential release above it.
	if hmin < l.rel {
		l.rel = hmin
	} else {
		l.rel += (hmin - l.rel) * l.relCoef
	}
	slot := k % l.look
	l.rSum += l.rel - l.rRing[slot]
	l.rRing[slot] = l.rel
	if slot == 0 {
		var s float64
		for _, v := range l.rRing {
			s += v
		}
		l.rSum = s
	}

	o := k - l.look + 1
	if o < 0 {
		return false
	}
	g := min(l.rSum/float64(l.look), 1)
	l.minGain = min(l.minGain, g)
	op := l.at(o)
	for c := range out {
		out[c] = l.x[c][op] * g
	}
	return true
}
