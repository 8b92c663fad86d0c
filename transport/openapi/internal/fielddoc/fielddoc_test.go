package fielddoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenerateFollowsImportsAndNamesJSONFields(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("api/api.go", `package api

import "example.com/m/dom"

// View is shown.
type View struct {
	// RequestID is the request's id; ExtraCredits a count and Memo a word.
	RequestID string `+"`json:\"requestId\"`"+`
	ExtraCredits int `+"`json:\"extraCredits\"`"+`
	Memo string `+"`json:\"memo\"`"+` // Memo is a trailing comment.
	Hidden string `+"`json:\"-\"`"+` // Hidden is never shown.
	Plain int `+"`json:\"plain\"`"+`
	Item dom.Item `+"`json:\"item\"`"+`
}

// config has no json tags: not a JSON shape.
type config struct {
	// Timeout is skipped.
	Timeout int
}
`)
	write("dom/dom.go", `package dom

// Item is reached through api's import.
type Item struct {
	// Size is in bytes.
	Size int64 `+"`json:\"size\"`"+`
}
`)
	write("dom/dom_test.go", `package dom

type testOnly struct {
	// X is from a test file.
	X int `+"`json:\"x\"`"+`
}
`)
	gotRoot, modPath, err := Module(filepath.Join(root, "api"))
	if err != nil || modPath != "example.com/m" || gotRoot != root {
		t.Fatalf("Module() = %q, %q, %v", gotRoot, modPath, err)
	}
	src, err := Generate(root, modPath, []string{"example.com/m/api"}, "api", "fielddoc")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(string(src)), " ")
	for _, want := range []string{
		`"example.com/m/api.View": {`,
		`"RequestID": "requestId is the request's id; extraCredits a count and Memo a word."`,
		`"Memo": "memo is a trailing comment."`,
		`"example.com/m/dom.Item": {`,
		`"Size": "size is in bytes."`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("generated file lacks %s:\n%s", want, src)
		}
	}
	for _, absent := range []string{"Timeout", "Plain", "testOnly", "Hidden is never"} {
		if strings.Contains(out, absent) {
			t.Errorf("generated file holds %s:\n%s", absent, src)
		}
	}
}
