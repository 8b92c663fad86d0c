package providerbtest_test

import (
	"bytes"
	"testing"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/generation/providerb/providerbtest"
)

func TestMP3IsAcceptedBySniff(t *testing.T) {
	b := providerbtest.MP3()
	m, err := asset.Sniff(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Sniff: %v", err)
	}
	if m.Format != asset.MP3 || m.SampleRate != 44100 || m.Channels != 1 {
		t.Fatalf("media = %+v", m)
	}
}
