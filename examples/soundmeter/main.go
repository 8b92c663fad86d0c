// Command soundmeter measures a WAV file with the platform's built-in
// loudness meter (sound/dsp: ITU-R BS.1770-4 integrated loudness, EBU Tech
// 3342 loudness range, sample peak and true peak) and, when ffmpeg is on
// PATH, with ffmpeg's ebur128 filter for comparison.
//
//	soundmeter -in FILE.wav [-reference]
//	soundmeter -generate [-duration 10m] [-keep | -out FILE.wav] [-more] [-reference]
//
// -more also times tempo, key and mastering (streaming profile) on the same
// file, each a pass of its own, and prints the peak memory after them.
//
// -reference also reads the true peak with the reference meter of
// sound/dsp/dsptest, which shares no code or method with the engine's (it
// zero-pads each block's spectrum to 16x, 768 kHz at 48 kHz), and prints the
// difference: the check that needs no ffmpeg, for example on a mastered
// file against its ceiling. It is slow (tens of seconds for ten minutes).
//
// With -generate it first writes a music-like test programme (48 kHz
// stereo 24-bit PCM: plucked tones on a beat with a bass line, noise
// bursts and air, in sections of different level) to a temp file, measures
// that, and removes it unless -keep is given; -out writes it to FILE.wav
// instead and keeps it (the README's sound walk-through uploads such a
// file as mix.wav).
//
// It prints the four values (or why one is unavailable), the wall time of
// decoding and measuring, and the process's peak resident memory (VmHWM
// from /proc/self/status, read before ffmpeg runs; ffmpeg is a separate
// process). With ffmpeg it runs
//
//	ffmpeg -nostats -i FILE -af ebur128=peak=true -f null -
//
// parses the summary (I, LRA, true peak), and prints its wall time and the
// differences in integrated loudness and true peak.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/sound/dsp"
	"github.com/creatormusic/platform/sound/dsp/dsptest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soundmeter:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("soundmeter", flag.ContinueOnError)
	in := fs.String("in", "", "WAV file to measure")
	generate := fs.Bool("generate", false, "first write a 48 kHz stereo 24-bit music-like test WAV to a temp file and measure it")
	duration := fs.Duration("duration", 10*time.Minute, "length of the -generate programme")
	keep := fs.Bool("keep", false, "keep the -generate file")
	outPath := fs.String("out", "", "write the -generate file to this path and keep it")
	more := fs.Bool("more", false, "also time tempo, key and streaming mastering on the same file, each its own pass")
	reference := fs.Bool("reference", false, "also read the true peak with the independent reference meter of sound/dsp/dsptest (slow)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := *in
	if *outPath != "" && !*generate {
		return errors.New("-out names where -generate writes its file")
	}
	if *generate {
		var f *os.File
		var err error
		if *outPath != "" {
			f, err = os.OpenFile(*outPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		} else {
			f, err = os.CreateTemp("", "soundmeter-*.wav")
		}
		if err != nil {
			return err
		}
		path = f.Name()
		if !*keep && *outPath == "" {
			defer os.Remove(path)
		}
		start := time.Now()
		err = writeProgramme(f, *duration)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("generate: %w", err)
		}
		st, _ := os.Stat(path)
		fmt.Fprintf(out, "generated %s: %v, 48000 Hz, 2 ch, 24-bit, %.1f MB in %.2f s\n",
			path, *duration, float64(st.Size())/1e6, time.Since(start).Seconds())
	}
	if path == "" {
		return errors.New("give -in FILE.wav or -generate")
	}

	start := time.Now()
	res, format, err := measureFile(path)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	hwm := peakRSS()

	seconds := float64(res.Frames) / float64(format.SampleRate)
	fmt.Fprintf(out, "file: %s (%d Hz, %d ch, %d-bit, %.1f s)\n", path, format.SampleRate, format.Channels, format.BitDepth, seconds)
	fmt.Fprintln(out, "sound/dsp meter:")
	fmt.Fprintf(out, "  integrated:   %s\n", value(res.IntegratedLUFS, "LUFS", res.IntegratedAvailable, res.IntegratedReason))
	fmt.Fprintf(out, "  range:        %s\n", value(res.LoudnessRangeLU, "LU", res.LoudnessRangeAvailable, res.LoudnessRangeReason))
	fmt.Fprintf(out, "  sample peak:  %s\n", value(res.SamplePeakDBFS, "dBFS", res.SamplePeakAvailable, res.SamplePeakReason))
	fmt.Fprintf(out, "  true peak:    %s\n", value(res.TruePeakDBTP, "dBTP", res.TruePeakAvailable, res.TruePeakReason))
	fmt.Fprintf(out, "  wall time:    %.3f s (decode + measure, %.0fx real time)\n", elapsed.Seconds(), seconds/elapsed.Seconds())
	fmt.Fprintf(out, "  peak RSS:     %s\n", hwm)

	if *reference {
		if err := referencePeak(out, path, res); err != nil {
			return err
		}
	}
	if *more {
		if err := timeMore(out, path, *reference); err != nil {
			return err
		}
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		fmt.Fprintln(out, "ffmpeg: not on PATH, no comparison")
		return nil
	}
	start = time.Now()
	cmd := exec.Command(ffmpeg, "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-")
	stderr, err := cmd.CombinedOutput()
	ffElapsed := time.Since(start)
	if err != nil {
		return fmt.Errorf("ffmpeg: %w\n%s", err, lastLines(string(stderr), 10))
	}
	sum, err := parseEBUR128Summary(string(stderr))
	if err != nil {
		return fmt.Errorf("ffmpeg: %w", err)
	}
	fmt.Fprintln(out, "ffmpeg ebur128=peak=true:")
	fmt.Fprintf(out, "  integrated:   %.1f LUFS\n", sum.integrated)
	fmt.Fprintf(out, "  range:        %.1f LU\n", sum.lra)
	fmt.Fprintf(out, "  true peak:    %.1f dBTP\n", sum.truePeak)
	fmt.Fprintf(out, "  wall time:    %.3f s\n", ffElapsed.Seconds())
	if res.IntegratedAvailable {
		fmt.Fprintf(out, "integrated difference (sound/dsp - ffmpeg): %+.2f LU (ffmpeg prints 0.1 LU steps)\n", res.IntegratedLUFS-sum.integrated)
	}
	if res.TruePeakAvailable {
		fmt.Fprintf(out, "true peak difference (sound/dsp - ffmpeg): %+.2f dB (ffmpeg prints 0.1 dB steps)\n", res.TruePeakDBTP-sum.truePeak)
	}
	fmt.Fprintf(out, "wall time: sound/dsp %.3f s, ffmpeg %.3f s (%.1fx)\n", elapsed.Seconds(), ffElapsed.Seconds(), ffElapsed.Seconds()/elapsed.Seconds())
	return nil
}

// referencePeak streams the file through the reference true-peak meter
// and prints its reading beside the engine's (res).
func referencePeak(out io.Writer, path string, res dsp.Loudness) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := dsp.NewWAVReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	start := time.Now()
	ref := dsptest.NewTruePeak(r.Format().Channels)
	buf := dsp.NewBlock(r.Format().Channels, dsp.BlockFrames)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			ref.Write(buf.Slice(n))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	peak := ref.Peak()
	if peak == 0 {
		fmt.Fprintln(out, "reference true peak: unavailable: digital silence")
		return nil
	}
	db := 20 * math.Log10(peak)
	fmt.Fprintf(out, "reference true peak (dsptest, FFT zero-padding to %dx): %.2f dBTP in %.3f s\n", dsptest.Factor, db, time.Since(start).Seconds())
	if res.TruePeakAvailable {
		fmt.Fprintf(out, "true peak difference (sound/dsp - reference): %+.3f dB\n", res.TruePeakDBTP-db)
	}
	return nil
}

// timeMore times tempo, key and mastering (streaming profile, output
// discarded, or with reference read by the reference true-peak meter) on
// the file, each decoding it again, and prints the peak RSS after them.
func timeMore(out io.Writer, path string, reference bool) error {
	open := func() (dsp.Reader, *os.File, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		r, err := dsp.NewWAVReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return r, f, nil
	}
	r, f, err := open()
	if err != nil {
		return err
	}
	start := time.Now()
	t, err := dsp.EstimateTempo(r)
	f.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  tempo:        %s in %.3f s\n", value(t.BPM, "BPM", t.Available, t.Reason), time.Since(start).Seconds())
	if r, f, err = open(); err != nil {
		return err
	}
	start = time.Now()
	k, err := dsp.EstimateKey(r)
	f.Close()
	if err != nil {
		return err
	}
	key := "unavailable: " + k.Reason
	if k.Available {
		key = k.Tonic + " " + k.Mode
	}
	fmt.Fprintf(out, "  key:          %s in %.3f s\n", key, time.Since(start).Seconds())
	var files []*os.File
	var ref *dsptest.TruePeak
	sink := func(dsp.Block) error { return nil }
	if reference {
		ref = dsptest.NewTruePeak(r.Format().Channels)
		sink = func(b dsp.Block) error { ref.Write(b); return nil }
	}
	start = time.Now()
	rep, err := dsp.Master(func() (dsp.Reader, error) {
		r, f, err := open()
		files = append(files, f)
		return r, err
	}, dsp.MasterOptions{Profile: dsp.ProfileStreaming}, sink)
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  mastering:    streaming -> %.2f LUFS, %.2f dBTP, %d passes in %.3f s\n", rep.OutputLUFS, rep.OutputTruePeakDBTP,
		rep.Passes, time.Since(start).Seconds())
	if ref != nil {
		fmt.Fprintf(out, "  mastered:     reference true peak %.3f dBTP, report %.3f dBTP, ceiling %g dBTP (the time above includes the reference's)\n",
			20*math.Log10(ref.Peak()), rep.OutputTruePeakDBTP, rep.CeilingDBTP)
	}
	fmt.Fprintf(out, "  peak RSS:     %s (after tempo, key and mastering)\n", peakRSS())
	return nil
}

// measureFile decodes the WAV at path and streams it through the meter.
func measureFile(path string) (dsp.Loudness, dsp.Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return dsp.Loudness{}, dsp.Format{}, err
	}
	defer f.Close()
	r, err := dsp.NewWAVReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return dsp.Loudness{}, dsp.Format{}, fmt.Errorf("%s: %w", path, err)
	}
	res, err := dsp.Measure(r)
	if err != nil {
		return res, r.Format(), fmt.Errorf("%s: %w", path, err)
	}
	return res, r.Format(), nil
}

func value(v float64, unit string, ok bool, reason string) string {
	if !ok {
		return "unavailable: " + reason
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

// peakRSS is the VmHWM line of /proc/self/status, or why it is missing.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "unknown (no VmHWM)"
}

// ebur128Summary is what the command reads from ffmpeg's summary.
type ebur128Summary struct {
	integrated, lra, truePeak float64
}

// parseEBUR128Summary reads the "Summary:" block ffmpeg's ebur128 filter
// prints at the end: I under "Integrated loudness:", LRA under "Loudness
// range:", and the Peak under "True peak:" (the sample peak section uses
// the same "Peak:" key, so sections are tracked by their headers).
func parseEBUR128Summary(s string) (ebur128Summary, error) {
	i := strings.LastIndex(s, "Summary:")
	if i < 0 {
		return ebur128Summary{}, errors.New("no ebur128 summary in output")
	}
	var sum ebur128Summary
	var seen int
	section := ""
	for line := range strings.Lines(s[i:]) {
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, ":") {
			section = line
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		switch {
		case section == "Integrated loudness:" && key == "I":
			sum.integrated = v
			seen |= 1
		case section == "Loudness range:" && key == "LRA":
			sum.lra = v
			seen |= 2
		case section == "True peak:" && key == "Peak":
			sum.truePeak = v
			seen |= 4
		}
	}
	if seen != 7 {
		return sum, fmt.Errorf("incomplete ebur128 summary:\n%s", s[i:])
	}
	return sum, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// writeProgramme writes d of a music-like 48 kHz stereo 24-bit PCM WAV
// to w: plucked three-partial notes on a 120 BPM beat over a bass line,
// noise bursts on the off-beats, a little air, in 30 s sections whose
// levels differ (so the loudness range is not zero). It is deterministic.
func writeProgramme(w io.Writer, d time.Duration) error {
	const (
		rate     = 48000
		channels = 2
		bytesPer = 3
	)
	frames := int(d.Seconds() * rate)
	dataBytes := frames * channels * bytesPer
	if dataBytes > math.MaxUint32-36 {
		return fmt.Errorf("%v is too long for a WAV file", d)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	hdr := make([]byte, 0, 44)
	hdr = append(hdr, "RIFF"...)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(36+dataBytes))
	hdr = append(hdr, "WAVEfmt "...)
	hdr = binary.LittleEndian.AppendUint32(hdr, 16)
	hdr = binary.LittleEndian.AppendUint16(hdr, 1) // PCM
	hdr = binary.LittleEndian.AppendUint16(hdr, channels)
	hdr = binary.LittleEndian.AppendUint32(hdr, rate)
	hdr = binary.LittleEndian.AppendUint32(hdr, rate*channels*bytesPer)
	hdr = binary.LittleEndian.AppendUint16(hdr, channels*bytesPer)
	hdr = binary.LittleEndian.AppendUint16(hdr, bytesPer*8)
	hdr = append(hdr, "data"...)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(dataBytes))
	if _, err := bw.Write(hdr); err != nil {
		return err
	}

	g := newSynth(rate)
	var frame [channels * bytesPer]byte
	for range frames {
		l, r := g.next()
		put24(frame[0:3], l)
		put24(frame[3:6], r)
		if _, err := bw.Write(frame[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func put24(b []byte, v float64) {
	q := int32(math.Round(max(-1, min(v, 1)) * 8388607))
	b[0], b[1], b[2] = byte(q), byte(q>>8), byte(q>>16)
}

// oscillator is a sine by rotation (no per-sample trigonometry).
type oscillator struct{ c, s, dc, ds float64 }

func newOscillator(freq, rate float64) oscillator {
	w := 2 * math.Pi * freq / rate
	return oscillator{c: 1, dc: math.Cos(w), ds: math.Sin(w)}
}

func (o *oscillator) next() float64 {
	o.c, o.s = o.c*o.dc-o.s*o.ds, o.s*o.dc+o.c*o.ds
	return o.s
}

// voice is one sounding note: partials under an exponential decay.
type voice struct {
	osc       [3]oscillator
	amp, gain float64 // current envelope, per-sample decay factor
	pan       float64 // 0 left .. 1 right
}

// synth is the programme generator's state.
type synth struct {
	rate          float64
	n             int
	rng           *rand.Rand
	voices        [6]voice
	nextVoice     int
	bass          voice
	burst, air    float64 // noise burst envelope, one-pole "air" state
	level, target float64 // section gain, smoothed
	// scale holds the note frequencies (Hz); sectionDB the 30 s section
	// levels, cycled.
	scale, sectionDB []float64
}

func newSynth(rate int) *synth {
	return &synth{
		rate:      float64(rate),
		rng:       rand.New(rand.NewPCG(2026, 11)),
		level:     0.3,
		scale:     []float64{261.63, 293.66, 329.63, 392.00, 440.00, 523.25, 587.33, 659.25},
		sectionDB: []float64{-8, -14, -4, -18, -10, -2, -12},
	}
}

func (g *synth) next() (float64, float64) {
	beat := int(g.rate / 2) // 120 BPM
	if g.n%beat == 0 {
		f := g.scale[g.rng.IntN(len(g.scale))]
		v := &g.voices[g.nextVoice]
		g.nextVoice = (g.nextVoice + 1) % len(g.voices)
		*v = voice{amp: 0.35, gain: math.Exp(-1 / (0.4 * g.rate)), pan: g.rng.Float64()}
		for k := range v.osc {
			v.osc[k] = newOscillator(f*float64(k+1), g.rate)
		}
		if g.n%(4*beat) == 0 {
			fb := g.scale[g.rng.IntN(4)] / 4
			g.bass = voice{amp: 0.5, gain: math.Exp(-1 / (1.2 * g.rate)), pan: 0.5}
			g.bass.osc[0] = newOscillator(fb, g.rate)
			g.bass.osc[1] = newOscillator(2*fb, g.rate)
		}
	}
	if g.n%beat == beat/2 {
		g.burst = 0.25
	}
	if g.n%int(30*g.rate) == 0 {
		db := g.sectionDB[(g.n/int(30*g.rate))%len(g.sectionDB)]
		g.target = math.Pow(10, db/20)
	}
	g.level += (g.target - g.level) / g.rate // about 1 s glide
	g.n++

	var l, r float64
	for i := range g.voices {
		v := &g.voices[i]
		if v.amp < 1e-5 {
			continue
		}
		s := v.amp * (v.osc[0].next() + 0.4*v.osc[1].next() + 0.2*v.osc[2].next())
		v.amp *= v.gain
		l += s * (1 - v.pan)
		r += s * v.pan
	}
	b := g.bass.amp * (g.bass.osc[0].next() + 0.3*g.bass.osc[1].next())
	g.bass.amp *= g.bass.gain
	noise := g.rng.NormFloat64()
	g.air += 0.05 * (noise - g.air)
	nb := g.burst * noise
	g.burst *= 0.9995
	l += b + nb + 0.02*g.air
	r += b + 0.8*nb + 0.02*g.rng.NormFloat64()*0.5
	return 0.5 * g.level * l, 0.5 * g.level * r
}
