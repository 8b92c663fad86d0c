package account

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
)

// memAccount is an in-memory store of the ports the tests drive (login,
// reset mail, sessions, invitations and joining): users, credentials,
// codes, sessions, throttle counters, workspaces, memberships and the
// audit log.
type memAccount struct {
	now        time.Time
	ids        int
	users      map[string]access.User
	creds      map[string]PasswordCredential
	codes      map[string]Code
	sessions   map[string]Session
	throttles  map[string]Throttle
	workspaces map[string]access.Workspace
	members    map[string][]access.Role // workspace|user
	audit      []AuditEvent
	touches    int
	lookups    int
}

var (
	_ LoginStore     = (*memAccount)(nil)
	_ ResetMailStore = (*memAccount)(nil)
	_ SessionStore   = (*memAccount)(nil)
	_ InviteStore    = (*memAccount)(nil)
	_ JoinStore      = (*memAccount)(nil)
)

func newMemAccount() *memAccount {
	return &memAccount{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), users: map[string]access.User{},
		creds: map[string]PasswordCredential{}, codes: map[string]Code{}, sessions: map[string]Session{},
		throttles: map[string]Throttle{}, workspaces: map[string]access.Workspace{}, members: map[string][]access.Role{}}
}

// unit is a UnitOfWork of login on m (rollback).
func (m *memAccount) unit(_ context.Context, fn func(st LoginStore) error) error {
	return m.rollback(func() error { return fn(m) })
}

// rollback runs fn as one unit of work on m: a failed function leaves
// everything as it was.
func (m *memAccount) rollback(fn func() error) error {
	users, th, codes, ses, mem, audit := maps.Clone(m.users), maps.Clone(m.throttles), maps.Clone(m.codes),
		maps.Clone(m.sessions), maps.Clone(m.members), slices.Clone(m.audit)
	if err := fn(); err != nil {
		m.users, m.throttles, m.codes, m.sessions, m.members, m.audit = users, th, codes, ses, mem, audit
		return err
	}
	return nil
}

func notFoundErr(op string) error { return fault.E(op, fault.NotFound, "") }

func (m *memAccount) Now() time.Time { return m.now }

func (m *memAccount) NewID(prefix string) string {
	m.ids++
	return fmt.Sprintf("%s%04d", prefix, m.ids)
}

func (m *memAccount) UserGet(_ context.Context, tenantID, userID string) (access.User, error) {
	u, ok := m.users[userID]
	if !ok || u.TenantID != tenantID {
		return access.User{}, notFoundErr("mem.UserGet")
	}
	return u, nil
}

func (m *memAccount) UserGetByEmail(_ context.Context, email string) (access.User, error) {
	for _, u := range m.users {
		if u.Email == email {
			return u, nil
		}
	}
	return access.User{}, notFoundErr("mem.UserGetByEmail")
}

func (m *memAccount) UserDefaultWorkspace(context.Context, string) (string, error) {
	return "ws_1", nil
}

func (m *memAccount) CredentialGet(_ context.Context, userID string) (PasswordCredential, error) {
	c, ok := m.creds[userID]
	if !ok {
		return PasswordCredential{}, notFoundErr("mem.CredentialGet")
	}
	return c, nil
}

func (m *memAccount) CodeInsert(_ context.Context, c Code) error {
	m.codes[c.Digest] = c
	return nil
}

func (m *memAccount) CodeConsume(_ context.Context, purpose Purpose, digest string, at time.Time) (Code, bool, error) {
	m.lookups++
	c, ok := m.codes[digest]
	if !ok || c.Purpose != purpose {
		return Code{}, false, notFoundErr("mem.CodeConsume")
	}
	if c.UsedAt != nil || !at.Before(c.ExpiresAt) {
		return c, false, nil
	}
	c.UsedAt = &at
	m.codes[digest] = c
	return c, true, nil
}

func (m *memAccount) SessionInsert(_ context.Context, s Session) error {
	m.sessions[s.ID] = s
	return nil
}

func (m *memAccount) SessionGet(_ context.Context, id string) (Session, error) {
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, notFoundErr("mem.SessionGet")
	}
	return s, nil
}

func (m *memAccount) sessionBy(digest func(Session) string, d string) (SessionAuth, error) {
	m.lookups++
	for _, s := range m.sessions {
		if digest(s) == d {
			return SessionAuth{Session: s, AuthzVersion: 7}, nil
		}
	}
	return SessionAuth{}, notFoundErr("mem.SessionBy")
}

func (m *memAccount) SessionByCookie(_ context.Context, d string) (SessionAuth, error) {
	return m.sessionBy(func(s Session) string { return s.CookieDigest }, d)
}

func (m *memAccount) SessionByToken(_ context.Context, d string) (SessionAuth, error) {
	return m.sessionBy(func(s Session) string { return s.TokenDigest }, d)
}

func (m *memAccount) SessionTouch(_ context.Context, id string, at time.Time) error {
	m.touches++
	s := m.sessions[id]
	s.LastSeenAt = at
	m.sessions[id] = s
	return nil
}

func (m *memAccount) SessionWorkspaceSet(_ context.Context, id, workspaceID string) error {
	s, ok := m.sessions[id]
	if !ok {
		return notFoundErr("mem.SessionWorkspaceSet")
	}
	s.WorkspaceID = workspaceID
	m.sessions[id] = s
	return nil
}

// ThrottleUpdate runs fn on the counters and writes back what it returns;
// when fn fails nothing is written.
func (m *memAccount) ThrottleUpdate(_ context.Context, subjects []string, fn func(time.Time, []Throttle) ([]Throttle, error)) error {
	cur := make([]Throttle, len(subjects))
	for i, s := range subjects {
		t, ok := m.throttles[s]
		if !ok {
			t = Throttle{Subject: s}
		}
		cur[i] = t
	}
	out, err := fn(m.now, cur)
	if err != nil {
		return err
	}
	for i, t := range out {
		m.throttles[subjects[i]] = t
	}
	return nil
}

func (m *memAccount) AuditInsert(_ context.Context, e AuditEvent) error {
	m.audit = append(m.audit, e)
	return nil
}

func (m *memAccount) MemberGet(_ context.Context, workspaceID, userID string) (Member, error) {
	roles, ok := m.members[workspaceID+"|"+userID]
	if !ok {
		return Member{}, notFoundErr("mem.MemberGet")
	}
	return Member{UserID: userID, Roles: roles, Status: access.MembershipActive}, nil
}

func (m *memAccount) WorkspaceGet(_ context.Context, tenantID, workspaceID string) (access.Workspace, error) {
	w, ok := m.workspaces[workspaceID]
	if !ok || w.TenantID != tenantID {
		return access.Workspace{}, notFoundErr("mem.WorkspaceGet")
	}
	return w, nil
}

func (m *memAccount) MembershipInsert(_ context.Context, workspaceID, userID string, roles []access.Role) error {
	key := workspaceID + "|" + userID
	if _, ok := m.members[key]; ok {
		return fault.E("mem.MembershipInsert", fault.Conflict, "")
	}
	m.members[key] = slices.Clone(roles)
	return nil
}

func (m *memAccount) UserMembershipCount(_ context.Context, userID string) (int, error) {
	n := 0
	for key := range m.members {
		if _, u, _ := strings.Cut(key, "|"); u == userID {
			n++
		}
	}
	return n, nil
}

func (m *memAccount) UserTenantSet(_ context.Context, userID, tenantID string) error {
	u := m.users[userID]
	u.TenantID = tenantID
	m.users[userID] = u
	for id, s := range m.sessions {
		if s.UserID == userID {
			s.TenantID = tenantID
			m.sessions[id] = s
		}
	}
	return nil
}

// mailbox is a Mailer that keeps what it sends, or fails when told.
type mailbox struct {
	sent []Message
	fail bool
}

func (b *mailbox) Send(_ context.Context, m Message) error {
	if b.fail {
		return errors.New("smtp: connection refused")
	}
	b.sent = append(b.sent, m)
	return nil
}
