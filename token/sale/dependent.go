package sale

import (
	"context"
	"fmt"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/token"
)

// RunFunc runs fn as one unit of work, committed when fn returns nil.
type RunFunc func(ctx context.Context, fn func(st Store) error) error

// Dependent verifies an environment's sales after the token registry's
// verification and stores each run: the registry's jobs run it as their
// token.Dependent (token.Verification).
type Dependent struct {
	// Sales is the sale service. Required.
	Sales *Service
	// RunFunc stores the runs, one unit of work each. Required.
	RunFunc RunFunc
}

var _ token.Dependent = Dependent{}

// Configured reports whether env has sales to verify.
func (v Dependent) Configured(env access.Environment) bool {
	return len(v.Sales.cfg.Environments[env].Sales) > 0
}

// ConfigHash identifies env's sale configuration (Service.ConfigHash).
func (v Dependent) ConfigHash(env access.Environment) string { return v.Sales.ConfigHash(env) }

// VerifyAfter implements token.Dependent: VerifyAll.
func (v Dependent) VerifyAfter(ctx context.Context, env access.Environment, tv token.View) error {
	_, err := v.VerifyAll(ctx, env, tv)
	return err
}

// VerifyAll runs the verification of every sale configured in env now and
// stores each run, whatever its outcome; chain reads happen outside any
// unit of work. tv is the token registry's view of env: a sale's
// production mint counts as verified only when the registry verified that
// same mint.
func (v Dependent) VerifyAll(ctx context.Context, env access.Environment, tv token.View) ([]Run, error) {
	var out []Run
	for _, sc := range v.Sales.cfg.Environments[env].Sales {
		r, err := v.Sales.Verify(ctx, env, sc.ID, tv.Verified() && sc.ProductionMint != "" && sc.ProductionMint == tv.Config.Mint)
		if err != nil {
			return nil, fmt.Errorf("sale: verify %s: %w", sc.ID, err)
		}
		err = v.RunFunc(ctx, func(st Store) error {
			r, err = v.Sales.RecordRun(ctx, st, r)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("sale: store the run of %s: %w", sc.ID, err)
		}
		out = append(out, r)
	}
	return out, nil
}
