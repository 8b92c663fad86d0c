package operation

import (
	"sync"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation"
	"github.com/creatormusic/platform/generation/credential"
)

// maxCustomerRoutes bounds the workspaces customerRoutes remembers; past
// it the cache starts over.
const maxCustomerRoutes = 10000

// customerRoutes remembers, per workspace and environment, which provider
// routes the workspace's own healthy credentials serve, under the
// authority version the request was authenticated with
// (access.Principal.AuthzVersion). Every write that changes a workspace's
// usable credentials raises that version in its unit of work, and every
// request reads it with its credential, so an answer kept under a version
// is the answer for every request that carries it, on any host: a
// generation request reads the workspace's credentials only after a
// change. A principal without a version (zero) always reads them.
type customerRoutes struct {
	mu sync.Mutex
	m  map[access.Scope]customerEntry
}

// customerEntry is a workspace's usable customer routes at a version.
type customerEntry struct {
	version int64
	routes  map[generation.ProviderID]bool
}

// routes returns the provider routes p's workspace's own credentials
// serve in p's environment; read reads the workspace's usable credentials
// (credential.Service.Usable). Callers must not modify the map.
func (c *customerRoutes) routes(p *access.Principal, read func() (map[generation.ProviderID]credential.Credential, error)) (map[generation.ProviderID]bool, error) {
	sc := p.Scope()
	if p.AuthzVersion > 0 {
		c.mu.Lock()
		e, ok := c.m[sc]
		c.mu.Unlock()
		if ok && e.version == p.AuthzVersion {
			return e.routes, nil
		}
	}
	usable, err := read()
	if err != nil {
		return nil, err
	}
	routes := make(map[generation.ProviderID]bool, len(usable))
	for r := range usable {
		routes[r] = true
	}
	if p.AuthzVersion > 0 {
		c.mu.Lock()
		// A request authenticated before a change may finish after one
		// authenticated since: never replace a newer version's answer.
		if e, ok := c.m[sc]; !ok || e.version < p.AuthzVersion {
			if c.m == nil || len(c.m) >= maxCustomerRoutes {
				c.m = make(map[access.Scope]customerEntry)
			}
			c.m[sc] = customerEntry{version: p.AuthzVersion, routes: routes}
		}
		c.mu.Unlock()
	}
	return routes, nil
}
