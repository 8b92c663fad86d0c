package platform

import (
	"fmt"
	"strings"

	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/billing"
	"github.com/creatormusic/platform/ledger"
)

// startBilling builds the billing service on the plan service and the
// configured payment provider accounts.
func (p *Platform) startBilling(cfg Config) error {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = account.DefaultBaseURL
	}
	// The provider sends the browser back to the read-only checkout route:
	// it shows the checkout's state with the browser's session cookie and
	// never activates anything (only reconcile or a verified webhook does).
	back := base + "/api/v1/saas/checkout/{CHECKOUT_ID}?environment={ENVIRONMENT}"
	svc, err := billing.New(billing.Config{Plans: p.plans, Ledger: ledger.New(), Providers: cfg.Payments,
		SuccessURL: back, CancelURL: back})
	if err != nil {
		return fmt.Errorf("platform: billing: %w", err)
	}
	p.billing = svc
	return nil
}
