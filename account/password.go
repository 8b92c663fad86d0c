package account

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/creatormusic/platform/fault"
)

// PasswordParams are the argon2id cost parameters. They are stored with each
// hash (PHC string format), so raising them affects new hashes only.
type PasswordParams struct {
	// Time is the number of passes over memory.
	Time uint32
	// MemoryKiB is the memory cost in KiB.
	MemoryKiB uint32
	// Threads is the degree of parallelism.
	Threads uint8
}

// DefaultPasswordParams follow RFC 9106's second recommended option
// (argon2id, 64 MiB, 3 passes) with 2 lanes for a small server.
func DefaultPasswordParams() PasswordParams {
	return PasswordParams{Time: 3, MemoryKiB: 64 * 1024, Threads: 2}
}

// Password length bounds, in characters.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 256
)

const (
	saltLen = 16
	keyLen  = 32
)

// Passwords hashes and verifies passwords with argon2id. Every hash and
// every verification runs through its HashPool, so the memory the
// deliberately expensive work takes is bounded.
type Passwords struct {
	Params PasswordParams
	pool   *HashPool
	// dummy is a hash verified when no account exists, so an unknown email
	// costs the same hashing work as a wrong password.
	dummy string
}

// NewPasswords returns a hasher with params (zero value:
// DefaultPasswordParams) whose work runs through pool; a nil pool means
// NewHashPool(HashPoolConfig{}, params), a pool sized to the machine.
func NewPasswords(params PasswordParams, pool *HashPool) (*Passwords, error) {
	if params == (PasswordParams{}) {
		params = DefaultPasswordParams()
	}
	if params.Time == 0 || params.MemoryKiB < 8 || params.Threads == 0 {
		return nil, fmt.Errorf("account: invalid argon2id parameters %+v", params)
	}
	if pool == nil {
		var err error
		if pool, err = NewHashPool(HashPoolConfig{}, params); err != nil {
			return nil, err
		}
	}
	p := &Passwords{Params: params, pool: pool}
	d, err := p.hash("not-a-password-" + random(8))
	if err != nil {
		return nil, err
	}
	p.dummy = d
	return p, nil
}

// Pool returns the pool the hasher's work runs through.
func (p *Passwords) Pool() *HashPool { return p.pool }

// ValidatePassword checks a new password's length.
func ValidatePassword(op, field, pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen || n > MaxPasswordLen {
		return fault.Invalid(op, field, fmt.Sprintf("The password must be %d to %d characters.", MinPasswordLen, MaxPasswordLen)).
			With("min", MinPasswordLen).With("max", MaxPasswordLen)
	}
	return nil
}

// Hash returns the PHC-format argon2id hash of pw with a fresh salt, once
// the pool has a free slot: RATE_LIMITED (HashPool.Acquire) when none frees
// in time.
func (p *Passwords) Hash(ctx context.Context, pw string) (string, error) {
	release, err := p.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return p.hash(pw)
}

// hash is Hash outside the pool, for the dummy hash made at construction.
func (p *Passwords) hash(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("account: salt: %w", err)
	}
	k := argon2.IDKey([]byte(pw), salt, p.Params.Time, p.Params.MemoryKiB, p.Params.Threads, keyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Params.MemoryKiB, p.Params.Time,
		p.Params.Threads, enc.EncodeToString(salt), enc.EncodeToString(k)), nil
}

// Verify reports whether pw matches hash, comparing in constant time, once
// the pool has a free slot: RATE_LIMITED (HashPool.Acquire) when none frees
// in time. An empty hash (no such account) verifies against a dummy hash so
// the work done is the same.
func (p *Passwords) Verify(ctx context.Context, hash, pw string) (bool, error) {
	release, err := p.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if hash == "" {
		_, err := verify(p.dummy, pw)
		return false, err
	}
	return verify(hash, pw)
}

func verify(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, fmt.Errorf("account: not an argon2id hash")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("account: unsupported argon2 version")
	}
	var m, t uint32
	var th uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &th); err != nil {
		return false, fmt.Errorf("account: bad argon2id parameters: %w", err)
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("account: bad salt: %w", err)
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("account: bad key: %w", err)
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, th, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
