package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"
)

// syncTimeout bounds one read of the change log.
const syncTimeout = 5 * time.Second

// changeReader brings a shared database's credential cache up to date
// with the change log (credcache.go). Lookups wait for a read that started
// after they arrived; one read serves every lookup waiting for it, and
// reads run one after another while lookups keep arriving.
type changeReader struct {
	db *DB
	c  *credCache

	mu sync.Mutex
	// running is true while a goroutine runs reads; next is the read the
	// lookups that arrived since the running one started wait for.
	running bool
	next    *syncRound
}

// syncRound is one read of the log and its outcome.
type syncRound struct {
	done chan struct{}
	err  error
}

// wait returns once a read of the log that started after wait was called
// has been applied, with that read's error; or with ctx's error.
func (r *changeReader) wait(ctx context.Context) error { return r.start().await(ctx) }

// start returns the first read of the log that starts after the call,
// starting it now when no read is running.
func (r *changeReader) start() *syncRound {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = &syncRound{done: make(chan struct{})}
	}
	rd := r.next
	if !r.running {
		r.running, r.next = true, nil
		go r.run(rd)
	}
	return rd
}

// await returns once the round's read has been applied, with its error;
// or with ctx's error.
func (rd *syncRound) await(ctx context.Context) error {
	select {
	case <-rd.done:
		return rd.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run reads for rd, then for each round that gathered lookups meanwhile,
// and stops when none did.
func (r *changeReader) run(rd *syncRound) {
	for rd != nil {
		rd.err = r.read()
		close(rd.done)
		r.mu.Lock()
		rd, r.next = r.next, nil
		if rd == nil {
			r.running = false
		}
		r.mu.Unlock()
	}
}

// syncSQL reads the epoch and the first 64 changes after a number, in one
// snapshot; a cache further behind empties itself instead of applying
// them one by one.
const syncSQL = `SELECT e.seq, c.seq, c.tags FROM credential_epoch e
	LEFT JOIN LATERAL (SELECT seq, tags FROM credential_changes WHERE seq > ? ORDER BY seq LIMIT 64) c ON true
	WHERE e.id = 1`

// read applies the changes logged since the cache's last, or empties the
// cache when it is too far behind to apply them one by one.
func (r *changeReader) read() error {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	c := r.c
	c.mu.Lock()
	from := c.applied
	c.stats.Syncs++
	c.mu.Unlock()
	rows, err := r.db.Read().query(ctx, syncSQL, from)
	if err != nil {
		return fmt.Errorf("store: read the credential change log: %w", err)
	}
	defer rows.Close()
	var (
		epoch   int64
		changes [][]string
		last    = from
		broken  bool
	)
	for rows.Next() {
		var (
			seq  sql.NullInt64
			tags sql.NullString
		)
		if err := rows.Scan(&epoch, &seq, &tags); err != nil {
			return fmt.Errorf("store: read the credential change log: %w", err)
		}
		if !seq.Valid {
			continue
		}
		if seq.Int64 != last+1 {
			broken = true // pruned past this cache's last change
		}
		last = seq.Int64
		changes = append(changes, strings.Fields(tags.String))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read the credential change log: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case epoch < c.applied:
		// The log restarted (a restored database): start over.
		c.purge()
	case epoch == c.applied:
	case broken || last != epoch:
		c.purge()
	default:
		for _, tags := range changes {
			c.applyLocked(tags)
		}
	}
	c.applied = epoch
	return nil
}
