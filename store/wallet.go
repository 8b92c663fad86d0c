package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/wallet"
	"github.com/creatormusic/platform/fault"
)

var _ wallet.Store = (*Tx)(nil)

type walletChallengeRow struct {
	ID          string     `bun:"id"`
	TenantID    string     `bun:"tenant_id"`
	UserID      string     `bun:"user_id"`
	SessionID   string     `bun:"session_id"`
	Environment string     `bun:"environment"`
	Address     string     `bun:"address"`
	Purpose     string     `bun:"purpose"`
	Message     string     `bun:"message"`
	Nonce       string     `bun:"nonce"`
	IssuedAt    time.Time  `bun:"issued_at"`
	ExpiresAt   time.Time  `bun:"expires_at"`
	Attempts    int        `bun:"attempts"`
	Status      string     `bun:"status"`
	ConsumedAt  *time.Time `bun:"consumed_at"`
}

func (r walletChallengeRow) challenge() wallet.Challenge {
	return wallet.Challenge{ID: r.ID, TenantID: r.TenantID, UserID: r.UserID, SessionID: r.SessionID,
		Environment: access.Environment(r.Environment), Address: r.Address, Purpose: r.Purpose, Message: r.Message, Nonce: r.Nonce,
		IssuedAt: r.IssuedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), Attempts: r.Attempts, Status: wallet.Status(r.Status),
		ConsumedAt: utcPtr(r.ConsumedAt)}
}

const walletChallengeSelect = `SELECT id, tenant_id, user_id, session_id, environment, address, purpose, message, nonce, issued_at,
	expires_at, attempts, status, consumed_at FROM wallet_challenges`

// WalletChallengeInsert implements wallet.Store. A zero Status is stored
// as PENDING.
func (tx *Tx) WalletChallengeInsert(ctx context.Context, c wallet.Challenge) error {
	if c.Status == "" {
		c.Status = wallet.StatusPending
	}
	_, err := tx.idb.ExecContext(ctx, `INSERT INTO wallet_challenges (id, tenant_id, user_id, session_id, environment, address, purpose,
		message, nonce, issued_at, expires_at, attempts, status, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.TenantID, c.UserID, c.SessionID, string(c.Environment), c.Address, c.Purpose, c.Message, c.Nonce, c.IssuedAt,
		c.ExpiresAt, c.Attempts, string(c.Status), c.ConsumedAt)
	return errf("store.WalletChallengeInsert", err)
}

func (tx *Tx) scanWalletChallenge(ctx context.Context, op, q string, args ...any) (wallet.Challenge, error) {
	var r walletChallengeRow
	if err := tx.idb.NewRaw(q, args...).Scan(ctx, &r); err != nil {
		return wallet.Challenge{}, notFound(op, err)
	}
	return r.challenge(), nil
}

// WalletChallengeGet implements wallet.Store: NOT_FOUND unless the
// challenge belongs to userID in tenantID.
func (tx *Tx) WalletChallengeGet(ctx context.Context, tenantID, userID, id string) (wallet.Challenge, error) {
	return tx.scanWalletChallenge(ctx, "store.WalletChallengeGet", walletChallengeSelect+
		` WHERE id = ? AND tenant_id = ? AND user_id = ?`, id, tenantID, userID)
}

// WalletChallengeFail implements wallet.Store: one guarded UPDATE counts
// the attempt and, at maxAttempts, moves the challenge to EXHAUSTED.
func (tx *Tx) WalletChallengeFail(ctx context.Context, id string, at time.Time, maxAttempts int) (wallet.Challenge, error) {
	const op = "store.WalletChallengeFail"
	res, err := tx.idb.ExecContext(ctx, `UPDATE wallet_challenges SET attempts = attempts + 1,
		status = CASE WHEN attempts + 1 >= ? THEN ? ELSE status END,
		consumed_at = CASE WHEN attempts + 1 >= ? THEN ? ELSE consumed_at END
		WHERE id = ? AND status = ? AND consumed_at IS NULL`,
		maxAttempts, string(wallet.StatusExhausted), maxAttempts, at, id, string(wallet.StatusPending))
	if err := walletCAS(op, res, err); err != nil {
		return wallet.Challenge{}, err
	}
	return tx.scanWalletChallenge(ctx, op, walletChallengeSelect+` WHERE id = ?`, id)
}

// WalletChallengeConsume implements wallet.Store: PENDING to VERIFIED
// under a compare-and-set on consumed_at IS NULL.
func (tx *Tx) WalletChallengeConsume(ctx context.Context, id string, at time.Time) error {
	res, err := tx.idb.ExecContext(ctx, `UPDATE wallet_challenges SET status = ?, consumed_at = ?
		WHERE id = ? AND status = ? AND consumed_at IS NULL`,
		string(wallet.StatusVerified), at, id, string(wallet.StatusPending))
	return walletCAS("store.WalletChallengeConsume", res, err)
}

// walletCAS turns a compare-and-set that matched no row into CONFLICT.
func walletCAS(op string, res sql.Result, err error) error {
	if err != nil {
		return errf(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return errf(op, err)
	}
	if n != 1 {
		return fault.E(op, fault.Conflict, "The challenge is no longer pending.")
	}
	return nil
}

// linkRow is one wallet_links row.
type linkRow struct {
	ID         string    `bun:"id"`
	TenantID   string    `bun:"tenant_id"`
	UserID     string    `bun:"user_id"`
	Network    string    `bun:"network"`
	Address    string    `bun:"address"`
	VerifiedAt time.Time `bun:"verified_at"`
}

func (r linkRow) link() wallet.Link {
	return wallet.Link{ID: r.ID, TenantID: r.TenantID, UserID: r.UserID, Network: r.Network, Address: r.Address,
		VerifiedAt: r.VerifiedAt.UTC()}
}

// WalletLinkGet implements wallet.Store.
func (tx *Tx) WalletLinkGet(ctx context.Context, tenantID, network, address string) (wallet.Link, error) {
	var r linkRow
	if err := tx.idb.NewRaw(`SELECT id, tenant_id, user_id, network, address, verified_at FROM wallet_links
		WHERE tenant_id = ? AND network = ? AND address = ?`, tenantID, network, address).Scan(ctx, &r); err != nil {
		return wallet.Link{}, notFound("store.WalletLinkGet", err)
	}
	return r.link(), nil
}

// WalletLinksOfUser implements wallet.LinkReader: oldest first (the
// wallet_links_user index).
func (tx *Tx) WalletLinksOfUser(ctx context.Context, tenantID, network, userID string) ([]wallet.Link, error) {
	var rows []linkRow
	if err := tx.idb.NewRaw(`SELECT id, tenant_id, user_id, network, address, verified_at FROM wallet_links
		WHERE tenant_id = ? AND user_id = ? AND network = ? ORDER BY verified_at, id`, tenantID, userID, network).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, errf("store.WalletLinksOfUser", err)
	}
	out := make([]wallet.Link, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.link())
	}
	return out, nil
}
