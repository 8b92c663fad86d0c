package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
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
	// masterMarginDB is how far under the ceiling the limiter aims. It
	// leaves room for the meter's stated error (TruePeakErrorDB), for the
	// limiter's own overshoot (the few thousandths of a dB its changing
	// gain adds between samples), and for content between 0.4975 fs and the
	// Nyquist frequency, which the meter reads lower than a brick-wall
	// reference does: up to 0.045 dB on the worst programme the tests
	// measure (white noise in full band, limited hard).
	masterMarginDB = 0.1
	// masterTolerance is the loudness error (LU) below which no further
	// make-up pass is run.
	masterTolerance = 0.1
	// masterMaxTrials bounds the trial passes that tune the gain.
	masterMaxTrials = 4
	// masterMaxChecks bounds the further trial passes that verify the
	// final gain and aim against the ceiling.
	masterMaxChecks = 3
)

// Master masters a programme in bounded memory by streaming it several
// times: open must return a fresh Reader over the same programme at the
// start of each call (a Reader that is also an io.Closer is closed after
// its pass). The first pass measures the integrated loudness; the static
// gain is target minus that loudness. When the gained signal's true peak
// would pass the limiter's aim (0.1 dB under the ceiling), trial passes
// run the limiter and re-measure; with the profile's Makeup the gain is
// raised by the shortfall (by the secant of the measured gain-to-loudness
// slope after the first trial) until the loudness is within 0.1 LU of the
// target or four trials have run. The final pass hands the output to sink
// block by block (blocks are reused after sink returns) and measures it for
// the report.
//
// The ceiling holds by construction and is verified: every trial's output
// is measured by the meter, and one that reads above the ceiling less
// TruePeakErrorDB lowers the aim by the excess. The final pass runs with a
// gain and aim a trial has already run and verified (a further trial
// verifies them when the last one changed them, up to three); passes are
// deterministic, so the final output is the verified one, sample for
// sample. The report's OutputTruePeakDBTP is that output's reading.
//
// The limiter delays the signal internally and returns it aligned, so the
// output has exactly the input's frames. Its detector is the true-peak
// meter's interpolator (see Loudness.TruePeakDBTP), so it sees every
// inter-sample peak the meter reads; see peakLimiter for the gain stage
// (5 ms look-ahead, release from the profile).
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
	// limit is the most the meter may read: the ceiling, less the meter's
	// own error.
	limit := prof.CeilingDBTP - TruePeakErrorDB

	if in.TruePeakDBTP+gain > aim {
		// run is one trial; verified reports whether the last one ran
		// with the current gain and aim and stayed under the limit.
		verified := false
		run := func() (Loudness, error) {
			out, _, err := masterPass(open, gain, aim, prof.ReleaseMS, nil)
			rep.Passes++
			if err != nil {
				return out, err
			}
			if !out.IntegratedAvailable {
				return out, fmt.Errorf("%w: %s", ErrSilence, out.IntegratedReason)
			}
			verified = !out.TruePeakAvailable || out.TruePeakDBTP <= limit
			if !verified {
				aim -= out.TruePeakDBTP - limit + 0.02
			}
			return out, nil
		}
		var prevGain, prevI float64
		havePrev := false
		for trial := 0; trial < masterMaxTrials; trial++ {
			out, err := run()
			if err != nil {
				return rep, err
			}
			shortfall := prof.TargetLUFS - out.IntegratedLUFS
			if !prof.Makeup || math.Abs(shortfall) < masterTolerance {
				if verified {
					break
				}
				continue
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
			verified = false
		}
		for check := 0; !verified && check < masterMaxChecks; check++ {
			if _, err := run(); err != nil {
				return rep, err
			}
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
	src  Reader
	gain float64
	lim  *peakLimiter
	in   Block
	eof  bool
	// out holds limited frames not yet read, from outPos on.
	out    Block
	outPos int
}

func newLimitReader(src Reader, gain, ceiling, release float64) *limitReader {
	f := src.Format()
	ch := max(f.Channels, 1)
	return &limitReader{
		src: src, gain: gain,
		lim: newPeakLimiter(ch, max(f.SampleRate, 1), ceiling, release),
		in:  NewBlock(ch, BlockFrames),
	}
}

func (r *limitReader) Format() Format { return r.src.Format() }

func (r *limitReader) Read(buf Block) (int, error) {
	for r.outPos == r.out.Frames() {
		if r.eof {
			if r.lim.flushed {
				return 0, io.EOF
			}
			r.out, r.outPos = r.lim.flush(), 0
			continue
		}
		k, err := r.src.Read(r.in)
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return 0, err
		}
		if k > 0 {
			b := r.in.Slice(k)
			for _, ch := range b {
				for i := range ch {
					ch[i] *= r.gain
				}
			}
			r.out, r.outPos = r.lim.process(b), 0
		}
	}
	n := min(buf.Frames(), r.out.Frames()-r.outPos)
	for c := range buf {
		copy(buf[c][:n], r.out[c][r.outPos:r.outPos+n])
	}
	r.outPos += n
	return n, nil
}

// peakLimiter is a look-ahead true-peak limiter (channels linked: one gain
// for all). It works in blocks and returns its input delayed; flush
// returns the rest. See Master for the method.
//
// Detection runs the meter's interpolator over every input interval
// (refining every coarse local maximum within 0.69 dB of the ceiling, so
// every peak that can pass the ceiling is read as the meter reads it) and
// takes the largest magnitude over the channels. The required gain
// t = min(1, ceiling/peak) of an interval is spread by a sliding minimum
// over the look-ahead L plus 2G intervals (G = 16), released
// exponentially, and smoothed by a moving average over L. The output is
// aligned so that every frame within G of a peak's interval gets a gain at
// or below that peak's t: the gain is settled across the inputs that weigh
// most in the interpolation of the peak, so the limited signal's
// inter-sample peak is the detected one scaled by the gain there, up to
// terms in the gain's change over the kernel that the mastering tests
// measure under 0.005 dB.
type peakLimiter struct {
	f       *truePeakFilter
	det     []*truePeakStream
	ceiling float64
	look    int     // look-ahead in frames (L)
	relCoef float64 // release smoothing per frame

	// x holds each channel's input from frame base on, for the output.
	x    [][]float64
	base int
	// next is the next input interval through the gain stage.
	next int
	// total counts the input frames; emitted the output frames.
	total, emitted int
	flushed        bool

	peaks []float64 // scratch: the 2x intervals' peaks of one call
	d     []float64 // scratch: the input intervals' peaks of one call

	// Sliding minimum of the required gain over the last L+2G intervals:
	// a monotonic deque in a ring.
	dqIdx []int
	dqVal []float64
	dqH   int
	dqN   int

	rel   float64   // release state
	rRing []float64 // the last L released gains
	rSum  float64
	count int // intervals through the gain stage

	out     Block
	minGain float64
}

// limiterGuard is G: frames either side of a peak's interval held at or
// below its gain.
const limiterGuard = 16

func newPeakLimiter(channels, rate int, ceiling, release float64) *peakLimiter {
	look := max(int(math.Round(masterLookahead*float64(rate))), 1)
	w := look + 2*limiterGuard
	l := &peakLimiter{
		f:       newTruePeakFilter(),
		det:     make([]*truePeakStream, channels),
		ceiling: ceiling,
		look:    look,
		relCoef: 1 - math.Exp(-1/(max(release, 0.001)*float64(rate))),
		x:       make([][]float64, channels),
		dqIdx:   make([]int, w+1),
		dqVal:   make([]float64, w+1),
		rel:     1,
		rRing:   make([]float64, look),
		rSum:    float64(look),
		out:     NewBlock(channels, 0),
		minGain: 1,
	}
	for c := range l.det {
		l.det[c] = newTruePeakStream()
	}
	l.next, _ = floorDiv(l.det[0].next, 2)
	for j := range l.rRing {
		l.rRing[j] = 1
	}
	return l
}

// process takes the next input frames and returns the output frames they
// complete (none until enough input has come for the first). The returned
// block is reused by the next call.
func (l *peakLimiter) process(b Block) Block {
	for c := range l.x {
		l.f.push(l.det[c], b[c])
		l.x[c] = append(l.x[c], b[c]...)
	}
	l.total += b.Frames()
	return l.run()
}

// flush returns the output frames still held, once the input has ended.
func (l *peakLimiter) flush() Block {
	for _, s := range l.det {
		l.f.end(s)
	}
	l.flushed = true
	l.run()
	// Past the detection's reach the signal is zero: no gain is required.
	for l.emitted < l.total {
		l.gain(0)
	}
	return l.out
}

// run scans every interval whose inputs are all present and passes it
// through the gain stage, emitting the frames that completes.
func (l *peakLimiter) run() Block {
	for c := range l.out {
		l.out[c] = l.out[c][:0]
	}
	s0 := l.det[0]
	from, hi := s0.next, s0.z0+len(s0.z)-tpAfter // 2x intervals ready; hi is even
	if hi > from {
		l.peaks = zeros(l.peaks, hi-from)
		for _, s := range l.det {
			l.f.scan(s, nil, l.peaks, from, l.ceiling)
		}
		// Input interval n is 2x intervals 2n and 2n+1.
		l.d = zeros(l.d, hi/2-l.next)
		for i, p := range l.peaks {
			n, _ := floorDiv(from+i, 2)
			l.d[n-l.next] = max(l.d[n-l.next], p)
		}
		for _, d := range l.d {
			l.gain(d)
		}
	}
	// Keep the inputs from the next output frame on.
	if d := l.next - l.look - limiterGuard + 1 - l.base; d > 0 {
		d = min(d, len(l.x[0]))
		for c := range l.x {
			l.x[c] = l.x[c][:copy(l.x[c], l.x[c][d:])]
		}
		l.base += d
	}
	return l.out
}

// zeros returns n zeros in s's storage when it has room.
func zeros(s []float64, n int) []float64 {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// gain passes the next input interval, whose peak is d, through the gain
// stage and emits the output frame it completes, if any.
func (l *peakLimiter) gain(d float64) {
	n := l.next
	l.next++
	t := 1.0
	if d > l.ceiling {
		t = l.ceiling / d
	}
	w := len(l.dqIdx)
	for l.dqN > 0 && l.dqVal[(l.dqH+l.dqN-1)%w] >= t {
		l.dqN--
	}
	l.dqIdx[(l.dqH+l.dqN)%w], l.dqVal[(l.dqH+l.dqN)%w] = n, t
	l.dqN++
	for l.dqIdx[l.dqH] <= n-(w-1) {
		l.dqH = (l.dqH + 1) % w
		l.dqN--
	}
	hmin := l.dqVal[l.dqH]

	// Instant attack to the minimum, exponential release above it.
	if hmin < l.rel {
		l.rel = hmin
	} else {
		l.rel += (hmin - l.rel) * l.relCoef
	}
	slot := l.count % l.look
	l.count++
	l.rSum += l.rel - l.rRing[slot]
	l.rRing[slot] = l.rel
	if slot == 0 {
		var s float64
		for _, v := range l.rRing {
			s += v
		}
		l.rSum = s
	}

	o := n - l.look - limiterGuard + 1
	if o < 0 || o >= l.total {
		return
	}
	g := min(l.rSum/float64(l.look), 1)
	l.minGain = min(l.minGain, g)
	for c := range l.out {
		l.out[c] = append(l.out[c], l.x[c][o-l.base]*g)
	}
	l.emitted++
}
