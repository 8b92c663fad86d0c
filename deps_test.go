package platform_test

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/creatormusic/platform"

// domains are the packages that hold the platform's rules. They reach the
// outside world only through their own ports, so an embedder can build on
// them without the HTTP layer, the store or any provider's SDK.
func domains() []string {
	return []string{"access", "account", "apikey", "asset", "billing", "chain/intent", "chain/wallet", "fault", "fsm",
		"generation", "generation/credential", "generation/operation", "idempotency", "jobs", "ledger", "money", "outbox",
		"plan", "policy", "sound", "token", "token/sale"}
}

// forbidden reports why a domain may not import path, or "".
func forbidden(path string) string {
	switch {
	case path == module:
		return "the root package"
	case path == module+"/transport" || strings.HasPrefix(path, module+"/transport/"):
		return "transport"
	case path == module+"/store" || strings.HasPrefix(path, module+"/store/"):
		return "the store"
	}
	for _, sdk := range []string{"github.com/stripe/stripe-go", "github.com/gagliardetto/solana-go", "github.com/uptrace/bun",
		"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "github.com/pb33f/libopenapi"} {
		if path == sdk || strings.HasPrefix(path, sdk+"/") {
			return "an SDK (" + sdk + ")"
		}
	}
	return ""
}

// TestDomainsImportNoTransportStoreRootOrSDK walks each domain's non-test
// imports through the module, and fails when any package it links is the
// root, transport, the store or an SDK, naming the chain that brings it in.
func TestDomainsImportNoTransportStoreRootOrSDK(t *testing.T) {
	for _, d := range domains() {
		seen := map[string]bool{}
		var walk func(pkg string, chain []string)
		walk = func(pkg string, chain []string) {
			if seen[pkg] {
				return
			}
			seen[pkg] = true
			dir := filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/"))
			if dir == "" {
				dir = "."
			}
			bp, err := build.ImportDir(dir, 0)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			for _, imp := range bp.Imports {
				next := append(slices.Clone(chain), imp)
				if why := forbidden(imp); why != "" {
					t.Errorf("domain %s links %s: %s", d, why, strings.Join(next, " -> "))
					continue
				}
				if strings.HasPrefix(imp, module+"/") {
					walk(imp, next)
				}
			}
		}
		walk(module+"/"+d, []string{module + "/" + d})
	}
}
