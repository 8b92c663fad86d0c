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
// exactly the ones the domains write. It reads every AuditEntry-style
// composite literal's TargetType (a constant of the same package or
// another's) in the module's non-test code and resolves it to the
// constant's value; a target the document's enum lacks would make GET
// /api/v1/admin/audit answer a value its own document refuses.
func TestAuditTargetsDocumented(t *testing.T) {
	const module = "github.com/creatormusic/platform"
	consts := map[string]string{} // "dir.Name" -> value
	used := map[string][]string{} // "dir.Name" -> where
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
		dir := filepath.ToSlash(filepath.Dir(path))
		imports := map[string]string{} // local name -> dir
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(ip, module) {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
			if rel == "" {
				rel = "."
			}
			name := filepath.Base(ip)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = rel
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok != token.CONST {
					return true
				}
				for _, spec := range n.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							consts[dir+"."+name.Name] = v
						}
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); !ok || k.Name != "TargetType" {
					return true
				}
				at := fset.Position(n.Pos()).String()
				switch v := n.Value.(type) {
				case *ast.Ident:
					used[dir+"."+v.Name] = append(used[dir+"."+v.Name], at)
				case *ast.SelectorExpr:
					if x, ok := v.X.(*ast.Ident); ok && imports[x.Name] != "" {
						key := imports[x.Name] + "." + v.Sel.Name
						used[key] = append(used[key], at)
					}
				case *ast.BasicLit:
					val, _ := strconv.Unquote(v.Value)
					consts["literal."+val] = val
					used["literal."+val] = append(used["literal."+val], at)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{} // target -> where it is written
	for key, where := range used {
		v, ok := consts[key]
		if !ok {
			continue // a field passed through (e.TargetType), not a target
		}
		declared[v] = append(declared[v], where...)
	}
	if len(declared) < 10 {
		t.Fatalf("found only %d audit targets; the scan misses the domains' audit entries", len(declared))
	}
	f, ok := reflect.TypeFor[api.AuditTarget]().FieldByName("Type")
	if !ok {
		t.Fatal("api.AuditTarget has no Type field")
	}
	documented := strings.Split(f.Tag.Get("enum"), ",")
	for v, where := range declared {
		if !slices.Contains(documented, v) {
			t.Errorf("audit target %q (written at %s) is missing from api.AuditTarget's enum", v, strings.Join(where, ", "))
		}
	}
	for _, v := range documented {
		if _, ok := declared[v]; !ok {
			t.Errorf("api.AuditTarget's enum documents %q, which no domain writes", v)
		}
	}
}
