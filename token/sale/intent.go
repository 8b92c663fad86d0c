package sale

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// IntentIDPrefix prefixes access intent ids.
const IntentIDPrefix = "sai_"

// IntentStatus is an access intent's eligibility.
type IntentStatus string

// The intent statuses.
const (
	// IntentEligible: every check passed; the POST answer carries a handoff.
	IntentEligible IntentStatus = "ELIGIBLE"
	// IntentIneligible: some check failed; Reasons say which.
	IntentIneligible IntentStatus = "INELIGIBLE"
)

// Reason is a stable code saying why an intent is ineligible.
type Reason string

// The ineligibility reasons, in the order they are evaluated.
const (
	ReasonSaleNotVerified          Reason = "SALE_NOT_VERIFIED"
	ReasonSaleNotOpen              Reason = "SALE_NOT_OPEN"
	ReasonOutsideWindow            Reason = "OUTSIDE_WINDOW"
	ReasonJurisdictionUndeclared   Reason = "JURISDICTION_UNDECLARED"
	ReasonJurisdictionBlocked      Reason = "JURISDICTION_BLOCKED"
	ReasonJurisdictionNotAllowed   Reason = "JURISDICTION_NOT_ALLOWED"
	ReasonEmailNotVerified         Reason = "EMAIL_NOT_VERIFIED"
	ReasonAccountNotInTenant       Reason = "ACCOUNT_NOT_IN_TENANT"
	ReasonProviderURLNotCanonical  Reason = "PROVIDER_URL_NOT_CANONICAL"
	reasonJurisdictionAlreadyFixed        = "JURISDICTION_ALREADY_DECLARED"
)

// Reasons lists every reason code.
func Reasons() []Reason {
	return []Reason{ReasonSaleNotVerified, ReasonSaleNotOpen, ReasonOutsideWindow, ReasonJurisdictionUndeclared,
		ReasonJurisdictionBlocked, ReasonJurisdictionNotAllowed, ReasonEmailNotVerified, ReasonAccountNotInTenant,
		ReasonProviderURLNotCanonical}
}

// AccessIntent is a user's request to take part in a sale, evaluated and
// recorded without custody.
type AccessIntent struct {
	ID          string
	Environment access.Environment
	TenantID    string
	WorkspaceID string
	UserID      string
	SaleID      string
	Status      IntentStatus
	Reasons     []Reason
	// Jurisdiction is the account's declared jurisdiction; "" when none.
	Jurisdiction string
	// HandoffExpiresAt is set when a handoff was issued.
	HandoffExpiresAt *time.Time
	// HandoffURL is the handoff link. Only the result of
	// CreateAccessIntent carries it; it is never stored.
	HandoffURL string
	CreatedAt  time.Time
}

// IntentRequest is the body of an access-intent request.
type IntentRequest struct {
	// Jurisdiction is an upper-case ISO 3166-1 alpha-2 code; optional once
	// the account declared one.
	Jurisdiction string
}

// CreateAccessIntent evaluates and records p's access intent for saleID in
// p's environment. p must be a signed-in user (a session or access token):
// an API key is ACCESS_DENIED. An unknown sale is NOT_FOUND; a malformed
// jurisdiction is INVALID_INPUT; a jurisdiction other than the one the
// account declared first is CONFLICT (details.reason
// JURISDICTION_ALREADY_DECLARED, details.declared). The intent is
// ELIGIBLE, with a handoff URL, only when every check passes.
func (s *Service) CreateAccessIntent(ctx context.Context, st Store, p *access.Principal, saleID string, req IntentRequest) (AccessIntent, error) {
	const op = "sale.CreateAccessIntent"
	if err := signedIn(op, p); err != nil {
		return AccessIntent{}, err
	}
	env := p.Environment
	ec, sl, err := s.sale(env, saleID)
	if err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}
	if req.Jurisdiction != "" && !ValidJurisdiction(req.Jurisdiction) {
		return AccessIntent{}, fault.Invalid(op, "jurisdiction", "jurisdiction is an upper-case ISO 3166-1 alpha-2 code, such as DE.")
	}
	now := s.now()
	declared, err := s.jurisdiction(ctx, st, p.UserID, req.Jurisdiction, now)
	if err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}
	acct, err := st.SaleAccount(ctx, p.TenantID, p.UserID)
	if err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}
	run, _, err := s.latestRun(ctx, st, env, sl)
	if err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}

	var reasons []Reason
	if run == nil || !run.ActivationAllowed {
		reasons = append(reasons, ReasonSaleNotVerified)
	}
	if sl.Status != StatusOpen {
		reasons = append(reasons, ReasonSaleNotOpen)
	} else if !sl.Window.contains(now) {
		reasons = append(reasons, ReasonOutsideWindow)
	}
	if r := jurisdictionReason(ec.Jurisdictions, declared); r != "" {
		reasons = append(reasons, r)
	}
	if !acct.EmailVerified {
		reasons = append(reasons, ReasonEmailNotVerified)
	}
	if !acct.InTenant {
		reasons = append(reasons, ReasonAccountNotInTenant)
	}
	if canonicalProvider(sl.ProviderURL) != "" {
		reasons = append(reasons, ReasonProviderURLNotCanonical)
	}

	in := AccessIntent{ID: st.NewID(IntentIDPrefix), Environment: env, TenantID: p.TenantID, WorkspaceID: p.WorkspaceID,
		UserID: p.UserID, SaleID: sl.ID, Status: IntentIneligible, Reasons: reasons, Jurisdiction: declared, CreatedAt: now}
	if in.Reasons == nil {
		in.Reasons = []Reason{}
	}
	// Belt and braces: the handoff needs the projected status OPEN too.
	if len(reasons) == 0 && projectStatus(sl, run, now) == StatusOpen {
		in.Status = IntentEligible
		exp := now.Add(s.cfg.HandoffTTL).Truncate(time.Second)
		if w := sl.Window; w != nil && w.Closes.Before(exp) {
			exp = w.Closes
		}
		in.HandoffExpiresAt = &exp
	}
	if err := st.AccessIntentInsert(ctx, in); err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}
	if in.Status == IntentEligible {
		in.HandoffURL = s.handoffURL(sl.ProviderURL, in, *in.HandoffExpiresAt)
	}
	return in, nil
}

// AccessIntent returns p's intent id in p's environment, without its
// handoff URL; NOT_FOUND for any other user's intent.
func (s *Service) AccessIntent(ctx context.Context, st Store, p *access.Principal, id string) (AccessIntent, error) {
	const op = "sale.AccessIntent"
	if err := signedIn(op, p); err != nil {
		return AccessIntent{}, err
	}
	in, err := st.AccessIntentGet(ctx, p.Environment, p.UserID, id)
	if err != nil {
		return AccessIntent{}, fault.Wrap(op, err)
	}
	in.HandoffURL = ""
	return in, nil
}

// signedIn checks that p is a signed-in user.
func signedIn(op string, p *access.Principal) error {
	if p == nil || p.UserID == "" {
		return fault.E(op, fault.Unauthenticated, "")
	}
	if p.Kind == access.CredentialAPIKey {
		return fault.E(op, fault.AccessDenied, "Access intents need a signed-in user; API keys are not accepted.").With("credential", "api_key")
	}
	return nil
}

// jurisdiction returns the account's declared jurisdiction, declaring
// code when none is recorded; "" when none is declared.
func (s *Service) jurisdiction(ctx context.Context, st Store, userID, code string, now time.Time) (string, error) {
	const op = "sale.jurisdiction"
	declared, err := st.Jurisdiction(ctx, userID)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return "", fault.Wrap(op, err)
	}
	if err != nil && code != "" {
		if declared, err = st.DeclareJurisdiction(ctx, userID, code, now); err != nil {
			return "", fault.Wrap(op, err)
		}
	}
	if code != "" && declared != code {
		return "", fault.E(op, fault.Conflict, "The account's jurisdiction was declared before and cannot be changed here.").
			With("field", "jurisdiction").With("reason", reasonJurisdictionAlreadyFixed).With("declared", declared)
	}
	return declared, nil
}

// jurisdictionReason applies the deny-by-default policy.
func jurisdictionReason(p JurisdictionPolicy, code string) Reason {
	switch {
	case code == "":
		return ReasonJurisdictionUndeclared
	case containsCode(p.Blocked, code):
		return ReasonJurisdictionBlocked
	case !containsCode(p.Allowed, code):
		return ReasonJurisdictionNotAllowed
	}
	return ""
}

func containsCode(list []string, code string) bool {
	for _, c := range list {
		if c == code {
			return true
		}
	}
	return false
}

// handoffPurpose binds a handoff token to its one use.
const handoffPurpose = "platform.token-sale.handoff.v1"

// Handoff is what a handoff token asserts.
type Handoff struct {
	IntentID    string
	SaleID      string
	Environment access.Environment
	ExpiresAt   time.Time
}

// handoffToken signs h: base64url(purpose-free claims) "." base64url(mac),
// the MAC taken over the purpose and the claims.
func (s *Service) handoffToken(h Handoff) string {
	claims := strings.Join([]string{h.IntentID, h.SaleID, string(h.Environment), strconv.FormatInt(h.ExpiresAt.Unix(), 10)}, "|")
	body := base64.RawURLEncoding.EncodeToString([]byte(claims))
	return body + "." + base64.RawURLEncoding.EncodeToString(s.handoffMAC(body))
}

func (s *Service) handoffMAC(body string) []byte {
	m := hmac.New(sha256.New, s.cfg.HandoffKey)
	m.Write([]byte(handoffPurpose))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return m.Sum(nil)
}

// handoffURL is the provider URL with the signed token as the handoff
// query parameter.
func (s *Service) handoffURL(provider string, in AccessIntent, exp time.Time) string {
	u, err := url.Parse(provider)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("handoff", s.handoffToken(Handoff{IntentID: in.ID, SaleID: in.SaleID, Environment: in.Environment, ExpiresAt: exp}))
	u.RawQuery = q.Encode()
	return u.String()
}

// VerifyHandoff checks a handoff token's signature and expiry and returns
// what it asserts; INVALID_INPUT (details.reason "malformed", "signature"
// or "expired") otherwise.
func (s *Service) VerifyHandoff(token string) (Handoff, error) {
	const op = "sale.VerifyHandoff"
	bad := func(reason string) error {
		return fault.E(op, fault.InvalidInput, "The handoff token is not valid.").With("reason", reason)
	}
	body, mac, ok := strings.Cut(token, ".")
	if !ok {
		return Handoff{}, bad("malformed")
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !hmac.Equal(got, s.handoffMAC(body)) {
		return Handoff{}, bad("signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return Handoff{}, bad("malformed")
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 4 {
		return Handoff{}, bad("malformed")
	}
	exp, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return Handoff{}, bad("malformed")
	}
	h := Handoff{IntentID: parts[0], SaleID: parts[1], Environment: access.Environment(parts[2]), ExpiresAt: time.Unix(exp, 0).UTC()}
	if !s.now().Before(h.ExpiresAt) {
		return Handoff{}, bad("expired")
	}
	return h, nil
}
