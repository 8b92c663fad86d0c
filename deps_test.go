package platform_test

import (
	"go/build"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform"
)

const module = "github.com/creatormusic/platform"

// domains are the packages that hold the platform's rules: the root's one
// list (platform.Domains), which the architecture route serves too. They
// reach the outside world only through their own ports, so an embedder can
// build on them without the HTTP layer, the store or any provider's SDK.
func domains() []string {
	var out []string
	for _, c := range platform.Domains() {
		out = append(out, c.Package)
	}
	return out
}

// forbidden reports why a domain may not import path, or "".
func forbidden(path string) string {
	switch {
	case path == module:
		return "the root package"
	case path == module+"/transport" || strings.HasPrefix(path, module+"/transport/"):
		return "transport"
	case path == module+"/store" || strings.HasPrefix(path, module+"/store/"):
		return "the store"
	}
	for _, sdk := range []string{"github.com/stripe/stripe-go", "github.com/gagliardetto/solana-go", "github.com/uptrace/bun",
		"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "github.com/pb33f/libopenapi",
		"github.com/ethereum/go-ethereum"} {
		if path == sdk || strings.HasPrefix(path, sdk+"/") {
			return "an SDK (" + sdk + ")"
		}
	}
	return ""
}

// TestDomainsImportNoTransportStoreRootOrSDK walks each domain's non-test
// imports through the module, and fails when any package it links is the
// root, transport, the store or an SDK, naming the chain that brings it in.
func TestDomainsImportNoTransportStoreRootOrSDK(t *testing.T) {
	for _, d := range domains() {
		seen := map[string]bool{}
		var walk func(pkg string, chain []string)
		walk = func(pkg string, chain []string) {
			if seen[pkg] {
				return
			}
			seen[pkg] = true
			dir := filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/"))
			if dir == "" {
				dir = "."
			}
			bp, err := build.ImportDir(dir, 0)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			for _, imp := range bp.Imports {
				next := append(slices.Clone(chain), imp)
				if why := forbidden(imp); why != "" {
					t.Errorf("domain %s links %s: %s", d, why, strings.Join(next, " -> "))
					continue
				}
				if strings.HasPrefix(imp, module+"/") {
					walk(imp, next)
				}
			}
		}
		walk(module+"/"+d, []string{module + "/" + d})
	}
}

// codecs are the import-path prefixes of what the built-in sound engine
// links: the audio codecs (MP3, and FLAC with its helpers), gonum's FFT,
// and the engine itself with its adapter.
func codecs() []string {
	return []string{"github.com/hajimehoshi/go-mp3", "github.com/mewkiz/", "github.com/mewpkg/", "github.com/icza/bitio",
		"gonum.org/v1/gonum", module + "/sound/dsp", module + "/sound/builtin"}
}

// TestStoreLinksNoAudioCodec lists what the store packages and the sound
// domain link (go list -deps, standard library and all) and fails when
// one of them is an audio codec, gonum or the sound engine, naming the
// chain of imports that brings it in: an embedder that persists only
// tokens on PostgreSQL links none of them, and the sound domain speaks to
// its engine through its own port.
func TestStoreLinksNoAudioCodec(t *testing.T) {
	for _, root := range []string{"store", "store/sqlite", "store/postgres", "sound"} {
		out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./"+root).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", root, err)
		}
		imports := map[string][]string{}
		for line := range strings.Lines(string(out)) {
			f := strings.Fields(line)
			imports[f[0]] = f[1:]
		}
		// Breadth first from root, so each chain named is a shortest one.
		from := map[string]string{module + "/" + root: ""}
		queue := []string{module + "/" + root}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			if slices.ContainsFunc(codecs(), func(p string) bool { return strings.HasPrefix(pkg, p) }) {
				chain := []string{pkg}
				for p := from[pkg]; p != ""; p = from[p] {
					chain = append([]string{p}, chain...)
				}
				t.Errorf("%s links %s: %s", root, pkg, strings.Join(chain, " -> "))
				continue
			}
			for _, imp := range imports[pkg] {
				if _, seen := from[imp]; !seen {
					from[imp] = pkg
					queue = append(queue, imp)
				}
			}
		}
		if len(from) < 2 {
			t.Fatalf("go list -deps ./%s listed nothing it imports", root)
		}
		t.Logf("%s links %d packages", root, len(imports))
	}
}
