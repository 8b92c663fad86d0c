package swap

import (
	"context"
	"strings"
	"time"

	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/jobs"
)

// The expiry sweep's job kind and bounds.
const (
	// JobExpire moves operations whose quote expired before anything was
	// submitted to EXPIRED, or to REQUIRES_REVIEW when the wallet
	// broadcast the prepared transaction itself and it landed; periodic,
	// every Config.ExpireEvery.
	JobExpire = "swap.expire"
	// DefaultExpireEvery is the sweep's period when Config.ExpireEvery is
	// zero.
	DefaultExpireEvery = 5 * time.Second
	// ExpireBatch bounds one sweep.
	ExpireBatch = 100
)

// lateLandingSearch bounds the signatures read of a fee account when
// looking for a late landing.
const lateLandingSearch = 1000

// ExpireDue ends, at most ExpireBatch at a time, the operations whose
// quote expired before anything was submitted:
//
//   - QUOTED (no intent, nothing to sign) and INTENT_CREATED: EXPIRED.
//   - AWAITING_SIGNATURE: the wallet holds a prepared transaction it may
//     have broadcast itself. The operation waits until every block that
//     could hold it is final (the finalized block height is past its
//     last valid block height), then looks for it on chain by its memo
//     ("swap:<intent id>") among the fee account's signatures: found, the
//     signature is bound and the operation goes to REQUIRES_REVIEW (value
//     moved on terms the platform no longer stood behind, and a person
//     decides); not found, EXPIRED.
//
// It returns how many operations it ended.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	const op = "swap.ExpireDue"
	read := s.cfg.SubmitReadFunc()
	due, err := read.SwapOperationsExpired(ctx, s.cfg.Clock.Now(), ExpireBatch)
	if err != nil {
		return 0, fault.Wrap(op, err)
	}
	ended := 0
	for _, o := range due {
		done, err := s.expire(ctx, o)
		if err != nil {
			return ended, err
		}
		if done {
			ended++
		}
	}
	return ended, nil
}

// expire ends one expired operation, or leaves it for a later sweep.
func (s *Service) expire(ctx context.Context, o Operation) (bool, error) {
	const op = "swap.expire"
	var landed string
	if o.State == StateAwaitingSignature {
		e := s.cfg.Environments[o.Owner.Environment]
		if e.Chain == nil {
			return false, nil
		}
		it, _, err := s.cfg.SubmitReadFunc().SwapIntent(ctx, o.Owner, o.IntentID)
		if err != nil {
			return false, fault.Wrap(op, err)
		}
		height, err := e.Chain.GetBlockHeight(ctx, chain.Finalized)
		if err != nil {
			return false, nil // the cluster cannot be read now: a later sweep
		}
		if height <= it.LastValidBlockHeight {
			return false, nil // it may still land
		}
		sigs, err := e.Chain.GetSignaturesForAddress(ctx, it.FeeAccount, chain.SignaturesOptions{Limit: lateLandingSearch}, chain.Finalized)
		if err != nil {
			return false, nil
		}
		for _, si := range sigs {
			if si.Err == "" && strings.Contains(si.Memo, "swap:"+it.ID) {
				landed = si.Signature
				break
			}
		}
	}
	err := s.cfg.SubmitRun(ctx, func(st SubmitStore) error {
		cur, err := st.SwapOperation(ctx, o.Owner, o.ID)
		if err != nil {
			return err
		}
		if cur.Version != o.Version {
			return nil // moved meanwhile (submitted, cancelled): not ours
		}
		next, err := cur.Move(EventExpire, st.Now())
		if err != nil {
			return err
		}
		if landed != "" {
			if next, err = next.Move(EventLateLanding, st.Now()); err != nil {
				return err
			}
			next.Signature, next.LastError = landed, string(fault.RequiresReview)
		} else {
			next.LastError = string(fault.QuoteExpired)
		}
		next.Version = cur.Version + 1
		if err := st.SwapOperationUpdate(ctx, next, cur.Version); err != nil {
			return err
		}
		return changed(ctx, st, next)
	})
	if err != nil {
		return false, fault.Wrap(op, err)
	}
	return true, nil
}

// expireJob runs one sweep.
func (s *Service) expireJob(ctx context.Context, _ jobs.Job) error {
	_, err := s.ExpireDue(ctx)
	return err
}
