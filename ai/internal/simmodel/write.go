package simmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// WriteBody answers status with the JSON body b and the extra headers h.
func WriteBody(w http.ResponseWriter, status int, h http.Header, b []byte) {
	for k, v := range h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteJSON answers 200 with v and the extra headers h.
func WriteJSON(w http.ResponseWriter, h http.Header, v any) {
	b, _ := json.Marshal(v)
	WriteBody(w, http.StatusOK, h, b)
}

// DropJSON answers 200 with v's full Content-Length and the extra
// headers h, sends half of the body and breaks the connection.
func DropJSON(w http.ResponseWriter, h http.Header, v any) {
	b, _ := json.Marshal(v)
	for k, vals := range h {
		w.Header()[k] = vals
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b[:len(b)/2])
	_ = http.NewResponseController(w).Flush()
	Abort()
}

// Piece is one stream delta of an answer: text, or a tool call's first
// piece (which opens it) or a piece of its arguments.
type Piece struct {
	// Text is a piece of the answer's text.
	Text string
	// Call is the tool call's index; -1 for text.
	Call int
	// First marks a tool call's first piece.
	First bool
	// Args is a piece of the tool call's arguments.
	Args string
}

// Pieces cuts out's text, then each tool call's arguments, into pieces of
// at most n bytes (see Split); each tool call starts with its First piece.
func Pieces(out Output, n int) []Piece {
	var pieces []Piece
	for _, p := range Split(out.Text, n) {
		pieces = append(pieces, Piece{Text: p, Call: -1})
	}
	for i, tc := range out.ToolCalls {
		pieces = append(pieces, Piece{Call: i, First: true})
		for _, p := range Split(tc.Arguments, n) {
			pieces = append(pieces, Piece{Call: i, Args: p})
		}
	}
	return pieces
}

// The fault kinds Midway applies itself; a simulator's own kinds of these
// names take these values.
const (
	// KindStall pauses a stream.
	KindStall = "stall"
	// KindDrop ends a stream early.
	KindDrop = "drop"
)

// Midway applies f to a stream of n pieces before piece i (or before its
// end when i is n), where f strikes: at f.After, or at the end when there
// are fewer pieces. There a stall waits f.Delay and a drop ends the answer
// (Abort breaks the connection); a kind in cut ends it with what cut
// writes (the wire's malformed and error payloads). ended records an
// answer that ends here. Midway returns false when the answer ends.
func Midway[K ~string](ctx context.Context, h *Host, f Fault[K], i, n int, ended func(), cut map[K]func()) bool {
	if i != min(f.After, n) {
		return true
	}
	switch f.Kind {
	case KindStall:
		if !h.Wait(ctx, f.Delay) {
			ended()
			return false
		}
	case KindDrop:
		ended()
		if f.Abort {
			Abort()
		}
		return false
	}
	if write, ok := cut[f.Kind]; ok {
		ended()
		write()
		return false
	}
	return true
}
