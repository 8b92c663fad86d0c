package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerateOut: -generate -out writes the test programme where asked and
// keeps it, as a WAV the meter reads back with the asked duration; -out
// without -generate is refused.
func TestGenerateOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mix.wav")
	var out bytes.Buffer
	if err := run([]string{"-generate", "-duration", "3s", "-out", path}, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the -out file is gone: %v", err)
	}
	if len(b) < 44 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		t.Fatalf("the -out file is not a WAV (%d bytes)", len(b))
	}
	if !strings.Contains(out.String(), "(48000 Hz, 2 ch, 24-bit, 3.0 s)") {
		t.Fatalf("the meter did not read back a 3 s 48 kHz stereo 24-bit file:\n%s", out.String())
	}
	if err := run([]string{"-out", path}, &out); err == nil {
		t.Fatal("-out without -generate was accepted")
	}
}
