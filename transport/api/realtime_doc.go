package api

import (
	"fmt"
	"strings"

	"github.com/creatormusic/platform/realtime"
	"github.com/creatormusic/platform/transport"
)

// Description returns the Realtime section of the OpenAPI document's
// info.description (openapi.Info.Realtime): the endpoint, its
// authentication, channels, message shapes, resume, bounds, re-checks and
// close codes, with this host's settings.
func (e *Realtime) Description() string {
	hc := e.cfg.Hub.Config()
	var b strings.Builder
	b.WriteString("## Realtime\n\n`GET " + RealtimePattern + "` upgrades to a WebSocket (RFC 6455) over which a client follows " +
		"outbox events live: the events the platform records (the Events table below) as they commit, on every host. It is " +
		"not an operation of this document, since it answers with a protocol switch; a refused handshake answers the error " +
		"envelope with its status, as any route. Messages are projections of durable state, never a replacement for it or " +
		"for HTTP authorization: a client that misses one reads the record over HTTP.\n\n")

	b.WriteString("**Authentication**, as HTTP: an API key or access token as `Authorization: Bearer <credential>`, or the " +
		"session cookie. Any active member of a workspace, and any key of it, may connect; what it may follow is decided per " +
		"channel. A session cookie is accepted only with an `Origin` header naming the endpoint's own host")
	if len(e.cfg.AllowedOrigins) > 0 {
		b.WriteString(" or one of " + codeList(e.cfg.AllowedOrigins))
	}
	b.WriteString(" (a browser always sends it; anything else is 403 ACCESS_DENIED, `details.reason` `origin_not_allowed`), " +
		"so that no other site's page can ride a signed-in user's cookie. A bearer credential is not origin-checked: no page " +
		"can make a browser send one it does not hold. A credential is never accepted in the URL: the only query parameter is " +
		"`environment` (test or live, the mode a session acts in, as the `" + transport.EnvironmentHeader + "` header sets it, " +
		"which browsers cannot send here); any other is 400 INVALID_INPUT naming it. A request that is not a WebSocket " +
		"upgrade is 400 INVALID_INPUT (`details.field` `Upgrade`). The handshake counts as one request against the " +
		"credential's rate limits.\n\n")

	fmt.Fprintf(&b, "**Bounds.** At most %d open connections per API key and %d per workspace on each host (beyond: 429 "+
		"RATE_LIMITED, `details.limit` `maxRealtimeConnections`, `details.subject` `key` or `workspace`); %d subscriptions per "+
		"connection (beyond: an error message, INVALID_INPUT with `details.limit`); client messages of at most %d bytes "+
		"(beyond: close 1009). Each connection queues at most %d messages for writing: a client that reads too slowly is "+
		"closed with 4008, and resumes after reconnecting. The server pings every %s; a connection that does not answer "+
		"within %s is closed.\n\n", hc.MaxConnectionsPerKey, hc.MaxConnectionsPerWorkspace, hc.MaxSubscriptions, e.cfg.ReadLimit,
		hc.QueueSize, transport.HumanDuration(e.cfg.PingInterval), transport.HumanDuration(e.cfg.PongTimeout))

	b.WriteString("**Messages** are JSON objects, one per text frame (a binary frame closes with 1003).\n\n" +
		"| From | Message | Meaning |\n|---|---|---|\n" +
		"| client | `{\"type\":\"subscribe\",\"channel\":\"operation:op_…\",\"after\":\"evt_…\"}` | Follow a channel; `after` (optional) is the id of the last event the client saw on it. |\n" +
		"| client | `{\"type\":\"unsubscribe\",\"channel\":\"operation:op_…\"}` | Stop following it. |\n" +
		"| client | `{\"type\":\"ping\"}` | Ask for a pong (for clients, such as browsers, that cannot send WebSocket pings). |\n" +
		"| server | `{\"type\":\"subscribed\",\"channel\":\"…\"}` | The subscription holds; its events follow. |\n" +
		"| server | `{\"type\":\"event\",\"channel\":\"…\",\"id\":\"evt_…\",\"event\":{…}}` | One outbox event: `id` is its id, `event` its public fields as the outbox lists them (`id`, `workspaceId`, `environment`, `type`, `schemaVersion`, `aggregateId`, `aggregateVersion`, `occurredAt`, `payload`, `publishedAt`); payloads never carry secrets. |\n" +
		"| server | `{\"type\":\"unsubscribed\",\"channel\":\"…\"}` | The subscription ended at the client's request. |\n" +
		"| server | `{\"type\":\"error\",\"channel\":\"…\",\"error\":{\"code\":\"…\",\"message\":\"…\",\"details\":{…}}}` | A message was refused (the HTTP error object, with the platform's codes); with a channel, that subscription was refused or has ended. |\n" +
		"| server | `{\"type\":\"pong\"}` | Answers a ping. |\n\n")

	b.WriteString("**Channels.** A subscription is authorized when it is made, by the policy of the HTTP read of the same " +
		"thing, and that read itself: it is refused with exactly the error that read would answer (another workspace's " +
		"operation: NOT_FOUND, as `GET /api/v1/operations/{operationId}` answers).\n\n" +
		"| Channel | Events | Authorized as |\n|---|---|---|\n" +
		"| `operation:<id>` | one music generation (`op_`), sound operation (`snd_`) or AI operation (`aiop_`) | `GET /api/v1/operations/{operationId}`, `GET /api/v1/sound/operations/{operationId}`, `GET /api/v1/ai/operations/{id}` |\n" +
		"| `intent:<id>` | one transaction intent (`txi_`) | `GET /api/v1/transactions/{id}` |\n" +
		"| `order:<id>` | one marketplace order (`ord_`), to its buyer and its seller | the order list's policy (`treasury.read`, key scope `ledger:read`) and the order being one the workspace bought or sold, else NOT_FOUND |\n" +
		"| `workspace` | every event of the caller's workspace in its environment (what a webhook endpoint receives) | `developer.webhook.read` (key scope `webhooks:read`) |\n\n")

	b.WriteString("**Resume.** Events arrive in the order the outbox committed them (not the order of their ids, which are " +
		"drawn before commit), each once per subscription. A client that reconnects subscribes with `after` set to the last " +
		"event id it saw on the channel: the events after it are replayed, then live ones follow, with none missed and none " +
		"twice; an `after` that names no event of the stream is INVALID_INPUT (`details.field` `after`). Without `after`, a " +
		"record's channel first replays the record's events so far (a generation subscribed to just after its 202 is seen " +
		"accepted), and `workspace` starts with the next event. Any host serves any connection.\n\n")

	fmt.Fprintf(&b, "**Authority is re-checked** while a connection is open: at once on an event that may change it (an "+
		"`api_key.*` event of the connection's key, a `project.member_changed` of its workspace) and every %s for changes "+
		"that write no event (a session signed out or expired, an access token expired, a member removed or a role "+
		"changed). The credential is authenticated again and each subscription authorized again as of that moment; a "+
		"subscription no longer authorized ends with an error message naming its channel.\n\n",
		transport.HumanDuration(e.cfg.RecheckInterval))

	b.WriteString("**Close codes** (the reason is the error code, when there is one):\n\n| Code | When |\n|---|---|\n")
	for _, c := range realtime.CloseCodes() {
		fmt.Fprintf(&b, "| %d | %s |\n", c.Code, c.Meaning)
	}
	return b.String()
}

// codeList writes vs as a list of code spans.
func codeList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}
