package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/dsp/window"
)

// STFT is a streaming short-time Fourier transform of a mono signal: it
// cuts the samples pushed into it into overlapping Hann-windowed frames and
// hands each frame's magnitude spectrum to a callback. It holds one frame
// of samples, so memory does not grow with the signal's length. An STFT is
// not safe for concurrent use.
type STFT struct {
	size, hop int
	fft       *fourier.FFT
	win       []float64
	buf       []float64 // the samples of the frame being filled
	fill      int       // how many of buf are valid
	frame     []float64 // windowed copy of buf handed to the FFT
	coeff     []complex128
	mag       []float64
}

// NewSTFT returns an STFT of size-point frames advancing by hop samples.
// size must be at least 2 and hop in [1, size].
func NewSTFT(size, hop int) (*STFT, error) {
	if size < 2 || hop < 1 || hop > size {
		return nil, fmt.Errorf("dsp: STFT size %d, hop %d is invalid", size, hop)
	}
	win := make([]float64, size)
	for i := range win {
		win[i] = 1
	}
	window.Hann(win)
	return &STFT{
		size:  size,
		hop:   hop,
		fft:   fourier.NewFFT(size),
		win:   win,
		buf:   make([]float64, size),
		frame: make([]float64, size),
		coeff: make([]complex128, size/2+1),
		mag:   make([]float64, size/2+1),
	}, nil
}

// Size is the frame length in samples.
func (s *STFT) Size() int { return s.size }

// Hop is the distance between frame starts in samples.
func (s *STFT) Hop() int { return s.hop }

// Bins is the length of each magnitude spectrum: Size()/2+1, bin k being
// k*sampleRate/Size() Hz.
func (s *STFT) Bins() int { return s.size/2 + 1 }

// Push appends samples to the stream and calls frame once for every frame
// the stream now completes, in order. The slice passed to frame holds the
// unnormalised FFT magnitudes and is reused by the next frame.
func (s *STFT) Push(samples []float64, frame func(mag []float64)) {
	for len(samples) > 0 {
		n := copy(s.buf[s.fill:], samples)
		s.fill += n
		samples = samples[n:]
		if s.fill < s.size {
			return
		}
		for i, v := range s.buf {
			s.frame[i] = v * s.win[i]
		}
		s.fft.Coefficients(s.coeff, s.frame)
		for i, c := range s.coeff {
			s.mag[i] = math.Sqrt(real(c)*real(c) + imag(c)*imag(c))
		}
		frame(s.mag)
		copy(s.buf, s.buf[s.hop:])
		s.fill -= s.hop
	}
}

// Run reads r to its end, mixes each block down to mono (the mean of the
// channels), pushes it through the transform and calls frame for every
// complete frame, as Push does. A trailing partial frame is dropped. It
// returns the number of frames (sample instants) read and the mean square
// of the mono mixdown.
func (s *STFT) Run(r Reader, frame func(mag []float64)) (frames int, meanSquare float64, err error) {
	f := r.Format()
	if err := f.Validate(); err != nil {
		return 0, 0, err
	}
	buf := NewBlock(f.Channels, BlockFrames)
	mono := make([]float64, BlockFrames)
	var energy float64
	gain := 1 / float64(f.Channels)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m := mono[:n]
			copy(m, buf[0][:n])
			for _, ch := range buf[1:] {
				for i, v := range ch[:n] {
					m[i] += v
				}
			}
			for i := range m {
				m[i] *= gain
				energy += m[i] * m[i]
			}
			frames += n
			s.Push(m, frame)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return frames, 0, err
		}
	}
	if frames > 0 {
		meanSquare = energy / float64(frames)
	}
	return frames, meanSquare, nil
}

// stftSizeFor returns the power of two nearest to seconds*sampleRate, so
// frames span about the same time at every sample rate.
func stftSizeFor(sampleRate int, seconds float64) int {
	return 1 << int(math.Round(math.Log2(seconds*float64(sampleRate))))
}
