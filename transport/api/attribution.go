package api

import (
	"context"
	"net/http"
	"time"

	"github.com/creatormusic/platform/attribution"
	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/transport"
)

// RecordAttributionRequest is POST /api/v1/attribution: one touch of the
// signed-in user.
type RecordAttributionRequest struct {
	// Source is where the user came from (utm_source, a referring site's name, or direct): 1 to 100 characters after trimming spaces, of ASCII letters, digits, space and . _ - + ~.
	Source string `json:"source" example:"newsletter"`
	// Medium is the channel (utm_medium), with source's bounds and characters; absent or empty when none.
	Medium string `json:"medium,omitempty" example:"email"`
	// Campaign is the campaign (utm_campaign), with source's bounds and characters; absent or empty when none.
	Campaign string `json:"campaign,omitempty" example:"spring_launch"`
	// Term is the paid search term (utm_term), with source's bounds and characters; absent or empty when none.
	Term string `json:"term,omitempty" example:"ai music"`
	// Content tells apart links of one campaign (utm_content), with source's bounds and characters; absent or empty when none.
	Content string `json:"content,omitempty" example:"hero_button"`
	// Referrer is the page the user came from: an absolute http or https URL with a host and no user information, at most 2048 characters; stored without its query and fragment, at most 512 characters after that.
	Referrer string `json:"referrer,omitempty" example:"https://news.example.com/issues/42"`
	// LandingPath is the platform page the user landed on: a path starting with a single /, stored without its query and fragment, at most 512 characters.
	LandingPath string `json:"landingPath,omitempty" example:"/pricing"`
}

// AttributionTouchView is one touch as stored.
type AttributionTouchView struct {
	// Source is where the user came from.
	Source string `json:"source" example:"newsletter"`
	// Medium is the channel; null when none was sent.
	Medium *string `json:"medium" example:"email"`
	// Campaign is the campaign; null when none was sent.
	Campaign *string `json:"campaign" example:"spring_launch"`
	// Term is the paid search term; null when none was sent.
	Term *string `json:"term" example:"ai music"`
	// Content tells apart links of one campaign; null when none was sent.
	Content *string `json:"content" example:"hero_button"`
	// Referrer is the referring page as scheme://host[:port]/path, scheme and host lower-cased, without query or fragment; null when none was sent.
	Referrer *string `json:"referrer" example:"https://news.example.com/issues/42"`
	// LandingPath is the landing path without query or fragment; null when none was sent.
	LandingPath *string `json:"landingPath" example:"/pricing"`
	// RecordedAt is when the touch was recorded.
	RecordedAt time.Time `json:"recordedAt"`
}

// AttributionView is a user's attribution record in one environment.
type AttributionView struct {
	// ID is the record's id.
	ID string `json:"id" example:"atr_01jd0000000000000000000000"`
	// Object is always "attribution".
	Object string `json:"object" example:"attribution"`
	// UserID is the user the record is about: the caller.
	UserID string `json:"userId" example:"usr_01jd0000000000000000000000"`
	// Environment is the environment the record is of: the caller's.
	Environment string `json:"environment" example:"live" enum:"test,live"`
	// FirstTouch is the first touch recorded, kept as it was forever.
	FirstTouch AttributionTouchView `json:"firstTouch"`
	// LastTouch is the latest touch, replaced by each new one (the first touch too, while there has been one alone).
	LastTouch AttributionTouchView `json:"lastTouch"`
	// TouchCount counts the touches recorded, up to touchCountLimit, where it stays.
	TouchCount int64 `json:"touchCount" example:"3" minimum:"1" maximum:"1000000"`
	// TouchCountLimit is where touchCount stops: a count at the limit means at least that many touches.
	TouchCountLimit int64 `json:"touchCountLimit" example:"1000000"`
	// Version counts the record's writes, from 1.
	Version int64 `json:"version" example:"3"`
}

func touchView(t attribution.Touch) AttributionTouchView {
	return AttributionTouchView{Source: t.Source, Medium: optional(t.Medium), Campaign: optional(t.Campaign), Term: optional(t.Term),
		Content: optional(t.Content), Referrer: optional(t.Referrer), LandingPath: optional(t.LandingPath), RecordedAt: t.At}
}

func attributionView(a attribution.Attribution) AttributionView {
	return AttributionView{ID: a.ID, Object: "attribution", UserID: a.UserID, Environment: string(a.Scope.Environment),
		FirstTouch: touchView(a.First), LastTouch: touchView(a.Last), TouchCount: a.TouchCount, TouchCountLimit: attribution.MaxTouchCount,
		Version: a.Version}
}

// attributionBodyLimit bounds the request body: the fields' bounds with
// room for JSON.
const attributionBodyLimit = 8 << 10

// attributionRoutes record attribution (spec, Architecture and
// operations: POST /api/v1/attribution).
func attributionRoutes(svc *attribution.Service) []Route {
	if svc == nil {
		return nil
	}
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := AttributionTouchView{Source: "newsletter", Medium: new("email"), Campaign: new("spring_launch"),
		Referrer: new("https://news.example.com/issues/42"), LandingPath: new("/pricing"), RecordedAt: t}
	last := AttributionTouchView{Source: "direct", RecordedAt: t.Add(48 * time.Hour)}
	return []Route{
		{Method: http.MethodPost, Pattern: "/api/v1/attribution", OperationID: "recordAttribution", Tag: transport.TagArchitecture,
			Summary: "Record where you came from", Status: http.StatusCreated, ExistingStatus: http.StatusOK,
			ExistingText: "OK: the caller had a record in this environment; the touch replaced its last touch.",
			Description: "Records one touch of the signed-in user in the session's environment: source, medium, campaign, term, " +
				"content (the campaign parameters a client read, or source direct), referrer and landingPath. The platform keeps " +
				"one record per user and environment, never a log: the first touch, kept as it was forever, the last touch, " +
				"replaced by each new one, and touchCount, which stops at touchCountLimit. The first touch creates the record " +
				"(201); each later one answers 200. source is required; source, medium, campaign, term and content are 1 to 100 " +
				"characters after trimming spaces, of ASCII letters, digits, space and . _ - + ~ (an empty optional one is " +
				"absent). referrer is an absolute http or https URL with a host (ASCII, or an IP address), at most 2048 " +
				"characters, stored without its query and fragment as scheme://host[:port]/path, at most 512 characters; a URL " +
				"with user information is refused, never stored stripped. landingPath is a path starting with a single /, stored " +
				"without query and fragment, at most 512 characters. Each refusal is 400 INVALID_INPUT with details.field and " +
				"details.reason (too_long, charset, scheme, host, credentials, not_absolute, not_a_path); an unknown field is 400 " +
				"INVALID_INPUT too. The body names no user: a user records touches about themselves only, with or without a " +
				"workspace; API keys are refused (403 ACCESS_DENIED, details.credential api_key): a key acts for an integration, " +
				"not for the person whose visit this is. Idempotency-Key is optional: the same key and body answer the first " +
				"answer again and count no second touch; without a key each request is a touch. Writes the outbox event " +
				"attribution.recorded (user, first or not, touch count, source, medium, campaign; never the referrer or the " +
				"landing path) in the same transaction. Concurrent touches of one user are applied one after the other; one " +
				"that keeps losing to others is 409 CONFLICT and writes nothing.",
			Auth: transport.AuthSession, SignedIn: true, Private: true, Idempotency: transport.IdempotencyOptional,
			BodyLimit: attributionBodyLimit,
			Request: RecordAttributionRequest{Source: "newsletter", Medium: "email", Campaign: "spring_launch",
				Referrer: "https://news.example.com/issues/42?utm_source=newsletter", LandingPath: "/pricing"},
			Response: AttributionView{ID: "atr_01jd0000000000000000000000", Object: "attribution", UserID: "usr_01jd0000000000000000000000",
				Environment: "live", FirstTouch: first, LastTouch: last, TouchCount: 2, TouchCountLimit: attribution.MaxTouchCount, Version: 2},
			Errors: []string{string(fault.Conflict)},
			Handle: func(ctx context.Context, c *Call) (any, error) {
				var in RecordAttributionRequest
				if err := c.Decode(&in); err != nil {
					return nil, err
				}
				a, created, err := svc.Record(ctx, c.Tx, c.Principal, attribution.Input{Source: in.Source, Medium: in.Medium,
					Campaign: in.Campaign, Term: in.Term, Content: in.Content, Referrer: in.Referrer, LandingPath: in.LandingPath})
				if err != nil {
					return nil, err
				}
				if !created {
					c.SetStatus(http.StatusOK)
				}
				return attributionView(a), nil
			}},
	}
}
