// Package wire holds what the model-provider adapters (ai/openai,
// ai/anthropic) share below their own dialects: the guarded HTTP client and
// its deadlines (a total deadline per call and an idle deadline between
// stream events) with their defaults, the calls every adapter makes
// (Complete, Stream, a model list), the status table a refusal falls back
// to, a bounded server-sent-events reader, the assembly of a
// streamed answer into an ai.Response, provider retry hints, and the
// redaction that keeps the key and the base URL out of every error.
//
// Each adapter supplies its dialect: how a non-2xx answer maps to an
// ai.Failure, how its JSON answer decodes, and how each SSE message turns
// into events (Decoder).
package wire
