package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/web3/cctp"
)

// exerciseCCTP covers cctp.Store: a transfer round-trips whole before and
// after an update; a read is confined to its owner (user, workspace,
// environment), the internal read to its environment; an update is a
// compare-and-set on the version; a burn and a mint signature bind one
// transfer of an environment; evidence lists in writing order with its
// checks; the newest readiness run of a configuration that read
// everything is found by its hash, unreadable ones skipped.
func exerciseCCTP(t *testing.T, open Opener) {
	ctx := context.Background()
	owner := cctp.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_1"}
	var recipient chain.Address
	recipient[0] = 7
	newTransfer := func(tx *store.Tx, o cctp.Owner) cctp.Transfer {
		now := tx.Now()
		return cctp.Transfer{ID: tx.NewID(cctp.IDPrefix), Owner: o, State: cctp.StateCreated, Amount: 12_345_678,
			SourceDomain: cctp.DomainBase, DestinationDomain: cctp.DomainSolana, MintRecipient: recipient, Version: 1,
			CreatedAt: now, UpdatedAt: now}
	}
	insert := func(t *testing.T, db *store.DB, o cctp.Owner) cctp.Transfer {
		t.Helper()
		var tr cctp.Transfer
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			tr = newTransfer(tx, o)
			return tx.CCTPTransferInsert(ctx, tr)
		}); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	update := func(db *store.DB, tr cctp.Transfer, change func(*cctp.Transfer)) (cctp.Transfer, error) {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			prev := tr.Version
			change(&tr)
			tr.Version, tr.UpdatedAt = prev+1, tx.Now()
			return tx.CCTPTransferUpdate(ctx, tr, prev)
		})
		return tr, err
	}
	burn := func(tr *cctp.Transfer) {
		tr.State, tr.BurnTxHash, tr.BurnLogIndex, tr.BurnBlock = cctp.StateSourceVerified, cctp.Keccak256([]byte("burn")), 3, 1234
		tr.Depositor, tr.MaxFee, tr.MinFinalityThreshold, tr.SourceMessage = cctp.EVMAddress{0xde, 0xad}, 12_345, 2000, []byte{1, 2, 3}
	}

	t.Run("RoundTripAndScope", func(t *testing.T) {
		db, clock := fresh(t, open)
		seedWorkspaces(t, db)
		tr := insert(t, db, owner)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.CCTPTransferInsert(ctx, tr) }); !fault.Is(err, fault.Conflict) {
			t.Errorf("second insert of an id: %v, want CONFLICT", err)
		}
		got, err := db.Read().CCTPTransfer(ctx, owner, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tr, got); diff != "" {
			t.Errorf("round trip (-stored +read):\n%s", diff)
		}
		for _, o := range []cctp.Owner{{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test, UserID: "usr_2"},
			{TenantID: "ten_1", WorkspaceID: "ws_2", Environment: access.Test, UserID: "usr_1"},
			{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live, UserID: "usr_1"}} {
			if _, err := db.Read().CCTPTransfer(ctx, o, tr.ID); !fault.Is(err, fault.NotFound) {
				t.Errorf("read as %+v: %v, want NOT_FOUND", o, err)
			}
		}
		if _, err := db.Read().CCTPTransferIn(ctx, access.Test, tr.ID); err != nil {
			t.Errorf("internal read: %v", err)
		}
		if _, err := db.Read().CCTPTransferIn(ctx, access.Live, tr.ID); !fault.Is(err, fault.NotFound) {
			t.Errorf("internal read in live: %v, want NOT_FOUND", err)
		}
		clock.Advance(time.Second)
		moved, err := update(db, tr, func(tr *cctp.Transfer) {
			burn(tr)
			tr.State, tr.Message, tr.Attestation = cctp.StateDestinationVerified, []byte("attested"), make([]byte, 130)
			tr.MessageHash, tr.Nonce, tr.FeeExecuted, tr.FinalityThresholdExecuted = cctp.Keccak256([]byte("attested")), cctp.WordOf(99), 1_000, 2000
			tr.MintSignature, tr.MintSlot, tr.ReviewReason = "5sig", 777, ""
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err = db.Read().CCTPTransfer(ctx, owner, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(moved, got); diff != "" {
			t.Errorf("after the update (-written +read):\n%s", diff)
		}
		if _, err := update(db, tr, func(tr *cctp.Transfer) { tr.State = cctp.StateRequiresReview }); !fault.Is(err, fault.Conflict) {
			t.Errorf("an update from a stale read: %v, want CONFLICT", err)
		}
	})

	t.Run("BurnAndMintBindOneTransfer", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		a, b := insert(t, db, owner), insert(t, db, owner)
		a, err := update(db, a, burn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := update(db, b, burn); !fault.Is(err, fault.Conflict) {
			t.Errorf("the same burn on a second transfer: %v, want CONFLICT", err)
		}
		b, err = update(db, b, func(tr *cctp.Transfer) { burn(tr); tr.BurnLogIndex = 5 })
		if err != nil {
			t.Errorf("another log of the transaction: %v", err)
		}
		if _, err = update(db, a, func(tr *cctp.Transfer) { tr.MintSignature = "sigA" }); err != nil {
			t.Fatal(err)
		}
		if _, err := update(db, b, func(tr *cctp.Transfer) { tr.MintSignature = "sigA" }); !fault.Is(err, fault.Conflict) {
			t.Errorf("the same mint on a second transfer: %v, want CONFLICT", err)
		}
		live := insert(t, db, cctp.Owner{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Live, UserID: "usr_1"})
		if _, err := update(db, live, func(tr *cctp.Transfer) { burn(tr); tr.MintSignature = "sigA" }); err != nil {
			t.Errorf("the same burn and mint in the other environment: %v", err)
		}
	})

	t.Run("EvidenceInOrder", func(t *testing.T) {
		db, _ := fresh(t, open)
		seedWorkspaces(t, db)
		tr := insert(t, db, owner)
		var want []cctp.Evidence
		for i := range 4 {
			e := cctp.Evidence{TransferID: tr.ID, Step: cctp.StepAttestation, Outcome: fmt.Sprint("outcome", i), Reference: "ref",
				Checks: []cctp.Check{{Name: "nonce", Passed: i%2 == 0, Expected: "a nonce", Actual: "0x01"}}, ObservedAt: Epoch}
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				e.ID = tx.NewID(cctp.EvidencePrefix)
				return tx.CCTPEvidenceInsert(ctx, e)
			}); err != nil {
				t.Fatal(err)
			}
			want = append(want, e)
		}
		got, err := db.Read().CCTPEvidence(ctx, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("evidence (-written +read):\n%s", diff)
		}
		if none, err := db.Read().CCTPEvidence(ctx, "ctp_none"); err != nil || len(none) != 0 {
			t.Errorf("evidence of no transfer: %v, %v", none, err)
		}
	})

	t.Run("ReadinessLatest", func(t *testing.T) {
		db, clock := fresh(t, open)
		if _, err := db.Read().CCTPReadinessLatest(ctx, access.Test, "h1"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("no run: %v", err)
		}
		var last cctp.Readiness
		for i, r := range []cctp.Readiness{
			{Environment: access.Test, ConfigHash: "h1", Unreadable: true, Error: "down", Checks: nil},
			{Environment: access.Test, ConfigHash: "h1", Passed: true, Checks: []cctp.Check{{Name: "chain_id:6", Passed: true}}},
			{Environment: access.Test, ConfigHash: "h1", Unreadable: true, Error: "down again"},
			{Environment: access.Test, ConfigHash: "h2"},
			{Environment: access.Live, ConfigHash: "h1"},
		} {
			clock.Advance(time.Minute)
			r.CheckedAt = clock.Now()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				r.ID = tx.NewID(cctp.ReadinessPrefix)
				return tx.CCTPReadinessInsert(ctx, r)
			}); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				last = r
			}
		}
		got, err := db.Read().CCTPReadinessLatest(ctx, access.Test, "h1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(last, got); diff != "" {
			t.Errorf("latest run (-written +read):\n%s", diff)
		}
	})
}
