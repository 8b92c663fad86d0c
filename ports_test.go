package platform_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxPortMethods bounds the method set of a domain port, so that a fake of
// any port stays small.
const maxPortMethods = 20

// widePorts are the ports known to exceed maxPortMethods, each with the
// size it has now. They may shrink, never grow; a split removes them from
// here. None is known wide now (rewards' Store and ClaimStore, once 25 and
// 40 methods, were split by consumer).
func widePorts() map[string]int {
	return map[string]int{}
}

// ifaceDecl is an interface type declared in a package of the module.
type ifaceDecl struct {
	typ     *ast.InterfaceType
	imports map[string]string // the declaring file's imports, by name
	pkg     string
}

// moduleInterfaces parses every non-test file of the module's packages and
// returns their interface types by "import/path.Name".
func moduleInterfaces(t *testing.T) map[string]ifaceDecl {
	t.Helper()
	out := map[string]ifaceDecl{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		pkg := module
		if path != "." {
			pkg += "/" + filepath.ToSlash(path)
		}
		for _, name := range bp.GoFiles {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			imports := map[string]string{}
			for _, is := range f.Imports {
				p, _ := strconv.Unquote(is.Path.Value)
				n := p[strings.LastIndex(p, "/")+1:]
				if is.Name != nil {
					n = is.Name.Name
				}
				imports[n] = p
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						out[pkg+"."+ts.Name.Name] = ifaceDecl{typ: it, imports: imports, pkg: pkg}
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// methodSet returns the names of the methods of interface key, embedded
// interfaces of the module included (others count as none).
func methodSet(all map[string]ifaceDecl, key string, into map[string]bool) {
	d, ok := all[key]
	if !ok {
		return
	}
	for _, f := range d.typ.Methods.List {
		switch e := f.Type.(type) {
		case *ast.FuncType:
			for _, n := range f.Names {
				into[n.Name] = true
			}
		case *ast.Ident:
			methodSet(all, d.pkg+"."+e.Name, into)
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				methodSet(all, d.imports[x.Name]+"."+e.Sel.Name, into)
			}
		}
	}
}

// TestPortsAreNarrow fails when an interface a domain declares has more
// than maxPortMethods methods, counting those it embeds: a wide port makes
// every fake of it large, so it is split into the parts its callers use.
func TestPortsAreNarrow(t *testing.T) {
	all := moduleInterfaces(t)
	for _, d := range domains() {
		prefix := module + "/" + d + "."
		for key := range all {
			if !strings.HasPrefix(key, prefix) || strings.Contains(strings.TrimPrefix(key, prefix), ".") {
				continue
			}
			set := map[string]bool{}
			methodSet(all, key, set)
			name := strings.TrimPrefix(key, module+"/")
			if limit, ok := widePorts()[name]; ok {
				if len(set) > limit {
					t.Errorf("port %s has %d methods; it is known wide at %d and may not grow", name, len(set), limit)
				}
				continue
			}
			if len(set) > maxPortMethods {
				t.Errorf("port %s has %d methods (at most %d)", strings.TrimPrefix(key, module+"/"), len(set), maxPortMethods)
			}
		}
	}
}
