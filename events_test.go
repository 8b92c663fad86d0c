package platform_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform"
)

// TestEventCatalogueNamesEveryEmitter finds every call of OutboxInsert in
// the module's source (the store, which implements it, and test helpers
// aside) and fails on a caller the emitter list above does not name, so a
// new kind of event cannot be written without the catalogue hearing of it.
// Each emitter's types must be in the catalogue, and each catalogue type
// must belong to an emitter. (platformtest checks the events a test system
// actually wrote against the catalogue.)
func TestEventCatalogueNamesEveryEmitter(t *testing.T) {
	// The functions that write outbox events, each with the prefixes of
	// the event types (platform.EventCatalogue) it writes.
	catalogueEmitters := map[string][]string{
		"apikey/service.go (*Service).emit":                {"api_key."},
		"billing/subscription.go emit":                     {"billing.subscription."},
		"generation/operation/service.go (*Service).event": {"generation.operation.", "PROVIDER_COST_DRIFT"},
		"chain/intent/jobs.go (*Service).changed":          {"transaction_intent."},
		"ledger/service.go (*Service).write":               {"ledger.movement.posted"},
		"sound/service.go (*Service).move":                 {"sound.operation.completed"},
		"project/project.go event":                         {"project."},
		"project/submission.go submissionEvent":            {"submission."},
		"rewards/challenge.go challengeEvent":              {"challenge."},
		"release/release.go event":                         {"release."},
		"rewards/reward.go rewardEvent":                    {"reward."},
		"marketplace/service.go event":                     {"license."},
		"marketplace/service.go emit":                      {"listing.", "marketplace_order.", "entitlement."},
		"project/members.go memberChanged":                 {"project.member_changed"},
		"swap/operation.go changed":                        {"swap_operation."},
		"web3/zk/service.go (*Service).Record":             {"zk_verification."},
		"web3/cctp/transfer.go changed":                    {"cctp_transfer."},
		"ai/admin.go emit":                                 {"ai.model.", "ai.routing."},
		"ai/completion.go operationEvent":                  {"ai.operation."},
		"ai/tool/runner.go emit":                           {"ai_artifact."},
		"web3/x402/grant.go (*Service).changed":            {"x402_settlement."},
		"web3/x402/grant.go (*Service).Consume":            {"x402_grant.consumed"},
		"creatorgraph/creatorgraph.go relationEvent":       {"creator_relation."},
		"attribution/attribution.go event":                 {"attribution."},
		"webhook/endpoint.go emitEvent":                    {"webhook_endpoint.", "webhook.test"},
	}
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "store" ||
				name == "examples" || strings.HasSuffix(name, "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "OutboxInsert" {
						calls = true
					}
				}
				return !calls
			})
			if calls {
				found = append(found, filepath.ToSlash(path)+" "+funcName(fn))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var known []string
	for k := range catalogueEmitters {
		known = append(known, k)
	}
	slices.Sort(found)
	slices.Sort(known)
	if diff := cmp.Diff(known, found); diff != "" {
		t.Errorf("OutboxInsert callers (-listed +found); add a new emitter's event types to platform.EventCatalogue "+
			"and the emitter to catalogueEmitters:\n%s", diff)
	}
	cat := platform.EventCatalogue()
	claimed := map[string]bool{}
	for emitter, prefixes := range catalogueEmitters {
		for _, p := range prefixes {
			n := 0
			for _, e := range cat {
				if strings.HasPrefix(e.Type, p) {
					claimed[e.Type] = true
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s writes %s... events, which the catalogue does not list", emitter, p)
			}
		}
	}
	for _, e := range cat {
		if !claimed[e.Type] {
			t.Errorf("catalogue type %s belongs to no emitter", e.Type)
		}
		if e.SchemaVersion < 1 || e.Aggregate == "" || e.AggregateIDPrefix == "" || e.Description == "" {
			t.Errorf("catalogue row %+v is incomplete", e)
		}
	}
}

// funcName returns "(*Recv).Name" for a method, "Name" for a function.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + star + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
