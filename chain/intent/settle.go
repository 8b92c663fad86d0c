package intent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/ledger"
	"github.com/creatormusic/platform/money"
	"github.com/creatormusic/platform/policy"
)

// CreditPacksPublisher is the actor that SeedCreditPacks records as the
// publisher of the credits.packs versions it writes.
const CreditPacksPublisher = "system:configuration"

// PolicyPacks returns the credit_purchase purpose's PacksFunc over the
// policy store: an environment's current credits.packs policy, read
// through read (the read pool). An environment without one is
// SERVICE_UNAVAILABLE: credits are not sold there.
func PolicyPacks(read func() Store) PacksFunc {
	return func(ctx context.Context, env access.Environment) (CreditPacks, PolicyRef, error) {
		const op = "intent.PolicyPacks"
		v, err := policy.Current(ctx, read().CreditStore(), policy.Scope{Environment: env}, CreditPacksPolicyID)
		if fault.Is(err, fault.NotFound) {
			return CreditPacks{}, PolicyRef{}, fault.E(op, fault.ServiceUnavailable, "Credits are not sold in this environment.")
		}
		if err != nil {
			return CreditPacks{}, PolicyRef{}, fault.Wrap(op, err)
		}
		var packs CreditPacks
		if err := json.Unmarshal(v.Content, &packs); err != nil {
			return CreditPacks{}, PolicyRef{}, fault.Wrap(op, fmt.Errorf("credits.packs v%d: %w", v.Version, err))
		}
		ref := v.Ref()
		return packs, PolicyRef{ID: ref.ID, Version: ref.Version, Hash: ref.Hash}, nil
	}
}

// SettleCredits is the credit_purchase purpose's SettleFunc on the credit
// ledger: it grants the intent's Quantity credits to the intent's
// workspace, in the intent's environment, with the intent's business
// reference as the grant's reference ("grant:credit_purchase:<id>"), so a
// replay grants nothing more (ledger.Service.Grant books a reference
// once).
func SettleCredits(ctx context.Context, st Store, it Intent) error {
	credits, err := money.ParseAtomic(it.Quantity)
	if err != nil {
		return fmt.Errorf("intent: settle credits: quantity %q: %w", it.Quantity, err)
	}
	_, _, err = ledger.New().Grant(ctx, st.CreditStore(), ledger.CreditsInput{Scope: it.Actor.Scope(), Ref: it.BusinessReference,
		Amount: credits, Actor: ledger.Actor{UserID: it.Actor.UserID}})
	return err
}

// CreditSettlement is the credit_purchase purpose's SettlementFunc on the
// credit ledger: every grant movement carrying the intent's business
// reference in the intent's tenant (one is expected, in its workspace and
// environment), from system:grants to workspace:credits.
func CreditSettlement(ctx context.Context, st Store, it Intent) (Settlement, error) {
	ms, err := st.CreditStore().LedgerMovementsByReference(ctx, it.Actor.TenantID, string(ledger.TypeGrant)+":"+it.BusinessReference)
	if err != nil {
		return Settlement{}, err
	}
	out := Settlement{Credit: ledger.AccountWorkspaceCredits, Debit: ledger.AccountSystemGrants}
	for _, m := range ms {
		sm := SettlementMovement{ID: m.ID, Reference: m.Reference, Scope: m.Scope}
		for _, ps := range m.Postings {
			sm.Postings = append(sm.Postings, SettlementPosting{Account: ps.Account, Credit: ps.Direction == ledger.Credit,
				Amount: ps.Amount})
		}
		out.Movements = append(out.Movements, sm)
	}
	return out, nil
}

// SeedCreditPacks publishes each configured environment's credit packs
// (Environment.CreditPacks, Environment.PackMint), one unit of work per
// environment. Configured packs are the source of truth: content that
// differs from the current version is published as the next version
// (versions are immutable; intents keep the one that priced them).
// Without configured packs, DefaultCreditPacks priced in PackMint is
// published only when the environment has none, so a restart never
// overrides a policy published since. Packs that do not validate are an
// error.
func (s *Service) SeedCreditPacks(ctx context.Context) error {
	for _, env := range slices.Sorted(maps.Keys(s.cfg.Environments)) {
		if err := s.seedCreditPacks(ctx, env, s.cfg.Environments[env]); err != nil {
			return fmt.Errorf("intent: credit packs (%s): %w", env, err)
		}
	}
	return nil
}

// seedCreditPacks publishes env's credit packs; see SeedCreditPacks.
func (s *Service) seedCreditPacks(ctx context.Context, env access.Environment, e Environment) error {
	packs, configured := e.CreditPacks, e.CreditPacks != nil
	if !configured {
		if e.PackMint.IsZero() {
			return nil
		}
		d := DefaultCreditPacks(map[chain.Address]uint8{e.PackMint: 9})
		packs = &d
	}
	if err := packs.Validate(); err != nil {
		return err
	}
	return s.cfg.Run(ctx, func(st Store) error {
		ps, sc := st.CreditStore(), policy.Scope{Environment: env}
		if _, err := policy.Current(ctx, ps, sc, CreditPacksPolicyID); err == nil && !configured {
			return nil
		} else if err != nil && !fault.Is(err, fault.NotFound) {
			return err
		}
		_, _, err := policy.Publish(ctx, ps, sc, CreditPacksPolicyID, packs, CreditPacksPublisher)
		return err
	})
}
