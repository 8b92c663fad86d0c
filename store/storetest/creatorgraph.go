package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/creatorgraph"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/store"
)

// exerciseCreatorGraph covers the declared half of creatorgraph.Store:
// a creator is a user with a wallet link; a relation is unique per
// environment, declaring user, kind and target (a second insert is
// CONFLICT, the other environment's is another row); updates
// compare-and-set on the version; active relations are counted per
// declaring user and environment and listed from or to a user, newest
// change first, never a removed one; the derived reads answer an empty
// list on no records.
func exerciseCreatorGraph(t *testing.T, open Opener) {
	ctx := context.Background()
	db, clock := fresh(t, open)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if err := seedTenants(ctx, tx, 3); err != nil {
			return err
		}
		return tx.WalletLinkInsert(ctx, "wl_2", "ten_2", "usr_2", wallet.Network, "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T")
	})
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	read := db.Read()
	for user, want := range map[string]bool{"usr_1": false, "usr_2": true, "usr_9": false} {
		if ok, err := read.CreatorExists(ctx, user); err != nil || ok != want {
			t.Errorf("CreatorExists(%s) = %v, %v; want %v", user, ok, err, want)
		}
	}
	decl := func(id, from, to string, env access.Environment) creatorgraph.Declared {
		now := clock.Now()
		return creatorgraph.Declared{ID: id, Scope: access.Scope{TenantID: "ten_1", WorkspaceID: "ws_1", Environment: env},
			FromUserID: from, ToUserID: to, Kind: creatorgraph.KindFollows, State: creatorgraph.StateActive, Version: 1,
			DeclaredAt: now, UpdatedAt: now}
	}
	insert := func(d creatorgraph.Declared) error {
		return db.InTx(ctx, func(tx *store.Tx) error { return tx.RelationInsert(ctx, d) })
	}
	a := decl("crl_1", "usr_1", "usr_2", access.Live)
	if err := insert(a); err != nil {
		t.Fatal(err)
	}
	if err := insert(decl("crl_dup", "usr_1", "usr_2", access.Live)); !fault.Is(err, fault.Conflict) {
		t.Errorf("a second relation of the same key: %v, want CONFLICT", err)
	}
	clock.Advance(time.Second)
	if err := insert(decl("crl_2", "usr_1", "usr_2", access.Test)); err != nil {
		t.Errorf("the other environment's: %v", err)
	}
	clock.Advance(time.Second)
	if err := insert(decl("crl_3", "usr_3", "usr_1", access.Live)); err != nil {
		t.Fatal(err)
	}
	got, err := read.RelationGet(ctx, access.Live, "usr_1", creatorgraph.KindFollows, "usr_2")
	if err != nil || got.ID != "crl_1" || got.State != creatorgraph.StateActive || got.Version != 1 || !got.DeclaredAt.Equal(a.DeclaredAt) ||
		got.Scope != a.Scope {
		t.Errorf("RelationGet = %+v, %v", got, err)
	}
	if _, err := read.RelationGet(ctx, access.Live, "usr_2", creatorgraph.KindFollows, "usr_1"); !fault.Is(err, fault.NotFound) {
		t.Errorf("the reverse relation: %v, want NOT_FOUND", err)
	}
	listed := func(env access.Environment, user string) []string {
		ds, err := read.GraphDeclared(ctx, env, user, 10)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, d := range ds {
			ids = append(ids, d.ID)
		}
		return ids
	}
	if ids := listed(access.Live, "usr_1"); fmt.Sprint(ids) != "[crl_3 crl_1]" {
		t.Errorf("usr_1's live relations: %v, want [crl_3 crl_1]", ids)
	}
	// Withdraw: compare-and-set on the version.
	got.State, got.Version, got.UpdatedAt = creatorgraph.StateRemoved, 2, clock.Now()
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.RelationUpdate(ctx, got) }); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.RelationUpdate(ctx, got) }); !fault.Is(err, fault.Conflict) {
		t.Errorf("a stale update: %v, want CONFLICT", err)
	}
	if ids := listed(access.Live, "usr_1"); fmt.Sprint(ids) != "[crl_3]" {
		t.Errorf("after withdrawing: %v, want [crl_3]", ids)
	}
	for env, want := range map[access.Environment]int{access.Live: 0, access.Test: 1} {
		if n, err := read.RelationCountActive(ctx, env, "usr_1"); err != nil || n != want {
			t.Errorf("%s active of usr_1: %d, %v; want %d", env, n, err, want)
		}
	}
	v := creatorgraph.Viewer{TenantID: "ten_1", WorkspaceID: "ws_1"}
	if rs, err := read.GraphCollaborations(ctx, access.Live, "usr_1", v, 10); err != nil || len(rs) != 0 {
		t.Errorf("collaborations on no records: %v, %v", rs, err)
	}
	if rs, err := read.GraphRemixes(ctx, access.Live, "usr_1", v, 10); err != nil || len(rs) != 0 {
		t.Errorf("remixes on no records: %v, %v", rs, err)
	}
}
