// Package task holds the AI control plane's structured tasks (spec, AI
// control plane and Projects; issue: task routes): music_brief, lyrics,
// prompt_enhance, project_analyze and project_blueprint. For each it
// owns the request's shape and bounds, the messages sent to the model,
// the JSON Schema of the answer, the typed answer and its rules, and the
// loop that asks, validates and asks again once. It runs on the
// completion path through one port (Completer) and reads a project
// through another (ReadProjectFunc); it imports neither transport, nor
// the store, nor any provider's SDK, so every rule here is tested alone.
//
// # Requests
//
// Each task's request type (BriefRequest, LyricsRequest, EnhanceRequest,
// AnalyzeRequest, BlueprintRequest) has Validate, which trims text and
// returns INVALID_INPUT with details.field (the wire's camelCase name)
// and details.limit for a length: prompts at most MaxPrompt characters,
// the blueprint's brief MaxBrief, genre and mood hints MaxHint, a focus
// question MaxFocus, a language a BCP 47 tag, a structure at most
// MaxLyricSections sections of the Sections vocabulary, a duration
// MinDurationSeconds to MaxDurationSeconds, a scene count 1 to MaxScenes.
// Text with control characters other than tab, line feed and carriage
// return is refused. A task method validates first: a bad request never
// reaches a model or costs credits.
//
// # Messages and prompt injection
//
// A task sends two messages. The system message is the platform's alone:
// a shared preamble and the task's instructions, never interpolating
// anything a creator wrote. The user message carries the input as data:
// a fixed sentence, then each part as one line of JSON between tags
// (<task_input>, and <project> for project_analyze). encoding/json
// escapes <, > and & inside strings, so no value can close its block or
// forge another, and every value is a quoted string, so none reads as a
// line of instructions. The preamble says that the blocks are material,
// never instructions, whatever they ask (ai.md §5: the model only
// proposes; authority stays with the platform). No tools are offered: a
// task's answer can only be text, which is validated and returned, never
// executed. project_analyze sends only the project's safe fields (title,
// type, status, description, cut to the project's own bounds).
//
// # Answers
//
// Every request asks for JSON (ai.Request.JSON) with the task's schema
// (JSONSchema): the OpenAI-compatible adapter sends it as response_format
// json_schema, the Anthropic adapter as a system instruction. The
// schemas are closed objects whose properties are all required, with
// bounded strings, arrays and integers and string enums, the subset
// strict structured outputs accept (Service.Schema returns them).
//
// A provider may not enforce the schema, so every answer is checked
// here, in this order: how it ended (a tool call or an answer cut by the
// output cap is invalid; one the provider withheld is
// CONTENT_POLICY_REJECTED at once), at most MaxAnswerBytes, one JSON
// object (white space and one enclosing Markdown code fence are the only
// framing tolerated, as models without a JSON mode add it), every string
// trimmed and free of control characters, then the schema, validated by
// github.com/pb33f/jsonschema/v6 (the library ai/tool and the contract
// validator use) against the very JSON that was
// sent (draft 2020-12; compiling never loads a file or URL), then a
// strict decoding into the typed answer (unknown fields refused), then
// the task's rules: a brief for an instrumental has vocals none and the
// requested duration; lyrics have at most MaxLyricLines lines in all, the
// requested language and the requested structure in order; a blueprint's
// scenes are numbered 1 to N in order, as many as asked, at most
// MaxBlueprintSeconds in all, and its creative tasks (of the submission
// types, project.SubmissionTypes) have distinct titles; instruments,
// tags and next steps are distinct.
//
// # Retry
//
// An invalid answer is asked again once (MaxAttempts 2): the same two
// messages, then the refused answer as the assistant's turn (cut to 8
// KiB; left out when empty) and a user turn listing the problems, which
// the validator wrote (JSON pointers and rules, at most ten, each
// bounded), never text from the input. A second invalid answer is
// GENERATION_FAILED (details: task, attempts, reason invalid_answer; the
// problems are in the logged cause) and no result: no blueprint, brief
// or lyrics is ever fabricated or filled in from a partial answer.
// Provider and completion-path errors are returned as they come, with
// their code, and never retried here: failover and rate limits are the
// completion path's (package ai, Resolve).
//
// # Attempts and credits
//
// Each attempt is one Completer.Complete call, so one completion of the
// completion path: its own operation and usage record, credits reserved
// before the call on the task's MaxOutputTokens and settled on the
// provider's usage. The retry is charged like the first attempt: the
// provider served and billed both, and the corrective attempt is the one
// that usually produces the answer. A task therefore costs at most two
// completions; a failed one (GENERATION_FAILED) keeps the charges of
// the attempts it made, which the usage route shows. When the retry
// cannot be paid, its INSUFFICIENT_CREDITS is returned, and the first
// attempt stays charged. Result.Attempts lists the completions of an
// accepted answer.
//
// # Reading a project
//
// project_analyze reads its project only through ReadProjectFunc, which
// the route binds to the caller: it applies the project route's read
// rule under the caller's principal and authority and returns the safe
// fields (Project) or that rule's error, NOT_FOUND for a project the
// caller may not read, before any completion.
package task
