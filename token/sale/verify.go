package sale

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

// ChainClient is the read port a verification run uses: chain/solanarpc
// and chain/chaintest satisfy it. Both methods return chain.ErrAccountNotFound
// for a missing account; GetTokenAccountBalance returns
// chain.ErrNotTokenAccount for an account that is not a token account; any
// other error means the cluster could not be read.
type ChainClient interface {
	GetAccountInfo(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.AccountInfo, error)
	GetTokenAccountBalance(ctx context.Context, addr chain.Address, commitment chain.Commitment) (chain.TokenAmount, error)
}

// Outcome is how a verification run ended.
type Outcome string

// The run outcomes.
const (
	// OutcomePassed: every check activation needs passed.
	OutcomePassed Outcome = "PASSED"
	// OutcomeFailed: the chain was read and some check failed.
	OutcomeFailed Outcome = "FAILED"
	// OutcomeError: the chain could not be read; nothing is verified.
	OutcomeError Outcome = "ERROR"
)

// CheckCode names one fact a run checks.
type CheckCode string

// The check codes of a run.
const (
	CheckProvider            CheckCode = "PROVIDER"
	CheckSaleContract        CheckCode = "SALE_CONTRACT"
	CheckProductionMint      CheckCode = "PRODUCTION_MINT"
	CheckInventoryFunded     CheckCode = "INVENTORY_FUNDED"
	CheckInventoryReconciled CheckCode = "INVENTORY_RECONCILED"
	CheckLiquidity           CheckCode = "LIQUIDITY"
	CheckTerms               CheckCode = "TERMS"
	CheckActivation          CheckCode = "ACTIVATION"
)

// Check is one fact of a run with its evidence.
type Check struct {
	Code CheckCode `json:"code"`
	// Passed is true only on evidence; Reason says why not.
	Passed bool   `json:"passed"`
	Reason string `json:"reason,omitempty"`
	// Address is the account read, when any.
	Address string `json:"address,omitempty"`
	// Actual is the observed value (a balance, an owner), when any.
	Actual string `json:"actual,omitempty"`
	// Slot is the context slot of the read, when any.
	Slot uint64 `json:"slot,omitempty"`
	// Pool names the venue of a per-pool liquidity check.
	Pool string `json:"pool,omitempty"`
}

// RunIDPrefix prefixes verification run ids.
const RunIDPrefix = "srun_"

// Run is one verification run of a sale in an environment.
type Run struct {
	ID          string
	Environment access.Environment
	SaleID      string
	// ConfigHash identifies the configuration the run checked.
	ConfigHash string
	Outcome    Outcome
	// Error says why an ERROR run could not read the chain; it is kept
	// for operators and never projected (it may quote the adapter).
	Error string
	// Checks are the facts in a fixed order; per-pool checks carry Pool.
	Checks []Check
	// Slot is the highest context slot read; nil when nothing was read.
	Slot *uint64
	// ActivationAllowed is true only when every check activation needs
	// passed.
	ActivationAllowed bool
	StartedAt         time.Time
	FinishedAt        time.Time
}

// check returns the run's check with code (and no pool), or false.
func (r *Run) check(code CheckCode) (Check, bool) {
	if r == nil {
		return Check{}, false
	}
	for _, c := range r.Checks {
		if c.Code == code && c.Pool == "" {
			return c, true
		}
	}
	return Check{}, false
}

// poolVerified reports whether the run verified the pool venue name.
func (r *Run) poolVerified(name string) bool {
	if r == nil {
		return false
	}
	for _, c := range r.Checks {
		if c.Code == CheckLiquidity && c.Pool == name {
			return c.Passed
		}
	}
	return false
}

// Verify reads the chain at finalized commitment and returns a run of the
// sale saleID in env. It never touches the store: the caller records the
// run (RecordRun) from a durable job. tokenVerified is true only when the
// token registry's latest run verified the mint configured as this sale's
// ProductionMint. A chain that is not configured or cannot be read yields
// a run with outcome ERROR in which nothing is verified; an unknown sale is
// NOT_FOUND.
func (s *Service) Verify(ctx context.Context, env access.Environment, saleID string, tokenVerified bool) (Run, error) {
	const op = "sale.Verify"
	ec, sl, err := s.sale(env, saleID)
	if err != nil {
		return Run{}, fault.Wrap(op, err)
	}
	run := Run{Environment: env, SaleID: sl.ID, ConfigHash: configHash(sl), StartedAt: s.now()}
	if ec.Chain == nil {
		run.errored("chain not configured", "chain not configured")
		run.FinishedAt = s.now()
		return run, nil
	}
	v := verifier{ctx: ctx, client: ec.Chain, run: &run}
	checks, err := v.checks(sl, tokenVerified)
	if err != nil {
		run.errored("chain unavailable", err.Error())
		run.FinishedAt = s.now()
		return run, nil
	}
	run.Checks = checks
	run.ActivationAllowed = activation(&run, sl)
	run.Checks = append(run.Checks, activationCheck(&run, sl))
	run.Outcome = OutcomeFailed
	if run.ActivationAllowed {
		run.Outcome = OutcomePassed
	}
	run.FinishedAt = s.now()
	return run, nil
}

// errored turns r into an ERROR run: every check false with the public
// reason; detail (which may quote the adapter) stays in Error, never shown.
func (r *Run) errored(reason, detail string) {
	r.Outcome, r.Error, r.Slot, r.ActivationAllowed = OutcomeError, detail, nil, false
	r.Checks = nil
	for _, c := range []CheckCode{CheckProvider, CheckSaleContract, CheckProductionMint, CheckInventoryFunded,
		CheckInventoryReconciled, CheckLiquidity, CheckTerms, CheckActivation} {
		r.Checks = append(r.Checks, Check{Code: c, Reason: "verification run could not read the chain: " + reason})
	}
}

// verifier runs the chain reads of one run.
type verifier struct {
	ctx    context.Context
	client ChainClient
	run    *Run
}

// slot records a read's context slot as evidence.
func (v *verifier) slot(s uint64) {
	if v.run.Slot == nil || s > *v.run.Slot {
		v.run.Slot = &s
	}
}

// account reads addr; found is false for a missing account; an error is a
// read that did not reach the cluster.
func (v *verifier) account(addr string) (chain.AccountInfo, bool, error) {
	key, err := token2022.ParsePublicKey(addr)
	if err != nil {
		return chain.AccountInfo{}, false, fmt.Errorf("sale.Verify: configured address %s: %w", addr, err)
	}
	info, err := v.client.GetAccountInfo(v.ctx, key, chain.Finalized)
	if errors.Is(err, chain.ErrAccountNotFound) {
		return chain.AccountInfo{}, false, nil
	}
	if err != nil {
		return chain.AccountInfo{}, false, fmt.Errorf("read account %s: %w", addr, err)
	}
	v.slot(info.Slot)
	return info, true, nil
}

// owned checks that addr exists and program owns it.
func (v *verifier) owned(code CheckCode, addr, program string) (Check, error) {
	c := Check{Code: code, Address: addr}
	info, found, err := v.account(addr)
	if err != nil {
		return c, err
	}
	if !found {
		c.Reason = "account not found at finalized commitment"
		return c, nil
	}
	c.Slot, c.Actual = info.Slot, info.Owner.String()
	if info.Owner.String() != program {
		c.Reason = "account owner is not the configured program"
		return c, nil
	}
	c.Passed = true
	return c, nil
}

// checks runs every check of sl in order.
func (v *verifier) checks(sl Sale, tokenVerified bool) ([]Check, error) {
	out := []Check{{Code: CheckProvider, Reason: "no provider attestation source"}}

	contract := Check{Code: CheckSaleContract, Reason: "sale contract not configured"}
	if sl.SaleContract != "" {
		c, err := v.owned(CheckSaleContract, sl.SaleContract, sl.SaleProgram)
		if err != nil {
			return nil, err
		}
		contract = c
	}
	out = append(out, contract)

	mint := Check{Code: CheckProductionMint, Address: sl.ProductionMint}
	switch {
	case sl.ProductionMint == "":
		mint.Reason = "production mint not configured"
	case !tokenVerified:
		mint.Reason = "token registry has not verified the production mint"
	default:
		mint.Passed = true
	}
	out = append(out, mint)

	funded, reconciled, err := v.inventory(sl)
	if err != nil {
		return nil, err
	}
	out = append(out, funded, reconciled)

	pools, liquidity, err := v.pools(sl)
	if err != nil {
		return nil, err
	}
	out = append(out, liquidity)

	terms := Check{Code: CheckTerms, Actual: sl.Terms.Version, Passed: sl.Terms.Published}
	if !terms.Passed {
		terms.Reason = "terms not published"
	}
	out = append(out, terms)
	return append(out, pools...), nil
}

// inventory checks the inventory account: its mint, its balance against
// the allocation maximum (funded) and the expected inventory (reconciled).
func (v *verifier) inventory(sl Sale) (Check, Check, error) {
	funded := Check{Code: CheckInventoryFunded, Address: sl.InventoryAccount}
	reconciled := Check{Code: CheckInventoryReconciled, Address: sl.InventoryAccount}
	fail := func(reason string) (Check, Check, error) {
		funded.Reason, reconciled.Reason = reason, reason
		return funded, reconciled, nil
	}
	switch {
	case sl.InventoryAccount == "":
		return fail("inventory account not configured")
	case sl.ProductionMint == "":
		return fail("production mint not configured")
	}
	info, found, err := v.account(sl.InventoryAccount)
	if err != nil {
		return funded, reconciled, err
	}
	if !found {
		return fail("inventory account not found at finalized commitment")
	}
	acct, err := token2022.DecodeAccount(info.Data)
	if err != nil {
		return fail("inventory account is not a token account")
	}
	if acct.Mint.String() != sl.ProductionMint {
		funded.Actual, reconciled.Actual = acct.Mint.String(), acct.Mint.String()
		return fail("inventory account holds another mint")
	}
	key, _ := token2022.ParsePublicKey(sl.InventoryAccount)
	bal, err := v.client.GetTokenAccountBalance(v.ctx, key, chain.Finalized)
	if errors.Is(err, chain.ErrAccountNotFound) || errors.Is(err, chain.ErrNotTokenAccount) {
		return fail("inventory balance not readable: " + err.Error())
	}
	if err != nil {
		return funded, reconciled, fmt.Errorf("read balance %s: %w", sl.InventoryAccount, err)
	}
	v.slot(bal.Slot)
	amount := strconv.FormatUint(bal.Amount, 10)
	funded.Actual, reconciled.Actual, funded.Slot, reconciled.Slot = amount, amount, bal.Slot, bal.Slot
	if bal.Decimals != Decimals {
		return fail(fmt.Sprintf("inventory mint has %d decimals, want %d", bal.Decimals, Decimals))
	}
	maxA, _ := parseAtomic(sl.AllocationMaxAtomic)
	expected, _ := parseAtomic(sl.ExpectedInventoryAtomic)
	if funded.Passed = bal.Amount >= maxA; !funded.Passed {
		funded.Reason = "inventory balance is below allocationMaxAtomic"
	}
	if reconciled.Passed = bal.Amount == expected; !reconciled.Passed {
		reconciled.Reason = "inventory balance differs from the expected inventory"
	}
	return funded, reconciled, nil
}

// pools checks every approved pool; liquidity passes when there is at
// least one and all are verified.
func (v *verifier) pools(sl Sale) ([]Check, Check, error) {
	liquidity := Check{Code: CheckLiquidity}
	var out []Check
	failed := 0
	for _, p := range sl.Venues {
		if p.Kind != VenuePool || !p.Approved {
			continue
		}
		c, err := v.owned(CheckLiquidity, p.Address, p.Program)
		if err != nil {
			return nil, liquidity, err
		}
		c.Pool = p.Name
		if !c.Passed {
			failed++
		}
		out = append(out, c)
	}
	switch {
	case len(out) == 0:
		liquidity.Reason = "no approved pool configured"
	case failed > 0:
		liquidity.Reason = fmt.Sprintf("%d of %d approved pools not verified", failed, len(out))
	default:
		liquidity.Passed = true
	}
	return out, liquidity, nil
}

// activationNeeds are the checks activation requires.
func activationNeeds() []CheckCode {
	return []CheckCode{CheckSaleContract, CheckProductionMint, CheckInventoryFunded, CheckInventoryReconciled, CheckTerms}
}

// activation reports whether r allows the sale to activate.
func activation(r *Run, sl Sale) bool {
	if r.Outcome == OutcomeError || (sl.Provider == "" && sl.ProviderURL == "") {
		return false
	}
	for _, code := range activationNeeds() {
		if c, ok := r.check(code); !ok || !c.Passed {
			return false
		}
	}
	return true
}

// activationCheck records the activation decision with its reason.
func activationCheck(r *Run, sl Sale) Check {
	c := Check{Code: CheckActivation, Passed: r.ActivationAllowed}
	if c.Passed {
		return c
	}
	if sl.Provider == "" && sl.ProviderURL == "" {
		c.Reason = "no provider configured"
		return c
	}
	for _, code := range activationNeeds() {
		if x, ok := r.check(code); !ok || !x.Passed {
			c.Reason = string(code) + " not verified"
			return c
		}
	}
	return c
}

// RecordRun stores run in st, giving it an id when it has none.
func (s *Service) RecordRun(ctx context.Context, st Store, run Run) (Run, error) {
	if run.ID == "" {
		run.ID = st.NewID(RunIDPrefix)
	}
	if err := st.SaleRunInsert(ctx, run); err != nil {
		return Run{}, fault.Wrap("sale.RecordRun", err)
	}
	return run, nil
}
