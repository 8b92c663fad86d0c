package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/web3/zk"
)

// exerciseZK covers zk.Store: a verification round-trips whole, found by
// its statement in its tenant and environment only; a second row of the
// same statement (a re-randomized proof) or of the same proof hash is
// CONFLICT and changes nothing; another statement of the same intent is
// its own row.
func exerciseZK(t *testing.T, open Opener) {
	ctx := context.Background()
	db, _ := fresh(t, open)
	seedWorkspaces(t, db)
	scope := access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: access.Test}
	newVerification := func(tx *store.Tx, statement, proof string) zk.Verification {
		return zk.Verification{ID: tx.NewID(zk.IDPrefix), Scope: scope, UserID: "usr_1", IntentID: "txi_1", CircuitID: "square",
			CircuitVersion: "1", Binding: "42", PublicSignals: []string{"9", "42"}, StatementHash: statement, ProofHash: proof,
			Proof: zk.ProofJSON{PiA: []string{"1", "2", "1"}, PiB: [][]string{{"1", "2"}, {"3", "4"}, {"1", "0"}},
				PiC: []string{"5", "6", "1"}, Protocol: zk.Protocol, Curve: zk.Curve},
			CreatedAt: tx.Now()}
	}
	var first zk.Verification
	err := db.InTx(ctx, func(tx *store.Tx) error {
		first = newVerification(tx, "s1", "p1")
		return tx.ZKVerificationInsert(ctx, first)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Read().ZKVerificationByStatement(ctx, "ten_1", access.Test, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("round trip (-stored +read):\n%s", diff)
	}
	for _, miss := range []struct {
		tenant string
		env    access.Environment
		hash   string
	}{{"ten_2", access.Test, "s1"}, {"ten_1", access.Live, "s1"}, {"ten_1", access.Test, "s2"}} {
		if _, err := db.Read().ZKVerificationByStatement(ctx, miss.tenant, miss.env, miss.hash); !fault.Is(err, fault.NotFound) {
			t.Errorf("statement %s of %s in %s: %v, want NOT_FOUND", miss.hash, miss.tenant, miss.env, err)
		}
	}
	for _, dup := range []struct{ name, statement, proof string }{
		{"same statement, another proof (re-randomized)", "s1", "p2"},
		{"same proof hash, another statement", "s3", "p1"},
	} {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.ZKVerificationInsert(ctx, newVerification(tx, dup.statement, dup.proof)); !fault.Is(err, fault.Conflict) {
				return fmt.Errorf("%s: %v, want CONFLICT", dup.name, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := db.Read().ZKVerificationByStatement(ctx, "ten_1", access.Test, "s3"); !fault.Is(err, fault.NotFound) {
		t.Errorf("a refused insert left a row: %v", err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error { return tx.ZKVerificationInsert(ctx, newVerification(tx, "s2", "p2")) })
	if err != nil {
		t.Fatalf("another statement of the same intent: %v", err)
	}
	if v, err := db.Read().ZKVerificationByStatement(ctx, "ten_1", access.Test, "s1"); err != nil || v.ID != first.ID {
		t.Errorf("the first statement now reads %+v, %v", v, err)
	}
}
