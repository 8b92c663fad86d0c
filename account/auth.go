package account

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// SignupInput is what a person signs up with.
type SignupInput struct {
	Email    string
	Password string
	Name     string
	// ClientIP is the client address, for the limit on notices
	// (Config.ResetMail).
	ClientIP string
}

// Signup creates an account: a personal tenant, the user with an unverified
// email, its argon2id password hash and a verification code mailed as a link
// to BaseURL/verify-email?code=... (VerificationLifetime). When the email is
// already registered it creates nothing and mails the address's owner a
// notice instead (at most Config.ResetMail's numbers of them, counted like
// reset mail); the caller answers both cases alike, so signup never tells
// whether an address has an account. The password is hashed in both cases,
// before any transaction, through the hashing pool. INVALID_INPUT for a
// malformed email, name or password; RATE_LIMITED when the hashing pool
// stays full.
func (s *Service) Signup(ctx context.Context, read SignupStore, commit UnitOfWork[SignupStore], in SignupInput) error {
	const op = "account.Signup"
	email, err := validEmail(op, "email", in.Email)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(in.Name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 {
		return fault.Invalid(op, "name", "The name must be 1 to 100 characters.")
	}
	if err := ValidatePassword(op, "password", in.Password); err != nil {
		return err
	}
	hash, err := s.pw.Hash(ctx, in.Password)
	if err != nil {
		return fault.Wrap(op, err)
	}
	if _, err := read.UserGetByEmail(ctx, email); err == nil {
		return s.mailExisting(ctx, op, read, email, in.ClientIP)
	} else if !fault.Is(err, fault.NotFound) {
		return fault.Wrap(op, err)
	}
	err = commit(ctx, func(st SignupStore) error {
		now := st.Now()
		tenantID, userID := st.NewID("ten_"), st.NewID("usr_")
		if err := st.TenantInsert(ctx, tenantID, name); err != nil {
			return err
		}
		if err := st.UserInsert(ctx, userID, tenantID, email, name); err != nil {
			return err
		}
		if err := st.CredentialInsert(ctx, PasswordCredential{UserID: userID, PasswordHash: hash, PasswordChangedAt: now}); err != nil {
			return err
		}
		code, rec := NewCode(s.keys, PurposeVerifyEmail, now, VerificationLifetime)
		rec.UserID, rec.Email, rec.TenantID = userID, email, tenantID
		if err := st.CodeInsert(ctx, rec); err != nil {
			return err
		}
		// Mailed last: a failed send rolls the signup back, so the person
		// can simply sign up again.
		return s.send(ctx, Message{To: email, Subject: "Verify your email address",
			Text: "Welcome, " + name + ".\n\nConfirm your email address by opening this link within 24 hours:\n\n" +
				s.Link("/verify-email", code) + "\n\nIf you did not sign up, ignore this message.\n"})
	})
	if fault.Is(err, fault.Conflict) { // a concurrent signup took the address
		return s.mailExisting(ctx, op, read, email, in.ClientIP)
	}
	if err != nil {
		return fault.Wrap(op, err)
	}
	return nil
}

// mailExisting tells an address's owner that someone tried to sign up with
// it, within the mail limit (counted on the read handle's own transaction).
func (s *Service) mailExisting(ctx context.Context, op string, read ThrottleStore, email, ip string) error {
	ok, err := s.mailAllowed(ctx, read, "notice", email, ip)
	if err != nil || !ok {
		return fault.Wrap(op, err)
	}
	err = s.send(ctx, Message{To: email, Subject: "Someone tried to sign up with your address",
		Text: "Someone tried to create an account with this email address, which already has one.\n\n" +
			"If it was you, sign in at " + s.cfg.BaseURL + "/login or reset your password at " + s.cfg.BaseURL +
			"/forgot-password.\nIf it was not you, you can ignore this message; nothing was changed.\n"})
	return fault.Wrap(op, err)
}

func (s *Service) send(ctx context.Context, m Message) error {
	if err := s.mail.Send(ctx, m); err != nil {
		return &fault.Error{Op: "account.send", Code: fault.ServiceUnavailable, Message: "The email could not be sent; try again later.", Err: err}
	}
	return nil
}

// validEmail normalizes and checks an email address.
func validEmail(op, field, email string) (string, error) {
	e := NormalizeEmail(email)
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 || !strings.Contains(e[strings.LastIndexByte(e, '@')+1:], ".") {
		return "", fault.Invalid(op, field, "The email address is not valid.")
	}
	return e, nil
}

// VerifyEmail consumes a verification code and marks its user's email
// verified; it returns the verified address. INVALID_INPUT (field code,
// details.reason unknown, used or expired) for a bad code.
func (s *Service) VerifyEmail(ctx context.Context, st SignupStore, code string) (string, error) {
	const op = "account.VerifyEmail"
	now := st.Now()
	c, err := ConsumeCode(ctx, st, s.keys, PurposeVerifyEmail, code, "code", now)
	if err != nil {
		return "", err
	}
	if err := st.CredentialEmailVerified(ctx, c.UserID, now); err != nil {
		return "", fault.Wrap(op, err)
	}
	return c.Email, nil
}

// LoginInput is one sign-in attempt.
type LoginInput struct {
	Email    string
	Password string
	// UserAgent and ClientIP describe the device, for the session list and
	// the per-address throttle.
	UserAgent string
	ClientIP  string
}

// SignIn is a new session with its credentials, returned once.
type SignIn struct {
	Session Session
	// Cookie is the session cookie's value.
	Cookie string
	// Token is the session-bound access token; "" for studio sessions.
	Token string
}

// loginFailed is the one answer for an unknown email and a wrong password.
func loginFailed(op string) error {
	return fault.E(op, fault.Unauthenticated, "The email or password is incorrect.")
}

// Login signs a user in with email and password and opens a web session
// with an access token (AccessTokenLifetime). Unknown email and wrong
// password are the same UNAUTHENTICATED error after the same hashing work
// (argon2id against a dummy hash when there is no account). Before any
// hashing the attempt is counted, in one transaction, on the counters of
// its (account, client address) pair, its address and its account
// (Config.Throttle; package documentation, "Login throttling"); a counter
// that refuses it answers RATE_LIMITED (details.limit loginFailures,
// details.retryAfter in seconds), and so does a hashing pool that stays
// full (details.limit passwordHashing), which gives the count back. A
// sign-in clears its pair's counter and takes the attempt off the others.
// Only after the password verified does an unverified email answer
// ACCESS_DENIED with details.reason "email_not_verified", so the answer
// reveals nothing to someone without the password. Hashing runs on the
// read handle; commit opens the session.
func (s *Service) Login(ctx context.Context, read LoginStore, commit UnitOfWork[LoginStore], in LoginInput) (SignIn, error) {
	const op = "account.Login"
	email := NormalizeEmail(in.Email)
	if email == "" || len(email) > 254 {
		return SignIn{}, fault.Invalid(op, "email", "The email address is not valid.")
	}
	if in.Password == "" || len(in.Password) > 4*MaxPasswordLen {
		return SignIn{}, fault.Invalid(op, "password", "The password is required.")
	}
	subjects := s.loginSubjects(email, in.ClientIP)
	if err := s.reserveLogin(ctx, read, subjects); err != nil {
		return SignIn{}, err
	}
	var (
		hash string
		cred PasswordCredential
	)
	u, err := read.UserGetByEmail(ctx, email)
	switch {
	case err == nil:
		cred, err = read.CredentialGet(ctx, u.ID)
		if err != nil && !fault.Is(err, fault.NotFound) {
			return SignIn{}, fault.Wrap(op, err)
		}
		hash = cred.PasswordHash // "" for a user without a password (invited, not yet accepted)
	case !fault.Is(err, fault.NotFound):
		return SignIn{}, fault.Wrap(op, err)
	}
	ok, err := s.pw.Verify(ctx, hash, in.Password)
	if fault.Is(err, fault.RateLimited) {
		// Never evaluated: the attempt is no failure.
		if serr := s.settleLogin(context.WithoutCancel(ctx), read, subjects, false); serr != nil {
			return SignIn{}, fault.Wrap(op, serr)
		}
		return SignIn{}, err
	}
	if err != nil {
		return SignIn{}, fault.Wrap(op, err)
	}
	if !ok {
		return SignIn{}, loginFailed(op) // counted when reserved
	}
	if cred.EmailVerifiedAt == nil {
		if err := s.settleLogin(ctx, read, subjects, true); err != nil {
			return SignIn{}, fault.Wrap(op, err)
		}
		return SignIn{}, fault.E(op, fault.AccessDenied, "Verify your email address first; follow the link we sent you.").
			With("reason", "email_not_verified")
	}
	var out SignIn
	err = commit(ctx, func(st LoginStore) error {
		if err := s.settleLogin(ctx, st, subjects, true); err != nil {
			return err
		}
		ws, err := st.UserDefaultWorkspace(ctx, u.ID)
		if err != nil {
			return err
		}
		out, err = s.open(ctx, st, u.ID, u.TenantID, ws, KindWeb, in.UserAgent, in.ClientIP, st.Now(), true)
		return err
	})
	if err != nil {
		return SignIn{}, fault.Wrap(op, err)
	}
	return out, nil
}

// open inserts a new session of kind with fresh credentials.
func (s *Service) open(ctx context.Context, st sessionOpener, userID, tenantID, workspaceID, kind, ua, ip string, authenticatedAt time.Time, token bool) (SignIn, error) {
	now := st.Now()
	cookie, cookieDigest := NewCookieValue(s.keys)
	out := SignIn{Cookie: cookie, Session: Session{
		ID: st.NewID("ses_"), UserID: userID, TenantID: tenantID, WorkspaceID: workspaceID, Kind: kind,
		CookieDigest: cookieDigest, UserAgent: truncate(ua, 256), ClientIP: truncate(ip, 64),
		CreatedAt: now, LastSeenAt: now, AuthenticatedAt: authenticatedAt, ExpiresAt: now.Add(SessionLifetime),
	}}
	if token {
		tok, digest := NewAccessToken(s.keys)
		exp := now.Add(AccessTokenLifetime)
		out.Token, out.Session.TokenDigest, out.Session.TokenExpiresAt = tok, digest, &exp
	}
	if err := st.SessionInsert(ctx, out.Session); err != nil {
		return SignIn{}, err
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// CurrentSession returns the caller's session with its user.
// UNAUTHENTICATED when p is not a session's principal.
func (s *Service) CurrentSession(ctx context.Context, st SessionReader, p *access.Principal) (Session, access.User, error) {
	const op = "account.CurrentSession"
	if p == nil || p.SessionID == "" {
		return Session{}, access.User{}, fault.E(op, fault.Unauthenticated, "This route needs a signed-in user.")
	}
	ses, err := st.SessionGet(ctx, p.SessionID)
	if err != nil {
		return Session{}, access.User{}, fault.Wrap(op, err)
	}
	u, err := st.UserGet(ctx, ses.TenantID, ses.UserID)
	if err != nil {
		return Session{}, access.User{}, fault.Wrap(op, err)
	}
	return ses, u, nil
}

// Sessions lists the caller's active sessions, newest first.
func (s *Service) Sessions(ctx context.Context, st SessionAdmin, p *access.Principal) ([]Session, error) {
	const op = "account.Sessions"
	if p == nil || p.SessionID == "" {
		return nil, fault.E(op, fault.Unauthenticated, "This route needs a signed-in user.")
	}
	ss, err := st.SessionListActive(ctx, p.UserID, st.Now())
	return ss, fault.Wrap(op, err)
}

// Logout revokes the caller's session and its access token; the next
// request with either is UNAUTHENTICATED.
func (s *Service) Logout(ctx context.Context, st SessionAdmin, p *access.Principal) error {
	const op = "account.Logout"
	if p == nil || p.SessionID == "" {
		return fault.E(op, fault.Unauthenticated, "This route needs a signed-in user.")
	}
	return fault.Wrap(op, st.SessionRevoke(ctx, p.SessionID, st.Now()))
}

// RevokeOthers revokes every other active session of the caller and
// returns how many it revoked.
func (s *Service) RevokeOthers(ctx context.Context, st SessionAdmin, p *access.Principal) (int, error) {
	const op = "account.RevokeOthers"
	if p == nil || p.SessionID == "" {
		return 0, fault.E(op, fault.Unauthenticated, "This route needs a signed-in user.")
	}
	n, err := st.SessionRevokeOthers(ctx, p.UserID, p.SessionID, st.Now())
	return n, fault.Wrap(op, err)
}

// ForgotPassword mails a reset link (BaseURL/reset-password?code=...,
// ResetLifetime) when email belongs to an account, within Config.ResetMail:
// each request counts for the client address ip (10 an hour by default),
// and one that may send counts for the account (3 an hour). It does nothing
// otherwise, when the address has no account or a limit is reached; the
// caller answers every case alike. INVALID_INPUT for a malformed address.
func (s *Service) ForgotPassword(ctx context.Context, st ResetMailStore, email, ip string) error {
	const op = "account.ForgotPassword"
	email, err := validEmail(op, "email", email)
	if err != nil {
		return err
	}
	u, err := st.UserGetByEmail(ctx, email)
	account := email
	if fault.Is(err, fault.NotFound) {
		account = "" // counted for the address alone
	} else if err != nil {
		return fault.Wrap(op, err)
	}
	if ok, err := s.mailAllowed(ctx, st, "reset", account, ip); err != nil || !ok {
		return fault.Wrap(op, err)
	}
	code, rec := NewCode(s.keys, PurposePasswordReset, st.Now(), ResetLifetime)
	rec.UserID, rec.Email, rec.TenantID = u.ID, email, u.TenantID
	if err := st.CodeInsert(ctx, rec); err != nil {
		return fault.Wrap(op, err)
	}
	return fault.Wrap(op, s.send(ctx, Message{To: email, Subject: "Reset your password",
		Text: "Someone asked to reset the password of your account. To choose a new password, open this link within 30 minutes:\n\n" +
			s.Link("/reset-password", code) + "\n\nIf it was not you, ignore this message; your password is unchanged.\n"}))
}

// ResetPassword consumes a reset code, sets the new password, marks the
// email verified (the link proved the mailbox) and revokes every session of
// the user: the old cookies and access tokens fail on their next request.
// INVALID_INPUT for a bad password or (field code, details.reason) a bad
// code; RATE_LIMITED when the hashing pool stays full.
func (s *Service) ResetPassword(ctx context.Context, commit UnitOfWork[ResetStore], code, password string) error {
	const op = "account.ResetPassword"
	if err := ValidatePassword(op, "password", password); err != nil {
		return err
	}
	hash, err := s.pw.Hash(ctx, password)
	if err != nil {
		return fault.Wrap(op, err)
	}
	err = commit(ctx, func(st ResetStore) error {
		now := st.Now()
		c, err := ConsumeCode(ctx, st, s.keys, PurposePasswordReset, code, "code", now)
		if err != nil {
			return err
		}
		if _, err := st.CredentialGet(ctx, c.UserID); fault.Is(err, fault.NotFound) {
			if err := st.CredentialInsert(ctx, PasswordCredential{UserID: c.UserID, PasswordHash: hash, PasswordChangedAt: now}); err != nil {
				return err
			}
		} else if err != nil {
			return err
		} else if err := st.CredentialPasswordSet(ctx, c.UserID, hash, now); err != nil {
			return err
		}
		if err := st.CredentialEmailVerified(ctx, c.UserID, now); err != nil {
			return err
		}
		_, err = st.SessionRevokeOthers(ctx, c.UserID, "", now)
		return err
	})
	return fault.Wrap(op, err)
}

// Handoff is a single-use code that exchanges a web session for a studio
// session.
type Handoff struct {
	Code      string
	ExpiresAt time.Time
}

// StartHandoff issues a handoff code (HandoffLifetime) for the caller's web
// session. ACCESS_DENIED from a studio session.
func (s *Service) StartHandoff(ctx context.Context, st HandoffStore, p *access.Principal) (Handoff, error) {
	const op = "account.StartHandoff"
	ses, _, err := s.CurrentSession(ctx, st, p)
	if err != nil {
		return Handoff{}, err
	}
	if ses.Kind != KindWeb {
		return Handoff{}, fault.E(op, fault.AccessDenied, "Only a web session can hand off to the studio app.").With("reason", "not_web_session")
	}
	code, rec := NewCode(s.keys, PurposeHandoff, st.Now(), HandoffLifetime)
	rec.UserID, rec.TenantID, rec.WorkspaceID, rec.SessionID = ses.UserID, ses.TenantID, ses.WorkspaceID, ses.ID
	if err := st.CodeInsert(ctx, rec); err != nil {
		return Handoff{}, fault.Wrap(op, err)
	}
	return Handoff{Code: code, ExpiresAt: rec.ExpiresAt}, nil
}

// ExchangeHandoff consumes a handoff code and opens a studio session for
// the same user and workspace, carrying the web session's sign-in time (a
// handoff is not a fresh sign-in). It issues no access token: the studio
// app holds an HTTP-only cookie. INVALID_INPUT (field code,
// details.reason) for a bad code; UNAUTHENTICATED when the web session
// has since ended.
func (s *Service) ExchangeHandoff(ctx context.Context, st HandoffStore, code, ua, ip string) (SignIn, error) {
	const op = "account.ExchangeHandoff"
	now := st.Now()
	c, err := ConsumeCode(ctx, st, s.keys, PurposeHandoff, code, "code", now)
	if err != nil {
		return SignIn{}, err
	}
	web, err := st.SessionGet(ctx, c.SessionID)
	if err != nil {
		return SignIn{}, fault.Wrap(op, err)
	}
	if web.RevokedAt != nil || !now.Before(web.ExpiresAt) {
		return SignIn{}, fault.E(op, fault.Unauthenticated, "The web session that started the handoff has ended.")
	}
	out, err := s.open(ctx, st, web.UserID, web.TenantID, web.WorkspaceID, KindStudio, ua, ip, web.AuthenticatedAt, false)
	if err != nil {
		return SignIn{}, fault.Wrap(op, fmt.Errorf("open studio session: %w", err))
	}
	return out, nil
}
