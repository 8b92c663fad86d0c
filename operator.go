package platform

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/store"
)

// BootstrapInput names what Bootstrap creates.
type BootstrapInput struct {
	TenantName    string
	WorkspaceName string
	OwnerEmail    string
	OwnerName     string
	// KeyName names the test API key; empty means "Bootstrap test key".
	KeyName string
	// LiveKey also creates a live API key with the same scopes.
	LiveKey bool
	// Password, when set, gives the owner a password credential (hashed
	// with argon2id) with a verified email, so the owner can sign in. It
	// must satisfy account.ValidatePassword.
	Password string
	// SuperAdmin also grants the owner the super_admin platform role, in
	// the same unit of work (the example host's demo owner).
	SuperAdmin bool
}

// Bootstrap is what Bootstrap created. TestKey is the plaintext of the test
// API key, returned once.
type Bootstrap struct {
	TenantID    string
	WorkspaceID string
	OwnerID     string
	KeyID       string
	TestKey     string
	// LiveKeyID and LiveKey are set when BootstrapInput.LiveKey asked for one.
	LiveKeyID string
	LiveKey   string
}

// Bootstrap creates a tenant, a workspace on the free plan (its entitlements
// and this period's credit grants enqueued), its owner (roles OWNER and
// DEVELOPER) and a test API key holding every scope the owner may grant, in
// one unit of work. It is for the host's operator (the example host's first
// start, tests); no route calls it.
func (p *Platform) Bootstrap(ctx context.Context, in BootstrapInput) (Bootstrap, error) {
	if in.TenantName == "" || in.WorkspaceName == "" || in.OwnerEmail == "" || in.OwnerName == "" {
		return Bootstrap{}, errors.New("platform: Bootstrap needs tenant, workspace, owner email and owner name")
	}
	if in.KeyName == "" {
		in.KeyName = "Bootstrap test key"
	}
	var hash string
	if in.Password != "" {
		if err := account.ValidatePassword("platform.Bootstrap", "password", in.Password); err != nil {
			return Bootstrap{}, fmt.Errorf("platform: bootstrap: %w", err)
		}
		h, err := p.account.Passwords().Hash(ctx, in.Password) // before the transaction: hashing is slow
		if err != nil {
			return Bootstrap{}, fmt.Errorf("platform: bootstrap: %w", err)
		}
		hash = h
	}
	var out Bootstrap
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		out.TenantID, out.WorkspaceID, out.OwnerID = tx.NewID("ten_"), tx.NewID("ws_"), tx.NewID("usr_")
		if err := tx.TenantInsert(ctx, out.TenantID, in.TenantName); err != nil {
			return err
		}
		if err := tx.WorkspaceInsert(ctx, out.WorkspaceID, out.TenantID, in.WorkspaceName); err != nil {
			return err
		}
		if err := p.plans.Start(ctx, tx, out.TenantID, out.WorkspaceID); err != nil {
			return err
		}
		if err := tx.UserInsert(ctx, out.OwnerID, out.TenantID, strings.ToLower(in.OwnerEmail), in.OwnerName); err != nil {
			return err
		}
		if err := tx.MembershipInsert(ctx, out.WorkspaceID, out.OwnerID, []access.Role{access.RoleOwner, access.RoleDeveloper}); err != nil {
			return err
		}
		if in.SuperAdmin {
			if err := p.grantSuperAdmin(ctx, tx, out.OwnerID, out.TenantID); err != nil {
				return err
			}
		}
		if hash != "" {
			now := tx.Now()
			if err := tx.CredentialInsert(ctx, account.PasswordCredential{UserID: out.OwnerID, PasswordHash: hash,
				EmailVerifiedAt: &now, PasswordChangedAt: now}); err != nil {
				return err
			}
		}
		a, err := tx.AuthorityLoad(ctx, out.TenantID, out.WorkspaceID, out.OwnerID, access.Test)
		if err != nil {
			return err
		}
		owner := &access.Principal{Kind: access.CredentialSession, TenantID: out.TenantID, WorkspaceID: out.WorkspaceID,
			Environment: access.Test, UserID: out.OwnerID}
		cr, err := p.keys.Create(ctx, tx, apikey.Caller{Principal: owner, Grantable: access.ScopesFor(&a)},
			apikey.CreateInput{Name: in.KeyName, Environment: access.Test, Scopes: access.ScopesFor(&a)})
		if err != nil {
			return err
		}
		out.KeyID, out.TestKey = cr.Key.ID, cr.Secret
		if in.LiveKey {
			live := *owner
			live.Environment = access.Live
			cr, err := p.keys.Create(ctx, tx, apikey.Caller{Principal: &live, Grantable: access.ScopesFor(&a)},
				apikey.CreateInput{Name: in.KeyName + " (live)", Environment: access.Live, Scopes: access.ScopesFor(&a)})
			if err != nil {
				return err
			}
			out.LiveKeyID, out.LiveKey = cr.Key.ID, cr.Secret
		}
		return nil
	})
	if err != nil {
		return Bootstrap{}, fmt.Errorf("platform: bootstrap: %w", err)
	}
	return out, nil
}

// GrantSuperAdmin grants the super_admin platform role to the user with
// email, for the host's operator (the example host's -grant-super-admin
// flag); no route can grant it. The grant bumps the platform-wide
// authority version, so it applies from the user's next request, and is
// recorded in the audit log with an empty actor (the operator) under the
// user's tenant. Granting it again is a no-op. NOT_FOUND when no user has
// the email.
func (p *Platform) GrantSuperAdmin(ctx context.Context, email string) error {
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.UserGetByEmail(ctx, account.NormalizeEmail(email))
		if err != nil {
			return err
		}
		return p.grantSuperAdmin(ctx, tx, u.ID, u.TenantID)
	})
	if err != nil {
		return fmt.Errorf("platform: grant super_admin to %s: %w", email, err)
	}
	return nil
}

// grantSuperAdmin grants super_admin to userID and audits it, in tx. A
// platform role belongs to no workspace or environment; its event is
// recorded as live, the environment of real authority.
func (p *Platform) grantSuperAdmin(ctx context.Context, tx *store.Tx, userID, tenantID string) error {
	if err := tx.PlatformRoleGrant(ctx, userID, access.SuperAdmin); err != nil {
		return err
	}
	return account.Audit(ctx, tx, nil, account.AuditEntry{TenantID: tenantID, Environment: access.Live, Action: account.ActionPlatformRoleGranted,
		TargetType: account.TargetUser, TargetID: userID, After: struct {
			Role string `json:"role"`
		}{access.SuperAdmin}})
}

// IssueInternalKey makes an API key holding the internal scope (outbox
// publication) in a workspace, for the host's operator. The plaintext is
// returned once. No route can issue such a key.
func (p *Platform) IssueInternalKey(ctx context.Context, tenantID, workspaceID, userID string, env access.Environment, name string) (keyID, plaintext string, err error) {
	err = p.db.InTx(ctx, func(tx *store.Tx) error {
		cr, err := p.keys.IssueInternal(ctx, tx, tenantID, workspaceID, userID, env, name)
		keyID, plaintext = cr.Key.ID, cr.Secret
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("platform: issue internal key: %w", err)
	}
	return keyID, plaintext, nil
}
