package wallet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// failingReader is a read pool that cannot be read.
type failingReader struct{}

func (failingReader) WalletLinkGet(context.Context, string, string, string) (Link, error) {
	return Link{}, errors.New("database gone")
}

func (failingReader) WalletLinksOfUser(context.Context, string, string, string) ([]Link, error) {
	return nil, errors.New("database gone")
}

// TestLinksAnswerOnlyTheLinkedUser: an address is a verified wallet of the
// user it is linked to in the tenant, and of no other user or tenant; a
// read that fails is an error, not a "no".
func TestLinksAnswerOnlyTheLinkedUser(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore(func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })
	addr := token2022.EncodeBase58(make([]byte, 32))
	if err := st.WalletLinkInsert(ctx, "wl_1", "ten_1", "usr_alice", Network, addr); err != nil {
		t.Fatal(err)
	}
	key, err := token2022.ParsePublicKey(addr)
	if err != nil {
		t.Fatal(err)
	}
	links := Links{ReadFunc: func() LinkReader { return st }}
	for _, c := range []struct {
		tenant, user string
		want         bool
	}{{"ten_1", "usr_alice", true}, {"ten_1", "usr_bob", false}, {"ten_2", "usr_alice", false}} {
		if got, err := links.Verified(ctx, c.tenant, c.user, key); err != nil || got != c.want {
			t.Errorf("Verified(%s, %s) = %v, %v; want %v", c.tenant, c.user, got, err, c.want)
		}
	}
	broken := Links{ReadFunc: func() LinkReader { return failingReader{} }}
	if ok, err := broken.Verified(ctx, "ten_1", "usr_alice", key); err == nil || ok || fault.Is(err, fault.NotFound) {
		t.Fatalf("Verified over an unreadable store = %v, %v; want an error", ok, err)
	}
}

// TestLinksHolderAndOf: Holder names the user an address is linked to in
// a tenant ("" for nobody), and Of lists a user's wallets there.
func TestLinksHolderAndOf(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore(func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) })
	a, b := token2022.EncodeBase58(make([]byte, 32)), token2022.EncodeBase58(append(make([]byte, 31), 1))
	for _, addr := range []string{a, b} {
		if err := st.WalletLinkInsert(ctx, "wl_"+addr, "ten_1", "usr_alice", Network, addr); err != nil {
			t.Fatal(err)
		}
	}
	links := Links{ReadFunc: func() LinkReader { return st }}
	ka, _ := token2022.ParsePublicKey(a)
	if who, err := links.Holder(ctx, "ten_1", ka); err != nil || who != "usr_alice" {
		t.Fatalf("Holder = %q, %v", who, err)
	}
	if who, err := links.Holder(ctx, "ten_2", ka); err != nil || who != "" {
		t.Fatalf("Holder in another tenant = %q, %v", who, err)
	}
	if ws, err := links.Of(ctx, "ten_1", "usr_alice"); err != nil || len(ws) != 2 {
		t.Fatalf("Of = %v, %v", ws, err)
	}
	if ws, err := links.Of(ctx, "ten_1", "usr_bob"); err != nil || len(ws) != 0 {
		t.Fatalf("Of another user = %v, %v", ws, err)
	}
	broken := Links{ReadFunc: func() LinkReader { return failingReader{} }}
	if _, err := broken.Holder(ctx, "ten_1", ka); err == nil {
		t.Fatal("Holder over an unreadable store answered")
	}
}
