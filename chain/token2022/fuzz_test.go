package token2022

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeMint checks that DecodeMint never panics and that whatever it
// accepts re-encodes to bytes that decode to the same mint.
func FuzzDecodeMint(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		baseMintFixture(),
		feeMintFixture(),
		metadataMintFixture(key(9)),
		append(feeMintFixture(), 0xE7, 0x03, 3, 0, 'a', 'b', 'c'),
		append(feeMintFixture(), 0x03, 0x00, 0x20),
		EncodeMint(Mint{Extensions: []Extension{}}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMint(data)
		if err != nil {
			return
		}
		again, err := DecodeMint(EncodeMint(m))
		if err != nil {
			t.Fatalf("re-encoded mint does not decode: %v", err)
		}
		if d := cmp.Diff(m, again); d != "" {
			t.Fatalf("re-encoded mint differs (-first +second):\n%s", d)
		}
	})
}

// FuzzDecodeAccount is FuzzDecodeMint for token accounts.
func FuzzDecodeAccount(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		fullBaseAccountFixture(),
		ataFixture(),
		ataFixture()[:177],
		EncodeAccount(Account{Extensions: []Extension{}}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeAccount(data)
		if err != nil {
			return
		}
		again, err := DecodeAccount(EncodeAccount(a))
		if err != nil {
			t.Fatalf("re-encoded account does not decode: %v", err)
		}
		if d := cmp.Diff(a, again); d != "" {
			t.Fatalf("re-encoded account differs (-first +second):\n%s", d)
		}
	})
}
