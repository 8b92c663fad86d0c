package openapi

import (
	"bytes"
	"os"
	"testing"

	"github.com/creatormusic/platform/transport/openapi/internal/fielddoc"
)

// TestFieldDocsUpToDate regenerates fielddoc_gen.go in memory from the
// module's source and fails when the committed file differs: a field's doc
// comment changed without `go generate ./transport/openapi`.
func TestFieldDocsUpToDate(t *testing.T) {
	root, modPath, err := fielddoc.Module(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := fielddoc.Generate(root, modPath, []string{modPath + "/transport/api", modPath + "/transport/openapi"}, "openapi", "go run ./internal/fielddoc/cmd/fielddoc -from ../api")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("fielddoc_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("fielddoc_gen.go is stale: run go generate ./transport/openapi")
	}
}
