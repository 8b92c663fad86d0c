package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
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
	// epochFunc reads the epoch (Options.EpochFunc); nil reads it through
	// the read pool.
	epochFunc func(ctx context.Context) (int64, error)

	mu sync.Mutex
	// running is true while a goroutine runs reads; cur is the read it
	// runs, and next the read the lookups that arrived after cur was sent
	// wait for.
	running   bool
	cur, next *syncRound
}

// syncRound is one read of the log and its outcome. Lookups join it until
// it is sent.
type syncRound struct {
	sent bool
	done chan struct{}
	err  error
}

// wait returns once a read of the log that started after wait was called
// has been applied, with that read's error; or with ctx's error.
func (r *changeReader) wait(ctx context.Context) error { return r.start().await(ctx) }

// start returns the first read of the log sent after the call: the
// running read if it is not sent yet, else the next one; it starts a read
// when none is running.
func (r *changeReader) start() *syncRound {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil && !r.cur.sent {
		return r.cur
	}
	if r.next == nil {
		r.next = &syncRound{done: make(chan struct{})}
	}
	rd := r.next
	if !r.running {
		r.running, r.cur, r.next = true, rd, nil
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
		// Let the requests already running reach their lookups and join
		// this read before it is sent.
		runtime.Gosched()
		r.mu.Lock()
		rd.sent = true
		r.mu.Unlock()
		rd.err = r.read()
		close(rd.done)
		r.mu.Lock()
		rd, r.next = r.next, nil
		r.cur, r.running = rd, rd != nil
		r.mu.Unlock()
	}
}

// epochSQL reads the epoch, the number of the last change committed.
const epochSQL = `SELECT seq FROM credential_epoch WHERE id = 1`

// syncSQL reads the epoch and the first 64 changes after a number, in one
// snapshot; a cache further behind empties itself instead of applying
// them one by one.
const syncSQL = `SELECT e.seq, c.seq, c.tags FROM credential_epoch e
	LEFT JOIN LATERAL (SELECT seq, tags FROM credential_changes WHERE seq > ? ORDER BY seq LIMIT 64) c ON true
	WHERE e.id = 1`

// read applies the changes logged since the cache's last, or empties the
// cache when it is too far behind to apply them one by one.
func (r *changeReader) read() (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
	defer cancel()
	c := r.c
	c.mu.Lock()
	from := c.applied
	c.stats.Syncs++
	c.mu.Unlock()
	// Nearly always nothing changed: one row of one column says so.
	var now int64
	if r.epochFunc != nil {
		now, err = r.epochFunc(ctx)
	} else {
		err = r.db.Read().queryRow(ctx, epochSQL).Scan(&now)
	}
	if err != nil {
		return fmt.Errorf("store: read the credential epoch: %w", err)
	}
	if now == from {
		return nil
	}
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
