package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creatormusic/platform"
	"github.com/creatormusic/platform/platformtest"
	"github.com/creatormusic/platform/realtime"
)

// TestFollowAndResume follows the workspace channel until a key is
// created, then resumes after the first event it printed and prints the
// next one only; a channel the key may not read is a refusal.
func TestFollowAndResume(t *testing.T) {
	s := platformtest.New(t, platformtest.Options{Realtime: platform.RealtimeConfig{PollInterval: 20 * time.Millisecond}})
	createKey := func(name string) {
		r := s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys", Key: s.Boot.TestKey,
			Body: map[string]any{"name": name, "scopes": []string{"keys:read"}}})
		if r.Status != 201 {
			t.Fatalf("create key: %d %s", r.Status, r.Body)
		}
	}
	ctx := context.Background()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-server", s.Server.URL, "-until", "api_key.created", "-timeout", "20s"}, s.Boot.TestKey, &out)
	}()
	// Keys are made until the follower's subscription sees one.
	var err error
	for waiting := true; waiting; {
		createKey("followed")
		select {
		case err = <-done:
			waiting = false
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	first := lastEvent(t, out.String())
	createKey("after")
	out.Reset()
	if err := run(ctx, []string{"-server", s.Server.URL, "-after", first.ID, "-until", "api_key.created", "-timeout", "20s"},
		s.Boot.TestKey, &out); err != nil {
		t.Fatal(err)
	}
	if next := lastEvent(t, out.String()); next.ID == first.ID || next.Event.Type != "api_key.created" {
		t.Fatalf("resumed at %+v after %s", next, first.ID)
	}
	err = run(ctx, []string{"-server", s.Server.URL, "-channel", "operation:op_01jd0000000000000000000000", "-timeout", "20s"},
		s.Boot.TestKey, &out)
	var r refused
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("an unknown operation: %v", err)
	}
}

// lastEvent returns the last event message of a follow's output.
func lastEvent(t *testing.T, out string) realtime.ServerMessage {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m realtime.ServerMessage
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatalf("output line %q: %v", lines[i], err)
		}
		if m.Type == realtime.TypeEvent {
			return m
		}
	}
	t.Fatalf("no event in the output:\n%s", out)
	return realtime.ServerMessage{}
}
