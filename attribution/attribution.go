package attribution

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// IDPrefix starts an attribution record's id.
const IDPrefix = "atr_"

// EventRecorded is the outbox event type of a recorded touch.
const EventRecorded = "attribution.recorded"

// Bounds of a touch and of the record.
const (
	// MaxValue bounds source, medium, campaign, term and content, in
	// characters after trimming.
	MaxValue = 100
	// MaxReferrerInput bounds a referrer as sent, in characters.
	MaxReferrerInput = 2048
	// MaxStored bounds a referrer and a landing path as stored, in
	// characters.
	MaxStored = 512
	// MaxTouchCount is where a record's touch counter stops.
	MaxTouchCount = 1_000_000
	// maxRetries bounds the re-reads of a record whose version a
	// concurrent touch moved.
	maxRetries = 3
)

// Reasons of INVALID_INPUT (details.reason).
const (
	ReasonTooLong     = "too_long"
	ReasonCharset     = "charset"
	ReasonScheme      = "scheme"
	ReasonHost        = "host"
	ReasonCredentials = "credentials"
	ReasonNotAbsolute = "not_absolute"
	ReasonNotAPath    = "not_a_path"
)

// Input is a touch as a client sends it.
type Input struct {
	Source, Medium, Campaign, Term, Content string
	// Referrer is an absolute http or https URL; "" when none.
	Referrer string
	// LandingPath is a path on the platform's site; "" when none.
	LandingPath string
}

// Touch is one validated, normalized touch.
type Touch struct {
	// Source is where the user came from (required).
	Source string
	// Medium, Campaign, Term and Content are "" when absent.
	Medium, Campaign, Term, Content string
	// Referrer is scheme://host[:port]/path, "" when absent.
	Referrer string
	// LandingPath is a path, "" when absent.
	LandingPath string
	// At is when the touch was recorded.
	At time.Time
}

// Attribution is a user's record in one environment.
type Attribution struct {
	// ID is the record's id (IDPrefix).
	ID string
	// Scope is the tenant, workspace and environment of the principal
	// that first recorded it; the record is the user's in that
	// environment.
	Scope access.Scope
	// UserID is the user it is about.
	UserID string
	// First is the first touch, never changed; Last the latest.
	First, Last Touch
	// TouchCount counts touches, from 1, up to MaxTouchCount.
	TouchCount int64
	// Version counts writes, from 1.
	Version int64
	// CreatedAt is when the first touch was recorded; UpdatedAt the last.
	CreatedAt, UpdatedAt time.Time
}

// Store is what recording needs, in its unit of work. Errors are
// *fault.Error.
type Store interface {
	outbox.Writer
	// Now is the unit of work's time.
	Now() time.Time
	// NewID returns a new id with prefix.
	NewID(prefix string) string
	// AttributionGet reads userID's record in env; NOT_FOUND when none.
	AttributionGet(ctx context.Context, env access.Environment, userID string) (Attribution, error)
	// AttributionInsert stores a new record; CONFLICT when the user has
	// one in its environment.
	AttributionInsert(ctx context.Context, a Attribution) error
	// AttributionUpdate writes a's last touch, touch count, version and
	// update time when the stored version is a.Version-1; CONFLICT
	// otherwise. The first touch is never written again.
	AttributionUpdate(ctx context.Context, a Attribution) error
}

// Service records attribution. It holds no state and is safe for
// concurrent use.
type Service struct{}

// New returns a Service.
func New() *Service { return &Service{} }

// valueChar reports a character of the restricted set of source,
// medium, campaign, term and content.
func valueChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" ._-+~", r)
}

// value checks one campaign value: "" (absent) unless required.
func value(op, field, s string, required bool) (string, error) {
	s = strings.Trim(s, " ")
	if s == "" {
		if required {
			return "", fault.Invalid(op, field, field+" is required: where the user came from, or direct.")
		}
		return "", nil
	}
	if len(s) > MaxValue {
		return "", fault.Invalid(op, field, field+" is at most 100 characters.").With("reason", ReasonTooLong).With("limit", MaxValue)
	}
	if strings.IndexFunc(s, func(r rune) bool { return !valueChar(r) }) >= 0 {
		return "", fault.Invalid(op, field, field+" holds ASCII letters, digits, space and . _ - + ~ only.").With("reason", ReasonCharset)
	}
	return s, nil
}

// hostChar reports a character of a host name (ASCII; an international
// name is sent in its ASCII form).
func hostChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-'
}

// referrer normalizes an absolute http(s) URL to scheme://host[:port]/path.
func referrer(op, s string) (string, error) {
	const field = "referrer"
	if s == "" {
		return "", nil
	}
	if len(s) > MaxReferrerInput {
		return "", fault.Invalid(op, field, "referrer is at most 2048 characters.").With("reason", ReasonTooLong).With("limit", MaxReferrerInput)
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || !u.IsAbs() {
		return "", fault.Invalid(op, field, "referrer must be an absolute http or https URL.").With("reason", ReasonNotAbsolute)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fault.Invalid(op, field, "referrer must be an http or https URL.").With("reason", ReasonScheme)
	}
	if u.User != nil {
		return "", fault.Invalid(op, field, "referrer must not carry user information.").With("reason", ReasonCredentials)
	}
	host := strings.ToLower(u.Hostname())
	ip := net.ParseIP(host)
	if host == "" || (ip == nil && strings.IndexFunc(host, func(r rune) bool { return !hostChar(r) }) >= 0) {
		return "", fault.Invalid(op, field, "referrer must name a host (ASCII letters, digits, . and -, or an IP address).").With("reason", ReasonHost)
	}
	if ip != nil && strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + host + path
	if len(out) > MaxStored {
		return "", fault.Invalid(op, field, "referrer is at most 512 characters without its query.").With("reason", ReasonTooLong).With("limit", MaxStored)
	}
	return out, nil
}

// landingPath normalizes a path on the platform's site.
func landingPath(op, s string) (string, error) {
	const field = "landingPath"
	if s == "" {
		return "", nil
	}
	if len(s) > MaxReferrerInput {
		return "", fault.Invalid(op, field, "landingPath is at most 2048 characters.").With("reason", ReasonTooLong).With("limit", MaxReferrerInput)
	}
	u, err := url.Parse(s)
	if err != nil || !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "", fault.Invalid(op, field, "landingPath must be a path that starts with a single /.").With("reason", ReasonNotAPath)
	}
	out := u.EscapedPath()
	if len(out) > MaxStored {
		return "", fault.Invalid(op, field, "landingPath is at most 512 characters without its query.").With("reason", ReasonTooLong).With("limit", MaxStored)
	}
	return out, nil
}

// Normalize validates in and returns it as a touch (At unset), or
// INVALID_INPUT naming the first bad field (package doc, A touch).
func (in Input) Normalize() (Touch, error) {
	const op = "attribution.Input"
	var t Touch
	var err error
	if t.Source, err = value(op, "source", in.Source, true); err != nil {
		return Touch{}, err
	}
	for _, f := range []struct {
		name string
		in   string
		out  *string
	}{{"medium", in.Medium, &t.Medium}, {"campaign", in.Campaign, &t.Campaign}, {"term", in.Term, &t.Term}, {"content", in.Content, &t.Content}} {
		if *f.out, err = value(op, f.name, f.in, false); err != nil {
			return Touch{}, err
		}
	}
	if t.Referrer, err = referrer(op, in.Referrer); err != nil {
		return Touch{}, err
	}
	if t.LandingPath, err = landingPath(op, in.LandingPath); err != nil {
		return Touch{}, err
	}
	return t, nil
}

// Next returns a after touch t: the first touch kept, the last replaced,
// the count raised up to MaxTouchCount, the version raised.
func (a Attribution) Next(t Touch) Attribution {
	a.Last, a.Version, a.UpdatedAt = t, a.Version+1, t.At
	a.TouchCount = min(a.TouchCount+1, MaxTouchCount)
	return a
}

// Record records a touch of p's user in p's environment (package doc)
// and returns the record and whether this touch created it.
// UNAUTHENTICATED without a signed-in user; INVALID_INPUT for a bad
// field; CONFLICT when concurrent touches kept moving the record.
func (s *Service) Record(ctx context.Context, st Store, p *access.Principal, in Input) (Attribution, bool, error) {
	const op = "attribution.Record"
	if p == nil || p.UserID == "" || p.Kind == access.CredentialAPIKey {
		return Attribution{}, false, fault.E(op, fault.Unauthenticated, "Attribution is recorded by a signed-in user.")
	}
	t, err := in.Normalize()
	if err != nil {
		return Attribution{}, false, err
	}
	t.At = st.Now()
	for range maxRetries {
		a, created, err := s.write(ctx, st, p, t)
		if err == nil {
			if err := event(ctx, st, p, a, created); err != nil {
				return Attribution{}, false, fault.Wrap(op, err)
			}
			return a, created, nil
		}
		if !fault.Is(err, fault.Conflict) {
			return Attribution{}, false, fault.Wrap(op, err)
		}
		// A concurrent touch of the same user committed first: read it
		// again and apply this touch after it.
	}
	return Attribution{}, false, fault.E(op, fault.Conflict, "Concurrent touches kept changing the record; try again.")
}

// write applies touch t to p's user's record: a new record when there is
// none, else the next version of the stored one. CONFLICT when a
// concurrent touch wrote first.
func (s *Service) write(ctx context.Context, st Store, p *access.Principal, t Touch) (Attribution, bool, error) {
	cur, err := st.AttributionGet(ctx, p.Environment, p.UserID)
	if fault.Is(err, fault.NotFound) {
		a := Attribution{ID: st.NewID(IDPrefix), Scope: p.Scope(), UserID: p.UserID, First: t, Last: t, TouchCount: 1, Version: 1,
			CreatedAt: t.At, UpdatedAt: t.At}
		return a, true, st.AttributionInsert(ctx, a)
	}
	if err != nil {
		return Attribution{}, false, err
	}
	a := cur.Next(t)
	return a, false, st.AttributionUpdate(ctx, a)
}

// event writes a's attribution.recorded event in p's scope.
func event(ctx context.Context, st Store, p *access.Principal, a Attribution, first bool) error {
	payload, _ := json.Marshal(map[string]any{"id": a.ID, "userId": a.UserID, "first": first, "touchCount": a.TouchCount,
		"source": a.Last.Source, "medium": a.Last.Medium, "campaign": a.Last.Campaign}) // strings, a bool and an integer
	_, err := st.OutboxInsert(ctx, outbox.Event{TenantID: p.TenantID, WorkspaceID: p.WorkspaceID, Environment: string(p.Environment),
		Type: EventRecorded, SchemaVersion: 1, AggregateID: a.ID, AggregateVersion: a.Version, OccurredAt: a.UpdatedAt, Payload: payload})
	return err
}
