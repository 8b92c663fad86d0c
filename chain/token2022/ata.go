package token2022

// This file derives program addresses (chain.md §4, PDA / ATA). It is the one
// part of the package that needs more than the standard library: telling
// whether 32 bytes are an ed25519 point takes a curve implementation, and
// filippo.io/edwards25519 (the one the Go toolchain's crypto/ed25519 grew
// from) accepts exactly the encodings Solana's curve25519-dalek check does,
// non-canonical ones included.

import (
	"crypto/sha256"

	"filippo.io/edwards25519"

	"github.com/creatormusic/platform/fault"
)

// PDA limits of the runtime (chain.md §4).
const (
	// MaxSeeds is the most seeds a program address takes (the bump is not counted).
	MaxSeeds = 16
	// MaxSeedLen is the longest seed in bytes.
	MaxSeedLen = 32
)

// pdaMarker ends every program-address preimage.
const pdaMarker = "ProgramDerivedAddress"

// AssociatedTokenProgramID returns the Associated Token Account program id,
// ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL.
func AssociatedTokenProgramID() PublicKey {
	return PublicKey{
		0x8c, 0x97, 0x25, 0x8f, 0x4e, 0x24, 0x89, 0xf1, 0xbb, 0x3d, 0x10, 0x29, 0x14, 0x8e, 0x0d, 0x83,
		0x0b, 0x5a, 0x13, 0x99, 0xda, 0xff, 0x10, 0x84, 0x04, 0x8e, 0x7b, 0xd8, 0xdb, 0xe9, 0xf8, 0x59,
	}
}

// FindProgramAddress returns the program derived address of seeds under
// program and its bump seed: for bump 255 down to 1, the first
// sha256(seeds‖[bump]‖program‖"ProgramDerivedAddress") that is not an
// ed25519 point, as the runtime's find_program_address. It fails with
// INVALID_INPUT on more than MaxSeeds seeds, a seed longer than MaxSeedLen,
// or (with odds of about 2^-255) no bump giving an off-curve address.
func FindProgramAddress(seeds [][]byte, program PublicKey) (PublicKey, uint8, error) {
	const op = "token2022.FindProgramAddress"
	if len(seeds) > MaxSeeds {
		return PublicKey{}, 0, fault.E(op, fault.InvalidInput, "a program address takes at most 16 seeds").With("seeds", len(seeds))
	}
	for i, s := range seeds {
		if len(s) > MaxSeedLen {
			return PublicKey{}, 0, fault.E(op, fault.InvalidInput, "a seed is at most 32 bytes").With("seed", i).With("length", len(s))
		}
	}
	for bump := 255; bump >= 1; bump-- {
		h := sha256.New()
		for _, s := range seeds {
			h.Write(s)
		}
		h.Write([]byte{byte(bump)})
		h.Write(program[:])
		h.Write([]byte(pdaMarker))
		var k PublicKey
		h.Sum(k[:0])
		if !onCurve(k) {
			return k, uint8(bump), nil
		}
	}
	return PublicKey{}, 0, fault.E(op, fault.InvalidInput, "no bump seed gives an address off the curve")
}

// onCurve reports whether k decodes as an ed25519 point.
func onCurve(k PublicKey) bool {
	_, err := new(edwards25519.Point).SetBytes(k[:])
	return err == nil
}

// AssociatedTokenAddress returns wallet's Token-2022 associated token
// account for mint: the program address of [wallet, Token-2022 program id,
// mint] under the Associated Token Account program. It differs from the
// classic SPL Token account of the same wallet and mint.
func AssociatedTokenAddress(wallet, mint PublicKey) PublicKey {
	return AssociatedTokenAddressFor(wallet, mint, ProgramID())
}

// AssociatedTokenAddressFor returns wallet's associated token account for
// mint under tokenProgram (the SPL Token or the Token-2022 program): the
// program address of [wallet, tokenProgram, mint] under the Associated
// Token Account program.
func AssociatedTokenAddressFor(wallet, mint, program PublicKey) PublicKey {
	// Three 32-byte seeds are always within the limits, so the only
	// failure left is the 2^-255 exhausted search, which no key reaches.
	k, _, err := FindProgramAddress([][]byte{wallet[:], program[:], mint[:]}, AssociatedTokenProgramID())
	if err != nil {
		panic("token2022: associated token address: " + err.Error())
	}
	return k
}
