// Package generation owns music generation: durable operations that survive
// retries, crashes and duplicate callbacks, provider routing and failover,
// customer credentials, credit reservation and settlement, and provider cost
// reconciliation (spec, "Generation operation" and "Music generation and
// operations").
//
// This file declares the port the provider adapters implement
// (generation/providera, generation/providerb). Each adapter owns its wire
// protocol, its error dialect and its callback verification; the domain
// sees only normalized task states.
//
// A callback is trusted only as far as its signature reaches
// (MusicProvider.CallbackSignsBody). Provider B signs timestamp and raw
// body, so a verified B callback is the provider's word. Provider A signs
// only task id and timestamp: anyone holding one captured callback could
// post any body (a "complete" naming their own audio URLs) within the skew
// window, so a verified A callback is a notification only, and the task's
// state, tracks and URLs come from A's authenticated record query.
package generation

import (
	"context"
	"time"
)

// ProviderID names a music provider route.
type ProviderID string

// The provider routes of the spec.
const (
	ProviderA ProviderID = "MUSIC_PROVIDER_A"
	ProviderB ProviderID = "MUSIC_PROVIDER_B"
)

// Stage is a normalized generation stage (spec: text, first,
// provider_complete, then the platform's own ingesting and finished).
type Stage string

// Provider stages an adapter reports.
const (
	StageQueued           Stage = "queued"
	StageText             Stage = "text"
	StageFirst            Stage = "first"
	StageProviderComplete Stage = "provider_complete"
	StageFailed           Stage = "failed"
)

// Credential is what an adapter authenticates with: a platform-managed
// secret or a customer's BYOK key, unsealed only for the call.
type Credential struct {
	// APIKey is the provider API key.
	APIKey string
	// CallbackKey verifies signed callbacks (A: the account's webhook HMAC
	// key; B: the webhook_secret sent with each create).
	CallbackKey string
}

// CreateRequest asks a provider to start one generation (two tracks).
type CreateRequest struct {
	Prompt       string
	Instrumental bool
	// Model is the platform's model id; the adapter maps it to its own.
	Model string
	// Title and Style enable custom mode where the provider has one.
	Title string
	Style string
	// CallbackURL carries an unguessable attempt token, so a create whose
	// answer was lost can still be matched by its callback.
	CallbackURL string
}

// Created is a provider's answer to a create.
type Created struct {
	TaskID string
}

// Track is one generated track as a provider reports it.
type Track struct {
	ProviderTrackID string
	// AudioURL is the final MP3; StreamURL a stream link that is never
	// ingested as the final asset (F8). Either may be empty or a placeholder
	// before the track is ready (F10).
	AudioURL   string
	StreamURL  string
	ImageURL   string
	Title      string
	Tags       string
	Model      string
	DurationMs int64
}

// TaskState is a normalized view of a provider task, from a poll or a
// callback.
type TaskState struct {
	TaskID string
	Stage  Stage
	// Tracks are the tracks known at this stage.
	Tracks []Track
	// FailureCode is the platform code of a failed task
	// (CONTENT_POLICY_REJECTED, GENERATION_FAILED, ...); FailureMessage the
	// provider's message, kept for logs only.
	FailureCode    string
	FailureMessage string
	// Refunded reports that the provider refunded the task (A: code 531).
	Refunded bool
	// CreditsConsumed is the provider's reported charge when its dialect
	// reports one (kie market records); nil when unknown.
	CreditsConsumed *int64
}

// Callback is a received provider callback: its headers and raw body.
type Callback struct {
	Header map[string][]string
	Body   []byte
}

// Balance is a provider account's credit balance, never shown as platform
// credits.
type Balance struct {
	Credits      int64
	ExtraCredits int64
}

// MusicProvider is the port each provider adapter implements.
//
// Errors: RATE_LIMITED when the provider throttled the request (the task
// never entered its queue: retryable); PROVIDER_CREDITS_EXHAUSTED when the
// account has no credits (never retried on the same credential);
// PROVIDER_CREDENTIAL_INVALID for a rejected key; INVALID_INPUT or
// CONTENT_POLICY_REJECTED for a request the provider refuses;
// PROVIDER_UNAVAILABLE for 5xx, maintenance or an unreachable provider;
// PROVIDER_TIMEOUT when no answer came in time — on Create this is
// ambiguous (details.ambiguous = true): the task may exist, and the caller
// must wait for a callback or poll instead of re-sending.
type MusicProvider interface {
	// ID is the provider route the adapter serves.
	ID() ProviderID
	// Create starts a generation.
	Create(ctx context.Context, c Credential, r CreateRequest) (Created, error)
	// Query polls a task (recovery only; clients never poll providers).
	// An unknown task is NOT_FOUND.
	Query(ctx context.Context, c Credential, taskID string) (TaskState, error)
	// Balance reads the account's credits (validates a BYOK key).
	Balance(ctx context.Context, c Credential) (Balance, error)
	// VerifyCallback checks a callback's signature as the provider signs it,
	// within the skew window around now, in constant time; CALLBACK_FAILED
	// otherwise.
	VerifyCallback(c Credential, cb Callback, now time.Time) error
	// ParseCallback normalizes a verified callback leniently (F11: task_id
	// or taskId, nested or flat).
	ParseCallback(cb Callback) (TaskState, error)
	// CallbackSignsBody reports whether VerifyCallback authenticates the
	// callback's whole body. When false, only the task id is signed: the
	// caller takes the parsed callback as a notification that the task
	// moved, confirms its state through Query, and never uses the body's
	// stage, tracks, URLs or failure.
	CallbackSignsBody() bool
	// SupportsDuration reports whether the model takes a duration (neither
	// reference provider does).
	SupportsDuration(model string) bool
}
