package anthropictest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/creatormusic/platform/ai/internal/simmodel"
)

// stream answers a streamed request with named events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, h http.Header, a answer, f Fault) {
	sse := simmodel.StartSSE(w, h)
	var sent strings.Builder
	rec := func(usage bool, stop string) { s.scripts.Record(a.record(true, usage, stop, sent.String(), f)) }
	send := func(name string, v any) bool {
		b, _ := json.Marshal(v)
		return sse.Event(name, string(b)) == nil
	}
	if f.Kind == FaultSlow && !s.wait(r.Context(), f.Delay) {
		rec(false, "")
		return
	}
	msg := map[string]any{"id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": a.startUsage()}
	if !send("message_start", map[string]any{"type": "message_start", "message": msg}) {
		rec(false, "")
		return
	}
	_ = send("ping", map[string]any{"type": "ping"})
	index := 0 // the next block's index
	if a.extra {
		_ = send("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": ""}})
		_ = send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "thinking_delta", "thinking": "Considering."}})
		_ = send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": "sig"}})
		_ = send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		_ = send("content_block_annotation", map[string]any{"type": "content_block_annotation", "index": index, "note": "unknown event"})
		index++
	}
	pieces := simmodel.Pieces(a.out, s.cfg.ChunkBytes)
	// midway applies a mid-stream fault before piece i (or before the end
	// when i is len(pieces)); false ends the answer.
	midway := func(i int) bool {
		return simmodel.Midway(r.Context(), s.host, f, i, len(pieces), func() { rec(false, "") }, map[FaultKind]func(){
			FaultMalformed: func() {
				_ = sse.Raw("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n")
			},
			FaultErrorEvent: func() {
				_ = send("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}})
			},
		})
	}
	open := -1 // the index of the open block, if any
	closeBlock := func() {
		if open >= 0 {
			_ = send("content_block_stop", map[string]any{"type": "content_block_stop", "index": open})
			open = -1
		}
	}
	for i, p := range pieces {
		if !midway(i) {
			return
		}
		if f.Kind == FaultFilter && i >= max(f.After, 1) {
			break
		}
		switch {
		case p.Call < 0:
			if open < 0 {
				open = index
				index++
				_ = send("content_block_start", map[string]any{"type": "content_block_start", "index": open,
					"content_block": map[string]any{"type": "text", "text": ""}})
			}
			sent.WriteString(p.Text)
			_ = send("content_block_delta", map[string]any{"type": "content_block_delta", "index": open,
				"delta": map[string]any{"type": "text_delta", "text": p.Text}})
		case p.First:
			closeBlock()
			open = index
			index++
			tc := a.out.ToolCalls[p.Call]
			_ = send("content_block_start", map[string]any{"type": "content_block_start", "index": open,
				"content_block": map[string]any{"type": "tool_use", "id": a.toolIDs[p.Call], "name": tc.Name, "input": map[string]any{}}})
		default:
			_ = send("content_block_delta", map[string]any{"type": "content_block_delta", "index": open,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p.Args}})
		}
		if i == len(pieces)/2 {
			_ = send("ping", map[string]any{"type": "ping"})
		}
	}
	if len(pieces) <= f.After && !midway(len(pieces)) {
		return
	}
	closeBlock()
	u := map[string]any{"output_tokens": a.output}
	if a.extra {
		u["server_tool_use"] = nil
	}
	_ = send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil}, "usage": u})
	rec(true, a.stop) // before message_stop: a client that read it sees the record
	_ = send("message_stop", map[string]any{"type": "message_stop"})
}
