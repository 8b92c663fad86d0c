package storetest

import (
	"context"
	"errors"
	"strings"
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
