// Command gen writes the test circuit's files of web3/zk/testdata: the
// verifying key of zktest.Square and proofs for a statement bound to
// zktest's sample tenant, user and intent (see testdata/README.md). Run
// from the module's root:
//
//	go run ./web3/zk/internal/gen -out web3/zk/testdata
//
// The setup and the proofs are deterministic (zktest.Stream seeds), so a
// second run writes the same bytes; TestTestdataIsGenerated in web3/zk
// checks the committed files against a fresh run.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/creatormusic/platform/web3/zk/zktest"
)

func main() {
	out := flag.String("out", "web3/zk/testdata", "the directory to write the files to")
	flag.Parse()
	files, err := zktest.SquareTestdata()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(*out, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", path)
	}
}
