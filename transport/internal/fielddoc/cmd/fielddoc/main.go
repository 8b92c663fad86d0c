// Command fielddoc writes the field doc comments file of the package in the
// current directory (see package fielddoc). Package transport runs it with
// go generate:
//
//	go run ./internal/fielddoc/cmd/fielddoc -o fielddoc_gen.go
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"strings"

	"github.com/creatormusic/platform/transport/internal/fielddoc"
)

func main() {
	out := flag.String("o", "fielddoc_gen.go", "the file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "fielddoc:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	root, modPath, err := fielddoc.Module(dir)
	if err != nil {
		return err
	}
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return errors.New("the current directory is outside its module")
	}
	start := modPath
	if rel != "." {
		start += "/" + filepath.ToSlash(rel)
	}
	src, err := fielddoc.Generate(root, modPath, start, bp.Name, "go run ./internal/fielddoc/cmd/fielddoc")
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
