package api

import (
	"testing"

	"github.com/creatormusic/platform/fault"
)

func TestParseRange(t *testing.T) {
	const size = 100
	cases := []struct {
		h             string
		start, length int64
		ok            bool
		code          fault.Code
	}{
		{"bytes=0-9", 0, 10, true, ""},
		{"bytes=90-", 90, 10, true, ""},
		{"bytes=90-500", 90, 10, true, ""},
		{"bytes=-5", 95, 5, true, ""},
		{"bytes=-500", 0, 100, true, ""},
		{"bytes=99-99", 99, 1, true, ""},
		{"bytes=100-", 0, 0, false, fault.RangeNotSatisfiable},
		{"bytes=100-200", 0, 0, false, fault.RangeNotSatisfiable},
		{"bytes=-0", 0, 0, false, fault.RangeNotSatisfiable},
		{"bytes=0-1,5-6", 0, 0, false, ""}, // several ranges: the whole content
		{"bytes=5-1", 0, 0, false, ""},     // malformed: ignored
		{"items=0-1", 0, 0, false, ""},
		{"bytes=x-1", 0, 0, false, ""},
		{"bytes=", 0, 0, false, ""},
	}
	for _, c := range cases {
		start, length, ok, err := parseRange(c.h, size)
		if c.code != "" {
			if !fault.Is(err, c.code) {
				t.Errorf("%q: err = %v, want %s", c.h, err, c.code)
			}
			if _, _, d := fault.Public(err); d["size"] != int64(size) {
				t.Errorf("%q: details = %v", c.h, d)
			}
			continue
		}
		if err != nil || ok != c.ok || start != c.start || length != c.length {
			t.Errorf("%q = %d, %d, %v, %v; want %d, %d, %v", c.h, start, length, ok, err, c.start, c.length, c.ok)
		}
	}
}

func TestETagMatch(t *testing.T) {
	const etag = `"abc"`
	for h, want := range map[string]bool{`"abc"`: true, `W/"abc"`: true, `"x", "abc"`: true, `*`: true, `"abcd"`: false, `abc`: false} {
		if got := etagMatch(h, etag); got != want {
			t.Errorf("etagMatch(%q) = %v", h, got)
		}
	}
}
