// Command fielddoc writes the field doc comments file of the package in the
// current directory (see package fielddoc), following the imports of the
// package in the directory -from as well as its own. Package
// transport/openapi runs it with go generate, from the route table:
//
//	go run ./internal/fielddoc/cmd/fielddoc -from ../api -o fielddoc_gen.go
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"strings"

	"github.com/creatormusic/platform/transport/openapi/internal/fielddoc"
)

func main() {
	out := flag.String("o", "fielddoc_gen.go", "the file to write")
	from := flag.String("from", ".", "the directory of a package whose imports are followed besides the current one")
	flag.Parse()
	if err := run(*out, *from); err != nil {
		fmt.Fprintln(os.Stderr, "fielddoc:", err)
		os.Exit(1)
	}
}

func run(out, from string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir := filepath.Join(cwd, from)
	root, modPath, err := fielddoc.Module(dir)
	if err != nil {
		return err
	}
	bp, err := build.Default.ImportDir(cwd, 0)
	if err != nil {
		return err
	}
	var starts []string
	for _, d := range []string{dir, cwd} {
		rel, err := filepath.Rel(root, d)
		if err != nil || strings.HasPrefix(rel, "..") {
			return errors.New("the package is outside its module")
		}
		start := modPath
		if rel != "." {
			start += "/" + filepath.ToSlash(rel)
		}
		starts = append(starts, start)
	}
	src, err := fielddoc.Generate(root, modPath, starts, bp.Name, "go run ./internal/fielddoc/cmd/fielddoc -from "+from)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
