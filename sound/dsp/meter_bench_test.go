package dsp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchSeconds is the length of the benchmark programme.
const benchSeconds = 60

// meterBenchProgramme returns a 60 s, 48 kHz stereo music-like programme:
// a few tones under slow envelopes plus noise.
func meterBenchProgramme() Block {
	const fs = 48000
	n := benchSeconds * fs
	b := NewBlock(2, n)
	rng := rand.New(rand.NewPCG(1, 2))
	freqs := []float64{110, 220, 330, 440, 1760, 5000}
	for i := range n {
		t := float64(i) / fs
		var v float64
		for k, f := range freqs {
			env := 0.5 + 0.5*math.Sin(2*math.Pi*t*(0.07+0.05*float64(k)))
			v += 0.1 * env * math.Sin(2*math.Pi*f*t)
		}
		b[0][i] = v + 0.05*rng.NormFloat64()
		b[1][i] = 0.9*v + 0.05*rng.NormFloat64()
	}
	return b
}

// BenchmarkMeter measures a 60 s 48 kHz stereo programme (integrated,
// range, sample and true peak). Bytes are those of the programme as
// 24-bit PCM; x-realtime is programme seconds per wall second.
func BenchmarkMeter(b *testing.B) {
	sig := meterBenchProgramme()
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 24}
	b.SetBytes(int64(sig.Frames() * f.Channels * 3))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m := NewMeter(f)
		for pos := 0; pos < sig.Frames(); pos += BlockFrames {
			end := min(pos+BlockFrames, sig.Frames())
			m.Write(Block{sig[0][pos:end], sig[1][pos:end]})
		}
		if r := m.Result(); !r.IntegratedAvailable {
			b.Fatal(r.IntegratedReason)
		}
	}
	reportRealtime(b)
}

// reportRealtime reports the benchmark programme's seconds per wall second.
func reportRealtime(b *testing.B) {
	b.ReportMetric(benchSeconds*float64(b.N)/b.Elapsed().Seconds(), "x-realtime")
}

// BenchmarkTruePeak is the meter's true-peak stage alone on the benchmark
// programme, streamed in blocks as the meter streams it.
func BenchmarkTruePeak(b *testing.B) {
	benchTruePeak(b, meterBenchProgramme())
}

// BenchmarkTruePeakMastered is the true-peak stage on the benchmark
// programme after streaming mastering: limited, so peaks crowd the ceiling
// and few runs of inputs can be skipped.
func BenchmarkTruePeakMastered(b *testing.B) {
	sig := meterBenchProgramme()
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 24}
	out := NewBlock(2, 0)
	_, err := Master(func() (Reader, error) { return NewBlockReader(f, sig), nil }, MasterOptions{Profile: ProfileStreaming},
		func(blk Block) error {
			for c := range out {
				out[c] = append(out[c], blk[c]...)
			}
			return nil
		})
	if err != nil {
		b.Fatal(err)
	}
	benchTruePeak(b, out)
}

func benchTruePeak(b *testing.B, sig Block) {
	b.SetBytes(int64(sig.Frames() * 2 * 3))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tp := newBenchTruePeakMeter()
		for pos := 0; pos < sig.Frames(); pos += BlockFrames {
			end := min(pos+BlockFrames, sig.Frames())
			tp.write(Block{sig[0][pos:end], sig[1][pos:end]})
		}
		if tp.peak() <= 0 {
			b.Fatal("no peak")
		}
	}
	reportRealtime(b)
}

// newBenchTruePeakMeter is the meter's true-peak stage for the benchmark
// programme (48 kHz stereo).
func newBenchTruePeakMeter() *truePeakMeter { return newTruePeakMeter(2) }

// BenchmarkMaster masters the 60 s benchmark signal with the streaming
// profile (all its passes).
func BenchmarkMaster(b *testing.B) {
	sig := meterBenchProgramme()
	f := Format{SampleRate: 48000, Channels: 2, BitDepth: 24}
	b.SetBytes(int64(sig.Frames() * f.Channels * 3))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_, err := Master(func() (Reader, error) { return NewBlockReader(f, sig), nil }, MasterOptions{Profile: ProfileStreaming},
			func(Block) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	reportRealtime(b)
}
