package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/creatormusic/platform/generation/providera/provideratest"
	"github.com/creatormusic/platform/platformtest"
)

// A provider names the media of a finished generation, and the platform
// fetches it: a media URL that names the platform's own network is refused
// by the URL guard before any request. The platform reaches the provider
// simulators' loopback addresses (Config.AllowLoopback) and nothing else
// on loopback, nor any private or metadata address: such an operation
// fails with GENERATION_FAILED, its credits are released and no asset is
// stored.
func TestGenerationMediaURLGuard(t *testing.T) {
	t.Parallel()
	platformtest.Dialects(t, gfOptions(), func(t *testing.T, s *platformtest.System) {
		raiseKeyLimits(t, s) // five generations are watched to their end
		// A server on loopback that would serve a valid MP3, on a port the
		// platform does not allow.
		mp3 := provideratest.MP3(0)
		var hits atomic.Int64
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits.Add(1)
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Header().Set("Content-Length", strconv.Itoa(len(mp3)))
			_, _ = w.Write(mp3)
		}))
		t.Cleanup(other.Close)
		u, err := url.Parse(other.URL)
		if err != nil {
			t.Fatal(err)
		}

		// The simulator's own media URL is allowed: the generation completes.
		ok := gfStart(t, s, "guard-allowed")
		if err := s.ProviderA.Complete(ok.task); err != nil {
			t.Fatal(err)
		}
		gfCompleted(t, s, ok)

		for i, media := range []string{
			other.URL + "/media/track.mp3?token=sig-SECRET",              // loopback, another port
			"http://10.20.30.40/media/track.mp3",                         // private
			"http://169.254.169.254/latest/meta-data/",                   // cloud metadata
			"http://[::ffff:127.0.0.1]:" + u.Port() + "/media/track.mp3", // the same, IPv4-mapped
		} {
			op := gfStart(t, s, "guard-refused-"+strconv.Itoa(i))
			for n := range 2 {
				if err := s.ProviderA.SetMediaFault(op.task, n, provideratest.MediaFault{URL: media}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.ProviderA.Complete(op.task); err != nil {
				t.Fatal(err)
			}
			gfReleased(t, s, op, "failed", "GENERATION_FAILED")
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("the unallowed loopback server was fetched %d times", n)
		}
		if n := gfGenerated(t, s); n != 2 {
			t.Fatalf("generated assets = %d, want the allowed generation's 2 alone", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM assets`); n != 2 {
			t.Fatalf("assets = %d, want 2", n)
		}
		if strings.Contains(s.Log.String(), "sig-SECRET") {
			t.Fatal("the log carries a media URL's query string")
		}
	})
}
