package platform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/apikey"
	"github.com/creatormusic/platform/chain/intent"
	"github.com/creatormusic/platform/store"
	"github.com/creatormusic/platform/token"
	"github.com/creatormusic/platform/token/sale"
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
	p.wake() // the free plan's first grants run now, not at the next poll
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

// VerifyToken runs the token registry's verification of env now, as its
// jobs do: it reads the configured mint from env's cluster (outside any
// transaction) and stores the run, whatever its outcome. A run that could
// not read the cluster is stored as ERROR and moves nothing.
func (p *Platform) VerifyToken(ctx context.Context, env access.Environment) (token.Run, error) {
	r, err := p.verify.VerifyToken(ctx, env)
	if err != nil {
		return token.Run{}, fmt.Errorf("platform: VerifyToken: %w", err)
	}
	return r, nil
}

// EnqueueLeaderboardSnapshot enqueues a snapshot of env's leaderboards as
// of now and returns that time; the job workers compute it (package
// leaderboard, Snapshots) under env's current scoring policy, as the
// daily run does. Asked again at the same time, it enqueues nothing more.
// An unknown environment is an error.
func (p *Platform) EnqueueLeaderboardSnapshot(ctx context.Context, env access.Environment) (time.Time, error) {
	var asOf time.Time
	err := p.db.InTx(ctx, func(tx *store.Tx) (err error) {
		asOf, err = p.leaderboard.Enqueue(ctx, tx, env)
		tx.AfterCommit(p.wake)
		return err
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("platform: EnqueueLeaderboardSnapshot: %w", err)
	}
	return asOf, nil
}

// VerifySwapRegistry reads env's swap registry from env's cluster now and
// stores the run, whatever its outcome (a run that could not read the
// cluster is stored as unreadable and changes nothing). Without a
// registry or a cluster there is nothing to do.
func (p *Platform) VerifySwapRegistry(ctx context.Context, env access.Environment) error {
	if _, _, err := p.swap.VerifyRegistry(ctx, env); err != nil {
		return fmt.Errorf("platform: VerifySwapRegistry: %w", err)
	}
	return nil
}

// VerifySales runs the verification of every sale configured in env now,
// after the token registry's: a sale's production mint counts as verified
// only when the registry's verified mint is that same mint. Each run is
// stored whatever its outcome; chain reads happen outside any transaction.
func (p *Platform) VerifySales(ctx context.Context, env access.Environment) ([]sale.Run, error) {
	if !env.Valid() {
		return nil, fmt.Errorf("platform: VerifySales: unknown environment %q", env)
	}
	runs := p.saleRuns()
	if !runs.Configured(env) {
		return nil, nil
	}
	v, err := p.token.View(ctx, env, p.db.Read())
	if err != nil {
		return nil, fmt.Errorf("platform: VerifySales: %w", err)
	}
	out, err := runs.VerifyAll(ctx, env, v)
	if err != nil {
		return nil, fmt.Errorf("platform: VerifySales: %w", err)
	}
	return out, nil
}

// ReconcileIntents reconciles up to limit open transaction intents now,
// least recently updated first, as the sweep job (intent.JobSweep) does:
// each is checked against its cluster (signature status, or the payment
// reference), verified and settled at its threshold. It returns how many
// it changed; one intent's failure does not stop the others, and the
// errors are joined.
func (p *Platform) ReconcileIntents(ctx context.Context, limit int) (int, error) {
	outs, err := p.intents.ReconcileDue(ctx, limit)
	changed := 0
	for _, o := range outs {
		if o.Changed {
			changed++
		}
	}
	return changed, err
}

// ReconcileSettledIntent runs the reconciliation of one settled
// transaction intent now, as its job does (an unreadable cluster returns
// PROVIDER_UNAVAILABLE and leaves the intent RECONCILING), and returns the
// intent's reconciliation record; an intent already reconciled returns its
// record unchanged, and one that is not settled returns nil. The outcome
// is reported, never acted on.
func (p *Platform) ReconcileSettledIntent(ctx context.Context, id string) (*intent.Reconciliation, error) {
	out, err := p.intents.ReconcileSettled(ctx, id, intent.ReconcileOptions{})
	return out.Reconciliation, err
}

// SetFeatureFlag turns a feature flag on or off for one workspace, or for
// the platform (its default) when workspaceID is "", for the host's
// operator; no route can. It bumps the affected authority version, so it
// applies from the next request on every host, and is recorded in the
// live audit log with an empty actor (the operator) under tenantID (empty
// for a platform default). An unknown flag is an error.
func (p *Platform) SetFeatureFlag(ctx context.Context, tenantID, workspaceID, flag string, enabled bool) error {
	if !slices.ContainsFunc(FeatureFlags(), func(f FeatureFlag) bool { return f.Name == flag }) {
		return fmt.Errorf("platform: unknown feature flag %q", flag)
	}
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.FlagSet(ctx, flag, workspaceID, enabled); err != nil {
			return err
		}
		// A flag applies to both environments; the operator's change is
		// platform production work, recorded in live as the operator's
		// other acts are.
		return account.Audit(ctx, tx, nil, account.AuditEntry{TenantID: tenantID, WorkspaceID: workspaceID, Environment: access.Live,
			Action: account.ActionFeatureFlagSet, TargetType: account.TargetFeatureFlag, TargetID: flag, After: struct {
				Enabled bool `json:"enabled"`
			}{enabled}})
	})
	if err != nil {
		return fmt.Errorf("platform: set feature flag %s: %w", flag, err)
	}
	return nil
}
