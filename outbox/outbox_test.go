package outbox_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/creatormusic/platform/outbox"
)

// TestEventAsPublished: the form publishers read. The tenant never leaves
// the platform; the payload is the event's JSON itself, not an encoding of
// it; publishedAt is null until a publisher marks the event; and a
// publisher decoding the event gets back every published field.
func TestEventAsPublished(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := outbox.Event{ID: "evt_01", TenantID: "ten_private", WorkspaceID: "ws_1", Environment: "live", Type: "api_key.created",
		SchemaVersion: 1, AggregateID: "key_1", AggregateVersion: 3, OccurredAt: at, Payload: json.RawMessage(`{"keyId":"key_1"}`)}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "ten_private") {
		t.Fatalf("the published event names its tenant: %s", b)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{"aggregateId", "aggregateVersion", "environment", "id", "occurredAt", "payload", "publishedAt", "schemaVersion", "type", "workspaceId"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Fatalf("published fields %v, want %v", got, want)
	}
	if string(fields["payload"]) != `{"keyId":"key_1"}` || string(fields["publishedAt"]) != "null" || string(fields["occurredAt"]) != `"2026-01-02T03:04:05Z"` {
		t.Fatalf("published event = %s", b)
	}

	published := at.Add(time.Minute)
	e.PublishedAt = &published
	b, err = json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back outbox.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	e.TenantID = ""
	if diff := cmp.Diff(e, back); diff != "" {
		t.Fatalf("decoded (-published +decoded):\n%s", diff)
	}
}
