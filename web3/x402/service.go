package x402

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain"
	"github.com/creatormusic/platform/fault"
)

// Environment is one environment's protocol configuration. An environment
// without a Facilitator or without Resources is not configured: its
// routes answer 503 SERVICE_UNAVAILABLE.
type Environment struct {
	// Chain is the environment's cluster. Required with a Facilitator.
	Chain ChainClient
	// Facilitator verifies and settles payments: a Local over Chain, or a
	// remote one.
	Facilitator Facilitator
	// PayTo is the wallet whose associated token account of Asset
	// receives the payments.
	PayTo chain.Address
	// Asset is the mint resources are priced in; Decimals its decimals,
	// which the check compares with the mint's.
	Asset    chain.Address
	Decimals uint8
	// Resources are the offers.
	Resources []Resource
	// MaxTimeoutSeconds is the requirements' maxTimeoutSeconds; zero
	// means 60.
	MaxTimeoutSeconds int
}

// Configured reports whether e serves the protocol.
func (e Environment) Configured() bool {
	return e.Facilitator != nil && e.Chain != nil && len(e.Resources) > 0
}

// configHash identifies what a check of e verifies: the facilitator
// (with the local one's fee payer), the asset and its decimals, and payTo.
func (e Environment) configHash() string {
	name := e.Facilitator.Name()
	if l, ok := e.Facilitator.(*Local); ok {
		name += ":" + l.FeePayer().String()
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{"x402-config/v1", name, e.Asset.String(),
		fmt.Sprint(e.Decimals), e.PayTo.String()}, "|")))
	return hex.EncodeToString(sum[:])
}

// resource returns e's resource id.
func (e Environment) resource(id string) (Resource, bool) {
	for _, r := range e.Resources {
		if r.ID == id {
			return r, true
		}
	}
	return Resource{}, false
}

// Config configures a Service.
type Config struct {
	// Environments maps test and live to their configuration; one without
	// an entry is not configured.
	Environments map[access.Environment]Environment
	// Clock tells the time. Required.
	Clock Clock
	// Run runs a unit of work; ReadFunc returns the read pool. Required.
	Run      RunFunc
	ReadFunc func() Store
	// MemoKey is the key that binds memos to their workspace (at least 32
	// bytes). Required.
	MemoKey []byte
	// BaseURL is the platform's address, which resource URLs start with;
	// empty means http://127.0.0.1:8080.
	BaseURL string
	// SettleTimeout bounds how long a settle request waits for the
	// facilitator's outcome; past it the request answers
	// SUBMISSION_UNCERTAIN and the watch finishes. Zero means 30 seconds.
	SettleTimeout time.Duration
	// WatchEvery spaces the watch of a settlement whose outcome is not
	// known; zero means 5 seconds.
	WatchEvery time.Duration
	// CheckEvery is the period of the configuration's check; zero means
	// one hour. A check also runs at start for a configuration not yet
	// checked.
	CheckEvery time.Duration
	// WakeFunc wakes the job workers after a commit that enqueued work.
	WakeFunc func()
	// Logger receives the jobs' failures; nil discards them.
	Logger *slog.Logger
	// NewIDFunc returns a fresh id suffix; nil means 16 random bytes in
	// hex.
	NewIDFunc func() string
}

// FeaturePayments is the feature flag that gates verifying and settling
// payments; an operator turns it off per workspace or platform-wide.
const FeaturePayments = "x402"

// Service is the payment-required protocol's domain.
type Service struct {
	cfg Config
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Clock == nil || cfg.Run == nil || cfg.ReadFunc == nil {
		return nil, errors.New("x402: Config.Clock, Run and ReadFunc are required")
	}
	if len(cfg.MemoKey) < 32 {
		return nil, errors.New("x402: Config.MemoKey needs at least 32 bytes")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://127.0.0.1:8080"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.SettleTimeout <= 0 {
		cfg.SettleTimeout = 30 * time.Second
	}
	if cfg.WatchEvery <= 0 {
		cfg.WatchEvery = 5 * time.Second
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewIDFunc == nil {
		cfg.NewIDFunc = func() string {
			b := make([]byte, 16)
			_, _ = rand.Read(b)
			return hex.EncodeToString(b)
		}
	}
	for env, e := range cfg.Environments {
		if !env.Valid() {
			return nil, fmt.Errorf("x402: unknown environment %q", env)
		}
		if e.Facilitator != nil && e.Chain == nil {
			return nil, fmt.Errorf("x402: %s: a facilitator needs the environment's cluster", env)
		}
		if e.Facilitator == nil {
			continue
		}
		if e.PayTo.IsZero() || e.Asset.IsZero() {
			return nil, fmt.Errorf("x402: %s: payTo and the asset are required", env)
		}
		seen := map[string]bool{}
		for _, r := range e.Resources {
			if err := r.Validate(); err != nil {
				return nil, fmt.Errorf("x402: %s: %w", env, err)
			}
			if seen[r.ID] {
				return nil, fmt.Errorf("x402: %s: resource %s is listed twice", env, r.ID)
			}
			seen[r.ID] = true
		}
		if e.MaxTimeoutSeconds < 0 {
			return nil, fmt.Errorf("x402: %s: MaxTimeoutSeconds is negative", env)
		}
	}
	return &Service{cfg: cfg}, nil
}

// env returns env's configuration and whether it is configured.
func (s *Service) env(env access.Environment) (Environment, bool) {
	e, ok := s.cfg.Environments[env]
	return e, ok && e.Configured()
}

// Capability is the protocol's state in an environment, as the chain
// capability views report it: configured is not verified, and verified
// is not enabled for a workspace whose flag is off.
type Capability struct {
	// Configured reports a facilitator, a cluster and resources.
	Configured bool
	// Verified reports that the newest check of the current
	// configuration passed.
	Verified bool
	// Reason says why it is not configured or not verified
	// (not_configured, not_checked, or the check's reason); "" when both.
	Reason string
	// Network is the cluster's CAIP-2 id as the newest check read it.
	Network string
	// Facilitator names the facilitator ("local" or the remote's URL).
	Facilitator string
}

// Capability returns env's state from its configuration and newest check.
func (s *Service) Capability(ctx context.Context, st Store, env access.Environment) (Capability, error) {
	e, ok := s.env(env)
	if !ok {
		return Capability{Reason: "not_configured"}, nil
	}
	c := Capability{Configured: true, Facilitator: e.Facilitator.Name()}
	chk, err := s.check(ctx, st, env, e)
	switch {
	case err != nil:
		return Capability{}, err
	case chk == nil:
		c.Reason = "not_checked"
	case !chk.Passed:
		c.Reason, c.Network = chk.Reason, chk.Network
	default:
		c.Verified, c.Network = true, chk.Network
	}
	return c, nil
}

// check returns env's newest check of e's current configuration, nil when
// none ran.
func (s *Service) check(ctx context.Context, st Store, env access.Environment, e Environment) (*Check, error) {
	c, err := st.X402Check(ctx, env)
	if fault.Is(err, fault.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.ConfigHash != e.configHash() {
		return nil, nil
	}
	return &c, nil
}

// ready returns env's configuration and its passing check: 503
// SERVICE_UNAVAILABLE when it is not configured, PROVIDER_UNAVAILABLE
// when no check of its configuration passed.
func (s *Service) ready(ctx context.Context, st Store, op string, env access.Environment) (Environment, Check, error) {
	e, ok := s.env(env)
	if !ok {
		return Environment{}, Check{}, fault.E(op, fault.ServiceUnavailable, "The payment-required protocol is not configured in this environment.").
			With("reason", "not_configured").With("environment", string(env))
	}
	c, err := s.check(ctx, st, env, e)
	if err != nil {
		return Environment{}, Check{}, err
	}
	if c == nil || !c.Passed {
		return Environment{}, Check{}, notVerified(op, c)
	}
	return e, *c, nil
}

// Offer is a resource as the platform lists it.
type Offer struct {
	// Resource is the offer.
	Resource Resource
	// Asset, Decimals and PayTo are how it is paid.
	Asset    string
	Decimals uint8
	PayTo    string
	// URL is the resource's address: its requirements route.
	URL string
}

// Offers lists env's resources with the protocol's state there; none when
// it is not configured.
func (s *Service) Offers(ctx context.Context, st Store, env access.Environment) ([]Offer, Capability, error) {
	c, err := s.Capability(ctx, st, env)
	if err != nil || !c.Configured {
		return nil, c, err
	}
	e, _ := s.env(env)
	out := make([]Offer, 0, len(e.Resources))
	for _, r := range e.Resources {
		out = append(out, Offer{Resource: r, Asset: e.Asset.String(), Decimals: e.Decimals, PayTo: e.PayTo.String(), URL: s.url(r.ID)})
	}
	return out, c, nil
}

// url is a resource's address.
func (s *Service) url(id string) string { return s.cfg.BaseURL + "/api/v1/x402/requirements/" + id }

// requirements are e's requirements for r under check c, with memo.
func (s *Service) requirements(e Environment, c Check, r Resource, memo string) Requirements {
	timeout := e.MaxTimeoutSeconds
	if timeout == 0 {
		timeout = 60
	}
	return Requirements{Scheme: SchemeExact, Network: c.Network, Amount: r.Amount.String(), Asset: e.Asset.String(),
		PayTo: e.PayTo.String(), MaxTimeoutSeconds: timeout, Extra: Extra{FeePayer: c.FeePayer, Memo: memo}}
}

// Offered is a resource's payment requirements, with the caller's
// available grant of it.
type Offered struct {
	// Resource is the resource.
	Resource Resource
	// Required is what PAYMENT-REQUIRED carries.
	Required PaymentRequired
	// Grant is the caller's oldest grant of the resource not spent yet;
	// nil when none (or for an anonymous caller).
	Grant *Grant
}

// Requirements answers the payment requirements of resource id in env
// for p (nil for an anonymous caller). A signed-in caller's requirements
// name a fresh memo bound to its workspace (see the memo notes); an
// anonymous caller's name none, and a payment built from them cannot be
// settled. NOT_FOUND (details.field resourceId) for an unknown resource;
// SERVICE_UNAVAILABLE or PROVIDER_UNAVAILABLE as ready says.
func (s *Service) Requirements(ctx context.Context, st Store, p *access.Principal, env access.Environment, id string) (Offered, error) {
	const op = "x402.Requirements"
	e, c, err := s.ready(ctx, st, op, env)
	if err != nil {
		return Offered{}, err
	}
	r, ok := e.resource(id)
	if !ok {
		return Offered{}, fault.E(op, fault.NotFound, "No such resource in this environment.").With("field", "resourceId")
	}
	var memo string
	if p != nil {
		memo = issueMemo(s.cfg.MemoKey, scopeOf(p), r.ID)
	}
	out := Offered{Resource: r, Required: PaymentRequired{X402Version: Version, Error: "payment required",
		Resource: ResourceInfo{URL: s.url(r.ID), Description: r.Description, MimeType: "application/json"},
		Accepts:  []Requirements{s.requirements(e, c, r, memo)}}}
	if p == nil {
		return out, nil
	}
	g, err := st.X402GrantAvailable(ctx, scopeOf(p), r.ID)
	switch {
	case fault.Is(err, fault.NotFound):
	case err != nil:
		return Offered{}, err
	default:
		out.Grant = &g
	}
	return out, nil
}

// scopeOf is p's tenant, workspace and environment.
func scopeOf(p *access.Principal) access.Scope {
	return access.Scope{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: p.Environment}
}

// Verdict is a verification's answer.
type Verdict struct {
	// Response is the facilitator's verdict, or the platform's own when
	// the payment does not meet the offer.
	Response VerifyResponse
	// ResourceID is the resource the payment is for ("" when its memo
	// named none of the caller's).
	ResourceID string
}

// Verify judges p's payment without settling it: the payment must meet
// one of the caller's offers (match), then the facilitator applies every
// rule. A refused payment is a Verdict with IsValid false; errors are
// SERVICE_UNAVAILABLE or PROVIDER_UNAVAILABLE (not configured, not
// verified, or the facilitator did not answer).
func (s *Service) Verify(ctx context.Context, st Store, p *access.Principal, pp PaymentPayload) (Verdict, error) {
	const op = "x402.Verify"
	e, c, err := s.ready(ctx, st, op, p.Environment)
	if err != nil {
		return Verdict{}, err
	}
	r, req, inv := s.match(e, c, p, pp)
	if inv != nil {
		return Verdict{Response: VerifyResponse{InvalidReason: inv.Reason, InvalidMessage: inv.Message}, ResourceID: r.ID}, nil
	}
	vr, err := e.Facilitator.Verify(ctx, VerifyRequest{Payload: pp, Requirements: req})
	if err != nil {
		return Verdict{}, facilitatorDown(op, err)
	}
	return Verdict{Response: vr, ResourceID: r.ID}, nil
}

// match finds the offer pp pays for, by the memo the platform issued to
// p, and returns it with its requirements, or the rule pp breaks: the
// version, the scheme, the network, a memo not issued to p's workspace,
// or an accepted requirement other than the offer (amount, asset, payTo,
// fee payer compared as strings, as the reference server does).
func (s *Service) match(e Environment, c Check, p *access.Principal, pp PaymentPayload) (Resource, Requirements, *Invalid) {
	a := pp.Accepted
	switch {
	case pp.X402Version != Version:
		return Resource{}, Requirements{}, invalid(ReasonVersion, "x402Version %d, not %d", pp.X402Version, Version)
	case a.Scheme != SchemeExact:
		return Resource{}, Requirements{}, invalid(ReasonScheme, "scheme %q, not exact", a.Scheme)
	case a.Network != c.Network:
		return Resource{}, Requirements{}, invalid(ReasonNetwork, "network %q, not %s", a.Network, c.Network)
	}
	id, ok := memoResource(s.cfg.MemoKey, scopeOf(p), a.Extra.Memo)
	if !ok {
		return Resource{}, Requirements{}, invalid(ReasonMemoMismatch, "the memo was not issued to this workspace: read the requirements signed in")
	}
	r, ok := e.resource(id)
	if !ok {
		return Resource{}, Requirements{}, invalid(ReasonRequirements, "the memo names no resource of this environment")
	}
	req := s.requirements(e, c, r, a.Extra.Memo)
	if a.Amount != req.Amount || a.Asset != req.Asset || a.PayTo != req.PayTo || a.Extra.FeePayer != req.Extra.FeePayer {
		return r, Requirements{}, invalid(ReasonRequirements, "the accepted requirement is not the one offered")
	}
	return r, req, nil
}

// facilitatorDown is the PROVIDER_UNAVAILABLE of a facilitator that did
// not answer (its error's code kept when it carries one).
func facilitatorDown(op string, err error) error {
	if fault.Is(err, fault.ProviderUnavailable) {
		return fault.Wrap(op, err)
	}
	return &fault.Error{Op: op, Code: fault.ProviderUnavailable, Message: "The payment facilitator did not answer.", Err: err}
}
