package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/token/sale"
)

// seedSaleUsers creates tenant ten_1 with users usr_1 and usr_2.
func seedSaleUsers(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.TenantInsert(ctx, "ten_1", "Tenant One"); err != nil {
			return err
		}
		for _, u := range []string{"usr_1", "usr_2"} {
			if err := tx.UserInsert(ctx, u, "ten_1", u+"@example.com", u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
}

// exerciseSale covers the token sale store: verification runs (newest per
// sale and environment), access intents scoped by environment and user,
// and the first-write-wins jurisdiction under concurrency.
func exerciseSale(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("RunsLatestBySale", func(t *testing.T) {
		db, clock := fresh(t, open)
		read := db.Read()
		if _, err := read.SaleRunLatest(ctx, access.Live, "presale"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("latest of no runs = %v, want NOT_FOUND", err)
		}
		slot := uint64(1 << 40)
		insert := func(id string, env access.Environment, saleID string, outcome sale.Outcome) {
			t.Helper()
			now := clock.Now()
			r := sale.Run{ID: id, Environment: env, SaleID: saleID, ConfigHash: "h1", Outcome: outcome, StartedAt: now, FinishedAt: now,
				Checks: []sale.Check{{Code: sale.CheckSaleContract, Passed: true, Address: "addr", Slot: slot}}, Slot: &slot,
				ActivationAllowed: outcome == sale.OutcomePassed}
			if outcome == sale.OutcomeError {
				r.Checks, r.Slot, r.Error = nil, nil, "chain unavailable"
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SaleRunInsert(ctx, r) }); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
		}
		insert("srun_1", access.Live, "presale", sale.OutcomeFailed)
		insert("srun_2", access.Live, "presale", sale.OutcomePassed)
		insert("srun_3", access.Live, "other", sale.OutcomeError)
		insert("srun_4", access.Test, "presale", sale.OutcomeError)

		got, err := db.Read().SaleRunLatest(ctx, access.Live, "presale")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "srun_2" || got.Outcome != sale.OutcomePassed || !got.ActivationAllowed || got.ConfigHash != "h1" ||
			got.Slot == nil || *got.Slot != slot || len(got.Checks) != 1 || got.Checks[0].Slot != slot || !got.Checks[0].Passed {
			t.Fatalf("latest live presale = %+v", got)
		}
		if !got.FinishedAt.Equal(Epoch.Add(time.Second)) || got.FinishedAt.Location() != time.UTC {
			t.Errorf("finishedAt = %v, want %v UTC", got.FinishedAt, Epoch.Add(time.Second))
		}
		got, err = db.Read().SaleRunLatest(ctx, access.Test, "presale")
		if err != nil || got.ID != "srun_4" || got.Outcome != sale.OutcomeError || got.Slot != nil || got.Error != "chain unavailable" ||
			len(got.Checks) != 0 {
			t.Fatalf("latest test presale = %+v, %v", got, err)
		}
	})
	t.Run("IntentsScopedByEnvironmentAndUser", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedSaleUsers(t, db)
		now := clock.Now()
		exp := now.Add(10 * time.Minute)
		in := sale.AccessIntent{ID: "sai_1", Environment: access.Live, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1",
			SaleID: "presale", Status: sale.IntentEligible, Reasons: []sale.Reason{}, Jurisdiction: "DE", HandoffExpiresAt: &exp,
			HandoffURL: "https://provider.invalid/?handoff=secret", CreatedAt: now}
		other := sale.AccessIntent{ID: "sai_2", Environment: access.Test, TenantID: "ten_1", UserID: "usr_2", SaleID: "presale",
			Status: sale.IntentIneligible, Reasons: []sale.Reason{sale.ReasonSaleNotVerified, sale.ReasonJurisdictionUndeclared}, CreatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.AccessIntentInsert(ctx, in); err != nil {
				return err
			}
			return tx.AccessIntentInsert(ctx, other)
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().AccessIntentGet(ctx, access.Live, "usr_1", "sai_1")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "sai_1" || got.Status != sale.IntentEligible || got.Jurisdiction != "DE" || got.WorkspaceID != "ws_1" ||
			got.TenantID != "ten_1" || got.HandoffExpiresAt == nil || !got.HandoffExpiresAt.Equal(exp) || got.HandoffURL != "" ||
			len(got.Reasons) != 0 || !got.CreatedAt.Equal(now) {
			t.Fatalf("intent = %+v", got)
		}
		got, err = db.Read().AccessIntentGet(ctx, access.Test, "usr_2", "sai_2")
		if err != nil || len(got.Reasons) != 2 || got.Reasons[1] != sale.ReasonJurisdictionUndeclared || got.HandoffExpiresAt != nil {
			t.Fatalf("other intent = %+v, %v", got, err)
		}
		for _, q := range []struct {
			env      access.Environment
			user, id string
			desc     string
		}{
			{access.Live, "usr_2", "sai_1", "another user"},
			{access.Test, "usr_1", "sai_1", "another environment"},
			{access.Live, "usr_1", "sai_9", "an unknown id"},
		} {
			if _, err := db.Read().AccessIntentGet(ctx, q.env, q.user, q.id); !fault.Is(err, fault.NotFound) {
				t.Errorf("%s: %v, want NOT_FOUND", q.desc, err)
			}
		}
	})
	t.Run("JurisdictionFirstWriteWins", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedSaleUsers(t, db)
		if _, err := db.Read().Jurisdiction(ctx, "usr_1"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("undeclared = %v, want NOT_FOUND", err)
		}
		var got [2]string
		codes := [2]string{"DE", "FR"}
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				err := db.InTx(ctx, func(tx *store.Tx) error {
					var err error
					got[i], err = tx.DeclareJurisdiction(ctx, "usr_1", codes[i], clock.Now())
					return err
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got[0] == "" || got[0] != got[1] {
			t.Fatalf("concurrent declarers read %q and %q, want one value", got[0], got[1])
		}
		stored, err := db.Read().Jurisdiction(ctx, "usr_1")
		if err != nil || stored != got[0] {
			t.Fatalf("stored = %q, %v, want %q", stored, err, got[0])
		}
		var again string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			again, err = tx.DeclareJurisdiction(ctx, "usr_1", "US", clock.Now())
			return err
		}); err != nil || again != stored {
			t.Fatalf("a later declaration = %q, %v, want the first %q", again, err, stored)
		}
		if _, err := db.Read().Jurisdiction(ctx, "usr_2"); !fault.Is(err, fault.NotFound) {
			t.Errorf("another user's jurisdiction = %v, want NOT_FOUND", err)
		}
	})
	t.Run("Account", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedSaleUsers(t, db)
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			now := clock.Now()
			return tx.CredentialInsert(ctx, account.PasswordCredential{UserID: "usr_1", PasswordHash: "h", EmailVerifiedAt: &now,
				PasswordChangedAt: now})
		}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			tenant, user string
			want         sale.Account
		}{
			{"ten_1", "usr_1", sale.Account{InTenant: true, EmailVerified: true}},
			{"ten_1", "usr_2", sale.Account{InTenant: true}},
			{"ten_2", "usr_1", sale.Account{EmailVerified: true}},
			{"ten_1", "usr_9", sale.Account{}},
		} {
			got, err := db.Read().SaleAccount(ctx, tc.tenant, tc.user)
			if err != nil || got != tc.want {
				t.Errorf("SaleAccount(%s, %s) = %+v, %v, want %+v", tc.tenant, tc.user, got, err, tc.want)
			}
		}
	})
}
