package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
	"github.com/creatormusic/platform/store"
)

// exerciseJobs runs the jobs contract: enqueue in a unit of work, claim with
// leases, compare-and-set settlement, retries and discard.
func exerciseJobs(t *testing.T, open Opener) {
	ctx := context.Background()
	const lease = 30 * time.Second

	insert := func(t *testing.T, db *store.DB, p jobs.InsertParams) bool {
		t.Helper()
		var ok bool
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			ok, err = tx.JobInsert(ctx, p)
			return err
		})
		if err != nil {
			t.Fatalf("JobInsert(%+v): %v", p, err)
		}
		return ok
	}
	claim := func(t *testing.T, db *store.DB, token string, limit int) []jobs.Job {
		t.Helper()
		got, err := db.Jobs().JobClaim(ctx, jobs.ClaimParams{LockedBy: token, Limit: limit, Lease: lease})
		if err != nil {
			t.Fatalf("JobClaim(%s): %v", token, err)
		}
		return got
	}
	claimOne := func(t *testing.T, db *store.DB, token string) jobs.Job {
		t.Helper()
		got := claim(t, db, token, 10)
		if len(got) != 1 {
			t.Fatalf("JobClaim(%s) = %d jobs, want 1", token, len(got))
		}
		return got[0]
	}
	get := func(t *testing.T, db *store.DB, id string) jobs.Record {
		t.Helper()
		r, err := db.Read().JobGet(ctx, id)
		if err != nil {
			t.Fatalf("JobGet(%s): %v", id, err)
		}
		return r
	}
	wantCode := func(t *testing.T, what string, err error, code fault.Code) {
		t.Helper()
		if !fault.Is(err, code) {
			t.Fatalf("%s = %v, want %s", what, err, code)
		}
	}

	t.Run("InsertClaimComplete", func(t *testing.T) {
		db, _ := fresh(t, open)
		if !insert(t, db, jobs.InsertParams{Kind: "mail.send", Payload: []byte(`{"to":"a"}`)}) {
			t.Fatal("first insert reported not inserted")
		}
		j := claimOne(t, db, "w1/1")
		if j.Kind != "mail.send" || string(j.Payload) != `{"to":"a"}` || j.Attempts != 1 ||
			j.MaxAttempts != jobs.DefaultMaxAttempts || !j.RunAt.Equal(Epoch) || !strings.HasPrefix(j.ID, "job_") {
			t.Fatalf("claimed %+v", j)
		}
		r := get(t, db, j.ID)
		if r.State != jobs.Running || r.LockedBy != "w1/1" || !r.LockedUntil.Equal(Epoch.Add(lease)) {
			t.Fatalf("after claim: %+v", r)
		}
		if got := claim(t, db, "w2/1", 10); len(got) != 0 {
			t.Fatalf("a leased job was claimed again: %+v", got)
		}
		if err := db.Jobs().JobComplete(ctx, j.ID, "w1/1"); err != nil {
			t.Fatalf("JobComplete: %v", err)
		}
		r = get(t, db, j.ID)
		if r.State != jobs.Succeeded || r.LockedBy != "" || !r.LockedUntil.IsZero() || !r.FinishedAt.Equal(Epoch) {
			t.Fatalf("after complete: %+v", r)
		}
		wantCode(t, "second JobComplete", db.Jobs().JobComplete(ctx, j.ID, "w1/1"), fault.Conflict)
		_, err := db.Read().JobGet(ctx, "job_missing")
		wantCode(t, "JobGet(missing)", err, fault.NotFound)
	})

	t.Run("DefaultsAndValidation", func(t *testing.T) {
		db, _ := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k"})
		j := claimOne(t, db, "w/1")
		if string(j.Payload) != "{}" || j.MaxAttempts != jobs.DefaultMaxAttempts {
			t.Fatalf("defaults: %+v", j)
		}
		for _, p := range []jobs.InsertParams{{}, {Kind: "k", Payload: []byte("not json")}, {Kind: "k", MaxAttempts: -1}} {
			_, err := db.Read().JobInsert(ctx, p)
			wantCode(t, "JobInsert(invalid)", err, fault.InvalidInput)
		}
		_, err := db.Jobs().JobClaim(ctx, jobs.ClaimParams{LockedBy: "w", Limit: 0, Lease: lease})
		wantCode(t, "JobClaim(limit 0)", err, fault.InvalidInput)
	})

	t.Run("ClaimOrderAndLimit", func(t *testing.T) {
		db, clock := fresh(t, open)
		for i := 5; i >= 1; i-- {
			insert(t, db, jobs.InsertParams{Kind: "k", Payload: []byte{byte('0' + i)}, RunAt: Epoch.Add(time.Duration(i) * time.Second)})
		}
		clock.Advance(time.Hour)
		got := claim(t, db, "w/1", 2)
		if len(got) != 2 || string(got[0].Payload) != "1" || string(got[1].Payload) != "2" {
			t.Fatalf("claim limit 2 = %+v, want the two earliest in order", got)
		}
		if got := claim(t, db, "w/2", 10); len(got) != 3 {
			t.Fatalf("second claim = %d jobs, want 3", len(got))
		}
	})

	t.Run("FutureRunAtWaits", func(t *testing.T) {
		db, clock := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k", RunAt: Epoch.Add(time.Hour)})
		if got := claim(t, db, "w/1", 10); len(got) != 0 {
			t.Fatalf("future job claimed early: %+v", got)
		}
		clock.Advance(time.Hour - time.Second)
		if got := claim(t, db, "w/2", 10); len(got) != 0 {
			t.Fatalf("future job claimed a second early: %+v", got)
		}
		clock.Advance(time.Second)
		claimOne(t, db, "w/3")
	})

	t.Run("UniqueKeyDedupes", func(t *testing.T) {
		db, _ := fresh(t, open)
		p := jobs.InsertParams{Kind: "settle", UniqueKey: "settle:op_1"}
		if !insert(t, db, p) {
			t.Fatal("first insert with key not inserted")
		}
		if insert(t, db, p) {
			t.Fatal("duplicate key inserted")
		}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			a, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: "settle", UniqueKey: "settle:op_2"})
			if err != nil {
				return err
			}
			b, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: "settle", UniqueKey: "settle:op_2"})
			if err != nil {
				return err
			}
			if !a || b {
				t.Errorf("same-tx duplicate: first=%v second=%v", a, b)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("InTx: %v", err)
		}
		// Keys stay taken after the job finished.
		for _, j := range claim(t, db, "w/1", 10) {
			if err := db.Jobs().JobComplete(ctx, j.ID, "w/1"); err != nil {
				t.Fatal(err)
			}
		}
		if insert(t, db, p) {
			t.Fatal("key of a succeeded job inserted again")
		}
		// No key, no deduplication.
		if !insert(t, db, jobs.InsertParams{Kind: "k"}) || !insert(t, db, jobs.InsertParams{Kind: "k"}) {
			t.Fatal("keyless inserts deduplicated")
		}
		counts, err := db.Read().JobCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if counts[jobs.Succeeded] != 2 || counts[jobs.Available] != 2 {
			t.Fatalf("counts = %v, want 2 succeeded, 2 available", counts)
		}
	})

	t.Run("ExpiredLeaseIsReclaimed", func(t *testing.T) {
		db, clock := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k"})
		old := claimOne(t, db, "old/1")
		clock.Advance(lease)
		if got := claim(t, db, "new/1", 10); len(got) != 0 {
			t.Fatalf("claimed at the lease's last instant: %+v", got)
		}
		if err := db.Jobs().JobExtend(ctx, jobs.ExtendParams{ID: old.ID, LockedBy: "old/1", Lease: lease}); err != nil {
			t.Fatalf("JobExtend by the holder: %v", err)
		}
		clock.Advance(lease + time.Second)
		j := claimOne(t, db, "new/1")
		if j.ID != old.ID || j.Attempts != 2 {
			t.Fatalf("reclaimed %+v, want %s with attempts 2", j, old.ID)
		}
		wantCode(t, "JobComplete by the old holder", db.Jobs().JobComplete(ctx, old.ID, "old/1"), fault.Conflict)
		_, err := db.Jobs().JobFail(ctx, jobs.FailParams{ID: old.ID, LockedBy: "old/1", Error: "late"})
		wantCode(t, "JobFail by the old holder", err, fault.Conflict)
		wantCode(t, "JobExtend by the old holder",
			db.Jobs().JobExtend(ctx, jobs.ExtendParams{ID: old.ID, LockedBy: "old/1", Lease: lease}), fault.Conflict)
		if r := get(t, db, old.ID); r.State != jobs.Running || r.LockedBy != "new/1" {
			t.Fatalf("the old holder changed the job: %+v", r)
		}
		if err := db.Jobs().JobComplete(ctx, j.ID, "new/1"); err != nil {
			t.Fatalf("JobComplete by the new holder: %v", err)
		}
		if r := get(t, db, j.ID); r.State != jobs.Succeeded || r.Attempts != 2 {
			t.Fatalf("after complete: %+v", r)
		}
	})

	t.Run("FailBacksOffAndRetries", func(t *testing.T) {
		db, clock := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k"})
		j := claimOne(t, db, "w/1")
		st, err := db.Jobs().JobFail(ctx, jobs.FailParams{ID: j.ID, LockedBy: "w/1", Error: "provider: 503", RetryAfter: 10 * time.Second})
		if err != nil || st != jobs.Available {
			t.Fatalf("JobFail = %s, %v; want available", st, err)
		}
		r := get(t, db, j.ID)
		if r.State != jobs.Available || r.LastError != "provider: 503" || !r.RunAt.Equal(Epoch.Add(10*time.Second)) ||
			r.LockedBy != "" || !r.LockedUntil.IsZero() || !r.FinishedAt.IsZero() {
			t.Fatalf("after fail: %+v", r)
		}
		if got := claim(t, db, "w/2", 10); len(got) != 0 {
			t.Fatalf("retried before its backoff: %+v", got)
		}
		clock.Advance(10 * time.Second)
		if j2 := claimOne(t, db, "w/3"); j2.ID != j.ID || j2.Attempts != 2 {
			t.Fatalf("retry = %+v", j2)
		}
	})

	t.Run("AttemptsExhaustedDiscards", func(t *testing.T) {
		db, clock := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k", MaxAttempts: 2})
		for attempt := 1; attempt <= 2; attempt++ {
			token := "w/" + string(rune('0'+attempt))
			j := claimOne(t, db, token)
			st, err := db.Jobs().JobFail(ctx, jobs.FailParams{ID: j.ID, LockedBy: token, Error: "boom", RetryAfter: time.Second})
			want := jobs.Available
			if attempt == 2 {
				want = jobs.Discarded
			}
			if err != nil || st != want {
				t.Fatalf("attempt %d: JobFail = %s, %v; want %s", attempt, st, err, want)
			}
			clock.Advance(time.Minute)
		}
		if got := claim(t, db, "w/9", 10); len(got) != 0 {
			t.Fatalf("discarded job claimed: %+v", got)
		}
		recs, err := db.Read().JobList(ctx, "k", 10)
		if err != nil || len(recs) != 1 {
			t.Fatalf("JobList = %d, %v", len(recs), err)
		}
		if r := recs[0]; r.State != jobs.Discarded || r.Attempts != 2 || r.LastError != "boom" || r.FinishedAt.IsZero() {
			t.Fatalf("discarded record: %+v", r)
		}
	})

	t.Run("ExpiredLeaseOnLastAttemptDiscards", func(t *testing.T) {
		db, clock := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k", MaxAttempts: 1})
		j := claimOne(t, db, "crashed/1")
		clock.Advance(lease + time.Second)
		if got := claim(t, db, "w/1", 10); len(got) != 0 {
			t.Fatalf("job with spent attempts reclaimed: %+v", got)
		}
		if r := get(t, db, j.ID); r.State != jobs.Discarded || r.LastError == "" || r.LockedBy != "" {
			t.Fatalf("after expiry on the last attempt: %+v", r)
		}
	})

	t.Run("ErrorTextIsBoundedAndValid", func(t *testing.T) {
		db, _ := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k"})
		j := claimOne(t, db, "w/1")
		long := "x" + strings.Repeat("é", 2000) + "\x00\xff"
		if _, err := db.Jobs().JobFail(ctx, jobs.FailParams{ID: j.ID, LockedBy: "w/1", Error: long, RetryAfter: time.Second}); err != nil {
			t.Fatalf("JobFail(long error): %v", err)
		}
		r := get(t, db, j.ID)
		if len(r.LastError) > jobs.MaxErrorLen || len(r.LastError) < jobs.MaxErrorLen-4 || !utf8.ValidString(r.LastError) {
			t.Fatalf("last_error: %d bytes, valid UTF-8 %v", len(r.LastError), utf8.ValidString(r.LastError))
		}
	})

	claimClass := func(t *testing.T, db *store.DB, token string, limit int, kinds []string, groupLimit int) []jobs.Job {
		t.Helper()
		got, err := db.Jobs().JobClaim(ctx, jobs.ClaimParams{LockedBy: token, Limit: limit, Lease: lease, Kinds: kinds, GroupLimit: groupLimit})
		if err != nil {
			t.Fatalf("JobClaim(%s): %v", token, err)
		}
		return got
	}
	payloads := func(js []jobs.Job) string {
		var b strings.Builder
		for _, j := range js {
			b.Write(j.Payload)
		}
		return b.String()
	}

	t.Run("ClaimOnlyKinds", func(t *testing.T) {
		db, clock := fresh(t, open)
		for i, k := range []string{"sound.run", "generation.dispatch", "billing.renewal"} {
			insert(t, db, jobs.InsertParams{Kind: k, Payload: []byte{byte('1' + i)}, RunAt: Epoch.Add(time.Duration(i) * time.Second)})
		}
		clock.Advance(time.Minute)
		if got := claimClass(t, db, "p/1", 10, []string{"generation.dispatch", "billing.renewal"}, 0); payloads(got) != "23" {
			t.Fatalf("claim of two kinds = %+v, want jobs 2 and 3", got)
		}
		if got := claimClass(t, db, "p/2", 10, []string{"generation.dispatch"}, 0); len(got) != 0 {
			t.Fatalf("claimed again: %+v", got)
		}
		if got := claimClass(t, db, "a/1", 10, []string{"sound.run"}, 0); payloads(got) != "1" {
			t.Fatalf("claim of sound.run = %+v", got)
		}
	})

	t.Run("GroupIsStored", func(t *testing.T) {
		db, _ := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "ws_1"})
		insert(t, db, jobs.InsertParams{Kind: "sound.run"})
		recs, err := db.Read().JobList(ctx, "sound.run", 10)
		if err != nil || len(recs) != 2 || recs[0].Group+"|"+recs[1].Group != "ws_1|" && recs[0].Group+"|"+recs[1].Group != "|ws_1" {
			t.Fatalf("JobList = %+v, %v; want groups ws_1 and none", recs, err)
		}
	})

	t.Run("GroupLimit", func(t *testing.T) {
		db, clock := fresh(t, open)
		kinds := []string{"sound.run"}
		at := func(i int) time.Time { return Epoch.Add(time.Duration(i) * time.Second) }
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g", Payload: []byte("1"), RunAt: at(1)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g", Payload: []byte("2"), RunAt: at(2)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g", Payload: []byte("3"), RunAt: at(3)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "h", Payload: []byte("4"), RunAt: at(4)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Payload: []byte("5"), RunAt: at(5)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Payload: []byte("6"), RunAt: at(6)})
		// A running job of another kind in group g does not count.
		insert(t, db, jobs.InsertParams{Kind: "other", Group: "g", RunAt: at(0)})
		clock.Advance(10 * time.Second)
		claimClass(t, db, "o/1", 1, []string{"other"}, 0)

		// Limit 2: one claim takes no more of g than it has room for.
		first := claimClass(t, db, "a/1", 10, kinds, 2)
		if payloads(first) != "12456" {
			t.Fatalf("first claim = %q, want jobs 1, 2, 4, 5, 6 (g held at two)", payloads(first))
		}
		if got := claimClass(t, db, "a/2", 10, kinds, 2); len(got) != 0 {
			t.Fatalf("g's third job claimed while two run: %+v", got)
		}
		if err := db.Jobs().JobComplete(ctx, first[0].ID, "a/1"); err != nil {
			t.Fatal(err)
		}
		if got := claimClass(t, db, "a/3", 10, kinds, 2); payloads(got) != "3" {
			t.Fatalf("after one of g finished = %q, want job 3", payloads(got))
		}
		// An expired lease frees its group's room: the job is claimable
		// again and no longer counts as running.
		clock.Advance(lease + time.Second)
		if err := db.Jobs().JobExtend(ctx, jobs.ExtendParams{ID: first[1].ID, LockedBy: "a/1", Lease: lease}); err != nil {
			t.Fatal(err)
		}
		if got := claimClass(t, db, "a/4", 10, kinds, 2); payloads(got) != "3456" {
			t.Fatalf("after leases expired = %q, want jobs 3, 4, 5, 6 reclaimed beside the renewed 2", payloads(got))
		}
	})

	t.Run("GroupLimitHoldsAcrossConcurrentClaims", func(t *testing.T) {
		db, _ := fresh(t, open)
		kinds := []string{"sound.run"}
		for range 12 {
			insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g"})
		}
		const claimers = 8
		var wg sync.WaitGroup
		counts := make(chan int, claimers*3)
		for i := range claimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 3 {
					got, err := db.Jobs().JobClaim(ctx, jobs.ClaimParams{LockedBy: fmt.Sprintf("c%d/%d", i, k), Limit: 2, Lease: lease,
						Kinds: kinds, GroupLimit: 2})
					if err != nil {
						t.Errorf("JobClaim: %v", err)
						return
					}
					counts <- len(got)
				}
			}()
		}
		wg.Wait()
		close(counts)
		total := 0
		for n := range counts {
			total += n
		}
		c, err := db.Read().JobCounts(ctx)
		if total != 2 || err != nil || c[jobs.Running] != 2 {
			t.Fatalf("%d concurrent claims took %d jobs of g (running %v, %v), want 2", claimers*3, total, c, err)
		}
	})

	t.Run("Backlog", func(t *testing.T) {
		db, clock := fresh(t, open)
		kinds := []string{"sound.run"}
		backlog := func(groupLimit int) jobs.Backlog {
			t.Helper()
			b, err := db.Jobs().JobBacklog(ctx, jobs.BacklogParams{Kinds: kinds, GroupLimit: groupLimit})
			if err != nil {
				t.Fatalf("JobBacklog: %v", err)
			}
			return b
		}
		if b := backlog(1); b != (jobs.Backlog{}) {
			t.Fatalf("empty backlog = %+v", b)
		}
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g"})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", Group: "g", RunAt: Epoch.Add(time.Second)})
		insert(t, db, jobs.InsertParams{Kind: "sound.run", RunAt: Epoch.Add(time.Hour)}) // not due
		insert(t, db, jobs.InsertParams{Kind: "other", RunAt: Epoch.Add(-time.Hour)})    // another class
		clock.Advance(90 * time.Second)
		if b := backlog(1); b.Runnable != 1 || !b.OldestSince.Equal(Epoch) || b.Age != 90*time.Second {
			t.Fatalf("backlog with limit 1 = %+v, want g's first job, 90s old", b)
		}
		if b := backlog(0); b.Runnable != 2 || b.Age != 90*time.Second {
			t.Fatalf("backlog without a limit = %+v, want both of g's jobs", b)
		}
		// g's first job runs: its second waits for the group, not for a
		// worker, so it is not runnable under limit 1.
		j := claimClass(t, db, "a/1", 1, kinds, 1)
		if len(j) != 1 {
			t.Fatalf("claim = %+v", j)
		}
		if b := backlog(1); b.Runnable != 0 || b.Age != 0 {
			t.Fatalf("backlog while g runs at its limit = %+v, want none", b)
		}
		// A lease that expired is runnable since it expired.
		clock.Advance(lease + 10*time.Second)
		if b := backlog(1); b.Runnable != 1 || !b.OldestSince.Equal(Epoch.Add(90*time.Second+lease)) || b.Age != 10*time.Second {
			t.Fatalf("backlog after the lease expired = %+v, want the expired job, 10s", b)
		}
	})

	t.Run("DiscardEndsAtOnce", func(t *testing.T) {
		db, _ := fresh(t, open)
		insert(t, db, jobs.InsertParams{Kind: "k"})
		j := claimOne(t, db, "w/1")
		st, err := db.Jobs().JobFail(ctx, jobs.FailParams{ID: j.ID, LockedBy: "w/1", Error: "undecodable input", RetryAfter: time.Second, Discard: true})
		if err != nil || st != jobs.Discarded {
			t.Fatalf("JobFail(discard) = %s, %v; want discarded", st, err)
		}
		if r := get(t, db, j.ID); r.State != jobs.Discarded || r.Attempts != 1 || r.LastError != "undecodable input" || r.FinishedAt.IsZero() {
			t.Fatalf("after a permanent failure: %+v", r)
		}
	})

	t.Run("RolledBackInsertLeavesNoJob", func(t *testing.T) {
		db, _ := fresh(t, open)
		errAbort := errors.New("abort")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.JobInsert(ctx, jobs.InsertParams{Kind: "k", UniqueKey: "once"}); err != nil {
				return err
			}
			return errAbort
		})
		if !errors.Is(err, errAbort) {
			t.Fatalf("InTx = %v, want errAbort", err)
		}
		counts, err := db.Read().JobCounts(ctx)
		if err != nil || len(counts) != 0 {
			t.Fatalf("JobCounts after rollback = %v, %v; want none", counts, err)
		}
		if got := claim(t, db, "w/1", 10); len(got) != 0 {
			t.Fatalf("rolled-back job claimed: %+v", got)
		}
		if !insert(t, db, jobs.InsertParams{Kind: "k", UniqueKey: "once"}) {
			t.Fatal("the rolled-back job's unique key is still taken")
		}
	})
}
