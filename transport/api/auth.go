package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/creatormusic/platform/transport"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/account"
	"github.com/creatormusic/platform/fault"
)

// SignupRequest is the body of POST /api/v1/auth/signup.
type SignupRequest struct {
	// Email is the address to sign up with; the verification link is mailed there.
	Email string `json:"email" example:"ada@example.com"`
	// Password is the new account's password, 10 to 256 characters.
	Password string `json:"password" example:"correct horse battery staple"`
	// Name is the user's display name, 1 to 100 characters.
	Name string `json:"name" example:"Ada Lovelace"`
}

// Accepted answers signup and forgot-password: the same body whether or not
// the address has an account, so the answer never tells.
type Accepted struct {
	// Status is "check_email".
	Status string `json:"status" example:"check_email"`
	// Message says what happens next.
	Message string `json:"message" example:"If the address can receive mail, a message with a link is on its way."`
}

// CodeRequest carries a single-use code from a mailed link or a handoff.
type CodeRequest struct {
	// Code is the single-use code from the mailed link or the handoff.
	Code string `json:"code" example:"pc_REPLACE_WITH_THE_CODE"`
}

// EmailVerified answers POST /api/v1/auth/verify-email.
type EmailVerified struct {
	// Email is the address the code verified.
	Email string `json:"email" example:"ada@example.com"`
	// Verified is true: the address is verified.
	Verified bool `json:"verified" example:"true"`
}

// LoginRequest is the body of POST /api/v1/auth/login.
type LoginRequest struct {
	// Email is the account's sign-in address.
	Email string `json:"email" example:"ada@example.com"`
	// Password is the account's password.
	Password string `json:"password" example:"correct horse battery staple"`
}

// UserView is a signed-in user's identity.
type UserView struct {
	// ID is the user's id.
	ID string `json:"id" example:"usr_01jd0000000000000000000000"`
	// Email is the user's sign-in address.
	Email string `json:"email" example:"ada@example.com"`
	// Name is the user's display name.
	Name string `json:"name" example:"Ada Lovelace"`
}

// SessionView is a session as its owner sees it: never its cookie or token.
type SessionView struct {
	// ID is the session's id.
	ID string `json:"id" example:"ses_01jd0000000000000000000000"`
	// Kind is web (cookie and access token from login) or studio (cookie
	// from a handoff).
	Kind string `json:"kind" enum:"web,studio" example:"web"`
	// Tenant is the tenant the session acts in.
	Tenant Ref `json:"tenant"`
	// Workspace is null until the user onboards or joins one.
	Workspace *Ref `json:"workspace"`
	// Device is the user agent that signed in.
	Device string `json:"device" example:"Mozilla/5.0 (X11; Linux x86_64)"`
	// Current marks the session of this request.
	Current bool `json:"current" example:"true"`
	// CreatedAt is when the session was created.
	CreatedAt time.Time `json:"createdAt"`
	// LastSeenAt is when the session was last used (written at most once a minute).
	LastSeenAt time.Time `json:"lastSeenAt"`
	// AuthenticatedAt is when the user last proved the password in this session (fresh sign-in
	// checks read it).
	AuthenticatedAt time.Time `json:"authenticatedAt"`
	// ExpiresAt is when the session ends: 30 days after its sign-in.
	ExpiresAt time.Time `json:"expiresAt"`
	// AccessTokenExpiresAt is when the session's access token expires; null
	// for a studio session, which has none.
	AccessTokenExpiresAt *time.Time `json:"accessTokenExpiresAt"`
}

// CurrentSession answers GET /api/v1/auth/session.
type CurrentSession struct {
	// Session is the session of this request.
	Session SessionView `json:"session"`
	// User is the signed-in user.
	User UserView `json:"user"`
	// Environment is the mode this request acts in (live unless the request
	// sent Platform-Environment: test).
	Environment string `json:"environment" enum:"test,live" example:"live"`
}

// SignedIn answers a login: the new session, and for web sessions the
// session-bound access token, shown once.
type SignedIn struct {
	// Session is the new session.
	Session SessionView `json:"session"`
	// User is the signed-in user.
	User UserView `json:"user"`
	// AccessToken (platform_at_...) is a session-bound user credential for
	// clients without cookies: send it as Authorization: Bearer. It expires
	// after an hour and is revoked with its session.
	AccessToken string `json:"accessToken" example:"platform_at_REPLACE_WITH_YOUR_TOKEN"`
	// TokenType is always Bearer.
	TokenType string `json:"tokenType" example:"Bearer"`
	// AccessTokenExpiresAt is when accessToken expires, an hour after the sign-in.
	AccessTokenExpiresAt time.Time `json:"accessTokenExpiresAt"`
}

// StudioSession answers a handoff exchange. The studio app's credential is
// only its HTTP-only cookie.
type StudioSession struct {
	// Session is the studio session the handoff created.
	Session SessionView `json:"session"`
}

// SessionList answers GET /api/v1/auth/sessions.
type SessionList struct {
	// Items are the user's active sessions.
	Items []SessionView `json:"items"`
}

// SignedOut answers logout.
type SignedOut struct {
	// SignedOut is true: the session is revoked and its cookie cleared.
	SignedOut bool `json:"signedOut" example:"true"`
}

// RevokedSessions answers revoke-others.
type RevokedSessions struct {
	// Revoked counts the sessions revoked.
	Revoked int `json:"revoked" example:"2"`
}

// PasswordResetRequest is the body of POST /api/v1/auth/password/reset.
type PasswordResetRequest struct {
	// Code is the single-use code from the mailed reset link.
	Code string `json:"code" example:"pc_REPLACE_WITH_THE_CODE"`
	// Password is the new password, 10 to 256 characters.
	Password string `json:"password" example:"a new long passphrase"`
}

// ForgotPasswordRequest is the body of POST /api/v1/auth/password/forgot.
type ForgotPasswordRequest struct {
	// Email is the account's address; a reset link is mailed there if it has an account.
	Email string `json:"email" example:"ada@example.com"`
}

// PasswordReset answers a password reset.
type PasswordReset struct {
	// Reset is true; every session of the account was signed out.
	Reset bool `json:"reset" example:"true"`
}

// HandoffCode answers POST /api/v1/auth/handoff.
type HandoffCode struct {
	// Code is single-use; exchange it within a minute.
	Code string `json:"code" example:"pc_REPLACE_WITH_THE_CODE"`
	// ExpiresAt is when code stops working.
	ExpiresAt time.Time `json:"expiresAt"`
}

// setCookieDoc documents the session cookie a route sets.
const setCookieDoc = "The session cookie: platform_session=<signed value>; Path=/; Max-Age=2592000; HttpOnly; Secure; SameSite=Lax " +
	"(Secure is dropped only on a host configured for plain-HTTP localhost)."

// authRoutes are the spec's account authentication routes (signup to
// handoff). None takes an Idempotency-Key. Routes that hash passwords run
// their own unit of work (Route.OwnUnitOfWork): the argon2id work happens
// before any transaction, through the account service's hashing pool. The
// unauthenticated ones first take a request from the client address's rate
// (account.Service.AdmitAddress, as Route.Admit), before the body is read,
// a transaction opens or anything is hashed.
func authRoutes(svc *account.Service) []Route {
	cfg := svc.Config()
	addressRate := fmt.Sprintf("\n\nEach client address may send %d requests a minute (bursts of %d) to the unauthenticated "+
		"`/api/v1/auth/*` routes together; beyond that they answer 429 RATE_LIMITED (details.limit `authRequestsPerAddress`) "+
		"with Retry-After before any other work.", cfg.AddressRate.PerMinute, cfg.AddressRate.Burst)
	public := func(r Route) Route {
		r.Tag, r.Auth, r.Private, r.Idempotency = transport.TagAccount, transport.AuthPublic, true, transport.IdempotencyNone
		r.Description += addressRate
		r.Errors = append(r.Errors, string(fault.RateLimited))
		r.AdmitFunc = func(req *http.Request, now time.Time) error {
			return svc.AdmitAddress(clientIP(req, cfg.TrustProxy), now)
		}
		return r
	}
	signedIn := func(r Route) Route {
		r.Tag, r.Auth, r.SignedIn, r.Private, r.Idempotency = transport.TagAccount, transport.AuthSession, true, true, transport.IdempotencyNone
		return r
	}
	sessionHeaders := map[string]string{"Set-Cookie": setCookieDoc}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	exampleSession := SessionView{ID: "ses_01jd0000000000000000000000", Kind: account.KindWeb,
		Tenant: Ref{ID: "ten_01jd0000000000000000000000"}, Workspace: &Ref{ID: "ws_01jd0000000000000000000000"},
		Device: "Mozilla/5.0 (X11; Linux x86_64)", Current: true, CreatedAt: now, LastSeenAt: now, AuthenticatedAt: now,
		ExpiresAt: now.Add(account.SessionLifetime)}
	tokExp := now.Add(account.AccessTokenLifetime)
	exampleSession.AccessTokenExpiresAt = &tokExp
	exampleUser := UserView{ID: "usr_01jd0000000000000000000000", Email: "ada@example.com", Name: "Ada Lovelace"}
	accepted := Accepted{Status: "check_email", Message: "If the address can receive mail, a message with a link is on its way."}
	codeErrs := []string{string(fault.InvalidInput)}

	return []Route{
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/signup", OperationID: "signup", OwnUnitOfWork: true,
			Summary: "Sign up",
			Description: "Creates an account (a personal tenant and the user, email unverified) and mails a verification link " +
				"`{base_url}/verify-email?code=...`, valid 24 hours. The answer is the same 202 whether or not the address " +
				"already has an account (its owner is mailed a notice instead, at most as often as reset mail), so signup " +
				"never reveals who is registered. Passwords are 10 to 256 characters and stored only as argon2id hashes; " +
				"hashing runs through a bounded pool, and when no slot frees within a short wait (1 second by default) " +
				"the answer is 429 RATE_LIMITED (details.limit `passwordHashing`) with Retry-After: 1.",
			Request:  SignupRequest{Email: "ada@example.com", Password: "correct horse battery staple", Name: "Ada Lovelace"},
			Response: accepted, Status: http.StatusAccepted, Errors: []string{string(fault.ServiceUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in SignupRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				commit := unitOf(c, func(tx Tx) account.SignupStore { return tx })
				if err := svc.Signup(ctx, c.Tx, commit, account.SignupInput{Email: in.Email, Password: in.Password, Name: in.Name,
					ClientIP: clientIP(c.Request, cfg.TrustProxy)}); err != nil {
					return nil, err
				}
				return accepted, ensureCommitted(ctx, c)
			}}),
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/verify-email", OperationID: "verifyEmail",
			Summary: "Verify an email address",
			Description: "Consumes the single-use code of the verification link. An unknown, used or expired code is " +
				"400 INVALID_INPUT with details.field `code` and details.reason `unknown`, `used` or `expired`.",
			Request: CodeRequest{Code: "pc_REPLACE_WITH_THE_CODE"}, Response: EmailVerified{Email: "ada@example.com", Verified: true},
			Errors: codeErrs,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CodeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				email, err := svc.VerifyEmail(ctx, c.Tx, in.Code)
				if err != nil {
					return nil, err
				}
				return EmailVerified{Email: email, Verified: true}, nil
			}}),
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/login", OperationID: "login", OwnUnitOfWork: true,
			Summary: "Sign in",
			Description: "Signs in with email and password. Sets the web session cookie (HTTP-only, SameSite=Lax, Secure, " +
				"30 days) and returns a session access token (`platform_at_...`): a session-bound user credential for " +
				"clients without cookies, sent as `Authorization: Bearer`, valid one hour and revoked with its session. " +
				"An unknown email and a wrong password are the same 401 UNAUTHENTICATED. Only with the right password " +
				"does an unverified address answer 403 ACCESS_DENIED with details.reason `email_not_verified`.\n\n" +
				"Failed sign-ins are throttled before any password hashing: each attempt is counted, in one transaction, " +
				"on three counters, and a refused attempt is 429 RATE_LIMITED (details.limit `loginFailures`) with " +
				"Retry-After. " + throttleDoc(cfg.Throttle) + " A successful sign-in clears its (account, address) counter. " +
				"Client addresses are the connection's peer (the first X-Forwarded-For entry only on a host configured to " +
				"trust its proxy); IPv6 addresses count by their /64 network.\n\n" +
				"Password hashing runs through a bounded pool (a few at a time, sized to the host's memory); when no slot " +
				"frees within a short wait (1 second by default) the attempt is 429 RATE_LIMITED (details.limit " +
				"`passwordHashing`) with Retry-After: 1 and is not counted as a failure.",
			Request: LoginRequest{Email: "ada@example.com", Password: "correct horse battery staple"},
			Response: SignedIn{Session: exampleSession, User: exampleUser, AccessToken: "platform_at_REPLACE_WITH_YOUR_TOKEN",
				TokenType: "Bearer", AccessTokenExpiresAt: tokExp},
			ResponseHeaders: sessionHeaders,
			Errors:          []string{string(fault.Unauthenticated), string(fault.AccessDenied), string(fault.RateLimited)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in LoginRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				commit := unitOf(c, func(tx Tx) account.LoginStore { return tx })
				si, err := svc.Login(ctx, c.Tx, commit, account.LoginInput{Email: in.Email, Password: in.Password,
					UserAgent: c.Request.UserAgent(), ClientIP: clientIP(c.Request, cfg.TrustProxy)})
				if err != nil {
					return nil, err
				}
				setSessionCookie(c, si.Cookie, cfg.InsecureCookies)
				u, err := svc.User(ctx, c.Tx, si.Session.TenantID, si.Session.UserID)
				if err != nil {
					return nil, err
				}
				return SignedIn{Session: sessionView(si.Session, si.Session.ID), User: userView(u), AccessToken: si.Token,
					TokenType: "Bearer", AccessTokenExpiresAt: *si.Session.TokenExpiresAt}, nil
			}}),
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/logout", OperationID: "logout",
			Summary: "Sign out",
			Description: "Revokes the current session and its access token (the next request with either is 401) and " +
				"clears the session cookie.",
			Response: SignedOut{SignedOut: true}, ResponseHeaders: map[string]string{"Set-Cookie": "Clears the session cookie (Max-Age=0)."},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				if err := svc.Logout(ctx, c.Tx, c.Principal); err != nil {
					return nil, err
				}
				clearSessionCookie(c, cfg.InsecureCookies)
				return SignedOut{SignedOut: true}, nil
			}}),
		signedIn(Route{Method: http.MethodGet, Pattern: "/api/v1/auth/session", OperationID: "getSession",
			Summary: "Get the current session",
			Description: "The session of this request (cookie or access token): user, tenant, workspace (null before " +
				"onboarding), kind, environment and its times.",
			Response: CurrentSession{Session: exampleSession, User: exampleUser, Environment: "live"},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ses, u, err := svc.CurrentSession(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				return CurrentSession{Session: sessionView(ses, ses.ID), User: userView(u), Environment: string(c.Principal.Environment)}, nil
			}}),
		signedIn(Route{Method: http.MethodGet, Pattern: "/api/v1/auth/sessions", OperationID: "listSessions",
			Summary: "List your sessions",
			Description: "The signed-in user's active sessions, newest first, with device and last use; the current one " +
				"is marked. Credentials are never shown.",
			Response: SessionList{Items: []SessionView{exampleSession}},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				ss, err := svc.Sessions(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				out := SessionList{Items: make([]SessionView, len(ss))}
				for i, s := range ss {
					out.Items[i] = sessionView(s, c.Principal.SessionID)
				}
				return out, nil
			}}),
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/sessions/revoke-others", OperationID: "revokeOtherSessions",
			Summary:     "Sign out everywhere else",
			Description: "Revokes every other active session of the user (and their access tokens); each fails on its next request.",
			Response:    RevokedSessions{Revoked: 2},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				n, err := svc.RevokeOthers(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				return RevokedSessions{Revoked: n}, nil
			}}),
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/password/forgot", OperationID: "forgotPassword",
			Summary: "Ask for a password reset link",
			Description: "Mails a reset link `{base_url}/reset-password?code=...`, single-use and valid 30 minutes, when the " +
				fmt.Sprintf("address has an account, at most %d times per account and for at most %d requests per client "+
					"address (whether or not they name an account), each count running for %s from its first request. ", cfg.ResetMail.PerAccount, cfg.ResetMail.PerAddress,
					transport.HumanDuration(cfg.ResetMail.Window)) +
				"The answer is the same 202 in every case, sent, unknown address or over a limit: a limited request " +
				"simply sends no mail.",
			Request: ForgotPasswordRequest{Email: "ada@example.com"}, Response: accepted, Status: http.StatusAccepted,
			Errors: []string{string(fault.ServiceUnavailable)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in ForgotPasswordRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				if err := svc.ForgotPassword(ctx, c.Tx, in.Email, clientIP(c.Request, cfg.TrustProxy)); err != nil {
					return nil, err
				}
				return accepted, nil
			}}),
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/password/reset", OperationID: "resetPassword", OwnUnitOfWork: true,
			Summary: "Set a new password with a reset code",
			Description: "Consumes the reset code and sets the new password, then revokes every session of the account: " +
				"old cookies and access tokens fail on their next request. A used, expired or unknown code is 400 " +
				"INVALID_INPUT with details.reason `used`, `expired` or `unknown`. The new password is hashed through the " +
				"bounded pool: 429 RATE_LIMITED (details.limit `passwordHashing`) with Retry-After: 1 when it stays full.",
			Request:  PasswordResetRequest{Code: "pc_REPLACE_WITH_THE_CODE", Password: "a new long passphrase"},
			Response: PasswordReset{Reset: true}, Errors: codeErrs,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in PasswordResetRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				commit := unitOf(c, func(tx Tx) account.ResetStore { return tx })
				if err := svc.ResetPassword(ctx, commit, in.Code, in.Password); err != nil {
					return nil, err
				}
				return PasswordReset{Reset: true}, nil
			}}),
		signedIn(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/handoff", OperationID: "startHandoff",
			Summary: "Start a handoff to the studio app",
			Description: "From a web session only: returns a single-use handoff code valid 60 seconds, which the studio app " +
				"exchanges at /api/v1/auth/handoff/exchange for its own HTTP-only session.",
			Response: HandoffCode{Code: "pc_REPLACE_WITH_THE_CODE", ExpiresAt: now.Add(account.HandoffLifetime)},
			Status:   http.StatusCreated,
			Handle: func(ctx context.Context, c *Call) (any, error) {
				h, err := svc.StartHandoff(ctx, c.Tx, c.Principal)
				if err != nil {
					return nil, err
				}
				return HandoffCode{Code: h.Code, ExpiresAt: h.ExpiresAt}, nil
			}}),
		public(Route{Method: http.MethodPost, Pattern: "/api/v1/auth/handoff/exchange", OperationID: "exchangeHandoff",
			Summary: "Exchange a handoff code for a studio session",
			Description: "Consumes a handoff code and sets the studio app's HTTP-only session cookie, for the same user and " +
				"workspace as the web session that started it. A used, expired or unknown code is 400 INVALID_INPUT with " +
				"details.reason; a web session signed out since is 401.",
			Request: CodeRequest{Code: "pc_REPLACE_WITH_THE_CODE"},
			Response: StudioSession{Session: func() SessionView {
				v := exampleSession
				v.Kind, v.AccessTokenExpiresAt = account.KindStudio, nil
				return v
			}()},
			ResponseHeaders: sessionHeaders, Errors: []string{string(fault.InvalidInput), string(fault.Unauthenticated)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in CodeRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				si, err := svc.ExchangeHandoff(ctx, c.Tx, in.Code, c.Request.UserAgent(), clientIP(c.Request, cfg.TrustProxy))
				if err != nil {
					return nil, err
				}
				setSessionCookie(c, si.Cookie, cfg.InsecureCookies)
				return StudioSession{Session: sessionView(si.Session, si.Session.ID)}, nil
			}}),
	}
}

// throttleDoc states the login throttle policy p in words.
func throttleDoc(p account.ThrottlePolicy) string {
	limit := func(l account.ThrottleLimit) string {
		return fmt.Sprintf("%d failures, then a lock of %s that doubles with each further failure up to %s",
			l.MaxFailures, transport.HumanDuration(l.Backoff), transport.HumanDuration(l.MaxBackoff))
	}
	return fmt.Sprintf("Failures add up within %s (a counter restarts once that long has passed since its first failure "+
		"and since its last lock ended). One account from one client address: %s. One client address on any account: "+
		"%s. One account from any address: %s; while that lock runs, only an address with no failure on the account "+
		"may still try, so an attacker elsewhere can slow an account down but never lock its owner out.",
		transport.HumanDuration(p.Window), limit(p.Pair), limit(p.Address), limit(p.Account))
}

// unitOf adapts an OwnUnitOfWork call's Commit to an account operation's
// unit of work on port S; port hands the route table's Tx over as S.
func unitOf[S any](c *Call, port func(Tx) S) account.UnitOfWork[S] {
	return func(ctx context.Context, fn func(st S) error) error {
		return c.Commit(ctx, func(tx Tx) error { return fn(port(tx)) })
	}
}

// ensureCommitted commits an empty unit of work (the receipt alone) when the
// handler succeeded without writing, so both answers of signup look alike.
func ensureCommitted(ctx context.Context, c *Call) error {
	if c.Committed() {
		return nil
	}
	return c.Commit(ctx, func(Tx) error { return nil })
}

// clientIP is the request's client address: the connection's peer, or the
// first X-Forwarded-For entry when the host trusts its proxy.
func clientIP(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			if ip := net.ParseIP(strings.TrimSpace(first)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func setSessionCookie(c *Call, value string, insecure bool) {
	ck := &http.Cookie{Name: account.CookieName, Value: value, Path: "/", MaxAge: int(account.SessionLifetime / time.Second),
		HttpOnly: true, Secure: !insecure, SameSite: http.SameSiteLaxMode}
	c.Header().Add("Set-Cookie", ck.String())
}

func clearSessionCookie(c *Call, insecure bool) {
	ck := &http.Cookie{Name: account.CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: !insecure,
		SameSite: http.SameSiteLaxMode}
	c.Header().Add("Set-Cookie", ck.String())
}

func userView(u access.User) UserView { return UserView{ID: u.ID, Email: u.Email, Name: u.DisplayName} }

func sessionView(s account.Session, currentID string) SessionView {
	v := SessionView{ID: s.ID, Kind: s.Kind, Tenant: Ref{ID: s.TenantID}, Device: s.UserAgent, Current: s.ID == currentID,
		CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt, AuthenticatedAt: s.AuthenticatedAt, ExpiresAt: s.ExpiresAt,
		AccessTokenExpiresAt: s.TokenExpiresAt}
	if s.WorkspaceID != "" {
		v.Workspace = &Ref{ID: s.WorkspaceID}
	}
	return v
}
