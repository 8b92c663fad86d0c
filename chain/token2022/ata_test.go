package token2022_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/creatormusic/platform/chain/chaintest"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// TestAssociatedTokenAddressMatchesChaintest checks the derivation against
// the loopback cluster's (solana-go's FindProgramAddress) for a spread of
// wallets and mints.
func TestAssociatedTokenAddressMatchesChaintest(t *testing.T) {
	for i := range 24 {
		seed := sha256.Sum256([]byte{byte(i), 'w'})
		wallet := token2022.PublicKey(ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey))
		mint := token2022.PublicKey(sha256.Sum256([]byte{byte(i), 'm'}))
		got := token2022.AssociatedTokenAddress(wallet, mint)
		want := chaintest.AssociatedTokenAddress(wallet, mint, token2022.ProgramID())
		if got != want {
			t.Fatalf("case %d: got %s, want %s", i, got, want)
		}
	}
}

// TestFindProgramAddressMatchesSolanaGo compares address and bump with
// solana-go for assorted seed shapes.
func TestFindProgramAddressMatchesSolanaGo(t *testing.T) {
	program := token2022.AssociatedTokenProgramID()
	cases := [][][]byte{
		nil,
		{[]byte("")},
		{[]byte("vault")},
		{[]byte("a"), []byte("bb"), make([]byte, 32)},
	}
	for i, seeds := range cases {
		got, bump, err := token2022.FindProgramAddress(seeds, program)
		if err != nil {
			t.Fatal(err)
		}
		want, wantBump, err := solana.FindProgramAddress(seeds, solana.PublicKeyFromBytes(program[:]))
		if err != nil {
			t.Fatal(err)
		}
		if got != token2022.PublicKey(want) || bump != wantBump {
			t.Fatalf("case %d: got %s/%d, want %s/%d", i, got, bump, want, wantBump)
		}
	}
}

// TestAssociatedTokenProgramID checks the id's base58 text.
func TestAssociatedTokenProgramID(t *testing.T) {
	if got := token2022.AssociatedTokenProgramID().String(); got != "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL" {
		t.Fatalf("got %s", got)
	}
}

// TestFindProgramAddressLimits checks the seed-count and seed-length limits.
func TestFindProgramAddressLimits(t *testing.T) {
	if _, _, err := token2022.FindProgramAddress(make([][]byte, 17), token2022.ProgramID()); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("17 seeds: %v", err)
	}
	if _, _, err := token2022.FindProgramAddress([][]byte{make([]byte, 33)}, token2022.ProgramID()); !fault.Is(err, fault.InvalidInput) {
		t.Fatalf("33-byte seed: %v", err)
	}
	if _, _, err := token2022.FindProgramAddress(make([][]byte, 16), token2022.ProgramID()); err != nil {
		t.Fatalf("16 seeds: %v", err)
	}
}
