package realtime

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/creatormusic/platform/fault"
	"github.com/creatormusic/platform/outbox"
)

// Kind is the kind of a channel: what the name after its colon is.
type Kind string

const (
	// KindOperation carries one operation's events: a music generation
	// (op_), a sound operation (snd_) or an AI operation (aiop_).
	KindOperation Kind = "operation"
	// KindIntent carries one transaction intent's events (txi_).
	KindIntent Kind = "intent"
	// KindOrder carries one marketplace order's events (ord_), to its
	// buyer and its seller.
	KindOrder Kind = "order"
	// KindWorkspace carries every event of the subscriber's workspace in
	// its environment. Its name has no colon: "workspace".
	KindWorkspace Kind = "workspace"
)

// Kinds lists the channel kinds in the order the documentation shows them.
func Kinds() []Kind { return []Kind{KindOperation, KindIntent, KindOrder, KindWorkspace} }

// Channel is a stream of events a client subscribes to by name:
// "operation:<id>", "intent:<id>", "order:<id>" or "workspace".
type Channel struct {
	// Kind is the channel's kind.
	Kind Kind
	// ID is the record the channel follows; "" for the workspace channel.
	ID string
}

// maxChannelLen bounds a channel name.
const maxChannelLen = 128

// ParseChannel reads a channel name. A name of no known kind, a record
// channel without an id, or an id that is not a plain identifier is
// INVALID_INPUT naming the field channel.
func ParseChannel(name string) (Channel, error) {
	const op = "realtime.ParseChannel"
	bad := func(msg string) error { return fault.Invalid(op, "channel", msg).With("channel", clip(name)) }
	if name == string(KindWorkspace) {
		return Channel{Kind: KindWorkspace}, nil
	}
	kind, id, ok := strings.Cut(name, ":")
	if !ok {
		return Channel{}, bad("A channel is operation:<id>, intent:<id>, order:<id> or workspace.")
	}
	switch Kind(kind) {
	case KindOperation, KindIntent, KindOrder:
	default:
		return Channel{}, bad("A channel is operation:<id>, intent:<id>, order:<id> or workspace.")
	}
	if id == "" || len(name) > maxChannelLen || !plainID(id) {
		return Channel{}, bad("A channel's id is the record's id, such as op_01jd0000000000000000000000.")
	}
	return Channel{Kind: Kind(kind), ID: id}, nil
}

// plainID reports whether id holds only lower-case letters, digits and
// underscores, as the platform's record ids do.
func plainID(id string) bool {
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// clip bounds a value echoed in an error's details.
func clip(s string) string {
	if len(s) > maxChannelLen {
		return s[:maxChannelLen]
	}
	return s
}

// String returns the channel's name.
func (c Channel) String() string {
	if c.Kind == KindWorkspace {
		return string(KindWorkspace)
	}
	return string(c.Kind) + ":" + c.ID
}

// Client message types.
const (
	// TypeSubscribe asks for a channel's events, from after when set.
	TypeSubscribe = "subscribe"
	// TypeUnsubscribe ends a subscription.
	TypeUnsubscribe = "unsubscribe"
	// TypePing asks for a pong (an application-level liveness check for
	// clients that cannot send WebSocket pings, such as browsers).
	TypePing = "ping"
)

// Server message types.
const (
	// TypeSubscribed confirms a subscription; its events follow.
	TypeSubscribed = "subscribed"
	// TypeUnsubscribed confirms an unsubscribe.
	TypeUnsubscribed = "unsubscribed"
	// TypeEvent carries one outbox event on a channel.
	TypeEvent = "event"
	// TypeError reports a refused message or, with a channel, a
	// subscription that was refused or has ended.
	TypeError = "error"
	// TypePong answers a ping.
	TypePong = "pong"
)

// ClientMessage is a message a client sends: one JSON object per text
// frame.
type ClientMessage struct {
	// Type is subscribe, unsubscribe or ping.
	Type string `json:"type"`
	// Channel names the channel of a subscribe or unsubscribe.
	Channel string `json:"channel,omitempty"`
	// After, on a subscribe, is the id of the last event the client saw
	// on the channel: the events after it are replayed, then live ones
	// follow, with none missed and none twice.
	After string `json:"after,omitempty"`
}

// DecodeClientMessage reads one client message strictly: a body that is not
// one JSON object of the documented fields, or a type that is not a client
// message's, is INVALID_INPUT.
func DecodeClientMessage(b []byte) (ClientMessage, error) {
	const op = "realtime.DecodeClientMessage"
	var m ClientMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return ClientMessage{}, fault.Invalid(op, "body", "A message is one JSON object: type, and channel and after where they apply.")
	}
	if dec.More() {
		return ClientMessage{}, fault.Invalid(op, "body", "A message is one JSON object.")
	}
	switch m.Type {
	case TypeSubscribe, TypeUnsubscribe:
		if m.Channel == "" {
			return ClientMessage{}, fault.Invalid(op, "channel", "channel is required.")
		}
		if m.Type == TypeUnsubscribe && m.After != "" {
			return ClientMessage{}, fault.Invalid(op, "after", "after belongs to subscribe.")
		}
	case TypePing:
		if m.Channel != "" || m.After != "" {
			return ClientMessage{}, fault.Invalid(op, "type", "A ping carries nothing but its type.")
		}
	default:
		return ClientMessage{}, fault.Invalid(op, "type", "type is subscribe, unsubscribe or ping.").With("type", clip(m.Type))
	}
	if len(m.After) > maxChannelLen || m.After != "" && !plainID(m.After) {
		return ClientMessage{}, fault.Invalid(op, "after", "after is the id of an event the stream delivered.")
	}
	return m, nil
}

// ErrorBody is an error as the HTTP error envelope carries it.
type ErrorBody struct {
	// Code is the platform's stable error code.
	Code fault.Code `json:"code"`
	// Message is a client-safe sentence.
	Message string `json:"message"`
	// Details holds structured context (the field, the limit), or null.
	Details map[string]any `json:"details"`
}

// ServerMessage is a message the server sends: one JSON object per text
// frame.
type ServerMessage struct {
	// Type is subscribed, unsubscribed, event, error or pong.
	Type string `json:"type"`
	// Channel is the channel the message is about; absent on pong and on
	// an error about a message that named none.
	Channel string `json:"channel,omitempty"`
	// ID is an event message's outbox event id: send it as after to resume.
	ID string `json:"id,omitempty"`
	// Event is an event message's outbox event.
	Event *outbox.Event `json:"event,omitempty"`
	// Error is an error message's error.
	Error *ErrorBody `json:"error,omitempty"`
}

// Encode returns m as JSON.
func (m ServerMessage) Encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		// Every field is a plain value; an outbox payload is stored JSON.
		b, _ = json.Marshal(ServerMessage{Type: TypeError, Channel: m.Channel,
			Error: &ErrorBody{Code: fault.Internal, Message: fault.Internal.DefaultMessage()}})
	}
	return b
}

// ErrorMessage returns the error message of err about channel ("" for
// none), with the code, message and details a client may see.
func ErrorMessage(channel string, err error) ServerMessage {
	code, msg, details := fault.Public(err)
	if len(details) == 0 {
		details = nil
	}
	return ServerMessage{Type: TypeError, Channel: channel, Error: &ErrorBody{Code: code, Message: msg, Details: details}}
}

// Close codes the server ends a connection with, beside the protocol's
// own (1000 normal closure, 1001 going away when the host stops, 1003
// for a binary frame, 1009 for a message over the read limit, 1011 for an
// internal error). The close reason is the error code, when there is one.
const (
	// CloseUnauthenticated: the connection's credential no longer
	// authenticates (an API key revoked, deleted or rotated out, a session
	// signed out or expired, an access token expired). Reconnect with a
	// valid credential and resume with after.
	CloseUnauthenticated = 4001
	// CloseAccessDenied: the credential still authenticates but no longer
	// holds the workspace (its member was removed, or lost every role).
	CloseAccessDenied = 4003
	// CloseSlowConsumer: the client read too slowly and the connection's
	// queue filled. Reconnect and resume with after.
	CloseSlowConsumer = 4008
)

// CloseCode is one documented close code.
type CloseCode struct {
	// Code is the close code.
	Code int
	// Meaning says when the server sends it.
	Meaning string
}

// CloseCodes lists every close code the server sends, for the
// documentation.
func CloseCodes() []CloseCode {
	return []CloseCode{
		{1000, "normal closure: the client closed, or the server answered the client's close"},
		{1001, "going away: the host is stopping; reconnect (to any host) and resume with after"},
		{1003, "unsupported data: the client sent a binary frame; messages are JSON text frames"},
		{1009, "message too big: a client message over the read limit"},
		{1011, "internal error"},
		{CloseUnauthenticated, "the credential no longer authenticates (API key revoked, deleted or rotated out; session signed out or " +
			"expired; access token expired); the reason is UNAUTHENTICATED or SESSION_EXPIRED"},
		{CloseAccessDenied, "the credential no longer holds the workspace (member removed, every role lost); the reason is the access error's code"},
		{CloseSlowConsumer, "slow consumer: the connection's queue of unsent messages filled; reconnect and resume with after"},
	}
}
