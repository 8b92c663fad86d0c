package asset_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf8"

	"github.com/creatormusic/platform/asset"
	"github.com/creatormusic/platform/asset/assettest"
	"github.com/creatormusic/platform/fault"
)

func sniff(b []byte) (asset.Media, error) { return asset.Sniff(bytes.NewReader(b), int64(len(b))) }

func TestSniffAccepts(t *testing.T) {
	wav24 := append(assettest.WAVHeader(96000, 2, 24, false, 96000*6), make([]byte, 96000*6)...)
	wavF32 := append(assettest.WAVHeader(48000, 1, 32, true, 48000*4/2), make([]byte, 48000*4/2)...)
	wav32 := append(assettest.WAVHeader(44100, 2, 32, false, 44100*8), make([]byte, 44100*8)...)
	// A LIST chunk of odd length (padded) before data is skipped.
	var withList bytes.Buffer
	h := assettest.WAVHeader(8000, 1, 16, false, 1600)
	withList.Write(h[:36])
	withList.WriteString("LIST")
	binary.Write(&withList, binary.LittleEndian, uint32(3))
	withList.Write([]byte{'a', 'b', 'c', 0})
	withList.Write(h[36:])
	withList.Write(make([]byte, 1600))

	cases := []struct {
		name string
		b    []byte
		want asset.Media
	}{
		{"wav16", assettest.WAV(44100, 2, 44100*3/2), asset.Media{Format: asset.WAV, SampleRate: 44100, Channels: 2, BitDepth: 16, DurationMs: 1500, HasDuration: true}},
		{"wav24", wav24, asset.Media{Format: asset.WAV, SampleRate: 96000, Channels: 2, BitDepth: 24, DurationMs: 1000, HasDuration: true}},
		{"wav32", wav32, asset.Media{Format: asset.WAV, SampleRate: 44100, Channels: 2, BitDepth: 32, DurationMs: 1000, HasDuration: true}},
		{"wavFloat", wavF32, asset.Media{Format: asset.WAV, SampleRate: 48000, Channels: 1, BitDepth: 32, Float: true, DurationMs: 500, HasDuration: true}},
		{"wavList", withList.Bytes(), asset.Media{Format: asset.WAV, SampleRate: 8000, Channels: 1, BitDepth: 16, DurationMs: 100, HasDuration: true}},
		{"flac", assettest.FLAC(48000, 2, 24, 48000*90), asset.Media{Format: asset.FLAC, SampleRate: 48000, Channels: 2, BitDepth: 24, DurationMs: 90000, HasDuration: true}},
		{"flacUnknownLength", assettest.FLAC(44100, 1, 16, 0), asset.Media{Format: asset.FLAC, SampleRate: 44100, Channels: 1, BitDepth: 16}},
		// 10 frames of 417 bytes at 128 kbps: 4170*8/128 = 260 ms, estimated.
		{"mp3CBR", assettest.MP3(assettest.MP3Options{}), asset.Media{Format: asset.MP3, SampleRate: 44100, Channels: 2, BitrateKbps: 128, DurationMs: 260, HasDuration: true, DurationEstimated: true}},
		// Xing says 99 frames of 1152 samples at 44.1 kHz: 2586 ms, read.
		{"mp3Xing", assettest.MP3(assettest.MP3Options{Frames: 100, Xing: true, ID3: 300}), asset.Media{Format: asset.MP3, SampleRate: 44100, Channels: 2, BitrateKbps: 128, DurationMs: 2586, HasDuration: true}},
		{"mp3MPEG2Mono", assettest.MP3(assettest.MP3Options{Version: 2, BitrateKbps: 64, Mono: true, Frames: 21, Xing: true}), asset.Media{Format: asset.MP3, SampleRate: 22050, Channels: 1, BitrateKbps: 64, DurationMs: 522, HasDuration: true}},
		{"mp3MPEG25", assettest.MP3(assettest.MP3Options{Version: 25, BitrateKbps: 32}), asset.Media{Format: asset.MP3, SampleRate: 11025, Channels: 2, BitrateKbps: 32, DurationMs: 520, HasDuration: true, DurationEstimated: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := sniff(c.b)
			if err != nil {
				t.Fatalf("Sniff: %v", err)
			}
			if got != c.want {
				t.Fatalf("Sniff = %+v\nwant    %+v", got, c.want)
			}
		})
	}
}

func TestSniffRejects(t *testing.T) {
	wav := assettest.WAV(44100, 2, 4410)
	mp3 := assettest.MP3(assettest.MP3Options{})
	badAlign := assettest.WAV(44100, 2, 100)
	badAlign[32] = 3 // block align 3 for 2 channels of 16 bits
	pcm12 := append(assettest.WAVHeader(44100, 1, 12, false, 0), 0)
	layer2 := assettest.MP3(assettest.MP3Options{})
	layer2[1] = 0xFD // layer II
	flacNoSync := assettest.FLAC(44100, 2, 16, 100)
	flacNoSync[len(flacNoSync)-8] = 0x00
	cases := []struct {
		name             string
		b                []byte
		detected, reason string
	}{
		{"empty", nil, "unknown", "empty"},
		{"garbage", []byte("this is not audio at all, just text"), "unknown", ""},
		{"wavTruncatedData", wav[:len(wav)-100], "wav", "truncated"},
		{"wavNoData", wav[:36], "wav", "truncated"},
		{"wavHeaderOnly", wav[:12], "wav", "truncated"},
		{"wavBadAlign", badAlign, "wav", "malformed"},
		{"wavPCM12", pcm12, "wav", "unsupported"},
		{"flacTruncated", assettest.FLAC(44100, 2, 16, 100)[:20], "flac", "truncated"},
		{"flacNoAudio", assettest.FLAC(44100, 2, 16, 100)[:42], "flac", "truncated"},
		{"flacNoSync", flacNoSync, "flac", "malformed"},
		{"mp3FirstFrameCut", mp3[:200], "mp3", "truncated"},
		{"mp3LayerII", layer2, "mp3", "unsupported"},
		{"mp3StraySync", append([]byte{0xFF, 0xFB, 0x90, 0x00}, bytes.Repeat([]byte("x"), 1000)...), "unknown", ""},
		{"id3ThenGarbage", append([]byte{'I', 'D', '3', 4, 0, 0, 0, 0, 0, 2, 1, 2}, bytes.Repeat([]byte("z"), 500)...), "unknown", ""},
		{"id3Truncated", []byte{'I', 'D', '3', 4, 0, 0, 0, 0, 1, 0, 1, 2}, "mp3", "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := sniff(c.b)
			if !fault.Is(err, fault.InvalidInput) {
				t.Fatalf("Sniff = %v, want INVALID_INPUT", err)
			}
			_, _, details := fault.Public(err)
			if details["field"] != "file" || details["detected"] != c.detected {
				t.Fatalf("details = %v, want detected %q", details, c.detected)
			}
			if c.reason != "" && details["reason"] != c.reason {
				t.Fatalf("details = %v, want reason %q", details, c.reason)
			}
		})
	}
}

func TestSanitizeFilename(t *testing.T) {
	long := string(bytes.Repeat([]byte("é"), 200)) + ".wav"
	for in, want := range map[string]string{
		"take 1.wav":            "take 1.wav",
		"../../etc/passwd":      "passwd",
		`C:\Users\me\song.flac`: "song.flac",
		"bad\x00name\n.mp3":     "badname.mp3",
		"  spaced  ":            "spaced",
		"..":                    "",
		"broken\xffutf8.wav":    "brokenutf8.wav",
		"line\u2028sep.wav":     "linesep.wav",
	} {
		if got := asset.SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
	// A long name is cut to 255 bytes on a character boundary.
	if got := asset.SanitizeFilename(long); len(got) != 254 || !utf8.ValidString(got) {
		t.Errorf("long name cut to %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
