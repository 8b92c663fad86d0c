package operation

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/creatormusic/platform/fault"
)

// attemptEvents lists every attempt event.
func attemptEvents() []AttemptEvent {
	return []AttemptEvent{AttemptCreateAccepted, AttemptCreateAmbiguous, AttemptCreateThrottled, AttemptCreateRefused,
		AttemptAnswerLost, AttemptTaskNamed}
}

func TestAttemptTransitionRefusesInvalidMoves(t *testing.T) {
	for _, c := range []struct {
		from AttemptState
		e    AttemptEvent
	}{
		{AttemptAccepted, AttemptCreateRefused},    // an accepted task is never refused afterwards
		{AttemptAccepted, AttemptAnswerLost},       // nor given up as lost
		{AttemptTransient, AttemptCreateAccepted},  // a throttled create is answered once
		{AttemptRefused, AttemptCreateThrottled},   // so is a refused one
		{AttemptAmbiguous, AttemptAnswerLost},      // only a sending attempt is lost
		{AttemptState("bogus"), AttemptTaskNamed},  // an unknown state moves nowhere
		{AttemptSending, AttemptEvent("teleport")}, // nor does an unknown event
	} {
		to, err := AttemptTransition(c.from, c.e)
		var f *fault.Error
		if !fault.Is(err, fault.InvalidState) || !errors.As(err, &f) || f.Details["from"] != string(c.from) || f.Details["event"] != string(c.e) {
			t.Errorf("AttemptTransition(%s, %s) = %q, %v; want INVALID_STATE_TRANSITION naming both", c.from, c.e, to, err)
		}
		a := Attempt{State: c.from}
		if err := a.move(c.e); err == nil || a.State != c.from {
			t.Errorf("move(%s) from %s = %v, state %s; want refused and unchanged", c.e, c.from, err, a.State)
		}
	}
	a := Attempt{State: AttemptSending}
	for _, e := range []AttemptEvent{AttemptAnswerLost, AttemptCreateThrottled, AttemptTaskNamed} {
		if err := a.move(e); err != nil {
			t.Fatalf("move(%s) = %v", e, err)
		}
	}
	if a.State != AttemptAccepted {
		t.Errorf("sending, lost, throttled, named = %s, want accepted", a.State)
	}
}

func TestAttemptMovesAreWhole(t *testing.T) {
	states := AttemptStates()
	reached := map[AttemptState]bool{AttemptSending: true}
	seen := map[[2]string]bool{}
	for _, m := range AttemptMoves() {
		if !slices.Contains(states, m.From) || !slices.Contains(states, m.To) || !slices.Contains(attemptEvents(), m.Event) {
			t.Errorf("move %+v names an unknown state or event", m)
		}
		k := [2]string{string(m.From), string(m.Event)}
		if seen[k] {
			t.Errorf("two moves from %s on %s", m.From, m.Event)
		}
		seen[k] = true
		reached[m.To] = true
	}
	for _, s := range states {
		if !reached[s] {
			t.Errorf("state %s is unreachable", s)
		}
	}
}

// TestAttemptStateMovesOnlyThroughTheTable reads the package's source: an
// attempt's State is assigned only in (*Attempt).move, and an Attempt
// literal only starts sending.
func TestAttemptStateMovesOnlyThroughTheTable(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			inMove := fn.Name.Name == "move" && fn.Recv != nil && strings.Contains(types(fn.Recv), "Attempt")
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "State" && !inMove {
							t.Errorf("%s: %s assigns .State outside (*Attempt).move", fset.Position(n.Pos()), fn.Name.Name)
						}
					}
				case *ast.CompositeLit:
					if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Attempt" {
						for _, el := range n.Elts {
							kv, ok := el.(*ast.KeyValueExpr)
							if !ok {
								continue
							}
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "State" {
								if v, ok := kv.Value.(*ast.Ident); !ok || v.Name != "AttemptSending" {
									t.Errorf("%s: an Attempt literal starts in a state other than AttemptSending", fset.Position(kv.Pos()))
								}
							}
						}
					}
				}
				return true
			})
		}
	}
}

// types returns the receiver list's types as source text, roughly.
func types(fl *ast.FieldList) string {
	var b strings.Builder
	for _, f := range fl.List {
		ast.Inspect(f.Type, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				b.WriteString(id.Name)
			}
			return true
		})
	}
	return b.String()
}
