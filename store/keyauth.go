package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/fault"
)

// keyAuthSQL reads, in one round trip, what authenticating a key needs:
// the key, the presented secret's expiry and the two authority stamps
// covering the key's workspace (its own and the global one; missing rows
// read 0).
const keyAuthSQL = `SELECT k.id, k.tenant_id, k.workspace_id, k.environment, k.scopes, k.created_by_user_id,
	k.internal, k.status, k.rate_per_minute, k.max_concurrent, k.monthly_budget, s.expires_at,
	CAST(COALESCE((SELECT v.version FROM authz_versions v WHERE v.scope = k.workspace_id), 0) AS BIGINT), ` + globalStamp + `
	FROM api_key_secrets s JOIN api_keys k ON k.id = s.key_id WHERE s.digest = ?`

// globalStamp selects the global authority stamp as a BIGINT column.
const globalStamp = `CAST(COALESCE((SELECT v.version FROM authz_versions v WHERE v.scope = '` + GlobalAuthzScope + `'), 0) AS BIGINT)`

// KeyAuth implements apikey.AuthStore. On the read handle it answers from
// the credential cache (credcache.go) when it can, and keeps what it read
// otherwise; in a transaction it always reads.
func (tx *Tx) KeyAuth(ctx context.Context, digest string) (apikey.AuthRecord, error) {
	const op = "store.KeyAuth"
	cached := tx.cachedLookups()
	var gen uint64
	if cached {
		c := tx.db.creds
		if c.has("k"+digest) && (tx.ahead || c.current(ctx)) {
			if r, ok := c.key(digest, GlobalAuthzScope); ok {
				return r, nil
			}
		}
		gen = c.begin()
	}
	row := tx.queryRow(ctx, keyAuthSQL, digest)
	var (
		r          apikey.AuthRecord
		env        string
		scopes     string
		status     string
		expires    sql.NullTime
		wsv, globv int64
	)
	k := &r.Key
	err := row.Scan(&k.ID, &k.TenantID, &k.WorkspaceID, &env, &scopes, &k.CreatedByUserID, &k.Internal, &status,
		&k.Limits.RequestsPerMinute, &k.Limits.MaxConcurrentRequests, &k.Limits.MonthlyRequestBudget, &expires, &wsv, &globv)
	if errors.Is(err, sql.ErrNoRows) {
		return apikey.AuthRecord{}, fault.E(op, fault.NotFound, "")
	}
	if err != nil {
		return apikey.AuthRecord{}, errf(op, err)
	}
	k.Environment, k.Status = access.Environment(env), apikey.Status(status)
	if k.Scopes, err = tx.db.scopeSets.decode(scopes); err != nil {
		return apikey.AuthRecord{}, errf(op, err)
	}
	r.Secret = apikey.Secret{Digest: digest, KeyID: k.ID}
	if expires.Valid {
		t := expires.Time.UTC()
		r.Secret.ExpiresAt = &t
	}
	r.AuthzVersion = wsv + globv
	if cached {
		keep := r
		keep.Key.Scopes = slices.Clone(k.Scopes)
		tx.db.creds.put(gen, "k"+digest, &credEntry{key: &keep, tags: []string{"k:" + k.ID}},
			map[string]int64{k.WorkspaceID: wsv, GlobalAuthzScope: globv})
	}
	return r, nil
}

// maxScopeSets bounds scopeSets: keys hold a few distinct scope lists, and
// lists past the bound are decoded every time.
const maxScopeSets = 256

// scopeSets keeps the scope lists of keys decoded by their stored JSON
// text. Every authenticated request reads its key's list, and decoding it
// with encoding/json took a tenth of the server's time for an API-key GET
// on SQLite. A list is immutable once kept; decode hands out copies.
type scopeSets struct {
	mu   sync.RWMutex
	sets map[string][]string
}

// decode returns the scopes stored as the JSON array raw.
func (c *scopeSets) decode(raw string) ([]string, error) {
	c.mu.RLock()
	set, ok := c.sets[raw]
	c.mu.RUnlock()
	if ok {
		return slices.Clone(set), nil
	}
	if err := json.Unmarshal([]byte(raw), &set); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.sets == nil {
		c.sets = map[string][]string{}
	}
	if len(c.sets) < maxScopeSets {
		c.sets[raw] = slices.Clone(set)
	}
	c.mu.Unlock()
	return set, nil
}
