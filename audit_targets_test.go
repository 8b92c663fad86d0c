package platform

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creatormusic/platform/transport/api"
)

// TestAuditTargetsDocumented: the audit log's documented target types are
// exactly the ones the domains write. Every domain names its audit targets
// as string constants called Target<Something>; a new one that the
// document's enum lacks would make GET /api/v1/admin/audit answer a value
// its own document refuses.
func TestAuditTargetsDocumented(t *testing.T) {
	declared := map[string][]string{} // target -> where
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", "examples", "e2e", "platformtest":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Target") || len(name.Name) == len("Target") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						return err
					}
					declared[v] = append(declared[v], path+":"+name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := reflect.TypeFor[api.AuditTarget]().FieldByName("Type")
	if !ok {
		t.Fatal("api.AuditTarget has no Type field")
	}
	documented := strings.Split(f.Tag.Get("enum"), ",")
	for v, where := range declared {
		if !slices.Contains(documented, v) {
			t.Errorf("audit target %q (%s) is missing from api.AuditTarget's enum", v, strings.Join(where, ", "))
		}
	}
	for _, v := range documented {
		if _, ok := declared[v]; !ok {
			t.Errorf("api.AuditTarget's enum documents %q, which no domain declares as a Target constant", v)
		}
	}
}
