package platform_test

import (
	"encoding/json"
	"testing"

	"github.com/creatormusic/platform/platformtest"
)

// TestRotateOverlapIsBounded: a rotation overlap of more seconds than a
// time.Duration holds used to wrap to a negative overlap (the current
// secret expired at once, in the past). It is INVALID_INPUT naming the
// field, the key keeps its secret, and the document publishes the bounds.
func TestRotateOverlapIsBounded(t *testing.T) {
	platformtest.Dialects(t, platformtest.Options{}, func(t *testing.T, s *platformtest.System) {
		_, k := createKey(t, s, s.Boot.TestKey, map[string]any{"name": "ci", "scopes": []string{"keys:read"}}, "")
		rotate := func(sec int64) *platformtest.Response {
			return s.Do(platformtest.Request{Method: "POST", Path: "/api/v1/api-keys/" + k.Key.ID + "/rotate", Key: s.Boot.TestKey,
				Body: map[string]any{"expireCurrentAfterSeconds": sec}})
		}
		for _, sec := range []int64{9_223_372_037, 604_801, -1} {
			if r := rotate(sec); r.Status != 400 || r.Code() != "INVALID_INPUT" || detail(r, "field") != "expireCurrentAfterSeconds" {
				t.Fatalf("overlap %d: %d %s", sec, r.Status, r.Body)
			}
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: k.Secret}); r.Status != 200 {
			t.Fatalf("the key's secret after refused rotations: %d %s", r.Status, r.Body)
		}
		if r := rotate(604_800); r.Status != 200 {
			t.Fatalf("the maximum overlap: %d %s", r.Status, r.Body)
		}
		if r := s.Do(platformtest.Request{Method: "GET", Path: "/api/v1/auth/context", Key: k.Secret}); r.Status != 200 {
			t.Fatalf("the rotated-out secret within the overlap: %d %s", r.Status, r.Body)
		}
		prop := schemaProperty(t, s, "RotateInput", "expireCurrentAfterSeconds")
		if prop["minimum"] != float64(0) || prop["maximum"] != float64(604_800) {
			t.Fatalf("published schema %v, want minimum 0 and maximum 604800", prop)
		}
	})
}

// schemaProperty returns a property of a component schema of the served
// document.
func schemaProperty(t *testing.T, s *platformtest.System, schema, prop string) map[string]any {
	t.Helper()
	r := s.Do(platformtest.Request{Method: "GET", Path: "/api/docs/openapi.json"})
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	p, ok := doc.Components.Schemas[schema].Properties[prop]
	if !ok {
		names := []string{}
		for n := range doc.Components.Schemas {
			names = append(names, n)
		}
		t.Fatalf("no property %s.%s in the document (schemas %v)", schema, prop, names)
	}
	return p
}
