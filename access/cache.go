package access

import (
	"context"
	"sync"

	"github.com/creatormusic/platform/fault"
)

// DefaultCacheSize is the number of snapshots a Cache keeps when its size is
// not set.
const DefaultCacheSize = 10000

// Cache keeps authority snapshots stamped with the authority version they
// were loaded at. Each Get reads the current version (one cheap query) and
// reloads the snapshot only if it changed, so a change of role, membership,
// entitlement, subscription or flag, bumped in the same transaction as the
// change, is seen by the very next request on every host. There is no TTL.
//
// A Cache is safe for concurrent use. When full, it evicts an arbitrary
// entry. The zero value is ready to use with DefaultCacheSize.
type Cache struct {
	// Size bounds the number of snapshots; zero means DefaultCacheSize. Set
	// it before first use.
	Size int

	mu      sync.Mutex
	entries map[cacheKey]Authority
}

// NewCache returns a cache holding at most size snapshots (zero means
// DefaultCacheSize).
func NewCache(size int) *Cache { return &Cache{Size: size} }

// cacheKey names a snapshot: the environment is part of it because
// entitlements differ between test and live.
type cacheKey struct {
	tenant, workspace, user string
	env                     Environment
}

// Get returns the authority of userID in workspaceID of tenantID in
// environment env, from the
// cache when its version is current, else loaded through s and stored.
// Callers must not modify the returned snapshot's slices or map. Errors are
// those of s, wrapped with the operation.
func (c *Cache) Get(ctx context.Context, s Store, tenantID, workspaceID, userID string, env Environment) (Authority, error) {
	v, err := s.AuthzVersion(ctx, workspaceID)
	if err != nil {
		return Authority{}, fault.Wrap("access.Cache.Get", err)
	}
	return c.GetAt(ctx, s, tenantID, workspaceID, userID, env, v)
}

// GetAt is Get for a caller that already read the workspace's current
// authority version v in the same round trip as its credential (the API key
// lookup does), saving a query per request.
func (c *Cache) GetAt(ctx context.Context, s Store, tenantID, workspaceID, userID string, env Environment, v int64) (Authority, error) {
	const op = "access.Cache.Get"
	k := cacheKey{tenantID, workspaceID, userID, env}
	c.mu.Lock()
	a, ok := c.entries[k]
	c.mu.Unlock()
	if ok && a.Version == v {
		return a, nil
	}
	a, err := s.AuthorityLoad(ctx, tenantID, workspaceID, userID, env)
	if err != nil {
		return Authority{}, fault.Wrap(op, err)
	}
	a.prepare()
	c.put(k, a)
	return a, nil
}

// put stores a, evicting an arbitrary entry when the cache is full. A
// snapshot never replaces one loaded at a newer version.
func (c *Cache) put(k cacheKey, a Authority) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[cacheKey]Authority)
	}
	if old, ok := c.entries[k]; ok {
		if old.Version > a.Version {
			return
		}
	} else {
		size := c.Size
		if size <= 0 {
			size = DefaultCacheSize
		}
		for victim := range c.entries {
			if len(c.entries) < size {
				break
			}
			delete(c.entries, victim)
		}
	}
	c.entries[k] = a
}

// Len reports how many snapshots the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Purge drops every snapshot.
func (c *Cache) Purge() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}
