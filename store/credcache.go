package store

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
)

// The credential cache.
//
// Every authenticated request used to read its credential (an API key's
// row and secret, or a session's row) and its workspace's authority
// version from the database. The DB keeps what such reads return in
// memory, keyed by the secret's or the cookie's digest, and the authority
// versions by scope, and serves the read pool's lookups from there.
//
// It is exact, never stale by a time window. Every store write that
// changes what a cached lookup returns names what it changed in a tag
// ("k:<key id>", "s:<session id>", "u:<user id>" for all of a user's
// sessions, "a:<authz scope>"), and the cache drops the entries carrying
// that tag:
//
//   - on this host, once the transaction has committed (Tx.AfterCommit);
//   - on every host sharing a PostgreSQL database (Options.Shared), before
//     it next answers from memory: the transaction also logs its tags
//     under the next number of a database-wide epoch (migration 23:
//     numbers follow commit order without gaps), and a host reads the
//     epoch and the changes it has not applied before it serves a cached
//     entry. That read is shared: a request waits for the next read that
//     starts after it arrived, so a change committed before the request
//     arrived is applied before it is answered, and requests arriving
//     together cost one small query between them instead of one
//     credential query each. A caller that can look again when it must
//     (the gateway's reads) overlaps that read with its own work instead
//     of waiting for it first: DB.ReadAhead.
//
// A PostgreSQL notification (LISTEN/NOTIFY) would tell hosts sooner but
// not surely in time: measured here it reached the other host 0.4 to 0.5
// ms after the writer's response, and the next request on that host could
// be answered before it.
//
// A lookup that raced a change is not kept: each lookup notes the cache's
// generation before it reads the database and keeps its answer only if no
// change was applied meanwhile. Unknown credentials are never kept, so
// guessing keys cannot fill the cache. When the shared read fails, the
// lookup reads the database as if there were no cache.

// maxCredentials bounds the cached credentials; past it an arbitrary entry
// is evicted for each new one.
const maxCredentials = 50_000

// maxLoggedTags bounds the tags one change logs; a longer list is logged
// as "*", which empties every host's cache.
const maxLoggedTags = 8000

// keptChanges is how many changes the log keeps; a host further behind
// empties its cache.
const keptChanges = 10_000

// credCache is the DB's credential cache. Its zero value is unusable; see
// newCredCache.
type credCache struct {
	// sync, for a shared database, reads the changes other hosts made
	// (nil when this process is the database's only host).
	sync *changeReader

	mu sync.Mutex
	// gen counts the changes applied; a lookup keeps its answer only if gen
	// did not move while it read.
	gen uint64
	// applied is the number of the last logged change applied (shared
	// databases).
	applied int64
	// entries are the cached credentials by lookup key ("k" + secret
	// digest, "c" + cookie digest, "t" + access token digest).
	entries map[string]*credEntry
	// tagged indexes entries by the tags they carry.
	tagged map[string]map[string]struct{}
	// versions are authority versions by authz scope.
	versions map[string]int64
	stats    CredentialCacheStats
}

// credEntry is one cached credential: an API key with the secret presented,
// or a session.
type credEntry struct {
	key     *apikey.AuthRecord
	session *account.Session
	tags    []string
}

// CredentialCacheStats count what the credential cache did since the DB
// opened: lookups it answered (Hits), lookups that read the database
// (Misses), the changes it applied (Invalidations, each a tag or a
// purge), and on a shared database the reads of other hosts' changes
// (Syncs, each shared by the lookups waiting for it).
type CredentialCacheStats struct {
	Hits, Misses, Invalidations, Syncs uint64
	// Entries is the number of credentials it holds.
	Entries int
}

func newCredCache() *credCache {
	return &credCache{entries: map[string]*credEntry{}, tagged: map[string]map[string]struct{}{},
		versions: map[string]int64{}}
}

// begin returns the generation a lookup that reads the database starts at.
func (c *credCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Misses++
	return c.gen
}

// has reports whether lookup is cached; a shared database's cache then
// catches up with other hosts' changes (current) before answering.
func (c *credCache) has(lookup string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[lookup]
	return ok
}

// current applies every change committed before it was called, from the
// change log when other hosts share the database. It reports false when
// that could not be read: the caller then reads the database.
func (c *credCache) current(ctx context.Context) bool {
	if c.sync == nil {
		return true
	}
	return c.sync.wait(ctx) == nil
}

// key returns the cached key authenticated by a secret's digest, with its
// authority version when both parts are cached.
func (c *credCache) key(digest, global string) (apikey.AuthRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries["k"+digest]
	if !ok {
		return apikey.AuthRecord{}, false
	}
	v, ok := c.version(e.key.Key.WorkspaceID, global)
	if !ok {
		return apikey.AuthRecord{}, false
	}
	c.stats.Hits++
	r := *e.key
	r.Key.Scopes = slices.Clone(r.Key.Scopes)
	r.AuthzVersion = v
	return r, true
}

// session returns the cached session found by a lookup key ("c" or "t"
// and a digest), with its authority version.
func (c *credCache) session(lookup, global string) (account.SessionAuth, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[lookup]
	if !ok {
		return account.SessionAuth{}, false
	}
	v, ok := c.version(e.session.WorkspaceID, global)
	if !ok {
		return account.SessionAuth{}, false
	}
	c.stats.Hits++
	return account.SessionAuth{Session: *e.session, AuthzVersion: v}, true
}

// version returns the authority version of workspaceID (its stamp plus
// the global one), if both stamps are cached. c.mu is held.
func (c *credCache) version(workspaceID, global string) (int64, bool) {
	w, ok := c.versions[workspaceID]
	if !ok {
		return 0, false
	}
	g, ok := c.versions[global]
	return w + g, ok
}

// put keeps a lookup's answer read at generation gen, with the authority
// stamps read in the same statement, unless a change was applied since.
func (c *credCache) put(gen uint64, lookup string, e *credEntry, stamps map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	for scope, v := range stamps {
		c.versions[scope] = v
	}
	if old, ok := c.entries[lookup]; ok {
		c.remove(lookup, old)
	}
	for k, victim := range c.entries {
		if len(c.entries) < maxCredentials {
			break
		}
		c.remove(k, victim)
	}
	if len(c.versions) > maxCredentials {
		clear(c.versions)
	}
	c.entries[lookup] = e
	for _, t := range e.tags {
		set := c.tagged[t]
		if set == nil {
			set = map[string]struct{}{}
			c.tagged[t] = set
		}
		set[lookup] = struct{}{}
	}
}

// remove drops one entry and its index. c.mu is held.
func (c *credCache) remove(lookup string, e *credEntry) {
	delete(c.entries, lookup)
	for _, t := range e.tags {
		if set := c.tagged[t]; set != nil {
			delete(set, lookup)
			if len(set) == 0 {
				delete(c.tagged, t)
			}
		}
	}
}

// seen records that a session was touched at at on this host, so that the
// host does not touch it again within account's touch interval.
func (c *credCache) seen(sessionID string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for lookup := range c.tagged["s:"+sessionID] {
		if e := c.entries[lookup]; e != nil && e.session != nil && e.session.LastSeenAt.Before(at) {
			s := *e.session
			s.LastSeenAt = at
			e.session = &s
		}
	}
}

// apply drops what tags name ("*" empties the cache) and moves the
// generation.
func (c *credCache) apply(tags []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applyLocked(tags)
}

// applyLocked is apply with c.mu held.
func (c *credCache) applyLocked(tags []string) {
	c.gen++
	for _, t := range tags {
		c.stats.Invalidations++
		if t == "*" {
			c.purge()
			return
		}
		if scope, ok := strings.CutPrefix(t, "a:"); ok {
			delete(c.versions, scope)
			continue
		}
		for lookup := range c.tagged[t] {
			c.remove(lookup, c.entries[lookup])
		}
	}
}

// purge empties the cache. c.mu is held.
func (c *credCache) purge() {
	c.gen++
	c.stats.Invalidations++
	clear(c.entries)
	clear(c.tagged)
	clear(c.versions)
}

// CredentialCacheStats reports what the credential cache did.
func (db *DB) CredentialCacheStats() CredentialCacheStats {
	c := db.creds
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.entries)
	return s
}

// credentialsChanged records that this transaction changes what the
// credential lookups tagged tags return: the tags are applied to this
// host's cache after the commit and, on a shared database, logged for the
// other hosts in the transaction. Only a transaction changes credentials.
func (tx *Tx) credentialsChanged(ctx context.Context, tags ...string) error {
	if tx.sqlTx == nil {
		return errors.New("store: a credential changed outside a transaction")
	}
	if len(tx.credTags) == 0 {
		tx.AfterCommit(func() { tx.db.creds.apply(tx.credTags) })
	}
	tx.credTags = append(tx.credTags, tags...)
	if tx.db.creds.sync == nil {
		return nil
	}
	logged := strings.Join(tags, " ")
	if len(logged) > maxLoggedTags {
		logged = "*"
	}
	// One statement, which a pipelining driver may send with the commit:
	// the epoch row stays locked only for the commit.
	return tx.execLater(ctx, nil, `WITH e AS (UPDATE credential_epoch SET seq = seq + 1 WHERE id = 1 RETURNING seq),
		c AS (INSERT INTO credential_changes (seq, tags, created_at) SELECT seq, ?, ? FROM e RETURNING seq)
		DELETE FROM credential_changes WHERE seq <= (SELECT seq FROM c) - `+strconv.Itoa(keptChanges), logged, tx.now)
}

// cachedLookups reports whether tx's lookups may use the credential cache:
// only on the read handle; a transaction reads its own snapshot.
func (tx *Tx) cachedLookups() bool { return tx.sqlTx == nil }
