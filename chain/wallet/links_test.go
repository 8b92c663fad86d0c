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
