// Package realtime delivers the outbox's events to live clients (spec,
// Events; issue 36's realtime half): the feed each host reads from the
// outbox, the channels a client subscribes to, the projection of each
// event it is sent, resume from the last event it saw, and the bounds
// that keep a slow or idle client from holding memory. The WebSocket
// endpoint that speaks this protocol, GET /ws/v1, is the transport's
// (transport/api, realtime.go); authorization is the gateway's, through
// the same route policies the HTTP routes declare. Messages are never a
// replacement for HTTP authorization or durable state: a client that
// misses a message reads the record over HTTP.
//
// # Channels
//
//   - operation:<id> — one operation: a music generation (op_), a sound
//     operation (snd_) or an AI operation (aiop_);
//   - intent:<id> — one transaction intent (txi_);
//   - order:<id> — one marketplace order (ord_), to its buyer and seller;
//   - workspace — every event of the subscriber's workspace in its
//     environment (the events a webhook endpoint of the workspace gets).
//
// The transport authorizes a subscription at subscribe time by evaluating
// the policy of the HTTP route that reads the same thing, and running
// that read: so a channel is refused exactly as that GET would be, with
// its code (another workspace's operation: NOT_FOUND, as GET
// /api/v1/operations/{id} answers). It evaluates it again whenever the
// connection's authority may have changed (Conn.Recheck).
//
// # The feed
//
// Outbox ids are drawn before commit and sort by occurrence, not commit:
// on PostgreSQL an event with a smaller id can commit after a reader
// passed it, and two units of work of one millisecond (every unit, under
// a test's frozen clock) draw the ids' random parts independently. A
// cursor on ids would skip events. The feed instead reads the outbox in
// feed order (Position), over events that are settled: no event will
// ever take a place before a settled one. The store keeps the order:
//   - SQLite has one writer, so units of work commit one after another;
//     a trigger numbers each event after every committed one (seq).
//   - PostgreSQL stores with each event its transaction's id (tx_id,
//     pg_current_xact_id) and a sequence number. Positions are
//     (tx_id, seq), and only events whose transaction is older than the
//     oldest one still running (pg_snapshot_xmin) are read: every
//     transaction that could still write a smaller position has ended,
//     and a new one always gets a larger id. Delivery is held only while
//     an older transaction is open (units of work are short).
//
// Each host runs one Hub: it reads the feed after its cursor every
// PollInterval and at once when a unit of work on this host commits
// events (Hub.Wake), so a client on host B sees an event committed on
// host A within the poll interval. Every subscription keeps the position
// of the last event it was handed and is handed only later ones, in feed
// order: nothing twice, nothing skipped.
//
// # Resume
//
// Every event message carries the outbox event's id. A client that
// reconnects subscribes with after set to the last id it saw on the
// channel: the events after that one's position are replayed from the
// store, up to the hub's cursor, and the subscription then goes live
// under the hub's lock at exactly that cursor (Conn.Subscribe), so the
// client sees every later event once. Without after, a record's channel
// replays the record's events so far (a client that subscribes after
// starting a generation still sees it accepted); the workspace channel
// starts with the next event. The outbox keeps every event, so an id the
// stream delivered can always be resumed from.
//
// # Bounds
//
// Each connection has a bounded queue (Config.QueueSize); live events are
// offered without waiting, and a full queue drops the connection with
// close code 4008 (CloseSlowConsumer): memory per connection never grows
// with a slow reader. Replayed events and replies wait for room instead,
// pacing a replay to the client's reading. Connections are bounded per
// API key and per workspace on each host (Open: 429 RATE_LIMITED at the
// handshake), subscriptions per connection, and client messages by the
// transport's read limit.
//
// # Authority
//
// A connection is re-checked (its credential authenticated again, its
// membership and each subscription authorized again) when the feed
// carries an event that may change its authority (an api_key.* event of
// its key, a project.member_changed of its workspace: Recheck is
// signalled on every host) and periodically, for changes that write no
// event (a session signed out or expired, an access token expired, a
// workspace member removed). A credential that no longer authenticates
// closes the connection with 4001 (CloseUnauthenticated), one that lost
// the workspace with 4003 (CloseAccessDenied); a subscription that is no
// longer authorized ends with an error message naming its channel.
package realtime
