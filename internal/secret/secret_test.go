package secret

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
)

func keyring(t *testing.T) *Keyring {
	t.Helper()
	k, err := New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestShortMasterKeyRejected(t *testing.T) {
	if _, err := New(make([]byte, 31)); err == nil {
		t.Fatal("New accepted a 31-byte master key")
	}
}

func TestSealRoundTripAndBinding(t *testing.T) {
	k := keyring(t)
	sealed := k.Seal([]byte("platform_test_secret"), []byte("rec_1"))
	if bytes.Contains(sealed, []byte("platform_test_secret")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := k.Open(sealed, []byte("rec_1"))
	if err != nil || string(got) != "platform_test_secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := k.Open(sealed, []byte("rec_2")); err != ErrOpen {
		t.Fatalf("Open with another aad = %v, want ErrOpen", err)
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := k.Open(sealed, []byte("rec_1")); err != ErrOpen {
		t.Fatalf("Open of a tampered value = %v, want ErrOpen", err)
	}
}

func TestDigestsAreKeyedAndSeparated(t *testing.T) {
	k := keyring(t)
	other, _ := New(bytes.Repeat([]byte{8}, 32))
	if k.Digest("a") == other.Digest("a") {
		t.Fatal("digests under different master keys are equal")
	}
	if k.Digest("a") == k.IdempotencyHash([]byte("a")) {
		t.Fatal("digest and idempotency keys are not separated")
	}
	if k.IdempotencyHash([]byte("ab"), []byte("c")) == k.IdempotencyHash([]byte("a"), []byte("bc")) {
		t.Fatal("idempotency parts are not length-prefixed")
	}
}

// TestDigestIsTheHMACOfEachCredential digests many credentials from many
// goroutines at once: every digest is the HMAC-SHA256 of its own
// credential under the digest key, whichever reused HMAC computed it.
func TestDigestIsTheHMACOfEachCredential(t *testing.T) {
	k := keyring(t)
	want := func(cred string) string {
		m := hmac.New(sha256.New, k.digest)
		m.Write([]byte(cred))
		return hex.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				cred := fmt.Sprintf("cmk_test_%d_%d", g, i)
				if got := k.Digest(cred); got != want(cred) {
					errs <- fmt.Sprintf("Digest(%q) = %s, want %s", cred, got, want(cred))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
