package ai

import (
	"context"

	"github.com/creatormusic/platform/access"
)

// ToolRunner is the seam between the completion path and the platform's
// tools (package doc, Tool calls). The chat path offers the model the
// tools Tools declares for the caller, and hands every call the model
// proposes that names one of them to Run, with the caller's own principal:
// the runner validates the arguments against the tool's schema and
// authorizes the call exactly as the direct route would, re-checked at
// execution; a mutating tool answers a draft artifact for the caller to
// confirm instead of acting. A model or provider never widens what Run
// may do. Calls naming a tool the runner did not declare (a tool the
// caller declared in its request) are returned to the caller as they
// came.
//
// Implementations live outside this package; Completions runs without
// one, and then every tool call is returned as it came.
type ToolRunner interface {
	// Tools returns the tools p may offer the model, each with its name
	// and JSON Schema; none when p may use none.
	Tools(ctx context.Context, p *access.Principal) ([]Tool, error)
	// Run runs one call the model proposed in operation operationID for
	// p. An error is a failure of the runner itself (the operation still
	// completes, and the call is returned with ToolResult.Error set); a
	// refusal of the call (an unknown tool, invalid arguments, no
	// permission) is a ToolResult with IsError and a safe message.
	Run(ctx context.Context, p *access.Principal, operationID string, call ToolCall) (ToolResult, error)
}

// ToolResult is what running one tool call gave.
type ToolResult struct {
	// Content is the result the model may be shown on the caller's next
	// turn (a tool message answering the call): minimal, and free of
	// secrets.
	Content string
	// IsError marks a refusal or failure; Content then says why, safely.
	IsError bool
	// ArtifactID names the draft artifact a mutating tool produced; it
	// is applied only once the caller confirms it. "" when none.
	ArtifactID string
	// ArtifactStatus is the artifact's status (draft, approved, applied,
	// rejected); "" without an artifact.
	ArtifactStatus string
}

// ToolOutcome is one tool call of an answer with what the runner made of
// it: nil Result when no runner declared the tool (the call is the
// caller's to run).
type ToolOutcome struct {
	// Call is the call as the model proposed it.
	Call ToolCall
	// Result is the runner's result; nil when the runner was not asked.
	Result *ToolResult
}
