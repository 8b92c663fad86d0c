package account

import (
	"context"
	"strings"
	"testing"
)

func TestPasswordHashAndVerify(t *testing.T) {
	p, err := NewPasswords(PasswordParams{Time: 1, MemoryKiB: 64, Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := p.Hash(ctx, "correct horse battery")
	if err != nil || !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("Hash = %q, %v", h, err)
	}
	if h2, _ := p.Hash(ctx, "correct horse battery"); h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if ok, err := p.Verify(ctx, h, "correct horse battery"); !ok || err != nil {
		t.Fatalf("Verify(right) = %v, %v", ok, err)
	}
	if ok, _ := p.Verify(ctx, h, "wrong horse battery"); ok {
		t.Fatal("Verify(wrong) = true")
	}
	if ok, err := p.Verify(ctx, "", "anything at all"); ok || err != nil {
		t.Fatalf("Verify(no account) = %v, %v", ok, err)
	}
	if _, err := p.Verify(ctx, "$bcrypt$x", "x"); err == nil {
		t.Fatal("a foreign hash verified without error")
	}
}
