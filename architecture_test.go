package platform_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/policy"
)

// fsmTables scans the module's non-test Go files for the state tables its
// packages declare: every exported function returning a slice of fsm.Row
// (directly or through an alias) or an fsm.Table. It returns them as
// "package/path.Func", and reports every fsm.New call that builds a table
// neither inside such a function nor from one's rows (a table no list
// could name).
func fsmTables(t *testing.T) (tables map[string]bool, inline []string) {
	t.Helper()
	type file struct {
		dir string
		f   *ast.File
		fs  *token.FileSet
	}
	var files []file
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "fsm") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, file{filepath.ToSlash(filepath.Dir(path)), f, fset})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fsmName := func(f *ast.File) string {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/fsm" {
				if imp.Name != nil {
					return imp.Name.Name
				}
				return "fsm"
			}
		}
		return ""
	}
	isFSM := func(e ast.Expr, pkg, name string) bool {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == pkg && sel.Sel.Name == name
	}
	// Aliases of fsm.Row, per package directory.
	aliases := map[string]map[string]bool{}
	for _, f := range files {
		name := fsmName(f.f)
		if name == "" {
			continue
		}
		ast.Inspect(f.f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && isFSM(ts.Type, name, "Row") {
				if aliases[f.dir] == nil {
					aliases[f.dir] = map[string]bool{}
				}
				aliases[f.dir][ts.Name.Name] = true
			}
			return true
		})
	}
	source := func(dir, fn string) string { return dir + "." + fn }
	tables = map[string]bool{}
	for _, f := range files {
		name := fsmName(f.f)
		for _, d := range f.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !fd.Name.IsExported() || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 {
				continue
			}
			res := fd.Type.Results.List[0].Type
			if arr, ok := res.(*ast.ArrayType); ok && arr.Len == nil {
				if id, ok := arr.Elt.(*ast.Ident); (ok && aliases[f.dir][id.Name]) || (name != "" && isFSM(arr.Elt, name, "Row")) {
					tables[source(f.dir, fd.Name.Name)] = true
				}
			}
			if name != "" && isFSM(res, name, "Table") {
				tables[source(f.dir, fd.Name.Name)] = true
			}
		}
	}
	for _, f := range files {
		name := fsmName(f.f)
		if name == "" {
			continue
		}
		for _, d := range f.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || !isFSM(sel, name, "New") {
					return true
				}
				if fd.Recv == nil && tables[source(f.dir, fd.Name.Name)] {
					return true
				}
				if len(call.Args) == 3 {
					if inner, ok := call.Args[2].(*ast.CallExpr); ok {
						if id, ok := inner.Fun.(*ast.Ident); ok && tables[source(f.dir, id.Name)] {
							return true
						}
					}
				}
				inline = append(inline, f.fs.Position(call.Pos()).String())
				return true
			})
		}
	}
	return tables, inline
}

// TestStateMachinesListEveryTable: every fsm table a package of the module
// declares is a machine of platform.StateMachines, and every machine is
// read from a declared table of the package it names, so a state machine
// added without being exposed by the architecture route fails here.
func TestStateMachinesListEveryTable(t *testing.T) {
	tables, inline := fsmTables(t)
	for _, at := range inline {
		t.Errorf("%s: fsm.New builds a table from rows no exported table function returns; declare them in one and list it in platform.StateMachines", at)
	}
	listed := map[string]bool{}
	for _, m := range platform.StateMachines() {
		listed[m.Source] = true
		if !tables[m.Source] {
			t.Errorf("machine %s reads %s, which the scan finds no table function of", m.Name, m.Source)
		}
		if i := strings.LastIndex(m.Source, "."); i < 0 || m.Source[:i] != m.Domain {
			t.Errorf("machine %s names domain %s but reads %s", m.Name, m.Domain, m.Source)
		}
	}
	for _, src := range slices.Sorted(maps.Keys(tables)) {
		if !listed[src] {
			t.Errorf("%s declares a state table that platform.StateMachines does not list: the architecture route would not serve it", src)
		}
	}
	if len(tables) < 20 {
		t.Fatalf("the scan found %d tables; it is not reading the module", len(tables))
	}
}

// TestDomainsListMachinePackages: each package holding a state table is a
// domain of the root's one list.
func TestDomainsListMachinePackages(t *testing.T) {
	known := map[string]bool{}
	for _, c := range platform.Domains() {
		known[c.Package] = true
	}
	tables, _ := fsmTables(t)
	for src := range tables {
		if dir := src[:strings.LastIndex(src, ".")]; !known[dir] {
			t.Errorf("%s holds a state table but is not in platform.Domains", dir)
		}
	}
}

// TestPoliciesListEveryPolicyID: every policy id constant a domain declares
// (a string constant named Policy... or ...PolicyID) is a kind of
// platform.Policies, so no policy is left out of the policy routes.
func TestPoliciesListEveryPolicyID(t *testing.T) {
	named := regexp.MustCompile(`^Policy[A-Z]|PolicyID$`)
	listed := map[string]bool{}
	for _, k := range platform.Policies() {
		listed[k.ID] = true
	}
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "e2e" || n == "platformtest") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() || !named.MatchString(n.Name) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					id, _ := strconv.Unquote(lit.Value)
					if policy.ValidateID(id) != nil || !strings.Contains(id, ".") {
						continue // not a policy id (a version, a reason)
					}
					found++
					if !listed[id] {
						t.Errorf("%s: %s = %q is a policy id platform.Policies does not list", path, n.Name, id)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 5 {
		t.Fatalf("the scan found %d policy ids; it is not reading the module", found)
	}
}
