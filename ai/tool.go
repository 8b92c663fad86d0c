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
	// RunTool runs one call the model proposed in operation operationID
	// for p, and returns the tool turn to send the model on the caller's
	// next turn (Role tool, ToolCallID the call's id, Content the result,
	// ToolError set for a refusal: an unknown tool, invalid arguments, no
	// permission, each exactly as the direct route refuses it) and the id
	// of the draft artifact a mutating tool made ("" otherwise). An error
	// is a failure of the runner itself: the operation still completes,
	// and the call is returned with an error result.
	RunTool(ctx context.Context, p *access.Principal, operationID string, call ToolCall) (Message, string, error)
}

// ToolResult is what running one tool call gave, as the answer returns
// it.
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
	// ArtifactStatus is the artifact's status when the call returned
	// (draft: it waits for the caller's confirmation); "" without an
	// artifact.
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
