package openaitest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/creatormusic/platform/ai/internal/simmodel"
)

// stream answers a streamed request.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, h http.Header, req chatReq, a answer, f Fault) {
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	sse := simmodel.StartSSE(w, h)
	var sent strings.Builder
	rec := func(usage bool, finish string) {
		s.scripts.Record(a.record(true, usage, finish, sent.String(), f))
	}
	_ = sse.Comment("keep-alive")
	if a.extra {
		_ = sse.Comment("OPENROUTER PROCESSING")
	}
	if f.Kind == FaultSlow && !s.wait(r.Context(), f.Delay) {
		rec(false, "")
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": a.created, "model": a.model,
			"system_fingerprint": "fp_sim",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		if includeUsage {
			c["usage"] = nil
		}
		if a.extra {
			c["system_fingerprint"] = "fp_ollama"
			c["obfuscation"] = "x7Qz"
			c["provider"] = "sim"
		}
		return c
	}
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		return sse.Event("", string(b)) == nil
	}
	role := map[string]any{"role": "assistant", "content": ""}
	if a.extra {
		role["reasoning"] = "Thinking."
	}
	if !send(chunk(role, nil)) {
		rec(false, "")
		return
	}
	pieces := simmodel.Pieces(a.out, s.cfg.ChunkBytes)
	// midway applies a mid-stream fault before piece i (or before the
	// finish when i is len(pieces)); false ends the answer.
	midway := func(i int) bool {
		return simmodel.Midway(r.Context(), s.host, f, i, len(pieces), func() { rec(false, "") }, map[FaultKind]func(){
			FaultMalformed: func() { _ = sse.Raw("data: {\"id\":\"" + a.id + "\",\"choices\":[\n\n") },
			FaultErrorIn200: func() {
				_ = sse.Event("", `{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"upstream overloaded"}}}`)
			},
		})
	}
	for i, p := range pieces {
		if !midway(i) {
			return
		}
		if f.Kind == FaultFilter && i >= max(f.After, 1) {
			break
		}
		var delta map[string]any
		switch {
		case p.Call < 0:
			delta = map[string]any{"content": p.Text}
			sent.WriteString(p.Text)
		case p.First:
			tc := a.out.ToolCalls[p.Call]
			delta = map[string]any{"tool_calls": []any{map[string]any{"index": p.Call, "id": a.callIDs[p.Call], "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": ""}}}}
		default:
			delta = map[string]any{"tool_calls": []any{map[string]any{"index": p.Call, "function": map[string]any{"arguments": p.Args}}}}
		}
		if !send(chunk(delta, nil)) {
			rec(false, "")
			return
		}
		if i == len(pieces)/2 {
			_ = sse.Comment("keep-alive")
		}
	}
	if len(pieces) <= f.After && !midway(len(pieces)) {
		return
	}
	if !send(chunk(map[string]any{}, a.finish)) {
		rec(false, "")
		return
	}
	if includeUsage {
		c := map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": a.created, "model": a.model,
			"system_fingerprint": "fp_sim", "choices": []any{}, "usage": a.usage()}
		if !send(c) {
			rec(false, a.finish)
			return
		}
	}
	rec(includeUsage, a.finish) // before [DONE]: a client that read it sees the record
	if f.Kind != FaultNoDone {
		_ = sse.Raw("data: [DONE]\n\n")
	}
}
