// Package credential owns provider connections (spec, "Provider credential",
// "Provider connections" and Authentication 3 and 6): which music provider
// routes are configured per environment, with which billing modes, and the
// customer BYOK keys a workspace submits for them.
//
// # Secrets
//
// A customer key is validated before anything is stored: Check asks the
// provider's adapter (generation.MusicProvider.Balance) for the account's
// balance with the submitted key, outside any transaction. A rejected key
// is PROVIDER_CREDENTIAL_INVALID and an unreachable provider
// PROVIDER_UNAVAILABLE; in both cases nothing is stored. An accepted key is
// sealed with AES-256-GCM (Sealer.Seal, aad = the credential id) and the
// optional callback-signing key is sealed separately (aad = the credential
// id + CallbackAAD), so neither sealed value can be moved to another row or
// swapped with the other. The plaintext is never stored, returned, logged
// or put in an error: a credential is shown only by its Fingerprint (the
// first FingerprintLen hex digits of the keyed digest of the key) and Last4.
//
// # Balance
//
// A provider balance is a Snapshot of the provider account's own credits
// at ObservedAt. It is never a platform credit balance, and an unreachable
// provider is PROVIDER_UNAVAILABLE, never a zero balance.
//
// # Ports
//
// Store is implemented by the store package (package store, Tx). The
// provider adapters come from Config.Providers, per environment.
package credential

import (
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/generation"
)

// Ownership says who owns a credential (spec, Provider routes).
type Ownership string

// Credential ownership values.
const (
	// PlatformManaged is a platform secret configured on the host.
	PlatformManaged Ownership = "PLATFORM_MANAGED"
	// CustomerBYOK is a key a workspace submitted (bring your own key).
	CustomerBYOK Ownership = "CUSTOMER_BYOK"
)

// Ownerships returns every ownership value.
func Ownerships() []Ownership { return []Ownership{PlatformManaged, CustomerBYOK} }

// BillingMode decides which credential and which ledger pay a generation.
type BillingMode string

// Billing modes of the spec.
const (
	// ModePlatformManaged uses the platform's credential; the customer pays
	// platform credits.
	ModePlatformManaged BillingMode = "PLATFORM_MANAGED"
	// ModeBYOK uses the workspace's own key only.
	ModeBYOK BillingMode = "BYOK"
	// ModeBYOKWithPlatformFallback uses the workspace's key and falls back to
	// the platform's credential.
	ModeBYOKWithPlatformFallback BillingMode = "BYOK_WITH_PLATFORM_FALLBACK"
)

// BillingModes returns every billing mode.
func BillingModes() []BillingMode {
	return []BillingMode{ModePlatformManaged, ModeBYOK, ModeBYOKWithPlatformFallback}
}

// Health is the outcome of a credential's last check against its provider.
type Health string

// Health values.
const (
	// Valid means the provider accepted the key at CheckedAt.
	Valid Health = "valid"
	// Invalid means the provider rejected the key at CheckedAt.
	Invalid Health = "invalid"
)

// Identifier prefixes.
const (
	// IDPrefix prefixes credential ids.
	IDPrefix = "pcred_"
	// SnapshotPrefix prefixes balance snapshot ids.
	SnapshotPrefix = "pbal_"
)

// FingerprintLen is how many hex digits of the key's keyed digest form its
// fingerprint.
const FingerprintLen = 12

// CallbackAAD is appended to the credential id to form the aad of the
// sealed callback-signing key.
const CallbackAAD = "/callback"

// Credential is a customer provider key as stored: sealed secrets and their
// non-secret fingerprint and display suffix.
type Credential struct {
	// ID is the credential id (IDPrefix).
	ID string
	// Scope is the tenant, workspace and environment it belongs to.
	Scope access.Scope
	// Provider is the provider route the key authenticates with.
	Provider generation.ProviderID
	// Ownership is CustomerBYOK for stored credentials.
	Ownership Ownership
	// Label is the customer's name for it.
	Label string
	// Fingerprint is the first FingerprintLen hex digits of the key's keyed
	// digest; Last4 the key's last four characters.
	Fingerprint string
	Last4       string
	// SealedKey is the sealed API key (aad = ID); SealedCallbackKey the
	// sealed callback-signing key (aad = ID + CallbackAAD), nil when none.
	SealedKey         []byte
	SealedCallbackKey []byte
	// Health and CheckedAt are the last check's outcome and time.
	Health    Health
	CheckedAt time.Time
	// CreatedByUserID and CreatedByKeyID name who submitted it.
	CreatedByUserID string
	CreatedByKeyID  string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// DeletedAt is set once deleted; deleted credentials are never read.
	DeletedAt *time.Time
	// Balance is the newest balance snapshot, when one was taken (read only).
	Balance *Snapshot
}

// HasCallbackKey reports whether a callback-signing key is stored.
func (c Credential) HasCallbackKey() bool { return len(c.SealedCallbackKey) > 0 }

// Snapshot is a provider account's balance as observed through a
// credential (spec, ProviderBalanceSnapshot): the provider's own credits,
// never platform credits.
type Snapshot struct {
	// ID is the snapshot id (SnapshotPrefix).
	ID string
	// CredentialID is the credential it was read with.
	CredentialID string
	// Scope is the credential's scope.
	Scope access.Scope
	// Provider is the provider route.
	Provider generation.ProviderID
	// Credits and ExtraCredits are the provider's balance.
	Credits      int64
	ExtraCredits int64
	// ObservedAt is when the platform read it.
	ObservedAt time.Time
}
