package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Enhancement (spec sound-dsp.md section 6): repair (dehum, declick,
// denoise) and enhancement (voice clean-up, clarity, stereo width), each a
// streaming Reader wrapping another, so memory does not grow with the
// programme's duration.

// Enhancement feature names, as Feature.Name spells them.
const (
	// FeatureDehum removes mains hum (NewDehum); Amount is the mains
	// frequency, 50 or 60 Hz, 0 to detect it.
	FeatureDehum = "dehum"
	// FeatureDeclick repairs clicks (NewDeclick); Amount is the detection
	// threshold in robust standard deviations, 0 for the default 5.
	FeatureDeclick = "declick"
	// FeatureDenoise reduces stationary broadband noise (NewDenoise);
	// Amount is the largest reduction in dB, 0 for the default 18.
	FeatureDenoise = "denoise"
	// FeatureVoiceCleanup cuts rumble and reduces noise under speech
	// (NewVoiceCleanup); Amount is the denoiser's largest reduction in dB,
	// 0 for the default 18.
	FeatureVoiceCleanup = "voice_cleanup"
	// FeatureClarity lifts presence, 2-5 kHz (NewClarity); Amount is the
	// band's lift in dB, 0 for the default 3.
	FeatureClarity = "clarity"
	// FeatureStereoWidth scales the side signal (NewStereoWidth); Amount
	// is the width factor, 0 for the default 1.5.
	FeatureStereoWidth = "stereo_width"
)

// FeatureNames returns the enhancement features in the order Enhance
// applies them: repairs first, as the spec's chain orders them, then the
// enhancements.
func FeatureNames() []string {
	return []string{FeatureDehum, FeatureDeclick, FeatureDenoise, FeatureVoiceCleanup, FeatureClarity, FeatureStereoWidth}
}

// Feature selects one enhancement for Enhance.
type Feature struct {
	// Name is one of FeatureNames.
	Name string
	// Amount is the feature's main parameter, as each Feature constant
	// documents; 0 means the feature's default. The feature's other
	// parameters take their defaults; use the feature's constructor to
	// set them.
	Amount float64
}

// Enhance returns r through the given features, each at most once. They
// are applied in FeatureNames order whatever their order in features, so
// repairs see the signal before it is lifted or widened. An unknown or
// repeated name, or an Amount out of the feature's range, is an
// *OptionError (ErrInvalidOption) and nothing is read. No features
// returns r itself.
func Enhance(r Reader, features []Feature) (Reader, error) {
	known := FeatureNames()
	want := make(map[string]float64, len(features))
	for i, f := range features {
		ok := false
		for _, k := range known {
			ok = ok || f.Name == k
		}
		if !ok {
			return nil, &OptionError{Op: "enhance", Field: fmt.Sprintf("Feature[%d].Name", i), Value: f.Name,
				Reason: "unknown feature (dehum, declick, denoise, voice_cleanup, clarity, stereo_width)"}
		}
		if _, dup := want[f.Name]; dup {
			return nil, &OptionError{Op: "enhance", Field: fmt.Sprintf("Feature[%d].Name", i), Value: f.Name,
				Reason: "feature given twice"}
		}
		want[f.Name] = f.Amount
	}
	// Validate every option before building anything.
	for _, name := range known {
		a, ok := want[name]
		if !ok {
			continue
		}
		if _, err := enhanceStage(name, a, nil); err != nil {
			return nil, err
		}
	}
	out := r
	for _, name := range known {
		a, ok := want[name]
		if !ok {
			continue
		}
		var err error
		if out, err = enhanceStage(name, a, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// enhanceStage builds one feature over r, or only validates its Amount
// when r is nil.
func enhanceStage(name string, amount float64, r Reader) (Reader, error) {
	switch name {
	case FeatureDehum:
		o := DehumOptions{Frequency: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewDehum(r, o)
	case FeatureDeclick:
		o := DeclickOptions{Threshold: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewDeclick(r, o)
	case FeatureDenoise:
		o := DenoiseOptions{ReductionDB: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewDenoise(r, o)
	case FeatureVoiceCleanup:
		o := VoiceCleanupOptions{ReductionDB: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewVoiceCleanup(r, o)
	case FeatureClarity:
		o := ClarityOptions{BoostDB: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewClarity(r, o)
	case FeatureStereoWidth:
		o := StereoWidthOptions{Width: amount}
		if err := o.validate(); err != nil || r == nil {
			return nil, err
		}
		return NewStereoWidth(r, o)
	}
	return nil, &OptionError{Op: "enhance", Field: "Feature.Name", Value: name, Reason: "unknown feature"}
}

// optionRange checks that v is finite and within [lo, hi].
func optionRange(op, field string, v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return &OptionError{Op: op, Field: field, Value: v, Reason: fmt.Sprintf("must be within [%g, %g]", lo, hi)}
	}
	return nil
}

// eqCascade runs a cascade of biquads over every channel of a stream.
type eqCascade struct {
	sections []biquad
	// state[c][s] is channel c's section s: x1, x2, y1, y2.
	state [][][4]float64
}

func newEQCascade(channels int, sections []biquad) *eqCascade {
	st := make([][][4]float64, channels)
	for c := range st {
		st[c] = make([][4]float64, len(sections))
	}
	return &eqCascade{sections: sections, state: st}
}

// process filters b in place.
func (e *eqCascade) process(b Block) {
	for c, ch := range b {
		for s, q := range e.sections {
			st := &e.state[c][s]
			x1, x2, y1, y2 := st[0], st[1], st[2], st[3]
			for i, x := range ch {
				y := q.b0*x + q.b1*x1 + q.b2*x2 - q.a1*y1 - q.a2*y2
				x2, x1 = x1, x
				y2, y1 = y1, y
				ch[i] = y
			}
			*st = [4]float64{x1, x2, y1, y2}
		}
	}
}

// RBJ audio-EQ-cookbook biquads, normalised to a0 = 1.

func rbjNotch(fs, f0, q float64) biquad {
	w := 2 * math.Pi * f0 / fs
	alpha := math.Sin(w) / (2 * q)
	a0 := 1 + alpha
	return biquad{b0: 1 / a0, b1: -2 * math.Cos(w) / a0, b2: 1 / a0, a1: -2 * math.Cos(w) / a0, a2: (1 - alpha) / a0}
}

func rbjHighPass(fs, f0, q float64) biquad {
	w := 2 * math.Pi * f0 / fs
	alpha := math.Sin(w) / (2 * q)
	cw := math.Cos(w)
	a0 := 1 + alpha
	return biquad{b0: (1 + cw) / 2 / a0, b1: -(1 + cw) / a0, b2: (1 + cw) / 2 / a0, a1: -2 * cw / a0, a2: (1 - alpha) / a0}
}

func rbjPeaking(fs, f0, q, gainDB float64) biquad {
	w := 2 * math.Pi * f0 / fs
	alpha := math.Sin(w) / (2 * q)
	a := math.Pow(10, gainDB/40)
	cw := math.Cos(w)
	a0 := 1 + alpha/a
	return biquad{b0: (1 + alpha*a) / a0, b1: -2 * cw / a0, b2: (1 - alpha*a) / a0, a1: -2 * cw / a0, a2: (1 - alpha/a) / a0}
}

// biquadPower is |H(e^jw)|^2 of q at frequency f for sample rate fs.
func biquadPower(q biquad, fs, f float64) float64 {
	w := 2 * math.Pi * f / fs
	z1 := complex(math.Cos(w), -math.Sin(w))
	z2 := z1 * z1
	num := complex(q.b0, 0) + complex(q.b1, 0)*z1 + complex(q.b2, 0)*z2
	den := 1 + complex(q.a1, 0)*z1 + complex(q.a2, 0)*z2
	h := num / den
	return real(h)*real(h) + imag(h)*imag(h)
}

// mapReader applies an in-place, delay-free process to every block.
type mapReader struct {
	src         Reader
	processFunc func(Block)
}

func (m *mapReader) Format() Format { return m.src.Format() }

func (m *mapReader) Read(buf Block) (int, error) {
	n, err := m.src.Read(buf)
	if n > 0 {
		m.processFunc(buf.Slice(n))
	}
	return n, err
}

// prefetchReader replays frames read ahead of time, then continues with
// the source.
type prefetchReader struct {
	src  Reader
	head Block
	pos  int
	err  error // the source's error met while prefetching (io.EOF included)
}

// prefetch reads up to frames frames of r into memory and returns them
// with a Reader that yields them and then the rest of r. The error is a
// read error other than io.EOF.
func prefetch(r Reader, frames int) (Block, Reader, error) {
	f := r.Format()
	head := NewBlock(f.Channels, frames)
	n := 0
	var srcErr error
	for n < frames {
		k, err := r.Read(blockRange(head, n, frames))
		n += k
		if errors.Is(err, io.EOF) {
			srcErr = io.EOF
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	head = head.Slice(n)
	return head, &prefetchReader{src: r, head: head, err: srcErr}, nil
}

// blockRange returns frames [from, to) of every channel of b.
func blockRange(b Block, from, to int) Block {
	s := make(Block, len(b))
	for c := range b {
		s[c] = b[c][from:to]
	}
	return s
}

func (p *prefetchReader) Format() Format { return p.src.Format() }

func (p *prefetchReader) Read(buf Block) (int, error) {
	if p.pos < p.head.Frames() {
		n := 0
		for c := range buf {
			n = copy(buf[c], p.head[c][p.pos:])
		}
		p.pos += n
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.src.Read(buf)
}

// fifoProcessor is a processor with latency: it takes input blocks and
// appends output frames to out; final is set once, after the last input.
type fifoProcessor interface {
	process(in Block, final bool, out *Block)
}

// fifoReader pulls a fifoProcessor's output through the Reader interface.
type fifoReader struct {
	src  Reader
	p    fifoProcessor
	in   Block
	out  Block
	pos  int
	done bool
}

func newFIFOReader(src Reader, p fifoProcessor) *fifoReader {
	f := src.Format()
	return &fifoReader{src: src, p: p, in: NewBlock(f.Channels, BlockFrames), out: NewBlock(f.Channels, 0)}
}

func (r *fifoReader) Format() Format { return r.src.Format() }

func (r *fifoReader) Read(buf Block) (int, error) {
	for r.out.Frames()-r.pos == 0 && !r.done {
		for c := range r.out {
			r.out[c] = r.out[c][:0]
		}
		r.pos = 0
		n, err := r.src.Read(r.in)
		final := errors.Is(err, io.EOF)
		if err != nil && !final {
			return 0, err
		}
		r.p.process(r.in.Slice(n), final, &r.out)
		r.done = final
	}
	if r.out.Frames()-r.pos == 0 {
		return 0, io.EOF
	}
	n := 0
	for c := range buf {
		n = copy(buf[c], r.out[c][r.pos:])
	}
	r.pos += n
	return n, nil
}
